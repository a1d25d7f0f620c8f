// Cost models for candidate search (docs/algorithm.md §6).
//
//  count  hardware instructions executed (a macro counts the calls it expands to);
//  spec   the sum of the spec's `cost` expressions over the calls, with their attribute values;
//  bytes  data moved between buffers: every operand slice a call reads from a buffer other than
//         the one its result goes to (HBM <-> scratchpads, scratchpad <-> accumulator);
//  cycles the timing model's cycles for the whole program (docs/timing.md): each candidate
//         program is built and simulated; per call (phase 2's rematerialisation choice, before a
//         program exists) the spec cost stands in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "alloc/allocator.h"
#include "oracle/program.h"

namespace tacit::backend {

enum class CostModel { kCount, kSpec, kBytes, kCycles };
std::string_view costModelName(CostModel m);
std::optional<CostModel> parseCostModel(std::string_view name);
// `spec` if any instruction of the ISA has a cost expression, else `count`.
CostModel defaultCostModel(const taidl::Isa& isa);

struct ProgramCosts {
  int64_t instructions = 0;
  int64_t spec = 0;
  int64_t bytes = 0;
  // Bytes crossing between HBM and the on-chip buffers: what loads read from HBM and what stores
  // write to it (HBM-to-HBM instructions and on-chip moves count 0). Reported, not a cost model.
  int64_t hbm_bytes = 0;
  // The timing model's cycles of the whole program: measured only under CostModel::kCycles
  // (programCycles), 0 otherwise. Not additive: add() leaves it to be measured on the whole.
  int64_t cycles = 0;
  // Adds `times` copies of `c`.
  void add(const ProgramCosts& c, int64_t times = 1) {
    instructions += times * c.instructions;
    spec += times * c.spec;
    bytes += times * c.bytes;
    hbm_bytes += times * c.hbm_bytes;
  }
  int64_t of(CostModel m) const {
    switch (m) {
      case CostModel::kCount:
        return instructions;
      case CostModel::kSpec:
        return spec;
      case CostModel::kBytes:
        return bytes;
      case CostModel::kCycles:
        return cycles;
    }
    return instructions;
  }
  // Whether this program is better than `other` under `m`: a lower cost, and between equal costs
  // less HBM traffic, then fewer bytes moved, then fewer instructions (candidates of equal cost
  // are otherwise an arbitrary tie-break of the extraction order).
  bool betterThan(const ProgramCosts& other, CostModel m) const {
    auto key = [m](const ProgramCosts& c) {
      return std::tuple(c.of(m), c.hbm_bytes, c.bytes, c.instructions);
    };
    return key(*this) < key(other);
  }
};

// The cost of one call under `model`; `attrs` are its α then β (β 0 when not yet allocated: the
// spec's cost expressions are expected to depend on α).
int64_t callCost(CostModel model, const taidl::Isa& isa, const isel::UnitSet& units,
                 const isel::PiiGraph& graph, const isel::PiiNode& node,
                 const std::vector<int64_t>& attrs);
// callCost before allocation, for phase 2's rematerialisation choice.
alloc::CallCost allocationCost(CostModel model, const taidl::Isa& isa, const isel::UnitSet& units);

// Every measure of one call with its allocated attributes (α then β).
ProgramCosts callCosts(const taidl::Isa& isa, const isel::UnitSet& units,
                       const isel::PiiGraph& graph, const isel::PiiNode& node,
                       const std::vector<int64_t>& attrs);
// The timing model's cycles of `program` (docs/timing.md), run on the oracle with zero inputs:
// the model's cycles depend on the instruction stream and its addresses, never on values.
int64_t programCycles(const taidl::Isa& isa, const oracle::Program& program);

// The sum over an allocated program's calls.
ProgramCosts measure(const taidl::Isa& isa, const isel::UnitSet& units, const isel::PiiGraph& graph,
                     const alloc::AllocResult& allocation);

}  // namespace tacit::backend
