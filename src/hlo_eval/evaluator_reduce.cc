// reduce and reduce-window.
//
// Order (docs/numerics.md): every output starts from its init value and folds in the elements
// of its reduction set one at a time, acc = to_apply(acc, x), in row-major order of the input
// (for reduce-window: row-major order of the window positions). Padding positions of a window
// and holes of a base dilation are skipped. When to_apply is a single elementwise binary op of
// its two parameters (add, multiply, maximum, minimum, and, or, xor), a typed loop applies that
// op's element semantics (e.g. bf16 add: f32 add rounded to bf16 after every element); any other
// computation runs as a compiled sub-plan per element.
#include <algorithm>
#include <cstring>
#include <memory>
#include <type_traits>

#include "hlo_eval/evaluator_plan.h"
#include "hlo_eval/kernels/copy.h"
#include "hlo_eval/kernels/scalar.h"
#include "support/strings.h"

namespace tacit::hlo::detail {
namespace {

using P = PrimitiveType;
using O = HloOpcode;
using kernels::Native;

std::string dimsText(const std::vector<int64_t>& v) {
  return "{" + join(v, ",") + "}";
}

// A binary reducer `ROOT r = op(parameter(0), parameter(1))` (or with the parameters swapped).
struct BinaryReducer {
  O op;
  bool swapped;
};

std::optional<BinaryReducer> matchBinaryReducer(const HloComputation& comp, P type) {
  const HloInstruction* root = comp.root();
  if (root == nullptr || comp.parameterCount() != 2 || root->operandCount() != 2)
    return std::nullopt;
  switch (root->opcode()) {
    case O::kAdd:
    case O::kMultiply:
    case O::kMaximum:
    case O::kMinimum:
    case O::kAnd:
    case O::kOr:
    case O::kXor:
      break;
    default:
      return std::nullopt;
  }
  const HloInstruction *a = root->operand(0), *b = root->operand(1);
  if (a == nullptr || b == nullptr || a->opcode() != O::kParameter ||
      b->opcode() != O::kParameter) {
    return std::nullopt;
  }
  if (!root->shape().compatible(Shape(type, {}))) return std::nullopt;
  bool ok = dispatchEvaluable(type, [&]<P kT>() {
    switch (root->opcode()) {
      case O::kAdd:
        return kernels::binarySupported<kT>(O::kAdd);
      case O::kMultiply:
        return kernels::binarySupported<kT>(O::kMultiply);
      case O::kMaximum:
        return kernels::binarySupported<kT>(O::kMaximum);
      case O::kMinimum:
        return kernels::binarySupported<kT>(O::kMinimum);
      case O::kAnd:
        return kernels::binarySupported<kT>(O::kAnd);
      case O::kOr:
        return kernels::binarySupported<kT>(O::kOr);
      default:
        return kernels::binarySupported<kT>(O::kXor);
    }
  });
  if (!ok) return std::nullopt;
  if (a->parameterNumber() == 0 && b->parameterNumber() == 1)
    return BinaryReducer{root->opcode(), false};
  if (a->parameterNumber() == 1 && b->parameterNumber() == 0)
    return BinaryReducer{root->opcode(), true};
  return std::nullopt;
}

// acc = to_apply(acc, x). kExact false: binaryAnyNanOrder (no fixed operand order when both are
// NaN, fast); the loops that use it recompute with kExact true when a result is NaN.
template <O kOp, P kT, bool kSwap, bool kExact = true>
inline Native<kT> fold(Native<kT> acc, Native<kT> x) {
  if constexpr (!kExact) {
    if constexpr (kSwap) return kernels::binaryAnyNanOrder<kOp, kT>(x, acc);
    return kernels::binaryAnyNanOrder<kOp, kT>(acc, x);
  }
  if constexpr (kSwap) return kernels::binary<kOp, kT>(x, acc);
  return kernels::binary<kOp, kT>(acc, x);
}

// Dispatches (op, type, swapped) to `Fn::template get<kOp, kT, kSwap>()`.
template <typename Fn>
auto dispatchReducer(BinaryReducer r, P type, Fn fn) {
  return dispatchEvaluable(type, [&]<P kT>() {
    auto pick = [&]<O kOp>() {
      if constexpr (kernels::binarySupported<kT>(kOp)) {
        return r.swapped ? fn.template operator()<kOp, kT, true>()
                         : fn.template operator()<kOp, kT, false>();
      } else {
        return decltype(fn.template operator()<O::kAdd, kT, false>()){};
      }
    };
    switch (r.op) {
      case O::kAdd:
        return pick.template operator()<O::kAdd>();
      case O::kMultiply:
        return pick.template operator()<O::kMultiply>();
      case O::kMaximum:
        return pick.template operator()<O::kMaximum>();
      case O::kMinimum:
        return pick.template operator()<O::kMinimum>();
      case O::kAnd:
        return pick.template operator()<O::kAnd>();
      case O::kOr:
        return pick.template operator()<O::kOr>();
      default:
        return pick.template operator()<O::kXor>();
    }
  });
}

// Runs a scalar to_apply sub-plan on N accumulators and N elements, updating the accumulators.
class ScalarCall {
 public:
  ScalarCall(PlanImpl& plan, std::vector<int> elem_sizes)
      : plan_(&plan), elem_(std::move(elem_sizes)) {
    size_t n = elem_.size();
    in_.resize(2 * n);
    out_.resize(n);
    tmp_.resize(n);
  }
  // acc[i] = to_apply(acc..., x...)[i]
  void operator()(uint8_t* const* acc, const uint8_t* const* x) {
    size_t n = elem_.size();
    for (size_t i = 0; i < n; ++i) {
      in_[i] = acc[i];
      in_[n + i] = x[i];
      out_[i] = &tmp_[i];
    }
    plan_->run(in_.data(), in_.size(), out_.data(), n);
    for (size_t i = 0; i < n; ++i)
      std::memcpy(acc[i], &tmp_[i], static_cast<size_t>(elem_[i]));
  }

 private:
  PlanImpl* plan_;
  std::vector<int> elem_;
  std::vector<const void*> in_;
  std::vector<void*> out_;
  std::vector<uint64_t> tmp_;  // one element of each output (at most 8 bytes)
};

// ---- reduce ------------------------------------------------------------------------------------

// The input's loop nest with each merged dimension's input stride and output stride (0 for
// reduced dimensions), outermost first. Walking it in order visits the input row-major.
struct ReduceNest {
  std::vector<int64_t> dims, in_strides, out_strides;
  bool empty = false;  // the input has no elements: nothing to fold
  // When the innermost dimension is reduced and the next one kept: the nest of the dimensions
  // outside those two (rows are then folded several at a time).
  std::shared_ptr<const ReduceNest> rows_outer;
};

ReduceNest makeReduceNest(const Shape& in, const std::vector<bool>& reduced) {
  std::vector<int64_t> is = stridesOf(in), os(static_cast<size_t>(in.rank()), 0);
  int64_t s = 1;
  for (int64_t d = in.rank() - 1; d >= 0; --d) {
    if (!reduced[static_cast<size_t>(d)]) {
      os[static_cast<size_t>(d)] = s;
      s *= in.dim(d);
    }
  }
  ReduceNest n;
  n.empty = in.elementCount() == 0;
  for (int64_t d = 0; d < in.rank(); ++d) {
    int64_t size = in.dim(d), i = is[static_cast<size_t>(d)], o = os[static_cast<size_t>(d)];
    if (size == 1) continue;
    if (!n.dims.empty() && n.in_strides.back() == i * size && n.out_strides.back() == o * size) {
      n.dims.back() *= size;
      n.in_strides.back() = i;
      n.out_strides.back() = o;
      continue;
    }
    n.dims.push_back(size);
    n.in_strides.push_back(i);
    n.out_strides.push_back(o);
  }
  size_t r = n.dims.size();
  if (!n.empty && r >= 2 && n.out_strides[r - 1] == 0 && n.out_strides[r - 2] != 0) {
    auto outer = std::make_shared<ReduceNest>();
    outer->dims.assign(n.dims.begin(), n.dims.end() - 1);
    outer->in_strides.assign(n.in_strides.begin(), n.in_strides.end() - 1);
    outer->out_strides.assign(n.out_strides.begin(), n.out_strides.end() - 1);
    outer->dims.back() = 1;  // the row dimension itself is handled by foldRows
    n.rows_outer = std::move(outer);
  }
  return n;
}

// Calls inner(in_offset, out_offset, count, in_stride, out_stride) for each innermost run.
template <typename Inner>
void walk(const ReduceNest& n, Inner&& inner) {
  size_t r = n.dims.size();
  if (n.empty) return;
  if (r == 0) {
    inner(int64_t{0}, int64_t{0}, int64_t{1}, int64_t{0}, int64_t{0});
    return;
  }
  int64_t idx[64] = {};  // ranks are at most 64 (checked when compiling)
  int64_t io = 0, oo = 0;
  while (true) {
    inner(io, oo, n.dims[r - 1], n.in_strides[r - 1], n.out_strides[r - 1]);
    size_t k = r - 1;
    for (; k-- > 0;) {
      io += n.in_strides[k];
      oo += n.out_strides[k];
      if (++idx[k] < n.dims[k]) break;
      io -= n.in_strides[k] * n.dims[k];
      oo -= n.out_strides[k] * n.dims[k];
      idx[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

// (nest, input, init, output, output element count); the output holds the init values.
using FastReduceFn = void (*)(const ReduceNest&, const uint8_t*, const uint8_t*, uint8_t*, int64_t);

// Folds `rows` independent rows of n elements each into y[oo + r * ros], eight rows at a time so
// that their (sequential, latency-bound) chains overlap; each row keeps its element order.
template <O kOp, P kT, bool kSwap, bool kExact>
void foldRows(const Native<kT>* x, Native<kT>* y, int64_t io, int64_t oo, int64_t rows, int64_t ris,
              int64_t ros, int64_t n, int64_t is) {
  using T = Native<kT>;
  constexpr int64_t kLanes = 8;
  int64_t r0 = 0;
  for (; r0 + kLanes <= rows; r0 += kLanes) {
    T acc[kLanes];
    for (int64_t r = 0; r < kLanes; ++r)
      acc[r] = y[oo + (r0 + r) * ros];
    const T* base = x + io + r0 * ris;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t r = 0; r < kLanes; ++r)
        acc[r] = fold<kOp, kT, kSwap, kExact>(acc[r], base[r * ris + i * is]);
    }
    for (int64_t r = 0; r < kLanes; ++r)
      y[oo + (r0 + r) * ros] = acc[r];
  }
  for (; r0 < rows; ++r0) {
    T acc = y[oo + r0 * ros];
    for (int64_t i = 0; i < n; ++i)
      acc = fold<kOp, kT, kSwap, kExact>(acc, x[io + r0 * ris + i * is]);
    y[oo + r0 * ros] = acc;
  }
}

template <O kOp, P kT, bool kSwap, bool kExact>
void reduceLoops(const ReduceNest& nest, const uint8_t* in, uint8_t* out) {
  using T = Native<kT>;
  const T* x = reinterpret_cast<const T*>(in);
  T* y = reinterpret_cast<T*>(out);
  size_t r = nest.dims.size();
  if (nest.rows_outer) {  // rows reduced along the innermost dimension: several at once
    walk(*nest.rows_outer, [&](int64_t io, int64_t oo, int64_t, int64_t, int64_t) {
      foldRows<kOp, kT, kSwap, kExact>(x, y, io, oo, nest.dims[r - 2], nest.in_strides[r - 2],
                                       nest.out_strides[r - 2], nest.dims[r - 1],
                                       nest.in_strides[r - 1]);
    });
    return;
  }
  walk(nest, [&](int64_t io, int64_t oo, int64_t n, int64_t is, int64_t os) {
    if (os == 0) {
      T acc = y[oo];
      for (int64_t i = 0; i < n; ++i)
        acc = fold<kOp, kT, kSwap, kExact>(acc, x[io + i * is]);
      y[oo] = acc;
    } else {
      for (int64_t i = 0; i < n; ++i)
        y[oo + i * os] = fold<kOp, kT, kSwap, kExact>(y[oo + i * os], x[io + i * is]);
    }
  });
}

// Runs `loops` (called with std::bool_constant<kExact>) for a fold of kOp over kT: where the
// operand order of two NaNs matters (float add and multiply), first without fixing it (fast);
// NaN is absorbing for them, so an output that is not NaN never met two NaN operands and is
// exact. If an output is NaN, `restart` resets the outputs and the loops run again with the order
// fixed (docs/numerics.md).
template <O kOp, P kT, typename Loops, typename Restart>
void foldExactly(const uint8_t* out, int64_t out_count, Loops loops, Restart restart) {
  if constexpr (kernels::kNanOrderMatters<kOp, kT>) {
    loops(std::false_type{});
    if (!kernels::anyNan<kT>(reinterpret_cast<const Native<kT>*>(out), out_count)) return;
    restart();
  }
  loops(std::true_type{});
}

// The typed reduce (foldExactly).
template <O kOp, P kT, bool kSwap>
void fastReduce(const ReduceNest& nest, const uint8_t* in, const uint8_t* init, uint8_t* out,
                int64_t out_count) {
  foldExactly<kOp, kT>(
      out, out_count,
      [&](auto exact) { reduceLoops<kOp, kT, kSwap, decltype(exact)::value>(nest, in, out); },
      [&] { kernels::fillElements(out, out_count, sizeof(Native<kT>), init); });
}

class ReduceStep final : public Step {
 public:
  ReduceStep(ReduceNest nest, std::vector<int> inputs, std::vector<int> inits,
             std::vector<int> outs, std::vector<int> elem, int64_t out_count, FastReduceFn fast,
             PlanImpl* body)
      : nest_(std::move(nest)),
        inputs_(std::move(inputs)),
        inits_(std::move(inits)),
        outs_(std::move(outs)),
        elem_(std::move(elem)),
        out_count_(out_count),
        fast_(fast),
        body_(body) {}
  void allocate() override {
    if (fast_ == nullptr) call_.emplace(*body_, elem_);
    acc_.resize(inputs_.size());
    x_.resize(inputs_.size());
  }
  void run(uint8_t* const* slots) override {
    for (size_t i = 0; i < outs_.size(); ++i) {
      kernels::fillElements(slots[outs_[i]], out_count_, elem_[i], slots[inits_[i]]);
    }
    if (fast_ != nullptr) {
      fast_(nest_, slots[inputs_[0]], slots[inits_[0]], slots[outs_[0]], out_count_);
      return;
    }
    size_t n = inputs_.size();
    walk(nest_, [&](int64_t io, int64_t oo, int64_t count, int64_t is, int64_t os) {
      for (int64_t i = 0; i < count; ++i) {
        for (size_t j = 0; j < n; ++j) {
          acc_[j] = slots[outs_[j]] + (oo + i * os) * elem_[j];
          x_[j] = slots[inputs_[j]] + (io + i * is) * elem_[j];
        }
        (*call_)(acc_.data(), x_.data());
      }
    });
  }

 private:
  ReduceNest nest_;
  std::vector<int> inputs_, inits_, outs_, elem_;
  int64_t out_count_;
  FastReduceFn fast_;
  PlanImpl* body_;
  std::optional<ScalarCall> call_;
  std::vector<uint8_t*> acc_;
  std::vector<const uint8_t*> x_;
};

// Validates the operands of reduce / reduce-window: N arrays of equal dims, then N scalar inits of
// the same element types, and a to_apply computation (acc..., x...) -> acc.
struct Variadic {
  size_t n = 0;
  std::vector<P> types;
  std::vector<int> elem;
};

Variadic checkVariadic(const Planner& p, const HloInstruction& inst, std::span<const Value> ops,
                       const HloComputation& body) {
  if (ops.empty() || ops.size() % 2 != 0) {
    p.fail(inst, "expects N inputs followed by N init values, got " +
                     plural(static_cast<int64_t>(ops.size()), "operand"));
  }
  Variadic v;
  v.n = ops.size() / 2;
  for (size_t i = 0; i < v.n; ++i) {
    const Value &in = ops[i], &init = ops[v.n + i];
    requireEvaluableArray(p, inst, in.shape, "input");
    if (in.shape.dims() != ops[0].shape.dims()) p.fail(inst, "inputs must have equal dimensions");
    if (!init.shape.isScalar() || init.shape.elementType() != in.shape.elementType()) {
      p.fail(inst, "init value " + std::to_string(i) + " must be a scalar " +
                       std::string(primitiveTypeName(in.shape.elementType())));
    }
    v.types.push_back(in.shape.elementType());
    v.elem.push_back(byteSize(in.shape.elementType()));
  }
  std::vector<P> params = v.types;
  params.insert(params.end(), v.types.begin(), v.types.end());
  requireScalarComputation(p, inst, body, params, v.types);
  return v;
}

Shape resultOf(const Variadic& v, const std::vector<int64_t>& dims) {
  if (v.n == 1) return Shape(v.types[0], dims);
  std::vector<Shape> shapes;
  for (P t : v.types)
    shapes.emplace_back(t, dims);
  return Shape::tuple(shapes);
}

// ---- reduce-window -----------------------------------------------------------------------------

// For each dimension and output coordinate, the input offsets (elements) of the valid window
// positions in window order; an output element folds the row-major product of its dimensions'
// lists.
struct WindowTable {
  std::vector<int64_t> out_dims;
  std::vector<std::vector<std::vector<int64_t>>> offsets;  // [dim][out coord] -> offsets
};

template <typename Visit>
void forEachWindowElement(const WindowTable& t, const int64_t* o, Visit&& visit) {
  size_t r = t.out_dims.size();
  if (r == 0) {
    visit(int64_t{0});
    return;
  }
  const std::vector<int64_t>* lists[64];
  for (size_t d = 0; d < r; ++d) {
    lists[d] = &t.offsets[d][static_cast<size_t>(o[d])];
    if (lists[d]->empty()) return;
  }
  size_t idx[64] = {};
  int64_t base = 0;
  for (size_t d = 0; d + 1 < r; ++d)
    base += (*lists[d])[0];
  while (true) {
    for (int64_t off : *lists[r - 1])
      visit(base + off);
    size_t k = r - 1;
    for (; k-- > 0;) {
      base -= (*lists[k])[idx[k]];
      if (++idx[k] < lists[k]->size()) {
        base += (*lists[k])[idx[k]];
        break;
      }
      idx[k] = 0;
      base += (*lists[k])[0];
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

template <typename Visit>
void forEachOutput(const std::vector<int64_t>& dims, Visit&& visit) {
  int64_t count = 1;
  for (int64_t d : dims)
    count *= d;
  int64_t o[64] = {};
  for (int64_t i = 0; i < count; ++i) {
    visit(i, static_cast<const int64_t*>(o));
    for (size_t d = dims.size(); d-- > 0;) {
      if (++o[d] < dims[d]) break;
      o[d] = 0;
    }
  }
}

using FastWindowFn = void (*)(const WindowTable&, const uint8_t* in, const uint8_t* init,
                              uint8_t* out);

template <O kOp, P kT, bool kSwap, bool kExact>
void windowLoops(const WindowTable& t, const uint8_t* in, const uint8_t* init, uint8_t* out) {
  using T = Native<kT>;
  const T* x = reinterpret_cast<const T*>(in);
  T* y = reinterpret_cast<T*>(out);
  T start;
  std::memcpy(&start, init, sizeof(T));
  forEachOutput(t.out_dims, [&](int64_t i, const int64_t* o) {
    T acc = start;
    forEachWindowElement(t, o,
                         [&](int64_t off) { acc = fold<kOp, kT, kSwap, kExact>(acc, x[off]); });
    y[i] = acc;
  });
}

// The typed reduce-window (foldExactly; every window starts from `init`, so nothing to reset).
template <O kOp, P kT, bool kSwap>
void fastWindow(const WindowTable& t, const uint8_t* in, const uint8_t* init, uint8_t* out) {
  int64_t count = 1;
  for (int64_t d : t.out_dims)
    count *= d;
  foldExactly<kOp, kT>(
      out, count,
      [&](auto exact) { windowLoops<kOp, kT, kSwap, decltype(exact)::value>(t, in, init, out); },
      [] {});
}

class ReduceWindowStep final : public Step {
 public:
  ReduceWindowStep(WindowTable table, std::vector<int> inputs, std::vector<int> inits,
                   std::vector<int> outs, std::vector<int> elem, FastWindowFn fast, PlanImpl* body)
      : t_(std::move(table)),
        inputs_(std::move(inputs)),
        inits_(std::move(inits)),
        outs_(std::move(outs)),
        elem_(std::move(elem)),
        fast_(fast),
        body_(body) {}
  void allocate() override {
    if (fast_ == nullptr) call_.emplace(*body_, elem_);
    acc_.resize(inputs_.size());
    x_.resize(inputs_.size());
  }
  void run(uint8_t* const* slots) override {
    if (fast_ != nullptr) {
      fast_(t_, slots[inputs_[0]], slots[inits_[0]], slots[outs_[0]]);
      return;
    }
    size_t n = inputs_.size();
    std::vector<uint8_t*>& acc = acc_;
    std::vector<const uint8_t*>& x = x_;
    forEachOutput(t_.out_dims, [&](int64_t i, const int64_t* o) {
      for (size_t j = 0; j < n; ++j) {
        acc[j] = slots[outs_[j]] + i * elem_[j];
        std::memcpy(acc[j], slots[inits_[j]], static_cast<size_t>(elem_[j]));
      }
      forEachWindowElement(t_, o, [&](int64_t off) {
        for (size_t j = 0; j < n; ++j)
          x[j] = slots[inputs_[j]] + off * elem_[j];
        (*call_)(acc.data(), x.data());
      });
    });
  }

 private:
  WindowTable t_;
  std::vector<int> inputs_, inits_, outs_, elem_;
  FastWindowFn fast_;
  PlanImpl* body_;
  std::optional<ScalarCall> call_;
  std::vector<uint8_t*> acc_;
  std::vector<const uint8_t*> x_;
};

// The reducer of a reduce / reduce-window: operand types, the compiled body, and the typed fast
// path when the body is a single binary op.
struct Reducer {
  Variadic v;
  PlanImpl* body = nullptr;
  FastReduceFn fast_reduce = nullptr;
  FastWindowFn fast_window = nullptr;
};

Reducer makeReducer(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  const HloComputation& body = calledComputation(p, inst, "to_apply");
  Reducer r;
  r.v = checkVariadic(p, inst, ops, body);
  r.body = &p.compileSubPlan(body);  // also validates the body when the fast path is taken
  if (r.v.n == 1) {
    if (std::optional<BinaryReducer> b = matchBinaryReducer(body, r.v.types[0])) {
      r.fast_reduce = dispatchReducer(
          *b, r.v.types[0],
          []<O kOp, P kT, bool kSwap>() -> FastReduceFn { return &fastReduce<kOp, kT, kSwap>; });
      r.fast_window = dispatchReducer(
          *b, r.v.types[0],
          []<O kOp, P kT, bool kSwap>() -> FastWindowFn { return &fastWindow<kOp, kT, kSwap>; });
    }
  }
  return r;
}

// Validates a window over `in` and tabulates it.
WindowTable makeWindowTable(const Planner& p, const HloInstruction& inst, const Shape& in,
                            const std::vector<WindowDim>& window) {
  if (static_cast<int64_t>(window.size()) != in.rank()) {
    p.fail(inst, "window= needs one entry per dimension of " + in.shortStr());
  }
  WindowTable t;
  std::vector<int64_t> strides = stridesOf(in);
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDim& w = window[d];
    if (w.size < 1 || w.stride < 1 || w.lhs_dilation < 1 || w.rhs_dilation < 1 || w.reversal) {
      p.fail(inst, "window dimension " + std::to_string(d) +
                       " is invalid (sizes, strides and "
                       "dilations must be >= 1, no reversal)");
    }
    int64_t n = in.dim(static_cast<int64_t>(d));
    int64_t dilated = n == 0 ? 0 : (n - 1) * w.lhs_dilation + 1;
    int64_t padded = dilated + w.pad_lo + w.pad_hi;
    int64_t span = (w.size - 1) * w.rhs_dilation + 1;
    int64_t out = padded < span ? 0 : (padded - span) / w.stride + 1;
    t.out_dims.push_back(out);
    std::vector<std::vector<int64_t>> lists(static_cast<size_t>(out));
    for (int64_t o = 0; o < out; ++o) {
      for (int64_t k = 0; k < w.size; ++k) {
        int64_t pos = o * w.stride + k * w.rhs_dilation - w.pad_lo;
        if (pos < 0 || pos % w.lhs_dilation != 0 || pos / w.lhs_dilation >= n) continue;
        lists[static_cast<size_t>(o)].push_back((pos / w.lhs_dilation) * strides[d]);
      }
    }
    t.offsets.push_back(std::move(lists));
  }
  return t;
}

Value emitReduceWindow(Planner& p, const Reducer& r, const std::vector<int>& inputs,
                       const std::vector<int>& inits, WindowTable t, const Shape& result) {
  Value out = p.newTemp(result);
  p.addStep(std::make_unique<ReduceWindowStep>(std::move(t), inputs, inits, out.leaves, r.v.elem,
                                               r.fast_window, r.body));
  return out;
}

// XLA's CPU pipeline runs TreeReductionRewriter (window 32) to a fixed point on every
// single-output reduce outside fusion computations: a reduce whose reduced dimensions include one
// longer than 32 becomes a reduce-window (window min(n, 32) and equal stride on each reduced
// dimension, SAME padding: floor/ceil halves of the missing elements, skipped) followed by the same
// reduce of the partial results, which may in turn be rewritten.
constexpr int64_t kTreeWindow = 32;

// Without padding, the tree's windows tile each reduced dimension exactly: the reduce-window is
// then a reduce of the input viewed as [..., n/w, w, ...] over the w parts, which visits each
// window's elements in the same (row-major) order with a faster loop nest.
bool splitWindows(const Shape& in, const std::vector<WindowDim>& window,
                  const std::vector<bool>& reduced) {
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (reduced[static_cast<size_t>(d)] &&
        window[static_cast<size_t>(d)].pad_lo + window[static_cast<size_t>(d)].pad_hi != 0) {
      return false;
    }
  }
  return true;
}

Value emitReduceOf(Planner& p, const Reducer& r, const std::vector<int>& inputs,
                   const std::vector<int>& inits, const Shape& in, const std::vector<bool>& reduced,
                   const Shape& result);

Value emitSplitReduce(Planner& p, const Reducer& r, const std::vector<int>& inputs,
                      const std::vector<int>& inits, const Shape& in,
                      const std::vector<WindowDim>& window, const std::vector<bool>& reduced,
                      const Shape& mid) {
  std::vector<int64_t> dims;
  std::vector<bool> split_reduced;
  for (int64_t d = 0; d < in.rank(); ++d) {
    auto i = static_cast<size_t>(d);
    if (reduced[i]) {
      dims.push_back(in.dim(d) / window[i].size);
      split_reduced.push_back(false);
      dims.push_back(window[i].size);
      split_reduced.push_back(true);
    } else {
      dims.push_back(in.dim(d));
      split_reduced.push_back(false);
    }
  }
  return emitReduceOf(p, r, inputs, inits, Shape(in.elementType(), dims), split_reduced, mid);
}

Value emitReduce(Planner& p, const HloInstruction& inst, const Reducer& r,
                 const std::vector<int>& inputs, const std::vector<int>& inits, const Shape& in,
                 const std::vector<bool>& reduced, const Shape& result) {
  bool tree = r.v.n == 1 && !p.inFusion();
  bool long_dim = false;
  for (int64_t d = 0; d < in.rank(); ++d) {
    long_dim |= reduced[static_cast<size_t>(d)] && in.dim(d) > kTreeWindow;
  }
  if (tree && long_dim) {
    std::vector<WindowDim> window(static_cast<size_t>(in.rank()));
    for (int64_t d = 0; d < in.rank(); ++d) {
      WindowDim& w = window[static_cast<size_t>(d)];
      int64_t n = in.dim(d);
      if (reduced[static_cast<size_t>(d)]) {
        w.size = w.stride = std::max<int64_t>(std::min(n, kTreeWindow), 1);
        int64_t out = (n + w.stride - 1) / w.stride;
        int64_t pad = std::max<int64_t>((out - 1) * w.stride + w.size - n, 0);
        w.pad_lo = pad / 2;
        w.pad_hi = pad - pad / 2;
      }
    }
    WindowTable t = makeWindowTable(p, inst, in, window);
    Shape mid(in.elementType(), t.out_dims);
    Value partial = splitWindows(in, window, reduced)
                        ? emitSplitReduce(p, r, inputs, inits, in, window, reduced, mid)
                        : emitReduceWindow(p, r, inputs, inits, std::move(t), mid);
    return emitReduce(p, inst, r, partial.leaves, inits, mid, reduced, result);
  }
  return emitReduceOf(p, r, inputs, inits, in, reduced, result);
}

// A plain reduce (no tree rewrite) of `in` over the `reduced` dimensions.
Value emitReduceOf(Planner& p, const Reducer& r, const std::vector<int>& inputs,
                   const std::vector<int>& inits, const Shape& in, const std::vector<bool>& reduced,
                   const Shape& result) {
  Value out = p.newTemp(result);
  int64_t out_count = 1;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)]) out_count *= in.dim(d);
  }
  p.addStep(std::make_unique<ReduceStep>(makeReduceNest(in, reduced), inputs, inits, out.leaves,
                                         r.v.elem, out_count, r.fast_reduce, r.body));
  return out;
}

std::vector<int> slotsOf(std::span<const Value> values) {
  std::vector<int> out;
  for (const Value& v : values)
    out.push_back(v.slot());
  return out;
}

}  // namespace

Value compileReduce(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  Reducer r = makeReducer(p, inst, ops);
  const Shape& in = ops[0].shape;
  if (!inst.attrs().dimensions) p.fail(inst, "missing dimensions=");
  const std::vector<int64_t>& rdims = *inst.attrs().dimensions;
  std::vector<bool> reduced(static_cast<size_t>(in.rank()), false);
  for (int64_t d : rdims) {
    if (d < 0 || d >= in.rank() || reduced[static_cast<size_t>(d)]) {
      p.fail(inst,
             "dimensions=" + dimsText(rdims) + " are not distinct dimensions of " + in.shortStr());
    }
    reduced[static_cast<size_t>(d)] = true;
  }
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < in.rank(); ++d) {
    if (!reduced[static_cast<size_t>(d)]) kept.push_back(in.dim(d));
  }
  requireResultShape(p, inst, resultOf(r.v, kept));
  size_t n = r.v.n;
  Value out = emitReduce(p, inst, r, slotsOf(ops.subspan(0, n)), slotsOf(ops.subspan(n, n)), in,
                         reduced, inst.shape());
  out.shape = inst.shape();
  return out;
}

Value compileReduceWindow(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  Reducer r = makeReducer(p, inst, ops);
  const Shape& in = ops[0].shape;
  std::vector<WindowDim> window = inst.attrs().window.value_or(std::vector<WindowDim>{});
  if (window.empty() && in.rank() > 0) window.assign(static_cast<size_t>(in.rank()), WindowDim{});
  WindowTable t = makeWindowTable(p, inst, in, window);
  requireResultShape(p, inst, resultOf(r.v, t.out_dims));
  size_t n = r.v.n;
  Value out = emitReduceWindow(p, r, slotsOf(ops.subspan(0, n)), slotsOf(ops.subspan(n, n)),
                               std::move(t), inst.shape());
  return out;
}

}  // namespace tacit::hlo::detail
