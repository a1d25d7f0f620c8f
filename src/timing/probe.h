// The probe: a cheap estimate of a program's cycles from its loop nest's steady state
// (docs/timing.md, "The probe"). The timing model runs the program with every loop cut to two
// iterations and to three (zero inputs: cycles never depend on values); the difference is what the
// extra calls cost once the loops are running, and the cut program's cycles extrapolated by it to
// the whole program's calls are the estimate. Exact for a program without loops; the work is at
// most 3^depth iterations of the loop bodies, whatever the kernel's size. The learned cost models
// take it as a feature (docs/costmodel.md) and `tacit tune` as its first rung (docs/tuning.md).
#pragma once

#include <algorithm>
#include <cstdint>

#include "oracle/program.h"
#include "taidl/isa.h"

namespace tacit::timing {

struct Probe {
  bool ran = false;            // false: a cut program did not run (a constraint the cut violates)
  double cycles_per_call = 0;  // the steady state: extra cycles per extra call
  int64_t estimate = 0;        // cycles of the whole program, extrapolated
  int64_t instructions = 0;    // simulated by the two runs
  // What the estimate saw and what it extrapolated: the estimate is `cut_cycles` (the
  // three-iteration run, simulated) plus the steady state's cycles for the calls the whole program
  // executes beyond that run's. `coverage()` is the share of the program's calls the run executed
  // (1: nothing extrapolated, the estimate is exact; docs/costmodel.md, "The gate").
  double calls = 0;        // the whole program's calls (loop bounds at their constant parts)
  double cut_calls = 0;    // the three-iteration run's
  int64_t cut_cycles = 0;  // the three-iteration run's cycles
  double coverage() const {
    if (!ran) return 0;
    return calls > 0 ? std::min(1.0, cut_calls / calls) : 1;
  }
  // The estimate's extrapolated part, in cycles (0 when the cut covers the program).
  double extrapolated() const { return std::max(0.0, static_cast<double>(estimate - cut_cycles)); }
};

Probe probe(const taidl::Isa& isa, const oracle::Program& program);

}  // namespace tacit::timing
