// One kernel compiled whole (compileKernel, backend/compiler.h): phase 1, the candidate search
// (docs/backend.md, "Candidate search"), phase 2 for each candidate, emission of the best.
#include <iomanip>
#include <sstream>

#include "alloc/allocator.h"
#include "backend/compiler.h"
#include "backend/emit.h"
#include "isel/explain.h"
#include "support/strings.h"

namespace tacit::backend {
namespace {

// How the two limit diagnostics begin: this one, and isel's explanation of a search that found
// no graph within its limits (isel/explain.cc).
constexpr std::string_view kStoppedAtALimit =
    "no instruction graph found before saturation stopped";
constexpr std::string_view kOutsideTheLimits = "no instruction graph within the search limits";

// Why phase 1 gave no candidate. Where saturation stopped at a limit, the operation the
// explanation names may only lack the rewrites that had not run yet, so the limit comes first.
Diagnostic noCandidate(const isel::Selector& selector, const isel::SaturationStats& saturation) {
  Diagnostic d = isel::explainNoCandidate(selector);
  if (saturation.stop == isel::SaturationStop::kSaturated) return d;
  d.message = std::string(kStoppedAtALimit) + " at its " +
              std::string(isel::saturationStopName(saturation.stop)) + " (" +
              plural(static_cast<int64_t>(saturation.iterations), "iteration") + ", " +
              plural(static_cast<int64_t>(saturation.nodes), "e-node") + "); so far " + d.message;
  d.hint = "raise --time-limit (or the e-graph limits): the e-graph was still growing";
  return d;
}

}  // namespace

bool stoppedAtALimit(const Diagnostic& d) {
  return d.message.rfind(kStoppedAtALimit, 0) == 0 || d.message.rfind(kOutsideTheLimits, 0) == 0;
}

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string secondsText(double seconds) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << seconds << " s";
  return out.str();
}

// Phase 2's candidate loop (docs/backend.md, "Candidate search"): allocates each candidate phase 1
// extracts, keeps the best under the cost model and decides when to stop.
class CandidateSearch {
 public:
  CandidateSearch(const isel::Target& target, const hlo::HloModule& kernel,
                  const CompileOptions& options, const KernelHooks& hooks,
                  const isel::Selector& selector, CostModel model, CompileStats& stats,
                  Deadline deadline)
      : target_(target),
        kernel_(kernel),
        options_(options),
        hooks_(hooks),
        selector_(selector),
        model_(model),
        stats_(stats),
        deadline_(deadline) {}

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
      if (options_.progress) {
        options_.progress("phase 2: " + std::to_string(stats_.candidates) + " candidates, " +
                          std::to_string(stats_.allocated) + " placed" +
                          (best_ ? ", best cost " + std::to_string(best_->costs.of(model_)) + " (" +
                                       std::string(costModelName(model_)) + ")"
                                 : ""));
      }
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
    if (deadline_.passed()) {
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
    CandidateRecord record{stats_.candidates, 0, false, 0, ""};
    for (const isel::PiiNode& n : graph.nodes)
      record.calls += n.kind == isel::PiiKind::kCall ? 1 : 0;
    alloc::AllocResult allocation =
        allocateCandidate(target_, graph, selector_.kernel(), options_, model_, deadline_, stats_);
    if (allocation.status != alloc::AllocStatus::kAllocated) {
      ++(allocation.status == alloc::AllocStatus::kLimit ? stats_.solver_limits
                                                         : stats_.infeasible);
      // A candidate the deadline stopped before any order was tried says less than one tried.
      if (allocation.orders_tried > 0 || last_failure_.empty()) last_failure_ = allocation.reason;
      record.note =
          (allocation.status == alloc::AllocStatus::kLimit ? "solver limit: " : "not placed: ") +
          allocation.reason;
      stats_.candidate_log.push_back(std::move(record));
      return;
    }
    ++stats_.allocated;
    ProgramCosts costs = hooks_.costs ? hooks_.costs(graph, allocation)
                                      : measure(target_.isa(), target_.units(), graph, allocation);
    std::optional<oracle::Program> program;
    if (model_ == CostModel::kCycles) {
      program = buildProgram(target_.isa(), target_.units(), graph, allocation, selector_.kernel(),
                             kernel_.name(), target_.needs().hbm_alignment);
      costs.cycles = programCycles(target_.isa(), *program);
    }
    record.placed = true;
    record.cost = costs.of(model_);
    if (best_ && !costs.betterThan(best_->costs, model_)) {
      record.note = "lost to #" + std::to_string(stats_.best_candidate) + " (cost " +
                    std::to_string(best_->costs.of(model_)) + ")";
      stats_.candidate_log.push_back(std::move(record));
      return;
    }
    record.note = best_ ? "best so far (beat #" + std::to_string(stats_.best_candidate) + ")"
                        : "best so far (the first placed)";
    stats_.candidate_log.push_back(std::move(record));
    stats_.best_candidate = stats_.candidates;
    best_.emplace();
    best_->graph = std::move(graph);
    best_->allocation = std::move(allocation);
    best_->costs = costs;
    if (program) best_->program = std::move(*program);
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

  const isel::Target& target_;
  const hlo::HloModule& kernel_;
  const CompileOptions& options_;
  const KernelHooks& hooks_;
  const isel::Selector& selector_;
  const CostModel model_;
  CompileStats& stats_;
  const Deadline deadline_;
  std::optional<CompileResult> best_;
  std::string last_failure_;
  bool out_of_time_ = false;
};

}  // namespace

alloc::AllocResult allocateCandidate(const isel::Target& target, isel::PiiGraph& graph,
                                     const isel::ImportedKernel& kernel,
                                     const CompileOptions& options, CostModel model,
                                     Deadline deadline, CompileStats& stats) {
  Clock::time_point t = Clock::now();
  alloc::AllocOptions alloc_options = options.alloc;
  alloc_options.deadline = alloc_options.deadline.earlier(deadline);
  if (!alloc_options.call_cost)
    alloc_options.call_cost = allocationCost(model, target.isa(), target.units());
  alloc::AllocResult allocation =
      alloc::allocate(target.isa(), target.units(), graph, kernel, alloc_options);
  stats.alloc_seconds += since(t);
  stats.solver_seconds += allocation.solver_seconds;
  stats.orders_tried += allocation.orders_tried;
  stats.rematerialised += allocation.rematerialised;
  if (allocation.status == alloc::AllocStatus::kAllocated && allocation.rewritten)
    graph = std::move(*allocation.rewritten);
  allocation.rewritten.reset();
  return allocation;
}

CompileResult compileKernel(const isel::Target& target, const hlo::HloModule& kernel,
                            const CompileOptions& options, const KernelHooks& hooks,
                            Deadline deadline) {
  Clock::time_point start = Clock::now();
  const taidl::Isa& isa = target.isa();
  CompileResult result;
  result.model = options.cost.value_or(defaultCostModel(isa));
  CompileStats& stats = result.stats;

  isel::SelectorOptions selector_options = options.selector;
  if (options.progress) {
    selector_options.on_iteration = [&](size_t iteration, size_t nodes) {
      options.progress("phase 1: iteration " + std::to_string(iteration) + ", " +
                       std::to_string(nodes) + " e-nodes");
    };
  }
  isel::Selector selector(target, kernel, selector_options);
  stats.import_seconds = since(start);
  Clock::time_point t = Clock::now();
  stats.saturation = selector.saturate(deadline);
  // Set only for a whole compile: the driver plans nothing else with an observer.
  if (options.after_saturation) options.after_saturation(selector);
  stats.saturate_seconds = since(t);

  CompileResult best =
      CandidateSearch(target, kernel, options, hooks, selector, result.model, stats, deadline)
          .run();
  result.graph = std::move(best.graph);
  result.allocation = std::move(best.allocation);
  result.costs = best.costs;
  if (result.model == CostModel::kCycles) {
    result.program = std::move(best.program);  // built to be measured
  } else {
    result.program = buildProgram(isa, target.units(), result.graph, result.allocation,
                                  selector.kernel(), kernel.name(), target.needs().hbm_alignment);
  }
  stats.total_seconds = since(start);
  return result;
}

}  // namespace tacit::backend
