// HLO module -> StableHLO text in the pretty form JAX prints (`tacit hlo print --stablehlo`).
//
// Each computation called by `call` (and the entry) is a func.func (the entry public, the others
// private); a reduce's reducer is printed inline as its `reducer(...)` region. Values keep their
// HLO names (%add.3), renamed only where a region would redefine a name of its function. Layouts,
// metadata, sharding and the other attributes StableHLO's ops do not carry are dropped
// (docs/stablehlo.md lists them). An instruction without an op in the subset is a DiagnosticError
// naming it.
#pragma once

#include <string>

#include "hlo/instruction.h"

namespace tacit::stablehlo {

// Any module the HLO parser accepts: what the printer cannot write (including structure the
// verifier would reject) is a DiagnosticError.
std::string printStableHlo(const hlo::HloModule& module);

}  // namespace tacit::stablehlo
