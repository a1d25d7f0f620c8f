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
// whose tile start it follows (-1: it starts at 0 in every tile).
struct Box {
  std::vector<int64_t> start, size, follows;
  auto key() const { return std::tie(start, size, follows); }
  bool operator<(const Box& o) const { return key() < o.key(); }

  static Box whole(const hlo::Shape& s) {
    Box b;
    b.start.assign(static_cast<size_t>(s.rank()), 0);
    b.size = s.dims();
    b.follows.assign(static_cast<size_t>(s.rank()), -1);
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
  }
  void takeWhole(int64_t extent) {
    start.push_back(0);
    size.push_back(extent);
    follows.push_back(-1);
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

class TileBuilder {
 public:
  TileBuilder(hlo::HloModule& out, const std::vector<hlo::Shape>& parameters, int64_t rank,
              ContractionBlock block)
      : out_(out), parameters_(parameters), b_("tile"), rank_(rank), block_(block) {}

  // The accumulator the dot adds its block's sum to (kMiddle, kLast).
  void setAccumulator(HloInstruction* acc) { acc_ = acc; }

  HloInstruction* build(const HloInstruction* x, const Box& box) {
    auto key = std::make_pair(x, box);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    HloInstruction* made = make(x, box);
    memo_.emplace(std::move(key), made);
    return made;
  }

  hlo::HloBuilder& builder() { return b_; }
  std::vector<WindowMap> windows() const {
    std::vector<WindowMap> out;
    for (const auto& [number, follows] : windows_)
      out.push_back(WindowMap{number, follows});
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
      for (size_t i = 0; i < perm.size(); ++i) {
        size_t d = static_cast<size_t>(perm[i]);
        in.start[d] = box.start[i];
        in.size[d] = box.size[i];
        in.follows[d] = box.follows[i];
      }
      return b_.transpose(build(x->operand(0), in), perm);
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
    auto [it, fresh] = windows_.emplace(number, box.follows);
    if (!fresh && it->second != box.follows)
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
    const hlo::DotDims& dims = *x->attrs().dot_dims;
    const bool split = block_.size > 0;
    if (split && (dims.lhs_contracting.size() != 1 || !hlo::isInteger(x->shape().elementType())))
      throw NotTileable{"'" + x->name() +
                        "' cannot be split along its contraction (one contracting dimension of "
                        "integers: a float sum is never re-associated)"};
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
      for (size_t k = 0; k < batch.size(); ++k) {
        size_t d = static_cast<size_t>(batch[k]);
        in.start[d] = box.start[k];
        in.size[d] = box.size[k];
        in.follows[d] = box.follows[k];
      }
      size_t at = free_at;
      for (int64_t d = 0; d < operand->shape().rank(); ++d) {
        bool bound = std::count(batch.begin(), batch.end(), d) > 0 ||
                     std::count(contracting.begin(), contracting.end(), d) > 0;
        if (bound) continue;
        in.start[static_cast<size_t>(d)] = box.start[at];
        in.size[static_cast<size_t>(d)] = box.size[at];
        in.follows[static_cast<size_t>(d)] = box.follows[at];
        ++at;
      }
      next = at;
      return build(operand, in);
    };
    HloInstruction* lhs =
        side(x->operand(0), dims.lhs_batch, dims.lhs_contracting, dims.lhs_batch.size());
    HloInstruction* rhs = side(x->operand(1), dims.rhs_batch, dims.rhs_contracting, next);
    HloInstruction* d = b_.dot(lhs, rhs, dims, x->shape().elementType());
    return acc_ ? b_.binary(HloOpcode::kAdd, acc_, d) : d;
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
  HloInstruction* acc_ = nullptr;
  std::map<std::pair<const HloInstruction*, Box>, HloInstruction*> memo_;
  std::map<int64_t, std::vector<int64_t>> windows_;  // parameter -> follows
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

TileModuleOrReason buildTileModule(const hlo::HloModule& kernel, const std::vector<int64_t>& starts,
                                   const std::vector<int64_t>& sizes, TileStep step,
                                   ContractionBlock block) {
  const hlo::HloComputation* entry = kernel.entry();
  const HloInstruction* root = entry->root();
  if (!root->shape().isArray()) return {std::nullopt, "the kernel has more than one result"};
  std::vector<hlo::Shape> results = isel::entryResultShapes(kernel);
  if (!results[0].hasDefaultLayout()) return {std::nullopt, "the result has a non-default layout"};
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
  TileBuilder b(*tile.module, parameters, rank,
                step == TileStep::kWhole ? ContractionBlock{} : block);
  Box box;
  for (size_t d = 0; d < starts.size(); ++d) {
    box.start.push_back(starts[d]);
    box.size.push_back(sizes[d]);
    box.follows.push_back(static_cast<int64_t>(d));
  }
  hlo::Shape result(results[0].elementType(), sizes);
  try {
    for (int64_t i = 0; i < entry->parameterCount(); ++i)
      b.declare(entry->parameter(i));
    if (step == TileStep::kMiddle || step == TileStep::kLast) {
      hlo::Shape acc(dot->shape().elementType(), sizes);
      parameters.push_back(acc);
      b.setAccumulator(b.builder().parameter(entry->parameterCount(), acc, "accumulator"));
    }
    const HloInstruction* top = step == TileStep::kFirst || step == TileStep::kMiddle ? dot : root;
    if (top == dot) result = hlo::Shape(dot->shape().elementType(), sizes);
    b.builder().addTo(*tile.module, /*entry=*/true, b.build(top, box));
  } catch (const NotTileable& e) {
    return {std::nullopt, e.reason};
  } catch (const DiagnosticError& e) {
    return {std::nullopt, e.diagnostic().message};
  }
  tile.windows = b.windows();
  tile.module->setEntryLayout(hlo::ProgramShape{parameters, result});
  return {std::move(tile), ""};
}

}  // namespace tacit::backend
