// A compiled kernel's program run on the oracle with the kernel's own values: logical literals
// in (one per entry parameter), logical literals out (one per array result). The program's HBM
// tensors hold the values as the kernel's layouts lay them out (isel::toPhysical); --verify and
// module execution (backend/module_run.h) both run programs this way.
#pragma once

#include <span>
#include <vector>

#include "hlo/instruction.h"
#include "hlo/literal.h"
#include "oracle/machine.h"
#include "oracle/program.h"
#include "taidl/isa.h"

namespace tacit::backend {

// `program`, compiled from `kernel`, run on `arguments` (the entry parameters' values, in
// parameter order). Its results in the order of isel::entryResultShapes (the root's tuple
// elements, or the root). `stats` (optional) receives the run's counters. A missing or mis-shaped
// argument, or a run the oracle stops, is a DiagnosticError.
std::vector<hlo::Literal> runKernelProgram(const taidl::Isa& isa, const hlo::HloModule& kernel,
                                           const oracle::Program& program,
                                           std::span<const hlo::Literal* const> arguments,
                                           oracle::Stats* stats = nullptr);

}  // namespace tacit::backend
