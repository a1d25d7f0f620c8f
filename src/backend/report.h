// The HTML compile report (`tacit compile --report OUT.html`, docs/backend.md "Report"): one
// self-contained page (no scripts, no external resources; opens offline) with the kernel, the
// chosen program and its costs per instruction, the candidates of the search and why the others
// lost, the memory timeline of the allocation the solver found (one rectangle per live value and
// buffer, schedule position against address), the instruction graph and phase 1's e-graph per
// iteration, the pictures as inline SVG.
#pragma once

#include <string>

#include "backend/compiler.h"
#include "hlo/instruction.h"
#include "isel/target.h"

namespace tacit::backend {

// One rectangle of the memory timeline: a storage root's live interval (program points, the
// calls' positions 1..N; inputs from 0) against its addresses in its buffer (the first access
// dimension: rows, registers, or bytes in HBM).
struct TimelineRect {
  int32_t value = -1, buffer = 0;
  int64_t begin = 0, end = 0;     // live at program points [begin, end]
  int64_t start = 0, extent = 0;  // addresses [start, start + extent)
};

// The timeline of a result's instruction graph and allocation (`repeated`: a tiled program's
// tile kernel, whose constants and HBM result live throughout).
std::vector<TimelineRect> memoryTimeline(const taidl::Isa& isa, const CompileResult& result,
                                         bool repeated);

// The page. `kernel_text` is the HLO as the user wrote it.
std::string htmlReport(const isel::Target& target, const hlo::HloModule& kernel,
                       const std::string& kernel_text, const CompileResult& result);

}  // namespace tacit::backend
