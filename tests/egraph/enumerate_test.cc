#include "egraph/enumerate.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "egraph/test_util.h"

namespace tacit::egraph {
namespace {

using testing::TestLang;

// A brute-force enumerator: every tree of size <= budget from (class, context), recursively.
struct BTerm {
  std::string key;
  size_t size;
  bool revisit;
};

struct Brute {
  const EGraph& g;
  const EnumOptions& opts;
  bool forbid;

  std::vector<BTerm> terms(ClassId c, Context ctx, std::vector<std::pair<uint32_t, Context>>& path,
                           size_t budget) {
    std::vector<BTerm> out;
    if (budget == 0) return out;
    c = g.find(c);
    bool revisit = std::find(path.begin(), path.end(), std::make_pair(c.value, ctx)) != path.end();
    if (revisit && forbid) return out;
    path.emplace_back(c.value, ctx);
    for (NodeId n : g.nodes(c)) {
      if (opts.allowed && !opts.allowed(g, n, ctx)) continue;
      ENode e = g.node(n);
      std::string head = "n" + std::to_string(n.value) + "@" + std::to_string(ctx);
      // Cartesian product of the children's terms within the size budget.
      std::vector<BTerm> partial{{head + "(", 1, revisit}};
      for (size_t i = 0; i < e.arity(); ++i) {
        Context cc = opts.child_context ? opts.child_context(g, n, ctx, i) : ctx;
        std::vector<BTerm> next;
        for (const BTerm& p : partial) {
          if (p.size >= budget) continue;
          for (const BTerm& k : terms(e.child(i), cc, path, budget - p.size))
            next.push_back(
                {p.key + (i ? "," : "") + k.key, p.size + k.size, p.revisit || k.revisit});
        }
        partial.swap(next);
      }
      for (BTerm& p : partial) {
        p.key += ")";
        out.push_back(p);
      }
    }
    path.pop_back();
    return out;
  }
};

std::string termKey(const Term& t, uint32_t at) {
  std::string s =
      "n" + std::to_string(t[at].enode.value) + "@" + std::to_string(t[at].context) + "(";
  auto kids = t.children(at);
  for (size_t i = 0; i < kids.size(); ++i)
    s += (i ? "," : "") + termKey(t, kids[i]);
  return s + ")";
}

// Every node of an enumerated term is an allowed e-node of its class in its context, and each
// child is in the child's class and context.
void expectValidTerm(const EGraph& g, const EnumOptions& opts, const Term& t) {
  for (uint32_t i = 0; i < t.size(); ++i) {
    const TermNode& n = t[i];
    ASSERT_EQ(g.classOf(n.enode), n.eclass);
    if (opts.allowed) {
      ASSERT_TRUE(opts.allowed(g, n.enode, n.context));
    }
    ENode e = g.node(n.enode);
    auto kids = t.children(i);
    ASSERT_EQ(kids.size(), e.arity());
    for (size_t k = 0; k < kids.size(); ++k) {
      ASSERT_EQ(t[kids[k]].eclass, g.find(e.child(k)));
      Context cc = opts.child_context ? opts.child_context(g, n.enode, n.context, k) : n.context;
      ASSERT_EQ(t[kids[k]].context, cc);
    }
  }
  ASSERT_EQ(t.size(), t.treeSize());  // a tree: no node is shared
}

// Runs the enumerator and the brute force and compares size by size.
void compare(const EGraph& g, ClassId root, const EnumOptions& opts, size_t& total,
             size_t& revisiting) {
  Enumerator en(g, root, opts);
  std::map<size_t, std::multiset<std::string>> got_free, got_revisit;
  size_t last_size = 0;
  bool seen_revisit_at_size = false;
  Term t;
  while (en.next(t)) {
    expectValidTerm(g, opts, t);
    if (::testing::Test::HasFatalFailure()) return;
    size_t size = t.size();
    ASSERT_GE(size, last_size) << "not smallest first";
    if (size != last_size) seen_revisit_at_size = false;
    last_size = size;
    bool revisit = en.lastHasRevisit();
    if (opts.revisit == RevisitPolicy::kForbid) {
      ASSERT_FALSE(revisit);
    }
    if (opts.revisit == RevisitPolicy::kAfterSameSize) {
      ASSERT_FALSE(seen_revisit_at_size && !revisit) << "revisit-free term after a revisiting one";
      seen_revisit_at_size = seen_revisit_at_size || revisit;
    }
    (revisit ? got_revisit : got_free)[size].insert(termKey(t, t.root()));
  }
  ASSERT_FALSE(en.budgetExhausted());
  Brute brute{g, opts, opts.revisit == RevisitPolicy::kForbid};
  std::vector<std::pair<uint32_t, Context>> path;
  std::map<size_t, std::multiset<std::string>> want_free, want_revisit;
  for (const BTerm& b : brute.terms(root, opts.root_context, path, opts.max_size))
    (b.revisit ? want_revisit : want_free)[b.size].insert(b.key + "");
  // Keys differ only in the trailing "()" of leaves: normalise the brute-force side.
  EXPECT_EQ(got_free, want_free);
  EXPECT_EQ(got_revisit, want_revisit);
  for (auto& [s, keys] : got_free) {
    std::set<std::string> unique(keys.begin(), keys.end());
    EXPECT_EQ(unique.size(), keys.size()) << "duplicate terms of size " << s;
    total += keys.size();
  }
  for (auto& [s, keys] : got_revisit) {
    total += keys.size();
    revisiting += keys.size();
  }
}

// Contexts 0..2; a pseudo-random but deterministic policy over (node, context).
EnumOptions contextOptions(size_t max_size, RevisitPolicy policy, uint32_t salt) {
  EnumOptions o;
  o.max_size = max_size;
  o.revisit = policy;
  o.root_context = salt % 3;
  o.allowed = [salt](const EGraph&, NodeId n, Context ctx) {
    return ((n.value * 31 + ctx * 7 + salt) % 5) != 0;
  };
  o.child_context = [salt](const EGraph& g, NodeId n, Context ctx, size_t i) {
    return static_cast<Context>((ctx + g.node(n).op().value + i + salt) % 3);
  };
  return o;
}

TEST(Enumerator, SmallAcyclicClassInOrder) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {}), b = g.add(L.b, {});
  ClassId fab = g.add(L.f, {a, b});
  ClassId ua = g.add(L.u, {a});
  g.unite(a, b);
  g.unite(fab, ua);
  g.rebuild();
  EnumOptions o;
  o.max_size = 3;
  Enumerator en(g, fab, o);
  std::vector<std::string> got;
  Term t;
  while (en.next(t))
    got.push_back(t.str(*L.lang));
  // Size 2: u(a), u(b); size 3: f over {a,b}^2. Nodes of a class in (op, attr, id) order.
  EXPECT_EQ(got, (std::vector<std::string>{"(u a)", "(u b)", "(f a a)", "(f a b)", "(f b a)",
                                           "(f b b)"}));
}

// Shallow random graphs (children uniform over earlier terms, several leaves): many small terms.
void buildShallow(EGraph& g, const TestLang& L, uint32_t seed, size_t n, size_t unions) {
  std::mt19937 rng(seed);
  std::vector<ClassId> cs{g.add(L.a, {}), g.add(L.b, {}), g.add(L.k, L.ints[1])};
  while (cs.size() < n) {
    auto pick = [&] { return cs[rng() % cs.size()]; };
    switch (rng() % 3) {
      case 0:
        cs.push_back(g.add(L.u, {pick()}));
        break;
      case 1:
        cs.push_back(g.add(L.f, {pick(), pick()}));
        break;
      default:
        cs.push_back(g.add(L.g, {pick(), pick()}));
        break;
    }
  }
  for (size_t i = 0; i < unions; ++i)
    g.unite(cs[rng() % cs.size()], cs[rng() % cs.size()]);
  g.rebuild();
}

TEST(Enumerator, EqualsBruteForceOnRandomGraphsForEveryPolicy) {
  TestLang L;
  size_t total = 0, revisiting = 0;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    EGraph g(L.lang);
    buildShallow(g, L, 500 + seed, 14, 4);  // unions make cycles
    for (RevisitPolicy policy :
         {RevisitPolicy::kForbid, RevisitPolicy::kAfterSameSize, RevisitPolicy::kAllow}) {
      for (ClassId root : g.classes()) {
        EnumOptions plain;
        plain.max_size = 8;
        plain.revisit = policy;
        compare(g, g.find(root), plain, total, revisiting);
        compare(g, g.find(root), contextOptions(8, policy, seed), total, revisiting);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  EXPECT_GT(total, 4000u);
  EXPECT_GT(revisiting, 500u);
}

TEST(Enumerator, RevisitingTermsComeAfterRevisitFreeOnesOfTheSameSize) {
  // x = u(x) | a : the only terms are u^k(a); with the path rule only "a" remains.
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {});
  ClassId ua = g.add(L.u, {a});
  g.unite(a, ua);
  g.add(L.f, {a, g.add(L.b, {})});
  g.rebuild();
  auto collect = [&](RevisitPolicy p) {
    EnumOptions o;
    o.max_size = 4;
    o.revisit = p;
    Enumerator en(g, a, o);
    std::vector<std::pair<std::string, bool>> out;
    Term t;
    while (en.next(t))
      out.emplace_back(t.str(*L.lang), en.lastHasRevisit());
    return out;
  };
  using V = std::vector<std::pair<std::string, bool>>;
  EXPECT_EQ(collect(RevisitPolicy::kForbid), (V{{"a", false}}));
  EXPECT_EQ(collect(RevisitPolicy::kAfterSameSize),
            (V{{"a", false}, {"(u a)", true}, {"(u (u a))", true}, {"(u (u (u a)))", true}}));
}

TEST(Enumerator, ContextsDecideNodesAndChildren) {
  // A value lives in "buffer" 0 or 1; a load (u) moves it from 1 to 0; leaves live in 1 only.
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {});
  ClassId ua = g.add(L.u, {a});
  g.unite(a, ua);
  g.rebuild();
  EnumOptions o;
  o.max_size = 5;
  o.root_context = 0;
  o.allowed = [&](const EGraph& eg, NodeId n, Context ctx) {
    return eg.node(n).op() == L.u ? ctx == 0 : ctx == 1;
  };
  o.child_context = [](const EGraph&, NodeId, Context, size_t) { return Context{1}; };
  Enumerator en(g, a, o);
  Term t;
  ASSERT_TRUE(en.next(t));
  EXPECT_EQ(t.str(*L.lang), "(u a)");
  EXPECT_EQ(t[t.root()].context, 0u);
  EXPECT_EQ(t[t.children(t.root())[0]].context, 1u);
  EXPECT_FALSE(en.next(t));  // (class a, 1) cannot load again: u is not allowed in context 1
}

TEST(Enumerator, LazyAndBounded) {
  // Exponentially many terms (AC-like cycles); the first few must come quickly and a step budget
  // must stop the rest.
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {}), b = g.add(L.b, {});
  ClassId f = g.add(L.f, {a, b});
  g.unite(f, g.add(L.f, {b, a}));
  g.unite(f, g.add(L.g, {f, f}));
  g.unite(a, g.add(L.u, {f}));
  g.rebuild();
  EnumOptions o;
  o.max_size = kMaxEnumSize;
  o.revisit = RevisitPolicy::kAllow;
  o.max_steps = 200000;
  Enumerator en(g, f, o);
  Term t;
  size_t n = 0;
  while (n < 50 && en.next(t))
    ++n;
  EXPECT_EQ(n, 50u);
  EXPECT_LT(en.steps(), 5000u);
  while (en.next(t))
    ++n;
  EXPECT_TRUE(en.budgetExhausted());
  EXPECT_FALSE(en.next(t));  // stays finished
}

TEST(Enumerator, DeterministicAcrossRuns) {
  TestLang L;
  EGraph g(L.lang);
  auto rb = testing::buildRandom(g, L, 77, 30, 8);
  auto run = [&] {
    std::vector<std::string> out;
    Enumerator en(g, rb.classes.back(), contextOptions(7, RevisitPolicy::kAfterSameSize, 1));
    Term t;
    while (en.next(t))
      out.push_back(termKey(t, t.root()));
    return out;
  };
  EXPECT_EQ(run(), run());
}

TEST(Enumerator, InvalidUse) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {});
  EnumOptions o;
  EXPECT_THROW(Enumerator(g, a, o), EGraphError);  // not rebuilt
  g.rebuild();
  o.max_size = 0;
  EXPECT_THROW(Enumerator(g, a, o), EGraphError);
  o.max_size = kMaxEnumSize + 1;
  EXPECT_THROW(Enumerator(g, a, o), EGraphError);
  o.max_size = 4;
  Enumerator en(g, a, o);
  g.add(L.b, {});
  g.rebuild();
  Term t;
  EXPECT_THROW(en.next(t), EGraphError);  // the e-graph changed underneath
}

}  // namespace
}  // namespace tacit::egraph
