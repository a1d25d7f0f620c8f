#include "costmodel/gate.h"

#include <algorithm>
#include <cmath>

namespace tacit::costmodel {

ProbeParts probeParts(const timing::Probe& probe, double bound) {
  if (!probe.ran) return {0, std::max(1.0, bound), 0};
  return {static_cast<double>(probe.cut_cycles), probe.extrapolated(), probe.coverage()};
}

double gatedCycles(const ProbeParts& parts, double correction) {
  // Whole cycles, as the timing model counts them: a correction learnt as 1 up to floating-point
  // residue (a model of labels that are all 1) must not order programs the probe ties.
  return std::round(parts.simulated + correction * parts.extrapolated);
}

std::optional<double> correctionOf(const ProbeParts& parts, double cycles) {
  if (parts.extrapolated <= 0) return std::nullopt;
  return (cycles - parts.simulated) / parts.extrapolated;
}

}  // namespace tacit::costmodel
