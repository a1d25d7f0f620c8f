// The minifloat codec: every encoding of every 8/4-bit type decodes and re-encodes to itself.
#include "hlo/float8.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tacit::hlo {
namespace {

TEST(Minifloat, EveryEncodingRoundTrips) {
  for (PrimitiveType t :
       {PrimitiveType::kF8E5M2, PrimitiveType::kF8E4M3, PrimitiveType::kF8E4M3FN,
        PrimitiveType::kF8E4M3B11FNUZ, PrimitiveType::kF8E3M4, PrimitiveType::kF8E5M2FNUZ,
        PrimitiveType::kF8E4M3FNUZ, PrimitiveType::kF8E8M0FNU, PrimitiveType::kF4E2M1FN}) {
    MinifloatFormat f = *minifloatFormat(t);
    int count = t == PrimitiveType::kF4E2M1FN ? 16 : 256;
    for (int b = 0; b < count; ++b) {
      double v = decodeMinifloat(f, static_cast<uint8_t>(b));
      uint8_t back = 0;
      ASSERT_EQ(encodeMinifloat(f, v, minifloatNanPayload(f, static_cast<uint8_t>(b)), &back),
                MinifloatStatus::kOk)
          << primitiveTypeName(t) << " bits " << b;
      if (std::isnan(v)) {
        EXPECT_TRUE(std::isnan(decodeMinifloat(f, back)));
      } else {
        EXPECT_EQ(back, b) << primitiveTypeName(t) << " value " << v;
      }
    }
  }
}

TEST(Minifloat, KnownValuesAndLimits) {
  MinifloatFormat e4m3fn = *minifloatFormat(PrimitiveType::kF8E4M3FN);
  EXPECT_EQ(decodeMinifloat(e4m3fn, 0x7e), 448);
  uint8_t bits = 0;
  EXPECT_EQ(encodeMinifloat(e4m3fn, 464, 0, &bits), MinifloatStatus::kOverflow);
  EXPECT_EQ(encodeMinifloat(e4m3fn, 460, 0, &bits), MinifloatStatus::kOk);  // rounds down to 448
  EXPECT_EQ(bits, 0x7e);
  EXPECT_EQ(encodeMinifloat(e4m3fn, INFINITY, 0, &bits), MinifloatStatus::kNoInf);
  MinifloatFormat e5m2 = *minifloatFormat(PrimitiveType::kF8E5M2);
  EXPECT_EQ(decodeMinifloat(e5m2, 0x7b), 57344);
  EXPECT_EQ(encodeMinifloat(e5m2, 1.125, 0, &bits), MinifloatStatus::kOk);  // tie -> even (1.0)
  EXPECT_EQ(bits, 0x3c);
  MinifloatFormat fnuz = *minifloatFormat(PrimitiveType::kF8E4M3FNUZ);
  EXPECT_TRUE(std::isnan(decodeMinifloat(fnuz, 0x80)));
  EXPECT_EQ(encodeMinifloat(fnuz, -0.0, 0, &bits), MinifloatStatus::kOk);
  EXPECT_EQ(bits, 0x00);
  MinifloatFormat f4 = *minifloatFormat(PrimitiveType::kF4E2M1FN);
  EXPECT_EQ(decodeMinifloat(f4, 0x7), 6);
  EXPECT_EQ(encodeMinifloat(f4, NAN, 0, &bits), MinifloatStatus::kNoNan);
  MinifloatFormat e8 = *minifloatFormat(PrimitiveType::kF8E8M0FNU);
  EXPECT_EQ(encodeMinifloat(e8, 0, 0, &bits), MinifloatStatus::kNoZero);
  EXPECT_FALSE(minifloatFormat(PrimitiveType::kF32));
}

}  // namespace
}  // namespace tacit::hlo
