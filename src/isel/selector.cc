#include "isel/selector.h"

#include "egraph/runner.h"
#include "isel/passes.h"

namespace tacit::isel {

std::string_view saturationStopName(SaturationStop s) {
  switch (s) {
    case SaturationStop::kSaturated:
      return "saturated";
    case SaturationStop::kIterationLimit:
      return "iteration limit";
    case SaturationStop::kNodeLimit:
      return "e-node limit";
    case SaturationStop::kTimeLimit:
      return "time limit";
  }
  return "saturated";
}

Selector::Selector(const Target& target, const hlo::HloModule& kernel, SelectorOptions options)
    : target_(target),
      options_(options),
      g_(ir_.language()),
      shapes_(&g_.addAnalysis<ShapeAnalysis>(ir_)),
      consts_(&g_.addAnalysis<ConstAnalysis>(ir_)),
      builder_(g_, ir_, *shapes_),
      kernel_(importKernel(kernel, builder_,
                           alignedImport(options.import, target.needs().hbm_alignment))),
      matcher_(target.isa(), target.units(), builder_),
      view_pass_(g_, builder_) {
  std::vector<ClassId> results;
  for (const KernelResult& r : kernel_.results)
    results.push_back(r.bytes_class);
  results_ = g_.add(ir_.resultsOp(), results);
  g_.rebuild();
  for (const IrRule* r : target.rules()) {
    for (egraph::Rewrite& w : r->rewrites(builder_, target.needs()))
      rules_.push_back(std::move(w));
  }
}

// One selector iteration: the rules, the passes, matching; returns the number of changes.
size_t Selector::iterate(SaturationIteration& it) {
  using Clock = std::chrono::steady_clock;
  auto lap = [t = Clock::now()]() mutable {
    Clock::time_point now = Clock::now();
    double s = std::chrono::duration<double>(now - t).count();
    t = now;
    return s;
  };
  const size_t before_nodes = g_.nodeCount();
  size_t changes = 0;
  if (!rules_.empty()) {
    egraph::Runner runner(g_, egraph::Limits{.max_nodes = options_.max_nodes, .max_iterations = 1});
    runner.setApplied(&applied_).run(rules_);
  }
  it.rules_seconds = lap();
  changes += view_pass_.run().unions;
  it.views_seconds = lap();
  changes += runConstantFoldPass(g_, builder_).unions;
  changes += runRowSplitPass(g_, builder_, 256, &view_pass_.views()).unions;
  it.passes_seconds = lap();
  // The unit patterns are one client rule of an engine iteration of their own, after the passes
  // (they read the views the passes keep). Its limits are the selector's, checked after the
  // iteration: none here.
  matcher_.setViews(&view_pass_.views());
  egraph::ClientRule* matching[] = {&matcher_};
  egraph::RunReport matched =
      egraph::Runner(g_, egraph::Limits{.max_nodes = SIZE_MAX,
                                        .max_iterations = 1,
                                        .max_time = std::chrono::nanoseconds::max()})
          .run({}, matching);
  changes += matched.iterations.at(0).rules.at(0).applied;
  changes += matcher_.writeRegions(kernel_.results);
  g_.rebuild();
  it.matching_seconds = lap();
  it.nodes = g_.nodeCount();
  it.classes = g_.classCount();
  return changes + (g_.nodeCount() - std::min(g_.nodeCount(), before_nodes));
}

SaturationStats Selector::saturate(Deadline deadline) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  SaturationStats stats;
  stats.initial_nodes = g_.nodeCount();
  stats.stop = SaturationStop::kIterationLimit;
  for (size_t k = 0; k < options_.max_iterations && !saturated_; ++k) {
    size_t changes = iterate(stats.per_iteration.emplace_back());
    ++stats.iterations;
    if (options_.on_iteration) options_.on_iteration(stats.iterations, g_.nodeCount());
    if (changes == 0) {
      saturated_ = true;
      stats.stop = SaturationStop::kSaturated;
    } else if (g_.nodeCount() > options_.max_nodes) {
      stats.stop = SaturationStop::kNodeLimit;
      break;
    } else if (deadline.passed()) {
      stats.stop = SaturationStop::kTimeLimit;
      break;
    }
  }
  if (saturated_) stats.stop = SaturationStop::kSaturated;
  stats.nodes = g_.nodeCount();
  stats.classes = g_.classCount();
  for (ClassId c : g_.classes()) {
    for (NodeId n : g_.nodes(c))
      stats.piis += g_.node(n).op() == ir_.piiOp();
  }
  stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return stats;
}

std::unique_ptr<CandidateExtractor> Selector::extractor(ExtractOptions options) const {
  std::vector<int32_t> resident;
  for (const KernelResult& r : kernel_.results)
    resident.push_back(r.resident ? r.resident->buffer : 0);
  return std::make_unique<CandidateExtractor>(g_, ir_, *shapes_, target_.isa(), target_.units(),
                                              g_.find(results_), options, std::move(resident));
}

}  // namespace tacit::isel
