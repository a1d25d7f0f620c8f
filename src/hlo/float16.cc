#include "hlo/float16.h"

namespace tacit::hlo {
namespace {

// Rounds a finite non-negative binary value with `mant_bits` explicit mantissa bits and an
// unbiased exponent to IEEE half bits (without sign), ties to even.
uint16_t roundToHalf(uint64_t full_mant, int mant_bits, int exp) {
  // value = full_mant * 2^(exp - mant_bits), full_mant has its leading 1 at bit mant_bits.
  if (exp > 15) return 0x7c00;  // overflow
  int shift;                    // how many low bits of full_mant are dropped
  uint16_t base;
  if (exp >= -14) {
    shift = mant_bits - 10;
    base = static_cast<uint16_t>((exp + 15) << 10);
    full_mant &= ~(uint64_t{1} << mant_bits);  // drop the implicit bit: stored via the exponent
  } else {
    // Subnormal half: value = m * 2^-24, m = full_mant * 2^(exp - mant_bits + 24).
    shift = mant_bits - 24 - exp;
    base = 0;
    if (shift > 63) return 0;
  }
  uint64_t kept = full_mant >> shift;
  uint64_t rem = full_mant & ((uint64_t{1} << shift) - 1);
  uint64_t halfway = uint64_t{1} << (shift - 1);
  uint32_t result = base + static_cast<uint32_t>(kept);
  if (rem > halfway || (rem == halfway && (result & 1u))) ++result;  // may carry into inf: correct
  return static_cast<uint16_t>(result);
}

}  // namespace

float f16ToF32(half v) {
  uint32_t sign = static_cast<uint32_t>(v.bits & 0x8000u) << 16;
  uint32_t exp = (v.bits >> 10) & 0x1fu;
  uint32_t mant = v.bits & 0x3ffu;
  uint32_t out;
  if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    out = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    out = sign;
  } else {
    // Subnormal half: normalise.
    int e = -14;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --e;
    }
    mant &= 0x3ffu;
    out = sign | (static_cast<uint32_t>(e + 127) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(out);
}

half f32ToF16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return {static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 13) & 0x3ffu))};
  if (abs == 0x7f800000u) return {static_cast<uint16_t>(sign | 0x7c00u)};
  if (abs == 0) return {sign};
  int exp = static_cast<int>(abs >> 23) - 127;
  uint64_t mant = abs & 0x7fffffu;
  if ((abs >> 23) == 0) {
    exp = -126;  // f32 subnormal: far below half's range, rounds to zero
  } else {
    mant |= 0x800000u;
  }
  return {static_cast<uint16_t>(sign | roundToHalf(mant, 23, exp))};
}

half f64ToF16(double d) {
  uint64_t x = std::bit_cast<uint64_t>(d);
  uint16_t sign = static_cast<uint16_t>((x >> 48) & 0x8000u);
  uint64_t abs = x & 0x7fffffffffffffffull;
  if (abs > 0x7ff0000000000000ull)
    return {static_cast<uint16_t>(sign | 0x7e00u | ((abs >> 42) & 0x3ffu))};
  if (abs == 0x7ff0000000000000ull) return {static_cast<uint16_t>(sign | 0x7c00u)};
  if (abs == 0) return {sign};
  int exp = static_cast<int>(abs >> 52) - 1023;
  uint64_t mant = abs & 0xfffffffffffffull;
  if ((abs >> 52) == 0) {
    exp = -1022;
  } else {
    mant |= uint64_t{1} << 52;
  }
  return {static_cast<uint16_t>(sign | roundToHalf(mant, 52, exp))};
}

}  // namespace tacit::hlo
