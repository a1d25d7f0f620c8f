// Each op of the subset, in pretty and in generic form, converts to HLO that evaluates to the same
// bits as its HLO twin on random inputs.
#include <gtest/gtest.h>

#include "hlo/builder.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"
#include "hlo_eval/evaluator.h"
#include "hlo_eval/random_literal.h"
#include "stablehlo/input.h"
#include "stablehlo/printer.h"

namespace tacit::stablehlo {
namespace {

struct Case {
  std::string name;
  std::string hlo;      // the twin, in HLO text
  std::string pretty;   // the body of @main in pretty form
  std::string generic;  // the same in generic form
  std::string signature;
};

std::string module(const Case& c, const std::string& body) {
  return "module @m {\n  func.func public @main" + c.signature + " {\n" + body + "\n  }\n}\n";
}

hlo::Literal run(const hlo::HloModule& m) {
  std::vector<hlo::Literal> args;
  for (const hlo::HloInstruction* p : m.entry()->parameters())
    args.push_back(hlo::randomLiteral(p->shape(), 7 + static_cast<uint64_t>(p->parameterNumber())));
  return hlo::evaluate(m, args);
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

class StableHloOp : public ::testing::TestWithParam<Case> {};

TEST_P(StableHloOp, PrettyAndGenericEvaluateAsTheHloTwin) {
  const Case& c = GetParam();
  auto twin = hlo::parseModule(c.hlo, "twin.hlo");
  hlo::verifyModule(*twin);
  const hlo::Literal expected = run(*twin);
  for (const std::string* body : {&c.pretty, &c.generic}) {
    const std::string text = module(c, *body);
    SCOPED_TRACE(text);
    std::unique_ptr<hlo::HloModule> m;
    try {
      m = parseAnyModule(text, "t.mlir");
    } catch (const DiagnosticError& e) {
      FAIL() << e.what();
    }
    ASSERT_NO_THROW(hlo::verifyModule(*m));
    EXPECT_TRUE(run(*m).bitwiseEqual(expected));
  }
  // The twin written as StableHLO reads back to the same values too.
  const std::string printed = printStableHlo(*twin);
  SCOPED_TRACE(printed);
  auto back = parseAnyModule(printed, "printed.mlir");
  ASSERT_NO_THROW(hlo::verifyModule(*back));
  EXPECT_TRUE(run(*back).bitwiseEqual(expected));
}

const Case kCases[] = {
    {"add",
     "HloModule m\nENTRY e {\n a = f32[4] parameter(0)\n b = f32[4] parameter(1)\n ROOT r = f32[4] "
     "add(a, b)\n}",
     "    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32>\n    return %0 : tensor<4xf32>",
     "    %0 = \"stablehlo.add\"(%arg0, %arg1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
     "    \"func.return\"(%0) : (tensor<4xf32>) -> ()",
     "(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32>"},
    {"unary_chain",
     "HloModule m\nENTRY e {\n a = bf16[2,3] parameter(0)\n n = bf16[2,3] negate(a)\n x = "
     "bf16[2,3] "
     "exponential(n)\n t = bf16[2,3] tanh(x)\n ROOT r = bf16[2,3] sqrt(t)\n}",
     "    %0 = stablehlo.negate %arg0 : tensor<2x3xbf16>\n    %1 = stablehlo.exponential %0 : "
     "tensor<2x3xbf16>\n    %2 = stablehlo.tanh %1 : tensor<2x3xbf16>\n    %3 = stablehlo.sqrt %2 "
     ": "
     "tensor<2x3xbf16>\n    return %3 : tensor<2x3xbf16>",
     "    %0 = \"stablehlo.negate\"(%arg0) : (tensor<2x3xbf16>) -> tensor<2x3xbf16>\n    %1 = "
     "\"stablehlo.exponential\"(%0) : (tensor<2x3xbf16>) -> tensor<2x3xbf16>\n    %2 = "
     "\"stablehlo.tanh\"(%1) : (tensor<2x3xbf16>) -> tensor<2x3xbf16>\n    %3 = "
     "\"stablehlo.sqrt\"(%2) : "
     "(tensor<2x3xbf16>) -> tensor<2x3xbf16>\n    \"func.return\"(%3) : (tensor<2x3xbf16>) -> ()",
     "(%arg0: tensor<2x3xbf16>) -> tensor<2x3xbf16>"},
    {"convert_clamp",
     "HloModule m\nENTRY e {\n a = s32[8] parameter(0)\n lo = s32[] constant(-128)\n hi = s32[] "
     "constant(127)\n c = s32[8] clamp(lo, a, hi)\n ROOT r = s8[8] convert(c)\n}",
     "    %c = stablehlo.constant dense<-128> : tensor<i32>\n    %c_0 = stablehlo.constant "
     "dense<127> : "
     "tensor<i32>\n    %0 = stablehlo.clamp %c, %arg0, %c_0 : (tensor<i32>, tensor<8xi32>, "
     "tensor<i32>) "
     "-> tensor<8xi32>\n    %1 = stablehlo.convert %0 : (tensor<8xi32>) -> tensor<8xi8>\n    "
     "return %1 : "
     "tensor<8xi8>",
     "    %c = \"stablehlo.constant\"() <{value = dense<-128> : tensor<i32>}> : () -> "
     "tensor<i32>\n    "
     "%c_0 = \"stablehlo.constant\"() {value = dense<127> : tensor<i32>} : () -> tensor<i32>\n    "
     "%0 = "
     "\"stablehlo.clamp\"(%c, %arg0, %c_0) : (tensor<i32>, tensor<8xi32>, tensor<i32>) -> "
     "tensor<8xi32>\n    %1 = \"stablehlo.convert\"(%0) : (tensor<8xi32>) -> tensor<8xi8>\n    "
     "\"func.return\"(%1) : (tensor<8xi8>) -> ()",
     "(%arg0: tensor<8xi32>) -> tensor<8xi8>"},
    {"compare_select",
     "HloModule m\nENTRY e {\n a = f32[2,2] parameter(0)\n b = f32[2,2] parameter(1)\n p = "
     "pred[2,2] "
     "compare(a, b), direction=GT, type=FLOAT\n ROOT r = f32[2,2] select(p, a, b)\n}",
     "    %0 = stablehlo.compare  GT, %arg0, %arg1,  FLOAT : (tensor<2x2xf32>, tensor<2x2xf32>) -> "
     "tensor<2x2xi1>\n    %1 = stablehlo.select %0, %arg0, %arg1 : tensor<2x2xi1>, "
     "tensor<2x2xf32>\n    "
     "return %1 : tensor<2x2xf32>",
     "    %0 = \"stablehlo.compare\"(%arg0, %arg1) {compare_type = #stablehlo<comparison_type "
     "FLOAT>, "
     "comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<2x2xf32>, "
     "tensor<2x2xf32>) -> tensor<2x2xi1>\n    %1 = \"stablehlo.select\"(%0, %arg0, %arg1) : "
     "(tensor<2x2xi1>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n    "
     "\"func.return\"(%1) : "
     "(tensor<2x2xf32>) -> ()",
     "(%arg0: tensor<2x2xf32>, %arg1: tensor<2x2xf32>) -> tensor<2x2xf32>"},
    {"select_of_predicates",
     "HloModule m\nENTRY e {\n p = pred[3] parameter(0)\n a = pred[3] parameter(1)\n b = pred[3] "
     "parameter(2)\n ROOT r = pred[3] select(p, a, b)\n}",
     "    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<3xi1>, tensor<3xi1>\n    return %0 : "
     "tensor<3xi1>",
     "    %0 = \"stablehlo.select\"(%arg0, %arg1, %arg2) : (tensor<3xi1>, tensor<3xi1>, "
     "tensor<3xi1>) -> "
     "tensor<3xi1>\n    \"func.return\"(%0) : (tensor<3xi1>) -> ()",
     "(%arg0: tensor<3xi1>, %arg1: tensor<3xi1>, %arg2: tensor<3xi1>) -> tensor<3xi1>"},
    {"broadcast_reshape_transpose",
     "HloModule m\nENTRY e {\n a = f32[3] parameter(0)\n b = f32[2,3] broadcast(a), "
     "dimensions={1}\n "
     "t = f32[3,2] transpose(b), dimensions={1,0}\n ROOT r = f32[6] reshape(t)\n}",
     "    %0 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>\n "
     "   %1 "
     "= stablehlo.transpose %0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n    %2 = "
     "stablehlo.reshape %1 : (tensor<3x2xf32>) -> tensor<6xf32>\n    return %2 : tensor<6xf32>",
     "    %0 = \"stablehlo.broadcast_in_dim\"(%arg0) {broadcast_dimensions = dense<1> : "
     "tensor<1xi64>} "
     ": (tensor<3xf32>) -> tensor<2x3xf32>\n    %1 = \"stablehlo.transpose\"(%0) <{permutation = "
     "array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>\n    %2 = "
     "\"stablehlo.reshape\"(%1) : "
     "(tensor<3x2xf32>) -> tensor<6xf32>\n    \"func.return\"(%2) : (tensor<6xf32>) -> ()",
     "(%arg0: tensor<3xf32>) -> tensor<6xf32>"},
    {"broadcast_expanding_size_one",
     "HloModule m\nENTRY e {\n a = f32[1,3] parameter(0)\n r = f32[3] reshape(a)\n ROOT b = "
     "f32[4,3] "
     "broadcast(r), dimensions={1}\n}",
     "    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<1x3xf32>) -> "
     "tensor<4x3xf32>\n"
     "    return %0 : tensor<4x3xf32>",
     "    %0 = \"stablehlo.broadcast_in_dim\"(%arg0) <{broadcast_dimensions = array<i64: 0, 1>}> : "
     "(tensor<1x3xf32>) -> tensor<4x3xf32>\n    \"func.return\"(%0) : (tensor<4x3xf32>) -> ()",
     "(%arg0: tensor<1x3xf32>) -> tensor<4x3xf32>"},
    {"bitcast_convert_tuple",
     "HloModule m\nENTRY e {\n a = f32[2] parameter(0)\n b = s32[2] bitcast-convert(a)\n t = "
     "(s32[2], "
     "f32[2]) tuple(b, a)\n ROOT g = s32[2] get-tuple-element(t), index=0\n}",
     "    %0 = stablehlo.bitcast_convert %arg0 : (tensor<2xf32>) -> tensor<2xi32>\n    %1 = "
     "stablehlo.tuple %0, %arg0 : tuple<tensor<2xi32>, tensor<2xf32>>\n    %2 = "
     "stablehlo.get_tuple_element %1[0] : (tuple<tensor<2xi32>, tensor<2xf32>>) -> tensor<2xi32>\n "
     "   "
     "return %2 : tensor<2xi32>",
     "    %0 = \"stablehlo.bitcast_convert\"(%arg0) : (tensor<2xf32>) -> tensor<2xi32>\n    %1 = "
     "\"stablehlo.tuple\"(%0, %arg0) : (tensor<2xi32>, tensor<2xf32>) -> tuple<tensor<2xi32>, "
     "tensor<2xf32>>\n    %2 = \"stablehlo.get_tuple_element\"(%1) {index = 0 : i32} : "
     "(tuple<tensor<2xi32>, tensor<2xf32>>) -> tensor<2xi32>\n    \"func.return\"(%2) : "
     "(tensor<2xi32>) -> ()",
     "(%arg0: tensor<2xf32>) -> tensor<2xi32>"},
    {"convolution",
     "HloModule m\nENTRY e {\n a = f32[1,5,5,2] parameter(0)\n k = f32[3,3,2,4] parameter(1)\n "
     "ROOT c = "
     "f32[1,3,3,4] convolution(a, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, "
     "dim_labels=b01f_01io->b01f\n}",
     "    %0 = stablehlo.convolution(%arg0, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, "
     "1, "
     "f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, "
     "1], "
     "reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, "
     "precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : "
     "(tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32>\n    return %0 : "
     "tensor<1x3x3x4xf32>",
     "    %0 = \"stablehlo.convolution\"(%arg0, %arg1) {batch_group_count = 1 : i64, "
     "dimension_numbers = #stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = "
     "3, "
     "input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, "
     "kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], "
     "output_batch_dimension "
     "= 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>, feature_group_count "
     "= 1 "
     ": i64, lhs_dilation = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, rhs_dilation = "
     "array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 2, "
     "2>} : (tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32>\n    "
     "\"func.return\"(%0) : (tensor<1x3x3x4xf32>) -> ()",
     "(%arg0: tensor<1x5x5x2xf32>, %arg1: tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32>"},
    {"concatenate_slice_reverse",
     "HloModule m\nENTRY e {\n a = s32[4,2] parameter(0)\n b = s32[4,3] parameter(1)\n c = "
     "s32[4,5] "
     "concatenate(a, b), dimensions={1}\n s = s32[2,2] slice(c), slice={[1:4:2], [0:5:3]}\n ROOT r "
     "= s32[2,2] reverse(s), dimensions={0}\n}",
     "    %0 = stablehlo.concatenate %arg0, %arg1, dim = 1 : (tensor<4x2xi32>, tensor<4x3xi32>) -> "
     "tensor<4x5xi32>\n    %1 = stablehlo.slice %0 [1:4:2, 0:5:3] : (tensor<4x5xi32>) -> "
     "tensor<2x2xi32>\n    %2 = stablehlo.reverse %1, dims = [0] : tensor<2x2xi32>\n    return %2 "
     ": "
     "tensor<2x2xi32>",
     "    %0 = \"stablehlo.concatenate\"(%arg0, %arg1) {dimension = 1 : i64} : (tensor<4x2xi32>, "
     "tensor<4x3xi32>) -> tensor<4x5xi32>\n    %1 = \"stablehlo.slice\"(%0) {limit_indices = "
     "array<i64: 4, 5>, start_indices = array<i64: 1, 0>, strides = array<i64: 2, 3>} : "
     "(tensor<4x5xi32>) -> tensor<2x2xi32>\n    %2 = \"stablehlo.reverse\"(%1) {dimensions = "
     "array<i64: 0>} : (tensor<2x2xi32>) -> tensor<2x2xi32>\n    \"func.return\"(%2) : "
     "(tensor<2x2xi32>) -> ()",
     "(%arg0: tensor<4x2xi32>, %arg1: tensor<4x3xi32>) -> tensor<2x2xi32>"},
    {"dynamic_slice_update_pad",
     "HloModule m\nENTRY e {\n a = f32[5,4] parameter(0)\n i = s32[] parameter(1)\n j = s32[] "
     "parameter(2)\n d = f32[2,2] dynamic-slice(a, i, j), dynamic_slice_sizes={2,2}\n u = f32[5,4] "
     "dynamic-update-slice(a, d, j, i)\n z = f32[] constant(0.5)\n ROOT p = f32[8,9] pad(u, z), "
     "padding=1_2x0_2_1\n}",
     "    %0 = stablehlo.dynamic_slice %arg0, %arg1, %arg2, sizes = [2, 2] : (tensor<5x4xf32>, "
     "tensor<i32>, tensor<i32>) -> tensor<2x2xf32>\n    %1 = stablehlo.dynamic_update_slice %arg0, "
     "%0, %arg2, %arg1 : (tensor<5x4xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> "
     "tensor<5x4xf32>\n    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>\n    %2 = "
     "stablehlo.pad %1, %cst, low = [1, 0], high = [2, 2], interior = [0, 1] : (tensor<5x4xf32>, "
     "tensor<f32>) -> tensor<8x9xf32>\n    return %2 : tensor<8x9xf32>",
     "    %0 = \"stablehlo.dynamic_slice\"(%arg0, %arg1, %arg2) <{slice_sizes = array<i64: 2, 2>}> "
     ": "
     "(tensor<5x4xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>\n    %1 = "
     "\"stablehlo.dynamic_update_slice\"(%arg0, %0, %arg2, %arg1) : (tensor<5x4xf32>, "
     "tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<5x4xf32>\n    %cst = "
     "\"stablehlo.constant\"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>\n    %2 = "
     "\"stablehlo.pad\"(%1, %cst) {edge_padding_high = dense<[2, 2]> : tensor<2xi64>, "
     "edge_padding_low = dense<[1, 0]> : tensor<2xi64>, interior_padding = dense<[0, 1]> : "
     "tensor<2xi64>} : (tensor<5x4xf32>, tensor<f32>) -> tensor<8x9xf32>\n    "
     "\"func.return\"(%2) : (tensor<8x9xf32>) -> ()",
     "(%arg0: tensor<5x4xf32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<8x9xf32>"},
    {"iota_constants",
     "HloModule m\nENTRY e {\n a = f32[2,3] parameter(0)\n i = s32[2,3] iota(), iota_dimension=1\n "
     "f "
     "= f32[2,3] convert(i)\n c = f32[2,3] constant({{1, -2.5, 3}, {0.125, nan, -inf}})\n s = "
     "f32[2,3] "
     "add(f, c)\n ROOT r = f32[2,3] multiply(s, a)\n}",
     "    %0 = stablehlo.iota dim = 1 : tensor<2x3xi32>\n    %1 = stablehlo.convert %0 : "
     "(tensor<2x3xi32>) -> tensor<2x3xf32>\n    %cst = stablehlo.constant dense<[[1.000000e+00, "
     "-2.500000e+00, 3.000000e+00], [1.250000e-01, 0x7FC00000, 0xFF800000]]> : tensor<2x3xf32>\n   "
     " %2 "
     "= stablehlo.add %1, %cst : tensor<2x3xf32>\n    %3 = stablehlo.multiply %2, %arg0 : "
     "tensor<2x3xf32>\n    return %3 : tensor<2x3xf32>",
     "    %0 = \"stablehlo.iota\"() {iota_dimension = 1 : i64} : () -> tensor<2x3xi32>\n    %1 = "
     "\"stablehlo.convert\"(%0) : (tensor<2x3xi32>) -> tensor<2x3xf32>\n    %cst = "
     "\"stablehlo.constant\"() {value = "
     "dense<\"0x0000803F000020C0000040400000003E0000C07F000080FF\"> : tensor<2x3xf32>} : () -> "
     "tensor<2x3xf32>\n    %2 = \"stablehlo.add\"(%1, %cst) : (tensor<2x3xf32>, tensor<2x3xf32>) "
     "-> "
     "tensor<2x3xf32>\n    %3 = \"stablehlo.multiply\"(%2, %arg0) : (tensor<2x3xf32>, "
     "tensor<2x3xf32>) -> tensor<2x3xf32>\n    \"func.return\"(%3) : (tensor<2x3xf32>) -> ()",
     "(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32>"},
    {"dot_general_batched",
     "HloModule m\nENTRY e {\n a = s8[2,3,4] parameter(0)\n b = s8[2,4,5] parameter(1)\n ROOT r = "
     "s32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
     "rhs_contracting_dims={1}\n}",
     "    %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], contracting_dims = "
     "[2] x "
     "[1], precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xi8>, tensor<2x4x5xi8>) -> "
     "tensor<2x3x5xi32>\n    return %0 : tensor<2x3x5xi32>",
     "    %0 = \"stablehlo.dot_general\"(%arg0, %arg1) {dot_dimension_numbers = "
     "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
     "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = "
     "[#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x3x4xi8>, "
     "tensor<2x4x5xi8>) -> tensor<2x3x5xi32>\n    \"func.return\"(%0) : (tensor<2x3x5xi32>) -> ()",
     "(%arg0: tensor<2x3x4xi8>, %arg1: tensor<2x4x5xi8>) -> tensor<2x3x5xi32>"},
    {"dot_legacy",
     "HloModule m\nENTRY e {\n a = f32[3,4] parameter(0)\n b = f32[4] parameter(1)\n ROOT r = "
     "f32[3] "
     "dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
     "    %0 = stablehlo.dot %arg0, %arg1 : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>\n    "
     "return %0 : tensor<3xf32>",
     "    %0 = \"stablehlo.dot\"(%arg0, %arg1) {precision_config = []} : (tensor<3x4xf32>, "
     "tensor<4xf32>) -> tensor<3xf32>\n    \"func.return\"(%0) : (tensor<3xf32>) -> ()",
     "(%arg0: tensor<3x4xf32>, %arg1: tensor<4xf32>) -> tensor<3xf32>"},
    {"reduce",
     "HloModule m\nmax (x: f32[], y: f32[]) -> f32[] {\n x = f32[] parameter(0)\n y = f32[] "
     "parameter(1)\n ROOT m = f32[] maximum(x, y)\n}\nENTRY e {\n a = f32[4,6] parameter(0)\n c = "
     "f32[] "
     "constant(-inf)\n ROOT r = f32[6] reduce(a, c), dimensions={0}, to_apply=max\n}",
     "    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>\n    %0 = "
     "stablehlo.reduce(%arg0 "
     "init: %cst) across dimensions = [0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<6xf32>\n     "
     "reducer(%a: tensor<f32>, %b: tensor<f32>)  {\n      %1 = stablehlo.maximum %a, %b : "
     "tensor<f32>\n      stablehlo.return %1 : tensor<f32>\n    }\n    return %0 : tensor<6xf32>",
     "    %cst = \"stablehlo.constant\"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> "
     "tensor<f32>\n    %0 = \"stablehlo.reduce\"(%arg0, %cst) <{dimensions = array<i64: 0>}> ({\n  "
     " "
     " ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n      %1 = \"stablehlo.maximum\"(%a, %b) : "
     "(tensor<f32>, tensor<f32>) -> tensor<f32>\n      \"stablehlo.return\"(%1) : (tensor<f32>) -> "
     "()\n "
     "   }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<6xf32>\n    \"func.return\"(%0) : "
     "(tensor<6xf32>) -> ()",
     "(%arg0: tensor<4x6xf32>) -> tensor<6xf32>"},
    {"reduce_window",
     "HloModule m\nadd (x: f32[], y: f32[]) -> f32[] {\n x = f32[] parameter(0)\n y = f32[] "
     "parameter(1)\n ROOT s = f32[] add(x, y)\n}\nENTRY e {\n a = f32[4,5] parameter(0)\n c = "
     "f32[] "
     "constant(0)\n ROOT r = f32[2,3] reduce-window(a, c), window={size=2x3 stride=2x2 pad=0_1x1_1 "
     "rhs_dilate=1x1}, to_apply=add\n}",
     "    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>\n    %0 = "
     "\"stablehlo.reduce_window\"(%arg0, %cst) <{padding = dense<[[0, 1], [1, 1]]> : "
     "tensor<2x2xi64>, "
     "window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>}> ({\n    ^bb0(%x: "
     "tensor<f32>, %y: tensor<f32>):\n      %1 = stablehlo.add %x, %y : tensor<f32>\n      "
     "stablehlo.return %1 : tensor<f32>\n    }) : (tensor<4x5xf32>, tensor<f32>) -> "
     "tensor<2x3xf32>\n"
     "    return %0 : tensor<2x3xf32>",
     "    %cst = \"stablehlo.constant\"() <{value = dense<0.0> : tensor<f32>}> : () -> "
     "tensor<f32>\n    "
     "%0 = \"stablehlo.reduce_window\"(%arg0, %cst) ({\n    ^bb0(%x: tensor<f32>, %y: "
     "tensor<f32>):\n      "
     "%1 = \"stablehlo.add\"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n      "
     "\"stablehlo.return\"(%1) : (tensor<f32>) -> ()\n    }) {base_dilations = array<i64: 1, 1>, "
     "padding = dense<[[0, 1], [1, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, "
     "window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>} : "
     "(tensor<4x5xf32>, tensor<f32>) -> tensor<2x3xf32>\n    \"func.return\"(%0) : "
     "(tensor<2x3xf32>) "
     "-> ()",
     "(%arg0: tensor<4x5xf32>) -> tensor<2x3xf32>"},
    {"reduce_applies",
     "HloModule m\nadd (x: s32[], y: s32[]) -> s32[] {\n x = s32[] parameter(0)\n y = s32[] "
     "parameter(1)\n ROOT s = s32[] add(x, y)\n}\nENTRY e {\n a = s32[4,6] parameter(0)\n c = "
     "s32[] "
     "constant(0)\n ROOT r = s32[] reduce(a, c), dimensions={0,1}, to_apply=add\n}",
     "    %c = stablehlo.constant dense<0> : tensor<i32>\n    %0 = stablehlo.reduce(%arg0 init: "
     "%c) "
     "applies stablehlo.add across dimensions = [0, 1] : (tensor<4x6xi32>, tensor<i32>) -> "
     "tensor<i32>\n    return %0 : tensor<i32>",
     "    %c = \"stablehlo.constant\"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>\n   "
     " %0 "
     "= \"stablehlo.reduce\"(%arg0, %c) ({\n    ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n      %1 "
     "= "
     "\"stablehlo.add\"(%x, %y) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n      "
     "\"stablehlo.return\"(%1) : (tensor<i32>) -> ()\n    }) {dimensions = dense<[0, 1]> : "
     "tensor<2xi64>} : (tensor<4x6xi32>, tensor<i32>) -> tensor<i32>\n    \"func.return\"(%0) : "
     "(tensor<i32>) -> ()",
     "(%arg0: tensor<4x6xi32>) -> tensor<i32>"},
    {"variadic_reduce_tuple",
     "HloModule m\nr (a: f32[], b: s32[], c: f32[], d: s32[]) -> (f32[], s32[]) {\n a = f32[] "
     "parameter(0)\n b = s32[] parameter(1)\n c = f32[] parameter(2)\n d = s32[] parameter(3)\n m "
     "= f32[] "
     "maximum(a, c)\n n = s32[] add(b, d)\n ROOT t = (f32[], s32[]) tuple(m, n)\n}\nENTRY e {\n x "
     "= "
     "f32[8] parameter(0)\n y = s32[8] parameter(1)\n i = f32[] constant(0)\n j = s32[] "
     "constant(0)\n "
     "q = (f32[], s32[]) reduce(x, y, i, j), dimensions={0}, to_apply=r\n g0 = f32[] "
     "get-tuple-element(q), index=0\n g1 = s32[] get-tuple-element(q), index=1\n ROOT o = (s32[], "
     "f32[]) tuple(g1, g0)\n}",
     "    %cst = stablehlo.constant dense<0.0> : tensor<f32>\n    %c = stablehlo.constant dense<0> "
     ": "
     "tensor<i32>\n    %0:2 = stablehlo.reduce(%arg0 init: %cst), (%arg1 init: %c) across "
     "dimensions "
     "= [0] : (tensor<8xf32>, tensor<8xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, "
     "tensor<i32>)\n "
     "    reducer(%a: tensor<f32>, %c2: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>)  {\n      "
     "%1 = "
     "stablehlo.maximum %a, %c2 : tensor<f32>\n      %2 = stablehlo.add %b, %d : tensor<i32>\n     "
     " "
     "stablehlo.return %1, %2 : tensor<f32>, tensor<i32>\n    }\n    return %0#1, %0#0 : "
     "tensor<i32>, "
     "tensor<f32>",
     "    %cst = \"stablehlo.constant\"() <{value = dense<0.0> : tensor<f32>}> : () -> "
     "tensor<f32>\n    "
     "%c = \"stablehlo.constant\"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>\n    "
     "%0:2 = "
     "\"stablehlo.reduce\"(%arg0, %arg1, %cst, %c) <{dimensions = array<i64: 0>}> ({\n    ^bb0(%a: "
     "tensor<f32>, %b: tensor<i32>, %c2: tensor<f32>, %d: tensor<i32>):\n      %1 = "
     "\"stablehlo.maximum\"(%a, %c2) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n      %2 = "
     "\"stablehlo.add\"(%b, %d) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n      "
     "\"stablehlo.return\"(%1, %2) : (tensor<f32>, tensor<i32>) -> ()\n    }) : (tensor<8xf32>, "
     "tensor<8xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)\n    "
     "\"func.return\"(%0#1, %0#0) : (tensor<i32>, tensor<f32>) -> ()",
     "(%arg0: tensor<8xf32>, %arg1: tensor<8xi32>) -> (tensor<i32>, tensor<f32>)"},
    {"while_two_values",
     "HloModule m\ncond (t: (s32[], f32[4])) -> pred[] {\n t = (s32[], f32[4]) parameter(0)\n i = "
     "s32[] "
     "get-tuple-element(t), index=0\n n = s32[] constant(3)\n ROOT c = pred[] compare(i, n), "
     "direction=LT\n}\nbody (t: (s32[], f32[4])) -> (s32[], f32[4]) {\n t = (s32[], f32[4]) "
     "parameter(0)\n i = s32[] get-tuple-element(t), index=0\n x = f32[4] get-tuple-element(t), "
     "index=1\n one = s32[] constant(1)\n j = s32[] add(i, one)\n y = f32[4] multiply(x, x)\n ROOT "
     "r "
     "= (s32[], f32[4]) tuple(j, y)\n}\nENTRY e {\n a = f32[4] parameter(0)\n z = s32[] "
     "constant(0)\n "
     "t = (s32[], f32[4]) tuple(z, a)\n w = (s32[], f32[4]) while(t), condition=cond, body=body\n "
     "ROOT o = f32[4] get-tuple-element(w), index=1\n}",
     "    %c = stablehlo.constant dense<0> : tensor<i32>\n    %0:2 = stablehlo.while(%iterArg = "
     "%c, "
     "%iterArg_0 = %arg0) : tensor<i32>, tensor<4xf32>\n     cond {\n      %c_1 = "
     "stablehlo.constant "
     "dense<3> : tensor<i32>\n      %1 = stablehlo.compare  LT, %iterArg, %c_1,  SIGNED : "
     "(tensor<i32>, tensor<i32>) -> tensor<i1>\n      stablehlo.return %1 : tensor<i1>\n    } do "
     "{\n  "
     "    %c_1 = stablehlo.constant dense<1> : tensor<i32>\n      %1 = stablehlo.add %iterArg, "
     "%c_1 : "
     "tensor<i32>\n      %2 = stablehlo.multiply %iterArg_0, %iterArg_0 : tensor<4xf32>\n      "
     "stablehlo.return %1, %2 : tensor<i32>, tensor<4xf32>\n    }\n    return %0#1 : tensor<4xf32>",
     "    %c = \"stablehlo.constant\"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>\n   "
     " "
     "%0:2 = \"stablehlo.while\"(%c, %arg0) ({\n    ^bb0(%i: tensor<i32>, %x: tensor<4xf32>):\n    "
     "  "
     "%n = \"stablehlo.constant\"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>\n      "
     "%1 "
     "= \"stablehlo.compare\"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} "
     ": "
     "(tensor<i32>, tensor<i32>) -> tensor<i1>\n      \"stablehlo.return\"(%1) : (tensor<i1>) -> "
     "()\n    }, {\n    ^bb0(%i: tensor<i32>, %x: tensor<4xf32>):\n      %one = "
     "\"stablehlo.constant\"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>\n      %1 = "
     "\"stablehlo.add\"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>\n      %2 = "
     "\"stablehlo.multiply\"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n      "
     "\"stablehlo.return\"(%1, %2) : (tensor<i32>, tensor<4xf32>) -> ()\n    }) : (tensor<i32>, "
     "tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)\n    \"func.return\"(%0#1) : (tensor<4xf32>) "
     "-> "
     "()",
     "(%arg0: tensor<4xf32>) -> tensor<4xf32>"},
    {"sort_two_operands_and_barrier",
     "HloModule m\ncmp (a: f32[], b: f32[], c: s32[], d: s32[]) -> pred[] {\n a = f32[] "
     "parameter(0)\n b "
     "= f32[] parameter(1)\n c = s32[] parameter(2)\n d = s32[] parameter(3)\n ROOT lt = pred[] "
     "compare(a, b), direction=LT\n}\nENTRY e {\n k = f32[8] parameter(0)\n v = s32[8] "
     "parameter(1)\n "
     "t = (f32[8], s32[8]) tuple(k, v)\n o = (f32[8], s32[8]) opt-barrier(t)\n k2 = f32[8] "
     "get-tuple-element(o), index=0\n v2 = s32[8] get-tuple-element(o), index=1\n s = (f32[8], "
     "s32[8]) "
     "sort(k2, v2), dimensions={0}, is_stable=true, to_apply=cmp\n ROOT r = s32[8] "
     "get-tuple-element(s), index=1\n}",
     "    %0:2 = stablehlo.optimization_barrier %arg0, %arg1 : tensor<8xf32>, tensor<8xi32>\n    "
     "%1:2 = "
     "\"stablehlo.sort\"(%0#0, %0#1) <{dimension = 0 : i64, is_stable = true}> ({\n    ^bb0(%a: "
     "tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):\n      %2 = "
     "stablehlo.compare  "
     "LT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n      stablehlo.return %2 : "
     "tensor<i1>\n    }) : (tensor<8xf32>, tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>)\n    "
     "return %1#1 : tensor<8xi32>",
     "    %0:2 = \"stablehlo.optimization_barrier\"(%arg0, %arg1) : (tensor<8xf32>, tensor<8xi32>) "
     "-> "
     "(tensor<8xf32>, tensor<8xi32>)\n    %1:2 = \"stablehlo.sort\"(%0#0, %0#1) ({\n    ^bb0(%a: "
     "tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):\n      %2 = "
     "\"stablehlo.compare\"(%a, %b) {comparison_direction = #stablehlo<comparison_direction LT>} : "
     "(tensor<f32>, tensor<f32>) -> tensor<i1>\n      \"stablehlo.return\"(%2) : (tensor<i1>) -> "
     "()\n "
     "   }) {dimension = 0 : i64, is_stable = true} : (tensor<8xf32>, tensor<8xi32>) -> "
     "(tensor<8xf32>, tensor<8xi32>)\n    \"func.return\"(%1#1) : (tensor<8xi32>) -> ()",
     "(%arg0: tensor<8xf32>, %arg1: tensor<8xi32>) -> tensor<8xi32>"},
    {"chlo_erf", "HloModule m\nENTRY e {\n a = f32[6] parameter(0)\n ROOT r = f32[6] erf(a)\n}",
     "    %0 = chlo.erf %arg0 : tensor<6xf32> -> tensor<6xf32>\n    return %0 : tensor<6xf32>",
     "    %0 = \"chlo.erf\"(%arg0) : (tensor<6xf32>) -> tensor<6xf32>\n    \"func.return\"(%0) : "
     "(tensor<6xf32>) -> ()",
     "(%arg0: tensor<6xf32>) -> tensor<6xf32>"},
    {"call_is_finite",
     "HloModule m\nf (x: f32[3]) -> pred[3] {\n x = f32[3] parameter(0)\n ROOT r = pred[3] "
     "is-finite(x)\n}\nENTRY e {\n a = f32[3] parameter(0)\n ROOT c = pred[3] call(a), "
     "to_apply=f\n}",
     "    %0 = call @f(%arg0) : (tensor<3xf32>) -> tensor<3xi1>\n    return %0 : tensor<3xi1>\n  "
     "}\n  "
     "func.func private @f(%x: tensor<3xf32>) -> tensor<3xi1> {\n    %0 = stablehlo.is_finite %x : "
     "(tensor<3xf32>) -> tensor<3xi1>\n    return %0 : tensor<3xi1>",
     "    %0 = \"func.call\"(%arg0) <{callee = @f}> : (tensor<3xf32>) -> tensor<3xi1>\n    "
     "\"func.return\"(%0) : (tensor<3xi1>) -> ()\n  }\n  func.func private @f(%x: tensor<3xf32>) "
     "-> "
     "tensor<3xi1> {\n    %0 = \"stablehlo.is_finite\"(%x) : (tensor<3xf32>) -> tensor<3xi1>\n    "
     "\"func.return\"(%0) : (tensor<3xi1>) -> ()",
     "(%arg0: tensor<3xf32>) -> tensor<3xi1>"},
};

INSTANTIATE_TEST_SUITE_P(Ops, StableHloOp, ::testing::ValuesIn(kCases),
                         [](const auto& p) { return p.param.name; });

TEST(StableHloInput, GenericModuleAndFunctionHeaders) {
  const std::string text =
      "\"builtin.module\"() <{sym_name = \"jit_f\"}> ({\n"
      "  \"func.func\"() <{function_type = (tensor<2xf32>) -> tensor<2xf32>, res_attrs = "
      "[{jax.result_info = \"out\"}], sym_name = \"main\", sym_visibility = \"public\"}> ({\n"
      "  ^bb0(%arg0: tensor<2xf32>):\n"
      "    %0 = \"stablehlo.abs\"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n"
      "    \"func.return\"(%0) : (tensor<2xf32>) -> ()\n"
      "  }) : () -> ()\n"
      "}) {mhlo.num_partitions = 1 : i32} : () -> ()\n";
  ASSERT_TRUE(isStableHlo(text));
  auto m = parseAnyModule(text, "g.txt");
  EXPECT_EQ(m->name(), "jit_f");
  EXPECT_EQ(m->entry()->root()->name(), "out");  // jax.result_info names the result
  EXPECT_EQ(m->entry()->root()->opcode(), hlo::HloOpcode::kAbs);
}

TEST(StableHloInput, DetectionByFirstTokenOrExtension) {
  EXPECT_TRUE(isStableHlo("// c\nmodule @m {\n}"));
  EXPECT_TRUE(isStableHlo("func.func @main() {}"));
  EXPECT_TRUE(isStableHlo("#loc = loc(unknown)\nmodule {}"));
  EXPECT_TRUE(isStableHlo("anything", "k.mlir"));
  EXPECT_FALSE(isStableHlo("HloModule m\nENTRY e {}"));
  EXPECT_FALSE(isStableHlo("ENTRY e {}", "k.hlo"));
  EXPECT_FALSE(isStableHlo("modules"));
}

TEST(StableHloInput, NameLocationsNameParametersAndCustomCallsKeepTheirTarget) {
  auto m = parseAnyModule(
      "module @m {\n  func.func public @main(%arg0: tensor<4xf32> loc(#loc1)) -> tensor<4xf32> {\n"
      "    %0 = stablehlo.custom_call @my_op(%arg0) {backend_config = \"cfg\", has_side_effect = "
      "true} "
      ": (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n#loc1 = "
      "loc(\"x\")\n",
      "c.mlir");
  EXPECT_EQ(m->entry()->parameter(0)->name(), "x");
  const hlo::HloInstruction* call = m->entry()->root();
  ASSERT_EQ(call->opcode(), hlo::HloOpcode::kCustomCall);
  ASSERT_NE(call->raw("custom_call_target"), nullptr);
  EXPECT_EQ(call->raw("custom_call_target")->value, "\"my_op\"");
  EXPECT_EQ(call->raw("backend_config")->value, "\"cfg\"");
}

// reduce_precision is not evaluated by tacit: its attributes are checked, in both forms, and it
// prints back to its pretty form.
TEST(StableHloInput, ReducePrecisionKeepsItsFormat) {
  for (const std::string op : {"stablehlo.reduce_precision %arg0, format = e5m10 : tensor<4xf32>",
                               "\"stablehlo.reduce_precision\"(%arg0) {exponent_bits = 5 : i32, "
                               "mantissa_bits = 10 : i32} : "
                               "(tensor<4xf32>) -> tensor<4xf32>"}) {
    auto m = parseAnyModule(
        "module @m {\n  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    %0 = " + op +
            "\n    return %0 : tensor<4xf32>\n  }\n}\n",
        "p.mlir");
    const hlo::HloInstruction* r = m->entry()->root();
    ASSERT_EQ(r->opcode(), hlo::HloOpcode::kReducePrecision);
    EXPECT_EQ(r->attrs().exponent_bits, 5);
    EXPECT_EQ(r->attrs().mantissa_bits, 10);
    EXPECT_NE(
        printStableHlo(*m).find("stablehlo.reduce_precision %arg0, format = e5m10 : tensor<4xf32>"),
        std::string::npos);
  }
}

// A constant of one value above the splat limit is written as raw bytes, and reads back.
TEST(StableHloInput, LargeConstantOfOneValueRoundTrips) {
  hlo::HloModule m("big");
  hlo::HloBuilder b("main");
  hlo::Literal zeros(hlo::Shape(hlo::PrimitiveType::kS8, {hlo::kMaxSplatElements + 1}));
  b.constant(zeros);
  b.addTo(m, /*entry=*/true);
  const std::string text = printStableHlo(m);
  EXPECT_NE(text.find("dense<\"0x0000"), std::string::npos);
  auto back = parseStableHlo(text, "big.mlir");
  ASSERT_TRUE(back->entry()->root()->literal().has_value());
  EXPECT_TRUE(back->entry()->root()->literal()->bitwiseEqual(zeros));
}

}  // namespace
}  // namespace tacit::stablehlo
