// A tiled compile's schedule (backend/tiling.h, docs/backend.md "Tiled compilation"): what
// --schedule reads and --emit-schedule writes. Explicit data, so that a tuner can enumerate it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tacit::backend {

// The tile size per result dimension, the loop order (result dimensions, outermost first; a split
// contraction's loop is innermost), optionally the block a kernel's one integer dot contracts
// per step, with the on-chip buffer that carries the partial sums from step to step, and how many
// copies of a tile kernel's on-chip data take turns over iterations of its innermost loop
// (2: double buffering; docs/backend.md "Tiled compilation"). A split float contraction is marked
// `reassociate`: its program sums block by block, the kernel re-associated (docs/numerics.md), and
// compiles only under CompileOptions::reassociate.
struct TileSchedule {
  std::vector<int64_t> tile;
  std::vector<int64_t> order;
  int64_t contraction = 0;   // 0: the contraction whole in every tile
  std::string accumulator;   // a buffer of the ISA (with contraction)
  int64_t buffers = 1;       // 1 to kMaxBuffers
  bool reassociate = false;  // the contraction split is of a float sum (with contraction)
  static constexpr int64_t kMaxBuffers = 8;
  friend bool operator==(const TileSchedule&, const TileSchedule&) = default;
  // {"tile": [16, 16], "order": [0, 1]}, plus "contraction": 64, "accumulator": "acc" when split
  // and "buffers": N when buffered more than once, "reassociate": true for a split float sum
  std::string json() const;
  // Parses a JSON object with those members (tile and order required); anything else is a
  // DiagnosticError at `file`, line and column. Whether it fits a kernel is compileTiled's check.
  static TileSchedule parse(const std::string& text, const std::string& file);
};

}  // namespace tacit::backend
