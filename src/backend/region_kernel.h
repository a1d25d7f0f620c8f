// A group of a module's entry operations written as a kernel of its own (docs/backend.md,
// "Coverage"): what the partition compiles for a region, and what module execution evaluates for
// an operation that stays on the host. The values it takes from outside are its parameters
// (constants are copied in: a clamp's bounds are what make it a saturation), the values used
// outside it are its results, the computations its operations call come along.
#pragma once

#include <string>
#include <vector>

#include "hlo/instruction.h"

namespace tacit::backend {

// Parameters, constants, tuples and their elements carry data between operations: they are not
// work to offload, and module execution moves their values itself.
bool isPlumbing(hlo::HloOpcode opcode);

// What an operation reads and writes (its operands and result), in bytes.
double operationBytes(const hlo::HloInstruction& op);

struct RegionKernel {
  std::string text;  // an HLO module
  // The operation each line of `text` writes (null for the others): a diagnostic's line names
  // the operation it is about.
  std::vector<const hlo::HloInstruction*> lines;
  // The values the kernel takes, in parameter-number order (computed outside it, not constants).
  std::vector<const hlo::HloInstruction*> parameters;
};

// `region`, in the computation's order, as a kernel whose root is `outputs` (one value, or a tuple
// of them in this order).
RegionKernel regionKernel(const std::vector<const hlo::HloInstruction*>& region,
                          const std::vector<const hlo::HloInstruction*>& outputs);

}  // namespace tacit::backend
