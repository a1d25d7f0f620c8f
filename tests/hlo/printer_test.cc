// Canonical printing: exact expected text for representative modules.
#include "hlo/printer.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace tacit::hlo {
namespace {

using testing::canonical;

TEST(HloPrinter, CanonicalModule) {
  std::string text = canonical(R"(
// a comment
region_0.3 {
  Arg_0.4 = f32[] parameter(0)
  Arg_1.5 = f32[] parameter(1)
  ROOT add.6 = f32[] add(f32[] Arg_0.4, Arg_1.5)
}
ENTRY main.8 {
  Arg_0.1 = f32[4,8]{1,0} parameter(0), metadata={op_name="x"}, sharding={replicated}
  constant.2 = f32[] constant(0)
  ROOT reduce.7 = f32[4]{0} reduce(Arg_0.1, constant.2), to_apply=region_0.3, dimensions={1}
}
)");
  EXPECT_EQ(text, R"(HloModule module_main.8

%region_0.3 (Arg_0.4: f32[], Arg_1.5: f32[]) -> f32[] {
  %Arg_0.4 = f32[] parameter(0)
  %Arg_1.5 = f32[] parameter(1)
  ROOT %add.6 = f32[] add(%Arg_0.4, %Arg_1.5)
}

ENTRY %main.8 (Arg_0.1: f32[4,8]) -> f32[4] {
  %Arg_0.1 = f32[4,8]{1,0} parameter(0), sharding={replicated}, metadata={op_name="x"}
  %constant.2 = f32[] constant(0)
  ROOT %reduce.7 = f32[4]{0} reduce(%Arg_0.1, %constant.2), dimensions={1}, to_apply=%region_0.3
}
)");
}

TEST(HloPrinter, HeaderAttributesInXlaOrder) {
  std::string text = canonical(
      "HloModule m, num_partitions=2, frontend_attributes={a=\"b\"}, "
      "entry_computation_layout={(f32[2]{0})->f32[2]{0}}, "
      "is_scheduled=true, input_output_alias={ {}: (0, {}, may-alias) }\nENTRY e {\n  ROOT p = "
      "f32[2] parameter(0)\n}\n");
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "HloModule m, is_scheduled=true, input_output_alias={ {}: (0, {}, may-alias) }, "
            "entry_computation_layout={(f32[2]{0})->f32[2]{0}}, num_partitions=2, "
            "frontend_attributes={a=\"b\"}");
}

TEST(HloPrinter, AttributesInXlaOrder) {
  std::string text = canonical(R"(HloModule m
ENTRY e {
  a = f32[1,4,4,1] parameter(0)
  b = f32[3,3,1,2] parameter(1)
  ROOT c = f32[1,2,4,2] convolution(a, b), metadata={op_name="c"}, operand_precision={high,high}, dim_labels=b01f_01io->b01f, window={size=3x3 stride=2x1 pad=1_1x1_1 rhs_reversal=0x1}, feature_group_count=1, backend_config="cfg", frontend_attributes={k="v"}
})");
  EXPECT_NE(
      text.find(
          "ROOT %c = f32[1,2,4,2] convolution(%a, %b), window={size=3x3 stride=2x1 pad=1_1x1_1 "
          "rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=1, "
          "operand_precision={high,high}, frontend_attributes={k=\"v\"}, metadata={op_name=\"c\"}, "
          "backend_config=\"cfg\""),
      std::string::npos)
      << text;
}

TEST(HloPrinter, SlicePadDotCompare) {
  std::string text = canonical(R"(HloModule m
ENTRY e {
  x = f32[8,6] parameter(0)
  s = f32[4,6] slice(x), slice={[0:8:2], [0:6]}
  p = f32[10,8] pad(x, f32[] constant(0)), padding=1_1x1_1
  q = f32[17,6] pad(x, f32[] constant(0)), padding=1_1_1x0_0
  d = f32[8,8] dot(x, x), rhs_contracting_dims={1}, lhs_contracting_dims={1}
  ROOT c = pred[8,8] compare(d, d), type=FLOAT, direction=NE
})");
  EXPECT_NE(text.find("slice(%x), slice={[0:8:2], [0:6]}"), std::string::npos);
  EXPECT_NE(text.find("padding=1_1x1_1\n"), std::string::npos);
  EXPECT_NE(text.find("padding=1_1_1x0_0_0\n"), std::string::npos);
  EXPECT_NE(text.find("dot(%x, %x), lhs_contracting_dims={1}, rhs_contracting_dims={1}"),
            std::string::npos);
  EXPECT_NE(text.find("compare(%d, %d), direction=NE, type=FLOAT"), std::string::npos);
  EXPECT_NE(text.find("%constant.anon = f32[] constant(0)"), std::string::npos);
  EXPECT_NE(text.find("%constant.anon.1 = f32[] constant(0)"), std::string::npos);
}

TEST(HloPrinter, ModuleNamesThatNeedASigil) {
  std::string text = canonical("HloModule %f32\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  EXPECT_EQ(text.substr(0, text.find('\n')), "HloModule %f32");
}

TEST(HloPrinter, LiteralText) {
  Literal l(Shape(PrimitiveType::kS32, {2, 2}));
  l.setInt64(3, -7);
  EXPECT_EQ(literalText(l), "{ {0, 0}, {0, -7} }");
  EXPECT_EQ(literalText(Literal::unknown(Shape(PrimitiveType::kF32, {100}))), "{...}");
  Literal t = Literal::tuple(
      {Literal(Shape(PrimitiveType::kPred, {})), Literal(Shape(PrimitiveType::kF64, {1}))});
  EXPECT_EQ(literalText(t), "(false, {0})");
  Literal h(Shape(PrimitiveType::kF16, {}));
  h.setDouble(0, 0.1);
  EXPECT_EQ(literalText(h), "0.1");  // the shortest text that reads back to the f16 value
  EXPECT_EQ(windowText({}), "{}");
  EXPECT_EQ(dimLabelsText(ConvDims{0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}}), "b01f_01io->b01f");
}

}  // namespace
}  // namespace tacit::hlo
