#include "isel/passes.h"

#include <gtest/gtest.h>

#include "hlo/random_literal.h"
#include "isel/view_index.h"

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

  ClassId input(int64_t bytes) { return g.add(ir.inputOp(), ir.encode(InputDesc{0, bytes})); }
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

}  // namespace
}  // namespace tacit::isel
