// "Why not" diagnostics (docs/algorithm.md §3.8): when no instruction graph exists, name the HLO
// instruction no unit can produce (file:line:col) and, for the units closest to producing it, the
// check that failed (types, attributes, constraints, buffers).
#pragma once

#include <vector>

#include "isel/selector.h"

namespace tacit::isel {

// Buffers each e-class can be produced in by some instruction graph (a fixpoint over piis, kernel
// inputs and constants in HBM, and views), indexed by canonical class id.
std::vector<std::vector<bool>> producibleBuffers(const Selector& selector);

// The diagnostic for a kernel without any instruction graph (the selector must be saturated).
Diagnostic explainNoCandidate(const Selector& selector);

}  // namespace tacit::isel
