#include "backend/compiler.h"

#include <iomanip>
#include <sstream>

#include "alloc/allocator.h"
#include "backend/emit.h"
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
      << isel::saturationStopName(saturation.stop) << ")\n"
      << "time: import " << import_seconds * 1e3 << " ms, saturation " << saturate_seconds * 1e3
      << " ms, extraction " << extract_seconds * 1e3 << " ms, allocation " << alloc_seconds * 1e3
      << " ms (solver " << solver_seconds * 1e3 << " ms), total " << total_seconds * 1e3 << " ms\n"
      << "candidates: " << candidates << " examined, " << allocated << " allocated, " << infeasible
      << " infeasible, " << solver_limits << " hit the solver limit; best #" << best_candidate
      << "; " << orders_tried << " orders tried, " << rematerialised << " values rematerialised\n"
      << "search ended: " << stop << "\n";
  return out.str();
}

std::string CompileStats::json() const {
  std::ostringstream out;
  out << "{\"enodes\": " << saturation.nodes << ", \"eclasses\": " << saturation.classes
      << ", \"piis\": " << saturation.piis << ", \"iterations\": " << saturation.iterations
      << ", \"saturation\": \"" << isel::saturationStopName(saturation.stop)
      << "\", \"import_ms\": " << import_seconds * 1e3
      << ", \"saturation_ms\": " << saturate_seconds * 1e3
      << ", \"extraction_ms\": " << extract_seconds * 1e3
      << ", \"allocation_ms\": " << alloc_seconds * 1e3
      << ", \"solver_ms\": " << solver_seconds * 1e3 << ", \"total_ms\": " << total_seconds * 1e3
      << ", \"candidates\": " << candidates << ", \"allocated\": " << allocated
      << ", \"infeasible\": " << infeasible << ", \"solver_limits\": " << solver_limits
      << ", \"best_candidate\": " << best_candidate << ", \"orders_tried\": " << orders_tried
      << ", \"rematerialised\": " << rematerialised << ", \"stop\": \"" << stop << "\"}";
  return out.str();
}

CompileResult compile(const taidl::Isa& isa, const hlo::HloModule& kernel,
                      const CompileOptions& options) {
  Clock::time_point start = Clock::now();
  CompileResult result;
  result.model = options.cost.value_or(defaultCostModel(isa));
  CompileStats& stats = result.stats;

  isel::Selector selector(isa, kernel, options.selector);
  stats.import_seconds = since(start);
  Clock::time_point t = Clock::now();
  stats.saturation = selector.saturate();
  if (options.after_saturation) options.after_saturation(selector);
  stats.saturate_seconds = since(t);

  auto extractor = selector.extractor(options.extract);
  std::optional<CompileResult> best;
  std::string last_failure;
  bool out_of_time = false;
  stats.stop = "every candidate within the size bound was examined";
  while (true) {
    if (stats.candidates >= options.max_candidates) {
      stats.stop = "candidate limit (" + std::to_string(options.max_candidates) + ")";
      break;
    }
    if (Clock::now() - start > options.time_limit) {
      stats.stop = "time limit";
      out_of_time = true;
      break;
    }
    if (best) {
      size_t patience = std::max(
          options.min_patience,
          static_cast<size_t>(options.patience_factor * static_cast<double>(stats.best_candidate)));
      if (stats.candidates - stats.best_candidate >= patience) {
        stats.stop =
            "no better program in " + std::to_string(patience) + " candidates after the best";
        break;
      }
    }
    t = Clock::now();
    std::optional<isel::PiiGraph> graph = extractor->next();
    stats.extract_seconds += since(t);
    if (!graph) break;
    ++stats.candidates;
    t = Clock::now();
    alloc::AllocOptions alloc_options = options.alloc;
    alloc_options.deadline = std::min(alloc_options.deadline, start + options.time_limit);
    if (!alloc_options.call_cost)
      alloc_options.call_cost = allocationCost(result.model, isa, selector.units());
    alloc::AllocResult allocation =
        alloc::allocate(isa, selector.units(), *graph, selector.kernel(), alloc_options);
    stats.alloc_seconds += since(t);
    stats.solver_seconds += allocation.solver_seconds;
    stats.orders_tried += allocation.orders_tried;
    stats.rematerialised += allocation.rematerialised;
    if (allocation.status != alloc::AllocStatus::kAllocated) {
      ++(allocation.status == alloc::AllocStatus::kLimit ? stats.solver_limits : stats.infeasible);
      // A candidate the deadline stopped before any order was tried says less than one tried.
      if (allocation.orders_tried > 0 || last_failure.empty()) last_failure = allocation.reason;
      continue;
    }
    ++stats.allocated;
    if (allocation.rewritten) graph = std::move(*allocation.rewritten);
    allocation.rewritten.reset();
    ProgramCosts costs = measure(isa, selector.units(), *graph, allocation);
    if (!best || costs.betterThan(best->costs, result.model)) {
      stats.best_candidate = stats.candidates;
      CompileResult r;
      r.graph = std::move(*graph);
      r.allocation = std::move(allocation);
      r.costs = costs;
      best = std::move(r);
    }
  }
  if (!best) {
    // Phase 1 may have used the whole time limit: whether it found a candidate decides what the
    // user is told (a computable kernel must not be reported as inexpressible).
    if (stats.candidates == 0) {
      if (!out_of_time || !extractor->next())
        throw DiagnosticError(noCandidate(selector, stats.saturation));
      fail(kernel.sourceFile(), {},
           "the time limit (" +
               secondsText(std::chrono::duration<double>(options.time_limit).count()) +
               ") was reached before any instruction graph could be placed: phase 1 took " +
               secondsText(stats.import_seconds + stats.saturate_seconds),
           "raise --time-limit");
    }
    fail(kernel.sourceFile(), {},
         "no instruction graph of the kernel can be placed in the ISA's buffers (" +
             std::to_string(stats.candidates) + " candidates tried; last: " + last_failure + ")",
         "the kernel may be too large for the buffers; raise --time-limit to try more candidates");
  }
  result.graph = std::move(best->graph);
  result.allocation = std::move(best->allocation);
  result.costs = best->costs;
  result.program = buildProgram(isa, selector.units(), result.graph, result.allocation,
                                selector.kernel(), kernel.name());
  stats.total_seconds = since(start);
  return result;
}

}  // namespace tacit::backend
