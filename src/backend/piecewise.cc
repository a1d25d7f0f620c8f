#include "backend/piecewise.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "alloc/allocator.h"
#include "backend/emit.h"
#include "hlo/attributes.h"
#include "hlo/builder.h"
#include "isel/kernel.h"
#include "support/diagnostic.h"

namespace tacit::backend {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

bool elementwise(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kCompare:
    case HloOpcode::kConvert:
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
    case HloOpcode::kReducePrecision:
      return true;
    case HloOpcode::kBitcastConvert:
      return hlo::bitWidth(inst.shape().elementType()) ==
             hlo::bitWidth(inst.operand(0)->shape().elementType());
    case HloOpcode::kStochasticConvert:
      return false;
    default:
      return hlo::isElementwiseUnary(inst.opcode()) || hlo::isElementwiseBinary(inst.opcode());
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
  Planner(const hlo::HloModule& kernel, const std::function<const isel::IsaNeeds&()>& needs)
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
      if (std::optional<SplitResult> s = splitOf(region, needs_())) {
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
      reject = !tensor || (!constant && from->opcode() != HloOpcode::kParameter);
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
    const std::vector<int64_t>& dims = *x->attrs().dimensions;
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
        const std::vector<int64_t>& dims = *x->attrs().dimensions;
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
  const std::function<const isel::IsaNeeds&()>& needs_;
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
                                           const std::function<const isel::IsaNeeds&()>& needs) {
  if (kernel.entry() == nullptr) return std::nullopt;
  try {
    return Planner(kernel, needs).run();
  } catch (const DiagnosticError&) {
    return std::nullopt;  // a part the builder rejects: the kernel is compiled whole
  }
}

namespace {

// The nodes of `g` the join may share between pieces: constants, views, and calls whose outputs
// no call overwrites in place and which write no HBM (a piece's stores write its own region).
std::vector<bool> shareableNodes(const isel::PiiGraph& g, const isel::UnitSet& units) {
  std::vector<bool> in_place(g.values.size(), false);
  for (const isel::PiiNode& n : g.nodes) {
    if (n.kind != isel::PiiKind::kCall) continue;
    const isel::Unit& u = units.units[static_cast<size_t>(n.unit)];
    const taidl::SymCase& c = u.semantics->cases[static_cast<size_t>(n.case_index)];
    for (size_t k = 0; k < n.operands.size() && k < c.inputs.size(); ++k) {
      if (isel::readsInPlace(c, k)) in_place[static_cast<size_t>(n.operands[k])] = true;
    }
  }
  std::vector<bool> out(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const isel::PiiNode& n = g.nodes[i];
    bool call = n.kind == isel::PiiKind::kCall;
    if (!call && n.kind != isel::PiiKind::kConstant && n.kind != isel::PiiKind::kSliceView)
      continue;
    out[i] = std::none_of(n.outputs.begin(), n.outputs.end(), [&](int32_t v) {
      return in_place[static_cast<size_t>(v)] ||
             (call && g.values[static_cast<size_t>(v)].buffer == 0);
    });
  }
  return out;
}

// Appends instruction graphs to one, sharing what may be shared (joinPieces).
class Joiner {
 public:
  explicit Joiner(const isel::ImportedKernel& layout) : layout_(layout) {}

  // The value of entry parameter `p` (one input leaf per parameter).
  int32_t input(size_t p) {
    auto it = inputs_.find(p);
    if (it != inputs_.end()) return it->second;
    isel::PiiNode node;
    node.kind = isel::PiiKind::kInput;
    node.parameter = static_cast<int32_t>(p);
    hlo::Shape bytes(hlo::PrimitiveType::kU8, {layout_.parameters[p].bytes});
    int32_t v = append(std::move(node), {{-1, 0, 0, bytes}});
    inputs_.emplace(p, v);
    return v;
  }

  // A view of `bytes` bytes of HBM value `whole` at byte `offset`.
  int32_t slice(int32_t whole, int64_t offset, int64_t bytes) {
    isel::PiiNode node;
    node.kind = isel::PiiKind::kSliceView;
    node.operands = {whole};
    node.view_start = {offset};
    node.view_limit = {offset + bytes};
    return add(std::move(node), {{-1, 0, 0, hlo::Shape(hlo::PrimitiveType::kU8, {bytes})}})[0];
  }

  // One HBM region assembled from `parts` at `offsets`.
  int32_t overlay(std::vector<int32_t> parts, std::vector<int64_t> offsets, int64_t bytes) {
    isel::PiiNode node;
    node.kind = isel::PiiKind::kOverlayView;
    node.operands = std::move(parts);
    node.part_offsets = std::move(offsets);
    return append(std::move(node), {{-1, 0, 0, hlo::Shape(hlo::PrimitiveType::kU8, {bytes})}});
  }

  // Copies `g`; its input leaves become `input_of(parameter)`, and its `shareable` nodes become
  // an equal node already there if there is one. Returns the new value of each value of g.
  template <typename InputOf>
  std::vector<int32_t> copy(const isel::PiiGraph& g, const std::vector<bool>& shareable,
                            InputOf input_of) {
    std::vector<int32_t> value(g.values.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const isel::PiiNode& node = g.nodes[i];
      if (node.kind == isel::PiiKind::kInput) {
        value[static_cast<size_t>(node.outputs[0])] = input_of(static_cast<size_t>(node.parameter));
        continue;
      }
      isel::PiiNode n = node;
      for (int32_t& operand : n.operands)
        operand = value[static_cast<size_t>(operand)];
      std::vector<isel::PiiValue> types;
      for (int32_t out : node.outputs)
        types.push_back(g.values[static_cast<size_t>(out)]);
      std::vector<int32_t> outs =
          shareable[i] ? add(std::move(n), types) : appendAll(std::move(n), types);
      for (size_t o = 0; o < outs.size(); ++o)
        value[static_cast<size_t>(node.outputs[o])] = outs[o];
    }
    return value;
  }

  isel::PiiGraph take(std::vector<int32_t> results) {
    graph_.results = std::move(results);
    return std::move(graph_);
  }

 private:
  // An equal node already added, else this one.
  std::vector<int32_t> add(isel::PiiNode node, const std::vector<isel::PiiValue>& types) {
    std::string key = keyOf(node, types);
    auto it = shared_.find(key);
    if (it != shared_.end()) return graph_.nodes[static_cast<size_t>(it->second)].outputs;
    std::vector<int32_t> outs = appendAll(std::move(node), types);
    shared_.emplace(std::move(key), static_cast<int32_t>(graph_.nodes.size() - 1));
    return outs;
  }

  static std::string keyOf(const isel::PiiNode& n, const std::vector<isel::PiiValue>& types) {
    std::string key = std::to_string(static_cast<int>(n.kind)) + ":" + std::to_string(n.unit) +
                      ":" + std::to_string(n.case_index);
    auto list = [&key](char tag, const auto& xs) {
      key += tag;
      for (auto x : xs)
        key += std::to_string(x) + ",";
    };
    list('a', n.alpha);
    list('o', n.operands);
    list('s', n.view_start);
    list('l', n.view_limit);
    for (const isel::PiiValue& t : types)
      key += "|" + std::to_string(t.buffer) + t.shape.str();
    if (n.literal) {
      key += "#";
      key.append(reinterpret_cast<const char*>(n.literal->bytes()), n.literal->byteCount());
    }
    return key;
  }

  int32_t append(isel::PiiNode node, const std::vector<isel::PiiValue>& types) {
    return appendAll(std::move(node), types)[0];
  }

  std::vector<int32_t> appendAll(isel::PiiNode node, const std::vector<isel::PiiValue>& types) {
    const int32_t index = static_cast<int32_t>(graph_.nodes.size());
    node.outputs.clear();
    for (size_t o = 0; o < types.size(); ++o) {
      node.outputs.push_back(static_cast<int32_t>(graph_.values.size()));
      graph_.values.push_back({index, static_cast<int32_t>(o), types[o].buffer, types[o].shape});
    }
    graph_.nodes.push_back(std::move(node));
    return graph_.nodes.back().outputs;
  }

  const isel::ImportedKernel& layout_;
  isel::PiiGraph graph_;
  std::map<size_t, int32_t> inputs_;
  std::map<std::string, int32_t> shared_;
};

}  // namespace

isel::PiiGraph joinPieces(const PiecewisePlan& plan, const isel::UnitSet& units,
                          const isel::ImportedKernel& layout, const isel::PiiGraph* rest,
                          const std::vector<const isel::PiiGraph*>& pieces) {
  Joiner join(layout);
  std::vector<int32_t> results(layout.results.size(), -1);
  if (rest) {
    // Only its constants are shared: equal calls in it are copies phase 2 made on purpose.
    std::vector<bool> constants(rest->nodes.size());
    for (size_t i = 0; i < rest->nodes.size(); ++i)
      constants[i] = rest->nodes[i].kind == isel::PiiKind::kConstant;
    std::vector<int32_t> value =
        join.copy(*rest, constants, [&](size_t p) { return join.input(p); });
    for (size_t k = 0; k < plan.rest_results.size(); ++k)
      results[plan.rest_results[k]] = value[static_cast<size_t>(rest->results[k])];
  }
  for (size_t s = 0; s < plan.splits.size(); ++s) {
    const SplitResult& split = plan.splits[s];
    const isel::PiiGraph& g = *pieces[s];
    const std::vector<bool> shareable = shareableNodes(g, units);
    const std::vector<hlo::Shape> piece_parameters = isel::entryParameterShapes(*split.kernel);
    std::vector<int32_t> parts;
    std::vector<int64_t> offsets;
    for (const Piece& piece : split.pieces) {
      std::vector<int32_t> value = join.copy(g, shareable, [&](size_t p) {
        const PieceSource& from = piece.sources[p];
        int32_t whole = from.from_result ? results[from.index] : join.input(from.index);
        return join.slice(whole, from.offset, piece_parameters[p].byteSize());
      });
      parts.push_back(value[static_cast<size_t>(g.results[0])]);
      offsets.push_back(piece.offset);
    }
    results[split.result] =
        join.overlay(std::move(parts), std::move(offsets), layout.results[split.result].bytes);
  }
  return join.take(std::move(results));
}

namespace {

using Clock = std::chrono::steady_clock;

// How many nodes of the joined program each node of a piece kernel's graph becomes (joinPieces'
// sharing, counted without joining): a shareable node computed only from shareable nodes and the
// piece's inputs becomes one node per distinct tuple of the byte offsets of the inputs it reads;
// any other node, one per piece.
std::vector<int64_t> joinedCopies(const isel::PiiGraph& g, const std::vector<bool>& shareable,
                                  const SplitResult& split) {
  const int64_t pieces = static_cast<int64_t>(split.pieces.size());
  // The piece inputs each value is computed from; nullopt: one value per piece.
  std::vector<std::optional<std::set<size_t>>> reads(g.values.size());
  std::vector<int64_t> copies(g.nodes.size(), pieces);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const isel::PiiNode& n = g.nodes[i];
    std::optional<std::set<size_t>> from;
    if (n.kind == isel::PiiKind::kInput) {
      from = std::set<size_t>{static_cast<size_t>(n.parameter)};
    } else if (shareable[i]) {
      from.emplace();
      for (int32_t operand : n.operands) {
        const std::optional<std::set<size_t>>& r = reads[static_cast<size_t>(operand)];
        if (!r) {
          from.reset();
          break;
        }
        from->insert(r->begin(), r->end());
      }
    }
    for (int32_t v : n.outputs)
      reads[static_cast<size_t>(v)] = from;
    if (!from) continue;
    std::set<std::vector<int64_t>> distinct;
    for (const Piece& piece : split.pieces) {
      std::vector<int64_t> at;
      for (size_t p : *from)
        at.push_back(piece.sources[p].offset);
      distinct.insert(std::move(at));
    }
    copies[i] = static_cast<int64_t>(distinct.size());
  }
  return copies;
}

// Costs a piece kernel's candidate by what it adds to the joined program: each call times the
// nodes it becomes there. A piece alone cannot tell a load of a run every piece shares (a bias)
// from a load of its own row, and would take either as the memory operand of an add.
std::function<ProgramCosts(const isel::PiiGraph&, const alloc::AllocResult&)> joinedCosts(
    const taidl::Isa& isa, const isel::UnitSet& units, const SplitResult& split) {
  return [&isa, &units, &split](const isel::PiiGraph& g, const alloc::AllocResult& allocation) {
    std::vector<int64_t> copies = joinedCopies(g, shareableNodes(g, units), split);
    ProgramCosts c;
    for (int32_t n : allocation.order) {
      c.add(callCosts(isa, units, g, g.nodes[static_cast<size_t>(n)],
                      allocation.placement.attrs[static_cast<size_t>(n)]),
            copies[static_cast<size_t>(n)]);
    }
    return c;
  };
}

// Adds a part's statistics to the whole's (sums; the iterations of the longest part).
void addPart(CompileStats& whole, const CompileStats& part, std::string name, size_t copies) {
  isel::SaturationStats& s = whole.saturation;
  const isel::SaturationStats& p = part.saturation;
  s.initial_nodes += p.initial_nodes;
  s.iterations = std::max(s.iterations, p.iterations);
  s.nodes += p.nodes;
  s.classes += p.classes;
  s.piis += p.piis;
  s.seconds += p.seconds;
  if (p.stop != isel::SaturationStop::kSaturated) s.stop = p.stop;
  whole.import_seconds += part.import_seconds;
  whole.saturate_seconds += part.saturate_seconds;
  whole.extract_seconds += part.extract_seconds;
  whole.alloc_seconds += part.alloc_seconds;
  whole.solver_seconds += part.solver_seconds;
  whole.candidates += part.candidates;
  whole.allocated += part.allocated;
  whole.infeasible += part.infeasible;
  whole.solver_limits += part.solver_limits;
  whole.orders_tried += part.orders_tried;
  whole.rematerialised += part.rematerialised;
  whole.stop += (whole.stop.empty() ? "" : "; ") + name + ": " + part.stop;
  whole.parts.push_back(
      {std::move(name), copies, p.nodes, p.iterations, part.candidates, part.total_seconds});
}

// The parts compiled on their own; nullopt if one does not compile (the whole kernel's compile
// then says why).
struct Parts {
  std::optional<CompileResult> rest;
  std::vector<CompileResult> pieces;  // per split
};

std::optional<Parts> compileParts(const taidl::Isa& isa, const isel::UnitSet& units,
                                  const PiecewisePlan& plan, const CompileOptions& options,
                                  Clock::time_point deadline) {
  // Each part gets what is left of the kernel's time limit.
  auto optionsLeft = [&]() -> std::optional<CompileOptions> {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return std::nullopt;
    CompileOptions o = options;
    o.piecewise = false;
    o.after_saturation = nullptr;
    o.time_limit = left;
    o.selector.time_limit = std::min(o.selector.time_limit, left);
    return o;
  };
  Parts parts;
  try {
    if (plan.rest) {
      std::optional<CompileOptions> o = optionsLeft();
      if (!o) return std::nullopt;
      parts.rest = compile(isa, *plan.rest, *o);
    }
    for (const SplitResult& s : plan.splits) {
      std::optional<CompileOptions> o = optionsLeft();
      if (!o) return std::nullopt;
      o->costs = joinedCosts(isa, units, s);
      parts.pieces.push_back(compile(isa, *s.kernel, *o));
    }
  } catch (const DiagnosticError&) {
    return std::nullopt;
  }
  // The join is one program for phase 2: bounded like a whole kernel's e-graph.
  size_t joined = parts.rest ? parts.rest->graph.nodes.size() : 0;
  for (size_t s = 0; s < parts.pieces.size(); ++s)
    joined += plan.splits[s].pieces.size() * parts.pieces[s].graph.nodes.size();
  if (joined > options.selector.max_nodes) return std::nullopt;
  return parts;
}

}  // namespace

std::optional<CompileResult> compilePiecewise(const taidl::Isa& isa, const hlo::HloModule& kernel,
                                              const CompileOptions& options) {
  const Clock::time_point start = Clock::now();
  std::optional<isel::UnitSet> units;
  std::optional<isel::IsaNeeds> needs;
  std::optional<PiecewisePlan> plan = planPiecewise(kernel, [&]() -> const isel::IsaNeeds& {
    if (!needs) needs = isel::analyzeIsa(isa, units.emplace(isel::buildUnits(isa)));
    return *needs;
  });
  if (!plan) return std::nullopt;
  std::optional<Parts> parts =
      compileParts(isa, *units, *plan, options, start + options.time_limit);
  if (!parts) return std::nullopt;

  CompileResult result;
  result.model = options.cost.value_or(defaultCostModel(isa));
  CompileStats& stats = result.stats;
  stats.piecewise = plan->summary();
  if (parts->rest) addPart(stats, parts->rest->stats, "rest", 1);
  std::vector<const isel::PiiGraph*> graphs;
  for (size_t s = 0; s < parts->pieces.size(); ++s) {
    const SplitResult& split = plan->splits[s];
    addPart(stats, parts->pieces[s].stats, "result " + std::to_string(split.result) + "'s piece",
            split.pieces.size());
    graphs.push_back(&parts->pieces[s].graph);
  }
  isel::ImportedKernel layout = isel::hbmLayout(kernel);
  isel::PiiGraph graph =
      joinPieces(*plan, *units, layout, parts->rest ? &parts->rest->graph : nullptr, graphs);

  Clock::time_point t = Clock::now();
  alloc::AllocOptions alloc_options = options.alloc;
  alloc_options.deadline = std::min(alloc_options.deadline, start + options.time_limit);
  if (!alloc_options.call_cost) alloc_options.call_cost = allocationCost(result.model, isa, *units);
  alloc::AllocResult allocation = alloc::allocate(isa, *units, graph, layout, alloc_options);
  stats.join_alloc_seconds = std::chrono::duration<double>(Clock::now() - t).count();
  stats.alloc_seconds += stats.join_alloc_seconds;
  stats.solver_seconds += allocation.solver_seconds;
  stats.orders_tried += allocation.orders_tried;
  stats.rematerialised += allocation.rematerialised;
  if (allocation.status != alloc::AllocStatus::kAllocated) return std::nullopt;
  if (allocation.rewritten) graph = std::move(*allocation.rewritten);
  allocation.rewritten.reset();
  stats.join_calls = graph.callCount();
  result.costs = measure(isa, *units, graph, allocation);
  result.program = buildProgram(isa, *units, graph, allocation, layout, kernel.name());
  result.graph = std::move(graph);
  result.allocation = std::move(allocation);
  stats.best_candidate = 1;
  stats.total_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace tacit::backend
