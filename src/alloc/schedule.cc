#include "alloc/schedule.h"

#include <algorithm>
#include <limits>
#include <map>

namespace tacit::alloc {
namespace {

using isel::PiiKind;
using isel::PiiNode;

// The calls a node depends on (through views).
void callProducers(const isel::PiiGraph& g, int32_t value, std::vector<int32_t>& out) {
  int32_t p = g.values[static_cast<size_t>(value)].producer;
  if (p < 0) return;
  const PiiNode& n = g.nodes[static_cast<size_t>(p)];
  if (n.kind == PiiKind::kCall) {
    out.push_back(p);
  } else {
    for (int32_t o : n.operands)
      callProducers(g, o, out);
  }
}

int64_t volume(const std::vector<int64_t>& extents) {
  int64_t v = 1;
  for (int64_t e : extents)
    v *= e;
  return v;
}

class SethiUllman {
 public:
  SethiUllman(const taidl::Isa& isa, const isel::PiiGraph& g, const isel::Storage& s)
      : isa_(isa), g_(g), s_(s), esun_(g.nodes.size()), visited_(g.nodes.size(), false) {}

  Order run() {
    for (int32_t r : g_.results)
      visitValue(r);
    return order_;
  }

 private:
  // Units of buffer d a value occupies on its own (views share their root's storage).
  double mem(int32_t value, size_t d) const {
    const isel::PiiValue& v = g_.values[static_cast<size_t>(value)];
    if (static_cast<size_t>(v.buffer) != d || s_.root[static_cast<size_t>(value)] != value)
      return 0;
    return static_cast<double>(volume(s_.extents[static_cast<size_t>(value)]));
  }

  const std::vector<double>& esun(int32_t node) {
    std::vector<double>& e = esun_[static_cast<size_t>(node)];
    if (!e.empty()) return e;
    const PiiNode& n = g_.nodes[static_cast<size_t>(node)];
    e.assign(isa_.buffers.size(), 0);
    for (size_t d = 1; d < e.size(); ++d) {
      double own = 0;
      for (int32_t o : n.outputs)
        own += mem(o, d);
      double best = n.operands.empty() ? 0 : std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < n.operands.size(); ++i)
        best = std::min(best, tau(n, i, d));
      e[d] = std::max(own, best);
    }
    return e;
  }

  double tau(const PiiNode& n, size_t i, size_t d) {
    double t = valueEsun(n.operands[i], d);
    for (size_t j = 0; j < n.operands.size(); ++j) {
      if (j != i) t += mem(n.operands[j], d);
    }
    return t;
  }

  double valueEsun(int32_t value, size_t d) {
    int32_t p = g_.values[static_cast<size_t>(value)].producer;
    return p < 0 ? 0 : esun(p)[d];
  }

  double requirement(const PiiNode& n, size_t i) {
    double r = 0;
    for (size_t d = 1; d < isa_.buffers.size(); ++d) {
      double cap = static_cast<double>(volume(isa_.buffers[d].access));
      if (cap > 0) r = std::max(r, tau(n, i, d) / cap);
    }
    return r;
  }

  void visitValue(int32_t value) {
    int32_t p = g_.values[static_cast<size_t>(value)].producer;
    if (p >= 0) visitNode(p);
  }

  void visitNode(int32_t node) {
    if (visited_[static_cast<size_t>(node)]) return;
    visited_[static_cast<size_t>(node)] = true;
    const PiiNode& n = g_.nodes[static_cast<size_t>(node)];
    std::vector<std::pair<double, size_t>> by_need;
    for (size_t i = 0; i < n.operands.size(); ++i)
      by_need.emplace_back(-requirement(n, i), i);
    std::stable_sort(by_need.begin(), by_need.end());
    for (auto [need, i] : by_need)
      visitValue(n.operands[i]);
    if (n.kind == PiiKind::kCall) order_.push_back(node);
  }

  const taidl::Isa& isa_;
  const isel::PiiGraph& g_;
  const isel::Storage& s_;
  std::vector<std::vector<double>> esun_;
  std::vector<bool> visited_;
  Order order_;
};

// A call that reads only HBM and writes a scratchpad: a load, which can run whenever its value
// is first needed.
bool isLoad(const isel::PiiGraph& g, const PiiNode& n) {
  auto in_hbm = [&](int32_t v) { return g.values[static_cast<size_t>(v)].buffer == 0; };
  return n.kind == PiiKind::kCall && std::all_of(n.operands.begin(), n.operands.end(), in_hbm) &&
         !std::all_of(n.outputs.begin(), n.outputs.end(), in_hbm);
}

// Whether `n` reads or writes storage whose root is in `roots`.
bool touches(const isel::Storage& s, const PiiNode& n, const std::vector<int32_t>& roots) {
  auto in_roots = [&](int32_t v) {
    return std::find(roots.begin(), roots.end(), s.root[static_cast<size_t>(v)]) != roots.end();
  };
  return std::any_of(n.operands.begin(), n.operands.end(), in_roots) ||
         std::any_of(n.outputs.begin(), n.outputs.end(), in_roots);
}

// The program point of each call in `order` (1-based; -1 for nodes that are not calls).
std::vector<int64_t> positions(const isel::PiiGraph& g, const Order& order) {
  std::vector<int64_t> pos(g.nodes.size(), -1);
  for (size_t i = 0; i < order.size(); ++i)
    pos[static_cast<size_t>(order[i])] = static_cast<int64_t>(i) + 1;
  return pos;
}

}  // namespace

Order loadsAsLateAsPossible(const isel::PiiGraph& g, const isel::Storage& s, Order order) {
  // From the last load to the first, so that a load moves past the loads already placed.
  for (size_t i = order.size(); i-- > 0;) {
    const PiiNode& load = g.nodes[static_cast<size_t>(order[i])];
    if (!isLoad(g, load)) continue;
    std::vector<int32_t> roots;
    for (int32_t o : load.outputs)
      roots.push_back(s.root[static_cast<size_t>(o)]);
    size_t j = i + 1;
    while (j < order.size() && !touches(s, g.nodes[static_cast<size_t>(order[j])], roots))
      ++j;
    // Ahead of the loads already waiting there, so that loads keep the walk's relative order.
    while (j > i + 1 && isLoad(g, g.nodes[static_cast<size_t>(order[j - 1])]))
      --j;
    std::rotate(order.begin() + static_cast<std::ptrdiff_t>(i),
                order.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                order.begin() + static_cast<std::ptrdiff_t>(j));
  }
  return order;
}

Order sethiUllmanOrder(const taidl::Isa& isa, const isel::PiiGraph& graph,
                       const isel::Storage& storage) {
  return SethiUllman(isa, graph, storage).run();
}

std::vector<Interval> liveIntervals(const isel::PiiGraph& g, const isel::Storage& s,
                                    const Order& order, bool repeated) {
  const int64_t n = static_cast<int64_t>(order.size());
  std::vector<int64_t> pos = positions(g, order);
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> def(g.values.size(), std::numeric_limits<int64_t>::max());
  std::vector<int64_t> last(g.values.size(), kNone);
  std::vector<bool> undef(g.values.size(), false), whole(g.values.size(), false),
      result(g.values.size(), false);
  for (size_t v = 0; v < g.values.size(); ++v) {
    size_t r = static_cast<size_t>(s.root[v]);
    int32_t p = g.values[v].producer;
    PiiKind kind = p < 0 ? PiiKind::kInput : g.nodes[static_cast<size_t>(p)].kind;
    // A resident input (on chip: kernel.h Residence) holds its data from the start and, like an
    // intermediate, only until its last reader (an accumulator updated in place).
    const bool resident = kind == PiiKind::kInput && g.values[v].buffer != 0;
    if (kind == PiiKind::kInput && !resident) whole[r] = true;
    if (repeated && kind == PiiKind::kConstant) whole[r] = true;
    if (kind == PiiKind::kConstant || resident) def[r] = 0;
    if (kind == PiiKind::kUndef) undef[r] = true;
    if (kind == PiiKind::kCall) def[r] = std::min(def[r], pos[static_cast<size_t>(p)]);
  }
  for (int32_t v : g.results) {
    result[static_cast<size_t>(s.root[static_cast<size_t>(v)])] = true;
    // An HBM result of a repeated program holds the other iterations' results around its window
    // (a resident result on chip is the next iteration's input, live as usual).
    if (repeated && g.values[static_cast<size_t>(v)].buffer == 0)
      whole[static_cast<size_t>(s.root[static_cast<size_t>(v)])] = true;
  }
  for (int32_t node : order) {
    for (int32_t operand : g.nodes[static_cast<size_t>(node)].operands) {
      size_t r = static_cast<size_t>(s.root[static_cast<size_t>(operand)]);
      last[r] = std::max(last[r], pos[static_cast<size_t>(node)]);
    }
  }
  std::vector<Interval> live(g.values.size());
  for (int32_t r : s.roots) {
    size_t i = static_cast<size_t>(r);
    if (whole[i]) {
      live[i] = {0, n};
    } else if (undef[i] && def[i] == std::numeric_limits<int64_t>::max()) {
      live[i] = {1, 0};  // empty: an undefined region constrains nothing by itself
    } else {
      int64_t begin = def[i];
      int64_t end = result[i] ? n : (last[i] == kNone ? begin : std::max(begin, last[i] - 1));
      live[i] = {begin, end};
    }
  }
  return live;
}

namespace {

bool sameRegion(const isel::Storage& s, int32_t a, int32_t b) {
  return s.offset[static_cast<size_t>(a)] == s.offset[static_cast<size_t>(b)] &&
         s.extents[static_cast<size_t>(a)] == s.extents[static_cast<size_t>(b)];
}

bool regionsOverlap(const isel::Storage& s, int32_t a, int32_t b) {
  const std::vector<int64_t>& oa = s.offset[static_cast<size_t>(a)];
  const std::vector<int64_t>& ob = s.offset[static_cast<size_t>(b)];
  const std::vector<int64_t>& ea = s.extents[static_cast<size_t>(a)];
  const std::vector<int64_t>& eb = s.extents[static_cast<size_t>(b)];
  for (size_t k = 0; k < oa.size(); ++k) {
    if (oa[k] + ea[k] <= ob[k] || ob[k] + eb[k] <= oa[k]) return false;
  }
  return true;
}

// The parts the calls of `order` write into one root (first writes of each region), or nothing if
// two distinct regions overlap.
std::vector<StoragePiece> parts(const isel::Storage& s, std::vector<StoragePiece> writes) {
  std::stable_sort(writes.begin(), writes.end(), [](const StoragePiece& a, const StoragePiece& b) {
    return a.live.begin < b.live.begin;
  });
  std::vector<StoragePiece> out;
  for (const StoragePiece& w : writes) {
    auto same = [&](const StoragePiece& p) { return sameRegion(s, p.value, w.value); };
    if (std::any_of(out.begin(), out.end(), same)) continue;
    for (const StoragePiece& p : out) {
      if (regionsOverlap(s, p.value, w.value)) return {};
    }
    out.push_back(w);
  }
  return out;
}

void addPair(int32_t a, int32_t b, Interference& pairs) {
  pairs.emplace_back(std::min(a, b), std::max(a, b));
}

// The pairs between the pieces of roots u and v.
void interfere(const std::vector<StoragePiece>& pu, int32_t u, const std::vector<StoragePiece>& pv,
               int32_t v, Interference& pairs) {
  auto overlapsAll = [](const StoragePiece& p, const std::vector<StoragePiece>& others) {
    return std::all_of(others.begin(), others.end(),
                       [&](const StoragePiece& o) { return p.live.overlaps(o.live); });
  };
  auto held = [](const std::vector<StoragePiece>& p) {
    return std::any_of(p.begin(), p.end(), [](const StoragePiece& x) { return x.held; });
  };
  const bool by_root = !held(pu) && !held(pv);  // a held piece's root includes undefined bytes
  if (by_root && std::all_of(pu.begin(), pu.end(),
                             [&](const StoragePiece& p) { return overlapsAll(p, pv); })) {
    addPair(u, v, pairs);
    return;
  }
  for (const StoragePiece& a : pu) {
    if (by_root && overlapsAll(a, pv)) {
      addPair(a.value, v, pairs);
      continue;
    }
    for (const StoragePiece& b : pv) {
      if (a.live.overlaps(b.live)) addPair(a.value, b.value, pairs);
    }
  }
}

}  // namespace

StoragePieces storagePieces(const isel::PiiGraph& g, const isel::Storage& s, const Order& order,
                            const std::vector<Interval>& live, bool repeated) {
  std::vector<int64_t> pos = positions(g, order);
  std::vector<std::vector<StoragePiece>> writes(g.values.size()), held(g.values.size());
  std::vector<bool> whole(g.values.size(), false), undef(g.values.size(), false);
  for (size_t v = 0; v < g.values.size(); ++v) {
    size_t r = static_cast<size_t>(s.root[v]);
    int32_t p = g.values[v].producer;
    PiiKind kind = p < 0 ? PiiKind::kInput : g.nodes[static_cast<size_t>(p)].kind;
    const bool resident = kind == PiiKind::kInput && g.values[v].buffer != 0;
    if ((kind == PiiKind::kInput && !resident) || kind == PiiKind::kConstant) {
      whole[r] = true;
      held[r].push_back({static_cast<int32_t>(v), live[r], true});
    }
    if (kind == PiiKind::kUndef) undef[r] = true;
    if (kind == PiiKind::kCall && pos[static_cast<size_t>(p)] >= 0)
      writes[r].push_back({static_cast<int32_t>(v), {pos[static_cast<size_t>(p)], live[r].end}});
  }
  // A repeated program's results hold the other iterations' data around their window: one
  // vertex, live for the whole program (never split into the parts its calls write).
  if (repeated) {
    for (int32_t v : g.results) {
      if (g.values[static_cast<size_t>(v)].buffer == 0)
        writes[static_cast<size_t>(s.root[static_cast<size_t>(v)])].clear();
    }
  }
  StoragePieces out;
  for (int32_t r : s.roots) {
    const size_t i = static_cast<size_t>(r);
    std::vector<StoragePiece> p;
    if (!whole[i]) {
      p = parts(s, std::move(writes[i]));
    } else if (undef[i] && writes[i].empty()) {
      // Data from elsewhere beside undefined regions (an input padded to a unit's rows, read
      // whole by one load): only the data holds anything, the padding may lie on anything.
      p = std::move(held[i]);
    }
    if (p.empty() || (p.size() == 1 && !p[0].held)) p = {{r, live[i]}};
    out.push_back(std::move(p));
  }
  return out;
}

Interference interference(const isel::PiiGraph& g, const isel::Storage& s,
                          const StoragePieces& pieces) {
  Interference pairs;
  for (size_t a = 0; a < pieces.size(); ++a) {
    for (size_t b = a + 1; b < pieces.size(); ++b) {
      if (g.values[static_cast<size_t>(s.roots[a])].buffer !=
          g.values[static_cast<size_t>(s.roots[b])].buffer)
        continue;
      interfere(pieces[a], s.roots[a], pieces[b], s.roots[b], pairs);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

OrderEnumerator::OrderEnumerator(const isel::PiiGraph& graph, Order preferred)
    : rank_(graph.nodes.size(), 0), pending_(graph.nodes.size(), 0), users_(graph.nodes.size()) {
  for (size_t i = 0; i < preferred.size(); ++i)
    rank_[static_cast<size_t>(preferred[i])] = static_cast<int32_t>(i);
  calls_ = preferred.size();
  for (int32_t node : preferred) {
    std::vector<int32_t> deps;
    for (int32_t o : graph.nodes[static_cast<size_t>(node)].operands)
      callProducers(graph, o, deps);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    pending_[static_cast<size_t>(node)] = static_cast<int32_t>(deps.size());
    for (int32_t d : deps)
      users_[static_cast<size_t>(d)].push_back(node);
  }
  Frame root;
  for (int32_t node : preferred) {
    if (pending_[static_cast<size_t>(node)] == 0) root.ready.push_back(node);
  }
  stack_.push_back(std::move(root));
}

std::optional<Order> OrderEnumerator::next() {
  while (!done_ && !stack_.empty()) {
    Frame& f = stack_.back();
    if (current_.size() == calls_) {
      Order out = current_;
      // Backtrack one step so the next call continues the search.
      stack_.pop_back();
      if (!current_.empty()) {
        int32_t undo = current_.back();
        current_.pop_back();
        for (int32_t u : users_[static_cast<size_t>(undo)])
          ++pending_[static_cast<size_t>(u)];
      }
      return out;
    }
    if (f.next >= f.ready.size()) {
      stack_.pop_back();
      if (!current_.empty()) {
        int32_t undo = current_.back();
        current_.pop_back();
        for (int32_t u : users_[static_cast<size_t>(undo)])
          ++pending_[static_cast<size_t>(u)];
      }
      continue;
    }
    int32_t pick = f.ready[f.next++];
    Frame child;
    for (int32_t r : f.ready) {
      if (r != pick) child.ready.push_back(r);
    }
    current_.push_back(pick);
    for (int32_t u : users_[static_cast<size_t>(pick)]) {
      if (--pending_[static_cast<size_t>(u)] == 0) child.ready.push_back(u);
    }
    std::sort(child.ready.begin(), child.ready.end(), [&](int32_t a, int32_t b) {
      return rank_[static_cast<size_t>(a)] < rank_[static_cast<size_t>(b)];
    });
    stack_.push_back(std::move(child));
  }
  done_ = true;
  return std::nullopt;
}

}  // namespace tacit::alloc
