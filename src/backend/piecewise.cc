// Piecewise compilation, the join and the compile (piecewise_plan.cc: the plan).
#include "backend/piecewise.h"

#include <algorithm>
#include <map>
#include <set>

#include "alloc/allocator.h"
#include "backend/emit.h"
#include "isel/kernel.h"
#include "support/diagnostic.h"

namespace tacit::backend {
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
  whole.addWork(part);
  const isel::SaturationStats& p = part.saturation;
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

std::optional<Parts> compileParts(const isel::Target& target, const PiecewisePlan& plan,
                                  const CompileOptions& options, Deadline deadline) {
  // The parts share the kernel's deadline: each gets what is left of it.
  Parts parts;
  try {
    if (plan.rest) {
      if (deadline.passed()) return std::nullopt;
      parts.rest = compileKernel(target, *plan.rest, options, {}, deadline);
    }
    for (const SplitResult& s : plan.splits) {
      if (deadline.passed()) return std::nullopt;
      KernelHooks hooks;
      hooks.costs = joinedCosts(target.isa(), target.units(), s);
      parts.pieces.push_back(compileKernel(target, *s.kernel, options, hooks, deadline));
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

std::optional<CompileResult> compilePiecewise(const isel::Target& target,
                                              const hlo::HloModule& kernel,
                                              const CompileOptions& options, Deadline deadline) {
  const Clock::time_point start = Clock::now();
  std::optional<PiecewisePlan> plan = planPiecewise(kernel, target.needs());
  if (!plan) return std::nullopt;
  std::optional<Parts> parts = compileParts(target, *plan, options, deadline);
  if (!parts) return std::nullopt;

  const taidl::Isa& isa = target.isa();
  const isel::UnitSet& units = target.units();
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
  isel::ImportedKernel layout =
      isel::hbmLayout(kernel, isel::alignedImport({}, target.needs().hbm_alignment));
  isel::PiiGraph graph =
      joinPieces(*plan, units, layout, parts->rest ? &parts->rest->graph : nullptr, graphs);

  const double before = stats.alloc_seconds;
  alloc::AllocResult allocation =
      allocateCandidate(target, graph, layout, options, result.model, deadline, stats);
  stats.join_alloc_seconds = stats.alloc_seconds - before;
  if (allocation.status != alloc::AllocStatus::kAllocated) return std::nullopt;
  stats.join_calls = graph.callCount();
  result.costs = measure(isa, units, graph, allocation);
  result.program = buildProgram(isa, units, graph, allocation, layout, kernel.name(),
                                target.needs().hbm_alignment);
  result.graph = std::move(graph);
  result.allocation = std::move(allocation);
  stats.best_candidate = 1;
  stats.total_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace tacit::backend
