// Tiled compilation (docs/backend.md, "Tiled compilation"): a kernel whose result spans many of
// the ISA's unit tiles is compiled as a loop nest over tiles of its result. Each distinct tile
// kernel (the interior tile, and one per kind of ragged edge) is compiled once by compileKernel —
// its parameters are the kernel's own HBM tensors read through windows, its result one window of
// the kernel's result (isel::ResultWindow) — and its program is repeated by `.tasm` loops whose
// HBM addresses are affine in the loop variables. Program size grows with the number of distinct
// tile kernels, not with the number of tiles.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/compiler.h"

namespace tacit::backend {

namespace tiling {
struct Contraction;
}  // namespace tiling

// The tiled compiles of one kernel under any number of schedules, sharing their tile kernels:
// each distinct tile kernel (by step, sizes, position and accumulator) is compiled once, whatever
// schedules use it. compileTiled searches the default space with it; `tacit tune` its own.
class TiledCompiler {
 public:
  TiledCompiler(const isel::Target& target, const hlo::HloModule& kernel,
                const CompileOptions& options);
  ~TiledCompiler();
  TiledCompiler(const TiledCompiler&) = delete;
  TiledCompiler& operator=(const TiledCompiler&) = delete;

  // The kernel's result dimensions (empty: it has no one array result, and is not tiled).
  const std::vector<int64_t>& dims() const;
  // The kernel's one dot's contraction, if any (what a schedule may split; tiling_internal.h).
  const std::optional<tiling::Contraction>& contraction() const;
  // The ISA's unit tile for the kernel (empty: not a kernel of one dot).
  std::vector<int64_t> unitTile() const;
  // A DiagnosticError if `schedule` does not fit the kernel.
  void check(const TileSchedule& schedule) const;

  // The loop nest of a checked schedule, or why it cannot be compiled (a tile kernel that does
  // not compile, an address that cannot move). `bounded`: new tile kernels are compiled under
  // the effort bounds of the space's later schedules (docs/backend.md).
  struct Outcome {
    std::optional<CompileResult> result;
    std::string why_not;
  };
  // `to_beat`: the best program so far; under an additive cost model a schedule whose tile
  // kernels already cost more stops before its other kernels are compiled (a reason, no result).
  Outcome compile(const TileSchedule& schedule, bool bounded, Deadline deadline,
                  std::optional<ProgramCosts> to_beat = std::nullopt);
  // Adds the work of every tile kernel compiled so far to `stats`.
  void addWork(CompileStats& stats) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

namespace tiling {
// Whether a kernel the default plan compiles whole (at most options.max_whole_tiles unit tiles)
// has a schedule of several steps: its result spans several unit tiles, or its contraction
// several unit depths and may be split (integers, or floats with options.reassociate).
bool hasSteps(const isel::Target& target, const hlo::HloModule& kernel,
              const CompileOptions& options);
// Whether the kernel is one float dot whose contraction spans several of the ISA's dot depths.
bool deepFloatContraction(const isel::Target& target, const hlo::HloModule& kernel);
}  // namespace tiling

// The tiled compile of `kernel`, or nullopt when the kernel is not tiled: its result is small (at
// most options.max_whole_tiles unit tiles) and no schedule was given, its operations cannot be
// restricted to tiles (tile_kernel.h), or no schedule's tile kernels compile. A schedule given in
// options that does not fit the kernel is a DiagnosticError.
std::optional<CompileResult> compileTiled(const isel::Target& target, const hlo::HloModule& kernel,
                                          const CompileOptions& options, Deadline deadline);

}  // namespace tacit::backend
