// What an ISA's units need of the IR (IsaNeeds), derived once per ISA from their patterns: the
// operators they use and the extents of their dots and elementwise operators. The IR rules are
// selected (rules.h) and sized by it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>

#include "hlo/dtype.h"
#include "hlo/opcode.h"
#include "isel/units.h"

namespace tacit::isel {

// What the ISA's units need, derived once per ISA from their patterns.
struct IsaNeeds {
  std::set<hlo::HloOpcode> ops;          // operators of any unit pattern
  std::set<int64_t> dot_rows, dot_cols;  // result extents of the units' dots (largest per α range)
  std::set<int64_t> dot_depths;          // contracting extents of the units' dots
  std::set<hlo::PrimitiveType> dot_types;  // result element types of the units' dots
  // Extents of the units' rank-2 elementwise results (largest per α range), per operator and
  // result type.
  struct Extents {
    std::set<int64_t> rows, cols;
  };
  std::map<std::pair<hlo::HloOpcode, hlo::PrimitiveType>, Extents> elementwise;
  // The units' rank-1 elementwise operators, by result type (flat vectors: Gemmini's HBM `add`).
  std::set<std::pair<hlo::HloOpcode, hlo::PrimitiveType>> flat_elementwise;
  // The alignment of the kernel's tensors in HBM: the least common multiple of the steps of the
  // units' HBM addresses (a load that addresses 256-byte blocks: `dram_base * 256`). 1 for
  // byte-addressed machines.
  int64_t hbm_alignment = 1;
};
IsaNeeds analyzeIsa(const taidl::Isa& isa, const UnitSet& units);

// The operand count of an elementwise operator the IR supports (0: not elementwise).
int elementwiseArity(hlo::HloOpcode op);

}  // namespace tacit::isel
