#include "backend/cost.h"

#include "taidl/expr.h"

namespace tacit::backend {

std::string_view costModelName(CostModel m) {
  switch (m) {
    case CostModel::kCount:
      return "count";
    case CostModel::kSpec:
      return "spec";
    case CostModel::kBytes:
      return "bytes";
  }
  return "count";
}

std::optional<CostModel> parseCostModel(std::string_view name) {
  for (CostModel m : {CostModel::kCount, CostModel::kSpec, CostModel::kBytes}) {
    if (costModelName(m) == name) return m;
  }
  return std::nullopt;
}

CostModel defaultCostModel(const taidl::Isa& isa) {
  for (const taidl::Instruction& inst : isa.instructions) {
    if (inst.cost != nullptr) return CostModel::kSpec;
  }
  return CostModel::kCount;
}

ProgramCosts measure(const taidl::Isa& isa, const isel::UnitSet& units, const isel::PiiGraph& graph,
                     const alloc::AllocResult& allocation) {
  ProgramCosts c;
  for (int32_t n : allocation.order) {
    const isel::PiiNode& node = graph.nodes[static_cast<size_t>(n)];
    const isel::Unit& u = units.units[static_cast<size_t>(node.unit)];
    const taidl::SymCase& sym = u.semantics->cases[static_cast<size_t>(node.case_index)];
    const std::vector<int64_t>& attrs = allocation.placement.attrs[static_cast<size_t>(n)];
    c.instructions +=
        u.is_macro ? static_cast<int64_t>(isa.macros[static_cast<size_t>(u.index)].calls.size())
                   : 1;
    c.spec += sym.cost.empty() ? 1 : taidl::evalExpr(sym.cost, taidl::EvalEnv{attrs, {}, {}});
    int32_t out_buffer = sym.outputs.empty() ? -1 : sym.outputs.front().buffer;
    for (size_t i = 0; i < sym.inputs.size(); ++i) {
      if (sym.inputs[i].buffer == out_buffer) continue;
      c.bytes += graph.values[static_cast<size_t>(node.operands[i])].shape.byteSize();
    }
  }
  return c;
}

}  // namespace tacit::backend
