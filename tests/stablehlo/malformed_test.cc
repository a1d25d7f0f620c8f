// Malformed StableHLO: each mistake is one DiagnosticError at the right line:col with the expected
// message, never a crash.
#include <gtest/gtest.h>

#include "stablehlo/input.h"

namespace tacit::stablehlo {
namespace {

struct Bad {
  std::string name;
  std::string text;
  uint32_t line, col;
  std::string message;  // a substring of the diagnostic
};

std::string wrap(const std::string& body) {
  return "module @m {\n  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n" + body +
         "\n  }\n}\n";
}

void PrintTo(const Bad& b, std::ostream* os) {
  *os << b.name;
}

class Malformed : public ::testing::TestWithParam<Bad> {};

TEST_P(Malformed, IsOneLocatedDiagnostic) {
  const Bad& b = GetParam();
  try {
    parseStableHlo(b.text, "bad.mlir");
    FAIL() << "accepted:\n" << b.text;
  } catch (const DiagnosticError& e) {
    const Diagnostic& d = e.diagnostic();
    EXPECT_EQ(d.file, "bad.mlir");
    EXPECT_EQ(d.loc.line, b.line) << e.what();
    EXPECT_EQ(d.loc.col, b.col) << e.what();
    EXPECT_NE(d.message.find(b.message), std::string::npos) << e.what();
  }
}

const Bad kBad[] = {
    {"unsupported_op",
     wrap("    %0 = stablehlo.fft %arg0, type = FFT, length = [4] : (tensor<4xf32>) -> "
          "tensor<4xf32>\n    return %0 : tensor<4xf32>"),
     3, 10, "'stablehlo.fft' is not supported; supported ops are stablehlo.abs"},
    {"unsupported_generic_op",
     wrap("    %0 = \"stablehlo.fft\"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>\n    return %0 : "
          "tensor<4xf32>"),
     3, 10, "'stablehlo.fft' is not supported"},
    {"undefined_value",
     wrap("    %0 = stablehlo.add %arg0, %x : tensor<4xf32>\n    return %0 : tensor<4xf32>"), 3, 31,
     "use of undefined value %x"},
    {"type_mismatch",
     wrap("    %0 = stablehlo.add %arg0, %arg0 : tensor<5xf32>\n    return %0 : tensor<4xf32>"), 3,
     24, "%arg0 has type tensor<4xf32> but 'stablehlo.add' declares tensor<5xf32>"},
    {"bad_shape_inference",
     wrap("    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4xf32>) -> tensor<4xf32>\n  "
          "  "
          "return %0 : tensor<4xf32>"),
     3, 10, "'stablehlo.transpose'"},
    {"dynamic_dimension", "module @m {\n  func.func @main(%a: tensor<?xf32>) -> tensor<4xf32> {\n",
     2, 30, "dynamic dimensions are not supported"},
    {"unknown_element_type",
     "module @m {\n  func.func @main(%a: tensor<4xf7>) -> tensor<4xf32> {\n", 2, 32,
     "element type 'f7' is not supported"},
    {"missing_return", wrap("    %0 = stablehlo.abs %arg0 : tensor<4xf32>"), 2, 65,
     "the block does not end with a return"},
    {"dense_shape",
     wrap("    %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<4xf32>\n    return %c : "
          "tensor<4xf32>"),
     3, 29, "the literal's shape [2] does not match its type tensor<4xf32>"},
    {"dense_range",
     "module @m {\n  func.func @main() -> tensor<i8> {\n    %c = stablehlo.constant dense<300> : "
     "tensor<i8>\n    return %c : tensor<i8>\n  }\n}\n",
     3, 35, "value 300 does not fit in s8"},
    {"unterminated_string", "module @m attributes {a = \"x}\n", 1, 27, "unterminated string"},
    {"not_a_module", "HloModule m\n", 1, 1, "expected 'module', 'func.func'"},
    {"missing_colon_type", wrap("    %0 = stablehlo.abs %arg0\n    return %0 : tensor<4xf32>"), 4,
     5, "expected ':' and the type of 'stablehlo.abs'"},
    {"deep_nesting", "module @m attributes {a = " + std::string(150, '[') + "\n", 1, 126,
     "nesting deeper than 100 levels"},
    {"no_entry",
     "module @m {\n  func.func private @a() -> tensor<i32> {\n    %c = stablehlo.constant dense<0> "
     ": "
     "tensor<i32>\n    return %c : tensor<i32>\n  }\n  func.func private @b() -> tensor<i32> {\n   "
     " %c "
     "= stablehlo.constant dense<1> : tensor<i32>\n    return %c : tensor<i32>\n  }\n}\n",
     1, 1, "the module has no entry function"},
    {"recursion",
     "module @m {\n  func.func @main(%a: tensor<i32>) -> tensor<i32> {\n    %0 = call @main(%a) : "
     "(tensor<i32>) -> tensor<i32>\n    return %0 : tensor<i32>\n  }\n}\n",
     3, 15, "recursive call of @main"},
    {"bad_comparison",
     wrap("    %0 = stablehlo.compare  XX, %arg0, %arg0 : (tensor<4xf32>, tensor<4xf32>) -> "
          "tensor<4xi1>\n    return %arg0 : tensor<4xf32>"),
     3, 29, "unknown comparison direction 'XX'"},
    {"bad_layout",
     "module @m {\n  func.func @main(%a: tensor<4xf32> {mhlo.layout_mode = \"{5}\"}) -> "
     "tensor<4xf32> {\n    return %a : tensor<4xf32>\n  }\n}\n",
     2, 57, "bad layout \"{5}\""},
    {"conv_labels",
     "module @m {\n  func.func @main(%a: tensor<1x4x4x2xf32>, %k: tensor<3x3x2x2xf32>) -> "
     "tensor<1x2x2x2xf32> {\n    %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 0, f]x[0, "
     "1, i, o]->[b, 0, 1, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : "
     "i64} : (tensor<1x4x4x2xf32>, tensor<3x3x2x2xf32>) -> tensor<1x2x2x2xf32>\n    return %0 : "
     "tensor<1x2x2x2xf32>\n  }\n}\n",
     3, 61, "bad or repeated dimension label '0'"},
    {"conv_raw_out_of_range",
     "module @m {\n  func.func @main(%a: tensor<1x4x4x2xf32>, %k: tensor<3x3x2x2xf32>) -> "
     "tensor<1x2x2x2xf32> {\n    %0 = \"stablehlo.convolution\"(%a, %k) {dimension_numbers = "
     "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 99, "
     "input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, "
     "kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], "
     "output_batch_dimension "
     "= 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]>} : "
     "(tensor<1x4x4x2xf32>, "
     "tensor<3x3x2x2xf32>) -> tensor<1x2x2x2xf32>\n    return %0 : tensor<1x2x2x2xf32>\n  }\n}\n",
     3, 63, "the input dimension numbers are not a permutation of 0..3"},
};

INSTANTIATE_TEST_SUITE_P(StableHlo, Malformed, ::testing::ValuesIn(kBad),
                         [](const auto& p) { return p.param.name; });

// Truncations of a valid module at every byte: each is a clean diagnostic or (at the very end) a
// module, never a crash.
TEST(MalformedStableHlo, EveryTruncationIsADiagnostic) {
  const std::string text =
      "module @m {\n  func.func public @main(%arg0: tensor<2x3xf32> loc(\"x\")) -> (tensor<3xf32> "
      "{jax.result_info = \"\"}) {\n    %cst = stablehlo.constant dense<[1.0, 2.0, 3.0]> : "
      "tensor<3xf32>\n    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across "
      "dimensions = [0] : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3xf32>\n    return %0 : "
      "tensor<3xf32>\n  }\n}\n";
  for (size_t n = 0; n < text.size(); ++n) {
    try {
      parseStableHlo(text.substr(0, n), "cut.mlir");
    } catch (const DiagnosticError&) {
    }
  }
}

// A chain of calls deeper than the limit is a diagnostic, not a stack overflow.
TEST(MalformedStableHlo, DeepCallChainsAreBounded) {
  std::string text = "module @deep {\n";
  for (int i = 0; i < 3000; ++i) {
    text += "  func.func private @f" + std::to_string(i) + "(%a: tensor<f32>) -> tensor<f32> {\n" +
            "    %0 = call @f" + std::to_string(i + 1) + "(%a) : (tensor<f32>) -> tensor<f32>\n" +
            "    return %0 : tensor<f32>\n  }\n";
  }
  text +=
      "  func.func private @f3000(%a: tensor<f32>) -> tensor<f32> {\n    return %a : tensor<f32>\n "
      " }\n";
  text +=
      "  func.func public @main(%a: tensor<f32>) -> tensor<f32> {\n    %0 = call @f0(%a) : "
      "(tensor<f32>) -> tensor<f32>\n    return %0 : tensor<f32>\n  }\n}\n";
  try {
    parseStableHlo(text, "deep.mlir");
    FAIL() << "accepted";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("calls nested deeper than 100 functions"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tacit::stablehlo
