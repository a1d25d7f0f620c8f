// Phase 1 driver: kernel import, saturation (IR→IR rules, view and constant passes, IR→ISA
// matching) under limits, and candidate extraction (docs/isel.md).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "egraph/rewrite.h"
#include "egraph/runner.h"
#include "isel/extract.h"
#include "isel/isa_match.h"
#include "isel/kernel.h"
#include "isel/passes.h"
#include "isel/rules.h"
#include "isel/target.h"
#include "isel/units.h"
#include "support/deadline.h"

namespace tacit::isel {

// Limits of the e-graph's growth; its time is the caller's deadline (saturate).
struct SelectorOptions {
  size_t max_nodes = 50'000;
  size_t max_iterations = 16;
  ImportOptions import;  // result windows (tiled compilation)
  // Called after each saturation iteration with its number (from 1) and the e-graph's size: a
  // progress display's hook (support/progress.h), nothing more.
  std::function<void(size_t iteration, size_t nodes)> on_iteration;
};

enum class SaturationStop { kSaturated, kIterationLimit, kNodeLimit, kTimeLimit };
std::string_view saturationStopName(SaturationStop s);

// Where one selector iteration's time went (docs/isel.md, "Saturation"), and the e-graph after it.
struct SaturationIteration {
  double rules_seconds = 0;     // one engine iteration of the IR rules
  double views_seconds = 0;     // the view pass
  double passes_seconds = 0;    // constant folding and the row split
  double matching_seconds = 0;  // IR→ISA matching and region writes
  size_t nodes = 0;
  size_t classes = 0;
};

struct SaturationStats {
  size_t initial_nodes = 0;  // the imported kernel's e-graph
  size_t iterations = 0;
  std::vector<SaturationIteration> per_iteration;
  size_t nodes = 0;
  size_t classes = 0;
  size_t piis = 0;
  SaturationStop stop = SaturationStop::kSaturated;
  double seconds = 0;
};

class Selector {
 public:
  // Imports `kernel` (DiagnosticError for what the compiler cannot model). `target` must outlive
  // the Selector.
  Selector(const Target& target, const hlo::HloModule& kernel, SelectorOptions options = {});
  Selector(const Selector&) = delete;
  Selector& operator=(const Selector&) = delete;

  // Rewrites until saturation, a limit, or `deadline` has passed after an iteration. May be called
  // again (a no-op once saturated).
  SaturationStats saturate(Deadline deadline = {});

  // An extractor over the current (saturated) e-graph.
  std::unique_ptr<CandidateExtractor> extractor(ExtractOptions options) const;

  const Target& target() const { return target_; }
  const UnitSet& units() const { return target_.units(); }
  const ImportedKernel& kernel() const { return kernel_; }
  const egraph::EGraph& egraph() const { return g_; }
  const IrLanguage& ir() const { return ir_; }
  const ShapeAnalysis& shapes() const { return *shapes_; }
  ClassId resultsClass() const { return g_.find(results_); }
  const IsaMatcher& matcher() const { return matcher_; }
  const taidl::Isa& isa() const { return target_.isa(); }
  const IsaNeeds& needs() const { return target_.needs(); }
  const std::vector<const IrRule*>& rules() const { return target_.rules(); }

 private:
  size_t iterate(SaturationIteration& it);

  const Target& target_;
  SelectorOptions options_;
  IrLanguage ir_;
  egraph::EGraph g_;
  ShapeAnalysis* shapes_;
  ConstAnalysis* consts_;
  IrBuilder builder_;
  ImportedKernel kernel_;
  ClassId results_;
  IsaMatcher matcher_;
  std::vector<egraph::Rewrite> rules_;
  egraph::AppliedMatches applied_;  // the rules' matches applied by earlier iterations
  ViewPass view_pass_;              // what it learnt in earlier iterations
  bool saturated_ = false;
};

}  // namespace tacit::isel
