#include "alloc/allocator.h"

#include <algorithm>

namespace tacit::alloc {
namespace {

bool contains(const Interference& big, const Interference& small) {
  return std::includes(big.begin(), big.end(), small.begin(), small.end());
}

std::string describe(const taidl::Isa& isa, const isel::PiiGraph& g, const Interference& phi) {
  // The buffers under pressure: how many interfering pairs each holds.
  std::vector<size_t> per_buffer(isa.buffers.size(), 0);
  for (auto [u, v] : phi)
    ++per_buffer[static_cast<size_t>(g.values[static_cast<size_t>(u)].buffer)];
  std::string out;
  for (size_t b = 0; b < per_buffer.size(); ++b) {
    if (per_buffer[b] == 0) continue;
    if (!out.empty()) out += ", ";
    out +=
        std::to_string(per_buffer[b]) + " interfering value pairs in " + isa.buffers[b].name.text;
  }
  return out.empty() ? "no interference" : out;
}

// A necessary condition no solver call is needed for: at every program point, the values live in
// a scratchpad must fit in it (the sum of their areas is at most the buffer's). Returns why not,
// or "". Its interference graph contains the clique of that point, so every superset fails too.
std::string pressureExceeded(const taidl::Isa& isa, const isel::PiiGraph& graph,
                             const isel::Storage& storage, const std::vector<Interval>& live) {
  int64_t points = 0;
  for (const Interval& i : live)
    points = std::max(points, i.end + 1);
  for (size_t b = 0; b < isa.buffers.size(); ++b) {
    const taidl::Buffer& buffer = isa.buffers[b];
    if (buffer.is_hbm) continue;
    int64_t capacity = 1;
    for (int64_t a : buffer.access)
      capacity *= a;
    std::vector<int64_t> load(static_cast<size_t>(points), 0);
    for (int32_t r : storage.roots) {
      const isel::PiiValue& v = graph.values[static_cast<size_t>(r)];
      if (v.buffer != static_cast<int32_t>(b) || live[static_cast<size_t>(r)].empty()) continue;
      int64_t area = 1;
      for (int64_t e : storage.extents[static_cast<size_t>(r)])
        area *= e;
      for (int64_t t = live[static_cast<size_t>(r)].begin; t <= live[static_cast<size_t>(r)].end;
           ++t)
        load[static_cast<size_t>(t)] += area;
    }
    for (int64_t t = 0; t < points; ++t) {
      if (load[static_cast<size_t>(t)] > capacity) {
        return buffer.name.text + " holds " + std::to_string(capacity) + " units but " +
               std::to_string(load[static_cast<size_t>(t)]) + " are live at instruction " +
               std::to_string(t);
      }
    }
  }
  return {};
}

// A value two calls overwrite in place (both read it from the slice they write) cannot be
// allocated in any order: the first destroys it. Returns why, or "".
std::string destroyedTwice(const isel::UnitSet& units, const isel::PiiGraph& graph) {
  std::vector<int32_t> in_place(graph.values.size(), 0);
  for (const isel::PiiNode& n : graph.nodes) {
    if (n.kind != isel::PiiKind::kCall) continue;
    const isel::Unit& u = units.units[static_cast<size_t>(n.unit)];
    const taidl::SymCase& c = u.semantics->cases[static_cast<size_t>(n.case_index)];
    for (size_t k = 0; k < n.operands.size() && k < c.inputs.size(); ++k) {
      if (!isel::readsInPlace(c, k)) continue;
      if (++in_place[static_cast<size_t>(n.operands[k])] == 2) {
        return "value %" + std::to_string(n.operands[k]) + " is overwritten in place by two " +
               u.name + " calls";
      }
    }
  }
  return {};
}

}  // namespace

AllocResult allocate(const taidl::Isa& isa, const isel::UnitSet& units, const isel::PiiGraph& graph,
                     const isel::ImportedKernel& kernel, const AllocOptions& options) {
  AllocResult result;
  isel::Storage storage = isel::buildStorage(isa, graph);
  if (!storage.conflict.empty()) {
    result.reason = storage.conflict;
    return result;
  }
  if (std::string why = destroyedTwice(units, graph); !why.empty()) {
    result.reason = why;
    return result;
  }
  std::vector<CallInfo> calls(graph.nodes.size());
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (graph.nodes[n].kind == isel::PiiKind::kCall) calls[n] = callInfo(units, graph.nodes[n]);
  }
  Order preferred = sethiUllmanOrder(isa, graph, storage);
  OrderEnumerator orders(graph, preferred);
  std::vector<Interference> tried, failed;
  bool limited = false;
  std::string last_reason;
  while (result.orders_tried < options.max_orders) {
    auto now = std::chrono::steady_clock::now();
    if (now >= options.deadline) {
      limited = true;
      break;
    }
    std::optional<Order> order = orders.next();
    if (!order) break;
    std::vector<Interval> live = liveIntervals(graph, storage, *order);
    Interference phi = interference(graph, storage, live);
    bool redundant = std::find(tried.begin(), tried.end(), phi) != tried.end() ||
                     std::any_of(failed.begin(), failed.end(),
                                 [&](const Interference& f) { return contains(phi, f); });
    if (redundant) {
      ++result.orders_skipped;
      continue;
    }
    ++result.orders_tried;
    tried.push_back(phi);
    if (std::string why = pressureExceeded(isa, graph, storage, live); !why.empty()) {
      failed.push_back(phi);
      last_reason = why;
      continue;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(options.deadline - now);
    CspInput in{&isa,
                &graph,
                &kernel,
                &storage,
                &calls,
                phi,
                std::max(std::chrono::milliseconds(1), std::min(options.solver_time_limit, left))};
    SolveResult solved = solve(in);
    result.solver_seconds += solved.seconds;
    if (solved.status == SolveStatus::kSolved) {
      result.status = AllocStatus::kAllocated;
      result.order = std::move(*order);
      result.placement = std::move(solved.placement);
      return result;
    }
    if (solved.status == SolveStatus::kLimit) {
      limited = true;
    } else {
      failed.push_back(phi);
      last_reason = solved.reason.empty() ? describe(isa, graph, phi) : solved.reason;
    }
    if (!solved.reason.empty() && phi.empty())
      break;  // not an interference problem: no order helps
  }
  result.status = limited ? AllocStatus::kLimit : AllocStatus::kInfeasible;
  result.reason = limited ? "the solver's time limit was reached"
                          : "no order can be allocated (" + last_reason + ")";
  return result;
}

}  // namespace tacit::alloc
