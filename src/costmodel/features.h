// Features of a program for a learned cost model (docs/costmodel.md): computed from the program's
// loop nest and the spec's costs and timing clauses, and from one probe of the timing model on the
// loop nest cut to two and three iterations per loop — work that does not grow with the kernel's
// size: the point of a learned model is to be cheaper than the timing model it learns from.
//
// The first kShared features mean the same on every ISA (instructions, bytes, engine and memory
// occupancy, latency, loop structure, the bounds they imply, the probe), so that a model trained on
// one ISA can be carried to another; the rest count each instruction of the ISA (named
// "count:<instruction>").
#pragma once

#include <string>
#include <vector>

#include "costmodel/gate.h"
#include "oracle/program.h"
#include "taidl/isa.h"

namespace tacit::costmodel {

inline constexpr size_t kShared = 19;
// The index of the probe's estimate of the cycles (log2(1 + cycles)) among the shared features.
inline constexpr size_t kProbeEstimate = 15;
// The index of the probe's coverage (the share of the program's calls its cut ran; gate.h): a
// model may learn from it that a covered program's cycles are the probe's estimate.
inline constexpr size_t kProbeCoverage = 18;

struct Features {
  std::vector<std::string> names;
  std::vector<float> values;  // names.size() values
  // The probe's estimate in its simulated and extrapolated parts (gate.h), unrounded: what a
  // model of the probe's error corrects.
  ProbeParts probe;
};

// The shared features' names, in order.
const std::vector<std::string>& sharedNames();

// A program's features. Loop bounds are taken at their constant parts (tiled programs' bounds are
// constants); attribute values at the loops' first iteration (an instruction's computational
// attributes do not move; its costs and timing depend on them, not on addresses).
Features programFeatures(const taidl::Isa& isa, const oracle::Program& program);

}  // namespace tacit::costmodel
