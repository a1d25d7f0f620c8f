// Float literals print so that they parse back to the same bits, for every float element type:
// every bit pattern of the 4-, 8- and 16-bit types, random f32/f64/c64/c128 patterns, and the
// values a shortest-digits printer gets wrong (negative zero, integral values beyond 64 bits,
// subnormals, NaN payloads) — docs/hlo.md, "Canonical form".
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>

#include "common/paths.h"
#include "hlo/dtype.h"
#include "hlo/literal.h"
#include "hlo/parser.h"
#include "hlo/printer.h"

namespace tacit::hlo {
namespace {

std::string hex(uint64_t bits) {
  std::ostringstream s;
  s << "0x" << std::hex << bits;
  return s.str();
}

// A scalar of type `t` holding `bits` (little-endian low bytes), printed and parsed back; the
// parsed bytes must equal the stored ones. Returns the printed text for the failure message.
::testing::AssertionResult roundTrips(PrimitiveType t, uint64_t bits) {
  Literal lit{Shape(t, {})};
  std::memcpy(lit.bytes(), &bits, lit.byteCount());
  std::string text = literalText(lit);
  Literal back{Shape(t, {})};
  try {
    back = parseLiteral(text, Shape(t, {}));
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure()
           << primitiveTypeName(t) << " bits " << hex(bits) << " printed as " << text
           << " does not parse: " << e.what();
  }
  if (std::memcmp(back.bytes(), lit.bytes(), lit.byteCount()) != 0) {
    uint64_t got = 0;
    std::memcpy(&got, back.bytes(), back.byteCount());
    return ::testing::AssertionFailure() << primitiveTypeName(t) << " bits " << hex(bits)
                                         << " printed as " << text << " reads back as " << hex(got);
  }
  return ::testing::AssertionSuccess();
}

TEST(FloatText, EveryPatternOfTheNarrowTypesRoundTrips) {
  for (auto t : {PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF8E5M2,
                 PrimitiveType::kF8E4M3, PrimitiveType::kF8E4M3FN, PrimitiveType::kF8E4M3B11FNUZ,
                 PrimitiveType::kF8E3M4, PrimitiveType::kF8E5M2FNUZ, PrimitiveType::kF8E4M3FNUZ,
                 PrimitiveType::kF8E8M0FNU, PrimitiveType::kF4E2M1FN}) {
    uint64_t patterns = uint64_t{1} << bitWidth(t);
    int failures = 0;
    for (uint64_t bits = 0; bits < patterns && failures < 5; ++bits)
      if (!roundTrips(t, bits)) {
        ADD_FAILURE() << roundTrips(t, bits).message();
        ++failures;
      }
  }
}

TEST(FloatText, RandomWidePatternsRoundTrip) {
  std::mt19937_64 rng(20261205);
  int failures = 0;
  for (int i = 0; i < 200000 && failures < 5; ++i) {
    uint64_t bits = rng();
    for (auto [t, b] :
         {std::pair{PrimitiveType::kF32, bits & 0xffffffffu}, std::pair{PrimitiveType::kF64, bits}})
      if (!roundTrips(t, b)) {
        ADD_FAILURE() << roundTrips(t, b).message();
        ++failures;
      }
  }
}

TEST(FloatText, ValuesAShortestPrinterGetsWrong) {
  auto f64 = [](double v) { return std::bit_cast<uint64_t>(v); };
  auto f32 = [](float v) { return uint64_t{std::bit_cast<uint32_t>(v)}; };
  for (double v :
       {-0.0, 0.0, 0x1p64, -0x1p64, 0x1p63, -0x1p63, 0x1p63 - 1024, 1e20, -1e21,
        18446744073709551615.0, 0x1p-1074, -0x1p-1074, 0x1p-1022, 1.7976931348623157e308})
    EXPECT_TRUE(roundTrips(PrimitiveType::kF64, f64(v))) << v;
  for (float v : {-0.0f, 0x1p64f, -0x1p100f, 0x1p-149f, 0x1p-126f, 3.4028235e38f, 16777217.0f})
    EXPECT_TRUE(roundTrips(PrimitiveType::kF32, f32(v))) << v;
  for (uint64_t nan : {uint64_t{0x7ff0000000000001}, uint64_t{0xfff8000000000000},
                       uint64_t{0x7ff4000000000000}, uint64_t{0xffffffffffffffff}})
    EXPECT_TRUE(roundTrips(PrimitiveType::kF64, nan));
  for (uint64_t nan : {0x7f800001u, 0xffc00000u, 0x7fa00000u, 0xffffffffu})
    EXPECT_TRUE(roundTrips(PrimitiveType::kF32, nan));
  // Complex parts go through the same path.
  uint64_t neg_zero_pair = f32(-0.0f) | (f32(0x1p70f) << 32);
  EXPECT_TRUE(roundTrips(PrimitiveType::kC64, neg_zero_pair));
}

TEST(FloatText, NegativeZeroPrintsAsAFloatAndReadsBackNegative) {
  Literal z{Shape(PrimitiveType::kF32, {2})};
  float values[] = {-0.0f, 0.0f};
  std::memcpy(z.bytes(), values, sizeof(values));
  EXPECT_EQ(literalText(z), "{-0.0, 0}");
  // `-0` as XLA prints negative zero: read as negative zero, not as the integer 0.
  Literal parsed = parseLiteral("{-0, 0}", Shape(PrimitiveType::kF32, {2}));
  EXPECT_TRUE(std::signbit(reinterpret_cast<const float*>(parsed.bytes())[0]));
  EXPECT_FALSE(std::signbit(reinterpret_cast<const float*>(parsed.bytes())[1]));
}

TEST(FloatText, HugeIntegralF64PrintsInExponentForm) {
  Literal h{Shape(PrimitiveType::kF64, {})};
  double v = 0x1p64;
  std::memcpy(h.bytes(), &v, 8);
  EXPECT_EQ(literalText(h), "1.8446744073709552e+19");
}

// Fuzz finding (fuzz/seeds/hlo_parser/regression-roundtrip-f64-2p64-neg-zero.hlo): the printed
// module is a fixed point of parse + print, as fuzz_hlo_parser requires, and keeps the bits.
TEST(FloatText, FuzzFindingPrintsToAFixedPoint) {
  std::ifstream in(tacit::testing::sourceDir() +
                   "/fuzz/seeds/hlo_parser/regression-roundtrip-f64-2p64-neg-zero.hlo");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  ASSERT_FALSE(text.empty());
  std::string printed = printModule(*parseModule(text, "finding.hlo"));
  std::unique_ptr<HloModule> again = parseModule(printed, "printed.hlo");
  EXPECT_EQ(printModule(*again), printed);
  auto constant = [&](const std::string& name) -> const Literal& {
    for (const auto& i : again->entry()->instructions())
      if (i->name() == name && i->literal()) return *i->literal();
    throw std::runtime_error("no constant " + name);
  };
  double h;
  std::memcpy(&h, constant("h").bytes(), 8);
  EXPECT_EQ(h, 0x1p64);
  uint16_t e[3];
  std::memcpy(e, constant("e").bytes(), 6);
  EXPECT_EQ(e[2], 0x8000) << "bf16 -0 lost its sign";
}

}  // namespace
}  // namespace tacit::hlo
