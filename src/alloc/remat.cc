#include "alloc/remat.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "taidl/expr.h"

namespace tacit::alloc {
namespace {

using isel::PiiGraph;
using isel::PiiKind;
using isel::PiiNode;
using isel::PiiValue;

int64_t product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

// Units live in each scratchpad at each program point 0..N (HBM: empty).
std::vector<std::vector<int64_t>> loads(const taidl::Isa& isa, const PiiGraph& g,
                                        const isel::Storage& s, const StoragePieces& pieces) {
  int64_t points = 0;
  for (const std::vector<StoragePiece>& root : pieces) {
    for (const StoragePiece& p : root)
      points = std::max(points, p.live.end + 1);
  }
  std::vector<std::vector<int64_t>> out(isa.buffers.size());
  for (size_t b = 0; b < isa.buffers.size(); ++b) {
    if (!isa.buffers[b].is_hbm) out[b].assign(static_cast<size_t>(points), 0);
  }
  for (const std::vector<StoragePiece>& root : pieces) {
    for (const StoragePiece& p : root) {
      std::vector<int64_t>& load =
          out[static_cast<size_t>(g.values[static_cast<size_t>(p.value)].buffer)];
      if (load.empty() || p.live.empty()) continue;
      int64_t area = product(s.extents[static_cast<size_t>(p.value)]);
      for (int64_t t = p.live.begin; t <= p.live.end; ++t)
        load[static_cast<size_t>(t)] += area;
    }
  }
  return out;
}

bool isAvailable(const PiiGraph& g, const isel::Storage& s, int32_t value) {
  int32_t p = g.values[static_cast<size_t>(s.root[static_cast<size_t>(value)])].producer;
  if (p < 0) return true;
  PiiKind k = g.nodes[static_cast<size_t>(p)].kind;
  // A resident input (on chip, kernel.h Residence) is consumed in place: never read twice.
  const bool resident = g.values[static_cast<size_t>(value)].buffer != 0;
  return (k == PiiKind::kInput && !resident) || k == PiiKind::kConstant;
}

// A storage group and the calls that read it.
struct Group {
  int32_t root = -1;
  std::vector<int32_t> producers;  // nodes producing members, ascending (topological)
  std::vector<int32_t> readers;    // calls reading members, ascending
};

// The group of `root` if it is recomputable (see remat.h).
std::optional<Group> recomputable(const PiiGraph& g, const isel::Storage& s, int32_t root) {
  Group group;
  group.root = root;
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (s.root[v] != root) continue;
    int32_t p = g.values[v].producer;
    if (p < 0) return std::nullopt;
    const PiiNode& n = g.nodes[static_cast<size_t>(p)];
    bool view = n.kind == PiiKind::kSliceView || n.kind == PiiKind::kConcatView;
    if (!view && !(n.kind == PiiKind::kCall && n.outputs.size() == 1)) return std::nullopt;
    for (int32_t o : n.operands) {
      if (s.root[static_cast<size_t>(o)] != root && !isAvailable(g, s, o)) return std::nullopt;
    }
    group.producers.push_back(p);
  }
  std::sort(group.producers.begin(), group.producers.end());
  group.producers.erase(std::unique(group.producers.begin(), group.producers.end()),
                        group.producers.end());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const PiiNode& node = g.nodes[n];
    if (node.kind != PiiKind::kCall) continue;
    if (std::any_of(node.operands.begin(), node.operands.end(),
                    [&](int32_t o) { return s.root[static_cast<size_t>(o)] == root; }))
      group.readers.push_back(static_cast<int32_t>(n));
  }
  for (int32_t r : g.results) {
    if (s.root[static_cast<size_t>(r)] == root) return std::nullopt;  // a result stays put
  }
  return group;
}

// The part of the group a call reads: [lo, hi) per access dimension, relative to the root.
struct Region {
  std::vector<int64_t> lo, hi;
  bool operator<(const Region& o) const { return std::tie(lo, hi) < std::tie(o.lo, o.hi); }
  bool operator==(const Region& o) const { return lo == o.lo && hi == o.hi; }
};

Region regionRead(const PiiGraph& g, const isel::Storage& s, int32_t root, int32_t reader) {
  Region r;
  for (int32_t o : g.nodes[static_cast<size_t>(reader)].operands) {
    if (s.root[static_cast<size_t>(o)] != root) continue;
    const std::vector<int64_t>& off = s.offset[static_cast<size_t>(o)];
    const std::vector<int64_t>& ext = s.extents[static_cast<size_t>(o)];
    if (r.lo.empty()) {
      r.lo = off;
      r.hi.resize(off.size());
      for (size_t k = 0; k < off.size(); ++k)
        r.hi[k] = off[k] + ext[k];
      continue;
    }
    for (size_t k = 0; k < off.size(); ++k) {
      r.lo[k] = std::min(r.lo[k], off[k]);
      r.hi[k] = std::max(r.hi[k], off[k] + ext[k]);
    }
  }
  return r;
}

// Whether a case computes its only output as its only input's bytes (reshapes and
// bitcast-converts only: the flat little-endian byte sequence is unchanged), read from HBM.
bool bytePreserving(const taidl::Isa& isa, const taidl::SymCase& c) {
  if (c.inputs.size() != 1 || c.outputs.size() != 1) return false;
  if (!isa.buffers[static_cast<size_t>(c.inputs[0].buffer)].is_hbm) return false;
  int32_t op = c.outputs[0].value;
  while (op >= 0) {
    const taidl::SymOp& o = c.ops[static_cast<size_t>(op)];
    if (o.opcode == hlo::HloOpcode::kParameter) return o.input == 0;
    if (o.opcode != hlo::HloOpcode::kReshape && o.opcode != hlo::HloOpcode::kBitcastConvert)
      return false;
    if (o.operands.size() != 1) return false;
    op = o.operands[0];
  }
  return false;
}

bool holds(const std::vector<taidl::Expr>& conditions, const taidl::EvalEnv& env) {
  for (const taidl::Expr& e : conditions) {
    if (evalExpr(e, env) == 0) return false;
  }
  return true;
}

// α for `call` whose output has `rows` units along access dimension 0 (the others unchanged) and
// whose input has as many bytes: one α attribute changed, its smallest fitting value within its
// range (searched up to 2^16 values), the same case. nullopt if none.
std::optional<std::vector<int64_t>> narrowedAlpha(const isel::Unit& unit, const taidl::SymCase& c,
                                                  const PiiNode& call,
                                                  const std::vector<int64_t>& out_extents,
                                                  int64_t in_bytes) {
  std::vector<int64_t> attrs = call.alpha;
  attrs.resize(static_cast<size_t>(unit.num_attrs), 0);
  auto fits = [&](const std::vector<int64_t>& a) {
    taidl::EvalEnv env{a, {}, {}};
    try {
      if (!holds(c.path, env)) return false;
      for (size_t k = 0; k < out_extents.size(); ++k) {
        if (evalExpr(c.outputs[0].extents[k], env) != out_extents[k]) return false;
      }
      return evalExpr(c.inputs[0].extents[0], env) == in_bytes;
    } catch (const taidl::ExprError&) {
      return false;
    }
  };
  for (size_t j = 0; j < static_cast<size_t>(unit.num_alpha); ++j) {
    taidl::Interval range = unit.ranges != nullptr && j < unit.ranges->size()
                                ? (*unit.ranges)[j].range
                                : taidl::Interval::all();
    int64_t lo = range.hasLo() ? range.lo : 0;
    int64_t hi = range.hasHi() ? std::min(range.hi, lo + (int64_t{1} << 16)) : lo + (1 << 16);
    std::vector<int64_t> a = attrs;
    for (int64_t v = lo; v <= hi; ++v) {
      a[j] = v;
      if (fits(a)) {
        a.resize(call.alpha.size());
        return a;
      }
    }
  }
  return std::nullopt;
}

class Surgery {
 public:
  Surgery(const taidl::Isa& isa, const isel::UnitSet& units, const PiiGraph& g,
          const isel::Storage& s, const Group& group)
      : isa_(isa), units_(units), s_(s), group_(group), g_(g) {}

  // Makes `readers` read a copy of the group (narrowed to `region` where possible).
  void copyFor(const std::vector<int32_t>& readers, const Region& region) {
    std::map<int32_t, int32_t> copy;  // member -> the value the readers read instead
    if (!narrowedCopy(readers, region, copy)) plainCopy(copy);
    for (int32_t r : readers) {
      for (int32_t& o : g_.nodes[static_cast<size_t>(r)].operands) {
        if (auto it = copy.find(o); it != copy.end()) o = it->second;
      }
    }
  }

  PiiGraph finish();

 private:
  int32_t addNode(PiiNode node, const std::vector<PiiValue>& outputs) {
    int32_t id = static_cast<int32_t>(g_.nodes.size());
    node.outputs.clear();
    for (PiiValue v : outputs) {
      v.producer = id;
      node.outputs.push_back(static_cast<int32_t>(g_.values.size()));
      g_.values.push_back(std::move(v));
    }
    g_.nodes.push_back(std::move(node));
    return id;
  }

  void plainCopy(std::map<int32_t, int32_t>& copy) {
    for (int32_t p : group_.producers) {
      PiiNode node = g_.nodes[static_cast<size_t>(p)];
      std::vector<PiiValue> outs;
      for (int32_t o : node.outputs)
        outs.push_back(g_.values[static_cast<size_t>(o)]);
      std::vector<int32_t> old_outputs = node.outputs;
      for (int32_t& o : node.operands) {
        if (auto it = copy.find(o); it != copy.end()) o = it->second;
      }
      int32_t id = addNode(std::move(node), outs);
      for (size_t i = 0; i < old_outputs.size(); ++i)
        copy[old_outputs[i]] = g_.nodes[static_cast<size_t>(id)].outputs[i];
    }
  }

  // A smaller call of the group's one byte-preserving producer computing only `region`.
  bool narrowedCopy(const std::vector<int32_t>& readers, const Region& region,
                    std::map<int32_t, int32_t>& copy) {
    // Copies: adding nodes and values below reallocates the graph's vectors.
    const PiiValue root = g_.values[static_cast<size_t>(group_.root)];
    const PiiNode call = g_.nodes[static_cast<size_t>(root.producer)];
    const std::vector<int64_t>& ext = s_.extents[static_cast<size_t>(group_.root)];
    if (call.kind != PiiKind::kCall || region.lo.empty()) return false;
    for (size_t k = 1; k < ext.size(); ++k) {
      if (region.lo[k] != 0 || region.hi[k] != ext[k]) return false;  // rows only
    }
    int64_t rows = region.hi[0] - region.lo[0];
    if (rows == ext[0] || root.shape.rank() == 0 || root.shape.dim(0) != ext[0]) return false;
    const isel::Unit& unit = units_.units[static_cast<size_t>(call.unit)];
    const taidl::SymCase& c = unit.semantics->cases[static_cast<size_t>(call.case_index)];
    const PiiValue in = g_.values[static_cast<size_t>(call.operands[0])];
    if (!bytePreserving(isa_, c) || in.shape.rank() != 1 || in.shape.byteSize() != in.shape.dim(0))
      return false;
    int64_t row_bytes = root.shape.byteSize() / ext[0];
    std::vector<int64_t> out_extents = ext;
    out_extents[0] = rows;
    auto alpha = narrowedAlpha(unit, c, call, out_extents, rows * row_bytes);
    if (!alpha) return false;
    // The HBM bytes of the rows, then the smaller call.
    PiiNode slice;
    slice.kind = PiiKind::kSliceView;
    slice.operands = {call.operands[0]};
    slice.view_start = {region.lo[0] * row_bytes};
    slice.view_limit = {region.hi[0] * row_bytes};
    PiiValue bytes = in;
    bytes.shape = hlo::Shape(in.shape.elementType(), {rows * row_bytes});
    int32_t slice_node = addNode(std::move(slice), {bytes});
    PiiNode narrow = call;
    narrow.alpha = *alpha;
    narrow.operands = {g_.nodes[static_cast<size_t>(slice_node)].outputs[0]};
    PiiValue out = root;
    std::vector<int64_t> dims = root.shape.dims();
    dims[0] = rows;
    out.shape = hlo::Shape(root.shape.elementType(), dims);
    int32_t narrow_node = addNode(std::move(narrow), {out});
    int32_t narrowed = g_.nodes[static_cast<size_t>(narrow_node)].outputs[0];
    // Each member the readers read becomes the same part of the smaller value.
    for (int32_t r : readers) {
      for (int32_t o : g_.nodes[static_cast<size_t>(r)].operands) {
        if (s_.root[static_cast<size_t>(o)] != group_.root || copy.count(o)) continue;
        copy[o] = partOf(narrowed, o, region);
      }
    }
    return true;
  }

  int32_t partOf(int32_t narrowed, int32_t member, const Region& region) {
    const std::vector<int64_t>& off = s_.offset[static_cast<size_t>(member)];
    const std::vector<int64_t>& ext = s_.extents[static_cast<size_t>(member)];
    PiiNode view;
    view.kind = PiiKind::kSliceView;
    view.operands = {narrowed};
    bool whole = true;
    for (size_t k = 0; k < off.size(); ++k) {
      view.view_start.push_back(off[k] - region.lo[k]);
      view.view_limit.push_back(off[k] - region.lo[k] + ext[k]);
      whole = whole && view.view_start[k] == 0 && ext[k] == region.hi[k] - region.lo[k];
    }
    if (whole) return narrowed;
    int32_t id = addNode(std::move(view), {g_.values[static_cast<size_t>(member)]});
    return g_.nodes[static_cast<size_t>(id)].outputs[0];
  }

  const taidl::Isa& isa_;
  const isel::UnitSet& units_;
  const isel::Storage& s_;
  const Group& group_;
  PiiGraph g_;
};

// Removes calls and views nobody reads (transitively) and renumbers nodes and values so that
// operands come before their readers again (surgery appends copies after the calls reading them).
PiiGraph compact(const PiiGraph& g) {
  std::vector<int32_t> readers(g.values.size(), 0);
  for (const PiiNode& n : g.nodes) {
    for (int32_t o : n.operands)
      ++readers[static_cast<size_t>(o)];
  }
  for (int32_t r : g.results)
    ++readers[static_cast<size_t>(r)];
  std::vector<bool> keep(g.nodes.size(), true);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = g.nodes.size(); n-- > 0;) {
      const PiiNode& node = g.nodes[n];
      bool removable = node.kind == PiiKind::kCall || node.kind == PiiKind::kSliceView ||
                       node.kind == PiiKind::kConcatView || node.kind == PiiKind::kOverlayView;
      if (!keep[n] || !removable) continue;
      if (std::any_of(node.outputs.begin(), node.outputs.end(),
                      [&](int32_t o) { return readers[static_cast<size_t>(o)] > 0; }))
        continue;
      keep[n] = false;
      changed = true;
      for (int32_t o : node.operands)
        --readers[static_cast<size_t>(o)];
    }
  }
  // Depth-first post-order from the nodes in their current order: operands first, stable.
  std::vector<int32_t> order;
  std::vector<uint8_t> state(g.nodes.size(), 0);
  std::vector<std::pair<int32_t, size_t>> stack;
  for (size_t start = 0; start < g.nodes.size(); ++start) {
    if (!keep[start] || state[start] != 0) continue;
    stack.emplace_back(static_cast<int32_t>(start), 0);
    state[start] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const PiiNode& n = g.nodes[static_cast<size_t>(node)];
      if (next < n.operands.size()) {
        int32_t p = g.values[static_cast<size_t>(n.operands[next++])].producer;
        if (p >= 0 && state[static_cast<size_t>(p)] == 0) {
          state[static_cast<size_t>(p)] = 1;
          stack.emplace_back(p, 0);
        }
        continue;
      }
      order.push_back(node);
      stack.pop_back();
    }
  }
  PiiGraph out;
  std::vector<int32_t> value_map(g.values.size(), -1);
  for (int32_t n : order) {
    PiiNode node = g.nodes[static_cast<size_t>(n)];
    for (int32_t& o : node.operands)
      o = value_map[static_cast<size_t>(o)];
    for (int32_t& o : node.outputs) {
      PiiValue v = g.values[static_cast<size_t>(o)];
      v.producer = static_cast<int32_t>(out.nodes.size());
      value_map[static_cast<size_t>(o)] = static_cast<int32_t>(out.values.size());
      o = static_cast<int32_t>(out.values.size());
      out.values.push_back(std::move(v));
    }
    out.nodes.push_back(std::move(node));
  }
  for (int32_t r : g.results)
    out.results.push_back(value_map[static_cast<size_t>(r)]);
  return out;
}

PiiGraph Surgery::finish() {
  return compact(g_);
}

std::optional<Peak> peakWhere(const taidl::Isa& isa, const PiiGraph& g, const isel::Storage& s,
                              const StoragePieces& pieces, bool first_overflow) {
  std::vector<std::vector<int64_t>> load = loads(isa, g, s, pieces);
  std::optional<Peak> best;
  double best_ratio = 0;
  for (size_t b = 0; b < load.size(); ++b) {
    int64_t capacity = product(isa.buffers[b].access);
    for (size_t t = 0; t < load[b].size(); ++t) {
      int64_t l = load[b][t];
      double ratio = static_cast<double>(l) / static_cast<double>(std::max<int64_t>(capacity, 1));
      bool wanted = first_overflow
                        ? l > capacity && (!best || static_cast<int64_t>(t) < best->point)
                        : l > 0 && ratio > best_ratio;
      if (!wanted) continue;
      best = Peak{static_cast<int32_t>(b), static_cast<int64_t>(t), l, capacity};
      best_ratio = ratio;
      if (first_overflow) break;
    }
  }
  return best;
}

}  // namespace

std::string Peak::describe(const taidl::Isa& isa) const {
  return isa.buffers[static_cast<size_t>(buffer)].name.text + " holds " + std::to_string(capacity) +
         " units but " + std::to_string(load) + " are live at instruction " + std::to_string(point);
}

std::optional<Peak> firstOverflow(const taidl::Isa& isa, const PiiGraph& graph,
                                  const isel::Storage& storage, const StoragePieces& pieces) {
  return peakWhere(isa, graph, storage, pieces, true);
}

std::optional<Peak> highestLoad(const taidl::Isa& isa, const PiiGraph& graph,
                                const isel::Storage& storage, const StoragePieces& pieces) {
  return peakWhere(isa, graph, storage, pieces, false);
}

std::optional<PiiGraph> splitGroup(const taidl::Isa& isa, const isel::UnitSet& units,
                                   const PiiGraph& graph, const isel::Storage& storage,
                                   int32_t root, SplitKind kind) {
  std::optional<Group> group = recomputable(graph, storage, root);
  if (!group || group->readers.empty()) return std::nullopt;
  // Readers by the region they read (in the order of their first reader).
  std::vector<std::pair<Region, std::vector<int32_t>>> parts;
  for (int32_t r : group->readers) {
    Region region = regionRead(graph, storage, root, r);
    auto it = std::find_if(parts.begin(), parts.end(), [&](const auto& p) {
      return kind == SplitKind::kByRegion && p.first == region;
    });
    if (it == parts.end()) {
      parts.push_back({region, {r}});
    } else {
      it->second.push_back(r);
    }
  }
  const std::vector<int64_t>& ext = storage.extents[static_cast<size_t>(root)];
  bool whole = parts.size() == 1 && parts[0].first.lo == std::vector<int64_t>(ext.size(), 0) &&
               parts[0].first.hi == ext;
  if (whole) return std::nullopt;  // one copy of all of it: nothing would change
  Surgery surgery(isa, units, graph, storage, *group);
  for (const auto& part : parts)
    surgery.copyFor(part.second, part.first);
  return surgery.finish();
}

int64_t graphCost(const PiiGraph& graph, const CallCost& cost) {
  int64_t total = 0;
  for (const PiiNode& n : graph.nodes) {
    if (n.kind == PiiKind::kCall) total += cost ? cost(graph, n) : 1;
  }
  return total;
}

std::optional<Rematerialisation> chooseRematerialisation(const taidl::Isa& isa,
                                                         const isel::UnitSet& units,
                                                         const PiiGraph& graph,
                                                         const isel::Storage& storage,
                                                         const std::vector<Interval>& live,
                                                         const Peak& peak, const CallCost& cost) {
  int64_t before = graphCost(graph, cost);
  std::optional<Rematerialisation> best;
  int64_t best_area = 0;
  for (int32_t r : storage.roots) {
    const Interval& i = live[static_cast<size_t>(r)];
    if (graph.values[static_cast<size_t>(r)].buffer != peak.buffer || i.empty() ||
        peak.point < i.begin || peak.point > i.end)
      continue;
    int64_t area = product(storage.extents[static_cast<size_t>(r)]);
    for (SplitKind kind : {SplitKind::kByRegion, SplitKind::kByReader}) {
      std::optional<PiiGraph> split = splitGroup(isa, units, graph, storage, r, kind);
      if (!split) continue;
      int64_t added = graphCost(*split, cost) - before;
      bool better =
          !best || added < best->added_cost || (added == best->added_cost && area > best_area);
      if (!better) continue;
      best = Rematerialisation{r, kind, added, std::move(*split)};
      best_area = area;
    }
  }
  return best;
}

}  // namespace tacit::alloc
