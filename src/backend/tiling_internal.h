// Private to tiled compilation (backend/tiling.h): the schedule space (tiling_space.cc) and the
// loop nest that repeats the tile kernels' programs (tiled_program.cc).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend/compiler.h"
#include "backend/let_words.h"
#include "backend/tile_kernel.h"

namespace tacit::backend::tiling {

// Where one tile kernel's tiles are, per loop dimension (the result's dimensions, then the split
// contraction's): the tile's size, the start of its first tile, and how many tiles the loop nest
// iterates (1: the tile sits at one place — a ragged edge, or the first or last contraction step).
struct TileKind {
  std::vector<int64_t> sizes, first, count;
  bool looped(size_t d) const { return count[d] > 1; }
  int64_t tiles() const;
};

// One compiled tile kernel.
struct StepKernel {
  TileStep step = TileStep::kWhole;
  TileKind kind;
  CompileResult compiled;
  std::vector<WindowMap> windows;
  // How far the tile's accumulators reach from the start of the schedule's accumulator buffer
  // along its access dimension (their partial sums never move; data above them may).
  int64_t pinned = 0;
};

// One kind of output tile and the kernels that compute it, in order: kWhole alone, or kFirst,
// kMiddle (when the contraction has more than two blocks) and kLast.
struct OutputTile {
  TileKind kind;  // over the result's dimensions
  std::vector<StepKernel> steps;
};

// The kernel's one dot: its contraction extent, the ISA's unit depth, its element type (that of
// the partial sums an accumulator carries).
struct Contraction {
  int64_t extent = 0, unit_depth = 0;
  hlo::PrimitiveType type = hlo::PrimitiveType::kInvalid;
  // The contraction may be split: integer sums, float ones with `reassociate` (CompileOptions),
  // and exact chains.
  bool splits = false;
  // A float sum split one product per step, on an ISA with no dot of its type but an elementwise
  // multiply and add (unit depth 1: a rank-1 update per step), with a result in the accumulation
  // type: the chain adds the products in contracting order from +0, one rounding each, which is
  // the dot's own order — nothing is re-associated (docs/numerics.md, "dot").
  bool exact_chain = false;
};
std::optional<Contraction> contractionOf(const isel::IsaNeeds& needs, const hlo::HloModule& kernel,
                                         bool reassociate = false);

// The unit tile of a kernel of one dot: per result dimension the largest extent of the ISA's dots'
// results, at most the dimension; leading dimensions 1. Empty for other kernels (not tiled by
// default) and when the ISA has no dot of the result's last dimensions.
std::vector<int64_t> unitTile(const isel::IsaNeeds& needs, const hlo::HloModule& kernel);
int64_t tileCount(const std::vector<int64_t>& dims, const std::vector<int64_t>& tile);

// The default schedule space (docs/backend.md, "Tiled compilation").
std::vector<TileSchedule> scheduleSpace(const taidl::Isa& isa, const std::vector<int64_t>& dims,
                                        const std::vector<int64_t>& unit,
                                        const std::optional<Contraction>& contraction);
// A DiagnosticError if `s` does not fit the kernel.
void checkSchedule(const taidl::Isa& isa, const TileSchedule& s, const std::vector<int64_t>& dims,
                   const std::optional<Contraction>& contraction);

// The kinds of output tile of a schedule: per dimension the full tiles and a ragged remainder.
std::vector<TileKind> outputKinds(const std::vector<int64_t>& dims, const TileSchedule& s);
// The steps of one output tile kind and where their tiles are (the contraction's entries last).
std::vector<std::pair<TileStep, TileKind>> stepsOf(const TileKind& output, const TileSchedule& s,
                                                   int64_t contraction_extent);
// The buffer index of a schedule's accumulator (-1 when the contraction is whole).
int32_t accumulatorBuffer(const taidl::Isa& isa, const TileSchedule& s);
// How buffer `buffer` holds an output tile of `sizes` and `type` at its start, if it can: in its
// row form (the buffer's element type, access extents then unit dims), or as the bytes of one
// unit in the buffer's element type (Residence::held: AMX's tile registers).
std::optional<isel::Residence> tileResidence(const taidl::Isa& isa, int32_t buffer,
                                             hlo::PrimitiveType type,
                                             const std::vector<int64_t>& sizes);
// The accumulators of an output tile in a buffer: one holding the whole tile, or — a tile larger
// than one holds — the blocks of a grid (`block`: rows and columns; empty for one), each at its
// own place along the buffer's access dimension (Gemmini's 32x32 tile as two 32x16 column blocks
// at accumulator rows 0 and 32; AMX's as four 16x16 blocks in tile registers 0 to 3).
struct Accumulators {
  std::vector<int64_t> block;
  std::vector<isel::Residence> places;  // per block, row-major over the grid
  // How far they reach from the buffer's start along its last access dimension (its whole extent
  // when it has several: then nothing else in it moves).
  int64_t pinned = 0;
};
std::optional<Accumulators> accumulators(const taidl::Isa& isa, int32_t buffer,
                                         hlo::PrimitiveType type,
                                         const std::vector<int64_t>& sizes);
// Whether the buffer holds every output tile kind of `s`, as one accumulator or a grid of blocks
// that are each one unit of the buffer: the accumulators the default space and the tuner offer.
bool holdsEveryTile(const taidl::Isa& isa, int32_t buffer, const Contraction& contraction,
                    const std::vector<int64_t>& dims, const TileSchedule& s);

// The loop nest over every output tile's kernels, their HBM addresses moved from tile to tile.
class TiledProgram {
 public:
  TiledProgram(const isel::Target& target, const isel::ImportedKernel& layout)
      : target_(target), layout_(layout) {}

  // The program, or a reason it cannot be built (an address a move cannot reach, a require a moved
  // call violates).
  std::string build(const std::vector<OutputTile>& tiles, const TileSchedule& schedule,
                    const std::string& name);
  const oracle::Program& program() const { return *program_; }
  oracle::Program take() { return std::move(*program_); }

 private:
  struct HbmTensor {
    int64_t offset = 0, bytes = 0;
    std::vector<int64_t> step;  // per loop dimension: the window's byte shift from tile to tile
  };
  // Which tile of a loop dimension an emitted call works on: scale * (loop variable at `depth`)
  // + offset; no depth: the fixed tile `offset` (an iteration after an unrolled loop).
  struct TileIndex {
    std::optional<uint32_t> depth;
    int64_t scale = 1, offset = 0;
  };
  using TileIndices = std::vector<std::optional<TileIndex>>;  // per loop dimension; none: tile 0
  // Per on-chip buffer, how far a copy of a kernel's data lies from the first along the buffer's
  // last access dimension (multiple buffering).
  using OnChipShift = std::map<int32_t, int64_t>;
  std::string emitStep(const StepKernel& k, const TileIndices& index_of,
                       const std::vector<int64_t>& extents, int64_t base, size_t index,
                       const OnChipShift& shift, bool constants);
  // `k` over the `n` tiles of dimension `dim`, in a loop of its own: with `buffers` > 1 unrolled
  // by that many, copy c's on-chip data moved c extents past the first's (when they can move).
  std::string emitLoop(const StepKernel& k, TileIndices index_of, std::vector<int64_t> extents,
                       size_t dim, int64_t n, const std::string& var, int64_t buffers, int64_t base,
                       size_t index);
  std::optional<OnChipShift> onChipShift(const StepKernel& k, int64_t copies) const;
  std::optional<std::vector<HbmTensor>> hbmTensors(const StepKernel& k) const;
  std::string checkRequires(const isel::Unit& u, const std::vector<oracle::Affine>& attrs,
                            const std::vector<int64_t>& extents);

  const isel::Target& target_;
  const isel::ImportedKernel& layout_;
  int32_t accumulator_ = -1;  // the schedule's accumulator buffer (StepKernel::pinned)
  std::optional<oracle::Program> program_;
  std::optional<WordLoader> words_;  // the words lets read, loaded before their calls
  std::map<int32_t, std::vector<taidl::Expr>> constraints_;
};

}  // namespace tacit::backend::tiling
