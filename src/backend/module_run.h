// A module program (backend/module_program.h) executed (issue 25; docs/backend.md, "Module
// execution"): the steps in order, accelerator steps as their programs on the oracle with their
// parameters taken from the values computed so far, host steps by the HLO reference evaluator,
// plumbing as the values it moves. The module's outputs are the entry root's value. Verification
// evaluates the whole module with the HLO evaluator on the same arguments and compares every
// output bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "backend/module_program.h"
#include "hlo/literal.h"
#include "taidl/isa.h"

namespace tacit::backend {

// What a run may hold: the bytes of every value of the entry computation (parameters included),
// summed. The shared corpus has modules whose random inputs alone would take hundreds of
// gigabytes (a scatter's updates of 86 billion elements); a run of those is refused up front.
inline constexpr double kMaxRunBytes = 4.0 * (1 << 30);

struct ModuleRunOptions {
  double max_bytes = kMaxRunBytes;
  // Sees each accelerator step's results (in the region's result order) before they become
  // values: tests corrupt one to prove that verification catches a wrong program.
  std::function<void(const ModuleStep&, std::vector<hlo::Literal>& results)> on_accelerator_results;
};

// What one accelerator or host step did (plumbing is not recorded).
struct StepRun {
  size_t step = 0;  // index in ModuleProgram::steps
  double seconds = 0;
  int64_t instructions = 0, cost = 0;  // accelerator steps: executed, the spec's cost summed
  // Accelerator steps: bytes between HBM and the on-chip buffers (the compiler's count,
  // ProgramCosts::hbm_bytes).
  int64_t hbm_bytes = 0;
};

struct ModuleRun {
  hlo::Literal result;  // the entry root's value
  // The accelerator and host steps run: those the root depends on (as the HLO evaluator, a run
  // leaves the others out).
  std::vector<StepRun> steps;
  int64_t instructions = 0, cost = 0, hbm_bytes = 0;
  double accelerator_seconds = 0, host_seconds = 0;
};

// Runs `program` on `arguments` (the entry parameters' values, in parameter order). A module
// above options.max_bytes (checkRunFits), a missing or mis-shaped argument, a constant whose data
// the module elides, an operation the evaluator cannot evaluate and a program the oracle stops are
// DiagnosticErrors.
ModuleRun runModule(const taidl::Isa& isa, const ModuleProgram& program,
                    std::span<const hlo::Literal> arguments, const ModuleRunOptions& options = {});

// A DiagnosticError, naming the largest value, when the entry's values sum to more than
// `max_bytes`.
void checkRunFits(const hlo::HloModule& module, double max_bytes = kMaxRunBytes);

// Random values for the entry's parameters (hlo::randomLiteral, parameter i from mixSeed(seed,
// i), as `tacit hlo eval --random-inputs`), after checkRunFits(module, max_bytes).
std::vector<hlo::Literal> randomArguments(const hlo::HloModule& module, uint64_t seed,
                                          double max_bytes = kMaxRunBytes);

// The first difference between `got` (the module run's result) and `want` (the HLO evaluator's
// for the whole module): "output I ('name'): element J: module run X, HLO evaluator Y" (the
// output's index among the root's array leaves, the instruction that produced it), or empty.
std::string firstOutputDifference(const hlo::HloModule& module, const hlo::Literal& got,
                                  const hlo::Literal& want);

}  // namespace tacit::backend
