// Tile kernels of tiled compilation (docs/backend.md, "Tiled compilation"): the kernel restricted
// to one box of its result, as an HLO module of its own.
//
// The box is propagated from the result to the parameters through the operations that map output
// elements to input elements box by box (elementwise operators and conversions, broadcast,
// transpose, dot — the contracting dimensions whole —, reduce — the reduced dimensions whole);
// any other operation must be needed whole. Each parameter stays a whole parameter of the tile
// module and is sliced there: the tile reads a window of the kernel's own HBM tensor (a pitched
// load, docs/isel.md), so the tile module has the kernel's HBM layout and its programs can be
// moved from one tile to the next by shifting HBM addresses alone.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hlo/instruction.h"

namespace tacit::backend {

// Where a parameter's window starts, per parameter dimension: at the box's start in result
// dimension `result_dim` divided by `per`, or at 0 (the parameter is read whole in that
// dimension).
struct WindowMap {
  int64_t parameter = -1;
  std::vector<int64_t> result_dim;  // per parameter dimension; -1: from 0, whole
  std::vector<int64_t> per;         // the result's start divided by this (a merged dimension)
};

struct TileModule {
  std::unique_ptr<hlo::HloModule> module;
  // One per parameter the tile reads; a parameter read through two different maps is rejected
  // (its windows would move differently from tile to tile).
  std::vector<WindowMap> windows;
};

// Which part of a contraction split into steps a tile module computes (an integer dot's sum
// re-associated over blocks of its contracting dimension is exact: its arithmetic is modular).
// The accumulator steps pass the dot's partial sums on chip (isel::Residence).
enum class TileStep {
  kWhole,   // the tile, its contraction whole
  kFirst,   // the dot over the first block of the contraction: the accumulator
  kMiddle,  // accumulator + the dot over one block: the accumulator
  kLast,    // the tile, the dot being accumulator + the dot over the last block
};

// The contraction block of a step: [start, start + size) of the dot's contracting dimension,
// which moves with loop dimension `dim` (the result's rank: one past its dimensions). `sums`: the
// box each accumulator holds, over the result's last two dimensions (empty: one accumulator holds
// the whole tile); a tile larger than what one accumulator holds (AMX's 32x32 s32 tile in four
// 16x16 tile registers) carries its partial sums as the blocks of a grid of that box.
struct ContractionBlock {
  int64_t start = 0, size = 0;
  std::vector<int64_t> sums;
  // The ISA's unit depth: a block of several is the chain ((acc + dot_1) + dot_2) + ... of its
  // unit-deep dots (exact for integers), the order in which accumulating units add them (0: the
  // block is one dot).
  int64_t unit = 0;
  // A float contraction may be split (CompileOptions::reassociate); integer sums always may.
  bool reassociate = false;
};

// The kernel's one dot: nullptr if its entry has none or several.
const hlo::HloInstruction* onlyDot(const hlo::HloModule& kernel);

// The kernel restricted to the box [starts, starts + sizes) of its single array result (for
// kFirst and kMiddle: of its dot), or a reason why the kernel cannot be tiled this way. The steps
// other than kWhole need exactly one dot, of integers, with one contracting dimension; the steps
// that read the accumulator take it as their last parameters (one per block of block.sums, in
// row-major order), and kFirst and kMiddle return its blocks as a tuple when there are several.
struct TileModuleOrReason {
  std::optional<TileModule> tile;
  std::string reason;
};
TileModuleOrReason buildTileModule(const hlo::HloModule& kernel, const std::vector<int64_t>& starts,
                                   const std::vector<int64_t>& sizes,
                                   TileStep step = TileStep::kWhole, ContractionBlock block = {});

// The kernel with its one dot's contraction summed in blocks of `block`, each from +0 in
// contracting order, the blocks' sums added in order: ((dot_0 + dot_1) + dot_2) + ... — what a
// program that splits a float contraction computes (CompileOptions::reassociate). Null with the
// reason when the kernel is not one dot with one contracting dimension that `block` divides.
TileModuleOrReason blockedKernel(const hlo::HloModule& kernel, int64_t block);

}  // namespace tacit::backend
