// GCC 12 at -O2 vectorizes only loops its "very cheap" cost model accepts; these loops are the
// evaluator's hot paths. Vectorizing never changes results here: floating-point loops keep their
// order (no -ffast-math, no contraction) and integer sums are modular.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include "hlo_eval/kernels/elementwise.h"

#include <cstring>

#include "hlo_eval/kernels/scalar.h"

namespace tacit::hlo::kernels {
namespace {

using O = HloOpcode;

// The op lists are laid out by hand: clang-format does not lay these macros out stably.
// clang-format off
#define TACIT_UNARY_OPS(X)                                                              \
  X(kAbs) X(kNegate) X(kSign) X(kNot) X(kPopcnt) X(kCountLeadingZeros) X(kExponential) \
  X(kExponentialMinusOne) X(kLog) X(kLogPlusOne) X(kTanh) X(kLogistic) X(kSqrt)         \
  X(kRsqrt) X(kCbrt) X(kErf) X(kFloor) X(kCeil) X(kRoundNearestAfz)                     \
  X(kRoundNearestEven) X(kSine) X(kCosine)

#define TACIT_BINARY_OPS(X)                                                             \
  X(kAdd) X(kSubtract) X(kMultiply) X(kDivide) X(kRemainder) X(kPower) X(kMaximum)      \
  X(kMinimum) X(kAtan2) X(kAnd) X(kOr) X(kXor) X(kShiftLeft) X(kShiftRightLogical)      \
  X(kShiftRightArithmetic)
// clang-format on

template <O kOp, P kT>
void unaryLoop(const void* x, void* y, int64_t n) {
  const auto* in = static_cast<const Native<kT>*>(x);
  auto* out = static_cast<Native<kT>*>(y);
  for (int64_t i = 0; i < n; ++i)
    out[i] = unary<kOp, kT>(in[i]);
}

template <P kT>
void isFiniteLoop(const void* x, void* y, int64_t n) {
  const auto* in = static_cast<const Native<kT>*>(x);
  auto* out = static_cast<uint8_t*>(y);
  for (int64_t i = 0; i < n; ++i)
    out[i] = isFinite<kT>(in[i]);
}

template <O kOp, P kT>
void binaryLoop(const void* a, const void* b, void* y, int64_t n) {
  const auto* x0 = static_cast<const Native<kT>*>(a);
  const auto* x1 = static_cast<const Native<kT>*>(b);
  auto* out = static_cast<Native<kT>*>(y);
  for (int64_t i = 0; i < n; ++i)
    out[i] = binary<kOp, kT>(x0[i], x1[i]);
}

template <ComparisonDirection kDir, bool kTotal, P kT>
void compareLoop(const void* a, const void* b, void* y, int64_t n) {
  const auto* x0 = static_cast<const Native<kT>*>(a);
  const auto* x1 = static_cast<const Native<kT>*>(b);
  auto* out = static_cast<uint8_t*>(y);
  for (int64_t i = 0; i < n; ++i)
    out[i] = compare<kDir, kTotal, kT>(x0[i], x1[i]);
}

template <P kFrom, P kTo>
void convertLoop(const void* x, void* y, int64_t n) {
  const auto* in = static_cast<const Native<kFrom>*>(x);
  auto* out = static_cast<Native<kTo>*>(y);
  for (int64_t i = 0; i < n; ++i)
    out[i] = convert<kFrom, kTo>(in[i]);
}

// select and clamp only move or compare whole elements; select is type-agnostic.
template <typename E>
void selectLoop(const uint8_t* pred, int64_t ps, const void* t, const void* f, void* y, int64_t n) {
  const auto* a = static_cast<const E*>(t);
  const auto* b = static_cast<const E*>(f);
  auto* out = static_cast<E*>(y);
  if (ps == 0) {  // a scalar predicate picks one operand whole
    std::memmove(out, pred[0] != 0 ? a : b, static_cast<size_t>(n) * sizeof(E));
    return;
  }
  if (ps == 1) {  // unit stride spelled out: the loop vectorizes (masked blends)
    for (int64_t i = 0; i < n; ++i)
      out[i] = pred[i] != 0 ? a[i] : b[i];
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    out[i] = pred[i * ps] != 0 ? a[i] : b[i];
}

// clamp(lo, x, hi) = minimum(hi, maximum(lo, x)), XLA's operand order (it matters for NaN).
template <P kT>
void clampLoop(const void* lo, int64_t ls, const void* x, const void* hi, int64_t hs, void* y,
               int64_t n) {
  const auto* l = static_cast<const Native<kT>*>(lo);
  const auto* v = static_cast<const Native<kT>*>(x);
  const auto* h = static_cast<const Native<kT>*>(hi);
  auto* out = static_cast<Native<kT>*>(y);
  if (ls == 0 && hs == 0) {  // scalar bounds (the usual saturation): the loop vectorizes
    Native<kT> lo0 = l[0], hi0 = h[0];
    for (int64_t i = 0; i < n; ++i)
      out[i] = binary<O::kMinimum, kT>(hi0, binary<O::kMaximum, kT>(lo0, v[i]));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    out[i] = binary<O::kMinimum, kT>(h[i * hs], binary<O::kMaximum, kT>(l[i * ls], v[i]));
  }
}

template <ComparisonDirection kDir>
BinaryFn compareFor(bool total_order, P t) {
  return dispatchEvaluable(t, [&]<P kT>() -> BinaryFn {
    if (total_order) return &compareLoop<kDir, true, kT>;
    return &compareLoop<kDir, false, kT>;
  });
}

}  // namespace

bool isUnaryElementwise(HloOpcode op) {
  switch (op) {
#define TACIT_CASE(o) case O::o:
    TACIT_UNARY_OPS(TACIT_CASE)
#undef TACIT_CASE
    case O::kIsFinite:
      return true;
    default:
      return false;
  }
}

bool isBinaryElementwise(HloOpcode op) {
  switch (op) {
#define TACIT_CASE(o) case O::o:
    TACIT_BINARY_OPS(TACIT_CASE)
#undef TACIT_CASE
    return true;
    default:
      return false;
  }
}

UnaryFn unaryKernel(HloOpcode op, P t) {
  if (!isEvaluable(t)) return nullptr;
  return dispatchEvaluable(t, [&]<P kT>() -> UnaryFn {
    if (op == O::kIsFinite) {
      if constexpr (kIsFloat<kT>) return &isFiniteLoop<kT>;
      return nullptr;
    }
    switch (op) {
#define TACIT_CASE(o)                                                    \
  case O::o:                                                             \
    if constexpr (unarySupported<kT>(O::o)) return &unaryLoop<O::o, kT>; \
    return nullptr;
      TACIT_UNARY_OPS(TACIT_CASE)
#undef TACIT_CASE
      default:
        return nullptr;
    }
  });
}

BinaryFn binaryKernel(HloOpcode op, P t) {
  if (!isEvaluable(t)) return nullptr;
  return dispatchEvaluable(t, [&]<P kT>() -> BinaryFn {
    switch (op) {
#define TACIT_CASE(o)                                                      \
  case O::o:                                                               \
    if constexpr (binarySupported<kT>(O::o)) return &binaryLoop<O::o, kT>; \
    return nullptr;
      TACIT_BINARY_OPS(TACIT_CASE)
#undef TACIT_CASE
      default:
        return nullptr;
    }
  });
}

BinaryFn compareKernel(ComparisonDirection direction, bool total_order, P t) {
  if (!isEvaluable(t)) return nullptr;
  using D = ComparisonDirection;
  switch (direction) {
    case D::kEq:
      return compareFor<D::kEq>(total_order, t);
    case D::kNe:
      return compareFor<D::kNe>(total_order, t);
    case D::kLt:
      return compareFor<D::kLt>(total_order, t);
    case D::kLe:
      return compareFor<D::kLe>(total_order, t);
    case D::kGt:
      return compareFor<D::kGt>(total_order, t);
    case D::kGe:
      return compareFor<D::kGe>(total_order, t);
  }
  return nullptr;
}

UnaryFn convertKernel(P from, P to) {
  if (!isEvaluable(from) || !isEvaluable(to)) return nullptr;
  return dispatchEvaluable(from, [&]<P kFrom>() -> UnaryFn {
    return dispatchEvaluable(to, [&]<P kTo>() -> UnaryFn { return &convertLoop<kFrom, kTo>; });
  });
}

SelectFn selectKernel(P t) {
  switch (byteSize(t)) {
    case 1:
      return &selectLoop<uint8_t>;
    case 2:
      return &selectLoop<uint16_t>;
    case 4:
      return &selectLoop<uint32_t>;
    case 8:
      return &selectLoop<uint64_t>;
    default:
      return nullptr;
  }
}

ClampFn clampKernel(P t) {
  if (!isEvaluable(t)) return nullptr;
  return dispatchEvaluable(t, [&]<P kT>() -> ClampFn {
    if constexpr (binarySupported<kT>(O::kMaximum)) return &clampLoop<kT>;
    return nullptr;
  });
}

}  // namespace tacit::hlo::kernels
