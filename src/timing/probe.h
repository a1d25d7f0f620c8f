// The probe: a cheap estimate of a program's cycles from its loop nest's steady state
// (docs/timing.md, "The probe"). The timing model runs the program with every loop cut to two
// iterations and to three (zero inputs: cycles never depend on values); the difference is what the
// extra calls cost once the loops are running, and the cut program's cycles extrapolated by it to
// the whole program's calls are the estimate. Exact for a program without loops; the work is at
// most 3^depth iterations of the loop bodies, whatever the kernel's size. The learned cost models
// take it as a feature (docs/costmodel.md) and `tacit tune` as its first rung (docs/tuning.md).
#pragma once

#include <cstdint>

#include "oracle/program.h"
#include "taidl/isa.h"

namespace tacit::timing {

struct Probe {
  bool ran = false;            // false: a cut program did not run (a constraint the cut violates)
  double cycles_per_call = 0;  // the steady state: extra cycles per extra call
  int64_t estimate = 0;        // cycles of the whole program, extrapolated
  int64_t instructions = 0;    // simulated by the two runs
};

Probe probe(const taidl::Isa& isa, const oracle::Program& program);

}  // namespace tacit::timing
