// The numerics rules of docs/numerics.md, one test per rule, with hand-derived expected values.
#include <gtest/gtest.h>

#include <limits>

#include "eval_test_util.h"

namespace tacit::hlo {
namespace {

using testing::bits;
using testing::eval;
using testing::lit;
using testing::rawOf;

Literal run(const std::string& body, const std::vector<Literal>& args = {}) {
  return eval("HloModule m\nENTRY e {\n" + body + "\n}\n", args);
}

Literal unary(const std::string& op, const Literal& x, const std::string& out_type) {
  std::string in = x.shape().shortStr();
  std::string out = out_type + in.substr(in.find('['));
  return run("p = " + in + " parameter(0)\nROOT r = " + out + " " + op + "(p)", {x});
}

Literal binary(const std::string& op, const Literal& a, const Literal& b) {
  std::string s = a.shape().shortStr();
  return run(
      "a = " + s + " parameter(0)\nb = " + s + " parameter(1)\nROOT r = " + s + " " + op + "(a, b)",
      {a, b});
}

// ---- rounding to bf16 / f16 -----------------------------------------------------------------

TEST(Numerics, Bf16AddRoundsTiesToEven) {
  // 1 + 2^-8 lies halfway between 1 and 1 + 2^-7: ties to the even mantissa (1.0);
  // (1 + 2^-7) + 2^-8 lies halfway between mantissas 1 and 2: rounds up to 1 + 2^-6.
  Literal r =
      binary("add", lit("bf16[2]", "{1, 1.0078125}"), lit("bf16[2]", "{0.00390625, 0.00390625}"));
  EXPECT_LITERAL(r, lit("bf16[2]", "{1, 1.015625}"));
}

TEST(Numerics, ConvertF32ToBf16TiesToEven) {
  Literal x =
      bits<uint32_t>(PrimitiveType::kF32, {4}, {0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF});
  // tie down to even, tie up to even, above the tie rounds up, the largest float overflows to inf.
  EXPECT_EQ(rawOf<uint16_t>(unary("convert", x, "bf16")),
            (std::vector<uint16_t>{0x3F80, 0x3F82, 0x3F81, 0x7F80}));
}

TEST(Numerics, Bf16OpsRoundOncePerOperation) {
  // (1 + 2^-8) + 2^-8 in bf16: each add rounds to 1, so the chain gives 1 (f32 would give 1 +
  // 2^-7).
  EXPECT_LITERAL(run(R"(a = bf16[] constant(1)
b = bf16[] constant(0.00390625)
s = bf16[] add(a, b)
ROOT t = bf16[] add(s, b))"),
                 lit("bf16[]", "1"));
  // One operation is computed in f32 and rounded once: 1/3 -> 0x3EAB (0.333984375).
  EXPECT_EQ(rawOf<uint16_t>(binary("divide", lit("bf16[1]", "{1}"), lit("bf16[1]", "{3}"))),
            (std::vector<uint16_t>{0x3EAB}));
}

TEST(Numerics, F16OverflowAndSubnormalRounding) {
  // 65504 + 16 = 65520 is halfway between 65504 (odd mantissa) and 65536: ties to even -> inf.
  EXPECT_EQ(rawOf<uint16_t>(binary("add", lit("f16[1]", "{65504}"), lit("f16[1]", "{16}"))),
            (std::vector<uint16_t>{0x7C00}));
  // Half of the smallest subnormal (2^-25) ties to even: 0.
  EXPECT_EQ(rawOf<uint16_t>(binary("multiply", bits<uint16_t>(PrimitiveType::kF16, {1}, {0x0001}),
                                   lit("f16[1]", "{0.5}"))),
            (std::vector<uint16_t>{0x0000}));
}

// ---- conversions -----------------------------------------------------------------------------

TEST(Numerics, FloatToIntTruncatesSaturatesAndMapsNanToZero) {
  EXPECT_LITERAL(
      unary("convert", lit("f32[7]", "{3e9, -3e9, nan, inf, -inf, 2147483520, -2.9}"), "s32"),
      lit("s32[7]", "{2147483647, -2147483648, 0, 2147483647, -2147483648, 2147483520, -2}"));
  EXPECT_LITERAL(unary("convert", lit("f32[5]", "{-1, 300, nan, 255.9, -0.5}"), "u8"),
                 lit("u8[5]", "{0, 255, 0, 255, 0}"));
  EXPECT_LITERAL(unary("convert", lit("bf16[2]", "{127.5, -200}"), "s8"),
                 lit("s8[2]", "{127, -128}"));
  EXPECT_LITERAL(unary("convert", lit("f64[2]", "{1e300, -1e300}"), "s64"),
                 lit("s64[2]", "{9223372036854775807, -9223372036854775808}"));
}

TEST(Numerics, IntToIntTruncatesBits) {
  EXPECT_LITERAL(unary("convert", lit("s32[3]", "{300, -129, 65537}"), "s8"),
                 lit("s8[3]", "{44, 127, 1}"));
  EXPECT_LITERAL(unary("convert", lit("s8[2]", "{-1, 5}"), "u32"),
                 lit("u32[2]", "{4294967295, 5}"));
  EXPECT_LITERAL(unary("convert", lit("u8[2]", "{255, 128}"), "s8"), lit("s8[2]", "{-1, -128}"));
}

TEST(Numerics, IntToFloatRoundsToNearestEven) {
  // 2^24 + 1 ties between 2^24 and 2^24 + 2: even mantissa (2^24); 2^24 + 3 ties up to 2^24 + 4.
  EXPECT_LITERAL(unary("convert", lit("s32[2]", "{16777217, 16777219}"), "f32"),
                 lit("f32[2]", "{16777216, 16777220}"));
}

TEST(Numerics, ConversionToBf16GoesThroughF32) {
  // 2^24 + 2^16 + 1 rounds (in f32) to 2^24 + 2^16, which is a bf16 tie that goes to 2^24;
  // rounding once would give 2^24 + 2^17. XLA's emitter converts to f32 first.
  EXPECT_LITERAL(unary("convert", lit("s32[1]", "{16842753}"), "bf16"),
                 lit("bf16[1]", "{16777216}"));
  EXPECT_LITERAL(unary("convert", lit("f64[1]", "{16842753}"), "bf16"),
                 lit("bf16[1]", "{16777216}"));
}

TEST(Numerics, F64ToF16RoundsOnce) {
  // 1 + 2^-11 + 2^-30 is just above the f16 midpoint 1 + 2^-11: one rounding gives 1 + 2^-10
  // (0x3C01); going through f32 would first drop 2^-30 and then tie to even (1.0).
  Literal x = bits<uint64_t>(PrimitiveType::kF64, {1}, {0x3FF0020000400000ull});
  EXPECT_EQ(rawOf<uint16_t>(unary("convert", x, "f16")), (std::vector<uint16_t>{0x3C01}));
}

TEST(Numerics, PredIsZeroOrOne) {
  EXPECT_LITERAL(unary("convert", lit("s32[3]", "{0, 5, -1}"), "pred"),
                 lit("pred[3]", "{0, 1, 1}"));
  EXPECT_LITERAL(unary("convert", lit("f32[3]", "{nan, -0.0, 0.5}"), "pred"),
                 lit("pred[3]", "{1, 0, 1}"));
  EXPECT_LITERAL(unary("convert", lit("pred[2]", "{0, 1}"), "f32"), lit("f32[2]", "{0, 1}"));
  // pred maximum/minimum are or/and (add and multiply on pred are rejected by shape inference).
  EXPECT_LITERAL(binary("maximum", lit("pred[3]", "{1, 0, 0}"), lit("pred[3]", "{0, 1, 0}")),
                 lit("pred[3]", "{1, 1, 0}"));
  EXPECT_LITERAL(binary("minimum", lit("pred[3]", "{1, 1, 0}"), lit("pred[3]", "{0, 1, 0}")),
                 lit("pred[3]", "{0, 1, 0}"));
}

TEST(Numerics, BitcastConvertIsLittleEndian) {
  // 0x3F800000 (1.0f) is stored 00 00 80 3F: the u16 halves are 0x0000, then 0x3F80.
  EXPECT_LITERAL(
      run("p = f32[1] parameter(0)\nROOT r = u16[1,2] bitcast-convert(p)", {lit("f32[1]", "{1}")}),
      lit("u16[1,2]", "{{0, 16256}}"));
}

// ---- integer arithmetic ------------------------------------------------------------------------

TEST(Numerics, IntegerArithmeticWraps) {
  EXPECT_LITERAL(binary("add", lit("s32[1]", "{2147483647}"), lit("s32[1]", "{1}")),
                 lit("s32[1]", "{-2147483648}"));
  EXPECT_LITERAL(binary("multiply", lit("s8[2]", "{16, -128}"), lit("s8[2]", "{16, -1}")),
                 lit("s8[2]", "{0, -128}"));
  EXPECT_LITERAL(binary("subtract", lit("u8[1]", "{0}"), lit("u8[1]", "{1}")),
                 lit("u8[1]", "{255}"));
  EXPECT_LITERAL(binary("multiply", lit("u16[1]", "{65535}"), lit("u16[1]", "{65535}")),
                 lit("u16[1]", "{1}"));
  EXPECT_LITERAL(unary("negate", lit("s32[1]", "{-2147483648}"), "s32"),
                 lit("s32[1]", "{-2147483648}"));
  EXPECT_LITERAL(unary("abs", lit("s8[2]", "{-128, -5}"), "s8"), lit("s8[2]", "{-128, 5}"));
}

TEST(Numerics, IntegerDivisionByZeroAndOverflow) {
  // XLA (elemental_ir_emitter.cc): x / 0 = -1 (all ones), INT_MIN / -1 = INT_MIN,
  // x % 0 = x, INT_MIN % -1 = 0.
  Literal a = lit("s32[3]", "{7, -2147483648, -7}"), b = lit("s32[3]", "{0, -1, 0}");
  EXPECT_LITERAL(binary("divide", a, b), lit("s32[3]", "{-1, -2147483648, -1}"));
  EXPECT_LITERAL(binary("remainder", a, b), lit("s32[3]", "{7, 0, -7}"));
  EXPECT_LITERAL(binary("divide", lit("u32[1]", "{7}"), lit("u32[1]", "{0}")),
                 lit("u32[1]", "{4294967295}"));
  EXPECT_LITERAL(binary("remainder", lit("u8[1]", "{7}"), lit("u8[1]", "{0}")),
                 lit("u8[1]", "{7}"));
}

TEST(Numerics, ShiftsByAtLeastTheBitWidth) {
  Literal amounts = lit("s32[4]", "{31, 32, 33, -1}");
  EXPECT_LITERAL(binary("shift-left", lit("s32[4]", "{1, 1, 1, 1}"), amounts),
                 lit("s32[4]", "{-2147483648, 0, 0, 0}"));
  EXPECT_LITERAL(binary("shift-right-logical", lit("s32[4]", "{-1, -1, -1, -1}"), amounts),
                 lit("s32[4]", "{1, 0, 0, 0}"));
  EXPECT_LITERAL(binary("shift-right-arithmetic", lit("s32[4]", "{-8, -8, 8, -8}"), amounts),
                 lit("s32[4]", "{-1, -1, 0, -1}"));
  // On unsigned types the arithmetic shift fills with the top bit.
  EXPECT_LITERAL(
      binary("shift-right-arithmetic", lit("u8[2]", "{128, 128}"), lit("u8[2]", "{1, 9}")),
      lit("u8[2]", "{192, 255}"));
}

TEST(Numerics, IntegerPowerFollowsXla) {
  // Negative exponents: 1 for base 1, else 0 (even for -1); squaring covers the low 6 exponent
  // bits only, so 3^64 gives 3^0 = 1; results wrap.
  EXPECT_LITERAL(
      binary("power", lit("s32[5]", "{-1, 1, 2, 3, 2}"), lit("s32[5]", "{-1, -5, -1, 64, 31}")),
      lit("s32[5]", "{0, 1, 0, 1, -2147483648}"));
}

// ---- floating-point comparisons, maximum/minimum, sign -----------------------------------------

TEST(Numerics, CompareFloatNanRules) {
  Literal a = lit("f32[3]", "{nan, nan, 1}"), b = lit("f32[3]", "{nan, 1, nan}");
  auto cmp = [&](const char* dir) {
    return run(std::string("a = f32[3] parameter(0)\nb = f32[3] parameter(1)\nROOT c = pred[3] "
                           "compare(a, b), direction=") +
                   dir,
               {a, b});
  };
  EXPECT_LITERAL(cmp("EQ"), lit("pred[3]", "{0, 0, 0}"));
  EXPECT_LITERAL(cmp("NE"), lit("pred[3]", "{1, 1, 1}"));
  EXPECT_LITERAL(cmp("LT"), lit("pred[3]", "{0, 0, 0}"));
  EXPECT_LITERAL(cmp("GE"), lit("pred[3]", "{0, 0, 0}"));
}

TEST(Numerics, CompareTotalOrder) {
  // -NaN < -inf < -1 < -0 < +0 < 1 < inf < +NaN: each element is LT the next.
  Literal a = bits<uint32_t>(
      PrimitiveType::kF32, {7},
      {0xFFC00000, 0xFF800000, 0xBF800000, 0x80000000, 0x00000000, 0x3F800000, 0x7F800000});
  Literal b = bits<uint32_t>(
      PrimitiveType::kF32, {7},
      {0xFF800000, 0xBF800000, 0x80000000, 0x00000000, 0x3F800000, 0x7F800000, 0x7FC00000});
  std::string body =
      "a = f32[7] parameter(0)\nb = f32[7] parameter(1)\nROOT c = pred[7] compare(a, b), "
      "direction=";
  EXPECT_LITERAL(run(body + "LT, type=TOTALORDER", {a, b}),
                 lit("pred[7]", "{1, 1, 1, 1, 1, 1, 1}"));
  EXPECT_LITERAL(run(body + "LT", {a, b}), lit("pred[7]", "{0, 1, 1, 0, 1, 1, 0}"));
  // -0 and +0 are equal as FLOAT, distinct in TOTALORDER; equal NaNs are equal in TOTALORDER.
  Literal z = bits<uint32_t>(PrimitiveType::kF32, {2}, {0x80000000, 0x7FC00000});
  Literal w = bits<uint32_t>(PrimitiveType::kF32, {2}, {0x00000000, 0x7FC00000});
  std::string b2 =
      "a = f32[2] parameter(0)\nb = f32[2] parameter(1)\nROOT c = pred[2] compare(a, b), "
      "direction=EQ";
  EXPECT_LITERAL(run(b2, {z, w}), lit("pred[2]", "{1, 0}"));
  EXPECT_LITERAL(run(b2 + ", type=TOTALORDER", {z, w}), lit("pred[2]", "{0, 1}"));
}

TEST(Numerics, MaximumMinimumPropagateNanAndOrderZeros) {
  Literal a =
      bits<uint32_t>(PrimitiveType::kF32, {4}, {0x7FC00001, 0x3F800000, 0x80000000, 0x00000000});
  Literal b =
      bits<uint32_t>(PrimitiveType::kF32, {4}, {0x3F800000, 0x7FC00002, 0x00000000, 0x80000000});
  // NaN wins (the NaN operand, quiet); max(-0, +0) = +0 and min(-0, +0) = -0 in either order.
  EXPECT_EQ(rawOf<uint32_t>(binary("maximum", a, b)),
            (std::vector<uint32_t>{0x7FC00001, 0x7FC00002, 0, 0}));
  EXPECT_EQ(rawOf<uint32_t>(binary("minimum", a, b)),
            (std::vector<uint32_t>{0x7FC00001, 0x7FC00002, 0x80000000, 0x80000000}));
  // clamp(lo, x, hi) = minimum(hi, maximum(lo, x)): a NaN operand gives NaN.
  EXPECT_TRUE(
      std::isnan(run("lo = f32[] constant(0)\nx = f32[] constant(nan)\nhi = f32[] constant(1)\n"
                     "ROOT c = f32[] clamp(lo, x, hi)")
                     .getDouble(0)));
}

TEST(Numerics, SignOfZeroAndNan) {
  Literal x =
      bits<uint32_t>(PrimitiveType::kF32, {4}, {0x80000000, 0x00000000, 0x7FC00005, 0xC0000000});
  EXPECT_EQ(rawOf<uint32_t>(unary("sign", x, "f32")),
            (std::vector<uint32_t>{0x80000000, 0, 0x7FC00005, 0xBF800000}));
}

TEST(Numerics, TranscendentalsUseLibmInF32) {
  // exp(1) correctly rounded in f32 is 0x402DF854; in bf16 (f32 result rounded once) 0x402E.
  EXPECT_EQ(rawOf<uint32_t>(unary("exponential", lit("f32[1]", "{1}"), "f32")),
            (std::vector<uint32_t>{0x402DF854}));
  EXPECT_EQ(rawOf<uint16_t>(unary("exponential", lit("bf16[1]", "{1}"), "bf16")),
            (std::vector<uint16_t>{0x402E}));
  // f64 computes in double: exp(1) = 0x4005BF0A8B145769.
  EXPECT_EQ(rawOf<uint64_t>(unary("exponential", lit("f64[1]", "{1}"), "f64")),
            (std::vector<uint64_t>{0x4005BF0A8B145769ull}));
}

// ---- contractions ------------------------------------------------------------------------------

TEST(Numerics, F32DotIsSequentialWithoutFma) {
  // ((0 + 1e8*1) + 1*1) + (-1e8)*1: 1e8 + 1 rounds back to 1e8 (ulp 8), so the result is 0.
  EXPECT_LITERAL(run(R"(a = f32[3] parameter(0)
b = f32[3] parameter(1)
ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
                     {lit("f32[3]", "{1e8, 1, -1e8}"), lit("f32[3]", "{1, 1, 1}")}),
                 lit("f32[]", "0"));
  // a*b = 1 + 2^-11 + 2^-24 rounds (tie to even) to 1 + 2^-11 before the add; an FMA would keep
  // 2^-24 and return it.
  Literal a = bits<uint32_t>(PrimitiveType::kF32, {2}, {0x3F800800, 0x3F800000});  // 1 + 2^-12, 1
  Literal b = bits<uint32_t>(PrimitiveType::kF32, {2},
                             {0x3F800800, 0xBF801000});  // 1 + 2^-12, -(1 + 2^-11)
  EXPECT_EQ(rawOf<uint32_t>(run(R"(a = f32[2] parameter(0)
b = f32[2] parameter(1)
ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
                                {a, b})),
            (std::vector<uint32_t>{0}));
}

TEST(Numerics, F32DotSumsFromPositiveZero) {
  // (-0)*1 + (-0)*1 starting from +0 gives +0 (a sum starting from the first product would be -0).
  Literal a = bits<uint32_t>(PrimitiveType::kF32, {1, 2}, {0x80000000, 0x80000000});
  EXPECT_EQ(rawOf<uint32_t>(run(R"(a = f32[1,2] parameter(0)
b = f32[2,1] parameter(1)
ROOT d = f32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})",
                                {a, lit("f32[2,1]", "{{1}, {1}}")})),
            (std::vector<uint32_t>{0}));
}

TEST(Numerics, Bf16DotAccumulatesInF32) {
  // 1 + 2^-8 + 2^-8 = 1 + 2^-7 exactly in f32 (bf16 accumulation would stay at 1).
  EXPECT_LITERAL(run(R"(a = bf16[3] parameter(0)
b = bf16[3] parameter(1)
ROOT d = bf16[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
                     {lit("bf16[3]", "{1, 0.00390625, 0.00390625}"), lit("bf16[3]", "{1, 1, 1}")}),
                 lit("bf16[]", "1.0078125"));
  // bf16 x bf16 -> f32 keeps the f32 sum.
  EXPECT_LITERAL(run(R"(a = bf16[2] parameter(0)
b = bf16[2] parameter(1)
ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
                     {lit("bf16[2]", "{1, 0.00390625}"), lit("bf16[2]", "{1, 1}")}),
                 lit("f32[]", "1.00390625"));
}

// f32 [m,k] x [k,n] with every row of the lhs `row` and every column of the rhs `col` (bits):
// the raw bits of the m*n results.
std::vector<uint32_t> f32Dot(int64_t m, int64_t n, const std::vector<uint32_t>& row,
                             const std::vector<uint32_t>& col) {
  auto k = static_cast<int64_t>(row.size());
  std::vector<uint32_t> a, b;
  for (int64_t i = 0; i < m; ++i)
    a.insert(a.end(), row.begin(), row.end());
  for (int64_t p = 0; p < k; ++p)
    b.insert(b.end(), static_cast<size_t>(n), col[static_cast<size_t>(p)]);
  std::string ks = std::to_string(k), ms = std::to_string(m), ns = std::to_string(n);
  std::string text = "a = f32[" + ms + "," + ks + "] parameter(0)\nb = f32[" + ks + "," + ns +
                     "] parameter(1)\nROOT d = f32[" + ms + "," + ns +
                     "] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  return rawOf<uint32_t>(run(text, {bits<uint32_t>(PrimitiveType::kF32, {m, k}, a),
                                    bits<uint32_t>(PrimitiveType::kF32, {k, n}, b)}));
}

TEST(Numerics, DotNanPropagationIsScalarX86InContractingOrder) {
  constexpr uint32_t kInf = 0x7f800000, kOne = 0x3f800000, kMinusOne = 0xbf800000;
  constexpr uint32_t kDefaultNan = 0xffc00000;  // x86's: sign set, quiet, zero payload
  // Shapes whose GEMM runs on the lhs rows (1 x 64) or transposed on the rhs columns (64 x 1).
  for (auto [m, n] : {std::pair<int64_t, int64_t>{1, 64}, {64, 1}, {5, 7}}) {
    auto count = static_cast<size_t>(m * n);
    auto same = [count](uint32_t v) { return std::vector<uint32_t>(count, v); };
    // Both factors NaN: the lhs element's, quieted (0x7f800001 is signaling).
    EXPECT_EQ(f32Dot(m, n, {0x7f800001}, {0xffc0bbbb}), same(0x7fc00001)) << m << "x" << n;
    EXPECT_EQ(f32Dot(m, n, {0xffc0bbbb}, {0x7fc0aaaa}), same(0xffc0bbbb)) << m << "x" << n;
    // inf*0 and inf + -inf give the default NaN.
    EXPECT_EQ(f32Dot(m, n, {kInf}, {0}), same(kDefaultNan));
    EXPECT_EQ(f32Dot(m, n, {kInf, kInf}, {kOne, kMinusOne}), same(kDefaultNan));
    // The first NaN of the sum stays: the accumulator's NaN wins over a later NaN product.
    EXPECT_EQ(f32Dot(m, n, {0x7fc01234, kInf}, {kOne, 0}), same(0x7fc01234));
    EXPECT_EQ(f32Dot(m, n, {kInf, 0x7fc01234}, {0, kOne}), same(kDefaultNan));
    EXPECT_EQ(f32Dot(m, n, {kOne, 0xffc05678}, {0x7fc01234, 0x7fc0aaaa}), same(0x7fc01234));
    // Across the GEMM's k blocks (256 deep): a NaN from the first block meets inf*0 at k = 299.
    std::vector<uint32_t> row(300, kOne), col(300, kOne);
    row[3] = 0x7fc04321;
    row[299] = kInf;
    col[299] = 0;
    EXPECT_EQ(f32Dot(m, n, row, col), same(0x7fc04321));
  }
  // bf16: the f32 NaN rounded to bf16 keeps its sign and the top of its payload.
  EXPECT_EQ(rawOf<uint16_t>(run(R"(a = bf16[2] parameter(0)
b = bf16[2] parameter(1)
ROOT d = bf16[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
                                {bits<uint16_t>(PrimitiveType::kBF16, {2}, {0x7f80, 0x7fc1}),
                                 bits<uint16_t>(PrimitiveType::kBF16, {2}, {0x8000, 0xffc2})})),
            (std::vector<uint16_t>{0xffc0}));
}

TEST(Numerics, S8DotWidensToS32AndIntegerDotsWrap) {
  EXPECT_LITERAL(run(R"(a = s8[2] parameter(0)
b = s8[2] parameter(1)
ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
                     {lit("s8[2]", "{-128, -128}"), lit("s8[2]", "{-128, 127}")}),
                 lit("s32[]", "128"));
  EXPECT_LITERAL(run(R"(a = s32[2] parameter(0)
b = s32[2] parameter(1)
ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
                     {lit("s32[2]", "{65536, 2147483647}"), lit("s32[2]", "{65536, 2}")}),
                 lit("s32[]", "-2"));
  // u8 x s8 -> s32 widens each operand by its own signedness: 255 * -1 = -255.
  EXPECT_LITERAL(run(R"(a = u8[1] parameter(0)
b = s8[1] parameter(1)
ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
                     {lit("u8[1]", "{255}"), lit("s8[1]", "{-1}")}),
                 lit("s32[]", "-255"));
}

TEST(Numerics, S16DotsWrapModulo2To32) {
  // 2^30 + 2^30 - 2^15: the partial sum 2^31 wraps, the final sum is exact modulo 2^32.
  EXPECT_LITERAL(
      run(R"(a = s16[3] parameter(0)
b = s16[3] parameter(1)
ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
          {lit("s16[3]", "{-32768, -32768, -32768}"), lit("s16[3]", "{-32768, -32768, 1}")}),
      lit("s32[]", "2147450880"));
}

TEST(Numerics, ConvolutionMultipliesPaddingZeros) {
  // The zero padding is multiplied like data: 0 * inf = NaN reaches the edge outputs.
  Literal r = run(R"(x = f32[1,1,2] parameter(0)
k = f32[1,1,2] parameter(1)
ROOT c = f32[1,1,3] convolution(x, k), window={size=2 pad=1_1}, dim_labels=bf0_oi0->bf0)",
                  {lit("f32[1,1,2]", "{{{1, 1}}}"), lit("f32[1,1,2]", "{{{inf, 1}}}")});
  EXPECT_TRUE(std::isnan(r.getDouble(0)));
  EXPECT_TRUE(std::isinf(r.getDouble(1)));
  EXPECT_TRUE(std::isinf(r.getDouble(2)));
}

TEST(Numerics, ConvolutionNanIsTheInputElementsFirst) {
  // Both factors NaN: the input element's (the lhs of each product), whichever way the GEMM runs
  // (64 positions x 1 output feature, or 1 position x 64 features).
  for (auto [w, o] : {std::pair<int64_t, int64_t>{64, 1}, {1, 64}}) {
    std::string ws = std::to_string(w), os = std::to_string(o);
    Literal x = bits<uint32_t>(PrimitiveType::kF32, {1, 1, w},
                               std::vector<uint32_t>(static_cast<size_t>(w), 0x7fc01111));
    Literal k = bits<uint32_t>(PrimitiveType::kF32, {o, 1, 1},
                               std::vector<uint32_t>(static_cast<size_t>(o), 0xffc02222));
    Literal r = run("x = f32[1,1," + ws + "] parameter(0)\nk = f32[" + os +
                        ",1,1] parameter(1)\nROOT c = f32[1," + os + "," + ws +
                        "] convolution(x, k), window={size=1}, dim_labels=bf0_oi0->bf0",
                    {x, k});
    EXPECT_EQ(rawOf<uint32_t>(r), std::vector<uint32_t>(static_cast<size_t>(w * o), 0x7fc01111))
        << w << " positions, " << o << " features";
  }
}

// ---- reductions --------------------------------------------------------------------------------

const char* kAddBf16 =
    "add { a = bf16[] parameter(0)\n b = bf16[] parameter(1)\n ROOT s = bf16[] add(a, b) }\n";

std::string bf16Ones(int n, const char* first) {
  std::string v = "{";
  v += first;
  for (int i = 1; i < n; ++i)
    v += ", 0.00390625";
  return v + "}";
}

TEST(Numerics, Bf16ReductionUpToWindowIsSequentialInBf16) {
  // 1 followed by 31 x 2^-8: every add ties back to 1.
  EXPECT_LITERAL(eval(std::string("HloModule m\n") + kAddBf16 + R"(ENTRY e {
p = bf16[32] parameter(0)
z = bf16[] constant(0)
ROOT r = bf16[] reduce(p, z), dimensions={0}, to_apply=add })",
                      {lit("bf16[32]", bf16Ones(32, "1"))}),
                 lit("bf16[]", "1"));
}

TEST(Numerics, LongReductionsFollowXlaTreeRewrite) {
  // 64 elements: XLA CPU reduces windows of 32 first. Window 0 (1 and 31 x 2^-8) stays 1,
  // window 1 (32 x 2^-8) sums exactly to 0.125, then 0 + 1 + 0.125 = 1.125. (Sequential bf16
  // would give 1; f32 accumulation 1.25.)
  EXPECT_LITERAL(eval(std::string("HloModule m\n") + kAddBf16 + R"(ENTRY e {
p = bf16[64] parameter(0)
z = bf16[] constant(0)
ROOT r = bf16[] reduce(p, z), dimensions={0}, to_apply=add })",
                      {lit("bf16[64]", bf16Ones(64, "1"))}),
                 lit("bf16[]", "1.125"));
}

TEST(Numerics, TreeRewriteUsesSamePaddingAndRepeatsTheInit) {
  // 40 ones, init 1: windows [-12, 20) and [20, 52) each start from the init: (1 + 20) and
  // (1 + 20); the final reduce adds them to the init again: 43.
  std::string ones = "{1";
  for (int i = 1; i < 40; ++i)
    ones += ", 1";
  ones += "}";
  EXPECT_LITERAL(eval(R"(HloModule m
add { a = s32[] parameter(0)
 b = s32[] parameter(1)
 ROOT s = s32[] add(a, b) }
ENTRY e {
p = s32[40] parameter(0)
one = s32[] constant(1)
ROOT r = s32[] reduce(p, one), dimensions={0}, to_apply=add })",
                      {lit("s32[40]", ones)}),
                 lit("s32[]", "43"));
}

TEST(Numerics, ReductionsInsideFusionsStaySequential) {
  // XLA's rewrite does not visit fusion computations: 64 elements are folded one by one.
  EXPECT_LITERAL(eval(std::string("HloModule m\n") + kAddBf16 + R"(fused {
p = bf16[64] parameter(0)
z = bf16[] constant(0)
ROOT r = bf16[] reduce(p, z), dimensions={0}, to_apply=add }
ENTRY e {
p = bf16[64] parameter(0)
ROOT f = bf16[] fusion(p), kind=kInput, calls=fused })",
                      {lit("bf16[64]", bf16Ones(64, "1"))}),
                 lit("bf16[]", "1"));
}

}  // namespace
}  // namespace tacit::hlo
