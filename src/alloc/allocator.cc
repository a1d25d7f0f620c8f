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

}  // namespace

AllocResult allocate(const taidl::Isa& isa, const isel::UnitSet& units, const isel::PiiGraph& graph,
                     const isel::ImportedKernel& kernel, const AllocOptions& options) {
  AllocResult result;
  isel::Storage storage = isel::buildStorage(isa, graph);
  if (!storage.conflict.empty()) {
    result.reason = storage.conflict;
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
