#include "hlo/builder.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "hlo/attributes.h"
#include "hlo/lexer.h"
#include "hlo/shape_inference.h"

namespace tacit::hlo {

HloBuilder::HloBuilder(std::string computation_name)
    : computation_(std::make_unique<HloComputation>(std::move(computation_name))) {}

std::string HloBuilder::uniqueName(std::string base) {
  if (!names_.count(base)) return base;
  int& i = next_suffix_[base];
  std::string name;
  do {
    name = base + "." + std::to_string(++i);
  } while (names_.count(name));
  return name;
}

void HloBuilder::checkOperand(const HloInstruction* operand, std::string_view op) const {
  if (!operand) fail("builder: " + std::string(op) + " was given a null operand");
  if (operand->parent() != computation_.get()) {
    fail("builder: operand '" + operand->name() + "' of " + std::string(op) +
         " belongs to another computation");
  }
}

HloInstruction* HloBuilder::append(std::unique_ptr<HloInstruction> inst, std::string name) {
  if (!computation_) fail("builder: the computation was already built");
  if (name.empty()) {
    name = uniqueName(inst->opcodeSpelling());
  } else {
    bool valid = isIdentStart(name[0]) && std::all_of(name.begin(), name.end(), isIdentChar);
    if (!valid) fail("builder: '" + name + "' is not a valid instruction name");
    if (names_.count(name)) {
      fail("builder: duplicate instruction name '" + name + "'");
    }
  }
  names_.insert(name);
  inst->setName(std::move(name));
  return computation_->addInstruction(std::move(inst));
}

HloInstruction* HloBuilder::add(HloOpcode opcode, std::vector<HloInstruction*> operands,
                                HloAttributes attrs, const std::optional<Shape>& shape,
                                std::string name) {
  std::string op(opcodeName(opcode));
  if (opcode == HloOpcode::kUnknown) fail("builder: cannot build an unknown opcode");
  std::vector<const Shape*> shapes;
  for (HloInstruction* o : operands) {
    checkOperand(o, op);
    shapes.push_back(&o->shape());
  }
  if (opcode == HloOpcode::kDot && !attrs.dot_dims) attrs.dot_dims = DotDims{};
  ShapeResult r = inferShape(opcode, shapes, attrs, shape ? &*shape : nullptr);
  if (!r.ok()) fail("builder: " + r.error);
  const OpcodeSpec& spec = opcodeSpec(opcode);
  auto n = static_cast<int64_t>(operands.size());
  if (n < spec.min_operands || (spec.max_operands >= 0 && n > spec.max_operands)) {
    fail("builder: " + op + " cannot take " + std::to_string(n) + " operands");
  }
  auto inst = std::make_unique<HloInstruction>(opcode, "", *r.shape);
  for (HloInstruction* o : operands)
    inst->addOperand(o);
  inst->attrs() = std::move(attrs);
  return append(std::move(inst), std::move(name));
}

namespace {

// `original` without its operands and control predecessors: opcode, name, shape, attributes (their
// called computations still the original's), literal, parameter number and source position.
std::unique_ptr<HloInstruction> copyWithoutOperands(const HloInstruction& original) {
  auto copy =
      std::make_unique<HloInstruction>(original.opcode(), original.name(), original.shape());
  if (original.opcode() == HloOpcode::kUnknown)
    copy->setUnknownOpcodeSpelling(original.opcodeSpelling());
  copy->setParameterNumber(original.parameterNumber());
  if (original.literal()) copy->setLiteral(*original.literal());
  copy->setLoc(original.loc());
  copy->attrs() = original.attrs();
  return copy;
}

}  // namespace

HloInstruction* HloBuilder::clone(const HloInstruction& original,
                                  std::vector<HloInstruction*> operands, std::string name) {
  for (HloInstruction* o : operands)
    checkOperand(o, original.opcodeSpelling());
  std::unique_ptr<HloInstruction> inst = copyWithoutOperands(original);
  for (HloInstruction* o : operands)
    inst->addOperand(o);
  return append(std::move(inst), name.empty() ? original.name() : std::move(name));
}

HloInstruction* HloBuilder::parameter(int64_t number, const Shape& shape, std::string name) {
  if (number < 0) fail("builder: parameter number must be non-negative");
  for (const HloInstruction* p : computation_->parameters()) {
    if (p && p->parameterNumber() == number)
      fail("builder: parameter " + std::to_string(number) + " already exists");
  }
  if (number > computation_->instructionCount() + 1024)
    fail("builder: parameter number is too large");
  auto inst = std::make_unique<HloInstruction>(HloOpcode::kParameter, "", shape);
  inst->setParameterNumber(number);
  return append(std::move(inst), name.empty() ? "p" + std::to_string(number) : std::move(name));
}

HloInstruction* HloBuilder::constant(Literal literal, std::string name) {
  auto inst = std::make_unique<HloInstruction>(HloOpcode::kConstant, "", literal.shape());
  inst->setLiteral(std::move(literal));
  return append(std::move(inst), std::move(name));
}

HloInstruction* HloBuilder::iota(const Shape& shape, int64_t dimension, std::string name) {
  HloAttributes a;
  a.iota_dimension = dimension;
  return add(HloOpcode::kIota, {}, std::move(a), shape, std::move(name));
}

HloInstruction* HloBuilder::unary(HloOpcode opcode, HloInstruction* x, std::string name) {
  if (!isElementwiseUnary(opcode))
    fail("builder: '" + std::string(opcodeName(opcode)) + "' is not a unary elementwise opcode");
  return add(opcode, {x}, {}, std::nullopt, std::move(name));
}

HloInstruction* HloBuilder::binary(HloOpcode opcode, HloInstruction* lhs, HloInstruction* rhs,
                                   std::string name) {
  if (!isElementwiseBinary(opcode)) {
    fail("builder: '" + std::string(opcodeName(opcode)) + "' is not a binary elementwise opcode");
  }
  return add(opcode, {lhs, rhs}, {}, std::nullopt, std::move(name));
}

HloInstruction* HloBuilder::compare(HloInstruction* lhs, HloInstruction* rhs,
                                    ComparisonDirection direction,
                                    std::optional<ComparisonType> type, std::string name) {
  HloAttributes a;
  a.direction = direction;
  a.comparison_type = type;
  return add(HloOpcode::kCompare, {lhs, rhs}, std::move(a), std::nullopt, std::move(name));
}

HloInstruction* HloBuilder::select(HloInstruction* pred, HloInstruction* on_true,
                                   HloInstruction* on_false, std::string name) {
  return add(HloOpcode::kSelect, {pred, on_true, on_false}, {}, std::nullopt, std::move(name));
}

HloInstruction* HloBuilder::clamp(HloInstruction* min, HloInstruction* x, HloInstruction* max,
                                  std::string name) {
  return add(HloOpcode::kClamp, {min, x, max}, {}, std::nullopt, std::move(name));
}

HloInstruction* HloBuilder::convert(HloInstruction* x, PrimitiveType type, std::string name) {
  checkOperand(x, "convert");
  return add(HloOpcode::kConvert, {x}, {}, Shape(type, x->shape().dims()), std::move(name));
}

HloInstruction* HloBuilder::bitcastConvert(HloInstruction* x, PrimitiveType type,
                                           std::string name) {
  checkOperand(x, "bitcast-convert");
  std::vector<int64_t> dims = x->shape().dims();
  int in = bitWidth(x->shape().elementType());
  int out = bitWidth(type);
  if (in == 0 || out == 0) fail("builder: bitcast-convert needs array element types");
  if (in > out) dims.push_back(in / out);
  if (in < out && !dims.empty()) dims.pop_back();
  return add(HloOpcode::kBitcastConvert, {x}, {}, Shape(type, dims), std::move(name));
}

HloInstruction* HloBuilder::copy(HloInstruction* x, std::string name) {
  return add(HloOpcode::kCopy, {x}, {}, std::nullopt, std::move(name));
}

HloInstruction* HloBuilder::reshape(HloInstruction* x, std::vector<int64_t> dims,
                                    std::string name) {
  checkOperand(x, "reshape");
  return add(HloOpcode::kReshape, {x}, {}, Shape(x->shape().elementType(), std::move(dims)),
             std::move(name));
}

HloInstruction* HloBuilder::broadcast(HloInstruction* x, std::vector<int64_t> result_dims,
                                      std::vector<int64_t> dimensions, std::string name) {
  checkOperand(x, "broadcast");
  HloAttributes a;
  a.dimensions = std::move(dimensions);
  return add(HloOpcode::kBroadcast, {x}, std::move(a),
             Shape(x->shape().elementType(), std::move(result_dims)), std::move(name));
}

HloInstruction* HloBuilder::transpose(HloInstruction* x, std::vector<int64_t> permutation,
                                      std::string name) {
  HloAttributes a;
  a.dimensions = std::move(permutation);
  return add(HloOpcode::kTranspose, {x}, std::move(a), std::nullopt, std::move(name));
}

HloInstruction* HloBuilder::reverse(HloInstruction* x, std::vector<int64_t> dimensions,
                                    std::string name) {
  HloAttributes a;
  a.dimensions = std::move(dimensions);
  return add(HloOpcode::kReverse, {x}, std::move(a), std::nullopt, std::move(name));
}

// Slice, dynamic-slice and dynamic-update-slice have their result written in text; the builder
// infers it here from the attributes and lets inferShape check it.
HloInstruction* HloBuilder::slice(HloInstruction* x, std::vector<int64_t> starts,
                                  std::vector<int64_t> limits, std::vector<int64_t> strides,
                                  std::string name) {
  checkOperand(x, "slice");
  if (strides.empty()) strides.assign(starts.size(), 1);
  if (starts.size() != limits.size() || starts.size() != strides.size()) {
    fail("builder: slice needs as many starts, limits and strides");
  }
  HloAttributes a;
  a.slice.emplace();
  std::vector<int64_t> dims;
  for (size_t i = 0; i < starts.size(); ++i) {
    a.slice->push_back(SliceDim{starts[i], limits[i], strides[i]});
    dims.push_back(strides[i] > 0 && limits[i] >= starts[i]
                       ? (limits[i] - starts[i] + strides[i] - 1) / strides[i]
                       : 0);
  }
  return add(HloOpcode::kSlice, {x}, std::move(a), Shape(x->shape().elementType(), dims),
             std::move(name));
}

HloInstruction* HloBuilder::dynamicSlice(HloInstruction* x,
                                         std::vector<HloInstruction*> start_indices,
                                         std::vector<int64_t> sizes, std::string name) {
  checkOperand(x, "dynamic-slice");
  HloAttributes a;
  a.dynamic_slice_sizes = sizes;
  std::vector<HloInstruction*> operands = {x};
  operands.insert(operands.end(), start_indices.begin(), start_indices.end());
  return add(HloOpcode::kDynamicSlice, operands, std::move(a),
             Shape(x->shape().elementType(), sizes), std::move(name));
}

HloInstruction* HloBuilder::dynamicUpdateSlice(HloInstruction* x, HloInstruction* update,
                                               std::vector<HloInstruction*> start_indices,
                                               std::string name) {
  checkOperand(x, "dynamic-update-slice");
  std::vector<HloInstruction*> operands = {x, update};
  operands.insert(operands.end(), start_indices.begin(), start_indices.end());
  Shape result(x->shape().elementType(), x->shape().dims());
  return add(HloOpcode::kDynamicUpdateSlice, operands, {}, result, std::move(name));
}

HloInstruction* HloBuilder::concatenate(std::vector<HloInstruction*> operands, int64_t dimension,
                                        std::string name) {
  HloAttributes a;
  a.dimensions = std::vector<int64_t>{dimension};
  return add(HloOpcode::kConcatenate, std::move(operands), std::move(a), std::nullopt,
             std::move(name));
}

HloInstruction* HloBuilder::pad(HloInstruction* x, HloInstruction* padding_value,
                                std::vector<PadDim> padding, std::string name) {
  HloAttributes a;
  a.padding = std::move(padding);
  return add(HloOpcode::kPad, {x, padding_value}, std::move(a), std::nullopt, std::move(name));
}

HloInstruction* HloBuilder::dot(HloInstruction* lhs, HloInstruction* rhs, DotDims dims,
                                std::optional<PrimitiveType> result_type, std::string name) {
  HloAttributes a;
  a.dot_dims = std::move(dims);
  if (!result_type)
    return add(HloOpcode::kDot, {lhs, rhs}, std::move(a), std::nullopt, std::move(name));
  checkOperand(lhs, "dot");
  checkOperand(rhs, "dot");
  // The dimensions as if the operand types agreed; add() then checks the typed result.
  Shape lhs_dims(rhs->shape().elementType(), lhs->shape().dims());
  std::vector<const Shape*> shapes = {&lhs_dims, &rhs->shape()};
  ShapeResult inferred = inferShape(HloOpcode::kDot, shapes, a);
  if (!inferred.ok()) fail("builder: " + inferred.error);
  Shape result(*result_type, inferred.shape->dims());
  return add(HloOpcode::kDot, {lhs, rhs}, std::move(a), result, std::move(name));
}

HloInstruction* HloBuilder::reduce(std::vector<HloInstruction*> inputs,
                                   std::vector<HloInstruction*> inits,
                                   std::vector<int64_t> dimensions, HloComputation* reducer,
                                   std::string name) {
  if (!reducer) fail("builder: reduce needs a reducer computation");
  if (inputs.size() != inits.size()) fail("builder: reduce needs one init value per input");
  HloAttributes a;
  a.dimensions = std::move(dimensions);
  a.called.push_back(CalledComputations{"to_apply", {reducer}, false});
  std::vector<HloInstruction*> operands = inputs;
  operands.insert(operands.end(), inits.begin(), inits.end());
  return add(HloOpcode::kReduce, std::move(operands), std::move(a), std::nullopt, std::move(name));
}

HloInstruction* HloBuilder::tuple(std::vector<HloInstruction*> elements, std::string name) {
  return add(HloOpcode::kTuple, std::move(elements), {}, std::nullopt, std::move(name));
}

HloInstruction* HloBuilder::getTupleElement(HloInstruction* tuple, int64_t index,
                                            std::string name) {
  HloAttributes a;
  a.index = index;
  return add(HloOpcode::kGetTupleElement, {tuple}, std::move(a), std::nullopt, std::move(name));
}

std::unique_ptr<HloComputation> HloBuilder::build(HloInstruction* root) {
  if (!computation_) fail("builder: the computation was already built");
  if (computation_->instructions().empty())
    fail("builder: computation '" + computation_->name() + "' is empty");
  if (root && root->parent() != computation_.get())
    fail("builder: the root belongs to another computation");
  computation_->setRoot(root ? root : computation_->instructions().back().get());
  return std::move(computation_);
}

HloComputation* HloBuilder::addTo(HloModule& module, bool entry, HloInstruction* root) {
  std::unique_ptr<HloComputation> c = build(root);
  std::string base = c->name();
  std::string name = base;
  for (int i = 1; module.findComputation(name); ++i)
    name = base + "." + std::to_string(i);
  c->setName(name);
  HloComputation* added = module.addComputation(std::move(c));
  if (entry) module.setEntry(added);
  return added;
}

Literal scalarLiteral(PrimitiveType type, double value) {
  if (!isEvaluable(type)) fail("builder: scalar literals need an evaluable element type");
  Literal lit(Shape(type, {}));
  lit.setDouble(0, value);
  return lit;
}

HloComputation* addScalarReducer(HloModule& module, HloOpcode opcode, PrimitiveType type) {
  HloBuilder b(std::string(opcodeName(opcode)) + "_" + std::string(primitiveTypeName(type)));
  Shape scalar(type, {});
  HloInstruction* lhs = b.parameter(0, scalar, "lhs");
  HloInstruction* rhs = b.parameter(1, scalar, "rhs");
  b.binary(opcode, lhs, rhs);
  return b.addTo(module);
}

std::unique_ptr<HloModule> cloneModule(const HloModule& module) {
  auto out = std::make_unique<HloModule>(module.name());
  out->setSourceFile(module.sourceFile());
  out->setEntryLayout(module.entryLayout());
  out->headerAttributes() = module.headerAttributes();
  std::unordered_map<const HloComputation*, HloComputation*> comps;
  for (const auto& c : module.computations()) {
    auto copy = std::make_unique<HloComputation>(c->name());
    copy->setLoc(c->loc());
    copy->setExecutionThread(c->executionThread());
    std::unordered_map<const HloInstruction*, HloInstruction*> insts;
    for (const auto& inst : c->instructions()) {
      std::unique_ptr<HloInstruction> i = copyWithoutOperands(*inst);
      for (CalledComputations& called : i->attrs().called) {
        for (HloComputation*& callee : called.computations) {
          auto it = comps.find(callee);
          callee = it == comps.end() ? nullptr : it->second;
        }
      }
      for (const HloInstruction* o : inst->operands()) {
        auto it = insts.find(o);
        i->addOperand(it == insts.end() ? nullptr : it->second);
      }
      for (const HloInstruction* p : inst->controlPredecessors()) {
        auto it = insts.find(p);
        i->controlPredecessors().push_back(it == insts.end() ? nullptr : it->second);
      }
      insts[inst.get()] = copy->addInstruction(std::move(i));
    }
    auto root = insts.find(c->root());
    copy->setRoot(root == insts.end() ? nullptr : root->second);
    HloComputation* added = out->addComputation(std::move(copy));
    comps[c.get()] = added;
    if (module.entry() == c.get()) out->setEntry(added);
  }
  return out;
}

}  // namespace tacit::hlo
