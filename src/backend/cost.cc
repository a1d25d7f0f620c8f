#include "backend/cost.h"

#include <algorithm>

#include "taidl/expr.h"
#include "timing/timing.h"

namespace tacit::backend {

std::string_view costModelName(CostModel m) {
  switch (m) {
    case CostModel::kCount:
      return "count";
    case CostModel::kSpec:
      return "spec";
    case CostModel::kBytes:
      return "bytes";
    case CostModel::kCycles:
      return "cycles";
  }
  return "count";
}

std::optional<CostModel> parseCostModel(std::string_view name) {
  for (CostModel m : {CostModel::kCount, CostModel::kSpec, CostModel::kBytes, CostModel::kCycles}) {
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

namespace {

int64_t instructions(const taidl::Isa& isa, const isel::Unit& u) {
  return u.is_macro ? static_cast<int64_t>(isa.macros[static_cast<size_t>(u.index)].calls.size())
                    : 1;
}

int64_t specCost(const taidl::SymCase& sym, const std::vector<int64_t>& attrs) {
  return sym.cost.empty() ? 1 : taidl::evalExpr(sym.cost, taidl::EvalEnv{attrs, {}, {}});
}

int64_t bytesMoved(const taidl::SymCase& sym, const isel::PiiGraph& graph,
                   const isel::PiiNode& node) {
  int32_t out_buffer = sym.outputs.empty() ? -1 : sym.outputs.front().buffer;
  int64_t bytes = 0;
  for (size_t i = 0; i < sym.inputs.size(); ++i) {
    if (sym.inputs[i].buffer == out_buffer) continue;
    bytes += graph.values[static_cast<size_t>(node.operands[i])].shape.byteSize();
  }
  return bytes;
}

// A load moves its HBM inputs into an on-chip buffer, a store its on-chip inputs into HBM: the
// smaller of what crosses on each side (a pitched load reads a span with gaps but moves its rows;
// a widening load moves the narrow bytes; a read-modify-write store's HBM operand is its own
// region). HBM-to-HBM instructions and on-chip moves count 0.
int64_t hbmBytes(const taidl::Isa& isa, const taidl::SymCase& sym, const isel::PiiGraph& graph,
                 const isel::PiiNode& node) {
  auto hbm = [&](int32_t buffer) { return isa.buffers[static_cast<size_t>(buffer)].is_hbm; };
  bool writes_hbm = false;
  for (const taidl::SymSlice& out : sym.outputs)
    writes_hbm |= hbm(out.buffer);
  int64_t in = 0, out = 0;
  for (size_t i = 0; i < sym.inputs.size(); ++i) {
    if (hbm(sym.inputs[i].buffer) == writes_hbm) continue;
    in += graph.values[static_cast<size_t>(node.operands[i])].shape.byteSize();
  }
  for (size_t k = 0; k < sym.outputs.size() && k < node.outputs.size(); ++k) {
    if (node.outputs[k] < 0) continue;
    out += graph.values[static_cast<size_t>(node.outputs[k])].shape.byteSize();
  }
  return std::min(in, out);
}

}  // namespace

int64_t callCost(CostModel model, const taidl::Isa& isa, const isel::UnitSet& units,
                 const isel::PiiGraph& graph, const isel::PiiNode& node,
                 const std::vector<int64_t>& attrs) {
  const isel::Unit& u = units.units[static_cast<size_t>(node.unit)];
  const taidl::SymCase& sym = u.semantics->cases[static_cast<size_t>(node.case_index)];
  switch (model) {
    case CostModel::kCount:
      return instructions(isa, u);
    case CostModel::kSpec:
    case CostModel::kCycles:  // a call's cycles depend on the whole program: its spec cost
      return specCost(sym, attrs);
    case CostModel::kBytes:
      return bytesMoved(sym, graph, node);
  }
  return 1;
}

alloc::CallCost allocationCost(CostModel model, const taidl::Isa& isa, const isel::UnitSet& units) {
  return [model, &isa, &units](const isel::PiiGraph& graph, const isel::PiiNode& node) {
    std::vector<int64_t> attrs = node.alpha;
    attrs.resize(static_cast<size_t>(units.units[static_cast<size_t>(node.unit)].num_attrs), 0);
    try {
      return callCost(model, isa, units, graph, node, attrs);
    } catch (const taidl::ExprError&) {
      return int64_t{1};  // a cost that needs β: counted as one instruction until allocated
    }
  };
}

ProgramCosts callCosts(const taidl::Isa& isa, const isel::UnitSet& units,
                       const isel::PiiGraph& graph, const isel::PiiNode& node,
                       const std::vector<int64_t>& attrs) {
  ProgramCosts c;
  c.instructions = callCost(CostModel::kCount, isa, units, graph, node, attrs);
  c.spec = callCost(CostModel::kSpec, isa, units, graph, node, attrs);
  c.bytes = callCost(CostModel::kBytes, isa, units, graph, node, attrs);
  const isel::Unit& u = units.units[static_cast<size_t>(node.unit)];
  c.hbm_bytes =
      hbmBytes(isa, u.semantics->cases[static_cast<size_t>(node.case_index)], graph, node);
  return c;
}

int64_t programCycles(const taidl::Isa& isa, const oracle::Program& program) {
  return timing::simulate(isa, program, timing::zeroInputs(program)).cycles;
}

ProgramCosts measure(const taidl::Isa& isa, const isel::UnitSet& units, const isel::PiiGraph& graph,
                     const alloc::AllocResult& allocation) {
  ProgramCosts c;
  for (int32_t n : allocation.order) {
    c.add(callCosts(isa, units, graph, graph.nodes[static_cast<size_t>(n)],
                    allocation.placement.attrs[static_cast<size_t>(n)]));
  }
  return c;
}

}  // namespace tacit::backend
