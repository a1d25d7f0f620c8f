// The gate (docs/costmodel.md, "The gate"): a learned model of the probe's error corrects only
// the part of the probe's estimate that the probe extrapolated, never the part it simulated.
//
// The probe (timing/probe.h) simulates the loop nest cut to three iterations per loop and adds
// the steady state's cycles for every call beyond the cut. Its estimate is therefore the sum of
// two parts: the cut program's cycles, simulated by the timing model itself, and the extrapolation.
// Where the cut covers the program (no loops, or loops of at most three trips) the extrapolation
// is zero and the estimate is the timing model's cycles: no correction can improve it. Where the
// cut covers a sliver of a long loop nest, the extrapolation is nearly all of the estimate and the
// correction applies to nearly all of it. A correction c predicts cycles = simulated + c *
// extrapolated, and a model is trained on the c that makes that exact for each program.
#pragma once

#include <optional>

#include "timing/probe.h"

namespace tacit::costmodel {

struct ProbeParts {
  double simulated = 0;     // cycles the probe's cut run simulated
  double extrapolated = 0;  // cycles it added for the calls beyond the cut
  double coverage = 0;      // the share of the program's calls the cut run executed
  double estimate() const { return simulated + extrapolated; }
};

// A probe's parts. A probe that did not run (a cut the program's constraints reject) simulated
// nothing: the whole of `bound`, an analytic estimate of the cycles, is what a correction scales.
ProbeParts probeParts(const timing::Probe& probe, double bound);

// The cycles predicted with `correction` applied to the extrapolated part, in whole cycles.
double gatedCycles(const ProbeParts& parts, double correction);

// The correction that makes gatedCycles exact for a program of `cycles`: a model's training label.
// None when nothing was extrapolated: such a program says nothing about the probe's error. (That
// includes a long loop nest whose steady state costs no cycles per call — the third iteration's
// calls hidden entirely behind the second's — where the estimate is the cut's cycles and no
// correction can move it.)
std::optional<double> correctionOf(const ProbeParts& parts, double cycles);

}  // namespace tacit::costmodel
