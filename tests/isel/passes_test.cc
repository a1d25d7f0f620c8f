#include "isel/passes.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <tuple>

#include "common/paths.h"
#include "egraph/runner.h"
#include "hlo/parser.h"
#include "hlo_eval/random_literal.h"
#include "isel/isa_match.h"
#include "isel/kernel.h"
#include "isel/rules.h"
#include "isel/units.h"
#include "isel/view_index.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::isel {
namespace {

using hlo::PrimitiveType;
using hlo::Shape;

struct Fixture {
  IrLanguage ir;
  egraph::EGraph g{ir.language()};
  ShapeAnalysis& shapes = g.addAnalysis<ShapeAnalysis>(ir);
  ConstAnalysis& consts = g.addAnalysis<ConstAnalysis>(ir);
  IrBuilder b{g, ir, shapes};

  ClassId input(int64_t bytes) {
    return g.add(ir.inputOp(), ir.encode(InputDesc{0, bytes, 0, {}}));
  }
  bool hasOp(ClassId c, hlo::HloOpcode op) {
    for (NodeId n : g.nodes(g.find(c))) {
      if (ir.opcodeOf(g.node(n).op()) == op) return true;
    }
    return false;
  }
};

// A bitcast cycle (s = bitcast(t), t = bitcast(s)) reached from s cuts t's views short; t's
// views must still reach the input once asked for themselves, whatever was asked first.
TEST(ViewIndex, ClassesOnABitcastCycleSeeEveryBase) {
  Fixture f;
  ClassId bytes = f.input(16);
  ClassId s = f.b.slice(f.b.reshape(bytes, {4, 4}), {{0, 4, 1}, {0, 2, 1}});
  ClassId t = f.b.bitcastConvert(s, Shape(PrimitiveType::kS8, {4, 2}));
  f.g.unite(f.b.bitcastConvert(t, Shape(PrimitiveType::kU8, {4, 2})), s);
  f.g.rebuild();
  for (bool s_first : {true, false}) {
    ViewIndex index(f.g, f.b);
    if (s_first) index.views(s);
    bool reaches_input = false;
    for (const BaseView& bv : index.views(t))
      reaches_input |= f.g.same(bv.base, bytes) && bv.view.str() == "@0[4:4,2:1]";
    EXPECT_TRUE(reaches_input) << (s_first ? "s queried first" : "t queried first");
  }
}

// A class cut short on a cycle is forgotten, so nobody checks its edges: a class whose views were
// computed through it must be computed again after a refresh, and see what it gained.
TEST(ViewIndex, RefreshRecomputesAboveAForgottenClass) {
  Fixture f;
  ClassId bytes = f.input(16);
  ClassId other = f.g.add(f.ir.inputOp(), f.ir.encode(InputDesc{1, 8, 0, {}}));
  ClassId s = f.b.slice(f.b.reshape(bytes, {4, 4}), {{0, 4, 1}, {0, 2, 1}});
  ClassId t = f.b.bitcastConvert(s, Shape(PrimitiveType::kS8, {4, 2}));
  f.g.unite(f.b.bitcastConvert(t, Shape(PrimitiveType::kU8, {4, 2})), s);
  f.g.rebuild();
  ViewIndex index(f.g, f.b);
  index.views(s);  // t is computed inside, cut short on the cycle, and forgotten
  ASSERT_EQ(index.computedAt(t), 0u);
  // t is also `other`'s bytes as s8.
  f.g.unite(t, f.b.bitcastConvert(f.b.reshape(other, {4, 2}), Shape(PrimitiveType::kS8, {4, 2})));
  f.g.rebuild();
  index.refresh();
  bool reaches_other = false;
  for (const BaseView& bv : index.views(s))
    reaches_other |= f.g.same(bv.base, other);
  EXPECT_TRUE(reaches_other);
}

TEST(ViewPass, UnitesEqualMovementChains) {
  Fixture f;
  ClassId bytes = f.input(8192);
  ClassId x = f.b.unflatten(bytes, Shape(PrimitiveType::kBF16, {64, 64}));
  ClassId tt = f.b.transpose(f.b.transpose(x, {1, 0}), {1, 0});
  ClassId rr = f.b.reshape(f.b.reshape(x, {4096}), {64, 64});
  ClassId back = f.b.flatten(x);
  f.g.rebuild();
  EXPECT_FALSE(f.g.same(tt, x));
  PassStats s = runViewPass(f.g, f.b);
  EXPECT_GE(s.unions, 3u);
  EXPECT_TRUE(f.g.same(tt, x));
  EXPECT_TRUE(f.g.same(rr, x));
  EXPECT_TRUE(f.g.same(back, bytes));  // flatten(unflatten(b)) is b
}

TEST(ViewPass, KeepsDifferentViewsApart) {
  Fixture f;
  ClassId bytes = f.input(8192);
  ClassId x = f.b.unflatten(bytes, Shape(PrimitiveType::kBF16, {64, 64}));
  ClassId t = f.b.transpose(x, {1, 0});
  ClassId s = f.b.slice(x, {{0, 64, 1}, {0, 64, 1}});  // a full slice is x itself
  f.g.rebuild();
  runViewPass(f.g, f.b);
  EXPECT_FALSE(f.g.same(t, x));
  EXPECT_TRUE(f.g.same(s, x));
}

TEST(ViewPass, ContiguousRowsOfAnInputBecomeAnHbmSlice) {
  Fixture f;
  ClassId bytes = f.input(8192);
  ClassId x = f.b.unflatten(bytes, Shape(PrimitiveType::kBF16, {64, 64}));
  ClassId rows = f.b.slice(x, {{16, 48, 1}, {0, 64, 1}});
  ClassId row_bytes = f.b.flatten(rows);
  f.g.rebuild();
  runViewPass(f.g, f.b);
  // rows 16..47 are bytes [16*128, 48*128) of the input.
  bool found = false;
  for (NodeId n : f.g.nodes(f.g.find(row_bytes))) {
    egraph::ENode e = f.g.node(n);
    if (f.ir.opcodeOf(e.op()) != hlo::HloOpcode::kSlice) continue;
    EXPECT_TRUE(f.g.same(e.child(0), bytes));
    const auto& sl = *f.ir.opDesc(e.attr()).attrs.slice;
    EXPECT_EQ(sl[0].start, 16 * 128);
    EXPECT_EQ(sl[0].limit, 48 * 128);
    found = true;
  }
  EXPECT_TRUE(found);
}

TEST(ConstantFoldPass, AddsTheLiteralOfConstantClasses) {
  Fixture f;
  hlo::Literal lit = hlo::randomLiteral(Shape(PrimitiveType::kS8, {4, 4}), 7);
  ClassId c = f.b.constant(lit);
  ClassId t = f.b.convert(f.b.transpose(c, {1, 0}), PrimitiveType::kS32);
  f.g.rebuild();
  EXPECT_TRUE(f.consts.data(t));
  runConstantFoldPass(f.g, f.b);
  runConstantFoldPass(f.g, f.b);  // the convert folds once its operand holds a literal
  const hlo::Literal* folded = literalOf(f.g, f.ir, t);
  ASSERT_NE(folded, nullptr);
  EXPECT_EQ(folded->data<int32_t>()[1], static_cast<int32_t>(lit.data<int8_t>()[4]));
}

// A probe looks nodes up without adding any (or interning their attributes).
TEST(IrBuilder, ProbeFindsExistingNodesAndAddsNothing) {
  Fixture f;
  ClassId bytes = f.input(64);
  ClassId x = f.b.unflatten(bytes, Shape(PrimitiveType::kF32, {4, 4}));
  ClassId t = f.b.transpose(x, {1, 0});
  f.g.rebuild();
  size_t nodes = f.g.nodeCount(), attrs = f.g.language().attrs().size();
  EXPECT_EQ(f.b.probe([&] { return f.b.transpose(x, {1, 0}); }), std::optional<ClassId>(t));
  EXPECT_EQ(f.b.probe([&] {
    return f.b.unary(hlo::HloOpcode::kNegate, f.b.transpose(x, {1, 0}));
  }),
            std::nullopt);
  EXPECT_EQ(f.b.probe([&] { return f.b.reshape(x, {16}); }), std::nullopt);
  EXPECT_EQ(f.g.nodeCount(), nodes);
  EXPECT_EQ(f.g.language().attrs().size(), attrs);
  EXPECT_TRUE(f.g.clean());
  // Not probing any more: nodes are added again.
  f.b.reshape(x, {16});
  EXPECT_EQ(f.g.nodeCount(), nodes + 1);
}

// One phase-1 e-graph per matcher policy: rules, passes and matching as Selector::saturate does.
struct Saturation {
  const taidl::Isa& isa;
  const UnitSet& units;
  IrLanguage ir;
  egraph::EGraph g{ir.language()};
  ShapeAnalysis& shapes = g.addAnalysis<ShapeAnalysis>(ir);
  ConstAnalysis& consts = g.addAnalysis<ConstAnalysis>(ir);
  IrBuilder b{g, ir, shapes};
  ImportedKernel kernel;
  std::vector<egraph::Rewrite> rules;
  std::unique_ptr<IsaMatcher> matcher;
  egraph::AppliedMatches applied;

  Saturation(const taidl::Isa& i, const UnitSet& u, const hlo::HloModule& m)
      : isa(i), units(u), kernel(importKernel(m, b)) {
    g.rebuild();
    IsaNeeds needs = analyzeIsa(isa, units);
    for (const IrRule* r : selectRules(needs)) {
      for (egraph::Rewrite& w : r->rewrites(b, needs))
        rules.push_back(std::move(w));
    }
  }
  // One iteration; `fresh` matches with a new matcher (everything again), `every_match` applies
  // every match of the rules (none skipped as applied before). With `kept_views` the view pass,
  // the row split and the matcher share one ViewIndex across iterations, as Selector::saturate
  // does, and `after_views` runs right after the view pass.
  void iterate(bool fresh, bool every_match = false, ViewPass* kept_views = nullptr,
               const std::function<void()>& after_views = {}) {
    egraph::Runner(g, egraph::Limits{.max_nodes = 50'000, .max_iterations = 1})
        .setApplied(every_match ? nullptr : &applied)
        .run(rules);
    ViewIndex* views = kept_views ? &kept_views->views() : nullptr;
    if (kept_views) {
      kept_views->run();
    } else {
      runViewPass(g, b);
    }
    if (after_views) after_views();
    runConstantFoldPass(g, b);
    runRowSplitPass(g, b, 256, views);
    if (fresh || !matcher) matcher = std::make_unique<IsaMatcher>(isa, units, b);
    matcher->setViews(views);
    egraph::ClientRule* matching[] = {matcher.get()};
    egraph::Runner(g, egraph::Limits{.max_nodes = SIZE_MAX,
                                     .max_iterations = 1,
                                     .max_time = std::chrono::nanoseconds::max()})
        .run({}, matching);
    matcher->writeRegions(kernel.results);
    g.rebuild();
  }
};

// A spec, its units and one of its kernels, for two Saturations of the kernel side by side.
struct KernelUnderTest {
  taidl::Isa isa;
  UnitSet units;
  std::unique_ptr<hlo::HloModule> kernel;
  KernelUnderTest(const std::string& spec, const std::string& file)
      : isa(taidl::loadIsaFile(testing::sourceDir() + "/" + spec)),
        units(buildUnits(isa)),
        kernel(hlo::parseModule(readFile(testing::sourceDir() + "/" + file),
                                testing::sourceDir() + "/" + file)) {}
};

// The same e-graph: node and class counts, class ids and, per class, its node ids.
::testing::AssertionResult sameEGraph(const egraph::EGraph& a, const egraph::EGraph& b) {
  if (a.nodeCount() != b.nodeCount() || a.nodeIdCount() != b.nodeIdCount() ||
      a.classCount() != b.classCount())
    return ::testing::AssertionFailure() << "node/class counts differ";
  if (!std::equal(a.classes().begin(), a.classes().end(), b.classes().begin(), b.classes().end()))
    return ::testing::AssertionFailure() << "class ids differ";
  for (ClassId c : a.classes()) {
    auto x = a.nodes(c), y = b.nodes(c);
    if (!std::equal(x.begin(), x.end(), y.begin(), y.end()))
      return ::testing::AssertionFailure() << "nodes of class " << c.value << " differ";
  }
  return ::testing::AssertionSuccess();
}

// Iterates an incremental and a from-scratch matcher side by side until saturation: after every
// iteration the e-graphs are equal and the failures the same, in the same order.
// `between_iterations` runs on the incremental one after each (e.g. a search never applied).
void expectIncrementalEqualsFull(const KernelUnderTest& t,
                                 const std::function<void(Saturation&)>& between_iterations = {}) {
  Saturation incremental(t.isa, t.units, *t.kernel), full(t.isa, t.units, *t.kernel);
  for (int k = 0; k < 8; ++k) {
    SCOPED_TRACE(k);
    size_t before = incremental.g.nodeCount();
    incremental.iterate(false);
    full.iterate(true);
    ASSERT_TRUE(sameEGraph(incremental.g, full.g));
    const auto& a = incremental.matcher->failures();
    const auto& b = full.matcher->failures();
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_TRUE(std::tie(a[i].pattern, a[i].eclass, a[i].reason) ==
                  std::tie(b[i].pattern, b[i].eclass, b[i].reason))
          << i << ": " << a[i].reason << " / " << b[i].reason;
    }
    if (k > 0 && incremental.g.nodeCount() == before) break;
    if (between_iterations) between_iterations(incremental);
  }
}

// The matcher matches again only the (pattern, class) pairs whose class's neighbourhood changed
// (strided loads: whose views changed): every iteration leaves the same e-graph and records the
// same failures as matching everything. add_32x32 is four tiles, each loaded by pitched moves.
TEST(IsaMatcher, IncrementalMatchingEqualsMatchingEverything) {
  for (auto [spec, file] :
       {std::pair<const char*, const char*>{"isa/gemmini.taidl", "examples/gemmini/mm3_add_d.hlo"},
        {"isa/gemmini.taidl", "examples/gemmini/add_32x32.hlo"},
        {"isa/amx.taidl", "examples/amx/k3_f32_outer_14x32.hlo"},
        {"isa/qkv.taidl", "examples/attention/attention.hlo"}}) {
    SCOPED_TRACE(file);
    KernelUnderTest t(spec, file);
    expectIncrementalEqualsFull(t);
  }
}

// A search that was not applied (a runner stopped at a limit between the two) is not replayed by
// the next: its matches were never constructed. Every iteration still equals matching everything.
TEST(IsaMatcher, AnUnappliedSearchIsNotReplayed) {
  KernelUnderTest t("isa/gemmini.taidl", "examples/gemmini/mm3_add_d.hlo");
  expectIncrementalEqualsFull(t, [](Saturation& incremental) {
    incremental.matcher->search(incremental.g);  // found, never applied
  });
}

// The rules skip matches they applied before whose applier reads nothing that changed
// (egraph::AppliedMatches): every iteration leaves the same e-graph as applying every match.
TEST(IsaMatcher, SkippingAppliedMatchesEqualsApplyingEveryMatch) {
  for (auto [spec, file] :
       {std::pair<const char*, const char*>{"isa/gemmini.taidl", "examples/gemmini/mm3_add_d.hlo"},
        {"isa/amx.taidl", "examples/amx/k3_f32_outer_14x32.hlo"},
        {"isa/amx.taidl", "examples/amx/k5_int8_gemm_requantize.hlo"},
        {"isa/qkv.taidl", "examples/attention/attention.hlo"}}) {
    SCOPED_TRACE(file);
    KernelUnderTest t(spec, file);
    Saturation skipping(t.isa, t.units, *t.kernel), every(t.isa, t.units, *t.kernel);
    for (int k = 0; k < 10; ++k) {
      SCOPED_TRACE(k);
      size_t before = skipping.g.nodeCount();
      skipping.iterate(false);
      every.iterate(false, true);
      ASSERT_TRUE(sameEGraph(skipping.g, every.g));
      if (k > 0 && skipping.g.nodeCount() == before) break;
    }
    EXPECT_GT(skipping.applied.skipped(), 0u);
  }
}

// The view pass keeps its views across iterations and computes only classes whose movement
// closure changed (ViewIndex::refresh): after each of its runs a pass that computes every class
// from scratch finds nothing more to unite or slice.
TEST(ViewPass, KeptViewsLeaveNothingForAFreshPass) {
  for (auto [spec, file] :
       {std::pair<const char*, const char*>{"isa/gemmini.taidl", "examples/gemmini/mm3_add_d.hlo"},
        {"isa/gemmini.taidl", "examples/gemmini/accumulated/mac_add.hlo"},
        {"isa/amx.taidl", "examples/amx/k3_f32_outer_14x32.hlo"},
        {"isa/amx.taidl", "examples/amx/k5_int8_gemm_requantize.hlo"},
        {"isa/qkv.taidl", "examples/attention/attention.hlo"}}) {
    SCOPED_TRACE(file);
    KernelUnderTest t(spec, file);
    Saturation s(t.isa, t.units, *t.kernel);
    ViewPass kept(s.g, s.b);
    size_t memo_hits = 0;
    for (int k = 0; k < 10; ++k) {
      SCOPED_TRACE(k);
      size_t before = s.g.nodeCount();
      s.iterate(false, false, &kept, [&] {
        for (ClassId c : s.g.classes()) {
          kept.views().views(c);
          memo_hits += kept.views().computedNow(c) ? 0 : 1;
        }
        size_t nodes = s.g.nodeCount();
        PassStats fresh = runViewPass(s.g, s.b);
        EXPECT_EQ(fresh.unions, 0u);
        EXPECT_EQ(s.g.nodeCount(), nodes);
      });
      if (k > 0 && s.g.nodeCount() == before) break;
    }
    EXPECT_GT(memo_hits, 0u);  // the memo is used at all
  }
}

// A kept ViewIndex computes a class again once a movement e-node below it changes.
TEST(ViewIndex, RefreshForgetsClassesWhoseMovementClosureChanged) {
  Fixture f;
  ClassId bytes = f.input(64);
  ClassId other = f.g.add(f.ir.inputOp(), f.ir.encode(InputDesc{1, 64, 0, {}}));
  ClassId x = f.b.reshape(bytes, {4, 16});
  ClassId y = f.b.transpose(x, {1, 0});
  ClassId z = f.b.reshape(other, {4, 16});
  f.g.rebuild();
  ViewIndex index(f.g, f.b);
  auto reaches = [&](ClassId c, ClassId base) {
    for (const BaseView& bv : index.views(c))
      if (f.g.same(bv.base, base)) return true;
    return false;
  };
  EXPECT_TRUE(reaches(y, bytes));
  EXPECT_FALSE(reaches(y, other));
  index.refresh();
  EXPECT_TRUE(reaches(z, other));
  EXPECT_FALSE(index.computedNow(y));  // nothing changed: from the memo
  // x gains a movement e-node over `other`: y (above x) must see it.
  f.g.unite(x, f.b.reshape(f.b.slice(other, {{0, 64, 1}}), {4, 16}));
  f.g.rebuild();
  index.refresh();
  EXPECT_TRUE(reaches(y, other));
  EXPECT_TRUE(index.computedNow(y));
}

}  // namespace
}  // namespace tacit::isel
