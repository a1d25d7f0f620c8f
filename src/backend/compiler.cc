#include "backend/compiler.h"

#include <iomanip>
#include <sstream>

#include "alloc/allocator.h"
#include "backend/emit.h"
#include "backend/piecewise.h"
#include "isel/explain.h"
#include "support/strings.h"

namespace tacit::backend {
namespace {

// Why phase 1 gave no candidate. Where saturation stopped at a limit, the operation the
// explanation names may only lack the rewrites that had not run yet, so the limit comes first.
Diagnostic noCandidate(const isel::Selector& selector, const isel::SaturationStats& saturation) {
  Diagnostic d = isel::explainNoCandidate(selector);
  if (saturation.stop == isel::SaturationStop::kSaturated) return d;
  d.message = "no instruction graph found before saturation stopped at its " +
              std::string(isel::saturationStopName(saturation.stop)) + " (" +
              plural(static_cast<int64_t>(saturation.iterations), "iteration") + ", " +
              plural(static_cast<int64_t>(saturation.nodes), "e-node") + "); so far " + d.message;
  d.hint = "raise --time-limit (or the e-graph limits): the e-graph was still growing";
  return d;
}

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string secondsText(double seconds) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << seconds << " s";
  return out.str();
}

}  // namespace

std::string CompileStats::text() const {
  std::ostringstream out;
  out << "phase 1: e-graph " << saturation.nodes << " e-nodes, " << saturation.classes
      << " e-classes, " << saturation.piis << " piis, " << saturation.iterations << " iterations ("
      << isel::saturationStopName(saturation.stop) << ")\n";
  // Per iteration (a rebuild may merge nodes: the change can be negative).
  int64_t before = static_cast<int64_t>(saturation.initial_nodes);
  for (size_t k = 0; k < saturation.per_iteration.size(); ++k) {
    const isel::SaturationIteration& it = saturation.per_iteration[k];
    const int64_t nodes = static_cast<int64_t>(it.nodes);
    std::ostringstream line;
    line << std::fixed << std::setprecision(2) << "  iteration " << k + 1 << ": " << nodes
         << " e-nodes (" << std::showpos << nodes - before << std::noshowpos << "); rules "
         << it.rules_seconds * 1e3 << " ms, view pass " << it.views_seconds * 1e3
         << " ms, folding and row split " << it.passes_seconds * 1e3 << " ms, matching "
         << it.matching_seconds * 1e3 << " ms\n";
    out << line.str();
    before = nodes;
  }
  out << "time: import " << import_seconds * 1e3 << " ms, saturation " << saturate_seconds * 1e3
      << " ms, extraction " << extract_seconds * 1e3 << " ms, allocation " << alloc_seconds * 1e3
      << " ms (solver " << solver_seconds * 1e3 << " ms), total " << total_seconds * 1e3 << " ms\n"
      << "candidates: " << candidates << " examined, " << allocated << " allocated, " << infeasible
      << " infeasible, " << solver_limits << " hit the solver limit; best #" << best_candidate
      << "; " << orders_tried << " orders tried, " << rematerialised << " values rematerialised\n"
      << "search ended: " << stop << "\n";
  if (!piecewise.empty()) {
    out << "piecewise: " << piecewise << "\n";
    for (const PartStats& p : parts) {
      std::ostringstream line;
      line << std::fixed << std::setprecision(2) << "  part " << p.name;
      if (p.copies > 1) line << " (x" << p.copies << ")";
      line << ": " << p.enodes << " e-nodes, " << p.iterations << " iterations, " << p.candidates
           << " candidates, " << p.seconds * 1e3 << " ms\n";
      out << line.str();
    }
    std::ostringstream line;
    line << std::fixed << std::setprecision(2) << "  join: " << join_calls
         << " calls, allocated in " << join_alloc_seconds * 1e3 << " ms\n";
    out << line.str();
  }
  return out.str();
}

std::string CompileStats::json() const {
  std::ostringstream out;
  out << "{\"enodes\": " << saturation.nodes << ", \"eclasses\": " << saturation.classes
      << ", \"piis\": " << saturation.piis << ", \"initial_enodes\": " << saturation.initial_nodes
      << ", \"iterations\": " << saturation.iterations << ", \"per_iteration\": [";
  for (size_t k = 0; k < saturation.per_iteration.size(); ++k) {
    const isel::SaturationIteration& it = saturation.per_iteration[k];
    out << (k ? ", " : "") << "{\"enodes\": " << it.nodes << ", \"eclasses\": " << it.classes
        << ", \"rules_ms\": " << it.rules_seconds * 1e3
        << ", \"view_pass_ms\": " << it.views_seconds * 1e3
        << ", \"folding_row_split_ms\": " << it.passes_seconds * 1e3
        << ", \"matching_ms\": " << it.matching_seconds * 1e3 << "}";
  }
  out << "]"
      << ", \"saturation\": \"" << isel::saturationStopName(saturation.stop)
      << "\", \"import_ms\": " << import_seconds * 1e3
      << ", \"saturation_ms\": " << saturate_seconds * 1e3
      << ", \"extraction_ms\": " << extract_seconds * 1e3
      << ", \"allocation_ms\": " << alloc_seconds * 1e3
      << ", \"solver_ms\": " << solver_seconds * 1e3 << ", \"total_ms\": " << total_seconds * 1e3
      << ", \"candidates\": " << candidates << ", \"allocated\": " << allocated
      << ", \"infeasible\": " << infeasible << ", \"solver_limits\": " << solver_limits
      << ", \"best_candidate\": " << best_candidate << ", \"orders_tried\": " << orders_tried
      << ", \"rematerialised\": " << rematerialised << ", \"stop\": \"" << stop
      << "\", \"piecewise\": \"" << piecewise << "\", \"parts\": [";
  for (size_t k = 0; k < parts.size(); ++k) {
    const PartStats& p = parts[k];
    out << (k ? ", " : "") << "{\"name\": \"" << p.name << "\", \"copies\": " << p.copies
        << ", \"enodes\": " << p.enodes << ", \"iterations\": " << p.iterations
        << ", \"candidates\": " << p.candidates << ", \"ms\": " << p.seconds * 1e3 << "}";
  }
  out << "], \"join_calls\": " << join_calls << ", \"join_alloc_ms\": " << join_alloc_seconds * 1e3
      << "}";
  return out.str();
}

namespace {

// Phase 2's candidate loop (docs/backend.md, "Candidate search"): allocates each candidate phase 1
// extracts, keeps the best under the cost model and decides when to stop.
class CandidateSearch {
 public:
  CandidateSearch(const taidl::Isa& isa, const hlo::HloModule& kernel,
                  const CompileOptions& options, const isel::Selector& selector, CostModel model,
                  CompileStats& stats, Clock::time_point start)
      : isa_(isa),
        kernel_(kernel),
        options_(options),
        selector_(selector),
        model_(model),
        stats_(stats),
        start_(start) {}

  // The best program's graph, allocation and costs; a diagnostic if no candidate was placed.
  CompileResult run() {
    auto extractor = selector_.extractor(options_.extract);
    stats_.stop = "every candidate within the size bound was examined";
    while (!stopBeforeNextCandidate()) {
      Clock::time_point t = Clock::now();
      std::optional<isel::PiiGraph> graph = extractor->next();
      stats_.extract_seconds += since(t);
      if (!graph) break;
      ++stats_.candidates;
      tryCandidate(std::move(*graph));
    }
    if (!best_) failWithoutProgram(*extractor);
    return std::move(*best_);
  }

 private:
  // The stopping rule: the candidate and time limits, then patience after the best candidate.
  bool stopBeforeNextCandidate() {
    if (stats_.candidates >= options_.max_candidates) {
      stats_.stop = "candidate limit (" + std::to_string(options_.max_candidates) + ")";
      return true;
    }
    if (Clock::now() - start_ > options_.time_limit) {
      stats_.stop = "time limit";
      out_of_time_ = true;
      return true;
    }
    if (!best_) return false;
    size_t patience = std::max(
        options_.min_patience,
        static_cast<size_t>(options_.patience_factor * static_cast<double>(stats_.best_candidate)));
    if (stats_.candidates - stats_.best_candidate < patience) return false;
    stats_.stop = "no better program in " + std::to_string(patience) + " candidates after the best";
    return true;
  }

  void tryCandidate(isel::PiiGraph graph) {
    alloc::AllocResult allocation =
        allocateCandidate(isa_, selector_.units(), graph, selector_.kernel(), options_, model_,
                          start_ + options_.time_limit, stats_);
    if (allocation.status != alloc::AllocStatus::kAllocated) {
      ++(allocation.status == alloc::AllocStatus::kLimit ? stats_.solver_limits
                                                         : stats_.infeasible);
      // A candidate the deadline stopped before any order was tried says less than one tried.
      if (allocation.orders_tried > 0 || last_failure_.empty()) last_failure_ = allocation.reason;
      return;
    }
    ++stats_.allocated;
    ProgramCosts costs = options_.costs ? options_.costs(graph, allocation)
                                        : measure(isa_, selector_.units(), graph, allocation);
    if (best_ && !costs.betterThan(best_->costs, model_)) return;
    stats_.best_candidate = stats_.candidates;
    best_.emplace();
    best_->graph = std::move(graph);
    best_->allocation = std::move(allocation);
    best_->costs = costs;
  }

  // Phase 1 may have used the whole time limit: whether it found a candidate decides what the
  // user is told (a computable kernel must not be reported as inexpressible).
  [[noreturn]] void failWithoutProgram(isel::CandidateExtractor& extractor) {
    if (stats_.candidates == 0) {
      if (!out_of_time_ || !extractor.next())
        throw DiagnosticError(noCandidate(selector_, stats_.saturation));
      fail(kernel_.sourceFile(), {},
           "the time limit (" +
               secondsText(std::chrono::duration<double>(options_.time_limit).count()) +
               ") was reached before any instruction graph could be placed: phase 1 took " +
               secondsText(stats_.import_seconds + stats_.saturate_seconds),
           "raise --time-limit");
    }
    fail(kernel_.sourceFile(), {},
         "no instruction graph of the kernel can be placed in the ISA's buffers (" +
             std::to_string(stats_.candidates) + " candidates tried; last: " + last_failure_ + ")",
         "the kernel may be too large for the buffers; raise --time-limit to try more candidates");
  }

  const taidl::Isa& isa_;
  const hlo::HloModule& kernel_;
  const CompileOptions& options_;
  const isel::Selector& selector_;
  const CostModel model_;
  CompileStats& stats_;
  const Clock::time_point start_;
  std::optional<CompileResult> best_;
  std::string last_failure_;
  bool out_of_time_ = false;
};

}  // namespace

alloc::AllocResult allocateCandidate(const taidl::Isa& isa, const isel::UnitSet& units,
                                     isel::PiiGraph& graph, const isel::ImportedKernel& kernel,
                                     const CompileOptions& options, CostModel model,
                                     Clock::time_point deadline, CompileStats& stats) {
  Clock::time_point t = Clock::now();
  alloc::AllocOptions alloc_options = options.alloc;
  alloc_options.deadline = std::min(alloc_options.deadline, deadline);
  if (!alloc_options.call_cost) alloc_options.call_cost = allocationCost(model, isa, units);
  alloc::AllocResult allocation = alloc::allocate(isa, units, graph, kernel, alloc_options);
  stats.alloc_seconds += since(t);
  stats.solver_seconds += allocation.solver_seconds;
  stats.orders_tried += allocation.orders_tried;
  stats.rematerialised += allocation.rematerialised;
  if (allocation.status == alloc::AllocStatus::kAllocated && allocation.rewritten)
    graph = std::move(*allocation.rewritten);
  allocation.rewritten.reset();
  return allocation;
}

CompileResult compile(const taidl::Isa& isa, const hlo::HloModule& kernel,
                      const CompileOptions& options) {
  Clock::time_point start = Clock::now();
  if (options.piecewise && !options.after_saturation) {
    if (std::optional<CompileResult> pieces = compilePiecewise(isa, kernel, options))
      return std::move(*pieces);
  }
  CompileResult result;
  result.model = options.cost.value_or(defaultCostModel(isa));
  CompileStats& stats = result.stats;

  isel::Selector selector(isa, kernel, options.selector);
  stats.import_seconds = since(start);
  Clock::time_point t = Clock::now();
  stats.saturation = selector.saturate();
  if (options.after_saturation) options.after_saturation(selector);
  stats.saturate_seconds = since(t);

  CompileResult best =
      CandidateSearch(isa, kernel, options, selector, result.model, stats, start).run();
  result.graph = std::move(best.graph);
  result.allocation = std::move(best.allocation);
  result.costs = best.costs;
  result.program = buildProgram(isa, selector.units(), result.graph, result.allocation,
                                selector.kernel(), kernel.name());
  stats.total_seconds = since(start);
  return result;
}

}  // namespace tacit::backend
