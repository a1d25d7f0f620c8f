// Seeded random *tiled* kernels for the differential tests (README.md, "Tiled kernels"): per
// shipped ISA, one dot of 1-8 of the ISA's unit tiles per dimension (ragged sizes included) with
// an epilogue from the ISA's menu, or a large elementwise chain or row reduction, each compiled
// either with the default tiled compile or with a random schedule (tile sizes in multiples of the
// unit, a loop order, and for integer dots a contraction split whose partial sums stay in an
// accumulator buffer of the spec).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/schedule.h"
#include "differential/generators.h"
#include "taidl/isa.h"

namespace tacit::differential {

struct TiledKernel {
  // The category is "<kernel kind>/<schedule kind>": the kernel kind names the dot's epilogue
  // (e.g. "dot-bias-sat", "-ragged" when a dimension is not a multiple of the unit), the schedule
  // kind is "default" (CompileOptions::schedule unset), "tiles" (tile sizes and loop order),
  // "split" (plus a contraction in unit-depth blocks), "split-wide" (blocks of several unit
  // depths with at least one middle step: finding F3) or "split-float" (a float contraction in
  // unit-depth blocks: compiled with CompileOptions::reassociate, verified on the blocked kernel).
  GeneratedKernel kernel;
  std::optional<backend::TileSchedule> schedule;
};

// The ISAs with a tiled generator: generatorIsas(), and trainium when isa/trainium.taidl exists.
std::vector<std::string> tiledIsas(const std::string& source_dir);

// The buffers of `isa` that can carry an integer dot's partial sums for every output tile of
// `sizes` (backend::tiling::accumulators: in the buffer's row form, as the bytes of one unit, or
// as a grid of blocks): read from the spec, as the default schedule space does, never from a
// table.
std::vector<std::string> accumulatorBuffers(const taidl::Isa& isa, const std::string& element_type,
                                            const std::vector<std::vector<int64_t>>& tile_sizes);

// `count` distinct (kernel, schedule) pairs for the ISA named `name`, deterministic in
// (name, seed, count). `isa` is the loaded spec (its accumulator buffers).
std::vector<TiledKernel> generateTiledKernels(const taidl::Isa& isa, const std::string& name,
                                              uint64_t seed, int count);

}  // namespace tacit::differential
