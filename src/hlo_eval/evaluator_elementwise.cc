// Elementwise operations: unary and binary arithmetic, compare, select, clamp, convert and
// bitcast-convert.
#include <algorithm>
#include <cstring>

#include "hlo_eval/evaluator_plan.h"
#include "hlo_eval/kernels/elementwise.h"
#include "support/strings.h"

namespace tacit::hlo::detail {
namespace {

using kernels::BinaryFn;
using kernels::ClampFn;
using kernels::SelectFn;
using kernels::UnaryFn;

// Every unfused elementwise op: the description the fusion pass reads is the step itself.
class ElementwiseStep final : public Step {
 public:
  explicit ElementwiseStep(const ElementwiseOp& op) : op_(op) {}
  void run(uint8_t* const* slots) override {
    op_.apply([&](int i) { return slots[op_.in[i]]; }, slots[op_.out], op_.n);
  }
  bool elementwise(ElementwiseOp* op) const override {
    *op = op_;
    return true;
  }

 private:
  ElementwiseOp op_;
};

std::string typeName(PrimitiveType t) {
  return std::string(primitiveTypeName(t));
}

// Operands of an elementwise op: arrays with the result's dimensions.
void requireSameDims(const Planner& p, const HloInstruction& inst, const Value& v,
                     const char* what) {
  requireEvaluableArray(p, inst, v.shape, what);
  if (v.shape.dims() != inst.shape().dims()) {
    p.fail(inst, std::string(what) + " " + v.shape.shortStr() +
                     " does not have the dimensions of the result " + inst.shape().shortStr());
  }
}

Value compileUnary(Planner& p, const HloInstruction& inst, const Value& x) {
  requireSameDims(p, inst, x, "operand");
  PrimitiveType t = x.shape.elementType();
  PrimitiveType expected = inst.opcode() == HloOpcode::kIsFinite ? PrimitiveType::kPred : t;
  if (inst.shape().elementType() != expected) {
    p.fail(inst, "result element type must be " + typeName(expected));
  }
  UnaryFn fn = kernels::unaryKernel(inst.opcode(), t);
  if (fn == nullptr) {
    p.fail(inst, inst.opcodeSpelling() + " is not defined on " + typeName(t));
  }
  Value out = p.newTemp(inst.shape());
  p.addStep(std::make_unique<ElementwiseStep>(
      ElementwiseOp::unaryOf(fn, x.slot(), out.slot(), x.shape.elementCount())
          .computing(inst.opcode(), t, inst.shape().elementType())));
  return out;
}

Value compileBinary(Planner& p, const HloInstruction& inst, const Value& a, const Value& b) {
  requireSameDims(p, inst, a, "lhs");
  requireSameDims(p, inst, b, "rhs");
  PrimitiveType t = a.shape.elementType();
  if (b.shape.elementType() != t) {
    p.fail(inst, "operand element types differ: " + typeName(t) + " and " +
                     typeName(b.shape.elementType()));
  }
  BinaryFn fn;
  bool total = false;
  if (inst.opcode() == HloOpcode::kCompare) {
    if (inst.shape().elementType() != PrimitiveType::kPred) p.fail(inst, "result must be pred");
    if (!inst.attrs().direction) p.fail(inst, "missing direction=");
    if (inst.attrs().comparison_type) {
      ComparisonType ct = *inst.attrs().comparison_type;
      bool ok = isFloat(t) ? (ct == ComparisonType::kFloat || ct == ComparisonType::kTotalOrder)
                : isSignedInteger(t) ? ct == ComparisonType::kSigned
                                     : ct == ComparisonType::kUnsigned;
      if (!ok) {
        p.fail(inst,
               "type=" + std::string(comparisonTypeName(ct)) + " does not apply to " + typeName(t));
      }
      total = ct == ComparisonType::kTotalOrder;
    }
    fn = kernels::compareKernel(*inst.attrs().direction, total, t);
  } else {
    if (inst.shape().elementType() != t) p.fail(inst, "result element type must be " + typeName(t));
    fn = kernels::binaryKernel(inst.opcode(), t);
  }
  if (fn == nullptr) p.fail(inst, inst.opcodeSpelling() + " is not defined on " + typeName(t));
  Value out = p.newTemp(inst.shape());
  ElementwiseOp op =
      ElementwiseOp::binaryOf(fn, a.slot(), b.slot(), out.slot(), a.shape.elementCount());
  op.computing(inst.opcode(), t, inst.shape().elementType());
  if (inst.opcode() == HloOpcode::kCompare) {
    op.direction = *inst.attrs().direction;
    op.total_order = total;
  }
  p.addStep(std::make_unique<ElementwiseStep>(op));
  return out;
}

// An operand that may be a scalar broadcast over the result: returns its stride (0 or 1).
int64_t scalarOrSame(const Planner& p, const HloInstruction& inst, const Value& v,
                     const char* what) {
  requireEvaluableArray(p, inst, v.shape, what);
  if (v.shape.isScalar() && !inst.shape().isScalar()) return 0;
  requireSameDims(p, inst, v, what);
  return 1;
}

Value compileSelect(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  const Value &pred = ops[0], &t = ops[1], &f = ops[2];
  if (pred.shape.elementType() != PrimitiveType::kPred) p.fail(inst, "the predicate must be pred");
  int64_t ps = scalarOrSame(p, inst, pred, "predicate");
  requireSameDims(p, inst, t, "on_true");
  requireSameDims(p, inst, f, "on_false");
  PrimitiveType type = inst.shape().elementType();
  if (t.shape.elementType() != type || f.shape.elementType() != type) {
    p.fail(inst, "on_true and on_false must have the result element type " + typeName(type));
  }
  Value out = p.newTemp(inst.shape());
  p.addStep(std::make_unique<ElementwiseStep>(
      ElementwiseOp::selectOf(kernels::selectKernel(type), pred.slot(), ps, t.slot(), f.slot(),
                              out.slot(), inst.shape().elementCount())
          .computing(HloOpcode::kSelect, type, type)));
  return out;
}

Value compileClamp(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  const Value &lo = ops[0], &x = ops[1], &hi = ops[2];
  requireSameDims(p, inst, x, "operand");
  int64_t ls = scalarOrSame(p, inst, lo, "min");
  int64_t hs = scalarOrSame(p, inst, hi, "max");
  PrimitiveType type = inst.shape().elementType();
  for (const Value* v : {&lo, &x, &hi}) {
    if (v->shape.elementType() != type) p.fail(inst, "operands must all be " + typeName(type));
  }
  ClampFn fn = kernels::clampKernel(type);
  if (fn == nullptr) p.fail(inst, "clamp is not defined on " + typeName(type));
  Value out = p.newTemp(inst.shape());
  p.addStep(std::make_unique<ElementwiseStep>(ElementwiseOp::clampOf(fn, lo.slot(), ls, x.slot(),
                                                                     hi.slot(), hs, out.slot(),
                                                                     inst.shape().elementCount())
                                                  .computing(HloOpcode::kClamp, type, type)));
  return out;
}

}  // namespace

ElementwiseOp ElementwiseOp::unaryOf(UnaryFn fn, int x, int out, int64_t n) {
  ElementwiseOp op;
  op.kind = Kind::kUnary;
  op.unary = fn;
  op.operands = 1;
  op.in[0] = x;
  op.out = out;
  op.n = n;
  return op;
}

ElementwiseOp ElementwiseOp::binaryOf(BinaryFn fn, int a, int b, int out, int64_t n) {
  ElementwiseOp op = unaryOf(nullptr, a, out, n);
  op.kind = Kind::kBinary;
  op.binary = fn;
  op.operands = 2;
  op.in[1] = b;
  return op;
}

ElementwiseOp ElementwiseOp::selectOf(SelectFn fn, int pred, int64_t pred_stride, int on_true,
                                      int on_false, int out, int64_t n) {
  ElementwiseOp op = binaryOf(nullptr, pred, on_true, out, n);
  op.kind = Kind::kSelect;
  op.select = fn;
  op.operands = 3;
  op.in[2] = on_false;
  op.stride[0] = pred_stride;
  return op;
}

ElementwiseOp ElementwiseOp::clampOf(ClampFn fn, int lo, int64_t lo_stride, int x, int hi,
                                     int64_t hi_stride, int out, int64_t n) {
  ElementwiseOp op = selectOf(nullptr, lo, lo_stride, x, hi, out, n);
  op.kind = Kind::kClamp;
  op.select = nullptr;
  op.clamp = fn;
  op.stride[2] = hi_stride;
  return op;
}

bool isElementwiseOpcode(HloOpcode op) {
  OpcodeCategory category = opcodeCategory(op);
  return kernels::isUnaryElementwise(op) || kernels::isBinaryElementwise(op) ||
         category == OpcodeCategory::kComparison || category == OpcodeCategory::kTernary;
}

Value compileElementwise(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  HloOpcode op = inst.opcode();
  int64_t arity = opcodeArity(op);
  if (static_cast<int64_t>(ops.size()) != arity) {
    p.fail(inst, "expects " + plural(arity, "operand") + ", got " + std::to_string(ops.size()));
  }
  requireEvaluableArray(p, inst, inst.shape(), "result");
  if (op == HloOpcode::kSelect) return compileSelect(p, inst, ops);
  if (op == HloOpcode::kClamp) return compileClamp(p, inst, ops);
  if (arity == 1) return compileUnary(p, inst, ops[0]);
  return compileBinary(p, inst, ops[0], ops[1]);
}

Value compileConvert(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (ops.size() != 1) p.fail(inst, "expects 1 operand, got " + std::to_string(ops.size()));
  const Value& x = ops[0];
  requireEvaluableArray(p, inst, x.shape, "operand");
  requireEvaluableArray(p, inst, inst.shape(), "result");
  PrimitiveType from = x.shape.elementType(), to = inst.shape().elementType();
  if (inst.opcode() == HloOpcode::kConvert) {
    requireSameDims(p, inst, x, "operand");
    if (from == to) return Value{inst.shape(), x.leaves};
    Value out = p.newTemp(inst.shape());
    p.addStep(std::make_unique<ElementwiseStep>(
        ElementwiseOp::unaryOf(kernels::convertKernel(from, to), x.slot(), out.slot(),
                               x.shape.elementCount())
            .computing(HloOpcode::kConvert, from, to)));
    return out;
  }
  // bitcast-convert: the bytes stay; only the type (and for different widths, the trailing
  // dimension) changes. Little-endian storage makes a wider element the trailing dimension of
  // the narrower type.
  if ((from == PrimitiveType::kPred) != (to == PrimitiveType::kPred)) {
    p.fail(inst, "bitcast-convert to or from pred is not supported",
           "pred holds only 0 or 1; use convert");
  }
  int fb = byteSize(from), tb = byteSize(to);
  std::vector<int64_t> dims = x.shape.dims();
  if (fb > tb) {
    dims.push_back(fb / tb);
  } else if (fb < tb) {
    if (dims.empty() || dims.back() != tb / fb) {
      p.fail(inst, "bitcast-convert from " + typeName(from) + " to " + typeName(to) +
                       " needs a trailing dimension of " + std::to_string(tb / fb) + ", got " +
                       x.shape.shortStr());
    }
    dims.pop_back();
  }
  requireResultShape(p, inst, Shape(to, dims));
  return Value{inst.shape(), x.leaves};
}

// ---- Fusion of elementwise runs ----------------------------------------------------------------

namespace {

// Runs consecutive elementwise steps over the same n elements chunk by chunk: every step on
// elements [c, c + kChunk), then every step on the next chunk. Each element is computed by the
// same kernels from the same operand elements as unfused (the kernels are per-element), so the
// results are identical; the chunk's operands stay in L1, and a temporary that only the run uses
// lives in a chunk-sized scratch buffer instead of the arena.
class FusedStep final : public Step {
 public:
  static constexpr int64_t kChunk = kFusedChunk;
  using Ref = FusedRef;
  using Op = FusedOp;

  FusedStep(std::vector<Op> ops, int64_t n, size_t scratch_bytes)
      : ops_(std::move(ops)), n_(n), scratch_bytes_(scratch_bytes) {}

  void allocate() override { scratch_ = AlignedBytes(scratch_bytes_); }
  size_t workspaceBytes() const override { return scratch_.size(); }

  void run(uint8_t* const* slots) override {
    uint8_t* scratch = scratch_.data();
    for (int64_t c = 0; c < n_; c += kChunk) {
      int64_t m = std::min(kChunk, n_ - c);
      auto at = [&](const Ref& r) -> uint8_t* {
        switch (r.mode) {
          case Ref::Mode::kSlot:
            return slots[r.slot] + static_cast<size_t>(c) * r.bytes;
          case Ref::Mode::kFixed:
            return slots[r.slot];
          case Ref::Mode::kScratch:
            break;
        }
        return scratch + r.bytes;
      };
      for (const Op& op : ops_)
        op.desc.apply([&](int i) { return at(op.in[i]); }, at(op.out), m);
    }
  }

 private:
  std::vector<Op> ops_;
  int64_t n_;
  size_t scratch_bytes_;
  AlignedBytes scratch_;
};

size_t alignTo64(size_t x) {
  return (x + 63) / 64 * 64;
}

}  // namespace

void PlanImpl::fuseElementwise() {
  constexpr int64_t kChunk = FusedStep::kChunk;
  size_t count = steps.size();
  std::vector<ElementwiseOp> ops(count);
  std::vector<bool> fusable(count, false);
  for (size_t k = 0; k < count; ++k)
    fusable[k] = steps[k]->elementwise(&ops[k]) &&
                 (ops[k].n > kChunk || (native_elementwise && ops[k].n >= 8));
  struct Group {
    size_t first, last;
  };
  std::vector<Group> groups;
  for (size_t k = 0; k < count;) {
    size_t j = k;
    while (fusable[k] && j + 1 < count && fusable[j + 1] && ops[j + 1].n == ops[k].n)
      ++j;
    if (j > k) groups.push_back({k, j});
    k = j + 1;
  }
  if (groups.empty()) return;
  auto isOutput = [&](int slot) {
    return std::find(output_slots.begin(), output_slots.end(), slot) != output_slots.end();
  };
  // Constants that repeat with period kChunk are kept as their first chunk when every step of
  // the plan is in the one fused run (then nothing else reads them).
  std::vector<bool> periodic(slot_info.size(), false);
  if (groups.size() == 1 && groups[0].first == 0 && groups[0].last + 1 == count &&
      ops[0].n > kChunk) {
    auto n = static_cast<size_t>(ops[0].n);
    for (const ConstantInit& c : constants) {
      SlotInfo& info = slot_info[static_cast<size_t>(c.slot)];
      size_t elem = info.bytes / n, keep = static_cast<size_t>(kChunk) * elem;
      if (elem == 0 || info.bytes != elem * n || isOutput(c.slot) ||
          periodic[static_cast<size_t>(c.slot)])
        continue;
      if (std::memcmp(c.data, c.data + keep, info.bytes - keep) != 0) continue;
      periodic[static_cast<size_t>(c.slot)] = true;
    }
  }
  std::vector<const uint8_t*> constant_data(slot_info.size(), nullptr);
  for (const ConstantInit& c : constants)
    constant_data[static_cast<size_t>(c.slot)] = c.data;
  // A constant of n equal elements (the native code broadcasts it; docs/numerics.md).
  auto uniform = [&](size_t slot, size_t n) {
    const uint8_t* data = constant_data[slot];
    size_t bytes = slot_info[slot].bytes, elem = bytes / n;
    return data != nullptr && n > 1 && elem > 0 && bytes == elem * n &&
           std::memcmp(data, data + elem, bytes - elem) == 0;
  };
  std::vector<std::unique_ptr<Step>> fused_steps;
  std::vector<size_t> new_index(count + 1);
  std::vector<size_t> scratch_slots;  // temporaries moved to scratch (their arena bytes go)
  size_t g = 0;
  for (size_t k = 0; k < count;) {
    if (g == groups.size() || k < groups[g].first) {
      new_index[k] = fused_steps.size();
      fused_steps.push_back(std::move(steps[k]));
      ++k;
      continue;
    }
    const Group& grp = groups[g++];
    auto n = static_cast<size_t>(ops[grp.first].n);
    // A temporary written in the run and read by nothing after it lives in scratch; scratch
    // buffers are reused once their occupant's last reader in the run has run.
    auto internal = [&](int slot) {
      const SlotInfo& info = slot_info[static_cast<size_t>(slot)];
      return info.kind == SlotKind::kTemp && info.first_step >= static_cast<int64_t>(grp.first) &&
             info.last_step <= static_cast<int64_t>(grp.last) && !isOutput(slot);
    };
    size_t max_elem = 0;
    std::vector<int64_t> last_read(slot_info.size(), -1);
    for (size_t k2 = grp.first; k2 <= grp.last; ++k2) {
      const ElementwiseOp& d = ops[k2];
      for (int o = 0; o < d.operands; ++o)
        last_read[static_cast<size_t>(d.in[o])] = static_cast<int64_t>(k2);
      if (internal(d.out))
        max_elem = std::max(max_elem, slot_info[static_cast<size_t>(d.out)].bytes / n);
    }
    size_t buffer_bytes = alignTo64(static_cast<size_t>(kChunk) * max_elem);
    std::vector<int64_t> busy_until;  // per scratch buffer
    std::vector<size_t> scratch_of(slot_info.size(), SIZE_MAX);
    std::vector<size_t> run_scratch;
    std::vector<FusedStep::Op> fused;
    for (size_t k2 = grp.first; k2 <= grp.last; ++k2) {
      FusedStep::Op op;
      op.desc = ops[k2];
      for (int o = 0; o < op.desc.operands; ++o) {
        auto slot = static_cast<size_t>(op.desc.in[o]);
        FusedStep::Ref& r = op.in[o];
        r.slot = op.desc.in[o];
        if (scratch_of[slot] != SIZE_MAX) {
          r.mode = FusedStep::Ref::Mode::kScratch;
          r.bytes = scratch_of[slot];
        } else if (op.desc.stride[o] == 0 || periodic[slot]) {
          r.mode = FusedStep::Ref::Mode::kFixed;
        } else {
          r.bytes = slot_info[slot].bytes / n;
        }
        if (r.mode != FusedStep::Ref::Mode::kScratch && uniform(slot, n))
          r.uniform = constant_data[slot];
      }
      auto out = static_cast<size_t>(op.desc.out);
      op.out.slot = op.desc.out;
      if (internal(op.desc.out)) {
        size_t b = 0;
        while (b < busy_until.size() && busy_until[b] >= static_cast<int64_t>(k2))
          ++b;
        if (b == busy_until.size()) busy_until.push_back(0);
        busy_until[b] = std::max(last_read[out], static_cast<int64_t>(k2));
        scratch_of[out] = b * buffer_bytes;
        op.out.mode = FusedStep::Ref::Mode::kScratch;
        op.out.bytes = scratch_of[out];
        run_scratch.push_back(out);
      } else {
        op.out.bytes = slot_info[out].bytes / n;
      }
      fused.push_back(op);
    }
    k = grp.last + 1;
    std::unique_ptr<Step> native;
    if (native_elementwise) native = compileNativeRun(fused, static_cast<int64_t>(n));
    if (!native && n <= static_cast<size_t>(kChunk)) {
      // Short runs are fused only natively (one chunk interpreted is the steps themselves).
      for (size_t k2 = grp.first; k2 <= grp.last; ++k2) {
        new_index[k2] = fused_steps.size();
        fused_steps.push_back(std::move(steps[k2]));
      }
      continue;
    }
    for (size_t k2 = grp.first; k2 <= grp.last; ++k2)
      new_index[k2] = fused_steps.size();
    scratch_slots.insert(scratch_slots.end(), run_scratch.begin(), run_scratch.end());
    if (native) {
      fused_steps.push_back(std::move(native));
    } else {
      fused_steps.push_back(std::make_unique<FusedStep>(std::move(fused), static_cast<int64_t>(n),
                                                        busy_until.size() * buffer_bytes));
    }
  }
  new_index[count] = fused_steps.size();
  // Live ranges in the new step numbering: a slot used anywhere in a fused run is live through
  // the whole run (its chunks interleave).
  for (SlotInfo& info : slot_info) {
    if (info.first_step >= 0 && info.first_step <= static_cast<int64_t>(count))
      info.first_step = static_cast<int64_t>(new_index[static_cast<size_t>(info.first_step)]);
    if (info.last_step >= 0 && info.last_step < static_cast<int64_t>(count))
      info.last_step = static_cast<int64_t>(new_index[static_cast<size_t>(info.last_step)]);
  }
  for (size_t slot : scratch_slots)
    slot_info[slot].bytes = 0;
  for (size_t slot = 0; slot < periodic.size(); ++slot) {
    if (periodic[slot])
      slot_info[slot].bytes =
          static_cast<size_t>(kChunk) * (slot_info[slot].bytes / static_cast<size_t>(ops[0].n));
  }
  steps = std::move(fused_steps);
}

}  // namespace tacit::hlo::detail
