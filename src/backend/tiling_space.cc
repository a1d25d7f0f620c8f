// The schedule space of tiled compilation (backend/tiling.h): unit tiles from the ISA's units,
// the default space, the check of a given schedule, and the kinds of tile a schedule makes.
#include <algorithm>
#include <set>

#include "backend/tiling_internal.h"
#include "support/diagnostic.h"
#include "support/strings.h"

namespace tacit::backend::tiling {

int64_t TileKind::tiles() const {
  int64_t n = 1;
  for (int64_t c : count)
    n *= c;
  return n;
}

namespace {

int64_t largestAtMost(const std::set<int64_t>& s, int64_t at_most) {
  int64_t best = 0;
  for (int64_t v : s) {
    if (v <= at_most) best = std::max(best, v);
  }
  return best;
}

}  // namespace

std::optional<Contraction> contractionOf(const isel::IsaNeeds& needs,
                                         const hlo::HloModule& kernel) {
  const hlo::HloInstruction* dot = onlyDot(kernel);
  if (!dot || dot->attrs().dot_dims->lhs_contracting.size() != 1) return std::nullopt;
  Contraction c;
  c.extent = dot->operand(0)->shape().dim(dot->attrs().dot_dims->lhs_contracting[0]);
  c.unit_depth = largestAtMost(needs.dot_depths, c.extent);
  c.type = dot->shape().elementType();
  return c;
}

std::vector<int64_t> unitTile(const isel::IsaNeeds& needs, const hlo::HloModule& kernel) {
  const hlo::Shape& result = kernel.entry()->root()->shape();
  const int64_t rank = result.rank();
  // Kernels of one dot (and its epilogue) are tiled by default; elementwise kernels are split into
  // row pieces (piecewise.h) and the others compiled whole, unless a schedule is given.
  if (rank == 0 || onlyDot(kernel) == nullptr) return {};
  const std::set<int64_t>& rows = needs.dot_rows;
  const std::set<int64_t>& cols = needs.dot_cols;
  std::vector<int64_t> unit(static_cast<size_t>(rank), 1);
  unit.back() = largestAtMost(cols, result.dim(rank - 1));
  if (rank >= 2) unit[static_cast<size_t>(rank - 2)] = largestAtMost(rows, result.dim(rank - 2));
  if (unit.back() == 0 || (rank >= 2 && unit[static_cast<size_t>(rank - 2)] == 0)) return {};
  return unit;
}

int64_t tileCount(const std::vector<int64_t>& dims, const std::vector<int64_t>& tile) {
  int64_t n = 1;
  for (size_t d = 0; d < dims.size(); ++d)
    n *= (dims[d] + tile[d] - 1) / tile[d];
  return n;
}

int64_t stackedColumns(const taidl::Buffer& b, const std::vector<int64_t>& sizes) {
  if (b.access.size() != 1 || b.unit.size() != 1 || sizes.size() != 2) return 0;
  const int64_t w = b.unit[0];
  return sizes[1] > w && sizes[1] % w == 0 ? w : 0;
}

bool holdsTile(const taidl::Buffer& b, hlo::PrimitiveType type, const std::vector<int64_t>& sizes) {
  if (b.is_hbm || b.dtype != type || b.rank() != static_cast<int64_t>(sizes.size())) return false;
  std::vector<int64_t> form = sizes;
  if (const int64_t w = stackedColumns(b, sizes)) form = {sizes[0] * (sizes[1] / w), w};
  for (size_t k = 0; k < b.access.size(); ++k) {
    if (form[k] > b.access[k]) return false;
  }
  for (size_t i = 0; i < b.unit.size(); ++i) {
    if (b.unit[i] != form[b.access.size() + i]) return false;
  }
  return true;
}

int32_t accumulatorBuffer(const taidl::Isa& isa, const TileSchedule& s) {
  if (s.contraction == 0) return -1;
  for (size_t b = 0; b < isa.buffers.size(); ++b) {
    if (isa.buffers[b].name.text == s.accumulator) return static_cast<int32_t>(b);
  }
  return -1;
}

// Per dimension the unit tile and twice it (where the dimension holds it), the dimensions in
// order. The contraction of an integer dot is split into blocks of the unit depth when it holds
// at least two (the partial sums carried on chip by every buffer that holds the output tile in
// its row form: one step is one accumulating instruction, which every accumulator supports), and
// left whole when it is at most four unit depths (phase 1 splits it itself, at a cost that grows
// with it): both are tried when both apply; the cost model decides.
std::vector<TileSchedule> scheduleSpace(const taidl::Isa& isa, const std::vector<int64_t>& dims,
                                        const std::vector<int64_t>& unit,
                                        const std::optional<Contraction>& contraction) {
  std::vector<std::vector<int64_t>> choices;
  for (size_t d = 0; d < dims.size(); ++d) {
    std::vector<int64_t> c{unit[d]};
    if (unit[d] > 1 && 2 * unit[d] <= dims[d]) c.push_back(2 * unit[d]);
    choices.push_back(std::move(c));
  }
  std::vector<int64_t> order(dims.size());
  for (size_t d = 0; d < dims.size(); ++d)
    order[d] = static_cast<int64_t>(d);
  std::vector<TileSchedule> tiles{TileSchedule{{}, order, 0, ""}};
  for (const std::vector<int64_t>& c : choices) {
    std::vector<TileSchedule> next;
    for (const TileSchedule& s : tiles) {
      for (int64_t t : c) {
        TileSchedule x = s;
        x.tile.push_back(t);
        next.push_back(std::move(x));
      }
    }
    tiles = std::move(next);
  }
  std::vector<TileSchedule> out;
  for (const TileSchedule& s : tiles) {
    const int64_t depth = contraction ? contraction->unit_depth : 0;
    const int64_t block = depth;
    if (!contraction || depth == 0 || contraction->extent <= 4 * depth) out.push_back(s);
    if (!contraction || !hlo::isInteger(contraction->type) || depth == 0 ||
        contraction->extent % block != 0 || contraction->extent < 2 * block)
      continue;
    for (const taidl::Buffer& b : isa.buffers) {
      // Every output tile kind's accumulator (the ragged ones too) must be the buffer's row form
      // as it is: stacked column blocks compile their first step but not yet their middle one
      // (phase 1 does not find the accumulating units for the blocks), so only a given schedule
      // asks for them.
      bool holds = true;
      for (const TileKind& k : outputKinds(dims, s))
        holds =
            holds && holdsTile(b, contraction->type, k.sizes) && stackedColumns(b, k.sizes) == 0;
      if (!holds) continue;
      TileSchedule x = s;
      x.contraction = block;
      x.accumulator = b.name.text;
      out.push_back(std::move(x));
    }
  }
  // Each schedule with four, two and one copies of its kernels' on-chip data (docs/backend.md,
  // "Multiple buffering"), as many as fit first: the spec's costs cannot tell them apart, so
  // the first that fits is kept unless the cost model (cycles) prefers another.
  std::vector<TileSchedule> buffered;
  for (const TileSchedule& s : out) {
    for (int64_t copies : {4, 2, 1}) {
      TileSchedule x = s;
      x.buffers = copies;
      buffered.push_back(std::move(x));
    }
  }
  return buffered;
}

void checkSchedule(const taidl::Isa& isa, const TileSchedule& s, const std::vector<int64_t>& dims,
                   const std::optional<Contraction>& contraction) {
  const std::string what = "the schedule (" + s.json().substr(0, s.json().size() - 1) + ")";
  if (s.tile.size() != dims.size() || s.order.size() != dims.size())
    fail(what + " needs one tile size and one loop per result dimension (" +
         std::to_string(dims.size()) + ")");
  std::vector<bool> seen(dims.size(), false);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (s.tile[d] < 1 || s.tile[d] > dims[d])
      fail(what + ": tile size " + std::to_string(s.tile[d]) + " of dimension " +
           std::to_string(d) + " is not in [1, " + std::to_string(dims[d]) + "]");
    int64_t o = s.order[d];
    if (o < 0 || o >= static_cast<int64_t>(dims.size()) || seen[static_cast<size_t>(o)])
      fail(what + ": the loop order is not a permutation of the result dimensions");
    seen[static_cast<size_t>(o)] = true;
  }
  if (s.buffers < 1 || s.buffers > TileSchedule::kMaxBuffers)
    fail(what + ": buffers is a number of copies in [1, " +
         std::to_string(TileSchedule::kMaxBuffers) + "], not " + std::to_string(s.buffers));
  if (s.contraction == 0) return;
  if (!contraction || !hlo::isInteger(contraction->type))
    fail(what +
         ": only a kernel of one integer dot with one contracting dimension splits its "
         "contraction (a float sum is never re-associated)");
  if (contraction->extent % s.contraction != 0 || contraction->extent / s.contraction < 2)
    fail(what + ": the contraction (" + std::to_string(contraction->extent) +
         ") is not two or more blocks of " + std::to_string(s.contraction));
  if (accumulatorBuffer(isa, s) < 0)
    fail(what + ": the ISA has no buffer '" + s.accumulator + "'",
         "the accumulator is one of the spec's buffers");
}

std::vector<TileKind> outputKinds(const std::vector<int64_t>& dims, const TileSchedule& s) {
  std::vector<TileKind> kinds{TileKind{}};
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t full = dims[d] / s.tile[d], rest = dims[d] % s.tile[d];
    std::vector<TileKind> next;
    for (const TileKind& k : kinds) {
      if (full > 0) {
        TileKind x = k;
        x.sizes.push_back(s.tile[d]);
        x.first.push_back(0);
        x.count.push_back(full);
        next.push_back(std::move(x));
      }
      if (rest > 0) {
        TileKind x = k;
        x.sizes.push_back(rest);
        x.first.push_back(full * s.tile[d]);
        x.count.push_back(1);
        next.push_back(std::move(x));
      }
    }
    kinds = std::move(next);
  }
  return kinds;
}

std::vector<std::pair<TileStep, TileKind>> stepsOf(const TileKind& output, const TileSchedule& s,
                                                   int64_t contraction_extent) {
  if (s.contraction == 0) return {{TileStep::kWhole, output}};
  const int64_t blocks = contraction_extent / s.contraction;
  auto at = [&](int64_t first, int64_t count) {
    TileKind k = output;
    k.sizes.push_back(s.contraction);
    k.first.push_back(first * s.contraction);
    k.count.push_back(count);
    return k;
  };
  std::vector<std::pair<TileStep, TileKind>> out{{TileStep::kFirst, at(0, 1)}};
  if (blocks > 2) out.emplace_back(TileStep::kMiddle, at(1, blocks - 2));
  out.emplace_back(TileStep::kLast, at(blocks - 1, 1));
  return out;
}

}  // namespace tacit::backend::tiling
