// Piecewise compilation: which results split, into which pieces (piecewise.cc: the join).
#include "backend/piecewise.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "hlo/builder.h"
#include "hlo/opcode.h"
#include "isel/kernel.h"
#include "support/diagnostic.h"

namespace tacit::backend {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Whether each result element depends only on the operands' elements at its own index: the
// elementwise categories of the opcode table, and the conversions that keep the dimensions.
bool elementwise(const HloInstruction& inst) {
  using C = hlo::OpcodeCategory;
  switch (hlo::opcodeCategory(inst.opcode())) {
    case C::kOther:
      return false;
    case C::kConversion:
      if (inst.opcode() == HloOpcode::kStochasticConvert) return false;
      if (inst.opcode() != HloOpcode::kBitcastConvert) return true;  // convert, reduce-precision
      return hlo::bitWidth(inst.shape().elementType()) ==
             hlo::bitWidth(inst.operand(0)->shape().elementType());
    default:  // unary, transcendental, binary, comparison, ternary
      return true;
  }
}

// The byte offset of each logical element (row-major index) in a tensor's HBM bytes.
std::optional<std::vector<int64_t>> byteOffsets(const hlo::Shape& with_layout) {
  hlo::Shape logical(hlo::PrimitiveType::kS64, with_layout.dims());
  hlo::Literal index(logical);
  for (int64_t i = 0; i < index.elementCount(); ++i)
    index.setInt64(i, i);
  hlo::Shape indexed = logical;
  indexed.setLayout(with_layout.layout());
  hlo::Literal physical;
  try {
    physical = isel::toPhysical(index, indexed);
  } catch (const DiagnosticError&) {
    return std::nullopt;
  }
  std::vector<int64_t> out(static_cast<size_t>(index.elementCount()));
  const int64_t size = hlo::byteSize(with_layout.elementType());
  for (int64_t p = 0; p < physical.elementCount(); ++p)
    out[static_cast<size_t>(physical.getInt64(p))] = p * size;
  return out;
}

// What a region reads: a tensor of the result's shape or a scalar (an entry parameter or another
// kernel result), a scalar constant, or a broadcast of a parameter or of a scalar constant.
enum class LeafKind { kTensor, kScalar, kConstant, kBroadcast };

struct Leaf {
  const HloInstruction* inst = nullptr;
  LeafKind kind = LeafKind::kTensor;
  bool from_result = false;  // kTensor/kScalar: another result, else a parameter
  size_t index = 0;          // its parameter number or result index (a broadcast's parameter)
};

struct Region {
  size_t result = 0;
  std::vector<const HloInstruction*> ops;  // entry order; the result last
  std::vector<Leaf> leaves;                // entry order
};

class Planner {
 public:
  Planner(const hlo::HloModule& kernel, const isel::IsaNeeds& needs)
      : kernel_(kernel),
        entry_(*kernel.entry()),
        needs_(needs),
        parameter_shapes_(isel::entryParameterShapes(kernel)),
        result_shapes_(isel::entryResultShapes(kernel)) {
    const HloInstruction* root = entry_.root();
    if (root->opcode() == HloOpcode::kTuple) {
      results_.assign(root->operands().begin(), root->operands().end());
    } else {
      results_ = {root};
    }
    for (const auto& inst : entry_.instructions()) {
      position_[inst.get()] = position_.size();
      for (const HloInstruction* operand : inst->operands())
        users_[operand].push_back(inst.get());
    }
  }

  std::optional<PiecewisePlan> run() {
    if (results_.size() != result_shapes_.size()) return std::nullopt;
    std::vector<Region> regions;
    for (size_t r = 0; r < results_.size(); ++r) {
      if (std::optional<Region> region = regionOf(r)) regions.push_back(std::move(*region));
    }
    // A result another region reads stays whole: the pieces read it from HBM once written.
    std::set<size_t> read;
    for (const Region& region : regions) {
      for (const Leaf& leaf : region.leaves) {
        if (leaf.from_result) read.insert(leaf.index);
      }
    }
    PiecewisePlan plan;
    std::set<size_t> split;
    for (const Region& region : regions) {
      if (read.count(region.result)) continue;
      if (std::optional<SplitResult> s = splitOf(region, needs_)) {
        split.insert(region.result);
        plan.splits.push_back(std::move(*s));
      }
    }
    if (plan.splits.empty()) return std::nullopt;
    for (size_t r = 0; r < results_.size(); ++r) {
      if (!split.count(r)) plan.rest_results.push_back(r);
    }
    if (!plan.rest_results.empty()) plan.rest = restModule(plan.rest_results);
    return plan;
  }

 private:
  std::optional<size_t> resultIndex(const HloInstruction* inst) const {
    auto it = std::find(results_.begin(), results_.end(), inst);
    if (it == results_.end()) return std::nullopt;
    return static_cast<size_t>(it - results_.begin());
  }

  // nullopt: not a leaf; a leaf of kind `kind`, or a reason to give up (`reject`).
  std::optional<Leaf> leafOf(const HloInstruction* x, const HloInstruction* root, bool& reject) {
    const hlo::Shape& s = x->shape();
    bool tensor = s.isArray() && s.dims() == root->shape().dims();
    Leaf leaf{x};
    std::optional<size_t> result = x == root ? std::nullopt : resultIndex(x);
    if (x->opcode() == HloOpcode::kParameter || result) {
      leaf.kind = tensor ? LeafKind::kTensor : LeafKind::kScalar;
      reject = !tensor && !s.isScalar();
      leaf.from_result = x->opcode() != HloOpcode::kParameter;
      leaf.index = leaf.from_result ? *result : static_cast<size_t>(x->parameterNumber());
      return leaf;
    }
    if (x->opcode() == HloOpcode::kConstant) {
      leaf.kind = LeafKind::kConstant;
      reject = !s.isScalar() || !x->literal() || x->literal()->isUnknown();
      return leaf;
    }
    if (x->opcode() == HloOpcode::kBroadcast) {
      const HloInstruction* from = x->operand(0);
      leaf.kind = LeafKind::kBroadcast;
      bool constant = from->opcode() == HloOpcode::kConstant && from->shape().isScalar() &&
                      from->literal() && !from->literal()->isUnknown();
      reject = !tensor || (!constant && from->opcode() != HloOpcode::kParameter) ||
               !x->attrs().dimensions ||
               x->attrs().dimensions->size() != static_cast<size_t>(from->shape().rank());
      if (!constant) leaf.index = static_cast<size_t>(from->parameterNumber());
      return leaf;
    }
    return std::nullopt;
  }

  // The elementwise computation of result r down to its leaves, if it is one that nothing else
  // uses.
  std::optional<Region> regionOf(size_t r) {
    const HloInstruction* root = results_[r];
    if (!root->shape().isArray() || root->shape().rank() == 0 || !elementwise(*root) ||
        std::count(results_.begin(), results_.end(), root) > 1)
      return std::nullopt;
    std::set<const HloInstruction*> ops, leaves;
    Region region;
    region.result = r;
    std::vector<const HloInstruction*> stack{root};
    while (!stack.empty()) {
      const HloInstruction* x = stack.back();
      stack.pop_back();
      if (ops.count(x) || leaves.count(x)) continue;
      bool reject = false;
      if (std::optional<Leaf> leaf = leafOf(x, root, reject)) {
        if (reject) return std::nullopt;
        leaves.insert(x);
        region.leaves.push_back(*leaf);
        continue;
      }
      if (!elementwise(*x) || x->shape().dims() != root->shape().dims()) return std::nullopt;
      ops.insert(x);
      for (const HloInstruction* operand : x->operands())
        stack.push_back(operand);
    }
    for (const HloInstruction* op : ops) {
      for (const HloInstruction* user : users_[op]) {
        bool inside = ops.count(user) || (op == root && user == entry_.root());
        if (!inside) return std::nullopt;
      }
    }
    region.ops.assign(ops.begin(), ops.end());
    auto inEntryOrder = [&](const HloInstruction* a, const HloInstruction* b) {
      return position_.at(a) < position_.at(b);
    };
    std::sort(region.ops.begin(), region.ops.end(), inEntryOrder);
    std::sort(region.leaves.begin(), region.leaves.end(),
              [&](const Leaf& a, const Leaf& b) { return inEntryOrder(a.inst, b.inst); });
    return region;
  }

  // The widest row of the ISA's elementwise units for the region's operators, if every such unit
  // computes one row.
  static std::optional<int64_t> unitWidth(const Region& region, const isel::IsaNeeds& needs) {
    int64_t width = 0;
    for (const HloInstruction* op : region.ops) {
      auto it = needs.elementwise.find({op->opcode(), op->shape().elementType()});
      if (it == needs.elementwise.end()) continue;
      if (!it->second.rows.empty() && *it->second.rows.rbegin() > 1) return std::nullopt;
      if (!it->second.cols.empty()) width = std::max(width, *it->second.cols.rbegin());
    }
    if (width == 0) return std::nullopt;
    return width;
  }

  const std::vector<int64_t>* offsetsOf(bool result, size_t index) {
    auto key = std::make_pair(result, index);
    auto it = offsets_.find(key);
    if (it == offsets_.end()) {
      const hlo::Shape& s = result ? result_shapes_[index] : parameter_shapes_[index];
      it = offsets_.emplace(key, byteOffsets(s)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  // The byte offset of a tensor's `elements` if they lie one after the other in HBM.
  std::optional<int64_t> contiguousAt(bool result, size_t index,
                                      const std::vector<int64_t>& elements) {
    const std::vector<int64_t>* off = offsetsOf(result, index);
    if (!off) return std::nullopt;
    const hlo::Shape& s = result ? result_shapes_[index] : parameter_shapes_[index];
    const int64_t size = hlo::byteSize(s.elementType());
    const int64_t first = (*off)[static_cast<size_t>(elements[0])];
    for (size_t t = 0; t < elements.size(); ++t) {
      if ((*off)[static_cast<size_t>(elements[t])] != first + static_cast<int64_t>(t) * size)
        return std::nullopt;
    }
    return first;
  }

  // The parameter elements a broadcast leaf reads for result elements `elements` (one if the
  // broadcast does not map the last dimension).
  std::vector<int64_t> broadcastElements(const Leaf& leaf, const std::vector<int64_t>& elements) {
    const HloInstruction* x = leaf.inst;
    const hlo::Shape& to = x->shape();
    const hlo::Shape& from = x->operand(0)->shape();
    const std::vector<int64_t>& dims = *x->attrs().dimensions;  // leafOf checked it
    bool maps_last = std::count(dims.begin(), dims.end(), to.rank() - 1) > 0;
    std::vector<int64_t> out;
    for (size_t t = 0; t < (maps_last ? elements.size() : 1); ++t) {
      // The result's multi-index of the element, then the operand's linear index.
      std::vector<int64_t> idx(static_cast<size_t>(to.rank()));
      int64_t rest = elements[t];
      for (int64_t d = to.rank() - 1; d >= 0; --d) {
        idx[static_cast<size_t>(d)] = rest % to.dim(d);
        rest /= to.dim(d);
      }
      int64_t linear = 0;
      for (size_t q = 0; q < dims.size(); ++q)
        linear = linear * from.dim(static_cast<int64_t>(q)) + idx[static_cast<size_t>(dims[q])];
      out.push_back(linear);
    }
    return out;
  }

  // The pieces of `width` elements, if every one is contiguous in every tensor it touches.
  std::optional<std::vector<Piece>> piecesOf(const Region& region, int64_t width) {
    const hlo::Shape& shape = results_[region.result]->shape();
    std::vector<Piece> pieces;
    for (int64_t at = 0; at < shape.elementCount(); at += width) {
      std::vector<int64_t> elements(static_cast<size_t>(width));
      for (int64_t t = 0; t < width; ++t)
        elements[static_cast<size_t>(t)] = at + t;
      Piece piece;
      std::optional<int64_t> out = contiguousAt(true, region.result, elements);
      if (!out) return std::nullopt;
      piece.offset = *out;
      for (const Leaf& leaf : region.leaves) {
        std::optional<int64_t> from;
        if (leaf.kind == LeafKind::kTensor) {
          from = contiguousAt(leaf.from_result, leaf.index, elements);
        } else if (leaf.kind == LeafKind::kScalar) {
          from = 0;
        } else if (leaf.kind == LeafKind::kBroadcast &&
                   leaf.inst->operand(0)->opcode() == HloOpcode::kParameter) {
          from = contiguousAt(false, leaf.index, broadcastElements(leaf, elements));
        } else {
          continue;  // a constant: part of the piece kernel
        }
        if (!from) return std::nullopt;
        piece.sources.push_back({leaf.from_result, leaf.index, *from});
      }
      pieces.push_back(std::move(piece));
    }
    return pieces;
  }

  std::optional<SplitResult> splitOf(const Region& region, const isel::IsaNeeds& needs) {
    std::optional<int64_t> unit = unitWidth(region, needs);
    if (!unit) return std::nullopt;
    const hlo::Shape& shape = results_[region.result]->shape();
    const int64_t last = shape.dim(shape.rank() - 1);
    // The narrowest run a unit fills (a multiple of its row, or the whole last dimension).
    for (int64_t width = 1; width <= last; ++width) {
      if (last % width != 0 || (width % *unit != 0 && width != last)) continue;
      if (static_cast<size_t>(shape.elementCount() / width) < kMinPieces) return std::nullopt;
      std::optional<std::vector<Piece>> pieces = piecesOf(region, width);
      if (!pieces) continue;
      SplitResult s;
      s.result = region.result;
      s.elements = width;
      s.pieces = std::move(*pieces);
      s.kernel = pieceKernel(region, width);
      return s;
    }
    return std::nullopt;
  }

  // The computation of one piece: the region's operators over one row of `width` elements
  // (rank 2, the shape the ISA's row units are matched on), its tensors and broadcast parameters as
  // parameters in leaf order. The builder names the instructions: the kernel's names could collide
  // with its defaults, and a piece's names are never shown (a kernel that fails piecewise is
  // compiled whole, and its diagnostics name the kernel's).
  std::unique_ptr<hlo::HloModule> pieceKernel(const Region& region, int64_t width) {
    hlo::HloBuilder b("main");
    std::map<const HloInstruction*, HloInstruction*> map;
    int64_t parameter = 0;
    auto row = [&](const HloInstruction* x) {
      return hlo::Shape(x->shape().elementType(), {1, width});
    };
    auto scalar = [](const HloInstruction* x) { return hlo::Shape(x->shape().elementType(), {}); };
    for (const Leaf& leaf : region.leaves) {
      const HloInstruction* x = leaf.inst;
      if (leaf.kind == LeafKind::kTensor) {
        map[x] = b.parameter(parameter++, row(x));
      } else if (leaf.kind == LeafKind::kScalar) {
        map[x] = b.parameter(parameter++, scalar(x));
      } else if (leaf.kind == LeafKind::kConstant) {
        map[x] = b.constant(*x->literal());
      } else {
        // A run of the broadcast parameter along the row, or one scalar (a parameter's element
        // or a constant) for the whole row.
        const HloInstruction* from = x->operand(0);
        const std::vector<int64_t>& dims = *x->attrs().dimensions;  // leafOf checked it
        bool maps_last = std::count(dims.begin(), dims.end(), x->shape().rank() - 1) > 0;
        HloInstruction* v;
        if (from->opcode() == HloOpcode::kConstant) {
          v = b.constant(*from->literal());
        } else if (maps_last) {
          v = b.parameter(parameter++, hlo::Shape(from->shape().elementType(), {width}));
        } else {
          v = b.parameter(parameter++, scalar(from));
        }
        map[x] = b.broadcast(v, {1, width},
                             maps_last ? std::vector<int64_t>{1} : std::vector<int64_t>{});
      }
    }
    for (const HloInstruction* op : region.ops) {
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* operand : op->operands())
        operands.push_back(map.at(operand));
      map[op] = b.add(op->opcode(), operands, op->attrs(), row(op));
    }
    auto module = std::make_unique<hlo::HloModule>(kernel_.name() + "_piece");
    module->setSourceFile(kernel_.sourceFile());
    b.addTo(*module, true, map.at(results_[region.result]));
    return module;
  }

  // The kernel without the split results: every parameter, and the instructions the kept results
  // need.
  std::unique_ptr<hlo::HloModule> restModule(const std::vector<size_t>& keep) {
    std::unique_ptr<hlo::HloModule> m = hlo::cloneModule(kernel_);
    const HloComputation& entry = *m->entry();
    const HloInstruction* root = entry.root();
    std::vector<const HloInstruction*> results;
    if (root->opcode() == HloOpcode::kTuple) {
      results.assign(root->operands().begin(), root->operands().end());
    } else {
      results = {root};
    }
    std::set<const HloInstruction*> needed;
    std::vector<const HloInstruction*> stack;
    for (size_t r : keep)
      stack.push_back(results[r]);
    while (!stack.empty()) {
      const HloInstruction* x = stack.back();
      stack.pop_back();
      if (!needed.insert(x).second) continue;
      for (const HloInstruction* operand : x->operands())
        stack.push_back(operand);
    }
    hlo::HloBuilder b(entry.name());
    std::map<const HloInstruction*, HloInstruction*> map;
    for (const auto& owned : entry.instructions()) {
      const HloInstruction* x = owned.get();
      if (x->opcode() == HloOpcode::kParameter) {
        map[x] = b.parameter(x->parameterNumber(), x->shape(), x->name());
      } else if (!needed.count(x)) {
        continue;
      } else if (x->opcode() == HloOpcode::kConstant) {
        map[x] = b.constant(*x->literal(), x->name());
      } else {
        std::vector<HloInstruction*> operands;
        for (const HloInstruction* operand : x->operands())
          operands.push_back(map.at(operand));
        map[x] = b.add(x->opcode(), operands, x->attrs(), x->shape(), x->name());
      }
    }
    std::vector<HloInstruction*> kept;
    std::vector<hlo::Shape> kept_shapes;
    for (size_t r : keep) {
      kept.push_back(map.at(results[r]));
      kept_shapes.push_back(result_shapes_[r]);
    }
    HloInstruction* tuple = b.tuple(kept);
    b.addTo(*m, true, tuple);
    m->setEntryLayout(hlo::ProgramShape{parameter_shapes_, hlo::Shape::tuple(kept_shapes)});
    return m;
  }

  const hlo::HloModule& kernel_;
  const HloComputation& entry_;
  const isel::IsaNeeds& needs_;
  std::vector<hlo::Shape> parameter_shapes_, result_shapes_;
  std::vector<const HloInstruction*> results_;
  std::map<const HloInstruction*, size_t> position_;
  std::map<const HloInstruction*, std::vector<const HloInstruction*>> users_;
  std::map<std::pair<bool, size_t>, std::optional<std::vector<int64_t>>> offsets_;
};

}  // namespace

std::string PiecewisePlan::summary() const {
  std::string out;
  for (const SplitResult& s : splits) {
    if (!out.empty()) out += "; ";
    out += "result " + std::to_string(s.result) + " in " + std::to_string(s.pieces.size()) +
           " pieces of " + std::to_string(s.elements) + " elements";
  }
  return out;
}

std::optional<PiecewisePlan> planPiecewise(const hlo::HloModule& kernel,
                                           const isel::IsaNeeds& needs) {
  if (kernel.entry() == nullptr) return std::nullopt;
  try {
    return Planner(kernel, needs).run();
  } catch (const DiagnosticError&) {
    return std::nullopt;  // a part the builder rejects: the kernel is compiled whole
  }
}

}  // namespace tacit::backend
