// Grammar features of the HLO text parser (docs/hlo.md), one test per feature.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "hlo/float8.h"
#include "support/strings.h"
#include "test_util.h"

namespace tacit::hlo {
namespace {

using testing::canonical;
using testing::parse;

const HloInstruction& inst(const HloModule& m, std::string_view name) {
  for (const auto& c : m.computations()) {
    if (HloInstruction* i = c->findInstruction(name)) return *i;
  }
  throw std::runtime_error("no instruction " + std::string(name));
}

const RawAttribute* raw(const HloInstruction& i, std::string_view name) {
  return i.raw(name);
}

TEST(HloParser, ShortFormWithHeaderAndLayouts) {
  auto m = parse(R"(HloModule jit_f, entry_computation_layout={(f32[4,8]{1,0})->f32[4]{0}}
region_0.3 {
  Arg_0.4 = f32[] parameter(0)
  Arg_1.5 = f32[] parameter(1)
  ROOT add.6 = f32[] add(Arg_0.4, Arg_1.5)
}
ENTRY main.8 {
  Arg_0.1 = f32[4,8]{1,0} parameter(0)
  constant.2 = f32[] constant(0)
  ROOT reduce.7 = f32[4]{0} reduce(Arg_0.1, constant.2), dimensions={1}, to_apply=region_0.3
})");
  EXPECT_EQ(m->name(), "jit_f");
  ASSERT_EQ(m->computations().size(), 2u);
  EXPECT_EQ(m->entry()->name(), "main.8");
  ASSERT_TRUE(m->entryLayout());
  EXPECT_EQ(m->entryLayout()->parameters[0].str(), "f32[4,8]{1,0}");
  const HloInstruction& r = inst(*m, "reduce.7");
  EXPECT_TRUE(r.isRoot());
  EXPECT_EQ(r.called("to_apply")->name(), "region_0.3");
  EXPECT_EQ(r.attrs().dimensions, (std::vector<int64_t>{1}));
  EXPECT_EQ(r.loc().line, 10u);
  EXPECT_EQ(r.loc().col, 8u);
  EXPECT_EQ(m->entry()->loc().line, 7u);
  verifyModule(*m);
}

TEST(HloParser, OldLongFormTypedOperandsAndColonHeader) {
  auto m = parse(R"(HloModule convolution.167:

ENTRY %convolution.167 (parameter.0: f32[1,4,4,2], parameter.1: f32[3,3,2,2]) -> f32[1,4,4,2] {
  %parameter.0 = f32[1,4,4,2]{3,0,2,1} parameter(0)
  %parameter.1 = f32[3,3,2,2]{3,2,1,0} parameter(1)
  ROOT %c = f32[1,4,4,2]{3,0,2,1} convolution(f32[1,4,4,2]{3,0,2,1} %parameter.0, f32[3,3,2,2]{3,2,1,0} %parameter.1), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  EXPECT_EQ(m->name(), "convolution.167");
  const HloInstruction& c = inst(*m, "c");
  ASSERT_TRUE(c.attrs().window);
  EXPECT_EQ(c.attrs().window->size(), 2u);
  EXPECT_EQ((*c.attrs().window)[0].pad_lo, 1);
  EXPECT_EQ(c.attrs().conv_dims->input_feature, 3);
  EXPECT_EQ(c.attrs().conv_dims->kernel_output_feature, 3);
  EXPECT_EQ(c.shape().layout()->minor_to_major, (std::vector<int64_t>{3, 0, 2, 1}));
  verifyModule(*m);
}

TEST(HloParser, HeaderlessModuleIsNamedAfterEntryAndLastIsEntry) {
  auto m = parse("a {\n  x = f32[] parameter(0)\n}\nb {\n  y = s32[] parameter(0)\n}\n");
  EXPECT_EQ(m->entry()->name(), "b");
  EXPECT_EQ(m->name(), "module_b");
}

TEST(HloParser, HeaderlessComputationWithSignatureIsAModule) {
  auto m = parse(
      "%fused (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n  ROOT %n = f32[] negate(%p)\n}\n");
  EXPECT_EQ(m->entry()->name(), "fused");
}

TEST(HloParser, EntryFirstAndMixedSigils) {
  auto m = parse(
      "HloModule m\nENTRY %e {\n  %x = f32[2] parameter(0)\n  ROOT y = f32[2] abs(%x)\n}\nother "
      "{\n  z = f32[] parameter(0)\n}\n");
  EXPECT_EQ(m->entry()->name(), "e");
  EXPECT_EQ(inst(*m, "y").operand(0)->name(), "x");
}

TEST(HloParser, NestedAnonymousInstructionsGetUniqueNames) {
  auto m = parse(R"(HloModule m
ENTRY e {
  d = f32[8] parameter(0)
  constant.anon = f32[] constant(7)
  ROOT s = f32[2] dynamic-slice(d, s32[] constant(3)), dynamic_slice_sizes={2}
})");
  const HloInstruction& s = inst(*m, "s");
  EXPECT_EQ(s.operand(1)->opcode(), HloOpcode::kConstant);
  EXPECT_EQ(s.operand(1)->name(), "constant.anon.1");
  EXPECT_EQ(s.operand(1)->literal()->getInt64(0), 3);
  verifyModule(*m);
  canonical(printModule(*m));
}

TEST(HloParser, TaidlTraceStyleTabsAndReducerWithoutSpace) {
  auto m = parse(
      "HloModule t\nadd_bf16{\n\t%a = bf16[] parameter(0)\n\t%b = bf16[] parameter(1)\n\tROOT %c = "
      "bf16[] add(%a, %b)\n}\n"
      "ENTRY main {\n\t%x = bf16[4,4] parameter(0)\n\t%z = bf16[] constant(0)\n"
      "\tROOT %r = bf16[4] reduce(%x, %z), dimensions={1}, to_apply=add_bf16\n}\n");
  verifyModule(*m);
}

TEST(HloParser, InlineComputationAttribute) {
  auto m = parse(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply={
    a = f32[] parameter(0)
    b = f32[] parameter(1)
    ROOT s = f32[] add(a, b)
  }
})");
  ASSERT_EQ(m->computations().size(), 2u);
  EXPECT_EQ(m->computations()[0]->name(), "_");
  EXPECT_EQ(inst(*m, "r").called("to_apply"), m->computations()[0].get());
  verifyModule(*m);
  canonical(printModule(*m));
}

TEST(HloParser, OmittedResultShapesAreInferred) {
  auto m = parse(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,4] parameter(1)
  d = dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = transpose(d), dimensions={1,0}
  c = compare(t, t), direction=LT
  ROOT tu = tuple(c, t)
})");
  EXPECT_EQ(inst(*m, "d").shape().str(), "f32[2,4]");
  EXPECT_EQ(inst(*m, "t").shape().str(), "f32[4,2]");
  EXPECT_EQ(inst(*m, "c").shape().str(), "pred[4,2]");
  EXPECT_EQ(inst(*m, "tu").shape().str(), "(pred[4,2], f32[4,2])");
}

TEST(HloParser, EveryTypedAttributeForm) {
  auto m = parse(R"(HloModule m
ENTRY e {
  x = f32[8,6] parameter(0)
  i = s32[] parameter(1)
  s = f32[4,2] slice(x), slice={[0:8:2], [1:5:2]}
  p = f32[12,17] pad(x, f32[] constant(0)), padding=1_3x0_1_2
  ds = f32[2,2] dynamic-slice(x, i, i), dynamic_slice_sizes={2,2}
  io = s32[3,4] iota(), iota_dimension=1
  g = s32[] get-tuple-element((s32[], f32[]) tuple(i, f32[] constant(1))), index=0
  rp = f32[8,6] reduce-precision(x), exponent_bits=5, mantissa_bits=10
  cmp = pred[8,6] compare(x, x), direction=GE, type=TOTALORDER
  ROOT st = f32[8,6] sort(x), dimensions={1}, is_stable=true, to_apply={
    a = f32[] parameter(0)
    b = f32[] parameter(1)
    ROOT lt = pred[] compare(a, b), direction=LT
  }
})");
  EXPECT_EQ(inst(*m, "s").attrs().slice->at(0), (SliceDim{0, 8, 2}));
  EXPECT_EQ(inst(*m, "p").attrs().padding->at(1), (PadDim{0, 1, 2}));
  EXPECT_EQ(inst(*m, "p").attrs().padding->at(0), (PadDim{1, 3, 0}));
  EXPECT_EQ(inst(*m, "ds").attrs().dynamic_slice_sizes, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(inst(*m, "io").attrs().iota_dimension, 1);
  EXPECT_EQ(inst(*m, "g").attrs().index, 0);
  EXPECT_EQ(inst(*m, "rp").attrs().exponent_bits, 5);
  EXPECT_EQ(inst(*m, "cmp").attrs().direction, ComparisonDirection::kGe);
  EXPECT_EQ(inst(*m, "cmp").attrs().comparison_type, ComparisonType::kTotalOrder);
  EXPECT_EQ(inst(*m, "st").attrs().is_stable, true);
  verifyModule(*m);
}

TEST(HloParser, WindowSubAttributesAnyOrderAndOneDimensional) {
  auto m = parse(R"(HloModule m
add { a = f32[] parameter(0)
 b = f32[] parameter(1)
 ROOT c = f32[] add(a, b) }
ENTRY e {
  x = f32[10] parameter(0)
  z = f32[] constant(0)
  r1 = f32[5] reduce-window(x, z), window={stride=2 size=2}, to_apply=add
  y = f32[4,6] parameter(1)
  ROOT r2 = f32[3,6] reduce-window(y, z), window={size=2x3 pad=0_0x2_1 lhs_dilate=1x2 rhs_dilate=1x1 stride=1x2 rhs_reversal=0x1}, to_apply=add
})");
  const auto& w1 = *inst(*m, "r1").attrs().window;
  ASSERT_EQ(w1.size(), 1u);
  EXPECT_EQ(w1[0].size, 2);
  EXPECT_EQ(w1[0].stride, 2);
  const auto& w2 = *inst(*m, "r2").attrs().window;
  EXPECT_EQ(w2[1].pad_lo, 2);
  EXPECT_EQ(w2[1].lhs_dilation, 2);
  EXPECT_TRUE(w2[1].reversal);
  EXPECT_FALSE(w2[0].reversal);
  verifyModule(*m);
}

TEST(HloParser, DotDimensionsAndMixedResultType) {
  auto m = parse(R"(HloModule m
ENTRY e {
  a = s8[2,3,4] parameter(0)
  b = s8[2,4,5] parameter(1)
  ROOT d = s32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}, operand_precision={highest,default}
})");
  const DotDims& dd = *inst(*m, "d").attrs().dot_dims;
  EXPECT_EQ(dd.lhs_batch, (std::vector<int64_t>{0}));
  EXPECT_EQ(dd.rhs_contracting, (std::vector<int64_t>{1}));
  EXPECT_EQ(raw(inst(*m, "d"), "operand_precision")->value, "{highest,default}");
  verifyModule(*m);
}

TEST(HloParser, CalledComputationListsAndConditional) {
  auto m = parse(R"(HloModule m
b0 { p = f32[] parameter(0)
 ROOT n = f32[] negate(p) }
b1 { p = f32[] parameter(0)
 ROOT n = f32[] abs(p) }
ENTRY e {
  i = s32[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(i, x, x), branch_computations={b0, %b1}
})");
  const HloInstruction& c = inst(*m, "c");
  EXPECT_EQ(c.called("branch_computations", 1)->name(), "b1");
  EXPECT_TRUE(c.attrs().called[0].is_list);
  verifyModule(*m);
}

TEST(HloParser, WhileLoop) {
  auto m = parse(R"(HloModule m
cond { s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(10)), direction=LT }
body { s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[] get-tuple-element(s), index=1
  ROOT t = (s32[], f32[]) tuple(s32[] add(i, s32[] constant(1)), x) }
ENTRY e {
  init = (s32[], f32[]) parameter(0)
  ROOT w = (s32[], f32[]) while(init), condition=cond, body=body
})");
  verifyModule(*m);
}

TEST(HloParser, ControlPredecessorsAndExecutionThread) {
  auto m = parse(R"(HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] negate(a)
  ROOT c = f32[] abs(a), control-predecessors={b}
}, execution_thread="main")");
  EXPECT_EQ(inst(*m, "c").controlPredecessors()[0]->name(), "b");
  EXPECT_EQ(m->entry()->executionThread(), "main");
  std::string text = canonical(printModule(*m));
  EXPECT_NE(text.find("control-predecessors={%b}"), std::string::npos);
  EXPECT_NE(text.find("}, execution_thread=\"main\""), std::string::npos);
}

TEST(HloParser, QuotedStringsReadBackExactly) {
  // Every byte, written with support's quote (C escapes), reads back; so does the printer's text.
  std::string every;
  for (int c = 0; c < 256; ++c)
    every += static_cast<char>(c);
  auto m = parse("HloModule m\nENTRY e {\n  ROOT a = f32[] parameter(0)\n}, execution_thread=" +
                 quote(every));
  EXPECT_EQ(m->entry()->executionThread(), every);
  EXPECT_EQ(parse(printModule(*m))->entry()->executionThread(), every);
}

TEST(HloParser, RawAttributesKeepCanonicalText) {
  auto m = parse(
      R"(HloModule m, is_scheduled=true, replica_count=2, frontend_attributes={a="1", b={"k": [1, 2]}}, allow_spmd_sharding_propagation_to_output={true}
ENTRY e {
  x = f32[4] parameter(0), sharding={devices=[2,1]0,1}, parameter_replication={false}
  y = f32[4] custom-call(x), custom_call_target="foo",
      backend_config={"x":  {"y": "a  b"}},
      metadata={op_type="Add"   op_name="a/b" /* c */ source_file="f.py" source_line=3},
      api_version=API_VERSION_STATUS_RETURNING
  ROOT z = f32[4] add(x, y), sharding={{replicated}, {maximal device=1}}, statistics={visualizing_index=1,stat-1=33}, origin={{"a"}}, frontend_attributes={}
})");
  const HloInstruction& y = inst(*m, "y");
  EXPECT_EQ(raw(y, "custom_call_target")->value, "\"foo\"");
  EXPECT_EQ(raw(y, "backend_config")->value, R"({"x": {"y": "a  b"}})");
  EXPECT_EQ(raw(y, "metadata")->value,
            R"({op_type="Add" op_name="a/b" source_file="f.py" source_line=3})");
  EXPECT_EQ(raw(y, "api_version")->value, "API_VERSION_STATUS_RETURNING");
  EXPECT_EQ(raw(inst(*m, "x"), "sharding")->value, "{devices=[2,1]0,1}");
  EXPECT_EQ(raw(inst(*m, "z"), "statistics")->value, "{visualizing_index=1,stat-1=33}");
  ASSERT_EQ(m->headerAttributes().size(), 4u);
  EXPECT_EQ(m->headerAttributes()[2].value, R"({a="1",b={"k": [1, 2]}})");
  verifyModule(*m);
  canonical(printModule(*m));
}

TEST(HloParser, ShardingForms) {
  const char* shardings[] = {"{replicated}",
                             "{maximal device=0}",
                             "{devices=[4,1,2]<=[8] last_tile_dim_replicate}",
                             "{devices=[2,2]<=[2,2]T(1,0) last_tile_dims={manual}}",
                             "{{replicated}, {manual}}",
                             "{}",
                             "{unknown shard_as 1}",
                             "{devices=[2]0,1 metadata={op_name=\"a\"}}"};
  for (const char* s : shardings) {
    std::string text =
        "HloModule m\nENTRY e {\n  ROOT x = f32[] parameter(0), sharding=" + std::string(s) +
        "\n}\n";
    auto m = parse(text);
    EXPECT_EQ(m->entry()->root()->raw("sharding")->value, s);
  }
}

TEST(HloParser, ReplicaGroupsIncludingIotaForm) {
  const char* groups[] = {"{}", "{{0,1},{2,3}}", "[2,4]<=[8]", "[2,2]<=[2,2]T(1,0)"};
  for (const char* g : groups) {
    std::string text =
        "HloModule m\nadd { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] "
        "add(a, b) }\n"
        "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(x), replica_groups=" +
        std::string(g) + ", to_apply=add\n}\n";
    auto m = parse(text);
    EXPECT_EQ(m->entry()->root()->raw("replica_groups")->value, g);
    verifyModule(*m);
  }
}

TEST(HloParser, LayoutExtrasTilesAndTail) {
  Shape s = parseShape("f32[128,2,64]{0,2,1:T(8,128)(2,1)L(4)#(s32)*(u32)E(16)S(5)M(8)}");
  ASSERT_TRUE(s.layout());
  EXPECT_EQ(s.layout()->tiles.size(), 2u);
  EXPECT_EQ(s.layout()->tiles[0].dims, (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(s.layout()->tail, "L(4)#(s32)*(u32)E(16)S(5)M(8)");
  EXPECT_EQ(s.str(), "f32[128,2,64]{0,2,1:T(8,128)(2,1)L(4)#(s32)*(u32)E(16)S(5)M(8)}");
  Shape d = parseShape("f32[4,4]{1,0:D(D,C+~)T(2,*)SC(0:1,2)}");
  EXPECT_EQ(d.layout()->dim_level_types, "D(D,C+~)");
  EXPECT_EQ(d.layout()->tiles[0].dims, (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(d.str(), "f32[4,4]{1,0:D(D,C+~)T(2,*)SC(0:1,2)}");
  Shape scalar = parseShape("s32[]{:T(128)}");
  EXPECT_EQ(scalar.layout()->tiles.size(), 1u);
  Shape sparse = parseShape("f32[4]{0:D(C)P(f32[4]{0})}");
  EXPECT_EQ(sparse.layout()->tail, "P(f32[4]{0})");
}

TEST(HloParser, ShapesTuplesTokensAndDynamicDims) {
  EXPECT_EQ(parseShape("(f32[], (s32[2], pred[]))").tupleShapes()[1].tupleShapes()[0].dims(),
            (std::vector<int64_t>{2}));
  EXPECT_TRUE(parseShape("()").isTuple());
  EXPECT_TRUE(parseShape("token[]").isToken());
  Shape dyn = parseShape("f32[<=4,?,3]");
  EXPECT_TRUE(dyn.isDynamicDim(0));
  EXPECT_EQ(dyn.dim(0), 4);
  EXPECT_EQ(dyn.dim(1), -1);
  EXPECT_FALSE(dyn.isDynamicDim(2));
  EXPECT_EQ(dyn.str(), "f32[<=4,?,3]");
  EXPECT_EQ(parseShape("f32[10, 20, 30]").str(), "f32[10,20,30]");
  EXPECT_EQ(parseShape("opaque_type[]").elementType(), PrimitiveType::kOpaque);
}

TEST(HloParser, EveryElementTypeName) {
  const char* names[] = {"pred",
                         "s1",
                         "s2",
                         "s4",
                         "s8",
                         "s16",
                         "s32",
                         "s64",
                         "u1",
                         "u2",
                         "u4",
                         "u8",
                         "u16",
                         "u32",
                         "u64",
                         "f16",
                         "bf16",
                         "f32",
                         "f64",
                         "f8e5m2",
                         "f8e4m3",
                         "f8e4m3fn",
                         "f8e4m3b11fnuz",
                         "f8e3m4",
                         "f8e5m2fnuz",
                         "f8e4m3fnuz",
                         "f8e8m0fnu",
                         "f4e2m1fn",
                         "c64",
                         "c128"};
  for (const char* n : names) {
    Shape s = parseShape(std::string(n) + "[2]");
    EXPECT_EQ(primitiveTypeName(s.elementType()), n);
  }
}

Literal lit(const std::string& text, const std::string& shape) {
  return parseLiteral(text, parseShape(shape));
}

TEST(HloParser, LiteralForms) {
  EXPECT_EQ(literalText(lit("{0, 1, 2}", "s32[3]")), "{0, 1, 2}");
  EXPECT_EQ(literalText(lit("{ {0, 1}, {1, 0} }", "pred[2,2]")), "{ {0, 1}, {1, 0} }");
  EXPECT_EQ(literalText(lit("{true, false}", "pred[2]")), "{1, 0}");
  EXPECT_EQ(literalText(lit("true", "pred[]")), "true");
  EXPECT_EQ(literalText(lit("-inf", "f32[]")), "-inf");
  EXPECT_EQ(literalText(lit("{nan, -nan, inf, 1e-05, 0.1, -2.366e+38}", "f32[6]")),
            "{nan, -nan, inf, 1e-05, 0.1, -2.366e+38}");
  EXPECT_EQ(literalText(lit("nan(0x7f)", "f32[]")), "nan(0x7f)");
  EXPECT_EQ(literalText(lit("-nan(0x1)", "bf16[]")), "-nan(0x1)");
  EXPECT_EQ(literalText(lit("(( { {1}, {2} }, {2, 42} ))", "((f32[2,1], f32[2]))")),
            "(({ {1}, {2} }, {2, 42}))");
  EXPECT_EQ(literalText(lit("{(1, 2), (-inf, nan)}", "c64[2]")), "{(1, 2), (-inf, nan)}");
  EXPECT_EQ(literalText(lit("(1.5, -2)", "c128[]")), "(1.5, -2)");
  EXPECT_EQ(literalText(lit("{...}", "f32[1024,1024]")), "{...}");
  EXPECT_TRUE(lit("{...}", "f32[1024,1024]").isUnknown());
  EXPECT_EQ(literalText(lit("{18446744073709551615, 0}", "u64[2]")), "{18446744073709551615, 0}");
  EXPECT_EQ(literalText(lit("{-9223372036854775808}", "s64[1]")), "{-9223372036854775808}");
  EXPECT_EQ(literalText(lit("{-8, 7}", "s4[2]")), "{-8, 7}");
  EXPECT_EQ(literalText(lit("{15}", "u4[1]")), "{15}");
  EXPECT_EQ(literalText(lit("{}", "f32[0]")), "{}");
  EXPECT_EQ(literalText(lit("{ {}, {} }", "f32[2,0]")), "{ {}, {} }");
  EXPECT_EQ(literalText(lit("0.5", "f32[3]")), "{0.5, 0.5, 0.5}");  // scalar splat, as XLA accepts
  EXPECT_EQ(literalText(lit("2", "f16[0]")), "{}");                 // found by fuzzing: no storage
  EXPECT_THROW(lit("1e9", "f16[0]"), DiagnosticError);
  EXPECT_EQ(literalText(lit("{500, 0.1}", "bf16[2]")), "{500, 0.1}");
  EXPECT_EQ(literalText(lit("{65504, 6e-08}", "f16[2]")), "{65504, 6e-08}");
}

TEST(HloParser, LiteralsRoundTripBitExactly) {
  Literal f = lit("{0.1, 3.4028235e+38, 1.4e-45, -0, 123456789}", "f32[5]");
  Literal g = parseLiteral(literalText(f), f.shape());
  EXPECT_TRUE(f.bitwiseEqual(g));
  Literal d = lit("{0.1, 1.7976931348623157e+308, 5e-324}", "f64[3]");
  EXPECT_TRUE(d.bitwiseEqual(parseLiteral(literalText(d), d.shape())));
  EXPECT_EQ(d.data<double>()[2], 5e-324);
}

TEST(HloParser, Float8LiteralsAreBitExact) {
  Literal a = lit("{448, -448, 0.001953125, nan, 1.5}", "f8e4m3fn[5]");  // 0.002 reads back as 2^-9
  EXPECT_EQ(a.bytes()[0], 0x7e);
  EXPECT_EQ(a.bytes()[1], 0xfe);
  EXPECT_EQ(a.bytes()[2], 0x01);
  EXPECT_EQ(a.bytes()[3], 0x7f);
  EXPECT_EQ(literalText(a), "{448, -448, 0.002, nan, 1.5}");
  Literal e5 = lit("{inf, -inf, 57344, nan}", "f8e5m2[4]");
  EXPECT_EQ(literalText(e5), "{inf, -inf, 57344, nan}");
  Literal f4 = lit("{6, -0.5, 0}", "f4e2m1fn[3]");
  EXPECT_EQ(f4.bytes()[0], 0x7);
  EXPECT_EQ(literalText(f4), "{6, -0.5, 0}");
  Literal e8 = lit("{1, 0.5, nan}", "f8e8m0fnu[3]");
  EXPECT_EQ(e8.bytes()[0], 127);
  EXPECT_EQ(literalText(e8), "{1, 0.5, nan}");
}

TEST(HloParser, CommentsAreSkippedEverywhere) {
  auto m = parse(
      "// RUN: x\n/* block\n comment */ HloModule m // tail\nENTRY e { /*i0=0*/ x = f32[2] /* c */ "
      "parameter(0)\n"
      "  ROOT c = f32[2] constant({ /*i0=0*/ 1, /*i0=1*/ 2 }) // CHECK: x\n}\n");
  EXPECT_EQ(m->entry()->root()->literal()->getDouble(1), 2.0);
}

TEST(HloParser, UnknownOpcodesAreKeptAndParsedGenerically) {
  auto m = parse(R"(HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT y = f32[4] my-new-op(x), fancy_attr={a b [1,2]}, dims=[2]<=[2], dimensions={0}, metadata={op_name="q"}
})");
  const HloInstruction& y = *m->entry()->root();
  EXPECT_EQ(y.opcode(), HloOpcode::kUnknown);
  EXPECT_EQ(y.opcodeSpelling(), "my-new-op");
  EXPECT_EQ(y.raw("fancy_attr")->value, "{a b [1,2]}");
  EXPECT_EQ(y.raw("dims")->value, "[2]<=[2]");
  EXPECT_EQ(y.raw("dimensions")->value, "{0}");
  canonical(printModule(*m));
}

TEST(HloParser, UnspecifiedApiVersionIsAcceptedWithAWarning) {
  DiagnosticSink sink;
  auto m = parseModule(
      "HloModule m\nENTRY e {\n  ROOT c = f32[] custom-call(), custom_call_target=\"x\", "
      "api_version=API_VERSION_UNSPECIFIED\n}\n",
      "t.hlo", &sink);
  ASSERT_EQ(sink.all().size(), 1u);
  EXPECT_EQ(sink.all()[0].severity, Severity::kWarning);
  EXPECT_EQ(sink.all()[0].loc, (SourceLoc{3, 57}));
  EXPECT_NO_THROW(verifyModule(*m));
}

TEST(HloParser, SingleInstructionMode) {
  auto m = parse("add = f32[10] add(f32[10] x, f32[10])");
  const HloComputation& c = *m->entry();
  ASSERT_EQ(c.instructionCount(), 3);
  EXPECT_EQ(c.parameter(0)->name(), "x");
  EXPECT_EQ(c.parameter(1)->name(), "p1");
  EXPECT_EQ(c.root()->name(), "add");
  EXPECT_EQ(m->name(), "module_add");
  verifyModule(*m);
  canonical(printModule(*m));
  auto unnamed = parse("ROOT f32[2,3] transpose(f32[3,2] a), dimensions={1,0}");
  EXPECT_EQ(unnamed->entry()->root()->name(), "transpose.anon");
  verifyModule(*unnamed);
  EXPECT_NE(testing::diagnosticOf("y = f32[2] negate(x)").message.find("operand 'x' is undefined"),
            std::string::npos);
  EXPECT_NE(testing::diagnosticOf("y = f32[2] negate(f32[2] x) junk").message.find("end of input"),
            std::string::npos);
}

TEST(HloParser, GenericValuesEndAtWhitespace) {
  // A generic attribute value is a run of adjacent tokens: the next line's `ROOT` is not part of
  // it.
  auto m = parse(
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  z = f32[2] my-op(p), a={0}, "
      "b=[2]<=[2]\n"
      "  ROOT r = f32[2] negate(z)\n}\n");
  EXPECT_EQ(m->entry()->root()->name(), "r");
  EXPECT_EQ(m->entry()->findInstruction("z")->raw("b")->value, "[2]<=[2]");
}

TEST(HloParser, LitStyleSplitKeepsLineNumbers) {
  std::string text =
      "HloModule a\nENTRY e {\n  ROOT x = f32[] parameter(0)\n}\n// -----\nHloModule b\nENTRY e "
      "{\n  ROOT x = f32[] bogus\n}\n";
  std::vector<InputPart> parts = splitInputFile(text);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].first_line, 6u);
  try {
    parseModules(text, "t.hlo");
    FAIL();
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostic().loc.line, 9u);  // the '}' where '(' was expected after `bogus`
  }
  EXPECT_EQ(splitInputFile("no separators").size(), 1u);
}

TEST(HloParser, ConstantBroadcastAndKeywordNamesWithSigil) {
  auto m = parse(
      "HloModule m\nENTRY e {\n  %s1 = f32[] parameter(0)\n  %ROOT = f32[] negate(%s1)\n  ROOT "
      "%true = f32[] abs(%ROOT)\n}\n");
  EXPECT_EQ(m->entry()->root()->name(), "true");
  std::string text = canonical(printModule(*m));
  EXPECT_NE(text.find("ROOT %true = f32[] abs(%ROOT)"), std::string::npos);
}

TEST(HloParser, CustomCallLiteralAndShapesAttributes) {
  auto m = parse(R"(HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  t = token[] after-all()
  o = token[] outfeed(a, t), outfeed_shape=f32[2,3]{0,1}, outfeed_config="x"
  ROOT c = f32[2,3] custom-call(a), custom_call_target="SetBound", literal=s32[] 1, operand_layout_constraints={f32[2,3]{1,0}}
})");
  EXPECT_EQ(m->entry()->root()->raw("literal")->value, "s32[] 1");
  verifyModule(*m);
}

TEST(HloParser, ParseShapeAndLiteralHelpersRejectTrailingText) {
  EXPECT_THROW(parseShape("f32[2] x"), DiagnosticError);
  EXPECT_THROW(parseLiteral("{1, 2} 3", parseShape("f32[2]")), DiagnosticError);
}

}  // namespace
}  // namespace tacit::hlo
