#include "hlo_eval/evaluator.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string_view>
#include <unordered_map>

#include "hlo/shape_inference.h"
#include "hlo_eval/evaluator_plan.h"
#include "support/strings.h"

namespace tacit::hlo {
namespace detail {
namespace {

constexpr int kMaxCallDepth = 64;
constexpr int64_t kMaxRank = 64;

size_t alignUp(size_t x) {
  return (x + 63) / 64 * 64;
}

void flattenInto(const Shape& shape, std::vector<Shape>& out) {
  if (shape.isTuple()) {
    for (const Shape& s : shape.tupleShapes())
      flattenInto(s, out);
  } else {
    out.push_back(shape);
  }
}

size_t leafCount(const Shape& shape) {
  if (!shape.isTuple()) return 1;
  size_t n = 0;
  for (const Shape& s : shape.tupleShapes())
    n += leafCount(s);
  return n;
}

const char* strayTypedAttribute(const HloInstruction& inst);
const std::set<std::string_view>& neutralAttributes();

// Whether every value of integer type `from` is a value of integer type `to`.
bool widensExactly(PrimitiveType from, PrimitiveType to) {
  if (!isInteger(from) || !isInteger(to)) return false;
  if (isUnsignedInteger(to)) return isUnsignedInteger(from) && bitWidth(to) >= bitWidth(from);
  return bitWidth(to) > bitWidth(from) || (isSignedInteger(from) && bitWidth(to) == bitWidth(from));
}

// The instruction whose value operand `i` of `user` is computed from. An integer dot reads an
// exactly widening convert's operand in its narrow type: the GEMM widens each operand by its own
// signedness while packing and sums modulo 2^32 (2^64), so the products and sums are those of the
// widened values — and narrow operands take the int8/int16 kernels. Anything else: the operand.
const HloInstruction* operandSource(const HloInstruction& user, size_t i) {
  const HloInstruction* op = user.operands()[i];
  if (user.opcode() != HloOpcode::kDot || !user.shape().isArray() ||
      !isInteger(user.shape().elementType()))
    return op;
  while (op != nullptr && op->opcode() == HloOpcode::kConvert && op->operands().size() == 1 &&
         op->operands()[0] != nullptr && strayTypedAttribute(*op) == nullptr) {
    const HloInstruction* from = op->operands()[0];
    const Shape &s = from->shape(), &t = op->shape();
    bool plain = s.isArray() && t.isArray() && !s.isDynamic() && s.dims() == t.dims() &&
                 s.hasDefaultLayout() && t.hasDefaultLayout() &&
                 widensExactly(s.elementType(), t.elementType());
    for (const RawAttribute& raw : op->attrs().raw)
      plain = plain && neutralAttributes().count(raw.name) > 0;
    if (!plain) break;
    op = from;
  }
  return op;
}

bool rangesOverlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  auto pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

// Attributes without semantics (debug info, partitioning, scheduling hints, precision hints the
// CPU backend ignores): accepted on every instruction. docs/numerics.md lists them.
const std::set<std::string_view>& neutralAttributes() {
  static const std::set<std::string_view> names = {
      "metadata", "sharding",        "frontend_attributes",  "backend_config",    "statistics",
      "origin",   "result_accuracy", "control-predecessors", "operand_precision",
  };
  return names;
}

// Raw attributes an opcode may carry in addition to the neutral ones.
bool opAcceptsRaw(HloOpcode op, std::string_view name) {
  using O = HloOpcode;
  if (name == "parameter_replication") return op == O::kParameter;
  if (name == "inferred_dimension") return op == O::kReshape;
  if (name == "kind" || name == "output_to_operand_aliasing") return op == O::kFusion;
  if (name == "is_composite") return op == O::kCall;
  if (name == "algorithm") return op == O::kDot;
  return false;
}

// dot algorithm= values whose semantics are tacit's dot (operands as given, f32/f64
// accumulation); the others (tf32, bf16 splitting, narrow accumulation) are rejected.
bool dotAlgorithmMatches(std::string_view algo, PrimitiveType lhs, PrimitiveType rhs) {
  using P = PrimitiveType;
  if (algo == "unset" || algo == "ALG_UNSET") return true;
  auto both = [&](P t) { return lhs == t && rhs == t; };
  if (algo == "dot_f16_f16_f32") return both(P::kF16);
  if (algo == "dot_bf16_bf16_f32") return both(P::kBF16);
  if (algo == "dot_f32_f32_f32") return both(P::kF32);
  if (algo == "dot_f64_f64_f64") return both(P::kF64);
  return false;
}

bool isSupportedOpcode(HloOpcode op) {
  using O = HloOpcode;
  switch (op) {
    case O::kParameter:
    case O::kConstant:
    case O::kTuple:
    case O::kGetTupleElement:
    case O::kCopy:
    case O::kOptBarrier:
    case O::kCall:
    case O::kFusion:
    case O::kConvert:
    case O::kBitcastConvert:
    case O::kIota:
    case O::kReshape:
    case O::kBitcast:
    case O::kBroadcast:
    case O::kTranspose:
    case O::kSlice:
    case O::kDynamicSlice:
    case O::kDynamicUpdateSlice:
    case O::kConcatenate:
    case O::kPad:
    case O::kReverse:
    case O::kDot:
    case O::kConvolution:
    case O::kReduce:
    case O::kReduceWindow:
    case O::kMap:
    case O::kSort:
    case O::kWhile:
    case O::kConditional:
      return true;
    default:
      return isElementwiseOpcode(op);
  }
}

}  // namespace

void Where::fail(const std::string& message, const std::string& hint) const {
  tacit::fail(file, loc, "'" + name + "' (" + opcode + "): " + message, hint);
}

// ---- PlanImpl ----------------------------------------------------------------------------------

int PlanImpl::addSlot(SlotKind kind, size_t bytes) {
  SlotInfo info;
  info.kind = kind;
  info.bytes = bytes;
  info.first_step = static_cast<int64_t>(steps.size());
  slot_info.push_back(info);
  return static_cast<int>(slot_info.size() - 1);
}

void PlanImpl::touch(int slot, int64_t step) {
  SlotInfo& s = slot_info[static_cast<size_t>(slot)];
  s.last_step = std::max(s.last_step, step);
}

namespace {

// Assigns arena offsets: constants get their own space, temporaries reuse the space of
// temporaries whose live ranges ended before they are first written (best fit, else append).
size_t layoutArena(std::vector<SlotInfo>& slots) {
  size_t cursor = 0;
  std::vector<size_t> order;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].kind == SlotKind::kConstant) {
      slots[i].offset = cursor;
      cursor += alignUp(slots[i].bytes);
    } else if (slots[i].kind == SlotKind::kTemp) {
      order.push_back(i);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return slots[a].first_step < slots[b].first_step; });
  struct Block {
    size_t offset, size;
    int64_t busy_until;  // last step reading the current occupant
  };
  std::vector<Block> blocks;
  for (size_t i : order) {
    SlotInfo& s = slots[i];
    size_t need = alignUp(s.bytes);
    int64_t until = s.last_step < 0 ? s.first_step : s.last_step;
    Block* best = nullptr;
    for (Block& b : blocks) {
      if (b.busy_until < s.first_step && b.size >= need && (!best || b.size < best->size))
        best = &b;
    }
    if (best == nullptr) {
      blocks.push_back({cursor, need, until});
      cursor += need;
      s.offset = blocks.back().offset;
      continue;
    }
    Block rest{best->offset + need, best->size - need, best->busy_until};
    s.offset = best->offset;
    best->size = need;
    best->busy_until = until;
    if (rest.size > 0) blocks.push_back(rest);  // may reallocate: `best` is not used after this
  }
  return cursor;
}

}  // namespace

void PlanImpl::setConstantOwned(int slot, AlignedBytes data) {
  owned_constants.push_back(std::move(data));
  constants.push_back({slot, owned_constants.back().data()});
}

void PlanImpl::finalize() {
  for (int s : output_slots)
    touch(s, kKeepAlive);
  fuseElementwise();
  // An output is written in place when it is a temporary that no other output shares. Its own
  // buffer is needed only by a run that cannot write in place (an output overlapping an input):
  // it takes no arena space and is allocated by the first such run (ensureOutputHomes).
  output_direct_.assign(output_slots.size(), false);
  std::vector<size_t> lazy_bytes;
  for (size_t i = 0; i < output_slots.size(); ++i) {
    int s = output_slots[i];
    output_direct_[i] = slot_info[static_cast<size_t>(s)].kind == SlotKind::kTemp &&
                        std::count(output_slots.begin(), output_slots.end(), s) == 1;
    if (!output_direct_[i]) continue;
    lazy_outputs_.push_back(s);
    lazy_bytes.push_back(slot_info[static_cast<size_t>(s)].bytes);
    slot_info[static_cast<size_t>(s)].bytes = 0;
  }
  arena_ = AlignedBytes(layoutArena(slot_info));
  home_.assign(slot_info.size(), nullptr);
  for (size_t i = 0; i < slot_info.size(); ++i) {
    if (slot_info[i].kind != SlotKind::kInput) home_[i] = arena_.data() + slot_info[i].offset;
  }
  for (size_t k = 0; k < lazy_outputs_.size(); ++k) {
    auto s = static_cast<size_t>(lazy_outputs_[k]);
    slot_info[s].bytes = lazy_bytes[k];
    home_[s] = nullptr;
  }
  slots_ = home_;
  for (const ConstantInit& c : constants) {
    size_t bytes = slot_info[static_cast<size_t>(c.slot)].bytes;
    if (bytes) std::memcpy(home_[static_cast<size_t>(c.slot)], c.data, bytes);
  }
  constants.clear();
  owned_constants.clear();
  for (auto& step : steps)
    step->allocate();
}

void PlanImpl::ensureOutputHomes() {
  if (lazy_outputs_.empty() || output_homes_.size() > 0) return;
  size_t total = 0;
  for (int s : lazy_outputs_)
    total += alignUp(slot_info[static_cast<size_t>(s)].bytes);
  output_homes_ = AlignedBytes(total);
  size_t offset = 0;
  for (int s : lazy_outputs_) {
    home_[static_cast<size_t>(s)] = output_homes_.data() + offset;
    // (an output already pointed at the caller's buffer by this run stays there)
    if (slots_[static_cast<size_t>(s)] == nullptr)
      slots_[static_cast<size_t>(s)] = home_[static_cast<size_t>(s)];
    offset += alignUp(slot_info[static_cast<size_t>(s)].bytes);
  }
}

size_t PlanImpl::workspaceBytes() const {
  size_t n = arena_.size() + output_homes_.size();
  for (const auto& step : steps)
    n += step->workspaceBytes();
  for (const auto& sub : sub_plans)
    n += sub->workspaceBytes();
  return n;
}

size_t PlanImpl::nativeRunCount() const {
  size_t n = 0;
  for (const auto& step : steps)
    n += step->native() != nullptr ? 1 : 0;
  for (const auto& sub : sub_plans)
    n += sub->nativeRunCount();
  return n;
}

// One native step whose code reads only inputs and constants and writes every output (once,
// each output its own slot): run() would only point the slots at the caller's buffers.
std::optional<DirectKernel> PlanImpl::directKernel() const {
  if (steps.size() != 1 || steps[0]->native() == nullptr) return std::nullopt;
  const NativeCode& code = *steps[0]->native();
  DirectKernel k;
  k.fn = code.fn;
  k.n = code.n;
  k.loads_before_stores = code.loads_before_stores;
  std::vector<bool> written(output_slots.size(), false);
  for (size_t a = 0; a < code.args.size(); ++a) {
    int slot = code.args[a];
    auto in = std::find(input_slots.begin(), input_slots.end(), slot);
    auto out = std::find(output_slots.begin(), output_slots.end(), slot);
    DirectKernel::Arg arg;
    if (out != output_slots.end()) {
      auto o = static_cast<size_t>(out - output_slots.begin());
      if (!code.stored[a] || written[o] || in != input_slots.end() ||
          std::count(output_slots.begin(), output_slots.end(), slot) != 1)
        return std::nullopt;
      written[o] = true;
      arg.kind = DirectKernel::Arg::Kind::kOutput;
      arg.index = static_cast<int>(o);
    } else if (code.stored[a]) {
      return std::nullopt;  // a temporary the caller does not see
    } else if (in != input_slots.end()) {
      arg.kind = DirectKernel::Arg::Kind::kInput;
      arg.index = static_cast<int>(in - input_slots.begin());
    } else if (slot_info[static_cast<size_t>(slot)].kind == SlotKind::kConstant) {
      arg.kind = DirectKernel::Arg::Kind::kFixed;
      arg.fixed = home_[static_cast<size_t>(slot)];
    } else {
      return std::nullopt;
    }
    k.args.push_back(arg);
  }
  if (std::find(written.begin(), written.end(), false) != written.end()) return std::nullopt;
  return k;
}

void PlanImpl::run(const void* const* inputs, size_t input_count, void* const* outputs,
                   size_t output_count) {
  if (input_count != input_slots.size() || output_count != output_slots.size()) {
    fail("evaluator: run() expects " + std::to_string(input_slots.size()) + " input and " +
         std::to_string(output_slots.size()) + " output buffers, got " +
         std::to_string(input_count) + " and " + std::to_string(output_count));
  }
  for (size_t i = 0; i < input_count; ++i) {
    // Steps never write input slots; the table is shared with temporaries, hence non-const.
    slots_[static_cast<size_t>(input_slots[i])] =
        static_cast<uint8_t*>(const_cast<void*>(inputs[i]));
  }
  // Outputs go straight into the caller's buffers unless one overlaps an input.
  bool direct = true;
  for (size_t o = 0; o < output_count && direct; ++o) {
    size_t ob = slot_info[static_cast<size_t>(output_slots[o])].bytes;
    for (size_t i = 0; i < input_count; ++i) {
      size_t ib = slot_info[static_cast<size_t>(input_slots[i])].bytes;
      if (rangesOverlap(outputs[o], ob, inputs[i], ib)) direct = false;
    }
  }
  struct Restore {
    PlanImpl& p;
    ~Restore() {
      for (size_t o = 0; o < p.output_slots.size(); ++o) {
        auto s = static_cast<size_t>(p.output_slots[o]);
        if (p.slot_info[s].kind == SlotKind::kTemp) p.slots_[s] = p.home_[s];
      }
    }
  } restore{*this};
  for (size_t o = 0; o < output_count; ++o) {
    if (direct && output_direct_[o] && outputs[o] != nullptr) {
      slots_[static_cast<size_t>(output_slots[o])] = static_cast<uint8_t*>(outputs[o]);
    } else if (output_direct_[o]) {
      ensureOutputHomes();
    }
  }
  uint8_t* const* table = slots_.data();
  for (auto& step : steps)
    step->run(table);
  for (size_t o = 0; o < output_count; ++o) {
    auto s = static_cast<size_t>(output_slots[o]);
    size_t bytes = slot_info[s].bytes;
    if (bytes != 0 && slots_[s] != outputs[o]) std::memmove(outputs[o], slots_[s], bytes);
  }
}

// ---- Planner -----------------------------------------------------------------------------------

Planner::Planner(PlanImpl& plan, const EvalOptions& options, std::string file, bool allocate,
                 int depth)
    : plan_(plan), options_(options), file_(std::move(file)), allocate_(allocate), depth_(depth) {}

Where Planner::where(const HloInstruction& inst) const {
  return Where{file_, inst.loc(), inst.name(), inst.opcodeSpelling()};
}

void Planner::fail(const HloInstruction& inst, const std::string& message,
                   const std::string& hint) const {
  where(inst).fail(message, hint);
}

Value Planner::newTemp(const Shape& shape) {
  Value v{shape, {}};
  std::vector<Shape> leaves;
  flattenInto(shape, leaves);
  for (const Shape& s : leaves) {
    v.leaves.push_back(plan_.addSlot(SlotKind::kTemp, static_cast<size_t>(s.byteSize())));
  }
  return v;
}

Value Planner::newConstant(const Literal& literal) {
  if (literal.isTuple()) {
    Value v{literal.shape(), {}};
    for (const Literal& e : literal.elements()) {
      Value ev = newConstant(e);
      v.leaves.insert(v.leaves.end(), ev.leaves.begin(), ev.leaves.end());
    }
    return v;
  }
  int slot = plan_.addSlot(SlotKind::kConstant, literal.byteCount());
  plan_.setConstant(slot, literal.bytes());
  return Value{literal.shape(), {slot}};
}

Value Planner::newConstantOwned(const Shape& shape, AlignedBytes data) {
  int slot = plan_.addSlot(SlotKind::kConstant, data.size());
  if (allocate_) plan_.setConstantOwned(slot, std::move(data));
  return Value{shape, {slot}};
}

PlanImpl& Planner::compileSubPlan(const HloComputation& computation) {
  auto sub = std::make_unique<PlanImpl>();
  sub->native_elementwise = options_.native_elementwise;
  Planner planner(*sub, options_, file_, allocate_, depth_ + 1);
  planner.setInFusion(in_fusion_);
  if (depth_ + 1 > kMaxCallDepth) {
    tacit::fail(file_, computation.loc(),
                "computations nest more than " + std::to_string(kMaxCallDepth) + " levels deep");
  }
  std::vector<Value> args;
  for (int64_t i = 0; i < computation.parameterCount(); ++i) {
    const HloInstruction* param = computation.parameter(i);
    if (param == nullptr) {
      tacit::fail(
          file_, computation.loc(),
          "computation '" + computation.name() + "' has no parameter(" + std::to_string(i) + ")");
    }
    sub->parameter_shapes.push_back(param->shape());
    Value v{param->shape(), {}};
    std::vector<Shape> leaves;
    flattenInto(param->shape(), leaves);
    for (const Shape& s : leaves) {
      int slot = sub->addSlot(SlotKind::kInput, static_cast<size_t>(s.byteSize()));
      v.leaves.push_back(slot);
      sub->input_slots.push_back(slot);
      sub->input_shapes.push_back(s);
    }
    args.push_back(std::move(v));
  }
  Value root = planner.compileComputation(computation, args);
  sub->result_shape = root.shape;
  flattenInto(root.shape, sub->output_shapes);
  sub->output_slots = root.leaves;
  if (allocate_) sub->finalize();
  plan_.sub_plans.push_back(std::move(sub));
  return *plan_.sub_plans.back();
}

Value Planner::compileComputation(const HloComputation& computation,
                                  const std::vector<Value>& args) {
  if (depth_ > kMaxCallDepth) {
    tacit::fail(file_, computation.loc(),
                "computations nest more than " + std::to_string(kMaxCallDepth) + " levels deep");
  }
  const HloInstruction* root = computation.root();
  if (root == nullptr) {
    tacit::fail(file_, computation.loc(), "computation '" + computation.name() + "' is empty");
  }
  // Only what the root depends on is evaluated.
  std::set<const HloInstruction*> live;
  std::vector<const HloInstruction*> stack = {root};
  while (!stack.empty()) {
    const HloInstruction* inst = stack.back();
    stack.pop_back();
    if (!live.insert(inst).second) continue;
    for (size_t i = 0; i < inst->operands().size(); ++i) {
      if (const HloInstruction* op = operandSource(*inst, i)) stack.push_back(op);
    }
  }
  std::unordered_map<const HloInstruction*, Value> values;
  values.reserve(live.size());
  for (const auto& owned : computation.instructions()) {
    const HloInstruction& inst = *owned;
    if (!live.count(&inst)) continue;
    std::vector<Value> operands;
    for (size_t i = 0; i < inst.operands().size(); ++i) {
      const HloInstruction* op = operandSource(inst, i);
      auto it = values.find(op);
      if (it == values.end()) {
        fail(inst, "operand '" + (op ? op->name() : std::string("?")) +
                       "' is not defined before its use in computation '" + computation.name() +
                       "'");
      }
      operands.push_back(it->second);
    }
    size_t first_new_slot = plan_.slot_info.size();
    Value result = compileInstruction(inst, operands, args);
    // Live ranges: operands and results are used through this instruction's last step, and so
    // are its private temporaries (those no nested computation already placed).
    auto end = static_cast<int64_t>(plan_.steps.size()) - 1;
    for (const Value& op : operands) {
      for (int slot : op.leaves)
        plan_.touch(slot, end);
    }
    for (int slot : result.leaves)
      plan_.touch(slot, end);
    for (size_t slot = first_new_slot; slot < plan_.slot_info.size(); ++slot) {
      if (plan_.slot_info[slot].last_step < 0) plan_.touch(static_cast<int>(slot), end);
    }
    values.emplace(&inst, std::move(result));
  }
  auto it = values.find(root);
  if (it == values.end()) {
    tacit::fail(
        file_, computation.loc(),
        "the root of computation '" + computation.name() + "' is not one of its instructions");
  }
  return it->second;
}

namespace {

// The typed attribute an instruction carries although its opcode gives it no meaning (possible in
// IR built programmatically; the parser rejects it), or nullptr.
const char* strayTypedAttribute(const HloInstruction& inst) {
  using O = HloOpcode;
  const HloAttributes& a = inst.attrs();
  O op = inst.opcode();
  auto is = [&](std::initializer_list<O> ops) {
    return std::find(ops.begin(), ops.end(), op) != ops.end();
  };
  if (a.dimensions && !is({O::kBroadcast, O::kTranspose, O::kReduce, O::kReverse, O::kConcatenate,
                           O::kSort, O::kMap})) {
    return "dimensions";
  }
  if (a.index && op != O::kGetTupleElement) return "index";
  if (a.iota_dimension && op != O::kIota) return "iota_dimension";
  if (a.slice && op != O::kSlice) return "slice";
  if (a.dynamic_slice_sizes && op != O::kDynamicSlice) return "dynamic_slice_sizes";
  if (a.padding && op != O::kPad) return "padding";
  if (a.window && !is({O::kReduceWindow, O::kConvolution})) return "window";
  if (a.conv_dims && op != O::kConvolution) return "dim_labels";
  if (a.feature_group_count && op != O::kConvolution) return "feature_group_count";
  if (a.batch_group_count && op != O::kConvolution) return "batch_group_count";
  if (a.dot_dims && op != O::kDot) return "dot dimension numbers";
  if (a.direction && op != O::kCompare) return "direction";
  if (a.comparison_type && op != O::kCompare) return "type";
  if (a.exponent_bits || a.mantissa_bits) return "exponent_bits/mantissa_bits";
  if (a.is_stable && op != O::kSort) return "is_stable";
  for (const CalledComputations& c : a.called) {
    const std::string& n = c.attribute;
    bool ok =
        (n == "to_apply" && is({O::kCall, O::kReduce, O::kReduceWindow, O::kMap, O::kSort})) ||
        (n == "calls" && op == O::kFusion) ||
        ((n == "condition" || n == "body") && op == O::kWhile) ||
        ((n == "true_computation" || n == "false_computation" || n == "branch_computations") &&
         op == O::kConditional);
    if (!ok) return n.c_str();
  }
  return nullptr;
}

}  // namespace

void Planner::checkAttributes(const HloInstruction& inst) const {
  if (const char* stray = strayTypedAttribute(inst)) {
    fail(inst, std::string("unsupported attribute '") + stray + "' for this opcode",
         "the evaluator never ignores an attribute");
  }
  for (const RawAttribute& raw : inst.attrs().raw) {
    if (neutralAttributes().count(raw.name) || opAcceptsRaw(inst.opcode(), raw.name)) continue;
    tacit::fail(file_, raw.loc.known() ? raw.loc : inst.loc(),
                "'" + inst.name() + "' (" + inst.opcodeSpelling() + "): unsupported attribute '" +
                    raw.name + "'",
                "the evaluator does not implement its semantics and never ignores an attribute");
  }
}

void Planner::checkShapes(const HloInstruction& inst) const {
  std::vector<Shape> leaves;
  flattenInto(inst.shape(), leaves);
  for (const Shape& s : leaves) {
    if (s.isToken()) fail(inst, "token values are not evaluable");
    if (!isEvaluable(s.elementType())) {
      fail(inst, "unsupported element type " + std::string(primitiveTypeName(s.elementType())),
           "the evaluator handles pred, s8-s64, u8-u64, f16, bf16, f32 and f64");
    }
    if (s.isDynamic()) fail(inst, "dynamic shapes are not evaluable: " + s.str());
    if (s.rank() > kMaxRank) fail(inst, "rank " + std::to_string(s.rank()) + " exceeds 64");
    for (int64_t d : s.dims()) {
      if (d < 0) fail(inst, "negative dimension in " + s.str());
    }
    // Guard the byte count against overflow: no tensor may exceed 2^46 bytes.
    double bytes = static_cast<double>(byteSize(s.elementType()));
    for (int64_t d : s.dims())
      bytes *= static_cast<double>(d);
    if (bytes > 70368744177664.0) fail(inst, "tensor " + s.shortStr() + " is too large");
  }
}

Value Planner::compileInstruction(const HloInstruction& inst, const std::vector<Value>& operands,
                                  const std::vector<Value>& args) {
  using O = HloOpcode;
  if (!isSupportedOpcode(inst.opcode())) {
    fail(inst, "unsupported op '" + inst.opcodeSpelling() + "'",
         "docs/numerics.md lists the operations the evaluator implements");
  }
  checkAttributes(inst);
  checkShapes(inst);
  if (inst.opcode() != O::kParameter) {
    // The declared shape must be what shape inference (the verifier's rules) derives.
    std::vector<const Shape*> shapes;
    for (const Value& v : operands)
      shapes.push_back(&v.shape);
    ShapeResult inferred = inferShape(inst.opcode(), shapes, inst.attrs(), &inst.shape());
    if (!inferred.ok()) fail(inst, inferred.error);
  }
  std::span<const Value> ops(operands);
  auto requireOperands = [&](int64_t n) {
    if (static_cast<int64_t>(operands.size()) != n) {
      fail(inst, "expects " + plural(n, "operand") + ", got " + std::to_string(operands.size()));
    }
  };
  switch (inst.opcode()) {
    case O::kParameter: {
      int64_t n = inst.parameterNumber();
      if (n < 0 || n >= static_cast<int64_t>(args.size())) {
        fail(inst, "parameter(" + std::to_string(n) +
                       ") is out of range: the computation is called with " +
                       plural(static_cast<int64_t>(args.size()), "argument"));
      }
      const Value& arg = args[static_cast<size_t>(n)];
      if (!arg.shape.compatible(inst.shape())) {
        fail(inst, "parameter shape " + inst.shape().shortStr() + " does not match the argument " +
                       arg.shape.shortStr());
      }
      return Value{inst.shape(), arg.leaves};
    }
    case O::kConstant: {
      requireOperands(0);
      if (!inst.literal()) fail(inst, "constant has no value");
      const Literal& lit = *inst.literal();
      if (lit.isUnknown()) {
        fail(inst, "constant data is elided ({...}) and cannot be evaluated",
             "dump the module with large constants printed");
      }
      if (!lit.shape().compatible(inst.shape())) {
        fail(inst, "constant value of shape " + lit.shape().shortStr() +
                       " does not match the declared shape " + inst.shape().shortStr());
      }
      Value v = newConstant(lit);
      v.shape = inst.shape();
      return v;
    }
    case O::kTuple: {
      Value v{inst.shape(), {}};
      std::vector<Shape> shapes;
      for (const Value& op : operands) {
        shapes.push_back(op.shape);
        v.leaves.insert(v.leaves.end(), op.leaves.begin(), op.leaves.end());
      }
      if (!Shape::tuple(shapes).compatible(inst.shape())) {
        fail(inst, "declared shape " + inst.shape().shortStr() + " does not match the operands " +
                       Shape::tuple(shapes).shortStr());
      }
      return v;
    }
    case O::kGetTupleElement: {
      requireOperands(1);
      const Value& t = operands[0];
      if (!t.shape.isTuple()) fail(inst, "operand is not a tuple");
      int64_t index = inst.attrs().index.value_or(-1);
      auto count = static_cast<int64_t>(t.shape.tupleShapes().size());
      if (index < 0 || index >= count) {
        fail(inst, "index=" + std::to_string(index) + " is out of range for a tuple of " +
                       std::to_string(count) + " elements");
      }
      size_t first = 0;
      for (int64_t i = 0; i < index; ++i)
        first += leafCount(t.shape.tupleShapes()[static_cast<size_t>(i)]);
      const Shape& es = t.shape.tupleShapes()[static_cast<size_t>(index)];
      if (!es.compatible(inst.shape())) {
        fail(inst, "declared shape " + inst.shape().shortStr() + " does not match tuple element " +
                       es.shortStr());
      }
      Value v{inst.shape(), {}};
      auto begin = t.leaves.begin() + static_cast<std::ptrdiff_t>(first);
      v.leaves.assign(begin, begin + static_cast<std::ptrdiff_t>(leafCount(es)));
      return v;
    }
    case O::kCopy:
    case O::kOptBarrier: {
      // Values are immutable, so a copy is the same buffer under a new name.
      requireOperands(1);
      if (!operands[0].shape.compatible(inst.shape())) {
        fail(inst, "declared shape " + inst.shape().shortStr() + " does not match the operand " +
                       operands[0].shape.shortStr());
      }
      return Value{inst.shape(), operands[0].leaves};
    }
    case O::kCall:
    case O::kFusion: {
      const char* attr = inst.opcode() == O::kCall ? "to_apply" : "calls";
      const HloComputation& callee = calledComputation(*this, inst, attr);
      if (callee.parameterCount() != static_cast<int64_t>(operands.size())) {
        fail(inst, "calls '" + callee.name() + "' (" +
                       plural(callee.parameterCount(), "parameter") + ") with " +
                       plural(static_cast<int64_t>(operands.size()), "operand"));
      }
      Planner inner(plan_, options_, file_, allocate_, depth_ + 1);
      const RawAttribute* composite = inst.raw("is_composite");
      inner.setInFusion(in_fusion_ || inst.opcode() == O::kFusion ||
                        (composite != nullptr && composite->value == "true"));
      Value root = inner.compileComputation(callee, operands);
      if (!root.shape.compatible(inst.shape())) {
        fail(inst, "declared shape " + inst.shape().shortStr() + " does not match the result of '" +
                       callee.name() + "' " + root.shape.shortStr());
      }
      return Value{inst.shape(), root.leaves};
    }
    case O::kConvert:
    case O::kBitcastConvert:
      return compileConvert(*this, inst, ops);
    case O::kIota:
    case O::kReshape:
    case O::kBitcast:
    case O::kBroadcast:
    case O::kTranspose:
    case O::kSlice:
    case O::kDynamicSlice:
    case O::kDynamicUpdateSlice:
    case O::kConcatenate:
    case O::kPad:
    case O::kReverse:
      return compileShapeOp(*this, inst, ops);
    case O::kDot:
      if (const RawAttribute* algo = inst.raw("algorithm"); algo != nullptr) {
        requireOperands(2);
        if (!dotAlgorithmMatches(algo->value, operands[0].shape.elementType(),
                                 operands[1].shape.elementType())) {
          fail(inst, "unsupported algorithm=" + algo->value,
               "tacit's dot accumulates the given operand types in f32 (f64 for f64); only "
               "dot_f16_f16_f32, dot_bf16_bf16_f32, dot_f32_f32_f32 and dot_f64_f64_f64 match it");
        }
      }
      return compileDot(*this, inst, ops);
    case O::kConvolution:
      return compileConvolution(*this, inst, ops);
    case O::kReduce:
      return compileReduce(*this, inst, ops);
    case O::kReduceWindow:
      return compileReduceWindow(*this, inst, ops);
    case O::kMap:
      return compileMap(*this, inst, ops);
    case O::kSort:
      return compileSort(*this, inst, ops);
    case O::kWhile:
      return compileWhile(*this, inst, ops);
    case O::kConditional:
      return compileConditional(*this, inst, ops);
    default:
      break;
  }
  return compileElementwise(*this, inst, ops);
}

// ---- Shared helpers ----------------------------------------------------------------------------

std::vector<int64_t> stridesOf(const Shape& shape) {
  return rowMajorStrides(shape.dims());
}

std::string shapeText(const Shape& shape) {
  return shape.shortStr();
}

void requireEvaluableArray(const Planner& p, const HloInstruction& inst, const Shape& shape,
                           const char* what) {
  if (!shape.isArray())
    p.fail(inst, std::string(what) + " must be an array, got " + shape.shortStr());
  if (!isEvaluable(shape.elementType())) {
    p.fail(inst, std::string(what) + " has unsupported element type " +
                     std::string(primitiveTypeName(shape.elementType())));
  }
}

void requireResultShape(const Planner& p, const HloInstruction& inst, const Shape& computed) {
  if (!computed.compatible(inst.shape())) {
    p.fail(inst, "declared shape " + inst.shape().shortStr() + " does not match the computed " +
                     computed.shortStr());
  }
}

const HloComputation& calledComputation(const Planner& p, const HloInstruction& inst,
                                        const char* attr) {
  const HloComputation* c = inst.called(attr);
  if (c == nullptr) p.fail(inst, std::string("missing ") + attr + "= computation");
  return *c;
}

void requireScalarComputation(const Planner& p, const HloInstruction& inst,
                              const HloComputation& comp, std::span<const PrimitiveType> params,
                              std::span<const PrimitiveType> results) {
  auto sig = [&] {
    std::string s = "(";
    for (size_t i = 0; i < params.size(); ++i) {
      s += (i ? ", " : "") + std::string(primitiveTypeName(params[i])) + "[]";
    }
    s += ") -> ";
    if (results.size() != 1) s += "(";
    for (size_t i = 0; i < results.size(); ++i) {
      s += (i ? ", " : "") + std::string(primitiveTypeName(results[i])) + "[]";
    }
    if (results.size() != 1) s += ")";
    return s;
  };
  auto bad = [&](const std::string& why) {
    p.fail(inst, "computation '" + comp.name() + "' must have signature " + sig() + ": " + why);
  };
  if (comp.parameterCount() != static_cast<int64_t>(params.size())) {
    bad("it has " + plural(comp.parameterCount(), "parameter"));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const HloInstruction* param = comp.parameter(static_cast<int64_t>(i));
    if (param == nullptr) bad("parameter(" + std::to_string(i) + ") is missing");
    if (!param->shape().compatible(Shape(params[i], {}))) {
      bad("parameter(" + std::to_string(i) + ") is " + param->shape().shortStr());
    }
  }
  if (comp.root() == nullptr) bad("it is empty");
  const Shape& r = comp.root()->shape();
  Shape expected = Shape(results[0], {});
  if (results.size() != 1) {
    std::vector<Shape> es;
    for (PrimitiveType t : results)
      es.emplace_back(t, std::vector<int64_t>{});
    expected = Shape::tuple(es);
  }
  if (!r.compatible(expected)) bad("it returns " + r.shortStr());
}

}  // namespace detail

// ---- Public API --------------------------------------------------------------------------------

namespace {

std::string fileOf(const HloComputation& computation) {
  return computation.parent() ? computation.parent()->sourceFile() : std::string();
}

std::unique_ptr<detail::PlanImpl> compilePlan(const HloComputation& computation,
                                              const EvalOptions& options, bool allocate) {
  auto plan = std::make_unique<detail::PlanImpl>();
  // The top level is compiled as a sub-plan of a scratch plan, then taken over.
  detail::PlanImpl scratch;
  detail::Planner planner(scratch, options, fileOf(computation), allocate, 0);
  planner.compileSubPlan(computation);
  plan = std::move(scratch.sub_plans.back());
  return plan;
}

}  // namespace

EvalPlan::EvalPlan(std::unique_ptr<detail::PlanImpl> impl) : impl_(std::move(impl)) {}
EvalPlan::EvalPlan(EvalPlan&&) noexcept = default;
EvalPlan& EvalPlan::operator=(EvalPlan&&) noexcept = default;
EvalPlan::~EvalPlan() = default;

EvalPlan EvalPlan::compile(const HloComputation& computation, const EvalOptions& options) {
  return EvalPlan(compilePlan(computation, options, /*allocate=*/true));
}

const std::vector<Shape>& EvalPlan::parameterShapes() const {
  return impl_->parameter_shapes;
}
const std::vector<Shape>& EvalPlan::inputShapes() const {
  return impl_->input_shapes;
}
const Shape& EvalPlan::resultShape() const {
  return impl_->result_shape;
}
const std::vector<Shape>& EvalPlan::outputShapes() const {
  return impl_->output_shapes;
}
size_t EvalPlan::workspaceBytes() const {
  return impl_->workspaceBytes();
}

size_t EvalPlan::nativeRunCount() const {
  return impl_->nativeRunCount();
}

std::optional<DirectKernel> EvalPlan::directKernel() const {
  return impl_->directKernel();
}

void EvalPlan::run(std::span<const void* const> inputs, std::span<void* const> outputs) {
  impl_->run(inputs.data(), inputs.size(), outputs.data(), outputs.size());
}

namespace {

void collectLeaves(const Literal& l, std::vector<const void*>& out) {
  if (l.isTuple()) {
    for (const Literal& e : l.elements())
      collectLeaves(e, out);
  } else {
    out.push_back(l.bytes());
  }
}

void collectLeaves(Literal& l, std::vector<void*>& out) {
  if (l.isTuple()) {
    for (Literal& e : l.elements())
      collectLeaves(e, out);
  } else {
    out.push_back(l.bytes());
  }
}

}  // namespace

Literal EvalPlan::run(std::span<const Literal> arguments) {
  const auto& params = impl_->parameter_shapes;
  if (arguments.size() != params.size()) {
    fail("the computation takes " + plural(static_cast<int64_t>(params.size()), "argument") +
         ", got " + std::to_string(arguments.size()));
  }
  std::vector<const void*> inputs;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].isUnknown()) fail("argument " + std::to_string(i) + " has unknown data");
    if (!arguments[i].shape().compatible(params[i])) {
      fail("argument " + std::to_string(i) + " has shape " + arguments[i].shape().shortStr() +
           ", expected " + params[i].shortStr());
    }
    collectLeaves(arguments[i], inputs);
  }
  Literal result(impl_->result_shape);
  std::vector<void*> outputs;
  collectLeaves(result, outputs);
  run(inputs, outputs);
  return result;
}

Literal evaluate(const HloComputation& computation, std::span<const Literal> arguments,
                 const EvalOptions& options) {
  return EvalPlan::compile(computation, options).run(arguments);
}

Literal evaluate(const HloModule& module, std::span<const Literal> arguments,
                 const EvalOptions& options) {
  if (module.entry() == nullptr)
    fail(module.sourceFile(), {}, "the module has no entry computation");
  return evaluate(*module.entry(), arguments, options);
}

void checkEvaluable(const HloComputation& computation) {
  compilePlan(computation, EvalOptions{}, /*allocate=*/false);
}

void checkEvaluable(const HloModule& module) {
  if (module.entry() == nullptr)
    fail(module.sourceFile(), {}, "the module has no entry computation");
  checkEvaluable(*module.entry());
}

std::vector<Shape> flattenShape(const Shape& shape) {
  std::vector<Shape> out;
  detail::flattenInto(shape, out);
  return out;
}

}  // namespace tacit::hlo
