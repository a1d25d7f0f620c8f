// A whole module as a program of steps (issue 25; docs/backend.md, "Module execution"): each
// accelerator region of its partition (backend/partition.h) is one step, run as its compiled
// program on the oracle; each operation that stays on the host is one step, evaluated by the HLO
// reference evaluator as a kernel of one operation (with the computations it calls); parameters,
// constants, tuples and their elements are data plumbing, steps that move values. The steps are
// in a topological order of the dependences between them, which the partition's convex regions
// guarantee exists.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/partition.h"
#include "hlo/instruction.h"

namespace tacit::backend {

enum class StepKind { kAccelerator, kHost, kPlumbing };

struct ModuleStep {
  StepKind kind = StepKind::kPlumbing;
  size_t region = 0;                               // kAccelerator: partition.regions[region]
  const hlo::HloInstruction* operation = nullptr;  // kHost, kPlumbing
  std::string reason;                              // kHost: why it stays on the host
  // kHost: the operation as a kernel of its own, and the values it takes, in parameter order.
  std::unique_ptr<hlo::HloModule> kernel;
  std::vector<const hlo::HloInstruction*> parameters;
};

struct ModuleProgram {
  ModulePartition partition;
  std::vector<ModuleStep> steps;  // in execution order
  int64_t count(StepKind kind) const;
};

// The steps of `partition`, ordered: each after the steps computing its operands, ties broken by
// the computation's order. A cycle between steps is a bug of the partition (an internal error).
ModuleProgram moduleProgram(ModulePartition partition);

}  // namespace tacit::backend
