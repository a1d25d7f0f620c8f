// costmodel::adapt (adapt.h): cross-validation on a new design's k samples, by kernel, decides
// whether a source model's relation between features and cycles is kept. Synthetic designs: one
// whose cycles follow another feature than the source's (the source must be dropped for a model
// of the target alone), and one whose cycles are the source's scaled (the source must be kept).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "costmodel/adapt.h"
#include "costmodel/model.h"

namespace tacit::costmodel {
namespace {

// `kernels` kernels of `per` programs each: features (a, b, kernel size), cycles `f(a, b)` times
// the kernel's size (kernels differ in scale as GEMM shapes do).
template <typename F>
TargetSamples design(size_t kernels, size_t per, uint64_t seed, F f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(0, 10);
  TargetSamples t;
  for (size_t k = 0; k < kernels; ++k) {
    const float size = static_cast<float>(1 + k);
    for (size_t i = 0; i < per; ++i) {
      const float a = u(rng), b = u(rng);
      t.x.push_back({a, b, size});
      t.cycles.push_back(size * f(a, b));
      t.labels.push_back(t.cycles.back());
      t.kernel.push_back(k);
    }
  }
  return t;
}

double identity(size_t, double output) {
  return output;
}

// The source's cycles grow with a; the target's only with b (an engine the source never bound
// on). The source orders the target's programs at random: cross-validation on 40 samples of four
// kernels sees it, and the model of the target alone, which learns b, is chosen; it ranks an unseen
// kernel of the target as well as a model given its programs could.
TEST(Adapt, DropsASourceWhoseRelationIsWrongForTheTarget) {
  auto source_cycles = [](float a, float) { return 100.0 + 10.0 * a; };
  auto target_cycles = [](float, float b) { return 100.0 + 10.0 * b; };
  const TargetSamples source = design(6, 40, 1, source_cycles);
  const Model base = Model::train(source.x, source.labels, {});
  const TargetSamples few = design(4, 10, 2, target_cycles);
  const TargetSamples unseen = design(1, 60, 3, target_cycles);

  const Adapted adapted = adapt(base, few, {}, identity);
  EXPECT_EQ(adapted.choice, Candidate::kTarget);
  EXPECT_LT(adapted.scores[0], 0.3);  // the source, scored on the samples
  EXPECT_GT(adapted.scores[2], 0.6);  // the target alone, out of fold (trained on three kernels)
  ASSERT_TRUE(adapted.model);
  EXPECT_LT(kendallTau(base.predict(unseen.x), unseen.cycles), 0.3);
  EXPECT_GT(kendallTau(adapted.model->predict(unseen.x), unseen.cycles), 0.8);
}

// The target's cycles are the source's tripled (a design three times as slow in every engine):
// the source's order is right. Fifteen samples of five kernels are too few for a model of them
// alone to learn the parabola in a; cross-validation keeps the source (as it is, or continued),
// and the result ranks an unseen kernel as the source does, better than a model of the samples.
TEST(Adapt, KeepsASourceWhoseRelationHoldsOnTheTarget) {
  auto source_cycles = [](float a, float b) { return 100.0 + 10.0 * (a - 5) * (a - 5) + 5.0 * b; };
  auto target_cycles = [&](float a, float b) { return 3.0 * source_cycles(a, b); };
  const TargetSamples source = design(6, 100, 4, source_cycles);
  const Model base = Model::train(source.x, source.labels, {});
  const TargetSamples few = design(5, 3, 5, target_cycles);
  const TargetSamples unseen = design(1, 60, 6, target_cycles);

  const Adapted adapted = adapt(base, few, {}, identity);
  EXPECT_NE(adapted.choice, Candidate::kTarget);
  EXPECT_GT(adapted.scores[0], adapted.scores[2]) << adapted.scores[1];
  ASSERT_TRUE(adapted.model);
  const double kept = kendallTau(adapted.model->predict(unseen.x), unseen.cycles);
  EXPECT_GE(kept, kendallTau(base.predict(unseen.x), unseen.cycles) - 0.02);
  const Model alone = Model::train(few.x, few.labels, {});
  EXPECT_GT(kept, kendallTau(alone.predict(unseen.x), unseen.cycles) + 0.1);
  // Deterministic: the same samples and seed choose and predict the same.
  const Adapted again = adapt(base, few, {}, identity);
  EXPECT_EQ(again.choice, adapted.choice);
  EXPECT_EQ(again.model->predict(unseen.x), adapted.model->predict(unseen.x));
}

// A design whose cycles a probe predicts exactly (as TPUv1's and Trainium's): every correction is
// 1 (label 1000), while the source learnt corrections that vary with a. Every candidate may order
// the samples perfectly (the correction scales each program's cycles, ties and all, only where
// `a` orders them as `b` does): the tie goes to the smaller error, the model of the target alone
// that learnt the correction 1.
TEST(Adapt, ATieInTheRankingGoesToTheSmallerError) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> u(0, 10);
  TargetSamples source;
  for (size_t i = 0; i < 200; ++i) {
    const float a = u(rng);
    source.x.push_back({a, u(rng)});
    source.labels.push_back(1000 * (1 + a / 10));  // corrections from 1 to 2
  }
  const Model base = Model::train(source.x, source.labels, {});
  TargetSamples few;
  std::vector<double> extrapolated;
  for (size_t k = 0; k < 4; ++k) {
    for (size_t i = 0; i < 10; ++i) {
      // The probe's extrapolated cycles, in the order of a: any correction growing with a keeps
      // the order.
      const float a = static_cast<float>(i);
      few.x.push_back({a, u(rng)});
      extrapolated.push_back(100.0 * (1 + static_cast<double>(k)) * (1 + i));
      few.cycles.push_back(extrapolated.back());
      few.labels.push_back(1000);
      few.kernel.push_back(k);
    }
  }
  const ToCycles gated = [&](size_t row, double output) {
    return std::round(extrapolated[row] * output / 1000);
  };
  const Adapted adapted = adapt(base, few, {}, gated);
  EXPECT_EQ(adapted.scores[0], adapted.scores[2]);  // both order the samples perfectly
  EXPECT_LT(adapted.errors[2], adapted.errors[0]);
  EXPECT_EQ(adapted.choice, Candidate::kTarget);
}

TEST(Adapt, GroupedTauRanksWithinKernelsWeightedByPairs) {
  // Kernel 0: three programs in order (three pairs, tau 1); kernel 1: two reversed (one pair, tau
  // -1); kernel 2: two of equal cycles (no pair, left out). Across kernels the scales disagree,
  // which a within-kernel tau ignores.
  const std::vector<size_t> kernel = {0, 0, 0, 1, 1, 2, 2};
  const std::vector<double> actual = {1, 2, 3, 100, 200, 5, 5};
  const std::vector<double> predicted = {1000, 2000, 3000, 2, 1, 7, 9};
  EXPECT_DOUBLE_EQ(groupedTau(predicted, actual, kernel), (3 * 1.0 + 1 * -1.0) / 4);
  EXPECT_TRUE(std::isnan(groupedTau({1, 2}, {5, 5}, {0, 0})));
}

}  // namespace
}  // namespace tacit::costmodel
