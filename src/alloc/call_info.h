// The address functions of one call (ACT's h_θ with α fixed): for every operand and result slice,
// its buffer, extents and start per access dimension as an affine function of the call's β.
#pragma once

#include <cstdint>
#include <vector>

#include "isel/pii_graph.h"

namespace tacit::alloc {

struct AffineStart {
  int64_t constant = 0;
  std::vector<std::pair<int32_t, int64_t>> terms;  // (β attribute slot, coefficient)
  // The start for a call's attribute values (α then β, as Placement::attrs holds them).
  int64_t at(const std::vector<int64_t>& attrs) const {
    int64_t v = constant;
    for (const auto& [slot, coeff] : terms)
      v += coeff * attrs[static_cast<size_t>(slot)];
    return v;
  }
};

struct SliceInfo {
  int32_t buffer = 0;
  std::vector<AffineStart> starts;  // per access dimension
  std::vector<int64_t> extents;     // per access dimension
};

struct CallInfo {
  const isel::Unit* unit = nullptr;
  const taidl::SymCase* sym = nullptr;
  std::vector<int64_t> attrs;  // α values, then β slots (0 until allocated)
  std::vector<SliceInfo> inputs;
  std::vector<SliceInfo> outputs;
};

// Throws std::logic_error if a start is not affine in β (the selector only selects affine units).
CallInfo callInfo(const isel::UnitSet& units, const isel::PiiNode& node);
// One slice's address functions for a call's attribute values (α read; β left as terms).
SliceInfo sliceInfo(const taidl::SymSlice& slice, const std::vector<int64_t>& attrs);

}  // namespace tacit::alloc
