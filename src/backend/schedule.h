// A tiled compile's schedule (backend/tiling.h, docs/backend.md "Tiled compilation"): what
// --schedule reads and --emit-schedule writes. Explicit data, so that a tuner can enumerate it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tacit::backend {

// The tile size per result dimension and the loop order (result dimensions, outermost first).
struct TileSchedule {
  std::vector<int64_t> tile;
  std::vector<int64_t> order;
  friend bool operator==(const TileSchedule&, const TileSchedule&) = default;
  // {"tile": [16, 16], "order": [0, 1]}
  std::string json() const;
  // Parses a JSON object with exactly those two members (integer arrays); anything else is a
  // DiagnosticError at `file`, line and column. Whether it fits a kernel is compileTiled's check.
  static TileSchedule parse(const std::string& text, const std::string& file);
};

}  // namespace tacit::backend
