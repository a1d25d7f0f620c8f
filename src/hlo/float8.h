// A small generic codec for the 8- and 4-bit floating-point element types (f8e5m2, f8e4m3fn, ...,
// f4e2m1fn), so that their constants parse and print bit-exactly. tacit does not evaluate these
// types; this is storage only (one byte of raw bits per element, as Literal stores them).
#pragma once

#include <cstdint>
#include <optional>

#include "hlo/dtype.h"

namespace tacit::hlo {

struct MinifloatFormat {
  int exponent_bits = 0;
  int mantissa_bits = 0;
  int bias = 0;
  bool has_sign = true;   // f8e8m0fnu is unsigned
  bool has_inf = false;   // IEEE-style: all-ones exponent with zero mantissa is infinity
  bool ieee_nan = false;  // IEEE-style NaNs: all-ones exponent, non-zero mantissa
  bool fn_nan = false;    // "fn": only all-ones exponent and mantissa is NaN (f8e4m3fn)
  bool nuz = false;       // "fnuz": the negative-zero pattern is the only NaN, no -0
  bool has_zero = true;   // f8e8m0fnu has no zero
  bool has_nan = true;    // f4e2m1fn has no NaN
};

// The format of a sub-16-bit float type; nullopt for any other type.
std::optional<MinifloatFormat> minifloatFormat(PrimitiveType t);

enum class MinifloatStatus { kOk, kOverflow, kNoInf, kNoNan, kNoZero };

// Rounds `v` to nearest even. Finite values beyond the largest finite value are kOverflow; inf on
// a type without infinities is kNoInf; NaN on a type without NaN is kNoNan; zero (or a value
// rounding to zero) on a type without zero is kNoZero. `nan_payload` (0 = default NaN) sets the
// mantissa of IEEE-style NaNs.
MinifloatStatus encodeMinifloat(const MinifloatFormat& f, double v, uint64_t nan_payload,
                                uint8_t* bits);
double decodeMinifloat(const MinifloatFormat& f, uint8_t bits);
// The payload of a NaN encoding when it is not the default quiet NaN, else 0.
uint64_t minifloatNanPayload(const MinifloatFormat& f, uint8_t bits);

}  // namespace tacit::hlo
