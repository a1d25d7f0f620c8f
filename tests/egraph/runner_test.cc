#include "egraph/runner.h"

#include <gtest/gtest.h>

#include "egraph/test_util.h"

namespace tacit::egraph {
namespace {

using testing::TestLang;

// f and g play + and *: commutative and associative rules over leaves.
std::vector<Rewrite> acRules(Language& l) {
  std::vector<Rewrite> rules;
  rules.push_back(Rewrite::parse(l, "comm-f", "(f ?a ?b)", "(f ?b ?a)"));
  rules.push_back(Rewrite::parse(l, "assoc-f", "(f ?a (f ?b ?c))", "(f (f ?a ?b) ?c)"));
  rules.push_back(Rewrite::parse(l, "comm-g", "(g ?a ?b)", "(g ?b ?a)"));
  return rules;
}

// A sum of n distinct leaves (u^i(a)) as a right comb: its AC class explodes combinatorially.
ClassId sumOf(EGraph& g, const TestLang& L, int n) {
  std::vector<ClassId> leaves{g.add(L.a, {})};
  for (int i = 1; i < n; ++i)
    leaves.push_back(g.add(L.u, {leaves.back()}));
  ClassId sum = leaves.back();
  for (int i = n - 2; i >= 0; --i)
    sum = g.add(L.f, {leaves[static_cast<size_t>(i)], sum});
  return sum;
}

Limits limits(size_t nodes, size_t iterations, double seconds) {
  Limits l;
  l.max_nodes = nodes;
  l.max_iterations = iterations;
  l.max_time =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(seconds));
  return l;
}

TEST(Rewrite, RejectsMalformedRules) {
  TestLang L;
  Language& l = *L.lang;
  EXPECT_THROW(Rewrite::parse(l, "r", "(f ?a ?b)", "(f ?a ?c)"), EGraphError);  // ?c unbound
  EXPECT_THROW(Rewrite::parse(l, "r", "(f ?a ?b)", "(f[*] ?a ?b)"), EGraphError);
  EXPECT_THROW(Rewrite::parse(l, "r", "(f ?a ?b)", "(f[?p] ?a ?b)"), EGraphError);
  EXPECT_THROW(Rewrite("r", Pattern::parse(l, "?x"), Applier()), EGraphError);
  Rewrite ok = Rewrite::parse(l, "ok", "(f[?p] ?a ?b)", "(f[?p] ?b ?a)");
  EXPECT_THROW(ok.when(Condition()), EGraphError);
  EXPECT_EQ(ok.name(), "ok");
}

TEST(Rewrite, ApplyUnitesTheRightHandSide) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {}), b = g.add(L.b, {});
  ClassId fab = g.add(L.f, L.ints[2], {a, b});
  g.rebuild();
  Rewrite comm = Rewrite::parse(*L.lang, "comm", "(f[?p] ?x ?y)", "(f[?p] ?y ?x)");
  Matches m;
  comm.search(g, m);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(comm.applyAll(g, m), 1u);
  g.rebuild();
  EXPECT_TRUE(g.same(fab, g.add(L.f, L.ints[2], {b, a})));  // the attribute was carried over
  comm.search(g, m);
  EXPECT_EQ(comm.applyAll(g, m), 0u);  // already equal: no change
}

TEST(Rewrite, ConditionsAndDecliningCallbacks) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {}), b = g.add(L.b, {});
  ClassId ua = g.add(L.u, {a}), ub = g.add(L.u, {b});
  g.rebuild();
  Pattern lhs = Pattern::parse(*L.lang, "(u ?x)");
  Var x = lhs.var("x");
  // u(x) = x, but only for x = a (condition).
  Rewrite cond("drop-u", lhs, Pattern::parse(*L.lang, "?x"));
  cond.when([&](const EGraph& eg, ClassId, const Subst& s) { return eg.same(s[x], a); });
  // A callback that declines everything but b.
  int calls = 0;
  Rewrite cb("drop-u-b", lhs, [&](EGraph& eg, ClassId, const Subst& s) -> std::optional<ClassId> {
    ++calls;
    if (!eg.same(s[x], b)) return std::nullopt;
    return s[x];
  });
  std::vector<Rewrite> rules;
  rules.push_back(cond);
  rules.push_back(cb);
  Runner runner(g);
  RunReport r = runner.run(rules);
  EXPECT_EQ(r.stop, StopReason::kSaturated);
  EXPECT_TRUE(g.same(ua, a));
  EXPECT_TRUE(g.same(ub, b));
  EXPECT_FALSE(g.same(a, b));
  EXPECT_GE(calls, 2);
}

TEST(Runner, SaturatesAndProvesAcEquivalence) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {}), b = g.add(L.b, {}), c = g.add(L.c, {});
  ClassId left = g.add(L.f, {g.add(L.f, {a, b}), c});
  ClassId right = g.add(L.f, {c, g.add(L.f, {b, a})});
  std::vector<Rewrite> rules = acRules(*L.lang);
  Runner runner(g, limits(10000, 50, 10));
  RunReport r = runner.run(rules);
  EXPECT_EQ(r.stop, StopReason::kSaturated);
  EXPECT_TRUE(g.same(left, right));
  EXPECT_TRUE(g.clean());
  EXPECT_NO_THROW(g.checkInvariants());
  // The last iteration changed nothing; earlier ones report per-rule activity.
  ASSERT_FALSE(r.iterations.empty());
  EXPECT_EQ(r.iterations.back().applied, 0u);
  EXPECT_EQ(r.iterations.back().stop, StopReason::kSaturated);
  EXPECT_GT(r.iterations.front().rules[0].matches, 0u);
  EXPECT_EQ(r.nodes, g.nodeCount());
  EXPECT_NE(r.summary().find("saturated after"), std::string::npos);
  // Running again on a saturated graph stops after one iteration.
  RunReport again = runner.run(rules);
  EXPECT_EQ(again.stop, StopReason::kSaturated);
  EXPECT_EQ(again.iterations.size(), 1u);
}

// A client rule (egg's Searcher/Applier): every class with an `a` e-node, found by its own search
// on the clean e-graph, is united with u of itself.
class WrapLeaves final : public ClientRule {
 public:
  explicit WrapLeaves(const TestLang& l) : L(l) {}
  std::string_view name() const override { return "wrap-leaves"; }
  size_t search(const EGraph& g) override {
    EXPECT_TRUE(g.clean());
    found.clear();
    for (ClassId c : g.classes()) {
      for (NodeId n : g.nodes(c)) {
        if (g.node(n).op() == L.a) found.push_back(c);
      }
    }
    ++searches;
    return found.size();
  }
  size_t apply(EGraph& g) override {
    size_t changes = 0;
    for (ClassId c : found)
      changes += g.unite(g.add(L.u, {c}), c) ? 1 : 0;
    return changes;
  }
  const TestLang& L;
  std::vector<ClassId> found;
  int searches = 0;
};

TEST(Runner, ClientRulesAreSearchedAndAppliedAfterThePatternRules) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {}), b = g.add(L.b, {});
  ClassId fab = g.add(L.f, {a, b});
  std::vector<Rewrite> rules = acRules(*L.lang);
  WrapLeaves wrap(L);
  ClientRule* clients[] = {&wrap};
  RunReport r = Runner(g, limits(10000, 10, 10)).run(rules, clients);
  EXPECT_EQ(r.stop, StopReason::kSaturated);
  EXPECT_TRUE(g.same(g.add(L.u, {a}), a));       // the client's union
  EXPECT_TRUE(g.same(fab, g.add(L.f, {b, a})));  // the pattern rules'
  ASSERT_GE(r.iterations.size(), 2u);
  const IterationReport& first = r.iterations.front();
  ASSERT_EQ(first.rules.size(), rules.size() + 1);  // the client's stats follow the rules'
  EXPECT_TRUE(first.rules.back().searched);
  EXPECT_EQ(first.rules.back().matches, 1u);
  EXPECT_EQ(first.rules.back().applied, 1u);
  EXPECT_EQ(r.iterations.back().rules.back().applied, 0u);
  EXPECT_EQ(wrap.searches, static_cast<int>(r.iterations.size()));
  EXPECT_NO_THROW(g.checkInvariants());
}

TEST(Runner, ClientRuleIsNotAppliedPastANodeLimit) {
  TestLang L;
  EGraph g(L.lang);
  ClassId a = g.add(L.a, {});
  g.add(L.f, {a, g.add(L.b, {})});
  std::vector<Rewrite> rules = acRules(*L.lang);
  WrapLeaves wrap(L);
  ClientRule* clients[] = {&wrap};
  // Three e-nodes, at the limit: commutativity adds f(b, a) and the client's application, checked
  // after it, does not happen.
  RunReport r = Runner(g, limits(3, 10, 10)).run(rules, clients);
  EXPECT_EQ(r.stop, StopReason::kNodeLimit);
  EXPECT_EQ(wrap.searches, 1);
  EXPECT_EQ(g.nodeCount(), 4u);
  EXPECT_FALSE(g.lookup(L.u, kNoAttr, std::vector<ClassId>{a}).has_value());
}

TEST(Runner, IterationLimit) {
  TestLang L;
  EGraph g(L.lang);
  g.add(L.u, {g.add(L.a, {})});
  // u(x) -> u(u(x)) in a new class each time: never saturates.
  std::vector<Rewrite> rules;
  Pattern lhs = Pattern::parse(*L.lang, "(u ?x)");
  Var x = lhs.var("x");
  rules.emplace_back(
      "grow", lhs, [&](EGraph& eg, ClassId c, const Subst& s) -> std::optional<ClassId> {
        eg.add(L.g, {c, s[x]});  // a new parent, never united: the graph grows forever
        return std::nullopt;
      });
  rules.push_back(Rewrite::parse(*L.lang, "wrap", "(g ?a ?b)", "(g ?a (u ?b))"));
  Runner runner(g, limits(1'000'000, 4, 60));
  RunReport r = runner.run(rules);
  EXPECT_EQ(r.stop, StopReason::kIterationLimit);
  EXPECT_EQ(r.iterations.size(), 4u);
  EXPECT_EQ(r.iterations.back().stop, StopReason::kIterationLimit);
}

TEST(Runner, NodeLimitIsRespectedWithinOneApplication) {
  for (size_t limit : {size_t{500}, size_t{3000}}) {
    TestLang L;
    EGraph g(L.lang);
    sumOf(g, L, 9);
    std::vector<Rewrite> rules = acRules(*L.lang);
    Runner runner(g, limits(limit, 1000, 60));
    runner.setScheduler(std::make_unique<SimpleScheduler>());
    RunReport r = runner.run(rules);
    EXPECT_EQ(r.stop, StopReason::kNodeLimit);
    EXPECT_GT(g.nodeCount(), limit);
    EXPECT_LE(g.nodeCount(), limit + 2);  // one application of assoc adds at most two nodes
    EXPECT_TRUE(g.clean());
  }
}

TEST(Runner, ClassLimit) {
  TestLang L;
  EGraph g(L.lang);
  sumOf(g, L, 9);
  std::vector<Rewrite> rules = acRules(*L.lang);
  Limits lim = limits(1'000'000, 1000, 60);
  lim.max_classes = 400;
  Runner runner(g, lim);
  RunReport r = runner.run(rules);
  EXPECT_EQ(r.stop, StopReason::kClassLimit);
  EXPECT_LE(g.classCount(), 402u);
}

TEST(Runner, TimeLimitStopsPromptly) {
  TestLang L;
  EGraph g(L.lang);
  sumOf(g, L, 14);  // far more than can be explored in the time
  std::vector<Rewrite> rules = acRules(*L.lang);
  Runner runner(g, limits(50'000'000, 100000, 0.15));
  runner.setScheduler(std::make_unique<SimpleScheduler>());
  RunReport r = runner.run(rules);
  EXPECT_EQ(r.stop, StopReason::kTimeLimit);
  EXPECT_GE(r.seconds, 0.15 * 0.5);
  // Generous slack: sanitizer builds and a loaded CI machine; the benchmark measures precision.
  EXPECT_LE(r.seconds, 0.15 + 0.25);
  EXPECT_TRUE(g.clean());
  EXPECT_NO_THROW(g.checkInvariants());
}

TEST(Runner, HookSeesEveryIterationAndCanStop) {
  TestLang L;
  EGraph g(L.lang);
  sumOf(g, L, 6);
  std::vector<Rewrite> rules = acRules(*L.lang);
  Runner runner(g, limits(1'000'000, 100, 60));
  std::vector<size_t> seen;
  runner.setHook([&](EGraph& eg, const IterationReport& it) {
    EXPECT_TRUE(eg.clean());
    EXPECT_EQ(it.nodes, eg.nodeCount());
    seen.push_back(it.index);
    if (it.index == 0) eg.add(L.f, {eg.add(L.c, {}), eg.add(L.b, {})});  // the hook may add
    return it.index == 2;  // stop after the third iteration
  });
  RunReport r = runner.run(rules);
  EXPECT_EQ(r.stop, StopReason::kHookStop);
  EXPECT_TRUE(g.clean());
  EXPECT_TRUE(
      g.lookup(L.f, kNoAttr,
               std::vector<ClassId>{*g.lookup(L.b, kNoAttr, {}), *g.lookup(L.c, kNoAttr, {})})
          .has_value());  // the rules saw the hook's node: comm-f applied to it
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(r.iterations.size(), 3u);
  EXPECT_EQ(r.iterations.back().stop, StopReason::kHookStop);
}

TEST(Runner, HookIsCalledOnTheLastIterationOfALimitedRun) {
  TestLang L;
  EGraph g(L.lang);
  sumOf(g, L, 8);
  std::vector<Rewrite> rules = acRules(*L.lang);
  Runner runner(g, limits(1'000'000, 2, 60));
  std::vector<std::optional<StopReason>> stops;
  runner.setHook([&](EGraph&, const IterationReport& it) {
    stops.push_back(it.stop);
    return false;
  });
  runner.run(rules);
  ASSERT_EQ(stops.size(), 2u);
  EXPECT_FALSE(stops[0].has_value());
  EXPECT_EQ(stops[1], StopReason::kIterationLimit);
}

TEST(Runner, BackoffBansExplosiveRulesButStillSaturates) {
  TestLang L;
  EGraph g(L.lang);
  sumOf(g, L, 5);
  std::vector<Rewrite> rules = acRules(*L.lang);
  auto sched = std::make_unique<BackoffScheduler>(8, 1);  // tiny limits: bans happen
  BackoffScheduler* backoff = sched.get();
  Runner runner(g, limits(1'000'000, 1000, 60));
  runner.setScheduler(std::move(sched));
  RunReport r = runner.run(rules);
  EXPECT_EQ(r.stop, StopReason::kSaturated);
  size_t discarded = 0, skipped = 0;
  for (const IterationReport& it : r.iterations)
    for (const RuleStats& rs : it.rules) {
      discarded += rs.discarded ? 1 : 0;
      skipped += rs.searched ? 0 : 1;
    }
  EXPECT_GT(discarded, 0u);
  EXPECT_GT(skipped, 0u);
  EXPECT_GT(backoff->timesBanned(1), 0u);  // assoc
  // Saturation is only reported with nothing banned: the graph equals the unscheduled result.
  EGraph h(L.lang);
  sumOf(h, L, 5);
  Runner plain(h, limits(1'000'000, 1000, 60));
  plain.setScheduler(std::make_unique<SimpleScheduler>());
  EXPECT_EQ(plain.run(rules).stop, StopReason::kSaturated);
  EXPECT_EQ(g.nodeCount(), h.nodeCount());
  EXPECT_EQ(g.classCount(), h.classCount());
}

TEST(Runner, BackoffDoNotBanAndPerRuleLimits) {
  TestLang L;
  std::vector<Rewrite> rules = acRules(*L.lang);
  BackoffScheduler s(8, 2);
  s.doNotBan("assoc-f").ruleLimits("comm-g", 100, 3);
  s.reset(rules);
  EXPECT_EQ(s.matchLimit(0, 1), SIZE_MAX);
  EXPECT_TRUE(s.accept(0, 1, 1'000'000));
  EXPECT_EQ(s.matchLimit(0, 2), 101u);
  EXPECT_FALSE(s.accept(0, 0, 9));  // over 8: banned for 2 iterations
  EXPECT_FALSE(s.canSearch(1, 0));
  EXPECT_TRUE(s.canSearch(2, 0));
  EXPECT_EQ(s.matchLimit(2, 0), 17u);  // threshold doubled
  EXPECT_FALSE(s.accept(2, 0, 17));    // banned for 4 now
  EXPECT_EQ(s.bannedUntil(0), 6u);
  EXPECT_FALSE(s.canStop(3));  // fast-forwards the ban instead
  EXPECT_TRUE(s.canSearch(3, 0));
  EXPECT_TRUE(s.canStop(3));
}

TEST(Runner, MatchBudgetChunksWithoutChangingTheResult) {
  TestLang L;
  std::vector<Rewrite> rules = acRules(*L.lang);
  auto saturate = [&](size_t max_matches, RunReport& r) {
    auto g = std::make_unique<EGraph>(L.lang);
    sumOf(*g, L, 6);
    Limits lim = limits(1'000'000, 1000, 60);
    lim.max_matches = max_matches;
    Runner runner(*g, lim);
    runner.setScheduler(std::make_unique<SimpleScheduler>());
    r = runner.run(rules);
    return g;
  };
  RunReport big, small;
  auto g1 = saturate(0, big);
  auto g2 = saturate(30, small);  // 10 matches per rule and chunk
  EXPECT_EQ(big.stop, StopReason::kSaturated);
  EXPECT_EQ(small.stop, StopReason::kSaturated);
  EXPECT_EQ(g1->nodeCount(), g2->nodeCount());
  EXPECT_EQ(g1->classCount(), g2->classCount());
  size_t max_chunks = 0;
  for (const IterationReport& it : small.iterations)
    for (const RuleStats& rs : it.rules)
      max_chunks = std::max(max_chunks, rs.chunks);
  EXPECT_GT(max_chunks, 3u);
}

TEST(Runner, UnboundedTimeLimitDoesNotOverflow) {
  TestLang L;
  EGraph g(L.lang);
  sumOf(g, L, 4);
  std::vector<Rewrite> rules = acRules(*L.lang);
  Limits lim = limits(1'000'000, 1000, 60);
  lim.max_time = std::chrono::nanoseconds::max();
  Runner runner(g, lim);
  EXPECT_EQ(runner.run(rules).stop, StopReason::kSaturated);
}

TEST(Runner, StartsAboveALimitWithoutIterating) {
  TestLang L;
  EGraph g(L.lang);
  sumOf(g, L, 20);
  std::vector<Rewrite> rules = acRules(*L.lang);
  Runner runner(g, limits(10, 100, 60));
  RunReport r = runner.run(rules);
  EXPECT_EQ(r.stop, StopReason::kNodeLimit);
  EXPECT_TRUE(r.iterations.empty());
}

TEST(Runner, AnalysisErrorsPropagate) {
  // An analysis that refuses every merge: the first union a rule makes throws out of run().
  class Refuse : public TypedAnalysis<int> {
   public:
    int make(const EGraph&, const ENode&) override { return 0; }
    DidMerge merge(int&, int) override {
      throw std::runtime_error("merging classes with different shapes");
    }
  };
  TestLang L;
  EGraph g(L.lang);
  g.addAnalysis<Refuse>();
  g.add(L.u, {g.add(L.a, {})});
  std::vector<Rewrite> rules;
  rules.push_back(Rewrite::parse(*L.lang, "drop", "(u ?x)", "?x"));
  Runner runner(g);
  EXPECT_THROW(runner.run(rules), std::runtime_error);
  EXPECT_TRUE(g.poisoned());
}

}  // namespace
}  // namespace tacit::egraph
