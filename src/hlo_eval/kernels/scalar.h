// Element semantics: what one HLO operation does to one element, for every evaluable type.
//
// This header is the single definition of tacit's numerics (docs/numerics.md); every kernel (the
// elementwise loops, reductions, dot/convolution epilogues, sort comparators) instantiates these
// templates, so a rule lives in exactly one place. Everything is templated on the PrimitiveType
// (not the C++ storage type: pred and u8 share uint8_t but not semantics) and is resolved at
// compile time, so kernels dispatch on the element type once per operation, never per element.
//
// Rules (XLA CPU semantics; citations in docs/numerics.md):
//  * f16/bf16 compute in f32 and round once per operation (load widens exactly, store rounds to
//    nearest even); f32 computes in f32, f64 in f64.
//  * integer arithmetic wraps (computed in unsigned arithmetic to avoid C++ undefined behaviour).
//  * integer x/0 = -1 (all ones), INT_MIN/-1 = INT_MIN; x%0 = x, INT_MIN%-1 = 0.
//  * shifts by >= the bit width (amount read as unsigned): shift-left and shift-right-logical give
//    0, shift-right-arithmetic gives the sign fill.
//  * maximum/minimum on floats follow IEEE 754-2019 maximum/minimum (LLVM llvm.maximum, which XLA
//    emits): NaN if either operand is NaN, and -0 < +0.
//  * a binary float operation's NaN is x86's for the HLO operand order: the first NaN operand,
//    quieted; invalid operations give the default NaN (see floatBinary).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "hlo/dtype.h"
#include "hlo/float16.h"
#include "hlo/instruction.h"
#include "hlo/literal.h"
#include "hlo/opcode.h"

namespace tacit::hlo::kernels {

using P = PrimitiveType;

template <P kT>
using Native = typename NativeType<kT>::type;

template <P kT>
constexpr bool kIsPred = kT == P::kPred;
template <P kT>
constexpr bool kIsFloat = kT == P::kF16 || kT == P::kBF16 || kT == P::kF32 || kT == P::kF64;
template <P kT>
constexpr bool kIsInt = !kIsPred<kT> && !kIsFloat<kT>;
template <P kT>
constexpr bool kIsSigned = kT == P::kS8 || kT == P::kS16 || kT == P::kS32 || kT == P::kS64;

// The type arithmetic on kT is carried out in.
template <P kT>
struct ComputeTypeOf {
  using type = Native<kT>;
};
template <>
struct ComputeTypeOf<P::kF16> {
  using type = float;
};
template <>
struct ComputeTypeOf<P::kBF16> {
  using type = float;
};
template <P kT>
using Compute = typename ComputeTypeOf<kT>::type;

// Widens a stored element to its compute type (exact).
template <P kT>
inline Compute<kT> load(Native<kT> v) {
  if constexpr (kT == P::kBF16) {
    return bf16ToF32(v);
  } else if constexpr (kT == P::kF16) {
    return f16ToF32(v);
  } else {
    return v;
  }
}

// Rounds a compute-type value to the stored type (round to nearest even for f16/bf16).
template <P kT>
inline Native<kT> store(Compute<kT> v) {
  if constexpr (kT == P::kBF16) {
    return f32ToBf16(v);
  } else if constexpr (kT == P::kF16) {
    return f32ToF16(v);
  } else {
    return v;
  }
}

// Unsigned arithmetic type for wrap-around on integer kT, at least as wide as `unsigned` so that
// u16*u16 does not promote to (overflowing) int.
template <typename T>
using WrapType = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

template <typename T>
inline T wrapAdd(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
}
template <typename T>
inline T wrapSub(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
}
template <typename T>
inline T wrapMul(T a, T b) {
  return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
}

// A NaN operand returned by an operation comes back quiet, payload kept (as x86 arithmetic does).
template <typename F>
inline F quiet(F nan) {
  return nan + nan;
}

// IEEE 754-2019 maximum / minimum (llvm.maximum / llvm.minimum).
template <typename F>
inline F floatMax(F a, F b) {
  if (std::isnan(a)) return quiet(a);
  if (std::isnan(b)) return quiet(b);
  if (a == b) return std::signbit(a) ? b : a;  // max(-0, +0) = +0
  return a > b ? a : b;
}
template <typename F>
inline F floatMin(F a, F b) {
  if (std::isnan(a)) return quiet(a);
  if (std::isnan(b)) return quiet(b);
  if (a == b) return std::signbit(a) ? a : b;  // min(-0, +0) = -0
  return a < b ? a : b;
}

// ---- Unary operations --------------------------------------------------------------------------

// Whether `op` is an elementwise unary operation defined on element type kT (result type kT,
// except is-finite which yields pred).
template <P kT>
constexpr bool unarySupported(HloOpcode op) {
  using O = HloOpcode;
  switch (op) {
    case O::kAbs:
    case O::kNegate:
    case O::kSign:
      return kIsFloat<kT> || kIsInt<kT>;
    case O::kNot:
      return kIsInt<kT> || kIsPred<kT>;
    case O::kPopcnt:
    case O::kCountLeadingZeros:
      return kIsInt<kT>;
    case O::kExponential:
    case O::kExponentialMinusOne:
    case O::kLog:
    case O::kLogPlusOne:
    case O::kTanh:
    case O::kLogistic:
    case O::kSqrt:
    case O::kRsqrt:
    case O::kCbrt:
    case O::kErf:
    case O::kFloor:
    case O::kCeil:
    case O::kRoundNearestAfz:
    case O::kRoundNearestEven:
    case O::kIsFinite:
    case O::kSine:
    case O::kCosine:
      return kIsFloat<kT>;
    default:
      return false;
  }
}

template <HloOpcode kOp, typename F>
inline F floatUnary(F x) {
  using O = HloOpcode;
  if constexpr (kOp == O::kAbs) return std::fabs(x);
  if constexpr (kOp == O::kNegate) return -x;
  if constexpr (kOp == O::kSign) {
    if (std::isnan(x)) return x;
    return x == F(0) ? x : std::copysign(F(1), x);
  }
  if constexpr (kOp == O::kExponential) return std::exp(x);
  if constexpr (kOp == O::kExponentialMinusOne) return std::expm1(x);
  if constexpr (kOp == O::kLog) return std::log(x);
  if constexpr (kOp == O::kLogPlusOne) return std::log1p(x);
  if constexpr (kOp == O::kTanh) return std::tanh(x);
  if constexpr (kOp == O::kLogistic) return F(1) / (F(1) + std::exp(-x));
  if constexpr (kOp == O::kSqrt) return std::sqrt(x);
  if constexpr (kOp == O::kRsqrt) return F(1) / std::sqrt(x);
  if constexpr (kOp == O::kCbrt) return std::cbrt(x);
  if constexpr (kOp == O::kErf) return std::erf(x);
  if constexpr (kOp == O::kFloor) return std::floor(x);
  if constexpr (kOp == O::kCeil) return std::ceil(x);
  if constexpr (kOp == O::kRoundNearestAfz) return std::round(x);
  if constexpr (kOp == O::kRoundNearestEven)
    return std::nearbyint(x);  // default mode: ties to even
  if constexpr (kOp == O::kSine) return std::sin(x);
  if constexpr (kOp == O::kCosine) return std::cos(x);
}

template <HloOpcode kOp, typename T>
inline T intUnary(T x) {
  using O = HloOpcode;
  using U = std::make_unsigned_t<T>;
  if constexpr (kOp == O::kAbs) {
    if constexpr (std::is_signed_v<T>)
      return x < 0 ? wrapSub(T(0), x) : x;  // abs(INT_MIN) = INT_MIN
    return x;
  }
  if constexpr (kOp == O::kNegate) return wrapSub(T(0), x);
  if constexpr (kOp == O::kSign) {
    if constexpr (std::is_signed_v<T>) return static_cast<T>((x > 0) - (x < 0));
    return static_cast<T>(x != 0);
  }
  if constexpr (kOp == O::kNot) return static_cast<T>(~static_cast<U>(x));
  if constexpr (kOp == O::kPopcnt) return static_cast<T>(std::popcount(static_cast<U>(x)));
  if constexpr (kOp == O::kCountLeadingZeros) {
    return static_cast<T>(std::countl_zero(static_cast<U>(x)));
  }
}

// y = op(x) for element type kT (not is-finite, whose result type differs: see isFinite).
template <HloOpcode kOp, P kT>
inline Native<kT> unary(Native<kT> x) {
  if constexpr (kIsPred<kT>) {
    static_assert(kOp == HloOpcode::kNot);
    return x == 0 ? 1 : 0;
  } else if constexpr (kIsFloat<kT>) {
    return store<kT>(floatUnary<kOp>(load<kT>(x)));
  } else {
    return intUnary<kOp>(x);
  }
}

// |x| <= max is std::isfinite (NaN compares false, infinities exceed max) in a form that
// vectorizes (std::isfinite becomes a scalar classification call).
template <P kT>
inline uint8_t isFinite(Native<kT> x) {
  auto v = load<kT>(x);
  return std::fabs(v) <= std::numeric_limits<decltype(v)>::max() ? 1 : 0;
}

// ---- Binary operations -------------------------------------------------------------------------

template <P kT>
constexpr bool binarySupported(HloOpcode op) {
  using O = HloOpcode;
  switch (op) {
    case O::kAdd:
    case O::kMultiply:
    case O::kMaximum:
    case O::kMinimum:
      return true;
    case O::kSubtract:
    case O::kDivide:
    case O::kRemainder:
    case O::kPower:
      return kIsFloat<kT> || kIsInt<kT>;
    case O::kAtan2:
      return kIsFloat<kT>;
    case O::kAnd:
    case O::kOr:
    case O::kXor:
      return kIsInt<kT> || kIsPred<kT>;
    case O::kShiftLeft:
    case O::kShiftRightLogical:
    case O::kShiftRightArithmetic:
      return kIsInt<kT>;
    default:
      return false;
  }
}

// Which NaN a binary operation returns (docs/numerics.md): x86's rule for the HLO operand order.
// If a is NaN the result is a quieted, else if b is NaN it is b quieted; an invalid operation on
// numbers (inf - inf, 0 * inf, 0 / 0) gives the default NaN (negative, zero payload).
//
// The hardware applies that rule to its first source operand, but for a commutative operation
// the compiler picks which operand that is (GCC 12 returned b's NaN for f32 and f64 everywhere
// and for bf16 in vector loops), so add and multiply make the order explicit: the second operand is
// replaced by the first when the first is NaN. a op a is then a quieted whichever operand comes
// first, and with a not NaN at most one operand is NaN, which propagates in either order. In a
// vector loop that is a compare and a blend before the operation. subtract and divide are not
// commutative: their instruction's first source is a, as the HLO says. The libm operations decide
// NaNs in their own code (glibc's atan2 returns the second NaN of two and its pow(-NaN, 1) drops
// the sign), so a NaN result of theirs is replaced by the first NaN operand, quieted; a result that
// is not NaN stays (pow(1, NaN) = pow(NaN, 0) = 1; a signalling NaN makes pow NaN, as in glibc).
template <typename F>
inline F firstIfNan(F a, F b) {
  return a != a ? a : b;
}
template <typename F>
inline F libmNan(F r, F a, F b) {
  if (r == r) return r;
  if (a != a) return quiet(a);
  if (b != b) return quiet(b);
  return r;
}

template <HloOpcode kOp, typename F>
inline F floatBinary(F a, F b) {
  using O = HloOpcode;
  if constexpr (kOp == O::kAdd) return a + firstIfNan(a, b);
  if constexpr (kOp == O::kSubtract) return a - b;
  if constexpr (kOp == O::kMultiply) return a * firstIfNan(a, b);
  if constexpr (kOp == O::kDivide) return a / b;
  if constexpr (kOp == O::kRemainder) return libmNan(std::fmod(a, b), a, b);
  if constexpr (kOp == O::kPower) return libmNan(std::pow(a, b), a, b);
  if constexpr (kOp == O::kAtan2) return libmNan(std::atan2(a, b), a, b);
  if constexpr (kOp == O::kMaximum) return floatMax(a, b);
  if constexpr (kOp == O::kMinimum) return floatMin(a, b);
}

// XLA's integer power: exponentiation by squaring over the low 6 bits of the exponent (results
// wrap); a negative exponent (as a signed value of the type's width) gives 1 for base 1, else 0.
template <typename T>
inline T intPower(T base, T exponent) {
  using S = std::make_signed_t<T>;
  using U = std::make_unsigned_t<T>;
  T acc = 1;
  T b = base;
  U e = static_cast<U>(exponent);
  for (int i = 0; i < 6; ++i) {
    if (e & 1u) acc = wrapMul(acc, b);
    b = wrapMul(b, b);
    e = static_cast<U>(e >> 1);
  }
  if (static_cast<S>(exponent) >= 0) return acc;
  return base == 1 ? T(1) : T(0);
}

template <HloOpcode kOp, typename T>
inline T intBinary(T a, T b) {
  using O = HloOpcode;
  using U = std::make_unsigned_t<T>;
  constexpr U kBits = sizeof(T) * 8;
  if constexpr (kOp == O::kAdd) return wrapAdd(a, b);
  if constexpr (kOp == O::kSubtract) return wrapSub(a, b);
  if constexpr (kOp == O::kMultiply) return wrapMul(a, b);
  if constexpr (kOp == O::kDivide) {
    if (b == 0) return static_cast<T>(~U(0));
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return a;
    }
    return static_cast<T>(a / b);
  }
  if constexpr (kOp == O::kRemainder) {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return 0;
    }
    return static_cast<T>(a % b);
  }
  if constexpr (kOp == O::kPower) return intPower(a, b);
  if constexpr (kOp == O::kMaximum) return a >= b ? a : b;
  if constexpr (kOp == O::kMinimum) return a <= b ? a : b;
  if constexpr (kOp == O::kAnd) return static_cast<T>(a & b);
  if constexpr (kOp == O::kOr) return static_cast<T>(a | b);
  if constexpr (kOp == O::kXor) return static_cast<T>(a ^ b);
  if constexpr (kOp == O::kShiftLeft) {
    U n = static_cast<U>(b);
    return n >= kBits ? T(0) : static_cast<T>(static_cast<WrapType<T>>(a) << n);
  }
  if constexpr (kOp == O::kShiftRightLogical) {
    U n = static_cast<U>(b);
    return n >= kBits ? T(0) : static_cast<T>(static_cast<U>(a) >> n);
  }
  if constexpr (kOp == O::kShiftRightArithmetic) {
    using S = std::make_signed_t<T>;
    U n = static_cast<U>(b);
    S s = static_cast<S>(a);  // the top bit is the sign, whatever the signedness of T
    if (n >= kBits) return static_cast<T>(s < 0 ? S(-1) : S(0));
    return static_cast<T>(s >> n);
  }
}

// pred arithmetic behaves like `int8(x) OP int8(y) != 0` (XLA): add/maximum are or,
// multiply/minimum are and.
template <HloOpcode kOp>
inline uint8_t predBinary(uint8_t a, uint8_t b) {
  using O = HloOpcode;
  if constexpr (kOp == O::kAdd || kOp == O::kMaximum || kOp == O::kOr) return a | b;
  if constexpr (kOp == O::kMultiply || kOp == O::kMinimum || kOp == O::kAnd) return a & b;
  if constexpr (kOp == O::kXor) return a ^ b;
}

template <HloOpcode kOp, P kT>
inline Native<kT> binary(Native<kT> a, Native<kT> b) {
  if constexpr (kIsPred<kT>) {
    return predBinary<kOp>(a, b);
  } else if constexpr (kIsFloat<kT>) {
    return store<kT>(floatBinary<kOp>(load<kT>(a), load<kT>(b)));
  } else {
    return intBinary<kOp>(a, b);
  }
}

// binary<kOp, kT>(a, b) except that when both operands of a float add or multiply are NaN, the
// compiler's operand order picks the NaN (the two orders agree on everything else, signed zeros
// included). For the reductions' typed loops: a blend in their chain through the accumulator
// would slow them 2.4x, and since NaN is absorbing for add and multiply, a result that is not NaN
// never met two NaN operands; they recompute NaN results with binary (evaluator_reduce.cc).
template <HloOpcode kOp, P kT>
inline Native<kT> binaryAnyNanOrder(Native<kT> a, Native<kT> b) {
  if constexpr (kIsFloat<kT> && kOp == HloOpcode::kAdd) {
    return store<kT>(load<kT>(a) + load<kT>(b));
  } else if constexpr (kIsFloat<kT> && kOp == HloOpcode::kMultiply) {
    return store<kT>(load<kT>(a) * load<kT>(b));
  } else {
    return binary<kOp, kT>(a, b);
  }
}

// Whether binaryAnyNanOrder<kOp, kT> may differ from binary<kOp, kT>.
template <HloOpcode kOp, P kT>
constexpr bool kNanOrderMatters = kIsFloat<kT> &&
                                  (kOp == HloOpcode::kAdd || kOp == HloOpcode::kMultiply);

// Whether any of n elements is a NaN (false for non-float types): the largest magnitude's bits
// exceed infinity's (an integer max reduction, which vectorizes).
template <P kT>
inline bool anyNan(const Native<kT>* x, int64_t n) {
  if constexpr (kIsFloat<kT>) {
    using U = std::conditional_t<sizeof(Native<kT>) == 2, uint16_t,
                                 std::conditional_t<sizeof(Native<kT>) == 4, uint32_t, uint64_t>>;
    constexpr U kAbs = static_cast<U>(~U{0} >> 1);
    constexpr U kInf = static_cast<U>(kT == P::kBF16  ? 0x7F80ull
                                      : kT == P::kF16 ? 0x7C00ull
                                      : kT == P::kF32 ? 0x7F800000ull
                                                      : 0x7FF0000000000000ull);
    U top = 0;
    for (int64_t i = 0; i < n; ++i) {
      U bits;
      std::memcpy(&bits, &x[i], sizeof(U));
      top = std::max(top, static_cast<U>(bits & kAbs));
    }
    return top > kInf;
  } else {
    return false;
  }
}

// ---- Comparison --------------------------------------------------------------------------------

// The key that orders floats totally: -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN.
inline int32_t totalOrderKey(float x) {
  int32_t s = std::bit_cast<int32_t>(x);
  return s < 0 ? (s ^ 0x7fffffff) : s;
}
inline int64_t totalOrderKey(double x) {
  int64_t s = std::bit_cast<int64_t>(x);
  return s < 0 ? (s ^ 0x7fffffffffffffffll) : s;
}

template <ComparisonDirection kDir, typename V>
inline bool compareOrdered(V a, V b) {
  using D = ComparisonDirection;
  if constexpr (kDir == D::kEq) return a == b;
  if constexpr (kDir == D::kNe) return a != b;  // unordered for floats: NaN != x
  if constexpr (kDir == D::kLt) return a < b;
  if constexpr (kDir == D::kLe) return a <= b;
  if constexpr (kDir == D::kGt) return a > b;
  if constexpr (kDir == D::kGe) return a >= b;
}

// compare(a, b) with `direction` and `type`: FLOAT is IEEE (NaN compares unequal and unordered),
// TOTALORDER uses totalOrderKey, SIGNED/UNSIGNED compare the integer values of the element type.
template <ComparisonDirection kDir, bool kTotalOrder, P kT>
inline uint8_t compare(Native<kT> a, Native<kT> b) {
  if constexpr (kIsFloat<kT>) {
    Compute<kT> x = load<kT>(a), y = load<kT>(b);
    if constexpr (kTotalOrder) return compareOrdered<kDir>(totalOrderKey(x), totalOrderKey(y));
    return compareOrdered<kDir>(x, y);
  } else {
    return compareOrdered<kDir>(a, b);
  }
}

// ---- Conversion --------------------------------------------------------------------------------

// float -> integer: truncate toward zero, saturate, NaN -> 0 (XLA's fptosi with clamping).
template <typename I>
inline I saturatingFloatToInt(double v) {
  if (std::isnan(v)) return 0;
  constexpr double kMin = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double kMax = static_cast<double>(std::numeric_limits<I>::max());
  if (v <= kMin) return std::numeric_limits<I>::min();
  if (v >= kMax) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

// convert(x) from kFrom to kTo (docs/numerics.md): int->int truncates bits (two's complement),
// float->int truncates toward zero and saturates (NaN -> 0), int->float and narrowing
// float->float round to nearest even; anything -> bf16 goes through f32 (two roundings from f64 or
// 64-bit integers, as XLA's emitter does); f64 -> f16 rounds once; x -> pred is x != 0 (NaN is
// true); pred -> x is 0 or 1.
template <P kFrom, P kTo>
inline Native<kTo> convert(Native<kFrom> x) {
  using To = Native<kTo>;
  if constexpr (kFrom == kTo) {
    return x;
  } else if constexpr (kIsPred<kTo>) {
    if constexpr (kIsFloat<kFrom>) {
      return load<kFrom>(x) != 0 ? 1 : 0;
    } else {
      return x != 0 ? 1 : 0;
    }
  } else if constexpr (kIsPred<kFrom>) {
    return convert<P::kU8, kTo>(x != 0 ? 1 : 0);
  } else if constexpr (kIsInt<kFrom> && kIsInt<kTo>) {
    return static_cast<To>(x);
  } else if constexpr (kIsInt<kFrom>) {  // -> float
    if constexpr (kTo == P::kF64) return static_cast<double>(x);
    return store<kTo>(static_cast<float>(x));
  } else if constexpr (kIsInt<kTo>) {  // float ->
    return saturatingFloatToInt<To>(static_cast<double>(load<kFrom>(x)));
  } else if constexpr (kTo == P::kF64) {
    return static_cast<double>(load<kFrom>(x));
  } else if constexpr (kFrom == P::kF64) {
    if constexpr (kTo == P::kF16) return f64ToF16(x);
    return store<kTo>(static_cast<float>(x));
  } else {
    return store<kTo>(load<kFrom>(x));
  }
}

}  // namespace tacit::hlo::kernels
