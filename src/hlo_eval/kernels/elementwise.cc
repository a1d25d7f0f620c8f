// GCC 12 at -O2 vectorizes only loops its "very cheap" cost model accepts; these loops are the
// evaluator's hot paths. Vectorizing never changes results here: floating-point loops keep their
// order (no -ffast-math, no contraction) and integer sums are modular.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include "hlo_eval/kernels/elementwise.h"

#include <array>
#include <cstring>

#include "hlo_eval/kernels/scalar.h"

namespace tacit::hlo::kernels {
namespace {

using O = HloOpcode;

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

// Per opcode: whether `kernel` has a loop for it on some evaluable element type.
template <typename Fn>
std::array<bool, kOpcodeCount> implementedOn(Fn (*kernel)(HloOpcode, P)) {
  std::array<bool, kOpcodeCount> out{};
  for (size_t i = 0; i < kOpcodeCount; ++i) {
    for (int t = 0; t <= static_cast<int>(P::kTuple) && !out[i]; ++t) {
      auto type = static_cast<P>(t);
      out[i] = isEvaluable(type) && kernel(static_cast<HloOpcode>(i), type) != nullptr;
    }
  }
  return out;
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
  static const std::array<bool, kOpcodeCount> kImplemented = implementedOn(&unaryKernel);
  return kImplemented[static_cast<size_t>(op)];
}

bool isBinaryElementwise(HloOpcode op) {
  static const std::array<bool, kOpcodeCount> kImplemented = implementedOn(&binaryKernel);
  return kImplemented[static_cast<size_t>(op)];
}

// The kernels' switches have a case for every opcode of the table (hlo/opcode.def) and
// instantiate a loop where the opcode's category and scalar.h's unarySupported/binarySupported
// allow it: the category comes from the table, what the evaluator implements from scalar.h.
UnaryFn unaryKernel(HloOpcode op, P t) {
  if (!isEvaluable(t) || !isElementwiseUnary(op)) return nullptr;
  return dispatchEvaluable(t, [&]<P kT>() -> UnaryFn {
    if (op == O::kIsFinite) {
      if constexpr (kIsFloat<kT>) return &isFiniteLoop<kT>;
      return nullptr;
    }
    switch (op) {
#define TACIT_HLO_OPCODE(id, spelling, arity, category)                                            \
  case O::id:                                                                                      \
    if constexpr (isElementwiseUnary(O::id) && O::id != O::kIsFinite && unarySupported<kT>(O::id)) \
      return &unaryLoop<O::id, kT>;                                                                \
    return nullptr;
#include "hlo/opcode.def"
#undef TACIT_HLO_OPCODE
      default:
        return nullptr;
    }
  });
}

BinaryFn binaryKernel(HloOpcode op, P t) {
  if (!isEvaluable(t) || !isElementwiseBinary(op)) return nullptr;
  return dispatchEvaluable(t, [&]<P kT>() -> BinaryFn {
    switch (op) {
#define TACIT_HLO_OPCODE(id, spelling, arity, category)                     \
  case O::id:                                                               \
    if constexpr (isElementwiseBinary(O::id) && binarySupported<kT>(O::id)) \
      return &binaryLoop<O::id, kT>;                                        \
    return nullptr;
#include "hlo/opcode.def"
#undef TACIT_HLO_OPCODE
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
