#include "egraph/pattern.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "egraph/test_util.h"

namespace tacit::egraph {
namespace {

using testing::TestLang;

// --- a brute-force matcher over an independent pattern representation -------------------------

struct PNode {
  bool is_var = false;
  std::string var;
  OpId op;
  AttrMatch::Kind attr_kind = AttrMatch::Kind::kExact;
  AttrId exact = kNoAttr;
  std::string attr_var;
  int pred = -1;  // index into predicates()
  std::vector<PNode> kids;
};

// Predicates on the test language's attributes (kNoAttr or an int).
const std::vector<AttrPredicate>& predicates() {
  static const std::vector<AttrPredicate> preds = {
      [](const AttrTable& t, AttrId a) { return a == kNoAttr || t.intValue(a) % 2 == 0; },
      [](const AttrTable& t, AttrId a) { return a != kNoAttr && t.intValue(a) < 2; },
  };
  return preds;
}

struct Binding {
  std::map<std::string, uint32_t> vars;
  std::map<std::string, uint32_t> attrs;
};

void bruteMatch(const EGraph& g, const PNode& p, ClassId c, const Binding& b,
                std::vector<Binding>& out) {
  if (p.is_var) {
    auto it = b.vars.find(p.var);
    if (it != b.vars.end()) {
      if (it->second == c.value) out.push_back(b);
      return;
    }
    Binding nb = b;
    nb.vars[p.var] = c.value;
    out.push_back(nb);
    return;
  }
  const AttrTable& table = g.language().attrs();
  for (NodeId n : g.nodes(c)) {
    ENode e = g.node(n);
    if (e.op() != p.op || e.arity() != p.kids.size()) continue;
    Binding nb = b;
    bool ok = true;
    switch (p.attr_kind) {
      case AttrMatch::Kind::kExact:
        ok = e.attr() == p.exact;
        break;
      case AttrMatch::Kind::kAny:
        ok = p.pred < 0 || predicates()[p.pred](table, e.attr());
        break;
      case AttrMatch::Kind::kBind: {
        auto it = nb.attrs.find(p.attr_var);
        if (it != nb.attrs.end()) {
          ok = it->second == e.attr().value;
        } else {
          ok = p.pred < 0 || predicates()[p.pred](table, e.attr());
          nb.attrs[p.attr_var] = e.attr().value;
        }
        break;
      }
    }
    if (!ok) continue;
    std::vector<Binding> cur{nb};
    for (size_t i = 0; i < p.kids.size(); ++i) {
      std::vector<Binding> next;
      for (const Binding& s : cur)
        bruteMatch(g, p.kids[i], e.child(i), s, next);
      cur.swap(next);
    }
    out.insert(out.end(), cur.begin(), cur.end());
  }
}

std::string key(uint32_t cls, const Binding& b) {
  std::string s = std::to_string(cls) + "|";
  for (auto& [k, v] : b.vars)
    s += k + "=" + std::to_string(v) + ",";
  s += "|";
  for (auto& [k, v] : b.attrs)
    s += k + "=" + std::to_string(v) + ",";
  return s;
}

std::set<std::string> bruteAll(const EGraph& g, const PNode& p) {
  std::set<std::string> out;
  for (ClassId c : g.classes()) {
    std::vector<Binding> bs;
    bruteMatch(g, p, c, Binding{}, bs);
    for (const Binding& b : bs)
      out.insert(key(c.value, b));
  }
  return out;
}

std::vector<std::string> engineKeys(const Pattern& pat, const Matches& m) {
  std::vector<std::string> out;
  for (size_t i = 0; i < m.size(); ++i) {
    Binding b;
    Subst s = m.subst(i);
    for (uint32_t v = 0; v < pat.varCount(); ++v)
      b.vars[pat.varNames()[v]] = s[Var(v)].value;
    for (uint32_t v = 0; v < pat.attrVarCount(); ++v)
      b.attrs[pat.attrVarNames()[v]] = s[AttrVar(v)].value;
    out.push_back(key(m.eclass(i).value, b));
  }
  return out;
}

PatternBuilder::Ref toBuilder(PatternBuilder& b, const PNode& p) {
  if (p.is_var) return b.var(p.var);
  std::vector<PatternBuilder::Ref> kids;
  for (const PNode& k : p.kids)
    kids.push_back(toBuilder(b, k));
  AttrPredicate pred = p.pred >= 0 ? predicates()[p.pred] : AttrPredicate{};
  AttrMatch am;
  switch (p.attr_kind) {
    case AttrMatch::Kind::kExact:
      am = AttrMatch::exact(p.exact);
      break;
    case AttrMatch::Kind::kAny:
      am = AttrMatch::any(pred);
      break;
    case AttrMatch::Kind::kBind:
      am = AttrMatch::bind(p.attr_var, pred);
      break;
  }
  return b.node(p.op, am, kids);
}

PNode randomPattern(const TestLang& L, std::mt19937& rng, int depth) {
  PNode p;
  if (depth > 0 && rng() % 3 == 0) {
    p.is_var = true;
    p.var = std::string(1, static_cast<char>('x' + rng() % 3));  // few names: repeats are common
    return p;
  }
  if (depth == 0) {
    if (rng() % 2) {
      p.is_var = true;
      p.var = std::string(1, static_cast<char>('x' + rng() % 3));
      return p;
    }
    OpId leaves[] = {L.a, L.b, L.k};
    p.op = leaves[rng() % 3];
  } else {
    OpId ops[] = {L.u, L.f, L.f, L.g, L.t, L.v, L.k, L.a};
    p.op = ops[rng() % 8];
  }
  int arity = L.lang->arity(p.op);
  if (arity == kVariadic) arity = static_cast<int>(rng() % 3);
  for (int i = 0; i < arity; ++i)
    p.kids.push_back(randomPattern(L, rng, depth - 1));
  bool has_attrs = p.op == L.k || p.op == L.f;
  switch (rng() % (has_attrs ? 5 : 8)) {
    case 0:
      p.attr_kind = AttrMatch::Kind::kAny;
      break;
    case 1:
      p.attr_kind = AttrMatch::Kind::kBind;
      p.attr_var = rng() % 2 ? "p" : "q";
      break;
    case 2:
      p.attr_kind = AttrMatch::Kind::kAny;
      p.pred = static_cast<int>(rng() % 2);
      break;
    case 3:
      p.attr_kind = AttrMatch::Kind::kBind;
      p.attr_var = rng() % 2 ? "p" : "q";
      p.pred = static_cast<int>(rng() % 2);
      break;
    default:
      p.exact = has_attrs && rng() % 2 ? L.ints[rng() % 4] : kNoAttr;
      break;
  }
  return p;
}

// --- property test: e-matching equals brute force ----------------------------------------------

TEST(PatternProperty, EMatchingEqualsBruteForce) {
  TestLang L;
  size_t total_matches = 0, repeated_var_patterns = 0, nonempty = 0;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    EGraph g(L.lang);
    testing::buildRandom(g, L, seed * 7919, 120 + 40 * seed, 15 + 10 * seed);
    std::mt19937 rng(seed);
    for (int i = 0; i < 250; ++i) {
      PNode p = randomPattern(L, rng, 1 + static_cast<int>(rng() % 3));
      PatternBuilder b(*L.lang);
      Pattern pat = b.build(toBuilder(b, p));
      Matches m;
      ASSERT_EQ(pat.search(g, m), SearchStatus::kComplete);
      std::vector<std::string> got = engineKeys(pat, m);
      std::set<std::string> got_set(got.begin(), got.end());
      ASSERT_EQ(got_set.size(), got.size()) << "duplicate matches for " << pat.str(*L.lang);
      for (size_t k = 1; k < m.size(); ++k)
        ASSERT_LE(m.eclass(k - 1), m.eclass(k)) << "rows not grouped by class";
      std::set<std::string> want = bruteAll(g, p);
      ASSERT_EQ(got_set, want) << "pattern " << pat.str(*L.lang) << " (seed " << seed << ", #" << i
                               << ")";
      total_matches += want.size();
      nonempty += want.empty() ? 0 : 1;
      std::set<std::string> vars, attrs;
      std::map<std::string, int> count;
      std::function<void(const PNode&)> countVars = [&](const PNode& q) {
        if (q.is_var) ++count[q.var];
        for (const PNode& k : q.kids)
          countVars(k);
      };
      countVars(p);
      for (auto& [name, c] : count)
        repeated_var_patterns += c > 1 ? 1 : 0;
      // searchClass agrees with search restricted to that class.
      if (i % 25 == 0) {
        for (ClassId c : g.classes()) {
          Matches mc;
          pat.searchClass(g, c, mc);
          for (size_t k = 0; k < mc.size(); ++k)
            ASSERT_EQ(mc.eclass(k), c);
          for (const std::string& s : engineKeys(pat, mc))
            ASSERT_TRUE(want.count(s)) << s;
        }
      }
    }
  }
  // The random patterns must actually exercise matching (not only empty results).
  EXPECT_GT(total_matches, 5000u);
  EXPECT_GT(nonempty, 500u);
  EXPECT_GT(repeated_var_patterns, 100u);
}

// --- focused cases ------------------------------------------------------------------------------

class PatternTest : public ::testing::Test {
 protected:
  TestLang L;
  EGraph g{L.lang};
  ClassId a = g.add(L.a, {});
  ClassId b = g.add(L.b, {});
};

TEST_F(PatternTest, ParseAndPrintRoundTrip) {
  // Canonical text reads back unchanged; leaves print without parentheses.
  for (const char* text : {"(f ?x ?y)", "(f[?p] (u ?x) ?x)", "(f[*] a k[2])", "?x", "v",
                           "(v ?x ?y ?z)", "(t a b c)", "(f[1] ?x (f[?p] ?y ?x))"}) {
    Pattern p = Pattern::parse(*L.lang, text);
    EXPECT_EQ(p.str(*L.lang), text);
    EXPECT_EQ(Pattern::parse(*L.lang, p.str(*L.lang)).str(*L.lang), text);
  }
  EXPECT_EQ(Pattern::parse(*L.lang, "( f  (k[2])\n a )").str(*L.lang), "(f k[2] a)");
  ParseOptions opts;
  opts.predicates["even"] = predicates()[0];
  Pattern p = Pattern::parse(*L.lang, "(f[?p:even] ?x (k[*:even]))", opts);
  EXPECT_EQ(p.str(*L.lang), "(f[?p:pred1] ?x k[*:pred0])");  // predicates print by index
  EXPECT_EQ(p.varCount(), 1u);
  EXPECT_EQ(p.attrVarCount(), 1u);
  EXPECT_EQ(p.var("x"), Var(0));
  EXPECT_EQ(p.attrVar("p"), AttrVar(0));
  EXPECT_THROW(p.var("nope"), EGraphError);
}

TEST_F(PatternTest, ParseErrorsNameThePosition) {
  auto error = [&](const char* text) {
    try {
      Pattern::parse(*L.lang, text);
    } catch (const EGraphError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("(zz ?x)").find("unknown operator 'zz'"), std::string::npos);
  EXPECT_NE(error("(f ?x)").find("takes 2 children, got 1"), std::string::npos);
  EXPECT_NE(error("(f ?x ?y").find("missing ')'"), std::string::npos);
  EXPECT_NE(error("(k[*:nope])").find("unknown attribute predicate 'nope'"), std::string::npos);
  EXPECT_NE(error("(k[])").find("empty attribute"), std::string::npos);
  EXPECT_NE(error("(f ?x ?y) junk").find("unexpected text"), std::string::npos);
  EXPECT_NE(error("(f[?x] ?x ?y)").find("both as a class and an attribute variable"),
            std::string::npos);
  EXPECT_NE(error("(k[2").find("missing ']'"), std::string::npos);
}

TEST_F(PatternTest, RepeatedVariablesMustBindTheSameClass) {
  ClassId faa = g.add(L.f, {a, a});
  g.add(L.f, {a, b});
  g.rebuild();
  Pattern p = Pattern::parse(*L.lang, "(f ?x ?x)");
  Matches m = p.search(g);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.eclass(0), g.find(faa));
  EXPECT_EQ(m.subst(0)[p.var("x")], g.find(a));
  g.unite(a, b);  // now f(a,b) is f(a,a): congruent
  g.rebuild();
  EXPECT_EQ(p.search(g).size(), 1u);
}

TEST_F(PatternTest, AttributeBindingsAndPredicates) {
  ClassId k0 = g.add(L.k, L.ints[0]);
  ClassId k1 = g.add(L.k, L.ints[1]);
  ClassId inner = g.add(L.f, L.ints[1], {k0, k1});
  ClassId outer_same = g.add(L.f, L.ints[1], {inner, a});
  g.add(L.f, L.ints[2], {inner, b});
  g.rebuild();
  // Repeated attribute variable: both f's must carry the same attribute.
  Pattern same = Pattern::parse(*L.lang, "(f[?p] (f[?p] ?x ?y) ?z)");
  Matches m = same.search(g);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.eclass(0), g.find(outer_same));
  EXPECT_EQ(m.subst(0)[same.attrVar("p")], L.ints[1]);
  // Predicate: only k with an odd value.
  PatternBuilder pb(*L.lang);
  auto odd = [](const AttrTable& t, AttrId id) { return t.intValue(id) % 2 == 1; };
  Pattern odd_k = pb.build(pb.node(L.k, AttrMatch::any(odd)));
  Matches mk = odd_k.search(g);
  ASSERT_EQ(mk.size(), 1u);
  EXPECT_EQ(mk.eclass(0), g.find(k1));
  // Wildcard: both k's; exact: one.
  EXPECT_EQ(Pattern::parse(*L.lang, "(k[*])").search(g).size(), 2u);
  EXPECT_EQ(Pattern::parse(*L.lang, "(k[0])").search(g).size(), 1u);
  // A wildcard that binds nothing must not duplicate substitutions.
  g.unite(k0, k1);
  g.rebuild();
  Pattern wild = Pattern::parse(*L.lang, "(f[*] (k[*]) ?z)");
  Matches mw = wild.search(g);
  std::set<std::string> keys;
  for (const std::string& s : engineKeys(wild, mw))
    EXPECT_TRUE(keys.insert(s).second);
}

TEST_F(PatternTest, GroundAndVariableRoots) {
  ClassId fab = g.add(L.f, {a, b});
  g.rebuild();
  Matches m = Pattern::parse(*L.lang, "(f a b)").search(g);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.eclass(0), g.find(fab));
  EXPECT_TRUE(Pattern::parse(*L.lang, "(f b a)").search(g).empty());  // absent ground term
  Pattern any = Pattern::parse(*L.lang, "?x");
  Matches all = any.search(g);
  EXPECT_EQ(all.size(), g.classCount());
  for (size_t i = 0; i < all.size(); ++i)
    EXPECT_EQ(all.subst(i)[any.var("x")], all.eclass(i));
  // Ground sub-pattern below a non-ground root.
  Matches mg = Pattern::parse(*L.lang, "(f ?x b)").search(g);
  ASSERT_EQ(mg.size(), 1u);
}

TEST_F(PatternTest, SearchNeedsACleanGraph) {
  g.add(L.f, {a, b});
  EXPECT_THROW(Pattern::parse(*L.lang, "(f ?x ?y)").search(g), EGraphError);
}

TEST_F(PatternTest, MatchLimitStopsEarly) {
  std::vector<ClassId> leaves{a, b};
  for (int i = 0; i < 30; ++i)
    leaves.push_back(g.add(L.u, {leaves.back()}));
  for (size_t i = 0; i + 1 < leaves.size(); ++i)
    g.add(L.f, {leaves[i], leaves[i + 1]});
  g.rebuild();
  Pattern p = Pattern::parse(*L.lang, "(f ?x ?y)");
  Matches m;
  EXPECT_EQ(p.search(g, m, SearchBudget{5, std::nullopt, SearchResume()}),
            SearchStatus::kMatchLimit);
  EXPECT_EQ(m.size(), 5u);
  EXPECT_EQ(p.search(g, m), SearchStatus::kComplete);
  EXPECT_EQ(m.size(), 31u);
  auto past = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  EXPECT_EQ(p.search(g, m, SearchBudget{SIZE_MAX, past, SearchResume()}), SearchStatus::kComplete)
      << "the deadline is checked every 256 candidates, so small searches finish";
}

TEST(PatternResume, ChunkedSearchesCoverEveryMatch) {
  TestLang L;
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    EGraph g(L.lang);
    testing::buildRandom(g, L, 300 + seed, 400, 120);  // big classes with many root e-nodes
    for (const char* text : {"(f ?x ?y)", "(f ?x (g ?y ?z))", "(f[*] ?x ?x)", "?x", "(u ?x)"}) {
      Pattern p = Pattern::parse(*L.lang, text);
      std::vector<std::string> all = engineKeys(p, p.search(g));
      for (size_t chunk : {size_t{1}, size_t{7}, size_t{50}}) {
        std::vector<std::string> got;
        SearchBudget budget;
        budget.max_matches = chunk;
        Matches m;
        for (int rounds = 0;; ++rounds) {
          ASSERT_LT(rounds, 100000);
          SearchStatus st = p.search(g, m, budget);
          for (const std::string& k : engineKeys(p, m))
            got.push_back(k);
          if (st == SearchStatus::kComplete) break;
          ASSERT_EQ(st, SearchStatus::kMatchLimit);
          budget.resume = m.resume();
        }
        // A non-binding wildcard lets two root e-nodes of one class give the same substitution;
        // in different chunks it is then reported twice (harmless for rewriting).
        if (std::string(text).find("[*]") != std::string::npos) {
          std::sort(got.begin(), got.end());
          got.erase(std::unique(got.begin(), got.end()), got.end());
        }
        std::sort(got.begin(), got.end());
        std::vector<std::string> want = all;
        std::sort(want.begin(), want.end());
        EXPECT_EQ(got, want) << text << " in chunks of " << chunk;
      }
    }
  }
}

TEST(PatternResume, OneHugeRootNodeIsCutAtTheHardCap) {
  // One f whose second child class holds 6000 g nodes: 6000 matches for a single root e-node.
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {});
  ClassId big = g.add(L.g, {a, a});
  ClassId leaf = a;
  for (int i = 0; i < 6000; ++i) {
    leaf = g.add(L.u, {leaf});
    g.unite(big, g.add(L.g, {leaf, a}));
  }
  g.add(L.f, {a, big});
  g.rebuild();
  Pattern p = Pattern::parse(*L.lang, "(f ?x (g ?y ?z))");
  Matches m;
  EXPECT_EQ(p.search(g, m), SearchStatus::kComplete);
  EXPECT_EQ(m.size(), 6001u);
  EXPECT_FALSE(m.cut());
  SearchBudget b;
  b.max_matches = 10;  // hard cap 10 + 4096
  EXPECT_EQ(p.search(g, m, b), SearchStatus::kMatchLimit);
  EXPECT_TRUE(m.cut());
  EXPECT_EQ(m.size(), 10u + 4096u);
  b.resume = m.resume();
  EXPECT_EQ(p.search(g, m, b), SearchStatus::kComplete);  // nothing after that root e-node
  EXPECT_EQ(m.size(), 0u);
}

TEST_F(PatternTest, InstantiateAddsTheRightHandSide) {
  Pattern rhs = Pattern::parse(*L.lang, "(f[?p] ?y (u ?x))");
  std::vector<ClassId> vars(2);
  vars[rhs.var("x").value] = a;
  vars[rhs.var("y").value] = b;
  std::vector<AttrId> attrs{L.ints[3]};
  ClassId c = rhs.instantiate(g, vars, attrs);
  ClassId ua = g.add(L.u, {a});
  EXPECT_EQ(c, g.add(L.f, L.ints[3], {b, ua}));
  EXPECT_FALSE(Pattern::parse(*L.lang, "(f[*] ?x ?y)").instantiable());
  EXPECT_THROW(Pattern::parse(*L.lang, "(f[*] ?x ?y)").instantiate(g, vars), EGraphError);
}

TEST(PatternBuilderTest, RejectsBadNodes) {
  TestLang L;
  PatternBuilder b(*L.lang);
  auto x = b.var("x");
  EXPECT_THROW(b.node(L.f, {x}), EGraphError);
  EXPECT_THROW(b.node(OpId(77), {}), EGraphError);
  EXPECT_THROW(b.node(L.u, {x + 5}), EGraphError);
  EXPECT_THROW(b.build(99), EGraphError);
  EXPECT_THROW(AttrMatch::bind(""), EGraphError);
  // A reused reference stands for two copies of the sub-pattern.
  auto ux = b.node(L.u, {x});
  Pattern p = b.build(b.node(L.f, {ux, ux}));
  EXPECT_EQ(p.str(*L.lang), "(f (u ?x) (u ?x))");
}

}  // namespace
}  // namespace tacit::egraph
