#include "alloc/allocator.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace tacit::alloc {
namespace {

// Time an explanation of an infeasible placement may take (on top of the solve that failed).
constexpr std::chrono::milliseconds kExplainBudget{1000};

bool contains(const Interference& big, const Interference& small) {
  return std::includes(big.begin(), big.end(), small.begin(), small.end());
}

// For a time-out: the values each scratchpad must hold ("5 values in d1 (128 units), ...").
std::string occupancy(const taidl::Isa& isa, const isel::PiiGraph& g, const isel::Storage& s) {
  std::vector<size_t> values(isa.buffers.size(), 0);
  for (int32_t r : s.roots)
    ++values[static_cast<size_t>(g.values[static_cast<size_t>(r)].buffer)];
  std::string out;
  for (size_t b = 0; b < values.size(); ++b) {
    const taidl::Buffer& buffer = isa.buffers[b];
    if (buffer.is_hbm || values[b] == 0) continue;
    int64_t units = 1;
    for (int64_t a : buffer.access)
      units *= a;
    out += (out.empty() ? "" : ", ") + std::to_string(values[b]) + " values in " +
           buffer.name.text + " (" + std::to_string(units) + " units)";
  }
  return out.empty() ? "values in HBM only" : out;
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

// Orders and solves one graph (no rewriting).
AllocResult allocateGraph(const taidl::Isa& isa, const isel::UnitSet& units,
                          const isel::PiiGraph& graph, const isel::ImportedKernel& kernel,
                          const AllocOptions& options) {
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
  // The walk's order first, then the same with its loads as late as possible (the enumeration
  // permutes only the tail, and never moves an early load next to its reader), then the others.
  std::optional<Order> late = loadsAsLateAsPossible(graph, storage, preferred);
  if (late == preferred) late.reset();
  bool walked = false;
  auto nextOrder = [&]() -> std::optional<Order> {
    if (walked && late) return std::exchange(late, std::nullopt);
    walked = true;
    return orders.next();
  };
  std::vector<Interference> tried, failed;
  bool limited = false;
  std::string last_reason, limit_reason, explained;
  while (result.orders_tried < options.max_orders) {
    if (options.deadline.passed()) {
      limited = true;
      break;
    }
    std::optional<Order> order = nextOrder();
    if (!order) break;
    StoragePieces pieces =
        storagePieces(graph, storage, *order,
                      liveIntervals(graph, storage, *order, options.repeated), options.repeated);
    Interference phi = interference(graph, storage, pieces);
    bool redundant = std::find(tried.begin(), tried.end(), phi) != tried.end() ||
                     std::any_of(failed.begin(), failed.end(),
                                 [&](const Interference& f) { return contains(phi, f); });
    if (redundant) {
      ++result.orders_skipped;
      continue;
    }
    ++result.orders_tried;
    tried.push_back(phi);
    // A necessary condition no solver call is needed for: at every program point, the values
    // live in a scratchpad fit in it. Its interference graph contains the clique of that point,
    // so every superset fails too.
    if (std::optional<Peak> over = firstOverflow(isa, graph, storage, pieces)) {
      failed.push_back(phi);
      last_reason = over->describe(isa);
      continue;
    }
    CspInput in;
    in.isa = &isa;
    in.graph = &graph;
    in.kernel = &kernel;
    in.storage = &storage;
    in.calls = &calls;
    in.interference = phi;
    in.deadline = Deadline::after(options.solver_time_limit).earlier(options.deadline);
    in.fail_limit = options.solver_fail_limit;
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
      limit_reason = describe(isa, graph, phi);
    } else {
      failed.push_back(phi);
      // Explained once per graph (each explanation costs a few bounded solves): the call and
      // `require` that fail, and the buffers.
      if (explained.empty()) {
        explained = explainInfeasible(in, *order,
                                      Deadline::after(kExplainBudget).earlier(options.deadline));
      }
      // Without an explanation (no time left for it), at least the buffers and their values.
      last_reason = !explained.empty()
                        ? explained
                        : (solved.reason.empty() ? describe(isa, graph, phi) : solved.reason) +
                              " placing " + occupancy(isa, graph, storage);
    }
    if (!solved.reason.empty() && phi.empty())
      break;  // not an interference problem: no order helps
  }
  result.status = limited ? AllocStatus::kLimit : AllocStatus::kInfeasible;
  if (limited) {
    // The deadline may stop the enumeration before a solve: the values to place still say which
    // buffers the time went into.
    result.reason = "the solver's time limit was reached placing " + occupancy(isa, graph, storage);
    if (!limit_reason.empty()) result.reason += " (" + limit_reason + ")";
    if (!last_reason.empty()) result.reason += "; other orders: " + last_reason;
  } else {
    result.reason = "no order can be allocated (" + last_reason + ")";
  }
  return result;
}

// The duplication the rule of alloc/remat.h picks for `graph` in its preferred order: at the first
// point a scratchpad overflows, or (`at_highest_load`: the solver found no placement) else at its
// highest load.
std::optional<Rematerialisation> rematerialise(const taidl::Isa& isa, const isel::UnitSet& units,
                                               const isel::PiiGraph& graph,
                                               const AllocOptions& options, bool at_highest_load) {
  isel::Storage storage = isel::buildStorage(isa, graph);
  if (!storage.conflict.empty()) return std::nullopt;
  Order order = sethiUllmanOrder(isa, graph, storage);
  std::vector<Interval> live = liveIntervals(graph, storage, order, options.repeated);
  StoragePieces pieces = storagePieces(graph, storage, order, live, options.repeated);
  std::optional<Peak> peak = firstOverflow(isa, graph, storage, pieces);
  if (!peak && at_highest_load) peak = highestLoad(isa, graph, storage, pieces);
  if (!peak) return std::nullopt;
  return chooseRematerialisation(isa, units, graph, storage, live, *peak, options.call_cost);
}

}  // namespace

// While the preferred order overflows a scratchpad, duplicate first: other orders only permute
// its tail (OrderEnumerator backtracks from the end), so they seldom move the peak, and each costs
// an order check or a solve. Then orders are enumerated; if none can be placed, one more
// duplication at the highest load, and again.
AllocResult allocate(const taidl::Isa& isa, const isel::UnitSet& units, const isel::PiiGraph& graph,
                     const isel::ImportedKernel& kernel, const AllocOptions& options) {
  std::optional<isel::PiiGraph> rewritten;
  size_t rounds = 0, orders_tried = 0, orders_skipped = 0;
  double solver_seconds = 0;
  auto more = [&] { return rounds < options.max_remat_rounds && !options.deadline.passed(); };
  while (true) {
    const isel::PiiGraph& current = rewritten ? *rewritten : graph;
    std::optional<Rematerialisation> next;
    if (more()) next = rematerialise(isa, units, current, options, false);
    if (next) {
      rewritten = std::move(next->graph);
      ++rounds;
      continue;
    }
    AllocResult result = allocateGraph(isa, units, current, kernel, options);
    orders_tried += result.orders_tried;
    orders_skipped += result.orders_skipped;
    solver_seconds += result.solver_seconds;
    // Only orders that were tried and failed can be helped (not a storage conflict or a value
    // overwritten twice, which no order reaches).
    if (result.status == AllocStatus::kInfeasible && result.orders_tried > 0 && more())
      next = rematerialise(isa, units, current, options, true);
    if (!next) {
      result.orders_tried = orders_tried;
      result.orders_skipped = orders_skipped;
      result.solver_seconds = solver_seconds;
      result.rematerialised = rounds;
      result.rewritten = std::move(rewritten);
      if (rounds > 0 && result.status != AllocStatus::kAllocated)
        result.reason += " after " + std::to_string(rounds) + " rematerialisations";
      return result;
    }
    rewritten = std::move(next->graph);
    ++rounds;
  }
}

}  // namespace tacit::alloc
