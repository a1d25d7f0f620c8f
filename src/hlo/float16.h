// 16-bit floating-point storage types and their conversions (round to nearest even).
//
// Conversion rules follow XLA's CPU backend (docs/numerics.md):
//  * f32 -> bf16 / f16: round to nearest, ties to even; overflow gives inf; NaN stays NaN with its
//    sign, quieted, payload truncated (what vcvtneps2bf16 / vcvtps2ph do);
//  * f64 -> bf16 goes through f32 (XLA converts to f32 first), f64 -> f16 rounds once.
#pragma once

#include <bit>
#include <cstdint>

namespace tacit::hlo {

struct bfloat16 {
  uint16_t bits = 0;
  friend bool operator==(bfloat16, bfloat16) = default;
};
struct half {
  uint16_t bits = 0;
  friend bool operator==(half, half) = default;
};

inline float bf16ToF32(bfloat16 v) {
  return std::bit_cast<float>(static_cast<uint32_t>(v.bits) << 16);
}

inline bfloat16 f32ToBf16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return {static_cast<uint16_t>((x >> 16) | 0x0040u)};
  uint32_t rounding_bias = 0x7fffu + ((x >> 16) & 1u);
  return {static_cast<uint16_t>((x + rounding_bias) >> 16)};
}

float f16ToF32(half v);
half f32ToF16(float f);
half f64ToF16(double d);
inline bfloat16 f64ToBf16(double d) {
  return f32ToBf16(static_cast<float>(d));
}

}  // namespace tacit::hlo
