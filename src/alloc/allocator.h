// Phase 2 (docs/algorithm.md §4): order the calls, assign every address with Gecode.
//
// Orders are tried Sethi–Ullman first, then the other topological orders. An order whose
// interference graph equals one already tried, or contains one that was infeasible, is skipped:
// constraints only grow with interference (φ1 ⊆ φ2 ∧ ¬CSP(φ1) ⇒ ¬CSP(φ2)). Infeasible and
// "solver limit reached" are kept apart. When no order can be allocated, recomputable values are
// duplicated (alloc/remat.h) and the orders tried again.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "alloc/csp.h"
#include "alloc/remat.h"
#include "support/deadline.h"

namespace tacit::alloc {

struct AllocOptions {
  std::chrono::milliseconds solver_time_limit{2000};  // per order
  // Failures the solver's search may meet per order before it gives up (0: no limit): an effort
  // bound that, unlike the time limit, does not depend on the machine's load.
  uint64_t solver_fail_limit = 0;
  size_t max_orders = 64;  // topological orders tried
  // The program is the body of a loop (a tile kernel of a tiled compile): HBM data set before the
  // run (constants) must hold for every iteration, and the HBM results' regions hold the other
  // iterations' results around this one's window, so both are live for the whole program — no
  // scratch may reuse their bytes after their last use.
  bool repeated = false;
  // The caller's deadline (the compile's --time-limit): no order starts after it and no solve
  // runs past it.
  Deadline deadline;
  // Rematerialisation (alloc/remat.h): when no order can be allocated, at most this many
  // duplications, each chosen by the cost of the calls it adds (call_cost; unset: 1 per call).
  size_t max_remat_rounds = 32;
  CallCost call_cost;
};

enum class AllocStatus { kAllocated, kInfeasible, kLimit };

struct AllocResult {
  AllocStatus status = AllocStatus::kInfeasible;
  Order order;
  Placement placement;
  size_t orders_tried = 0;
  size_t orders_skipped = 0;
  double solver_seconds = 0;
  std::string reason;  // why no allocation (infeasible interference, a value too large, ...)
  // Set when values were rematerialised: the graph `order` and `placement` refer to.
  std::optional<isel::PiiGraph> rewritten;
  size_t rematerialised = 0;  // duplications made
  const isel::PiiGraph& graph(const isel::PiiGraph& candidate) const {
    return rewritten ? *rewritten : candidate;
  }
};

AllocResult allocate(const taidl::Isa& isa, const isel::UnitSet& units, const isel::PiiGraph& graph,
                     const isel::ImportedKernel& kernel, const AllocOptions& options = {});

}  // namespace tacit::alloc
