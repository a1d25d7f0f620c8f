// Elementwise operations: unary and binary arithmetic, compare, select, clamp, convert and
// bitcast-convert.
#include "hlo/evaluator_plan.h"
#include "hlo/kernels/elementwise.h"
#include "support/strings.h"

namespace tacit::hlo::detail {
namespace {

using kernels::BinaryFn;
using kernels::ClampFn;
using kernels::SelectFn;
using kernels::UnaryFn;

class UnaryStep final : public Step {
 public:
  UnaryStep(UnaryFn fn, int in, int out, int64_t n) : fn_(fn), in_(in), out_(out), n_(n) {}
  void run(uint8_t* const* slots) override { fn_(slots[in_], slots[out_], n_); }

 private:
  UnaryFn fn_;
  int in_, out_;
  int64_t n_;
};

class BinaryStep final : public Step {
 public:
  BinaryStep(BinaryFn fn, int a, int b, int out, int64_t n)
      : fn_(fn), a_(a), b_(b), out_(out), n_(n) {}
  void run(uint8_t* const* slots) override { fn_(slots[a_], slots[b_], slots[out_], n_); }

 private:
  BinaryFn fn_;
  int a_, b_, out_;
  int64_t n_;
};

class SelectStep final : public Step {
 public:
  SelectStep(SelectFn fn, int pred, int64_t ps, int t, int f, int out, int64_t n)
      : fn_(fn), pred_(pred), ps_(ps), t_(t), f_(f), out_(out), n_(n) {}
  void run(uint8_t* const* slots) override {
    fn_(slots[pred_], ps_, slots[t_], slots[f_], slots[out_], n_);
  }

 private:
  SelectFn fn_;
  int pred_;
  int64_t ps_;
  int t_, f_, out_;
  int64_t n_;
};

class ClampStep final : public Step {
 public:
  ClampStep(ClampFn fn, int lo, int64_t ls, int x, int hi, int64_t hs, int out, int64_t n)
      : fn_(fn), lo_(lo), ls_(ls), x_(x), hi_(hi), hs_(hs), out_(out), n_(n) {}
  void run(uint8_t* const* slots) override {
    fn_(slots[lo_], ls_, slots[x_], slots[hi_], hs_, slots[out_], n_);
  }

 private:
  ClampFn fn_;
  int lo_;
  int64_t ls_;
  int x_, hi_;
  int64_t hs_;
  int out_;
  int64_t n_;
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
  p.addStep(std::make_unique<UnaryStep>(fn, x.slot(), out.slot(), x.shape.elementCount()));
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
  if (inst.opcode() == HloOpcode::kCompare) {
    if (inst.shape().elementType() != PrimitiveType::kPred) p.fail(inst, "result must be pred");
    if (!inst.attrs().direction) p.fail(inst, "missing direction=");
    bool total = false;
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
  p.addStep(
      std::make_unique<BinaryStep>(fn, a.slot(), b.slot(), out.slot(), a.shape.elementCount()));
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
  p.addStep(std::make_unique<SelectStep>(kernels::selectKernel(type), pred.slot(), ps, t.slot(),
                                         f.slot(), out.slot(), inst.shape().elementCount()));
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
  p.addStep(std::make_unique<ClampStep>(fn, lo.slot(), ls, x.slot(), hi.slot(), hs, out.slot(),
                                        inst.shape().elementCount()));
  return out;
}

}  // namespace

bool isElementwiseOpcode(HloOpcode op) {
  return kernels::isUnaryElementwise(op) || kernels::isBinaryElementwise(op) ||
         op == HloOpcode::kCompare || op == HloOpcode::kSelect || op == HloOpcode::kClamp;
}

Value compileElementwise(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  HloOpcode op = inst.opcode();
  int64_t arity = kernels::isUnaryElementwise(op)                         ? 1
                  : (op == HloOpcode::kSelect || op == HloOpcode::kClamp) ? 3
                                                                          : 2;
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
    p.addStep(std::make_unique<UnaryStep>(kernels::convertKernel(from, to), x.slot(), out.slot(),
                                          x.shape.elementCount()));
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

}  // namespace tacit::hlo::detail
