#include "isel/units.h"

#include <algorithm>
#include <optional>

namespace tacit::isel {
namespace {

using hlo::HloOpcode;

// Builds the pattern of one output: the ops reachable from the written value.
UnitPattern patternFor(int32_t unit, int32_t case_index, int32_t output, const taidl::SymCase& c) {
  UnitPattern p;
  p.unit = unit;
  p.case_index = case_index;
  p.output = output;
  p.sym = &c;
  std::vector<int32_t> node_of(c.ops.size(), -1);
  // Post-order DFS from the output value.
  std::vector<std::pair<int32_t, bool>> stack{
      {c.outputs[static_cast<size_t>(output)].value, false}};
  while (!stack.empty()) {
    auto [op, expanded] = stack.back();
    stack.pop_back();
    if (node_of[static_cast<size_t>(op)] >= 0) continue;
    const taidl::SymOp& sop = c.ops[static_cast<size_t>(op)];
    if (!expanded) {
      stack.emplace_back(op, true);
      for (auto it = sop.operands.rbegin(); it != sop.operands.rend(); ++it)
        stack.emplace_back(*it, false);
      continue;
    }
    PatternNode n;
    n.op = op;
    if (sop.opcode == HloOpcode::kParameter) n.input = sop.input;
    for (int32_t operand : sop.operands)
      n.children.push_back(node_of[static_cast<size_t>(operand)]);
    node_of[static_cast<size_t>(op)] = static_cast<int32_t>(p.nodes.size());
    p.nodes.push_back(std::move(n));
  }
  for (PatternNode& n : p.nodes) {
    for (int32_t child : n.children)
      ++p.nodes[static_cast<size_t>(child)].uses;
  }
  p.root = node_of[static_cast<size_t>(c.outputs[static_cast<size_t>(output)].value)];
  return p;
}

// Whether a pad/slice is never the identity: its operand and result types have different dims
// that no α can make equal (AMX mm512_broadcast's lane-0 slice of f32[1, 16]).
bool neverIdentity(const UnitPattern& p, const PatternNode& n) {
  const taidl::TypeExpr& result = p.sym->ops[static_cast<size_t>(n.op)].type;
  const taidl::TypeExpr& operand =
      p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(n.children[0])].op)].type;
  if (result.dims.size() != operand.dims.size()) return true;
  for (size_t i = 0; i < result.dims.size(); ++i) {
    std::optional<int64_t> r = result.dims[i].constantValue();
    std::optional<int64_t> o = operand.dims[i].constantValue();
    if (r && o && *r != *o) return true;
  }
  return false;
}

// A link of a movement chain: an invertible movement, or a pad/slice that the rule will only use
// where α makes it the identity (the padding value of a pad must be a constant). A pad/slice that
// is never the identity stays in the skeleton, where it is matched like any other operator.
bool isChainLink(const UnitPattern& p, int32_t node) {
  const PatternNode& n = p.nodes[static_cast<size_t>(node)];
  if (n.input >= 0 || n.children.empty()) return false;
  HloOpcode op = p.sym->ops[static_cast<size_t>(n.op)].opcode;
  if (isIdentityLink(op) && neverIdentity(p, n)) return false;
  if (op == HloOpcode::kPad) {
    const PatternNode& value = p.nodes[static_cast<size_t>(n.children[1])];
    return value.input < 0 &&
           p.sym->ops[static_cast<size_t>(value.op)].opcode == HloOpcode::kConstant;
  }
  if (n.children.size() != 1) return false;
  return isInvertibleMovement(op) || isIdentityLink(op);
}

// Cuts the movement chains at the output and above each input.
void cutChains(UnitPattern& p) {
  int32_t cur = p.root;
  while (isChainLink(p, cur)) {
    p.out_chain.push_back(cur);
    cur = p.nodes[static_cast<size_t>(cur)].children[0];
    if (p.nodes[static_cast<size_t>(cur)].uses != 1) break;
  }
  p.skeleton_root = cur;
  const PatternNode& sk = p.nodes[static_cast<size_t>(cur)];
  p.pure_movement = sk.input >= 0;
  p.inputs.assign(p.sym->inputs.size(), {});
  // Parent of each node (nodes used once have exactly one).
  std::vector<int32_t> parent(p.nodes.size(), -1);
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    for (int32_t child : p.nodes[i].children)
      parent[static_cast<size_t>(child)] = static_cast<int32_t>(i);
  }
  auto in_out_chain = [&](int32_t n) {
    return std::find(p.out_chain.begin(), p.out_chain.end(), n) != p.out_chain.end();
  };
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const PatternNode& n = p.nodes[i];
    if (n.input < 0) continue;
    UnitPattern::InputChain chain;
    int32_t top = static_cast<int32_t>(i);
    chain.chain.push_back(top);
    if (!p.pure_movement) {
      while (p.nodes[static_cast<size_t>(top)].uses == 1) {
        int32_t up = parent[static_cast<size_t>(top)];
        if (up < 0 || up == p.skeleton_root || in_out_chain(up) || !isChainLink(p, up)) break;
        top = up;
        chain.chain.insert(chain.chain.begin(), top);
      }
    }
    chain.leaf = top;
    p.inputs[static_cast<size_t>(n.input)] = std::move(chain);
  }
}

}  // namespace

bool isIdentityLink(HloOpcode op) {
  return op == HloOpcode::kPad || op == HloOpcode::kSlice;
}

std::optional<int64_t> largestOverAlpha(const taidl::Expr& e, const Unit& u) {
  if (auto c = e.constantValue()) return c;
  std::vector<int64_t> attrs(static_cast<size_t>(u.num_attrs), 0);
  for (int32_t s = 0; s < u.num_alpha; ++s) {
    const taidl::AlphaRange& r = (*u.ranges)[static_cast<size_t>(s)];
    if (!r.bounded()) return std::nullopt;
    attrs[static_cast<size_t>(s)] = r.range.hi;
  }
  try {
    return taidl::evalExpr(e, taidl::EvalEnv{attrs, {}, {}});
  } catch (const taidl::ExprError&) {
    return std::nullopt;
  }
}

bool isInvertibleMovement(HloOpcode op) {
  return op == HloOpcode::kReshape || op == HloOpcode::kBitcastConvert ||
         op == HloOpcode::kTranspose || op == HloOpcode::kReverse || op == HloOpcode::kCopy;
}

namespace {

// Whether α `slot` reaches the data a case computes (UnitPattern::data_alpha).
bool usedByData(const taidl::SymCase& c, int32_t slot) {
  auto uses = [&](const taidl::Expr& e) {
    return !e.empty() && e.usesSlot(taidl::RefKind::kAlpha, slot);
  };
  auto any = [&](const std::vector<taidl::Expr>& es) {
    return std::any_of(es.begin(), es.end(), uses);
  };
  for (const taidl::SymOp& op : c.ops) {
    if (any(op.type.dims) || uses(op.literal.expr)) return true;
    for (const taidl::OpAttr& at : op.attrs) {
      if (uses(at.expr) || any(at.list)) return true;
      for (const taidl::RangeExpr& r : at.ranges)
        if (uses(r.start) || uses(r.limit) || uses(r.stride)) return true;
    }
    for (const taidl::LiteralValue& l : op.literal.elements)
      if (uses(l.expr)) return true;
  }
  for (const auto* slices : {&c.inputs, &c.outputs}) {
    for (const taidl::SymSlice& sl : *slices)
      if (any(sl.starts) || any(sl.extents)) return true;
  }
  return false;
}

}  // namespace

UnitSet buildUnits(const taidl::Isa& isa) {
  UnitSet set;
  auto add = [&](bool is_macro, int32_t index, const std::string& name, int32_t num_alpha,
                 int32_t num_attrs, const taidl::Semantics& sem,
                 const std::vector<taidl::AlphaRange>* ranges) {
    // A let's word fields are addressing attributes past the unit's own (taidl/semantics.h).
    Unit u{
        is_macro, index, name, num_alpha, num_attrs + static_cast<int32_t>(sem.let_fields.size()),
        &sem,     ranges};
    int32_t id = static_cast<int32_t>(set.units.size());
    set.units.push_back(u);
    std::string reason;
    if (!sem.selectable) reason = sem.reason;
    size_t before = set.patterns.size();
    for (size_t k = 0; reason.empty() && k < sem.cases.size(); ++k) {
      const taidl::SymCase& c = sem.cases[k];
      for (size_t o = 0; o < c.outputs.size(); ++o) {
        UnitPattern p = patternFor(id, static_cast<int32_t>(k), static_cast<int32_t>(o), c);
        // A rule must bind every input of the unit: outputs that do not depend on all of them
        // (clobbers such as a copy of one operand into a state buffer) get no pattern.
        size_t reached = 0;
        for (const PatternNode& n : p.nodes)
          reached += n.input >= 0;
        if (reached != c.inputs.size()) continue;
        cutChains(p);
        for (int32_t slot = 0; slot < num_alpha; ++slot)
          p.data_alpha.push_back(usedByData(c, slot));
        // A clobber that only copies an input (e.g. weights <- B) adds nothing to select.
        if (p.pure_movement && c.outputs[o].state) continue;
        set.patterns.push_back(std::move(p));
      }
    }
    if (reason.empty() && set.patterns.size() == before)
      reason = "no output depends on all of its inputs";
    set.not_selectable.push_back(reason);
  };
  for (size_t i = 0; i < isa.instructions.size(); ++i) {
    const taidl::Instruction& inst = isa.instructions[i];
    add(false, static_cast<int32_t>(i), inst.name.text, inst.num_alpha, inst.numAttrs(),
        isa.instruction_semantics[i], &isa.instruction_ranges[i]);
  }
  for (size_t i = 0; i < isa.macros.size(); ++i) {
    const taidl::Macro& m = isa.macros[i];
    add(true, static_cast<int32_t>(i), m.name.text, m.num_alpha, m.numAttrs(),
        isa.macro_semantics[i], &isa.macro_ranges[i]);
  }
  return set;
}

bool readsInPlace(const taidl::SymCase& c, size_t input) {
  const taidl::SymSlice& in = c.inputs[input];
  for (const taidl::SymSlice& out : c.outputs) {
    if (out.buffer != in.buffer || out.starts.size() != in.starts.size()) continue;
    bool same = true;
    for (size_t d = 0; d < in.starts.size() && same; ++d)
      same = taidl::exprText(in.starts[d]) == taidl::exprText(out.starts[d]);
    if (same) return true;
  }
  return false;
}

}  // namespace tacit::isel
