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

// Whether `dot`'s float sum may be split one product per step without re-associating it: the ISA
// has no dot of its type (so no deeper unit to use) but multiplies and adds it elementwise (isel
// computes a rank-1 dot that way), and the dot accumulates in its result type (docs/numerics.md:
// f64, or f32 from operands that are not f64), so that each step's rounding is the dot's own.
// The chain (0 + a0*b0) + (0 + a1*b1) + ... equals ((0 + a0*b0) + a1*b1) + ...: 0 + p differs
// from p only for p = -0 (+0) or a NaN (quieted), and the running sum, which starts at +0, is
// never -0, so adding +0 or -0 to it, or a NaN quieted or not, gives the same result.
bool exactChain(const isel::IsaNeeds& needs, const hlo::HloInstruction& dot) {
  const hlo::PrimitiveType t = dot.shape().elementType();
  const bool accumulates_in_result =
      t == hlo::PrimitiveType::kF64 ||
      (t == hlo::PrimitiveType::kF32 &&
       dot.operand(0)->shape().elementType() != hlo::PrimitiveType::kF64 &&
       dot.operand(1)->shape().elementType() != hlo::PrimitiveType::kF64);
  return accumulates_in_result && !needs.dot_types.contains(t) &&
         needs.elementwise.contains({hlo::HloOpcode::kMultiply, t}) &&
         needs.elementwise.contains({hlo::HloOpcode::kAdd, t});
}

}  // namespace

std::optional<Contraction> contractionOf(const isel::IsaNeeds& needs, const hlo::HloModule& kernel,
                                         bool reassociate) {
  const hlo::HloInstruction* dot = onlyDot(kernel);
  if (!dot || dot->attrs().dot_dims->lhs_contracting.size() != 1) return std::nullopt;
  Contraction c;
  c.extent = dot->operand(0)->shape().dim(dot->attrs().dot_dims->lhs_contracting[0]);
  c.unit_depth = largestAtMost(needs.dot_depths, c.extent);
  c.type = dot->shape().elementType();
  c.exact_chain = exactChain(needs, *dot);
  if (c.exact_chain) c.unit_depth = 1;
  c.splits = hlo::isInteger(c.type) || reassociate || c.exact_chain;
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
  // A unit whose extent is a range (a row count attribute from 1 to 4096) is recorded by its
  // largest; a dimension below every unit's extent takes the extent the unit allows it: the whole
  // dimension for columns, and for rows the column unit where that is smaller (square tiles: a row
  // block as deep as the weight block, the largest whose operands stay whole tiles of a tiled
  // layout).
  auto extent = [](const std::set<int64_t>& units, int64_t dim, int64_t other) {
    const int64_t fits = largestAtMost(units, dim);
    if (fits > 0 || units.empty()) return fits;
    return other > 0 ? std::min(dim, other) : dim;
  };
  std::vector<int64_t> unit(static_cast<size_t>(rank), 1);
  unit.back() = extent(cols, result.dim(rank - 1), 0);
  if (rank >= 2)
    unit[static_cast<size_t>(rank - 2)] = extent(rows, result.dim(rank - 2), unit.back());
  if (unit.back() == 0 || (rank >= 2 && unit[static_cast<size_t>(rank - 2)] == 0)) return {};
  return unit;
}

bool deepFloatContraction(const isel::Target& target, const hlo::HloModule& kernel) {
  const std::optional<Contraction> c = contractionOf(target.needs(), kernel);
  return c && hlo::isFloat(c->type) && !c->exact_chain && c->unit_depth > 0 &&
         c->extent >= 2 * c->unit_depth;
}

bool hasSteps(const isel::Target& target, const hlo::HloModule& kernel,
              const CompileOptions& options) {
  const std::vector<int64_t> unit = unitTile(target.needs(), kernel);
  if (unit.empty()) return false;
  const int64_t tiles = tileCount(kernel.entry()->root()->shape().dims(), unit);
  if (tiles > options.max_whole_tiles) return false;  // the default plan tiled it already
  if (tiles > 1) return true;
  const std::optional<Contraction> c = contractionOf(target.needs(), kernel, options.reassociate);
  return c && c->splits && c->unit_depth > 0 && c->extent >= 2 * c->unit_depth;
}

int64_t tileCount(const std::vector<int64_t>& dims, const std::vector<int64_t>& tile) {
  int64_t n = 1;
  for (size_t d = 0; d < dims.size(); ++d)
    n *= (dims[d] + tile[d] - 1) / tile[d];
  return n;
}

std::optional<isel::Residence> tileResidence(const taidl::Isa& isa, int32_t buffer,
                                             hlo::PrimitiveType type,
                                             const std::vector<int64_t>& sizes) {
  const taidl::Buffer& b = isa.buffers[static_cast<size_t>(buffer)];
  if (b.is_hbm || sizes.empty()) return std::nullopt;
  isel::Residence r{buffer, std::vector<int64_t>(b.access.size(), 0), std::nullopt};
  // The row form: the tile as the buffer's access then unit dims.
  if (b.dtype == type && b.rank() == static_cast<int64_t>(sizes.size())) {
    bool fits = true;
    for (size_t k = 0; k < b.access.size(); ++k)
      fits = fits && sizes[k] <= b.access[k];
    for (size_t i = 0; i < b.unit.size(); ++i)
      fits = fits && b.unit[i] == sizes[b.access.size() + i];
    if (fits) return r;
  }
  const int64_t wide = hlo::byteSize(type), narrow = hlo::byteSize(b.dtype);
  // A buffer of single elements addressed along as many dimensions as the tile has (a buffer of
  // partitions of bytes): the tile's rows as they are, each element's bytes in order
  // along the last dimension.
  if (b.unit.empty() && b.access.size() == sizes.size() && narrow > 0 && wide % narrow == 0) {
    std::vector<int64_t> held = sizes;
    held.back() *= wide / narrow;
    for (size_t k = 0; k < held.size(); ++k) {
      if (held[k] > b.access[k]) return std::nullopt;
    }
    r.held = hlo::Shape(b.dtype, held);
    return r;
  }
  // One unit holding the tile's bytes in the buffer's element type, rows as they are.
  if (b.unit.size() != sizes.size() || narrow <= 0 || wide % narrow != 0) return std::nullopt;
  std::vector<int64_t> bytes = sizes;
  bytes.back() *= wide / narrow;
  if (bytes != b.unit) return std::nullopt;
  std::vector<int64_t> held(b.access.size(), 1);
  held.insert(held.end(), b.unit.begin(), b.unit.end());
  r.held = hlo::Shape(b.dtype, held);
  return r;
}

std::optional<Accumulators> accumulators(const taidl::Isa& isa, int32_t buffer,
                                         hlo::PrimitiveType type,
                                         const std::vector<int64_t>& sizes) {
  if (auto r = tileResidence(isa, buffer, type, sizes)) {
    const taidl::Buffer& b = isa.buffers[static_cast<size_t>(buffer)];
    const int64_t reach = b.access.size() != 1 ? (b.access.empty() ? 0 : b.access.back())
                          : r->held            ? 1
                                               : sizes[0];
    return Accumulators{{}, {*r}, reach};
  }
  // A grid of blocks, each held at its own place along the buffer's one access dimension: the
  // buffer's row width in the tile's elements, by the tile's rows or the buffer's unit rows.
  const taidl::Buffer& b = isa.buffers[static_cast<size_t>(buffer)];
  const size_t n = sizes.size();
  const int64_t wide = hlo::byteSize(type), narrow = hlo::byteSize(b.dtype);
  if (n < 2 || b.is_hbm || b.access.size() != 1 || b.unit.empty() || wide <= 0 ||
      (b.unit.back() * narrow) % wide != 0)
    return std::nullopt;
  const int64_t cols = b.unit.back() * narrow / wide;
  const int64_t unit_rows = b.unit.size() >= 2 ? b.unit[b.unit.size() - 2] : 0;
  for (int64_t rows : {sizes[n - 2], unit_rows}) {
    if (rows <= 0 || cols <= 0 || sizes[n - 2] % rows != 0 || sizes[n - 1] % cols != 0) continue;
    std::vector<int64_t> block = sizes;
    block[n - 2] = rows;
    block[n - 1] = cols;
    std::optional<isel::Residence> r = tileResidence(isa, buffer, type, block);
    if (!r) continue;
    // How far one block reaches along the access dimension: one unit, or its leading extent.
    const int64_t reach = r->held ? 1 : block[0];
    const int64_t count = (sizes[n - 2] / rows) * (sizes[n - 1] / cols);
    if (count * reach > b.access[0]) continue;
    Accumulators a{{rows, cols}, {}, count * reach};
    for (int64_t i = 0; i < count; ++i) {
      a.places.push_back(*r);
      a.places.back().start[0] = i * reach;
    }
    return a;
  }
  return std::nullopt;
}

// A grid of blocks is offered only where each block is one unit of the buffer (a register file:
// AMX's tile registers): a grid of row-form blocks (Gemmini's 32x32 tile as two 32x16 blocks of
// accumulator rows) compiles, when it does, to programs the spec's cost prefers and the timing
// model does not (per block a round trip through the scratchpad), at twice the default space's
// compile time; a given schedule may still ask for one.
bool holdsEveryTile(const taidl::Isa& isa, int32_t buffer, const Contraction& contraction,
                    const std::vector<int64_t>& dims, const TileSchedule& s) {
  for (const TileKind& k : outputKinds(dims, s)) {
    std::optional<Accumulators> a = accumulators(isa, buffer, contraction.type, k.sizes);
    if (!a || (a->places.size() > 1 && !a->places[0].held)) return false;
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
// order. The contraction of an integer dot (a float one under `reassociate`) is split into blocks
// of the unit depth when it holds
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
    if (!contraction || !contraction->splits || depth == 0 || contraction->extent % block != 0 ||
        contraction->extent < 2 * block)
      continue;
    for (size_t b = 0; b < isa.buffers.size(); ++b) {
      // Every output tile kind's accumulators (the ragged ones' too) must fit the buffer.
      if (!holdsEveryTile(isa, static_cast<int32_t>(b), *contraction, dims, s)) continue;
      TileSchedule x = s;
      x.contraction = block;
      x.accumulator = isa.buffers[b].name.text;
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
  if (!contraction || !contraction->splits)
    fail(what +
         ": only a kernel of one dot with one contracting dimension splits its contraction, "
         "of integers, or of floats with --reassociate (a float sum is otherwise never "
         "re-associated)");
  if (s.reassociate && hlo::isInteger(contraction->type))
    fail(what + ": \"reassociate\" marks a float contraction (an integer sum splits without it)");
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
