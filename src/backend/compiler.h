// The compile driver (docs/algorithm.md §2, §6) and the compile of one kernel. The driver plans
// a kernel — whole, or piecewise (backend/piecewise.h), and next tiled — and compiles every kernel
// the plan holds with compileKernel: phase 1 candidates × phase 2 allocations, scored by a cost
// model, the best kept. No plan calls the driver again: the pipeline has no cycle.
//
// Stopping rule (deterministic: it counts candidates, never time): candidates come smallest
// first; the search stops when `patience` candidates in a row brought no improvement, where
// patience = max(min_patience, patience_factor × the number of candidates it took to find the
// current best) — a budget proportional to the work the best took. Hard limits (max_candidates,
// and the wall-clock time_limit as a safety net) end it earlier; the report says which rule ended
// the search.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/cost.h"
#include "backend/schedule.h"
#include "isel/selector.h"
#include "isel/target.h"
#include "oracle/program.h"
#include "support/deadline.h"

namespace tacit::backend {

struct CompileOptions {
  std::optional<CostModel> cost;  // default: defaultCostModel(isa)
  // The whole compile's budget (--time-limit): a Deadline from the driver's start that saturation,
  // the candidate search, phase 2 and every part of a plan share (support/deadline.h).
  std::chrono::milliseconds time_limit{10'000};
  size_t max_candidates = 256;
  size_t min_patience = 8;
  double patience_factor = 1.0;
  isel::SelectorOptions selector;
  isel::ExtractOptions extract;
  alloc::AllocOptions alloc;
  // Compile results that are elementwise row by row as one piece kernel (backend/piecewise.h).
  bool piecewise = true;
  // Compile a kernel whose result spans more than max_whole_tiles of the ISA's unit tiles as a loop
  // nest over tiles (backend/tiling.h); `schedule` (--schedule) fixes the tiles and loop order.
  bool tiling = true;
  int64_t max_whole_tiles = 16;
  std::optional<TileSchedule> schedule;
  // --reassociate: a float dot's contraction may be split into blocks, each summed from +0 in
  // contracting order and the blocks' sums added in block order (an accumulator's order), where
  // the kernel's dot sums all its products in one sequence (docs/numerics.md). The program then
  // computes CompileResult::computes, which differs from the kernel by rounding.
  bool reassociate = false;
  // Called once phase 1's e-graph is saturated, before extraction (e.g. --dump-egraph): an
  // observer of one e-graph, so the kernel is then compiled whole.
  std::function<void(const isel::Selector&)> after_saturation;
  // Receives a one-line status as the compile goes (phase 1's iterations, the candidates and the
  // best cost so far, the tiling schedules): `tacit compile`'s progress line on a terminal.
  std::function<void(const std::string&)> progress;
};

// What a plan hands compileKernel for one of its kernels besides the options.
struct KernelHooks {
  // How an allocated candidate is costed; default measure(). Piecewise compilation costs a piece
  // kernel's candidates by what they add to the joined program.
  std::function<ProgramCosts(const isel::PiiGraph&, const alloc::AllocResult&)> costs;
};

// One part of a piecewise compile (backend/piecewise.h) and what its own compile cost.
struct PartStats {
  std::string name;   // "rest" (the results compiled whole) or "result N's piece"
  size_t copies = 1;  // how often the join holds its instruction graph
  size_t enodes = 0, iterations = 0, candidates = 0;
  double seconds = 0;
};

// What became of one candidate of the search (a compile report's table).
struct CandidateRecord {
  size_t index = 0;     // 1-based, in extraction order
  size_t calls = 0;     // the instruction graph's calls
  bool placed = false;  // phase 2 found an allocation
  int64_t cost = 0;     // under the compile's cost model, when placed
  std::string note;     // why it was not placed, or how it compared with the best so far
};

struct CompileStats {
  isel::SaturationStats saturation;
  std::vector<CandidateRecord> candidate_log;  // the whole compile's search (not its parts')
  double import_seconds = 0, saturate_seconds = 0, extract_seconds = 0, alloc_seconds = 0,
         solver_seconds = 0, total_seconds = 0;
  size_t candidates = 0;      // instruction graphs examined
  size_t allocated = 0;       // of which phase 2 placed
  size_t infeasible = 0;      // of which phase 2 proved impossible
  size_t solver_limits = 0;   // of which the solver's time limit stopped
  size_t best_candidate = 0;  // 1-based index of the best
  size_t orders_tried = 0;
  size_t rematerialised = 0;     // duplications phase 2 made (alloc/remat.h), over all candidates
  std::string stop;              // why the search ended
  std::string piecewise;         // how the kernel was split (backend/piecewise.h); empty: whole
  std::vector<PartStats> parts;  // piecewise or tiled: each part; the sums above include them
  std::string tiling;            // the tile schedule (backend/tiling.h); empty: not tiled
  size_t join_calls = 0;         // piecewise: the calls of the joined program
  double join_alloc_seconds = 0;
  // Adds the work of a kernel compiled as part of this one (piecewise, tiled): the times and
  // counts sum, phase 1's e-graph sizes sum, its iterations are the longest part's.
  void addWork(const CompileStats& part);
  std::string text() const;  // the --stats table
  std::string json() const;
};

struct CompileResult {
  oracle::Program program;
  isel::PiiGraph graph;
  alloc::AllocResult allocation;
  ProgramCosts costs;
  CostModel model = CostModel::kCount;
  CompileStats stats;
  std::optional<TileSchedule> schedule;  // a tiled compile's (--emit-schedule)
  // The kernel the program computes bit for bit when it is not the input kernel: with
  // `reassociate`, the kernel with its float contraction summed block by block. Null otherwise.
  std::shared_ptr<const hlo::HloModule> computes;
};

// Phase 2 for one instruction graph: allocated under `options.alloc` until `deadline` at the
// latest, its time, solver time, orders and rematerialisations added to `stats`. When allocated,
// `graph` becomes the graph placed (phase 2 may have duplicated values).
alloc::AllocResult allocateCandidate(const isel::Target& target, isel::PiiGraph& graph,
                                     const isel::ImportedKernel& kernel,
                                     const CompileOptions& options, CostModel model,
                                     Deadline deadline, CompileStats& stats);

// One kernel compiled whole within `deadline`: phase 1 under options.selector, the candidate
// search, phase 2 and emission (backend/kernel_compile.cc). Diagnostics as compile's.
CompileResult compileKernel(const isel::Target& target, const hlo::HloModule& kernel,
                            const CompileOptions& options, const KernelHooks& hooks,
                            Deadline deadline);

// Whether a compile's diagnostic says the search stopped at a limit (time, e-nodes) rather than
// that no instruction computes an operation: the operation it names is then only where the search
// had got to.
bool stoppedAtALimit(const Diagnostic& d);

// Compiles `kernel` for the target's ISA: piecewise when options.piecewise, no after_saturation
// observer, and a piecewise plan compiles; whole otherwise. A kernel the compiler cannot model,
// one without any instruction graph (the diagnostic names the HLO instruction no unit computes),
// and one whose graphs cannot be allocated (it names the buffer or constraint) are
// DiagnosticErrors.
CompileResult compile(const isel::Target& target, const hlo::HloModule& kernel,
                      const CompileOptions& options = {});
// The same for one kernel of `isa`: builds the ISA's Target first (callers compiling several
// kernels for one ISA build it once).
CompileResult compile(const taidl::Isa& isa, const hlo::HloModule& kernel,
                      const CompileOptions& options = {});

}  // namespace tacit::backend
