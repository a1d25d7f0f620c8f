// Control flow and computations applied per element: while, conditional, map, sort.
#include <algorithm>
#include <cstring>

#include "hlo_eval/evaluator_plan.h"
#include "hlo_eval/kernels/elementwise.h"
#include "hlo_eval/kernels/scalar.h"
#include "support/strings.h"

namespace tacit::hlo::detail {
namespace {

using P = PrimitiveType;

std::vector<size_t> leafBytes(const PlanImpl& plan, const std::vector<int>& slots) {
  std::vector<size_t> bytes;
  for (int s : slots)
    bytes.push_back(plan.slot_info[static_cast<size_t>(s)].bytes);
  return bytes;
}

// ---- while -------------------------------------------------------------------------------------

class WhileStep final : public Step {
 public:
  WhileStep(Where where, int64_t cap, PlanImpl* cond, PlanImpl* body, std::vector<int> init,
            std::vector<int> out, std::vector<size_t> bytes)
      : where_(std::move(where)),
        cap_(cap),
        cond_(cond),
        body_(body),
        init_(std::move(init)),
        out_(std::move(out)),
        bytes_(std::move(bytes)) {}

  void allocate() override {
    for (auto* buffers : {&a_, &b_}) {
      for (size_t b : bytes_)
        buffers->emplace_back(std::max<size_t>(b, 1));
    }
    in_.resize(bytes_.size());
    next_.resize(bytes_.size());
  }

  void run(uint8_t* const* slots) override {
    for (size_t i = 0; i < bytes_.size(); ++i) {
      if (bytes_[i]) std::memcpy(a_[i].data(), slots[init_[i]], bytes_[i]);
    }
    std::vector<AlignedBytes>* cur = &a_;
    std::vector<AlignedBytes>* nxt = &b_;
    for (int64_t iteration = 0;; ++iteration) {
      for (size_t i = 0; i < bytes_.size(); ++i) {
        in_[i] = (*cur)[i].data();
        next_[i] = (*nxt)[i].data();
      }
      uint8_t keep_going = 0;
      void* pred_out = &keep_going;
      cond_->run(in_.data(), in_.size(), &pred_out, 1);
      if (keep_going == 0) break;
      if (iteration >= cap_) {
        where_.fail("the loop did not finish within " + std::to_string(cap_) + " iterations",
                    "raise EvalOptions::max_while_iterations if the loop is meant to run longer");
      }
      body_->run(in_.data(), in_.size(), next_.data(), next_.size());
      std::swap(cur, nxt);
    }
    for (size_t i = 0; i < bytes_.size(); ++i) {
      if (bytes_[i]) std::memcpy(slots[out_[i]], (*cur)[i].data(), bytes_[i]);
    }
  }

 private:
  Where where_;
  int64_t cap_;
  PlanImpl *cond_, *body_;
  std::vector<int> init_, out_;
  std::vector<size_t> bytes_;
  std::vector<AlignedBytes> a_, b_;
  std::vector<const void*> in_;
  std::vector<void*> next_;
};

// ---- conditional -------------------------------------------------------------------------------

class ConditionalStep final : public Step {
 public:
  ConditionalStep(int index, P index_type, std::vector<PlanImpl*> branches,
                  std::vector<std::vector<int>> args, std::vector<int> out)
      : index_(index),
        index_type_(index_type),
        branches_(std::move(branches)),
        args_(std::move(args)),
        out_(std::move(out)) {}
  void allocate() override {
    outputs_.resize(out_.size());
    inputs_.resize(args_.size());
    for (size_t b = 0; b < args_.size(); ++b)
      inputs_[b].resize(args_[b].size());
  }
  void run(uint8_t* const* slots) override {
    size_t b;
    if (index_type_ == P::kPred) {
      b = slots[index_][0] != 0 ? 0 : 1;  // true_computation first
    } else {
      int32_t i;
      std::memcpy(&i, slots[index_], sizeof(i));
      // XLA: an out-of-range branch index runs the last branch.
      b = (i < 0 || static_cast<size_t>(i) >= branches_.size()) ? branches_.size() - 1
                                                                : static_cast<size_t>(i);
    }
    for (size_t i = 0; i < args_[b].size(); ++i)
      inputs_[b][i] = slots[args_[b][i]];
    for (size_t i = 0; i < out_.size(); ++i)
      outputs_[i] = slots[out_[i]];
    branches_[b]->run(inputs_[b].data(), inputs_[b].size(), outputs_.data(), outputs_.size());
  }

 private:
  int index_;
  P index_type_;
  std::vector<PlanImpl*> branches_;
  std::vector<std::vector<int>> args_;
  std::vector<int> out_;
  std::vector<std::vector<const void*>> inputs_;
  std::vector<void*> outputs_;
};

std::vector<const HloComputation*> branchComputations(const Planner& p, const HloInstruction& inst,
                                                      bool pred_index) {
  std::vector<const HloComputation*> out;
  if (pred_index) {
    out.push_back(&calledComputation(p, inst, "true_computation"));
    out.push_back(&calledComputation(p, inst, "false_computation"));
    return out;
  }
  for (const CalledComputations& c : inst.attrs().called) {
    if (c.attribute != "branch_computations") continue;
    for (const HloComputation* comp : c.computations) {
      if (comp == nullptr) p.fail(inst, "branch_computations names an undefined computation");
      out.push_back(comp);
    }
  }
  if (out.empty()) p.fail(inst, "missing branch_computations=");
  return out;
}

// ---- map ---------------------------------------------------------------------------------------

class MapStep final : public Step {
 public:
  MapStep(PlanImpl* body, std::vector<int> inputs, std::vector<int> elem, int out, int out_elem,
          int64_t count)
      : body_(body),
        inputs_(std::move(inputs)),
        elem_(std::move(elem)),
        out_(out),
        out_elem_(out_elem),
        count_(count) {}
  void allocate() override { args_.resize(inputs_.size()); }
  void run(uint8_t* const* slots) override {
    for (int64_t e = 0; e < count_; ++e) {
      for (size_t i = 0; i < inputs_.size(); ++i)
        args_[i] = slots[inputs_[i]] + e * elem_[i];
      void* result = slots[out_] + e * out_elem_;
      body_->run(args_.data(), args_.size(), &result, 1);
    }
  }

 private:
  PlanImpl* body_;
  std::vector<int> inputs_, elem_;
  int out_, out_elem_;
  int64_t count_;
  std::vector<const void*> args_;
};

// ---- sort --------------------------------------------------------------------------------------

// Bottom-up merge sort of indices: stable, O(n log n) comparisons, and safe (no out-of-range
// access) even if the comparator is not a strict weak order.
template <typename Less>
void mergeSort(int64_t* idx, int64_t* tmp, int64_t n, Less&& less) {
  int64_t* src = idx;
  int64_t* dst = tmp;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        dst[k++] = less(src[j], src[i]) ? src[j++] : src[i++];
      while (i < mid)
        dst[k++] = src[i++];
      while (j < hi)
        dst[k++] = src[j++];
    }
    std::swap(src, dst);
  }
  if (src != idx) std::copy(src, src + n, idx);
}

using FastLessFn = bool (*)(const uint8_t* keys, int64_t stride, int64_t i, int64_t j);

template <ComparisonDirection kDir, bool kTotal, P kT>
bool fastLess(const uint8_t* keys, int64_t stride, int64_t i, int64_t j) {
  const auto* k = reinterpret_cast<const kernels::Native<kT>*>(keys);
  return kernels::compare<kDir, kTotal, kT>(k[i * stride], k[j * stride]) != 0;
}

// A comparator `ROOT c = compare(parameter(0), parameter(1)), direction=LT|GT` on operand 0.
FastLessFn matchFastComparator(const HloComputation& comp, P type) {
  const HloInstruction* root = comp.root();
  if (root == nullptr || root->opcode() != HloOpcode::kCompare || root->operandCount() != 2)
    return nullptr;
  const HloInstruction *a = root->operand(0), *b = root->operand(1);
  if (a == nullptr || b == nullptr || a->opcode() != HloOpcode::kParameter ||
      b->opcode() != HloOpcode::kParameter || a->parameterNumber() != 0 ||
      b->parameterNumber() != 1 || !root->attrs().direction) {
    return nullptr;
  }
  ComparisonDirection dir = *root->attrs().direction;
  bool total = root->attrs().comparison_type == ComparisonType::kTotalOrder;
  if (total && !isFloat(type)) return nullptr;
  return dispatchEvaluable(type, [&]<P kT>() -> FastLessFn {
    if (dir == ComparisonDirection::kLt) {
      return total ? &fastLess<ComparisonDirection::kLt, true, kT>
                   : &fastLess<ComparisonDirection::kLt, false, kT>;
    }
    if (dir == ComparisonDirection::kGt) {
      return total ? &fastLess<ComparisonDirection::kGt, true, kT>
                   : &fastLess<ComparisonDirection::kGt, false, kT>;
    }
    return nullptr;
  });
}

class SortStep final : public Step {
 public:
  SortStep(PlanImpl* comparator, FastLessFn fast, std::vector<int> inputs, std::vector<int> outs,
           std::vector<int> elem, std::vector<int64_t> row_offsets, int64_t length, int64_t stride)
      : cmp_(comparator),
        fast_(fast),
        inputs_(std::move(inputs)),
        outs_(std::move(outs)),
        elem_(std::move(elem)),
        rows_(std::move(row_offsets)),
        n_(length),
        stride_(stride) {}
  void allocate() override {
    idx_.resize(static_cast<size_t>(n_));
    tmp_.resize(static_cast<size_t>(n_));
    args_.resize(2 * inputs_.size());
  }
  void run(uint8_t* const* slots) override {
    for (int64_t row : rows_) {
      for (int64_t k = 0; k < n_; ++k)
        idx_[static_cast<size_t>(k)] = k;
      if (fast_ != nullptr) {
        const uint8_t* keys = slots[inputs_[0]] + row * elem_[0];
        mergeSort(idx_.data(), tmp_.data(), n_,
                  [&](int64_t i, int64_t j) { return fast_(keys, stride_, i, j); });
      } else {
        mergeSort(idx_.data(), tmp_.data(), n_,
                  [&](int64_t i, int64_t j) { return less(slots, row, i, j); });
      }
      for (size_t o = 0; o < inputs_.size(); ++o) {
        const uint8_t* src = slots[inputs_[o]] + row * elem_[o];
        uint8_t* dst = slots[outs_[o]] + row * elem_[o];
        auto e = static_cast<size_t>(elem_[o]);
        for (int64_t k = 0; k < n_; ++k) {
          std::memcpy(dst + k * stride_ * elem_[o],
                      src + idx_[static_cast<size_t>(k)] * stride_ * elem_[o], e);
        }
      }
    }
  }

 private:
  bool less(uint8_t* const* slots, int64_t row, int64_t i, int64_t j) {
    for (size_t o = 0; o < inputs_.size(); ++o) {
      const uint8_t* base = slots[inputs_[o]] + row * elem_[o];
      args_[2 * o] = base + i * stride_ * elem_[o];
      args_[2 * o + 1] = base + j * stride_ * elem_[o];
    }
    uint8_t result = 0;
    void* out = &result;
    cmp_->run(args_.data(), args_.size(), &out, 1);
    return result != 0;
  }

  PlanImpl* cmp_;
  FastLessFn fast_;
  std::vector<int> inputs_, outs_, elem_;
  std::vector<int64_t> rows_;
  int64_t n_, stride_;
  std::vector<int64_t> idx_, tmp_;
  std::vector<const void*> args_;
};

}  // namespace

Value compileWhile(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (ops.size() != 1)
    p.fail(inst, "expects 1 operand (the loop state), got " + std::to_string(ops.size()));
  const HloComputation& cond = calledComputation(p, inst, "condition");
  const HloComputation& body = calledComputation(p, inst, "body");
  const Shape& state = ops[0].shape;
  requireResultShape(p, inst, state);
  for (const HloComputation* c : {&cond, &body}) {
    if (c->parameterCount() != 1 || c->parameter(0) == nullptr ||
        !c->parameter(0)->shape().compatible(state)) {
      p.fail(inst, "computation '" + c->name() + "' must take the loop state " + state.shortStr());
    }
  }
  PlanImpl& cp = p.compileSubPlan(cond);
  if (!cp.result_shape.compatible(Shape(P::kPred, {}))) {
    p.fail(inst, "condition '" + cond.name() + "' must return pred[], returns " +
                     cp.result_shape.shortStr());
  }
  PlanImpl& bp = p.compileSubPlan(body);
  if (!bp.result_shape.compatible(state)) {
    p.fail(inst, "body '" + body.name() + "' must return the loop state " + state.shortStr() +
                     ", returns " + bp.result_shape.shortStr());
  }
  Value out = p.newTemp(inst.shape());
  p.addStep(std::make_unique<WhileStep>(p.where(inst), p.options().max_while_iterations, &cp, &bp,
                                        ops[0].leaves, out.leaves,
                                        leafBytes(p.plan(), out.leaves)));
  return out;
}

Value compileConditional(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (ops.empty()) p.fail(inst, "expects a branch index and branch operands");
  const Shape& index = ops[0].shape;
  bool pred = index.compatible(Shape(P::kPred, {}));
  if (!pred && !index.compatible(Shape(P::kS32, {}))) {
    p.fail(inst, "the branch index must be pred[] or s32[], got " + index.shortStr());
  }
  std::vector<const HloComputation*> comps = branchComputations(p, inst, pred);
  if (ops.size() != comps.size() + 1) {
    p.fail(inst, "expects one operand per branch (" + std::to_string(comps.size()) +
                     ") after the index, got " + std::to_string(ops.size() - 1));
  }
  std::vector<PlanImpl*> plans;
  std::vector<std::vector<int>> args;
  for (size_t b = 0; b < comps.size(); ++b) {
    const HloComputation& c = *comps[b];
    const Value& arg = ops[b + 1];
    if (c.parameterCount() != 1 || c.parameter(0) == nullptr ||
        !c.parameter(0)->shape().compatible(arg.shape)) {
      p.fail(inst,
             "branch '" + c.name() + "' must take one parameter of shape " + arg.shape.shortStr());
    }
    PlanImpl& bp = p.compileSubPlan(c);
    if (!bp.result_shape.compatible(inst.shape())) {
      p.fail(inst, "branch '" + c.name() + "' returns " + bp.result_shape.shortStr() +
                       ", expected " + inst.shape().shortStr());
    }
    plans.push_back(&bp);
    args.push_back(arg.leaves);
  }
  Value out = p.newTemp(inst.shape());
  p.addStep(std::make_unique<ConditionalStep>(ops[0].slot(), index.elementType(), std::move(plans),
                                              std::move(args), out.leaves));
  return out;
}

Value compileMap(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (ops.empty()) p.fail(inst, "expects at least one operand");
  const HloComputation& body = calledComputation(p, inst, "to_apply");
  requireEvaluableArray(p, inst, inst.shape(), "result");
  std::vector<P> params;
  std::vector<int> inputs, elem;
  for (const Value& v : ops) {
    requireEvaluableArray(p, inst, v.shape, "operand");
    if (v.shape.dims() != inst.shape().dims()) {
      p.fail(inst, "operand " + v.shape.shortStr() + " does not have the result's dimensions");
    }
    params.push_back(v.shape.elementType());
    inputs.push_back(v.slot());
    elem.push_back(byteSize(v.shape.elementType()));
  }
  if (inst.attrs().dimensions) {
    std::vector<int64_t> all(static_cast<size_t>(inst.shape().rank()));
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = static_cast<int64_t>(i);
    if (*inst.attrs().dimensions != all)
      p.fail(inst, "map dimensions= must list every dimension in order");
  }
  P out_type = inst.shape().elementType();
  requireScalarComputation(p, inst, body, params, std::span<const P>(&out_type, 1));
  PlanImpl& sub = p.compileSubPlan(body);
  Value out = p.newTemp(inst.shape());
  p.addStep(std::make_unique<MapStep>(&sub, inputs, elem, out.slot(), byteSize(out_type),
                                      inst.shape().elementCount()));
  return out;
}

Value compileSort(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (ops.empty()) p.fail(inst, "expects at least one operand");
  const HloComputation& cmp = calledComputation(p, inst, "to_apply");
  const Shape& first = ops[0].shape;
  std::vector<P> params, types;
  std::vector<int> inputs, elem;
  for (const Value& v : ops) {
    requireEvaluableArray(p, inst, v.shape, "operand");
    if (v.shape.dims() != first.dims()) p.fail(inst, "operands must have equal dimensions");
    params.push_back(v.shape.elementType());
    params.push_back(v.shape.elementType());
    types.push_back(v.shape.elementType());
    inputs.push_back(v.slot());
    elem.push_back(byteSize(v.shape.elementType()));
  }
  if (!inst.attrs().dimensions || inst.attrs().dimensions->size() != 1) {
    p.fail(inst, "dimensions= must name the one dimension to sort");
  }
  int64_t d = (*inst.attrs().dimensions)[0];
  if (d < 0 || d >= first.rank())
    p.fail(inst, "sort dimension " + std::to_string(d) + " is out of range");
  P pred = P::kPred;
  requireScalarComputation(p, inst, cmp, params, std::span<const P>(&pred, 1));
  if (ops.size() == 1) {
    requireResultShape(p, inst, first);
  } else {
    std::vector<Shape> shapes;
    for (const Value& v : ops)
      shapes.push_back(v.shape);
    requireResultShape(p, inst, Shape::tuple(shapes));
  }
  PlanImpl& sub = p.compileSubPlan(cmp);
  FastLessFn fast = matchFastComparator(cmp, types[0]);
  // Row base offsets (elements): every index combination of the other dimensions.
  std::vector<int64_t> strides = stridesOf(first), rows = {0};
  for (int64_t k = 0; k < first.rank(); ++k) {
    if (k == d) continue;
    std::vector<int64_t> next;
    for (int64_t r : rows) {
      for (int64_t i = 0; i < first.dim(k); ++i)
        next.push_back(r + i * strides[static_cast<size_t>(k)]);
    }
    rows = std::move(next);
  }
  if (first.elementCount() == 0) rows.clear();
  Value out = p.newTemp(inst.shape());
  // is_stable=false permits any order of equal elements; the merge sort's stable order is one.
  p.addStep(std::make_unique<SortStep>(&sub, fast, inputs, out.leaves, elem, std::move(rows),
                                       first.dim(d), strides[static_cast<size_t>(d)]));
  return out;
}

}  // namespace tacit::hlo::detail
