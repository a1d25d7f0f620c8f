#include "isel/extract.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "isel/storage.h"
#include "taidl/ops.h"

namespace tacit::isel {

using hlo::HloOpcode;

CandidateExtractor::CandidateExtractor(const egraph::EGraph& g, const IrLanguage& ir,
                                       const ShapeAnalysis& shapes, const taidl::Isa& isa,
                                       const UnitSet& units, ClassId root, ExtractOptions options,
                                       std::vector<int32_t> resident_results)
    : g_(g),
      ir_(ir),
      shapes_(shapes),
      isa_(isa),
      units_(units),
      results_context_(static_cast<uint32_t>(isa.buffers.size())),
      written_context_(results_context_ + 1),
      resident_results_(std::move(resident_results)),
      root_(root) {
  egraph::EnumOptions opts;
  opts.max_size = options.max_size;
  opts.max_steps = options.max_steps;
  opts.root_context = results_context_;
  opts.revisit =
      options.spills ? egraph::RevisitPolicy::kAfterSameSize : egraph::RevisitPolicy::kForbid;
  opts.allowed = [this](const egraph::EGraph&, NodeId n, egraph::Context ctx) {
    return allowed(n, ctx);
  };
  opts.child_context = [this](const egraph::EGraph&, NodeId n, egraph::Context ctx, size_t i) {
    return childBuffer(n, ctx, i);
  };
  enumerator_ = std::make_unique<egraph::Enumerator>(g, root, std::move(opts));
}

bool CandidateExtractor::conformsTo(const hlo::Shape& s, uint32_t buffer) const {
  const taidl::Buffer& b = isa_.buffers[buffer];
  if (b.is_hbm) return s.elementType() == hlo::PrimitiveType::kU8 && s.rank() == 1;
  if (s.elementType() != b.dtype || s.rank() != b.rank()) return false;
  for (size_t i = 0; i < b.unit.size(); ++i) {
    if (s.dim(static_cast<int64_t>(b.access.size() + i)) != b.unit[i]) return false;
  }
  return true;
}

bool CandidateExtractor::allowed(NodeId n, uint32_t ctx) const {
  egraph::ENode e = g_.node(n);
  if (ctx == results_context_) return e.op() == ir_.resultsOp();
  if (e.op() == ir_.resultsOp()) return false;
  if (ctx == written_context_) {
    // A kernel result must be written into its own HBM region by instructions: a store, or a
    // concatenation of stored parts. An input, a constant or a slice of another value lives
    // elsewhere, and naming it would leave the result region unwritten.
    if (e.op() == ir_.piiOp()) return ir_.piiDesc(e.attr()).buffer == 0;
    if (e.op() == ir_.overlayOp()) return true;  // block writes into the region
    return ir_.opcodeOf(e.op()) == HloOpcode::kConcatenate && allowed(n, 0);
  }
  if (e.op() == ir_.overlayOp()) return isa_.buffers[ctx].is_hbm;
  if (e.op() == ir_.piiOp()) return ir_.piiDesc(e.attr()).buffer == static_cast<int>(ctx);
  if (e.op() == ir_.inputOp()) return ctx == static_cast<uint32_t>(ir_.inputDesc(e.attr()).buffer);
  if (e.op() == ir_.undefOp()) return true;  // whatever a region holds, in any buffer
  auto opcode = ir_.opcodeOf(e.op());
  if (!opcode) return false;
  if (*opcode == HloOpcode::kConstant) return ctx == 0;
  const OpDesc& d = ir_.opDesc(e.attr());
  const taidl::Buffer& b = isa_.buffers[ctx];
  if (*opcode == HloOpcode::kSlice) {
    const hlo::Shape& operand = shapes_.data(e.child(0));
    if (!conformsTo(operand, ctx)) return false;
    for (size_t i = 0; i < d.attrs.slice->size(); ++i) {
      const hlo::SliceDim& s = (*d.attrs.slice)[i];
      bool access = i < b.access.size();
      if (s.stride != 1) return false;
      if (!access && (s.start != 0 || s.limit != operand.dim(static_cast<int64_t>(i))))
        return false;
    }
    return true;
  }
  if (*opcode == HloOpcode::kConcatenate) {
    int64_t dim = (*d.attrs.dimensions)[0];
    if (dim >= static_cast<int64_t>(b.access.size())) return false;
    for (ClassId c : e.children()) {
      if (!conformsTo(shapes_.data(c), ctx)) return false;
    }
    return true;
  }
  return false;
}

uint32_t CandidateExtractor::childBuffer(NodeId n, uint32_t ctx, size_t child) const {
  egraph::ENode e = g_.node(n);
  if (e.op() == ir_.resultsOp()) {
    if (child < resident_results_.size() && resident_results_[child] != 0)
      return static_cast<uint32_t>(resident_results_[child]);
    return written_context_;
  }
  if (e.op() == ir_.piiOp()) {
    const PiiDesc& p = ir_.piiDesc(e.attr());
    const Unit& u = units_.units[static_cast<size_t>(p.unit)];
    const taidl::SymCase& c = u.semantics->cases[static_cast<size_t>(p.case_index)];
    return static_cast<uint32_t>(c.inputs[child].buffer);
  }
  return ctx;  // views stay in their buffer
}

// An in-place operand is destroyed by its consumer, so a value several calls consume in place (a
// zero accumulator for several tiles: GVN made it one tilezero) can never be allocated. When its
// producer is a call without operands, each in-place consumer gets its own copy of that call
// (rematerialisation: it costs one instruction and no data). Producers with operands are left
// alone: the allocator reports such graphs as infeasible.
void CandidateExtractor::rematerializeInPlaceOperands(
    PiiGraph& graph, const PiiDesc& call, std::vector<int32_t>& operands,
    std::vector<std::pair<NodeId, uint32_t>>* origins) const {
  const Unit& u = units_.units[static_cast<size_t>(call.unit)];
  const taidl::SymCase& c = u.semantics->cases[static_cast<size_t>(call.case_index)];
  for (size_t k = 0; k < operands.size() && k < c.inputs.size(); ++k) {
    if (operands[k] < 0 || !readsInPlace(c, k)) continue;
    const PiiValue v = graph.values[static_cast<size_t>(operands[k])];
    const PiiNode& producer = graph.nodes[static_cast<size_t>(v.producer)];
    // Undefined regions too: the greedy graph shares one per (class, buffer), but each region a
    // store rewrites in place is its own.
    bool source = producer.kind == PiiKind::kUndef ||
                  (producer.kind == PiiKind::kCall && producer.operands.empty());
    if (!source) continue;
    PiiNode copy = producer;
    std::fill(copy.outputs.begin(), copy.outputs.end(), -1);
    int32_t index = static_cast<int32_t>(graph.nodes.size());
    copy.outputs[static_cast<size_t>(v.output)] = static_cast<int32_t>(graph.values.size());
    graph.values.push_back({index, v.output, v.buffer, v.shape});
    operands[k] = copy.outputs[static_cast<size_t>(v.output)];
    graph.nodes.push_back(std::move(copy));
    if (origins) origins->push_back((*origins)[static_cast<size_t>(v.producer)]);
  }
}

// Removes calls without operands and undefined regions whose values nobody uses (the originals
// rematerialisation replaced), renumbering nodes and values.
void CandidateExtractor::dropDeadSources(PiiGraph& graph,
                                         std::vector<std::pair<NodeId, uint32_t>>* origins) const {
  std::vector<int32_t> uses(graph.values.size(), 0);
  for (const PiiNode& n : graph.nodes) {
    for (int32_t v : n.operands)
      ++uses[static_cast<size_t>(v)];
  }
  for (int32_t v : graph.results)
    ++uses[static_cast<size_t>(v)];
  std::vector<int32_t> node_map(graph.nodes.size(), -1), value_map(graph.values.size(), -1);
  PiiGraph out;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const PiiNode& n = graph.nodes[i];
    bool used = (n.kind != PiiKind::kCall && n.kind != PiiKind::kUndef) || !n.operands.empty();
    for (int32_t v : n.outputs)
      used |= v >= 0 && uses[static_cast<size_t>(v)] > 0;
    if (!used) continue;
    node_map[i] = static_cast<int32_t>(out.nodes.size());
    out.nodes.push_back(n);
    if (origins) (*origins)[static_cast<size_t>(node_map[i])] = (*origins)[i];
  }
  if (out.nodes.size() == graph.nodes.size()) return;
  for (size_t v = 0; v < graph.values.size(); ++v) {
    PiiValue value = graph.values[v];
    if (node_map[static_cast<size_t>(value.producer)] < 0) continue;
    value.producer = node_map[static_cast<size_t>(value.producer)];
    value_map[v] = static_cast<int32_t>(out.values.size());
    out.values.push_back(std::move(value));
  }
  for (PiiNode& n : out.nodes) {
    for (int32_t& v : n.operands)
      v = value_map[static_cast<size_t>(v)];
    for (int32_t& v : n.outputs)
      v = v < 0 ? -1 : value_map[static_cast<size_t>(v)];
  }
  for (int32_t v : graph.results)
    out.results.push_back(value_map[static_cast<size_t>(v)]);
  if (origins) origins->resize(out.nodes.size());
  graph = std::move(out);
}

// Every result is written into its own HBM region, so two results may not be one value (the same
// kernel value twice in the result tuple, or two values the e-graph proved equal): the later ones
// get copies of the calls (and concatenations) that write the first.
void CandidateExtractor::separateResults(PiiGraph& graph,
                                         std::vector<std::pair<NodeId, uint32_t>>* origins) const {
  std::set<int32_t> seen;
  for (int32_t& r : graph.results) {
    if (!seen.insert(r).second) r = copyWriter(graph, r, origins);
  }
}

int32_t CandidateExtractor::copyWriter(PiiGraph& graph, int32_t value,
                                       std::vector<std::pair<NodeId, uint32_t>>* origins) const {
  const PiiValue v = graph.values[static_cast<size_t>(value)];
  PiiNode copy = graph.nodes[static_cast<size_t>(v.producer)];
  if (copy.kind == PiiKind::kConcatView || copy.kind == PiiKind::kOverlayView) {
    for (int32_t& part : copy.operands)
      part = copyWriter(graph, part, origins);
  }
  std::fill(copy.outputs.begin(), copy.outputs.end(), -1);
  int32_t index = static_cast<int32_t>(graph.nodes.size());
  int32_t fresh = static_cast<int32_t>(graph.values.size());
  copy.outputs[static_cast<size_t>(v.output)] = fresh;
  graph.values.push_back({index, v.output, v.buffer, v.shape});
  graph.nodes.push_back(std::move(copy));
  if (origins) origins->push_back((*origins)[static_cast<size_t>(v.producer)]);
  return fresh;
}

PiiGraph CandidateExtractor::toGraph(const egraph::Term& t,
                                     std::vector<std::pair<NodeId, uint32_t>>* origins) const {
  PiiGraph graph;
  // GVN: equal nodes over equal operands are one node. A call is identified by unit, case, α and
  // operands (not by which output the term reads: all outputs of one call share the node); views
  // and leaves by their attribute and buffer.
  using Key =
      std::tuple<int32_t, int32_t, std::vector<int64_t>, uint32_t, uint32_t, std::vector<int32_t>>;
  std::map<Key, int32_t> call_of;
  std::vector<int32_t> value_of(t.size(), -1);
  for (size_t i = 0; i < t.size(); ++i) {
    const egraph::TermNode& tn = t[i];
    std::vector<int32_t> operands;
    for (uint32_t child : t.children(i))
      operands.push_back(value_of[child]);
    if (tn.op == ir_.resultsOp()) {
      graph.results = operands;
      separateResults(graph, origins);
      continue;
    }
    bool is_pii = tn.op == ir_.piiOp();
    int output = 0;
    PiiDesc call_desc;
    Key key;
    if (is_pii) {
      call_desc = ir_.piiDesc(tn.attr);
      output = call_desc.output;
      rematerializeInPlaceOperands(graph, call_desc, operands, origins);
      key = Key{call_desc.unit, call_desc.case_index, call_desc.alpha, 0, 0, operands};
    } else if (tn.op == ir_.undefOp()) {
      // Every undefined region is its own value: an overwriting store works in place on it.
      key = Key{-2, static_cast<int32_t>(i), {}, tn.attr.value, tn.context, operands};
    } else if (tn.op == ir_.overlayOp()) {
      // The writes of a region are its own: another overlay of the same calls would place them
      // twice.
      key = Key{-3, 0, {}, tn.attr.value, 0, operands};
    } else {
      key = Key{-1, 0, {}, tn.attr.value, tn.context, operands};
    }
    auto found = call_of.find(key);
    int32_t node_index;
    if (found != call_of.end()) {
      node_index = found->second;
    } else {
      node_index = static_cast<int32_t>(graph.nodes.size());
      PiiNode node;
      node.operands = operands;
      if (is_pii) {
        node.kind = PiiKind::kCall;
        node.unit = call_desc.unit;
        node.case_index = call_desc.case_index;
        node.alpha = call_desc.alpha;
        const Unit& u = units_.units[static_cast<size_t>(node.unit)];
        node.outputs.assign(u.semantics->cases[static_cast<size_t>(node.case_index)].outputs.size(),
                            -1);
      } else if (tn.op == ir_.inputOp()) {
        node.kind = PiiKind::kInput;
        node.parameter = ir_.inputDesc(tn.attr).parameter;
        node.outputs.assign(1, -1);
      } else if (tn.op == ir_.undefOp()) {
        node.kind = PiiKind::kUndef;
        node.outputs.assign(1, -1);
      } else if (tn.op == ir_.overlayOp()) {
        node.kind = PiiKind::kOverlayView;
        node.outputs.assign(1, -1);
        for (const OverlayPart& part : ir_.overlayDesc(tn.attr).parts)
          node.part_offsets.push_back(part.at);
      } else {
        const OpDesc& d = ir_.opDesc(tn.attr);
        node.outputs.assign(1, -1);
        if (d.opcode == HloOpcode::kConstant) {
          node.kind = PiiKind::kConstant;
          node.literal = d.literal;
        } else if (d.opcode == HloOpcode::kSlice) {
          node.kind = PiiKind::kSliceView;
          const taidl::Buffer& b = isa_.buffers[bufferOf(tn.context)];
          for (size_t k = 0; k < b.access.size(); ++k) {
            node.view_start.push_back((*d.attrs.slice)[k].start);
            node.view_limit.push_back((*d.attrs.slice)[k].limit);
          }
        } else {
          node.kind = PiiKind::kConcatView;
          node.concat_dim = static_cast<int32_t>((*d.attrs.dimensions)[0]);
        }
      }
      graph.nodes.push_back(std::move(node));
      call_of.emplace(key, node_index);
      if (origins) origins->emplace_back(tn.enode, tn.context);
    }
    PiiNode& node = graph.nodes[static_cast<size_t>(node_index)];
    int32_t& slot = node.outputs[static_cast<size_t>(output)];
    if (slot < 0) {
      slot = static_cast<int32_t>(graph.values.size());
      graph.values.push_back({node_index, output, static_cast<int32_t>(bufferOf(tn.context)),
                              shapes_.data(tn.eclass)});
    }
    value_of[i] = slot;
  }
  dropDeadSources(graph, origins);
  // Calls also produce the outputs nobody read (clobbers): give them values.
  for (size_t ni = 0; ni < graph.nodes.size(); ++ni) {
    PiiNode& node = graph.nodes[ni];
    if (node.kind != PiiKind::kCall) continue;
    const Unit& u = units_.units[static_cast<size_t>(node.unit)];
    const taidl::SymCase& c = u.semantics->cases[static_cast<size_t>(node.case_index)];
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (node.outputs[o] >= 0) continue;
      std::vector<int64_t> attrs(node.alpha);
      attrs.resize(static_cast<size_t>(u.num_attrs), 0);
      taidl::EvalEnv env{attrs, {}, {}};
      hlo::Shape shape = taidl::evalType(c.outputs[o].type, env);
      node.outputs[o] = static_cast<int32_t>(graph.values.size());
      graph.values.push_back(
          {static_cast<int32_t>(ni), static_cast<int32_t>(o), c.outputs[o].buffer, shape});
    }
  }
  return graph;
}

std::optional<PiiGraph> CandidateExtractor::greedy() const {
  // Views that cannot share storage (a concatenation of non-adjacent slices of one value) are
  // only found on the whole graph: forbid the offending view and extract again.
  std::set<std::pair<uint32_t, uint32_t>> forbidden;
  for (int attempt = 0; attempt < 64; ++attempt) {
    std::vector<std::pair<NodeId, uint32_t>> origins;
    std::optional<PiiGraph> graph = greedyAvoiding(forbidden, &origins);
    if (!graph) return std::nullopt;
    Storage storage = buildStorage(isa_, *graph);
    if (storage.conflict.empty()) return graph;
    auto [node, ctx] = origins[static_cast<size_t>(storage.conflict_node)];
    forbidden.emplace(node.value, ctx);
  }
  return std::nullopt;
}

std::optional<PiiGraph> CandidateExtractor::greedyAvoiding(
    const std::set<std::pair<uint32_t, uint32_t>>& forbidden,
    std::vector<std::pair<NodeId, uint32_t>>* origins) const {
  const size_t contexts = written_context_ + 1;
  size_t classes = 0;
  for (ClassId c : g_.classes())
    classes = std::max<size_t>(classes, c.value + 1);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> cost(classes * contexts, kInf);
  std::vector<uint32_t> best(classes * contexts, UINT32_MAX);
  auto at = [&](ClassId c, uint32_t ctx) { return g_.find(c).value * contexts + ctx; };
  // Bellman-Ford: relax every (class, context) until no cost decreases. Strict decreases only, so
  // the chosen graph is acyclic.
  bool changed = true;
  for (size_t round = 0; changed && round < classes * contexts + 1; ++round) {
    changed = false;
    for (ClassId c : g_.classes()) {
      for (NodeId n : g_.nodes(c)) {
        egraph::ENode e = g_.node(n);
        for (uint32_t ctx = 0; ctx < contexts; ++ctx) {
          if (!allowed(n, ctx) || forbidden.count({n.value, ctx})) continue;
          // An instruction costs 1; a view (slice, concatenation, movement the view pass proved
          // free) a little, so that among graphs of equal size the one with fewer views wins
          // (each view is a value the allocator must place).
          double total = e.op() == ir_.piiOp() ? 1.0 : e.arity() == 0 ? 0.0 : 1.0 / 1024;
          for (size_t i = 0; i < e.arity() && total < kInf; ++i)
            total += cost[at(e.child(i), childBuffer(n, ctx, i))];
          size_t slot = at(c, ctx);
          if (total < cost[slot]) {
            cost[slot] = total;
            best[slot] = n.value;
            changed = true;
          }
        }
      }
    }
  }
  if (cost[at(root_, results_context_)] == kInf) return std::nullopt;
  // Build the chosen DAG as a term (children first), one node per (class, context).
  egraph::Term term;
  std::vector<uint32_t> built(classes * contexts, UINT32_MAX);
  std::function<uint32_t(ClassId, uint32_t)> build = [&](ClassId c, uint32_t ctx) -> uint32_t {
    size_t slot = at(c, ctx);
    if (built[slot] != UINT32_MAX) return built[slot];
    NodeId n(best[slot]);
    egraph::ENode e = g_.node(n);
    std::vector<uint32_t> kids;
    for (size_t i = 0; i < e.arity(); ++i)
      kids.push_back(build(e.child(i), childBuffer(n, ctx, i)));
    egraph::TermNode tn;
    tn.op = e.op();
    tn.attr = e.attr();
    tn.eclass = g_.find(c);
    tn.enode = n;
    tn.context = ctx;
    return built[slot] = term.add(tn, kids);
  };
  build(root_, results_context_);
  return toGraph(term, origins);
}

std::optional<PiiGraph> CandidateExtractor::next() {
  if (!greedy_done_) {
    greedy_done_ = true;
    if (std::optional<PiiGraph> g = greedy()) {
      seen_.insert(g->fingerprint());
      ++produced_;
      return g;
    }
  }
  egraph::Term t;
  while (enumerator_->next(t)) {
    PiiGraph graph = toGraph(t);
    if (!seen_.insert(graph.fingerprint()).second) continue;
    ++produced_;
    return graph;
  }
  return std::nullopt;
}

}  // namespace tacit::isel
