#include "egraph/egraph.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "egraph/test_util.h"

namespace tacit::egraph {
namespace {

using testing::TermSpec;
using testing::TestLang;

// --- analyses used by the tests --------------------------------------------------------------

// Size of the smallest term of the class.
class MinSize : public TypedAnalysis<uint64_t> {
 public:
  uint64_t make(const EGraph&, const ENode& n) override {
    uint64_t s = 1;
    for (ClassId c : n.children())
      s += data(c);
    return s;
  }
  DidMerge merge(uint64_t& into, uint64_t from) override {
    DidMerge d{from < into, into < from};
    into = std::min(into, from);
    return d;
  }
};

// Operators occurring in some term of the class (bit per op id).
class OpSet : public TypedAnalysis<uint64_t> {
 public:
  uint64_t make(const EGraph&, const ENode& n) override {
    uint64_t s = uint64_t{1} << n.op().value;
    for (ClassId c : n.children())
      s |= data(c);
    return s;
  }
  DidMerge merge(uint64_t& into, uint64_t from) override {
    DidMerge d{(from & ~into) != 0, (into & ~from) != 0};
    into |= from;
    return d;
  }
};

// --- the reference model: naive congruence closure over the added terms ----------------------

struct Model {
  std::vector<TermSpec> terms;
  std::vector<uint32_t> uf;

  uint32_t find(uint32_t x) {
    while (uf[x] != x)
      x = uf[x] = uf[uf[x]];
    return x;
  }
  void add(const TermSpec& s) {
    terms.push_back(s);
    uf.push_back(static_cast<uint32_t>(uf.size()));
  }
  void unite(uint32_t a, uint32_t b) { uf[find(a)] = find(b); }
  // Merges terms with equal signatures until nothing changes; returns the number of distinct
  // signatures (= e-nodes an e-graph must hold).
  size_t close() {
    for (;;) {
      std::map<std::vector<uint32_t>, uint32_t> sigs;
      bool changed = false;
      for (uint32_t i = 0; i < terms.size(); ++i) {
        std::vector<uint32_t> sig{terms[i].op.value, terms[i].attr.value};
        for (uint32_t c : terms[i].children)
          sig.push_back(find(c));
        auto [it, inserted] = sigs.emplace(sig, i);
        if (!inserted && find(it->second) != find(i)) {
          unite(it->second, i);
          changed = true;
        }
      }
      if (!changed) return sigs.size();
    }
  }
};

// Least/greatest fixpoints recomputed from the rebuilt e-graph alone.
std::map<uint32_t, uint64_t> scratchMinSize(const EGraph& g) {
  std::map<uint32_t, uint64_t> v;
  for (ClassId c : g.classes())
    v[c.value] = UINT64_MAX;
  for (bool changed = true; changed;) {
    changed = false;
    for (ClassId c : g.classes())
      for (NodeId n : g.nodes(c)) {
        uint64_t s = 1;
        for (ClassId k : g.node(n).children())
          s = (v[k.value] == UINT64_MAX || s == UINT64_MAX) ? UINT64_MAX : s + v[k.value];
        if (s < v[c.value]) {
          v[c.value] = s;
          changed = true;
        }
      }
  }
  return v;
}

std::map<uint32_t, uint64_t> scratchOpSet(const EGraph& g) {
  std::map<uint32_t, uint64_t> v;
  for (ClassId c : g.classes())
    v[c.value] = 0;
  for (bool changed = true; changed;) {
    changed = false;
    for (ClassId c : g.classes())
      for (NodeId n : g.nodes(c)) {
        ENode e = g.node(n);
        uint64_t s = uint64_t{1} << e.op().value;
        for (ClassId k : e.children())
          s |= v[k.value];
        if ((s | v[c.value]) != v[c.value]) {
          v[c.value] |= s;
          changed = true;
        }
      }
  }
  return v;
}

// Compares the e-graph with the model: same partition of the terms, same number of e-nodes, all
// invariants, analyses equal to their from-scratch fixpoints.
void expectMatchesModel(const EGraph& g, Model& m, const std::vector<ClassId>& classes,
                        const MinSize& sizes, const OpSet& ops) {
  ASSERT_TRUE(g.clean());
  ASSERT_NO_THROW(g.checkInvariants());
  size_t signatures = m.close();
  std::map<uint32_t, uint32_t> model_to_graph, graph_to_model;
  for (uint32_t i = 0; i < m.terms.size(); ++i) {
    uint32_t mc = m.find(i);
    uint32_t gc = g.find(classes[i]).value;
    auto [a, ia] = model_to_graph.emplace(mc, gc);
    auto [b, ib] = graph_to_model.emplace(gc, mc);
    ASSERT_EQ(a->second, gc) << "term " << i << ": the e-graph separates congruent terms";
    ASSERT_EQ(b->second, mc) << "term " << i << ": the e-graph merges terms the model separates";
  }
  EXPECT_EQ(g.classCount(), model_to_graph.size());
  EXPECT_EQ(g.nodeCount(), signatures);
  size_t listed = 0;
  for (ClassId c : g.classes())
    listed += g.nodes(c).size();
  EXPECT_EQ(listed, signatures);
  auto min_size = scratchMinSize(g);
  auto op_set = scratchOpSet(g);
  for (ClassId c : g.classes()) {
    EXPECT_EQ(sizes.data(c), min_size[c.value]) << "min-size analysis of " << c;
    EXPECT_EQ(ops.data(c), op_set[c.value]) << "op-set analysis of " << c;
  }
}

// --- basic behaviour ---------------------------------------------------------------------------

TEST(EGraph, HashConsingReturnsTheSameClass) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {});
  ClassId b = g.add(L.b, {});
  ClassId f1 = g.add(L.f, {a, b});
  ClassId f2 = g.add(L.f, {a, b});
  EXPECT_EQ(f1, f2);
  EXPECT_NE(g.add(L.f, {b, a}), f1);
  EXPECT_NE(g.add(L.f, L.ints[1], {a, b}), f1);  // the attribute is part of the identity
  EXPECT_EQ(g.nodeCount(), 5u);
  EXPECT_EQ(g.classCount(), 5u);
  EXPECT_EQ(g.lookup(L.f, kNoAttr, std::vector<ClassId>{a, b}), f1);
  EXPECT_FALSE(g.lookup(L.g, kNoAttr, std::vector<ClassId>{a, b}).has_value());
}

TEST(EGraph, CongruenceAfterRebuild) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {});
  ClassId b = g.add(L.b, {});
  ClassId ua = g.add(L.u, {a});
  ClassId ub = g.add(L.u, {b});
  ClassId fa = g.add(L.f, {ua, a});
  ClassId fb = g.add(L.f, {ub, b});
  EXPECT_TRUE(g.unite(a, b));
  EXPECT_FALSE(g.unite(a, b));
  EXPECT_FALSE(g.clean());
  EXPECT_THROW(g.nodes(a), EGraphError);  // deferred: structural queries need rebuild()
  EXPECT_EQ(g.rebuild(), 2u);             // u(a)=u(b), then f(..)=f(..)
  EXPECT_TRUE(g.clean());
  EXPECT_TRUE(g.same(ua, ub));
  EXPECT_TRUE(g.same(fa, fb));
  EXPECT_EQ(g.nodeCount(), 4u);  // {a,b}, {u}, {f}
  EXPECT_EQ(g.classCount(), 3u);
  EXPECT_NO_THROW(g.checkInvariants());
  EXPECT_EQ(g.nodes(a).size(), 2u);
}

TEST(EGraph, NodesAreSortedAndCanonical) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {});
  ClassId b = g.add(L.b, {});
  ClassId x = g.add(L.g, {a, b});
  ClassId y = g.add(L.f, {a, b});
  ClassId z = g.add(L.u, {a});
  g.unite(x, y);
  g.unite(y, z);
  g.rebuild();
  auto nodes = g.nodes(x);
  ASSERT_EQ(nodes.size(), 3u);
  for (size_t i = 1; i < nodes.size(); ++i)
    EXPECT_LT(g.node(nodes[i - 1]).op(), g.node(nodes[i]).op());
  EXPECT_EQ(g.nodes(x, L.f).size(), 1u);
  EXPECT_EQ(g.nodes(x, L.t).size(), 0u);
  EXPECT_EQ(g.nodesWithOp(L.u).size(), 1u);
  size_t visited = 0;
  g.forEachNode(x, [&](NodeId) { ++visited; });
  EXPECT_EQ(visited, 3u);
  size_t parents = 0;
  g.forEachParent(a, [&](NodeId) { ++parents; });
  EXPECT_EQ(parents, 3u);
}

TEST(EGraph, SelfReferenceThroughUnion) {
  // u(a) = a makes an infinite class; rebuild must terminate and keep one u node.
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {});
  ClassId ua = g.add(L.u, {a});
  ClassId uua = g.add(L.u, {ua});
  g.unite(a, ua);
  g.rebuild();
  EXPECT_TRUE(g.same(uua, a));
  EXPECT_EQ(g.classCount(), 1u);
  EXPECT_EQ(g.nodeCount(), 2u);
  EXPECT_NO_THROW(g.checkInvariants());
}

TEST(EGraph, PropagateGivesExactCountsWithoutTheIndex) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {}), b = g.add(L.b, {});
  ClassId ua = g.add(L.u, {a}), ub = g.add(L.u, {b});
  g.rebuild();
  g.unite(a, b);
  EXPECT_EQ(g.nodeCount(), 4u);  // u(b) is still a separate node until congruence is restored
  EXPECT_GT(g.pendingWork(), 0u);
  EXPECT_EQ(g.propagate(), 1u);
  EXPECT_EQ(g.nodeCount(), 3u);
  EXPECT_EQ(g.classCount(), 2u);
  EXPECT_TRUE(g.same(ua, ub));
  EXPECT_EQ(g.pendingWork(), 0u);
  EXPECT_FALSE(g.clean());  // the index is not rebuilt yet
  std::vector<NodeId> dirty;
  g.forEachNode(a, [&](NodeId n) { dirty.push_back(n); });
  EXPECT_EQ(dirty.size(), 2u);
  EXPECT_THROW(g.classes(), EGraphError);
  EXPECT_EQ(g.rebuild(), 0u);
  EXPECT_TRUE(g.clean());
  std::vector<NodeId> clean;
  g.forEachNode(a, [&](NodeId n) { clean.push_back(n); });
  std::sort(dirty.begin(), dirty.end());
  std::sort(clean.begin(), clean.end());
  EXPECT_EQ(dirty, clean);
  EXPECT_NO_THROW(g.checkInvariants());
}

TEST(EGraph, InvalidUseThrowsClearErrors) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {});
  EXPECT_THROW(g.add(OpId(99), {}), EGraphError);
  EXPECT_THROW(g.add(L.f, {a}), EGraphError);               // wrong arity
  EXPECT_THROW(g.add(L.u, {ClassId(12345)}), EGraphError);  // unknown class
  EXPECT_THROW(g.add(L.k, AttrId(99999)), EGraphError);     // attribute not interned
  EXPECT_THROW(g.unite(a, ClassId(7)), EGraphError);
  EXPECT_THROW(g.find(ClassId(7)), EGraphError);
  EXPECT_THROW(g.node(NodeId(7)), EGraphError);
  EXPECT_THROW(g.addAnalysis<MinSize>(), EGraphError);  // only while empty
  try {
    g.add(L.f, {a});
    FAIL();
  } catch (const EGraphError& e) {
    EXPECT_NE(std::string(e.what()).find("'f' takes 2 children, got 1"), std::string::npos);
  }
  // Variadic operators accept any number of children.
  EXPECT_NO_THROW(g.add(L.v, {}));
  EXPECT_NO_THROW(g.add(L.v, {a, a, a, a, a}));
}

// Data = the first operator; merging different operators is an error ("different shapes").
class Conflicting : public TypedAnalysis<uint32_t> {
 public:
  uint32_t make(const EGraph&, const ENode& n) override { return n.op().value; }
  DidMerge merge(uint32_t& into, uint32_t from) override {
    if (into != from) throw std::runtime_error("merging classes with different kinds");
    return {};
  }
};

TEST(EGraph, AnalysisErrorPropagatesAndPoisons) {
  TestLang L;
  EGraph g(L.lang);
  g.addAnalysis<Conflicting>();
  ClassId a = g.add(L.a, {});
  ClassId a2 = g.add(L.k, L.ints[0]);
  ClassId b = g.add(L.b, {});
  EXPECT_THROW(g.unite(a, b), std::runtime_error);
  EXPECT_TRUE(g.poisoned());
  EXPECT_THROW(g.add(L.c, {}), EGraphError);
  EXPECT_THROW(g.unite(a, a2), EGraphError);
  EXPECT_THROW(g.rebuild(), EGraphError);
  EXPECT_NO_THROW(g.find(a));  // reads stay safe for diagnostics
}

// Constant folding over "k" leaves and "f" (sum): modify() adds the folded constant.
class Fold : public TypedAnalysis<std::optional<int64_t>> {
 public:
  explicit Fold(const TestLang& L) : L_(L) {}
  std::optional<int64_t> make(const EGraph& g, const ENode& n) override {
    if (n.op() == L_.k) return g.language().attrs().intValue(n.attr());
    if (n.op() == L_.f && n.attr() == kNoAttr && data(n.child(0)) && data(n.child(1)))
      return *data(n.child(0)) + *data(n.child(1));
    return std::nullopt;
  }
  DidMerge merge(std::optional<int64_t>& into, std::optional<int64_t> from) override {
    if (into && from && *into != *from) throw std::runtime_error("constant conflict");
    DidMerge d{!into && from, into && !from};
    if (!into) into = from;
    return d;
  }
  void modify(EGraph& g, ClassId c) override {
    auto v = data(c);
    if (!v) return;
    ClassId k = g.add(L_.k, g.language().attrs().internInt(*v));
    g.unite(c, k);
  }

 private:
  const TestLang& L_;
};

TEST(EGraph, ModifyFoldsConstantsThroughRebuild) {
  TestLang L;
  EGraph g(L.lang);
  auto& fold = g.addAnalysis<Fold>(L);
  ClassId one = g.add(L.k, L.ints[1]);
  ClassId two = g.add(L.k, L.ints[2]);
  ClassId x = g.add(L.a, {});
  ClassId sum = g.add(L.f, {one, two});  // folds to 3 on add
  ClassId top = g.add(L.f, {sum, x});    // unknown until x is known
  g.rebuild();
  EXPECT_EQ(fold.data(sum), 3);
  EXPECT_TRUE(g.lookup(L.k, L.ints[3], {}).has_value());
  EXPECT_TRUE(g.same(*g.lookup(L.k, L.ints[3], {}), sum));
  EXPECT_FALSE(fold.data(top).has_value());
  g.unite(x, two);  // x = 2, so top = 5: upward propagation, then modify adds k[5]
  g.rebuild();
  EXPECT_EQ(fold.data(top), 5);
  auto five = g.lookup(L.k, g.language().attrs().internInt(5), {});
  ASSERT_TRUE(five.has_value());
  EXPECT_TRUE(g.same(*five, top));
  EXPECT_NO_THROW(g.checkInvariants());
}

TEST(EGraph, MemoryIsReportedAndProportional) {
  TestLang L;
  EGraph small(L.lang), big(L.lang);
  testing::buildRandom(small, L, 1, 1000, 0);
  testing::buildRandom(big, L, 1, 20000, 0);
  EXPECT_GT(small.memoryBytes(), 1000u * 32);
  double per_small = double(small.memoryBytes()) / double(small.nodeIdCount());
  double per_big = double(big.memoryBytes()) / double(big.nodeIdCount());
  EXPECT_LT(per_big, 400.0);               // bytes per e-node stay bounded
  EXPECT_LT(per_big, per_small * 2 + 50);  // and do not grow with the graph
}

// --- property tests ----------------------------------------------------------------------------

struct PropertyCase {
  uint32_t seed;
  size_t terms;
  size_t rounds;
  size_t unions_per_round;
  friend void PrintTo(const PropertyCase& c, std::ostream* os) {
    *os << "seed " << c.seed << ", " << c.terms << " terms, " << c.rounds << " rounds of "
        << c.unions_per_round << " unions";
  }
};

class EGraphProperty : public ::testing::TestWithParam<PropertyCase> {};

TEST_P(EGraphProperty, RebuildRestoresCongruenceCanonicalFormAndAnalyses) {
  const PropertyCase pc = GetParam();
  TestLang L;
  EGraph g(L.lang);
  auto& sizes = g.addAnalysis<MinSize>();
  auto& ops = g.addAnalysis<OpSet>();
  std::mt19937 rng(pc.seed);
  Model m;
  std::vector<ClassId> classes;
  auto addTerms = [&](size_t n) {
    for (size_t i = 0; i < n; ++i) {
      TermSpec s = testing::randomSpec(L, rng, m.terms.size());
      m.add(s);
      classes.push_back(testing::addSpec(g, s, classes));
    }
  };
  addTerms(pc.terms);
  g.rebuild();
  expectMatchesModel(g, m, classes, sizes, ops);
  for (size_t round = 0; round < pc.rounds; ++round) {
    // A batch of unions, interleaved with adds on the dirty graph (deferred rebuild).
    for (size_t i = 0; i < pc.unions_per_round; ++i) {
      auto x = static_cast<uint32_t>(rng() % m.terms.size());
      auto y = static_cast<uint32_t>(rng() % m.terms.size());
      m.unite(x, y);
      g.unite(classes[x], classes[y]);
      if (i % 4 == 3) addTerms(3);
    }
    g.rebuild();
    expectMatchesModel(g, m, classes, sizes, ops);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Random, EGraphProperty,
                         ::testing::Values(PropertyCase{1, 60, 6, 4}, PropertyCase{2, 200, 5, 12},
                                           PropertyCase{3, 400, 4, 25}, PropertyCase{4, 800, 3, 60},
                                           PropertyCase{5, 300, 10, 3},
                                           PropertyCase{6, 1500, 2, 200}));

TEST(EGraphProperty, RebuildIsIdempotentAndDeterministic) {
  TestLang L;
  auto build = [&](EGraph& g) { return testing::buildRandom(g, L, 77, 500, 80); };
  EGraph g1(L.lang), g2(L.lang);
  auto r1 = build(g1);
  auto r2 = build(g2);
  EXPECT_EQ(g1.rebuild(), 0u);
  ASSERT_EQ(g1.classes().size(), g2.classes().size());
  for (size_t i = 0; i < g1.classes().size(); ++i) {
    EXPECT_EQ(g1.classes()[i], g2.classes()[i]);
    auto n1 = g1.nodes(g1.classes()[i]);
    auto n2 = g2.nodes(g2.classes()[i]);
    EXPECT_TRUE(std::equal(n1.begin(), n1.end(), n2.begin(), n2.end()));
  }
}

}  // namespace
}  // namespace tacit::egraph
