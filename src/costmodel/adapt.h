// Transfer of a learned cost model to a new accelerator (docs/costmodel.md, "Transfer"): a model
// trained on a mature design's programs, and k programs of the new design labelled by the timing
// model. Whether the source's relation between features and cycles holds on the target is not
// known in advance — on a design whose probe is exact for every program the source's corrections
// only blur an order that is already right — so it is asked of the k samples themselves:
// cross-validation, grouped by kernel as the model will be used (on kernels it has not seen),
// chooses among three candidates:
//
//   kSource     the source model as it is (nothing fitted to the target);
//   kContinued  the source model continued with more rounds fitted to the k samples (its trees
//               kept: XGBoost's continued training);
//   kTarget     a model trained on the k samples alone.
//
// Each candidate's score is the within-kernel Kendall tau-b of its out-of-fold predictions (for
// kSource, its predictions: it learns nothing from the samples), pooled over the kernels by their
// pairs of programs of different cycles: the ranking a search needs, measured on kernels the
// candidate did not learn from. The best score wins. An exact tie (on a design whose programs the
// probe predicts exactly, every candidate may order the k samples perfectly) goes to the smaller
// error of the out-of-fold cycles (mean absolute log error), when the outputs are cycles; then to
// the candidate that fits less to the target (kSource, then kContinued): without evidence against
// the source, keep it.
// The chosen candidate is then fitted to all k samples. Deterministic for a seed. With fewer than
// two samples there is nothing to cross-validate: the source is kept as it is.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "costmodel/model.h"

namespace tacit::costmodel {

struct TargetSamples {
  std::vector<std::vector<float>> x;  // features, the source model's columns
  // What a model learns for each sample (cycles, or a correction of the probe: gate.h); NaN for a
  // sample it does not learn from (a gated model's program whose probe extrapolated nothing),
  // which is still scored.
  std::vector<double> labels;
  std::vector<size_t> kernel;  // the kernel each sample is a schedule of: folds and rankings
  std::vector<double> cycles;  // the timing model's cycles: what the candidates are scored on
};

// A model's output for sample `row` as cycles, or as scores in the cycles' order (the identity for
// a regression of cycles or a ranking; a gated model's correction applied to the row's probe).
using ToCycles = std::function<double(size_t row, double output)>;

struct AdaptParams {
  TrainParams target;         // the model on the target samples alone (and the objective)
  int continued_rounds = 50;  // kContinued: rounds fitted to the samples after the source's
  size_t folds = 5;           // at most; one per kernel when the samples hold fewer kernels
  uint64_t seed = 1;          // the kernels' assignment to folds
  // Whether ToCycles returns cycles (false for a ranking's scores, whose errors mean nothing):
  // then a tie in the score goes to the smaller error.
  bool predicts_cycles = true;
  // The output of a model that had no sample to learn from (a gated model's "no correction");
  // NaN: such a model is not a candidate.
  double untrained = std::numeric_limits<double>::quiet_NaN();
};

enum class Candidate { kSource, kContinued, kTarget };
inline constexpr size_t kCandidates = 3;

struct Adapted {
  Candidate choice = Candidate::kSource;
  // The chosen candidate fitted to all samples; none when it learnt from no sample (kTarget with
  // every label NaN): its output is AdaptParams::untrained.
  std::optional<Model> model;
  // Each candidate's cross-validated score (NaN: not a candidate, or no kernel with two programs
  // of different cycles to score it on).
  std::array<double, kCandidates> scores{};
  // Their out-of-fold mean absolute log error of the cycles (NaN: not a candidate, or outputs that
  // are not cycles).
  std::array<double, kCandidates> errors{};
};

Adapted adapt(const Model& source, const TargetSamples& target, const AdaptParams& params,
              const ToCycles& to_cycles);

// Kendall's tau-b of `predicted` against `actual` within each kernel, averaged over the kernels
// weighted by their pairs of different `actual`; NaN when no kernel has such a pair.
double groupedTau(const std::vector<double>& predicted, const std::vector<double>& actual,
                  const std::vector<size_t>& kernel);

}  // namespace tacit::costmodel
