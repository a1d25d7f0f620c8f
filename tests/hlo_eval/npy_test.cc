// .npy <-> Literal conversion and seeded random literals (docs/formats.md).
#include <gtest/gtest.h>

#include "eval_test_util.h"
#include "hlo/npy_literal.h"
#include "hlo_eval/random_literal.h"

namespace tacit::hlo {
namespace {

using testing::lit;

Diagnostic errorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const DiagnosticError& e) {
    return e.diagnostic();
  }
  ADD_FAILURE() << "expected a DiagnosticError";
  return {};
}

TEST(NpyLiteral, EveryEvaluableTypeRoundTrips) {
  using P = PrimitiveType;
  std::pair<P, const char*> types[] = {
      {P::kPred, "|b1"}, {P::kS8, "|i1"},  {P::kS16, "<i2"}, {P::kS32, "<i4"}, {P::kS64, "<i8"},
      {P::kU8, "|u1"},   {P::kU16, "<u2"}, {P::kU32, "<u4"}, {P::kU64, "<u8"}, {P::kF16, "<f2"},
      {P::kBF16, "|V2"}, {P::kF32, "<f4"}, {P::kF64, "<f8"}};
  for (auto [type, descr] : types) {
    Shape shape(type, {2, 3});
    Literal l = randomLiteral(shape, 11);
    std::string bytes = serializeNpyLiteral(l);
    NpyArray a = parseNpy(bytes, "x.npy");
    EXPECT_EQ(a.descr, descr) << primitiveTypeName(type);
    EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
    EXPECT_LITERAL(npyToLiteral(a, shape, "x.npy", "parameter 'x'"), l);
    EXPECT_LITERAL(npyToLiteral(a, "x.npy"), l);
  }
}

TEST(NpyLiteral, Bf16ReadsFromRawU16Bits) {
  NpyArray a;
  a.descr = "<u2";
  a.shape = {2};
  a.data = {0x80, 0x3f, 0x00, 0xc0};  // 0x3F80 = 1, 0xC000 = -2
  EXPECT_LITERAL(npyToLiteral(a, Shape(PrimitiveType::kBF16, {2}), "b.npy", "parameter 'b'"),
                 lit("bf16[2]", "{1, -2}"));
  // Without an expected type, <u2 is u16.
  EXPECT_EQ(npyToLiteral(a, "b.npy").shape().elementType(), PrimitiveType::kU16);
}

TEST(NpyLiteral, MismatchesAreDiagnosed) {
  NpyArray a = literalToNpy(lit("f32[2,2]", "{{1, 2}, {3, 4}}"));
  Diagnostic d = errorOf([&] {
    npyToLiteral(a, Shape(PrimitiveType::kBF16, {2, 2}), "q.npy", "parameter 'q'");
  });
  EXPECT_EQ(d.file, "q.npy");
  EXPECT_EQ(d.message, "dtype '<f4' does not match parameter 'q' of type bf16 (expected '|V2')");
  Diagnostic d2 =
      errorOf([&] { npyToLiteral(a, Shape(PrimitiveType::kF32, {4}), "q.npy", "parameter 'q'"); });
  EXPECT_EQ(d2.message, "shape (2, 2) does not match parameter 'q' of shape f32[4]");
  NpyArray b;
  b.descr = "|b1";
  b.shape = {3};
  b.data = {0, 1, 2};
  Diagnostic d3 = errorOf([&] { npyToLiteral(b, "p.npy"); });
  EXPECT_NE(d3.message.find("pred values must be 0 or 1"), std::string::npos) << d3.str();
  NpyArray c;
  c.descr = "<c8";
  c.shape = {1};
  c.data.assign(8, 0);
  EXPECT_NE(errorOf([&] { npyToLiteral(c, "c.npy"); }).message.find("has no HLO element type"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { literalToNpy(Literal::tuple({})); }).message.find("tuple"),
            std::string::npos);
}

TEST(RandomLiteral, IsSplitMix64AndDeterministic) {
  // SplitMix64 from seed 0 yields 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F;
  // s8 and u8 draws take the top byte.
  EXPECT_LITERAL(randomLiteral(Shape(PrimitiveType::kS8, {3}), 0), lit("s8[3]", "{-30, 110, 6}"));
  EXPECT_LITERAL(randomLiteral(Shape(PrimitiveType::kU8, {3}), 0), lit("u8[3]", "{226, 110, 6}"));
  Shape s(PrimitiveType::kF32, {100});
  EXPECT_TRUE(randomLiteral(s, 42).bitwiseEqual(randomLiteral(s, 42)));
  EXPECT_FALSE(randomLiteral(s, 42).bitwiseEqual(randomLiteral(s, 43)));
}

TEST(RandomLiteral, DistributionsStayInTheirDocumentedRanges) {
  using P = PrimitiveType;
  for (P t : {P::kF16, P::kBF16, P::kF32, P::kF64}) {
    Literal l = randomLiteral(Shape(t, {4096}), 1);
    double lo = 1, hi = -1;
    for (int64_t i = 0; i < l.elementCount(); ++i) {
      lo = std::min(lo, l.getDouble(i));
      hi = std::max(hi, l.getDouble(i));
    }
    EXPECT_GE(lo, -1.0);
    EXPECT_LT(lo, -0.9);
    EXPECT_LE(hi, 1.0);  // [-1, 1) before rounding to the type
    EXPECT_GT(hi, 0.9);
  }
  Literal s = randomLiteral(Shape(P::kS32, {4096}), 2),
          u = randomLiteral(Shape(P::kU64, {4096}), 2);
  Literal p = randomLiteral(Shape(P::kPred, {4096}), 2);
  int64_t ones = 0;
  for (int64_t i = 0; i < 4096; ++i) {
    EXPECT_LE(std::abs(s.getInt64(i)), 100);
    EXPECT_LE(u.getInt64(i), 100);
    EXPECT_GE(u.getInt64(i), 0);
    EXPECT_LE(p.getInt64(i), 1);
    ones += p.getInt64(i);
  }
  EXPECT_GT(ones, 1800);
  EXPECT_LT(ones, 2300);
  Literal t = randomLiteral(Shape::tuple({Shape(P::kS8, {2}), Shape(P::kS8, {2})}), 5);
  EXPECT_FALSE(t.elements()[0].bitwiseEqual(t.elements()[1]));
}

}  // namespace
}  // namespace tacit::hlo
