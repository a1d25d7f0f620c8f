#include "backend/tile_kernel.h"

#include <map>
#include <tuple>

#include "hlo/builder.h"
#include "isel/kernel.h"
#include "support/diagnostic.h"

namespace tacit::backend {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::OpcodeCategory;

// A box of an instruction's result: per dimension its start, its size, and the result dimension
// whose tile start it follows (-1: it starts at 0 in every tile), divided by `per` (a dimension
// merged by a reshape moves by one where the result moves by the merged inner extent).
struct Box {
  std::vector<int64_t> start, size, follows, per;
  auto key() const { return std::tie(start, size, follows, per); }
  bool operator<(const Box& o) const { return key() < o.key(); }
  bool operator==(const Box& o) const { return key() == o.key(); }

  static Box whole(const hlo::Shape& s) {
    Box b;
    b.start.assign(static_cast<size_t>(s.rank()), 0);
    b.size = s.dims();
    b.follows.assign(static_cast<size_t>(s.rank()), -1);
    b.per.assign(static_cast<size_t>(s.rank()), 1);
    return b;
  }
  bool isWhole(const hlo::Shape& s) const {
    for (int64_t d = 0; d < s.rank(); ++d) {
      if (start[static_cast<size_t>(d)] != 0 || size[static_cast<size_t>(d)] != s.dim(d))
        return false;
    }
    return true;
  }
  // The dimension `d` of this box as dimension of another box.
  void take(const Box& from, size_t d) {
    start.push_back(from.start[d]);
    size.push_back(from.size[d]);
    follows.push_back(from.follows[d]);
    per.push_back(from.per[d]);
  }
  void takeWhole(int64_t extent) {
    start.push_back(0);
    size.push_back(extent);
    follows.push_back(-1);
    per.push_back(1);
  }
  // Dimension `d` of this box as dimension `from_d` of `from`.
  void set(size_t d, const Box& from, size_t from_d) {
    start[d] = from.start[from_d];
    size[d] = from.size[from_d];
    follows[d] = from.follows[from_d];
    per[d] = from.per[from_d];
  }
};

struct NotTileable {
  std::string reason;
};

bool isElementwise(HloOpcode op) {
  switch (hlo::opcodeCategory(op)) {
    case OpcodeCategory::kUnary:
    case OpcodeCategory::kTranscendental:
    case OpcodeCategory::kBinary:
    case OpcodeCategory::kComparison:
    case OpcodeCategory::kTernary:
    case OpcodeCategory::kConversion:
      return true;
    case OpcodeCategory::kOther:
      return op == HloOpcode::kCopy;
  }
  return false;
}

// The box of a reshape's operand that holds `box` of its result, when the reshape only merges
// runs of consecutive operand dimensions (a packed [4][16][4][16] weight read as [64][64]) and
// the box takes, of each run, whole inner dimensions and a range of one outer dimension whose
// outer neighbours are 1 wide: then it is a box of the operand, moving with the result's box
// scaled by the inner extent. Nothing otherwise.
std::optional<Box> mergedBox(const hlo::Shape& operand, const hlo::Shape& result, const Box& box) {
  Box in = Box::whole(operand);
  size_t o = 0;
  for (size_t d = 0; d < static_cast<size_t>(result.rank()); ++d) {
    std::vector<size_t> run;
    int64_t product = 1;
    while (o < static_cast<size_t>(operand.rank()) &&
           (product < result.dim(static_cast<int64_t>(d)) ||
            operand.dim(static_cast<int64_t>(o)) == 1)) {
      product *= operand.dim(static_cast<int64_t>(o));
      run.push_back(o++);
      if (product == result.dim(static_cast<int64_t>(d))) break;
    }
    if (product != result.dim(static_cast<int64_t>(d))) return std::nullopt;
    if (box.start[d] == 0 && box.size[d] == product) continue;  // whole: the run whole
    // The outermost dimension of the run whose inner extent divides the box.
    int64_t inner = product;
    for (size_t k = 0; k < run.size(); ++k) {
      const int64_t extent = operand.dim(static_cast<int64_t>(run[k]));
      inner /= extent;
      if (box.start[d] % inner != 0 || box.size[d] % inner != 0) {
        if (extent != 1) return std::nullopt;
        continue;
      }
      const int64_t first = box.start[d] / inner, count = box.size[d] / inner;
      if (first + count > extent) return std::nullopt;
      in.start[run[k]] = first;
      in.size[run[k]] = count;
      in.follows[run[k]] = box.follows[d];
      in.per[run[k]] = box.per[d] * inner;
      break;
    }
  }
  if (o != static_cast<size_t>(operand.rank())) return std::nullopt;
  return in;
}

class TileBuilder {
 public:
  TileBuilder(hlo::HloModule& out, const std::vector<hlo::Shape>& parameters, int64_t rank,
              ContractionBlock block)
      : out_(out), parameters_(parameters), b_("tile"), rank_(rank), block_(block) {}

  // The blocks of the tile `tile` whose partial sums are carried apart (more than one: the dot
  // of the whole tile is the grid of their dots), and the accumulator each adds its sum to
  // (kMiddle, kLast; none for kFirst).
  void setSums(const Box& tile, std::vector<Box> blocks, std::vector<HloInstruction*> acc) {
    tile_ = tile;
    blocks_ = std::move(blocks);
    acc_ = std::move(acc);
  }

  HloInstruction* build(const HloInstruction* x, const Box& box) {
    auto key = std::make_pair(x, box);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    HloInstruction* made = make(x, box);
    memo_.emplace(std::move(key), made);
    return made;
  }

  hlo::HloBuilder& builder() { return b_; }
  // The kernel's value x over the tile as the grid of its values over the blocks (rows of blocks,
  // row-major): an epilogue computed block by block, each block's sums where they are; the dot
  // of the whole tile when its sums are carried as blocks.
  HloInstruction* grid(const HloInstruction* x) {
    const size_t cols = static_cast<size_t>(x->shape().rank() - 1);
    std::vector<HloInstruction*> rows, row;
    for (size_t i = 0; i < blocks_.size(); ++i) {
      row.push_back(build(x, blocks_[i]));
      const bool last =
          i + 1 == blocks_.size() || blocks_[i + 1].start[cols] <= blocks_[i].start[cols];
      if (!last) continue;
      rows.push_back(row.size() == 1 ? row[0] : b_.concatenate(row, static_cast<int64_t>(cols)));
      row.clear();
    }
    return rows.size() == 1 ? rows[0] : b_.concatenate(rows, static_cast<int64_t>(cols) - 1);
  }
  std::vector<WindowMap> windows() const {
    std::vector<WindowMap> out;
    for (const auto& [number, map] : windows_)
      out.push_back(WindowMap{number, map.first, map.second});
    return out;
  }

 private:
  HloInstruction* make(const HloInstruction* x, const Box& box) {
    const hlo::Shape& s = x->shape();
    const hlo::Shape boxed(s.elementType(), box.size);
    const HloOpcode op = x->opcode();
    if (op == HloOpcode::kParameter) return parameter(x, box);
    if (op == HloOpcode::kConstant) {
      HloInstruction* c = b_.constant(*x->literal());
      return box.isWhole(s) ? c : slice(c, box);
    }
    if (isElementwise(op) &&
        !(op == HloOpcode::kBitcastConvert && x->operand(0)->shape().dims() != s.dims())) {
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* o : x->operands())
        operands.push_back(build(o, o->shape().rank() == 0 ? Box{} : box));
      return b_.add(op, operands, x->attrs(), boxed);
    }
    if (op == HloOpcode::kBroadcast) {
      Box in;
      for (int64_t d : *x->attrs().dimensions)
        in.take(box, static_cast<size_t>(d));
      return b_.broadcast(build(x->operand(0), in), box.size, *x->attrs().dimensions);
    }
    if (op == HloOpcode::kTranspose) {
      const std::vector<int64_t>& perm = *x->attrs().dimensions;
      Box in = Box::whole(x->operand(0)->shape());
      for (size_t i = 0; i < perm.size(); ++i)
        in.set(static_cast<size_t>(perm[i]), box, i);
      return b_.transpose(build(x->operand(0), in), perm);
    }
    if (op == HloOpcode::kReshape) {
      if (std::optional<Box> in = mergedBox(x->operand(0)->shape(), s, box))
        return b_.reshape(build(x->operand(0), *in), box.size);
    }
    if (op == HloOpcode::kDot) return dot(x, box);
    if (op == HloOpcode::kReduce && x->operandCount() == 2) return reduce(x, box);
    if (box.isWhole(s) && x->called("to_apply") == nullptr && x->called("calls") == nullptr) {
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* o : x->operands())
        operands.push_back(build(o, Box::whole(o->shape())));
      return b_.add(op, operands, x->attrs(), s);
    }
    throw NotTileable{"'" + x->name() + "' (" + std::string(hlo::opcodeName(op)) +
                      ") is needed whole and cannot be restricted to a tile"};
  }

  HloInstruction* slice(HloInstruction* x, const Box& box) {
    std::vector<int64_t> limits;
    for (size_t d = 0; d < box.start.size(); ++d)
      limits.push_back(box.start[d] + box.size[d]);
    return b_.slice(x, box.start, limits);
  }

  HloInstruction* parameter(const HloInstruction* x, const Box& box) {
    const int64_t number = x->parameterNumber();
    auto [it, fresh] = windows_.emplace(number, std::make_pair(box.follows, box.per));
    if (!fresh && it->second != std::make_pair(box.follows, box.per))
      throw NotTileable{"parameter '" + x->name() + "' is read through two different windows"};
    HloInstruction* p = declare(x);
    return box.isWhole(x->shape()) ? p : slice(p, box);
  }

 public:
  // The tile module's parameter for the kernel's parameter x (every parameter is declared, read or
  // not, so that the tile module's HBM layout is the kernel's).
  HloInstruction* declare(const HloInstruction* x) {
    HloInstruction*& p = params_[x->parameterNumber()];
    if (p == nullptr)
      p = b_.parameter(x->parameterNumber(), parameters_[static_cast<size_t>(x->parameterNumber())],
                       x->name());
    return p;
  }

 private:
  // Result = batch dims, then lhs free dims, then rhs free dims; contracting dims are read whole,
  // or, split into steps, the block of the one contracting dimension (moving with loop `rank_`).
  HloInstruction* dot(const HloInstruction* x, const Box& box) {
    if (blocks_.size() > 1 && box == tile_) return grid(x);
    const hlo::DotDims& dims = *x->attrs().dot_dims;
    const bool split = block_.size > 0;
    if (split && (dims.lhs_contracting.size() != 1 ||
                  (!hlo::isInteger(x->shape().elementType()) && !block_.reassociate)))
      throw NotTileable{"'" + x->name() +
                        "' cannot be split along its contraction (one contracting dimension of "
                        "integers: a float sum is re-associated only with --reassociate)"};
    size_t next = 0;
    auto side = [&](const HloInstruction* operand, const std::vector<int64_t>& batch,
                    const std::vector<int64_t>& contracting, size_t free_at) {
      Box in = Box::whole(operand->shape());
      if (split) {
        size_t c = static_cast<size_t>(contracting[0]);
        in.start[c] = block_.start;
        in.size[c] = block_.size;
        in.follows[c] = rank_;
      }
      for (size_t k = 0; k < batch.size(); ++k)
        in.set(static_cast<size_t>(batch[k]), box, k);
      size_t at = free_at;
      for (int64_t d = 0; d < operand->shape().rank(); ++d) {
        bool bound = std::count(batch.begin(), batch.end(), d) > 0 ||
                     std::count(contracting.begin(), contracting.end(), d) > 0;
        if (bound) continue;
        in.set(static_cast<size_t>(d), box, at);
        ++at;
      }
      next = at;
      return build(operand, in);
    };
    HloInstruction* lhs =
        side(x->operand(0), dims.lhs_batch, dims.lhs_contracting, dims.lhs_batch.size());
    HloInstruction* rhs = side(x->operand(1), dims.rhs_batch, dims.rhs_contracting, next);
    HloInstruction* acc = accumulatorOf(box);
    if (!split || block_.unit <= 0 || block_.size <= block_.unit || block_.size % block_.unit) {
      HloInstruction* d = b_.dot(lhs, rhs, dims, x->shape().elementType());
      return acc ? b_.binary(HloOpcode::kAdd, acc, d) : d;
    }
    // A block of several unit depths: its unit-deep dots added one after another to the sums.
    HloInstruction* sum = acc;
    for (int64_t k = 0; k < block_.size; k += block_.unit) {
      HloInstruction* d =
          b_.dot(depthSlice(lhs, dims.lhs_contracting[0], k),
                 depthSlice(rhs, dims.rhs_contracting[0], k), dims, x->shape().elementType());
      sum = sum ? b_.binary(HloOpcode::kAdd, sum, d) : d;
    }
    return sum;
  }

  // [k, k + unit) of x's contracting dimension `c`, the other dimensions whole.
  HloInstruction* depthSlice(HloInstruction* x, int64_t c, int64_t k) {
    std::vector<int64_t> starts(static_cast<size_t>(x->shape().rank()), 0);
    std::vector<int64_t> limits = x->shape().dims();
    starts[static_cast<size_t>(c)] = k;
    limits[static_cast<size_t>(c)] = k + block_.unit;
    return b_.slice(x, starts, limits);
  }

  // The accumulator of the dot over `box`: the one of its block, or the only one.
  HloInstruction* accumulatorOf(const Box& box) const {
    if (acc_.size() == 1) return acc_[0];
    for (size_t i = 0; i < acc_.size(); ++i) {
      if (box == blocks_[i]) return acc_[i];
    }
    return nullptr;
  }

  HloInstruction* reduce(const HloInstruction* x, const Box& box) {
    const std::vector<int64_t>& reduced = *x->attrs().dimensions;
    const HloInstruction* input = x->operand(0);
    Box in;
    size_t at = 0;
    for (int64_t d = 0; d < input->shape().rank(); ++d) {
      if (std::count(reduced.begin(), reduced.end(), d) > 0) {
        in.takeWhole(input->shape().dim(d));
      } else {
        in.take(box, at++);
      }
    }
    hlo::HloComputation* reducer = out_.findComputation(x->called("to_apply")->name());
    return b_.reduce({build(input, in)}, {build(x->operand(1), Box{})}, reduced, reducer);
  }

  hlo::HloModule& out_;
  const std::vector<hlo::Shape>& parameters_;
  hlo::HloBuilder b_;
  const int64_t rank_;
  const ContractionBlock block_;
  Box tile_;
  std::vector<Box> blocks_;
  std::vector<HloInstruction*> acc_;
  std::map<std::pair<const HloInstruction*, Box>, HloInstruction*> memo_;
  std::map<int64_t, std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      windows_;  // parameter -> follows, per
  std::map<int64_t, HloInstruction*> params_;
};

}  // namespace

const HloInstruction* onlyDot(const hlo::HloModule& kernel) {
  const HloInstruction* found = nullptr;
  for (const auto& inst : kernel.entry()->instructions()) {
    if (inst->opcode() != HloOpcode::kDot) continue;
    if (found) return nullptr;
    found = inst.get();
  }
  return found;
}

namespace {

// The tile module; `blockwise`: the last step's epilogue is built block by block (the grid of the
// kernel over each block of the sums), else over the whole tile (the dot alone is the grid).
TileModuleOrReason buildTile(const hlo::HloModule& kernel, const std::vector<int64_t>& starts,
                             const std::vector<int64_t>& sizes, TileStep step,
                             const ContractionBlock& block, bool blockwise) {
  const hlo::HloComputation* entry = kernel.entry();
  const HloInstruction* root = entry->root();
  if (!root->shape().isArray()) return {std::nullopt, "the kernel has more than one result"};
  std::vector<hlo::Shape> results = isel::entryResultShapes(kernel);
  std::vector<hlo::Shape> parameters = isel::entryParameterShapes(kernel);
  const HloInstruction* dot = step == TileStep::kWhole ? nullptr : onlyDot(kernel);
  if (step != TileStep::kWhole) {
    if (!dot) return {std::nullopt, "a contraction is split only in a kernel of one dot"};
    if (dot->shape().dims() != root->shape().dims())
      return {std::nullopt, "the dot's result is not the kernel's shape"};
  }
  TileModule tile;
  tile.module = hlo::cloneModule(kernel);
  const int64_t rank = root->shape().rank();
  TileBuilder b(*tile.module, parameters, rank, block);
  Box box;
  for (size_t d = 0; d < starts.size(); ++d) {
    box.start.push_back(starts[d]);
    box.size.push_back(sizes[d]);
    box.follows.push_back(static_cast<int64_t>(d));
    box.per.push_back(1);
  }
  hlo::Shape result(results[0].elementType(), sizes);
  result.setLayout(results[0].layout());  // a window of the kernel's result, in its layout
  // The blocks of the tile whose sums are carried apart (one: the tile).
  std::vector<Box> blocks;
  if (step != TileStep::kWhole && !block.sums.empty()) {
    if (rank < 2 || block.sums.size() != 2 || sizes[rank - 2] % block.sums[0] != 0 ||
        sizes[rank - 1] % block.sums[1] != 0)
      return {std::nullopt, "the accumulator's blocks do not divide the tile"};
    for (int64_t r = 0; r < sizes[rank - 2]; r += block.sums[0]) {
      for (int64_t c = 0; c < sizes[rank - 1]; c += block.sums[1]) {
        Box x = box;
        x.start[rank - 2] += r;
        x.start[rank - 1] += c;
        x.size[rank - 2] = block.sums[0];
        x.size[rank - 1] = block.sums[1];
        blocks.push_back(std::move(x));
      }
    }
  }
  if (blocks.empty()) blocks.push_back(box);
  try {
    for (int64_t i = 0; i < entry->parameterCount(); ++i)
      b.declare(entry->parameter(i));
    std::vector<HloInstruction*> acc;
    if (step == TileStep::kMiddle || step == TileStep::kLast) {
      for (const Box& x : blocks) {
        hlo::Shape sum(dot->shape().elementType(), x.size);
        parameters.push_back(sum);
        acc.push_back(b.builder().parameter(
            static_cast<int64_t>(parameters.size()) - 1, sum,
            blocks.size() == 1 ? "accumulator" : "accumulator" + std::to_string(acc.size())));
      }
    }
    if (step != TileStep::kWhole) b.setSums(box, blocks, std::move(acc));
    if (step == TileStep::kFirst || step == TileStep::kMiddle) {
      // The partial sums: the dot's blocks, each an accumulator.
      std::vector<HloInstruction*> sums;
      std::vector<hlo::Shape> shapes;
      for (const Box& x : blocks) {
        sums.push_back(b.build(dot, x));
        shapes.emplace_back(dot->shape().elementType(), x.size);
      }
      result = shapes.size() == 1 ? shapes[0] : hlo::Shape::tuple(shapes);
      b.builder().addTo(*tile.module, /*entry=*/true,
                        sums.size() == 1 ? sums[0] : b.builder().tuple(sums));
    } else {
      b.builder().addTo(*tile.module, /*entry=*/true,
                        blockwise ? b.grid(root) : b.build(root, box));
    }
  } catch (const NotTileable& e) {
    return {std::nullopt, e.reason};
  } catch (const DiagnosticError& e) {
    return {std::nullopt, e.diagnostic().message};
  }
  tile.windows = b.windows();
  tile.module->setEntryLayout(hlo::ProgramShape{parameters, result});
  return {std::move(tile), ""};
}

}  // namespace

// A last step whose sums are carried as blocks computes its epilogue block by block where the
// epilogue allows (elementwise: each block's result depends on its own sums alone), so that each
// block is stored from where its sums are; an epilogue that needs the whole tile (a reduction
// across blocks) is computed on the grid of the sums.
TileModuleOrReason buildTileModule(const hlo::HloModule& kernel, const std::vector<int64_t>& starts,
                                   const std::vector<int64_t>& sizes, TileStep step,
                                   ContractionBlock block) {
  if (step == TileStep::kLast && !block.sums.empty()) {
    TileModuleOrReason blockwise = buildTile(kernel, starts, sizes, step, block, true);
    if (blockwise.tile) return blockwise;
  }
  return buildTile(kernel, starts, sizes, step, block, false);
}

TileModuleOrReason blockedKernel(const hlo::HloModule& kernel, int64_t block) {
  const HloInstruction* dot = onlyDot(kernel);
  if (!dot || dot->attrs().dot_dims->lhs_contracting.size() != 1)
    return {std::nullopt, "the kernel is not one dot with one contracting dimension"};
  const int64_t extent = dot->operand(0)->shape().dim(dot->attrs().dot_dims->lhs_contracting[0]);
  if (block <= 0 || extent % block != 0)
    return {std::nullopt, "the contraction (" + std::to_string(extent) +
                              ") is not whole blocks of " + std::to_string(block)};
  const hlo::Shape& result = kernel.entry()->root()->shape();
  return buildTile(kernel, std::vector<int64_t>(static_cast<size_t>(result.rank()), 0),
                   result.dims(), TileStep::kWhole, ContractionBlock{0, extent, {}, block, true},
                   false);
}

}  // namespace tacit::backend
