#include "isel/pattern_view.h"

#include <stdexcept>

#include "hlo/builder.h"
#include "support/diagnostic.h"
#include "taidl/ops.h"

namespace tacit::isel {
namespace {

using hlo::HloOpcode;

const taidl::SymOp& opOf(const UnitPattern& p, int32_t node) {
  return p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(node)].op)];
}

// One link applied to the view of its operand.
std::optional<ChainView> applyLink(const ChainView& x, const taidl::SymOp& op,
                                   const hlo::Shape& operand, const taidl::EvalEnv& env) {
  hlo::Shape result = taidl::evalType(op.type, env);
  if (op.opcode == HloOpcode::kCopy) return x;
  hlo::HloModule scratch("reducers");
  taidl::ReducerFn reducer = [&](HloOpcode o, hlo::PrimitiveType t) {
    return hlo::addScalarReducer(scratch, o, t);
  };
  hlo::HloAttributes attrs =
      taidl::evalOpAttrs(op.opcode, op.attrs, env, hlo::PrimitiveType::kInvalid, reducer);
  if (op.opcode == HloOpcode::kPad) {
    auto v = padView(x.view, operand, *attrs.padding, result);
    if (!v) return std::nullopt;
    return ChainView{*v, std::min(x.valid_end, x.view.offset + operand.byteSize())};
  }
  if (!isMovement(op.opcode)) return std::nullopt;
  auto v = applyMovement(x.view, operand, op.opcode, attrs, result);
  if (!v) return std::nullopt;
  return ChainView{*v, x.valid_end};
}

}  // namespace

std::optional<ChainView> chainView(const UnitPattern& p, const std::vector<int32_t>& chain,
                                   const taidl::EvalEnv& env) {
  if (chain.empty()) return std::nullopt;
  try {
    hlo::Shape below = taidl::evalType(opOf(p, chain.back()).type, env);
    ChainView cur{StridedView::identity(below.byteSize()), below.byteSize()};
    for (size_t k = chain.size() - 1; k-- > 0;) {
      const taidl::SymOp& op = opOf(p, chain[k]);
      auto next = applyLink(cur, op, below, env);
      if (!next) return std::nullopt;
      cur = std::move(*next);
      below = taidl::evalType(op.type, env);
    }
    return cur;
  } catch (const taidl::ExprError&) {
    return std::nullopt;
  } catch (const DiagnosticError&) {
    return std::nullopt;
  } catch (const std::logic_error&) {
    return std::nullopt;  // an ill-typed operator for this α
  }
}

std::optional<StridedView> updateBox(const hlo::Shape& result, const hlo::Shape& update) {
  if (result.rank() != update.rank()) return std::nullopt;
  hlo::HloAttributes box;
  std::vector<hlo::SliceDim> dims;
  for (int64_t i = 0; i < result.rank(); ++i) {
    if (update.dim(i) > result.dim(i) || update.dim(i) == 0) return std::nullopt;
    dims.push_back({0, update.dim(i), 1});
  }
  box.slice = std::move(dims);
  return applyMovement(StridedView::identity(result.byteSize()), result, HloOpcode::kSlice, box,
                       update);
}

std::optional<int64_t> solveSlot(const std::function<std::optional<StridedView>(int64_t)>& view_at,
                                 const StridedView& target) {
  // Probes far apart and prime-ish, so that no probe makes dimensions coalesce by accident.
  constexpr int64_t kProbe = 7919;
  std::optional<StridedView> v[3];
  for (int i = 0; i < 3; ++i) {
    v[i] = view_at(kProbe * (i + 1));
    if (!v[i] || v[i]->dims.size() != target.dims.size()) return std::nullopt;
  }
  std::optional<int64_t> x;
  for (size_t k = 0; k < target.dims.size(); ++k) {
    const ViewDim &a = v[0]->dims[k], &b = v[1]->dims[k], &c = v[2]->dims[k];
    if (a.extent != target.dims[k].extent || b.extent != a.extent || c.extent != a.extent)
      return std::nullopt;
    int64_t step = b.stride - a.stride;
    if (c.stride - b.stride != step || step % kProbe != 0) return std::nullopt;  // not affine
    int64_t slope = step / kProbe;
    if (slope == 0) {
      if (a.stride != target.dims[k].stride) return std::nullopt;
      continue;
    }
    int64_t diff = target.dims[k].stride - a.stride;
    if (diff % slope != 0) return std::nullopt;
    int64_t here = kProbe + diff / slope;
    if (x && *x != here) return std::nullopt;
    x = here;
  }
  if (!x) return std::nullopt;
  // Checked exactly at the solution (the probes only proposed it).
  std::optional<StridedView> at = view_at(*x);
  if (!at || at->dims != target.dims) return std::nullopt;
  return x;
}

}  // namespace tacit::isel
