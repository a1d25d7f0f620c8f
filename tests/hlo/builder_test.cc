// HloBuilder: inferred shapes, unique names, errors on invalid construction; cloneModule.
#include "hlo/builder.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace tacit::hlo {
namespace {

Shape F32(std::vector<int64_t> d) {
  return Shape(PrimitiveType::kF32, std::move(d));
}

TEST(HloBuilder, BuildsAVerifiableModuleThatRoundTrips) {
  HloModule m("built");
  HloComputation* add = addScalarReducer(m, HloOpcode::kAdd, PrimitiveType::kF32);
  HloBuilder b("main");
  HloInstruction* x = b.parameter(0, F32({4, 8}));
  HloInstruction* y = b.parameter(1, F32({8, 2}));
  HloInstruction* d = b.dot(x, y, DotDims{{}, {1}, {}, {0}});
  HloInstruction* zero = b.constant(scalarLiteral(PrimitiveType::kF32, 0));
  HloInstruction* r = b.reduce({d}, {zero}, {1}, add);
  HloInstruction* e = b.unary(HloOpcode::kExponential, r);
  HloInstruction* s = b.binary(HloOpcode::kAdd, e, e);
  HloInstruction* c = b.compare(s, e, ComparisonDirection::kGt);
  HloInstruction* sel = b.select(c, s, e);
  HloInstruction* cl = b.clamp(zero, sel, b.constant(scalarLiteral(PrimitiveType::kF32, 6)));
  HloInstruction* cv = b.convert(cl, PrimitiveType::kBF16);
  HloInstruction* bc = b.bitcastConvert(cv, PrimitiveType::kU8);
  HloInstruction* rs = b.reshape(x, {32});
  HloInstruction* br = b.broadcast(r, {4, 3}, {0});
  HloInstruction* tr = b.transpose(br, {1, 0});
  HloInstruction* sl = b.slice(rs, {0}, {32}, {4});
  HloInstruction* i0 = b.constant(scalarLiteral(PrimitiveType::kS32, 1));
  HloInstruction* ds = b.dynamicSlice(x, {i0, i0}, {2, 2});
  HloInstruction* dus = b.dynamicUpdateSlice(x, ds, {i0, i0});
  HloInstruction* cat = b.concatenate({x, dus}, 0);
  HloInstruction* pd = b.pad(sl, zero, {PadDim{1, 2, 1}});
  HloInstruction* rv = b.reverse(pd, {0});
  HloInstruction* io = b.iota(Shape(PrimitiveType::kS32, {5}), 0);
  HloInstruction* cp = b.copy(cat);
  HloInstruction* tu = b.tuple({tr, rv, io, cp, bc});
  HloInstruction* g = b.getTupleElement(tu, 1);
  b.addTo(m, true);
  EXPECT_EQ(d->shape().str(), "f32[4,2]");
  EXPECT_EQ(r->shape().str(), "f32[4]");
  EXPECT_EQ(bc->shape().str(), "u8[4,2]");
  EXPECT_EQ(tr->shape().str(), "f32[3,4]");
  EXPECT_EQ(sl->shape().str(), "f32[8]");
  EXPECT_EQ(pd->shape().str(), "f32[18]");
  EXPECT_EQ(cat->shape().str(), "f32[8,8]");
  EXPECT_EQ(g->shape().str(), "f32[18]");
  EXPECT_EQ(x->name(), "p0");
  EXPECT_EQ(zero->name(), "constant");
  EXPECT_EQ(i0->name(), "constant.2");
  EXPECT_TRUE(g->isRoot());
  verifyModule(m);
  std::string text = printModule(m);
  auto reparsed = parseModule(text, "built.hlo");
  verifyModule(*reparsed);
  EXPECT_EQ(printModule(*reparsed), text);
}

TEST(HloBuilder, DotWithResultType) {
  HloBuilder b("e");
  HloInstruction* x = b.parameter(0, Shape(PrimitiveType::kS8, {2, 3}));
  HloInstruction* y = b.parameter(1, Shape(PrimitiveType::kS8, {3, 4}));
  EXPECT_EQ(b.dot(x, y, DotDims{{}, {1}, {}, {0}}, PrimitiveType::kS32)->shape().str(), "s32[2,4]");
  HloInstruction* z = b.parameter(2, Shape(PrimitiveType::kBF16, {3, 4}));
  EXPECT_EQ(b.dot(x, z, DotDims{{}, {1}, {}, {0}}, PrimitiveType::kF32)->shape().str(), "f32[2,4]");
  EXPECT_THROW(b.dot(x, z, DotDims{{}, {1}, {}, {0}}), DiagnosticError);
}

TEST(HloBuilder, InvalidConstructionThrows) {
  HloBuilder b("e");
  HloInstruction* x = b.parameter(0, F32({2, 3}));
  HloInstruction* y = b.parameter(1, F32({3}));
  try {
    b.binary(HloOpcode::kAdd, x, y);
    FAIL();
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostic().message,
              "builder: add: lhs f32[2,3] and rhs f32[3] have different dimensions");
  }
  EXPECT_THROW(b.transpose(x, {0, 0}), DiagnosticError);
  EXPECT_THROW(b.reshape(x, {5}), DiagnosticError);
  EXPECT_THROW(b.broadcast(y, {3, 2}, {1}), DiagnosticError);
  EXPECT_THROW(b.slice(x, {0, 0}, {3, 3}), DiagnosticError);
  EXPECT_THROW(b.parameter(0, F32({})), DiagnosticError);
  EXPECT_THROW(b.unary(HloOpcode::kAdd, x), DiagnosticError);
  EXPECT_THROW(b.binary(HloOpcode::kNegate, x, x), DiagnosticError);
  EXPECT_THROW(b.getTupleElement(x, 0), DiagnosticError);
  EXPECT_THROW(b.unary(HloOpcode::kNegate, x, "bad name"), DiagnosticError);
  EXPECT_THROW(b.unary(HloOpcode::kNegate, x, "p0"), DiagnosticError);
  EXPECT_THROW(b.reduce({x}, {}, {0}, nullptr), DiagnosticError);
  HloBuilder other("o");
  HloInstruction* foreign = other.parameter(0, F32({2, 3}));
  EXPECT_THROW(b.binary(HloOpcode::kAdd, x, foreign), DiagnosticError);
}

TEST(HloBuilder, UniqueComputationNames) {
  HloModule m("m");
  HloComputation* a = addScalarReducer(m, HloOpcode::kMaximum, PrimitiveType::kS32);
  HloComputation* b = addScalarReducer(m, HloOpcode::kMaximum, PrimitiveType::kS32);
  EXPECT_EQ(a->name(), "maximum_s32");
  EXPECT_EQ(b->name(), "maximum_s32.1");
}

TEST(HloBuilder, CloneModuleIsDeepAndEqual) {
  auto m = testing::parse(R"(HloModule m, entry_computation_layout={(f32[4]{0})->f32[]}
add { a = f32[] parameter(0)
 b = f32[] parameter(1)
 ROOT c = f32[] add(a, b) }
ENTRY e {
  x = f32[4] parameter(0), metadata={op_name="x"}
  z = f32[] constant(0)
  n = f32[4] negate(x)
  ROOT r = f32[] reduce(n, z), dimensions={0}, to_apply=add, control-predecessors={z}
})");
  auto c = cloneModule(*m);
  EXPECT_EQ(printModule(*c), printModule(*m));
  verifyModule(*c);
  EXPECT_NE(c->entry(), m->entry());
  EXPECT_EQ(c->entry()->root()->called("to_apply"), c->computations()[0].get());
  EXPECT_EQ(c->entry()->root()->operand(0)->parent(), c->entry());
  EXPECT_EQ(c->entry()->root()->controlPredecessors()[0]->parent(), c->entry());
  m.reset();
  EXPECT_NO_THROW(verifyModule(*c));
}

}  // namespace
}  // namespace tacit::hlo
