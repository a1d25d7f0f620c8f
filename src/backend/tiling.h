// Tiled compilation (docs/backend.md, "Tiled compilation"): a kernel whose result spans many of
// the ISA's unit tiles is compiled as a loop nest over tiles of its result. Each distinct tile
// kernel (the interior tile, and one per kind of ragged edge) is compiled once by compileKernel —
// its parameters are the kernel's own HBM tensors read through windows, its result one window of
// the kernel's result (isel::ResultWindow) — and its program is repeated by `.tasm` loops whose
// HBM addresses are affine in the loop variables. Program size grows with the number of distinct
// tile kernels, not with the number of tiles.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend/compiler.h"

namespace tacit::backend {

// The tiled compile of `kernel`, or nullopt when the kernel is not tiled: its result is small (at
// most options.max_whole_tiles unit tiles) and no schedule was given, its operations cannot be
// restricted to tiles (tile_kernel.h), or no schedule's tile kernels compile. A schedule given in
// options that does not fit the kernel is a DiagnosticError.
std::optional<CompileResult> compileTiled(const isel::Target& target, const hlo::HloModule& kernel,
                                          const CompileOptions& options, Deadline deadline);

}  // namespace tacit::backend
