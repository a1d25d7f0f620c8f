// Soundness of every IR->IR rule (issue 7, acceptance 4): each rule's example kernels are imported,
// the rule alone is applied, and every term of the result class -- the original and each rewritten
// form -- is evaluated with the HLO evaluator on random inputs and must equal the kernel bit for
// bit. A rule that does not fire on its own examples fails too (the test could not fail otherwise).
#include "isel/rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <set>

#include "egraph/enumerate.h"
#include "egraph/runner.h"
#include "hlo/parser.h"
#include "hlo/random_literal.h"
#include "term_eval.h"

namespace tacit::isel {
namespace {

struct Fixture {
  IrLanguage ir;
  egraph::EGraph g{ir.language()};
  ShapeAnalysis& shapes = g.addAnalysis<ShapeAnalysis>(ir);
  ConstAnalysis& consts = g.addAnalysis<ConstAnalysis>(ir);
  IrBuilder b{g, ir, shapes};
};

struct Outcome {
  size_t terms = 0, rewritten = 0;
};

// Checks every term (up to a budget) of the kernel's result class after applying `rule`.
Outcome checkExample(const IrRule& rule, const std::string& text, uint64_t seed) {
  auto module = hlo::parseModule(text, rule.name() + ".hlo");
  Fixture f;
  ImportedKernel k = importKernel(*module, f.b);
  f.g.rebuild();
  size_t nodes_before = f.g.nodeCount();
  std::vector<hlo::Literal> logical, bytes;
  for (const KernelParameter& p : k.parameters) {
    logical.push_back(hlo::randomLiteral(p.shape, seed++));
    bytes.push_back(testing::hbmBytes(logical.back(), p.shape));
  }
  hlo::Literal expected = hlo::evaluate(*module, logical);

  std::vector<egraph::Rewrite> rewrites = rule.rewrites(f.b, rule.exampleNeeds());
  egraph::Runner(f.g, {.max_nodes = 20000, .max_iterations = 3}).run(rewrites);
  f.g.rebuild();

  Outcome out;
  egraph::EnumOptions enum_options;
  enum_options.max_size = 48;
  enum_options.max_steps = 2'000'000;
  egraph::Enumerator en(f.g, k.results.at(0).value_class, enum_options);
  egraph::Term t;
  while (out.terms < 300 && en.next(t)) {
    ++out.terms;
    bool uses_new = false;
    for (const egraph::TermNode& n : t.nodes())
      uses_new |= n.enode.index() >= nodes_before;
    out.rewritten += uses_new;
    hlo::Literal got = testing::evaluateTerm(f.ir, t, bytes);
    EXPECT_TRUE(got.bitwiseEqual(expected))
        << rule.name() << ": term " << t.str(f.ir.lang(), 2000) << "\ndiffers from\n"
        << text;
  }
  return out;
}

TEST(IrRules, EveryRuleIsSoundOnItsExamples) {
  ASSERT_FALSE(ruleLibrary().empty());
  for (const auto& rule : ruleLibrary()) {
    std::vector<std::string> examples = rule->examples();
    EXPECT_FALSE(examples.empty()) << rule->name() << " has no example";
    for (size_t i = 0; i < examples.size(); ++i) {
      for (uint64_t seed : {1u, 2u, 3u}) {
        Outcome o = checkExample(*rule, examples[i], seed * 100);
        EXPECT_GT(o.rewritten, 0u) << rule->name() << " example " << i << " never fired";
        std::printf("%-28s example %zu seed %llu: %zu terms, %zu rewritten\n", rule->name().c_str(),
                    i, static_cast<unsigned long long>(seed), o.terms, o.rewritten);
      }
    }
  }
}

TEST(IrRules, SelectionIsTheClosureOfTheIsaOperators) {
  EXPECT_TRUE(selectRules({}).empty());  // an ISA that uses nothing needs no rule
  for (hlo::HloOpcode op : {hlo::HloOpcode::kDot, hlo::HloOpcode::kAdd, hlo::HloOpcode::kConvert,
                            hlo::HloOpcode::kConcatenate}) {
    IsaNeeds needs;
    needs.ops = {op};
    std::vector<const IrRule*> chosen = selectRules(needs);
    // The closure: the used operators are the ISA's plus the left sides of the chosen rules; a
    // rule is chosen exactly when it creates a used operator.
    std::set<hlo::HloOpcode> used = needs.ops;
    for (const IrRule* r : chosen) {
      for (hlo::HloOpcode l : r->lhsOps())
        used.insert(l);
    }
    for (const auto& r : ruleLibrary()) {
      bool creates_used = false;
      for (hlo::HloOpcode c : r->rhsOps())
        creates_used |= used.count(c) != 0;
      bool is_chosen = std::find(chosen.begin(), chosen.end(), r.get()) != chosen.end();
      EXPECT_EQ(is_chosen, creates_used) << r->name() << " for " << hlo::opcodeName(op);
    }
  }
}

}  // namespace
}  // namespace tacit::isel
