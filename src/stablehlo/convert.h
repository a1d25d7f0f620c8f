// The conversion of a StableHLO syntax tree (syntax.h) to the HLO IR, through hlo::HloBuilder so
// that shape inference checks every op as the HLO parser's modules are checked.
//
// Functions become computations (the entry is a public @main, else the only public function, else
// the only function); func.call becomes `call`; a reduce's region (or `applies stablehlo.add`)
// becomes its reducer computation, identical reducers shared; several returned values become a
// tuple root. Values keep their names where HLO allows them (`%cst_1` -> cst_1; `%0` is named by
// its opcode); a parameter takes the name of its name location (`loc("x")`) when it has one, and a
// single result the name of jax.result_info when that is a plain identifier. Every op outside the
// subset, or with attributes HLO cannot hold, is a DiagnosticError at the op.
#pragma once

#include <memory>

#include "hlo/instruction.h"
#include "stablehlo/syntax.h"
#include "support/source.h"

namespace tacit::stablehlo {

std::unique_ptr<hlo::HloModule> convertModule(const SourceFile& file, const Module& module);

}  // namespace tacit::stablehlo
