#include "hlo/verifier.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "hlo/attributes.h"
#include "hlo/lexer.h"
#include "hlo/shape_inference.h"
#include "support/strings.h"

namespace tacit::hlo {
namespace {

using O = HloOpcode;

class Verifier {
 public:
  explicit Verifier(const HloModule& m) : m_(m) {}
  void run();

 private:
  [[noreturn]] void failAt(SourceLoc loc, std::string message, std::string hint = {}) const {
    tacit::fail(m_.sourceFile(), loc, std::move(message), std::move(hint));
  }
  [[noreturn]] void failAt(const HloInstruction& inst, std::string message,
                           std::string hint = {}) const {
    failAt(inst.loc(), "instruction '" + inst.name() + "': " + message, std::move(hint));
  }
  void computation(const HloComputation& c, size_t index);
  void instruction(const HloInstruction& inst,
                   const std::unordered_map<const HloInstruction*, size_t>& position, size_t index);
  void attributes(const HloInstruction& inst);
  void calledComputations(const HloInstruction& inst);
  void reducerSignature(const HloInstruction& inst, std::string_view attr, bool returns_pred);
  void shapes(const HloInstruction& inst);
  void layouts(const HloInstruction& inst, const Shape& s);
  void entryLayout();

  const HloModule& m_;
  std::unordered_map<const HloComputation*, size_t> comp_index_;
};

bool validName(const std::string& name) {
  return !name.empty() && isIdentStart(name[0]) &&
         std::all_of(name.begin(), name.end(), isIdentChar);
}

void Verifier::run() {
  if (m_.computations().empty())
    tacit::fail(m_.sourceFile(), {}, "module '" + m_.name() + "' has no computations");
  if (!m_.entry())
    tacit::fail(m_.sourceFile(), {}, "module '" + m_.name() + "' has no entry computation");
  std::unordered_set<std::string_view> names;
  for (size_t i = 0; i < m_.computations().size(); ++i) {
    const HloComputation& c = *m_.computations()[i];
    if (!validName(c.name()))
      failAt(c.loc(), "computation name '" + c.name() + "' is not a valid name");
    if (!names.insert(c.name()).second)
      failAt(c.loc(), "duplicate computation name '" + c.name() + "'");
    comp_index_[&c] = i;
  }
  if (!comp_index_.count(m_.entry()))
    tacit::fail(m_.sourceFile(), {}, "the entry computation is not part of the module");
  for (size_t i = 0; i < m_.computations().size(); ++i)
    computation(*m_.computations()[i], i);
  entryLayout();
}

void Verifier::computation(const HloComputation& c, size_t index) {
  if (c.instructions().empty())
    failAt(c.loc(), "computation '" + c.name() + "' has no instructions");
  std::unordered_map<const HloInstruction*, size_t> position;
  std::unordered_set<std::string_view> names;
  for (size_t i = 0; i < c.instructions().size(); ++i) {
    const HloInstruction& inst = *c.instructions()[i];
    if (inst.parent() != &c) failAt(inst, "belongs to another computation");
    if (!validName(inst.name()))
      failAt(inst.loc(), "instruction name '" + inst.name() + "' is not a valid name");
    if (!names.insert(inst.name()).second) {
      failAt(inst.loc(),
             "duplicate instruction name '" + inst.name() + "' in computation '" + c.name() + "'");
    }
    position[&inst] = i;
  }
  if (!c.root() || !position.count(c.root()))
    failAt(c.loc(), "computation '" + c.name() + "' has no valid root");
  // Parameters: unique numbers covering 0..n-1.
  std::vector<const HloInstruction*> params;
  for (const auto& inst : c.instructions()) {
    if (inst->opcode() != O::kParameter) continue;
    int64_t n = inst->parameterNumber();
    if (n < 0) failAt(*inst, "parameter has no number");
    if (n >= static_cast<int64_t>(c.instructions().size())) {
      failAt(*inst, "parameter number " + std::to_string(n) +
                        " leaves a gap: parameters must be numbered 0..n-1");
    }
    if (params.size() <= static_cast<size_t>(n)) params.resize(static_cast<size_t>(n) + 1, nullptr);
    if (params[static_cast<size_t>(n)]) {
      failAt(*inst, "parameter number " + std::to_string(n) + " is already used by '" +
                        params[static_cast<size_t>(n)]->name() + "'");
    }
    params[static_cast<size_t>(n)] = inst.get();
  }
  for (size_t n = 0; n < params.size(); ++n) {
    if (!params[n]) {
      failAt(c.loc(), "computation '" + c.name() + "' has no parameter(" + std::to_string(n) +
                          "): parameters must be numbered 0..n-1");
    }
    if (c.parameters().size() <= n || c.parameters()[n] != params[n]) {
      failAt(*params[n],
             "is not registered as parameter " + std::to_string(n) + " of its computation");
    }
  }
  if (c.parameters().size() != params.size())
    failAt(c.loc(), "computation '" + c.name() + "' has stale parameters");
  for (size_t i = 0; i < c.instructions().size(); ++i)
    instruction(*c.instructions()[i], position, i);
  (void)index;
}

void Verifier::instruction(const HloInstruction& inst,
                           const std::unordered_map<const HloInstruction*, size_t>& position,
                           size_t index) {
  auto earlier = [&](const HloInstruction* o, std::string_view what) {
    if (!o) failAt(inst, "has a null " + std::string(what));
    auto it = position.find(o);
    if (it == position.end()) {
      failAt(inst, std::string(what) + " '" + o->name() + "' is not in the same computation");
    }
    if (it->second >= index) {
      failAt(inst, std::string(what) + " '" + o->name() + "' must be defined before its use");
    }
  };
  for (const HloInstruction* o : inst.operands())
    earlier(o, "operand");
  for (const HloInstruction* p : inst.controlPredecessors())
    earlier(p, "control predecessor");
  if (inst.opcode() == O::kUnknown) {
    const std::string& s = inst.opcodeSpelling();
    bool sugar = s.ends_with("-start") || s.ends_with("-update") || s.ends_with("-done");
    failAt(inst, "unknown opcode '" + s + "'",
           sugar ? "asynchronous '<op>-start/-update/-done' syntax sugar is not supported; use "
                   "async-start"
                 : "");
  }
  const OpcodeSpec& spec = opcodeSpec(inst.opcode());
  auto n = inst.operandCount();
  if (n < spec.min_operands || (spec.max_operands >= 0 && n > spec.max_operands)) {
    std::string expect = spec.min_operands == spec.max_operands ? std::to_string(spec.min_operands)
                         : spec.max_operands < 0 ? "at least " + std::to_string(spec.min_operands)
                                                 : std::to_string(spec.min_operands) + " to " +
                                                       std::to_string(spec.max_operands);
    failAt(inst, "'" + inst.opcodeSpelling() + "' takes " + expect + " operands, got " +
                     std::to_string(n));
  }
  attributes(inst);
  calledComputations(inst);
  layouts(inst, inst.shape());
  shapes(inst);
}

// Required attributes are present; typed attributes appear only where the opcode takes them.
void Verifier::attributes(const HloInstruction& inst) {
  const HloAttributes& a = inst.attrs();
  auto present = [&](std::string_view name) -> bool {
    if (inst.raw(name) || inst.called(name)) return true;
    for (const CalledComputations& c : a.called) {
      if (c.attribute == name) return true;
    }
    if (name == "dimensions") return a.dimensions.has_value();
    if (name == "index") return a.index.has_value();
    if (name == "iota_dimension") return a.iota_dimension.has_value();
    if (name == "slice") return a.slice.has_value();
    if (name == "dynamic_slice_sizes") return a.dynamic_slice_sizes.has_value();
    if (name == "padding") return a.padding.has_value();
    if (name == "window") return a.window.has_value();
    if (name == "dim_labels") return a.conv_dims.has_value();
    if (name == "direction") return a.direction.has_value();
    if (name == "exponent_bits") return a.exponent_bits.has_value();
    if (name == "mantissa_bits") return a.mantissa_bits.has_value();
    return false;
  };
  forEachRequiredAttribute(inst.opcode(), [&](std::string_view name) {
    if (!present(name))
      failAt(inst,
             "'" + inst.opcodeSpelling() + "' requires the attribute '" + std::string(name) + "'");
  });
  auto allowed = [&](bool set, std::string_view name) {
    if (set && !attributeAllowed(inst.opcode(), name)) {
      failAt(inst, "attribute '" + std::string(name) + "' is not valid for '" +
                       inst.opcodeSpelling() + "'");
    }
  };
  allowed(a.dimensions.has_value(), "dimensions");
  allowed(a.index.has_value(), "index");
  allowed(a.iota_dimension.has_value(), "iota_dimension");
  allowed(a.slice.has_value(), "slice");
  allowed(a.dynamic_slice_sizes.has_value(), "dynamic_slice_sizes");
  allowed(a.padding.has_value(), "padding");
  allowed(a.window.has_value(), "window");
  allowed(a.conv_dims.has_value(), "dim_labels");
  allowed(a.feature_group_count.has_value(), "feature_group_count");
  allowed(a.batch_group_count.has_value(), "batch_group_count");
  allowed(a.dot_dims.has_value(), "lhs_contracting_dims");
  allowed(a.direction.has_value(), "direction");
  allowed(a.comparison_type.has_value(), "type");
  allowed(a.exponent_bits.has_value(), "exponent_bits");
  allowed(a.mantissa_bits.has_value(), "mantissa_bits");
  allowed(a.is_stable.has_value(), "is_stable");
  for (const CalledComputations& c : a.called)
    allowed(true, c.attribute);
  for (const RawAttribute& r : a.raw)
    allowed(true, r.name);
  if (inst.opcode() == O::kDot && !a.dot_dims) failAt(inst, "dot has no dimension numbers");
  if (inst.opcode() == O::kConstant && !inst.literal()) failAt(inst, "constant has no value");
}

void Verifier::calledComputations(const HloInstruction& inst) {
  size_t caller = comp_index_.at(inst.parent());
  for (const CalledComputations& c : inst.attrs().called) {
    if (c.computations.empty() && !c.is_list) failAt(inst, c.attribute + " names no computation");
    for (const HloComputation* callee : c.computations) {
      if (!callee) failAt(inst, c.attribute + " refers to a null computation");
      auto it = comp_index_.find(callee);
      if (it == comp_index_.end())
        failAt(inst, c.attribute + " computation '" + callee->name() + "' is not in the module");
      if (it->second >= caller) {
        failAt(inst,
               c.attribute + " computation '" + callee->name() + "' must be defined before '" +
                   inst.parent()->name() + "'",
               "callees come first; recursion is not allowed");
      }
      if (callee == m_.entry())
        failAt(inst, "calls the entry computation '" + callee->name() + "'");
    }
  }
  switch (inst.opcode()) {
    case O::kScatter:
    case O::kAllReduce:
    case O::kAllReduceStart:
    case O::kReduceScatter:
      reducerSignature(inst, "to_apply", false);
      break;
    case O::kSelectAndScatter:
      reducerSignature(inst, "select", true);
      reducerSignature(inst, "scatter", false);
      break;
    default:
      break;
  }
}

// Binary scalar computations over the element types of the data operands (scatter's updates,
// all-reduce's inputs, select-and-scatter's operand/source): (T, T) -> T, or pred for `select`.
void Verifier::reducerSignature(const HloInstruction& inst, std::string_view attr,
                                bool returns_pred) {
  const HloComputation* c = inst.called(attr);
  if (!c) return;  // missing required attributes are reported elsewhere
  std::vector<PrimitiveType> types;
  size_t n = static_cast<size_t>(inst.operandCount());
  if (inst.opcode() == O::kScatter) {
    for (size_t i = 0; i < (n - 1) / 2; ++i)
      types.push_back(inst.operand(static_cast<int64_t>(i))->shape().elementType());
  } else if (inst.opcode() == O::kAllReduce || inst.opcode() == O::kAllReduceStart ||
             inst.opcode() == O::kReduceScatter) {
    // One binary reducer applied to every operand.
    const Shape& s = inst.operand(0)->shape();
    types.push_back(s.isTuple() && !s.tupleShapes().empty() ? s.tupleShapes()[0].elementType()
                                                            : s.elementType());
  } else if (inst.opcode() == O::kSelectAndScatter) {
    types.push_back(inst.operand(returns_pred ? 0 : 1)->shape().elementType());
  } else {
    for (const HloInstruction* o : inst.operands())
      types.push_back(o->shape().elementType());
  }
  ProgramShape ps = programShape(*c);
  std::string who = std::string(attr) + " computation '" + c->name() + "'";
  if (ps.parameters.size() != 2 * types.size()) {
    failAt(inst, who + " takes " + plural(static_cast<int64_t>(ps.parameters.size()), "parameter") +
                     " but needs " + std::to_string(2 * types.size()));
  }
  for (size_t i = 0; i < ps.parameters.size(); ++i) {
    PrimitiveType t = types[i % types.size()];
    if (!ps.parameters[i].isScalar() || ps.parameters[i].elementType() != t) {
      failAt(inst, who + " parameter " + std::to_string(i) + " is " + ps.parameters[i].shortStr() +
                       " but must be " + std::string(primitiveTypeName(t)) + "[]");
    }
  }
  if (returns_pred) {
    if (!ps.result.isScalar() || ps.result.elementType() != PrimitiveType::kPred) {
      failAt(inst, who + " must return pred[], returns " + ps.result.shortStr());
    }
    return;
  }
  std::vector<Shape> results;
  for (PrimitiveType t : types)
    results.emplace_back(t, std::vector<int64_t>{});
  Shape expect = results.size() == 1 ? results[0] : Shape::tuple(results);
  if (!ps.result.compatible(expect)) {
    failAt(inst, who + " must return " + expect.shortStr() + ", returns " + ps.result.shortStr());
  }
}

void Verifier::layouts(const HloInstruction& inst, const Shape& s) {
  if (s.isTuple()) {
    for (const Shape& e : s.tupleShapes())
      layouts(inst, e);
    return;
  }
  if (s.elementType() == PrimitiveType::kInvalid) failAt(inst, "has no shape");
  if (!s.layout()) return;
  const std::vector<int64_t>& m2m = s.layout()->minor_to_major;
  std::vector<int64_t> sorted = m2m;
  std::sort(sorted.begin(), sorted.end());
  bool ok = static_cast<int64_t>(m2m.size()) == s.rank();
  for (size_t i = 0; ok && i < sorted.size(); ++i)
    ok = sorted[i] == static_cast<int64_t>(i);
  if (!ok)
    failAt(inst, "layout " + layoutStr(*s.layout()) +
                     " is not a permutation of the dimensions of " + s.shortStr());
}

void Verifier::shapes(const HloInstruction& inst) {
  auto dynamic = [&](const Shape& s, const std::string& what) {
    if (s.isDynamic()) {
      failAt(inst, what + " has the dynamic shape " + s.shortStr() +
                       "; tacit does not support dynamic shapes");
    }
  };
  dynamic(inst.shape(), "the result");
  std::vector<const Shape*> operands;
  for (const HloInstruction* o : inst.operands()) {
    dynamic(o->shape(), "operand '" + o->name() + "'");
    operands.push_back(&o->shape());
  }
  if (inst.opcode() == O::kConstant && !inst.literal()->shape().compatible(inst.shape())) {
    failAt(inst, "constant value has shape " + inst.literal()->shape().shortStr() +
                     " but the instruction has " + inst.shape().shortStr());
  }
  ShapeResult r = inferShape(inst.opcode(), operands, inst.attrs(), &inst.shape());
  if (!r.ok()) failAt(inst, r.error);
}

void Verifier::entryLayout() {
  if (!m_.entryLayout()) return;
  const ProgramShape& layout = *m_.entryLayout();
  const HloComputation& entry = *m_.entry();
  ProgramShape actual = programShape(entry);
  SourceLoc loc = entry.loc();
  if (layout.parameters.size() != actual.parameters.size()) {
    failAt(loc, "entry_computation_layout lists " +
                    plural(static_cast<int64_t>(layout.parameters.size()), "parameter") +
                    " but the entry computation '" + entry.name() + "' has " +
                    std::to_string(actual.parameters.size()));
  }
  for (size_t i = 0; i < actual.parameters.size(); ++i) {
    if (!layout.parameters[i].compatible(actual.parameters[i])) {
      failAt(loc, "entry_computation_layout parameter " + std::to_string(i) + " is " +
                      layout.parameters[i].shortStr() + " but the entry's parameter " +
                      std::to_string(i) + " is " + actual.parameters[i].shortStr());
    }
  }
  if (!layout.result.compatible(actual.result)) {
    failAt(loc, "entry_computation_layout result is " + layout.result.shortStr() +
                    " but the entry returns " + actual.result.shortStr());
  }
}

}  // namespace

void verifyModule(const HloModule& module) {
  Verifier(module).run();
}

}  // namespace tacit::hlo
