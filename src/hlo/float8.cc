#include "hlo/float8.h"

#include <cmath>
#include <limits>

namespace tacit::hlo {

std::optional<MinifloatFormat> minifloatFormat(PrimitiveType t) {
  MinifloatFormat f;
  switch (t) {
    case PrimitiveType::kF8E5M2:
      f = {5, 2, 15, true, true, true, false, false, true, true};
      break;
    case PrimitiveType::kF8E4M3:
      f = {4, 3, 7, true, true, true, false, false, true, true};
      break;
    case PrimitiveType::kF8E3M4:
      f = {3, 4, 3, true, true, true, false, false, true, true};
      break;
    case PrimitiveType::kF8E4M3FN:
      f = {4, 3, 7, true, false, false, true, false, true, true};
      break;
    case PrimitiveType::kF8E4M3B11FNUZ:
      f = {4, 3, 11, true, false, false, false, true, true, true};
      break;
    case PrimitiveType::kF8E5M2FNUZ:
      f = {5, 2, 16, true, false, false, false, true, true, true};
      break;
    case PrimitiveType::kF8E4M3FNUZ:
      f = {4, 3, 8, true, false, false, false, true, true, true};
      break;
    case PrimitiveType::kF8E8M0FNU:
      f = {8, 0, 127, false, false, false, true, false, false, true};
      break;
    case PrimitiveType::kF4E2M1FN:
      f = {2, 1, 1, true, false, false, false, false, true, false};
      break;
    default:
      return std::nullopt;
  }
  return f;
}

namespace {

int maxExponentField(const MinifloatFormat& f) {
  return (1 << f.exponent_bits) - 1;
}
uint32_t mantissaMask(const MinifloatFormat& f) {
  return (1u << f.mantissa_bits) - 1;
}
uint8_t signBit(const MinifloatFormat& f) {
  return static_cast<uint8_t>(1u << (f.exponent_bits + f.mantissa_bits));
}

// The encoding of the largest finite magnitude (without sign).
uint32_t maxFiniteBits(const MinifloatFormat& f) {
  uint32_t all = (1u << (f.exponent_bits + f.mantissa_bits)) - 1;
  if (f.has_inf || f.ieee_nan) {
    return (static_cast<uint32_t>(maxExponentField(f) - 1) << f.mantissa_bits) | mantissaMask(f);
  }
  if (f.fn_nan) return all - 1;  // all ones is NaN
  return all;                    // nuz / no-NaN formats use every pattern for finite values
}

}  // namespace

double decodeMinifloat(const MinifloatFormat& f, uint8_t bits) {
  bool negative = f.has_sign && (bits & signBit(f));
  uint32_t mag = f.has_sign ? bits & (signBit(f) - 1u) : bits;
  int exp_field = static_cast<int>(mag >> f.mantissa_bits);
  uint32_t mant = mag & mantissaMask(f);
  double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.nuz && negative && mag == 0) return nan;
  if (f.has_nan && !f.nuz && !f.has_zero && mag == 0xff) return nan;  // e8m0
  if (exp_field == maxExponentField(f)) {
    if (f.has_inf && mant == 0) return negative ? -HUGE_VAL : HUGE_VAL;
    if (f.ieee_nan) return negative ? -nan : nan;
    if (f.fn_nan && mant == mantissaMask(f)) return negative ? -nan : nan;
  }
  double value;
  if (!f.has_zero) {
    value = std::ldexp(1.0, exp_field - f.bias);
  } else if (exp_field == 0) {
    value = std::ldexp(static_cast<double>(mant), 1 - f.bias - f.mantissa_bits);
  } else {
    value = std::ldexp(static_cast<double>(mant | (1u << f.mantissa_bits)),
                       exp_field - f.bias - f.mantissa_bits);
  }
  return negative ? -value : value;
}

uint64_t minifloatNanPayload(const MinifloatFormat& f, uint8_t bits) {
  if (!f.ieee_nan) return 0;
  uint32_t mant = bits & mantissaMask(f);
  uint32_t quiet = 1u << (f.mantissa_bits - 1);
  return mant == quiet ? 0 : mant;
}

MinifloatStatus encodeMinifloat(const MinifloatFormat& f, double v, uint64_t nan_payload,
                                uint8_t* bits) {
  bool negative = std::signbit(v) && f.has_sign;
  uint8_t sign = negative ? signBit(f) : 0;
  uint32_t inf_or_nan_exp = static_cast<uint32_t>(maxExponentField(f)) << f.mantissa_bits;
  if (std::isnan(v)) {
    if (!f.has_nan) return MinifloatStatus::kNoNan;
    if (f.nuz) {
      *bits = signBit(f);
    } else if (!f.has_sign) {
      *bits = 0xff;
    } else if (f.fn_nan) {
      *bits = static_cast<uint8_t>(sign | inf_or_nan_exp | mantissaMask(f));
    } else {
      uint64_t mant = nan_payload ? nan_payload : (1u << (f.mantissa_bits - 1));
      if (mant > mantissaMask(f)) return MinifloatStatus::kNoNan;
      *bits = static_cast<uint8_t>(sign | inf_or_nan_exp | mant);
    }
    return MinifloatStatus::kOk;
  }
  if (!f.has_sign && std::signbit(v) && v != 0) return MinifloatStatus::kOverflow;
  if (std::isinf(v)) {
    if (!f.has_inf) return MinifloatStatus::kNoInf;
    *bits = static_cast<uint8_t>(sign | inf_or_nan_exp);
    return MinifloatStatus::kOk;
  }
  double a = std::fabs(v);
  // Search the finite encodings for the nearest (ties to even): at most 255 candidates.
  uint32_t max_bits = maxFiniteBits(f);
  uint32_t best = 0;
  double best_err = HUGE_VAL;
  for (uint32_t m = 0; m <= max_bits; ++m) {
    double err = std::fabs(decodeMinifloat(f, static_cast<uint8_t>(m)) - a);
    if (err < best_err || (err == best_err && (m & 1u) == 0)) {
      best = m;
      best_err = err;
    }
  }
  double max_value = decodeMinifloat(f, static_cast<uint8_t>(max_bits));
  if (a > max_value) {
    // Beyond the largest finite value: rounds to it only while below the halfway point to the
    // next (unrepresentable) power-of-two step.
    double ulp = max_value - decodeMinifloat(f, static_cast<uint8_t>(max_bits - 1));
    if (f.mantissa_bits == 0) ulp = max_value;
    if (a >= max_value + ulp / 2) return MinifloatStatus::kOverflow;
  }
  if (!f.has_zero && a < decodeMinifloat(f, 0) / 2) return MinifloatStatus::kNoZero;
  if (f.nuz && best == 0) sign = 0;  // no negative zero
  *bits = static_cast<uint8_t>(sign | best);
  return MinifloatStatus::kOk;
}

}  // namespace tacit::hlo
