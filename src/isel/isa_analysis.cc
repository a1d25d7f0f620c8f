#include "isel/isa_analysis.h"

#include <numeric>

#include "hlo/attributes.h"
#include "isel/ir.h"

namespace tacit::isel {

using hlo::HloOpcode;

int elementwiseArity(HloOpcode op) {
  if (op == HloOpcode::kClamp || op == HloOpcode::kSelect) return 3;
  if (op == HloOpcode::kCompare || (hlo::isElementwiseBinary(op) && iselSupports(op))) return 2;
  if (op == HloOpcode::kConvert ||
      (hlo::isElementwiseUnary(op) && iselSupports(op) && op != HloOpcode::kCopy))
    return 1;
  return 0;
}

IsaNeeds analyzeIsa(const taidl::Isa& isa, const UnitSet& units) {
  IsaNeeds needs;
  for (const UnitPattern& p : units.patterns) {
    const Unit& u = units.units[static_cast<size_t>(p.unit)];
    // A unit that computes one elementwise operator over a flat vector (only its root: operators
    // inside a larger computation, as a layernorm's, would flatten every kernel's operators for
    // nothing).
    const PatternNode& top = p.nodes[static_cast<size_t>(p.skeleton_root)];
    const taidl::SymOp& top_op = p.sym->ops[static_cast<size_t>(top.op)];
    if (top.input < 0 && elementwiseArity(top_op.opcode) != 0 && top_op.type.dims.size() == 1)
      needs.flat_elementwise.insert({top_op.opcode, top_op.type.dtype});
    for (const auto* slices : {&p.sym->inputs, &p.sym->outputs}) {
      for (const taidl::SymSlice& s : *slices) {
        if (!isa.buffers[static_cast<size_t>(s.buffer)].is_hbm || s.affine.empty()) continue;
        int64_t step = 0;
        for (const taidl::AffineTerm& t : s.affine[0].terms) {
          auto c = t.coeff.constantValue();
          step = std::gcd(step, c ? std::abs(*c) : 1);
        }
        if (step > 0) needs.hbm_alignment = std::lcm(needs.hbm_alignment, step);
      }
    }
    for (const PatternNode& n : p.nodes) {
      const taidl::SymOp& op = p.sym->ops[static_cast<size_t>(n.op)];
      if (n.input >= 0) continue;
      needs.ops.insert(op.opcode);
      if (elementwiseArity(op.opcode) != 0 && op.type.dims.size() == 2) {
        IsaNeeds::Extents& e = needs.elementwise[{op.opcode, op.type.dtype}];
        if (auto r = largestOverAlpha(op.type.dims[0], u)) e.rows.insert(*r);
        if (auto c = largestOverAlpha(op.type.dims[1], u)) e.cols.insert(*c);
      }
      if (op.opcode != HloOpcode::kDot || op.type.dims.size() != 2 || n.children.size() != 2)
        continue;
      if (auto r = largestOverAlpha(op.type.dims[0], u)) needs.dot_rows.insert(*r);
      if (auto c = largestOverAlpha(op.type.dims[1], u)) needs.dot_cols.insert(*c);
      needs.dot_types.insert(op.type.dtype);
      const taidl::SymOp& lhs =
          p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(n.children[0])].op)];
      if (lhs.type.dims.size() == 2) {
        if (auto k = largestOverAlpha(lhs.type.dims[1], u)) needs.dot_depths.insert(*k);
      }
    }
  }
  return needs;
}

}  // namespace tacit::isel
