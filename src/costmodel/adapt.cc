#include "costmodel/adapt.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>

namespace tacit::costmodel {
namespace {

// The samples `rows` a model learns from (labels not NaN), ordered by kernel so that a ranking's
// groups are runs of rows; empty x when there are none.
struct Rows {
  std::vector<std::vector<float>> x;
  std::vector<double> y;
  std::vector<unsigned> groups;
};

Rows learnable(const TargetSamples& t, std::vector<size_t> rows) {
  std::stable_sort(rows.begin(), rows.end(),
                   [&](size_t a, size_t b) { return t.kernel[a] < t.kernel[b]; });
  Rows out;
  size_t last = 0;
  for (size_t r : rows) {
    if (std::isnan(t.labels[r])) continue;
    if (out.groups.empty() || t.kernel[r] != last) out.groups.push_back(0);
    ++out.groups.back();
    last = t.kernel[r];
    out.x.push_back(t.x[r]);
    out.y.push_back(t.labels[r]);
  }
  return out;
}

// Candidate `c` fitted to `rows`; none when it learnt nothing from them (no row to learn from: the
// source stands for kContinued, `untrained` for kTarget).
std::optional<Model> fitted(Candidate c, const Model& source, const Rows& rows,
                            const AdaptParams& params) {
  if (c == Candidate::kSource || rows.y.empty()) return std::nullopt;
  if (c == Candidate::kContinued) {
    TrainParams p = params.target;
    p.rounds = params.continued_rounds;
    return Model::train(rows.x, rows.y, p, &source, rows.groups);
  }
  return Model::train(rows.x, rows.y, params.target, nullptr, rows.groups);
}

// Whether candidate `c` can predict after fitting to `rows`.
bool predicts(Candidate c, const Rows& rows, const AdaptParams& params) {
  return c != Candidate::kTarget || !rows.y.empty() || !std::isnan(params.untrained);
}

// Candidate `c`'s outputs for `rows` after fitting to `fit` (`model` its fit; none: as above).
std::vector<double> outputs(Candidate c, const Model& source, const std::optional<Model>& model,
                            const TargetSamples& t, const std::vector<size_t>& rows,
                            const AdaptParams& params) {
  std::vector<std::vector<float>> x;
  for (size_t r : rows)
    x.push_back(t.x[r]);
  if (model) return model->predict(x);
  if (c == Candidate::kTarget) return std::vector<double>(rows.size(), params.untrained);
  return source.predict(x);
}

// The mean absolute logarithm of predicted over actual cycles: how far off, whatever the scale.
double logError(const std::vector<double>& predicted, const std::vector<double>& actual) {
  double sum = 0;
  for (size_t i = 0; i < actual.size(); ++i)
    sum += std::abs(std::log(std::max(1.0, predicted[i]) / std::max(1.0, actual[i])));
  return actual.empty() ? 0 : sum / static_cast<double>(actual.size());
}

}  // namespace

double groupedTau(const std::vector<double>& predicted, const std::vector<double>& actual,
                  const std::vector<size_t>& kernel) {
  std::map<size_t, std::vector<size_t>> by_kernel;
  for (size_t i = 0; i < kernel.size(); ++i)
    by_kernel[kernel[i]].push_back(i);
  double sum = 0, weight = 0;
  for (const auto& [k, rows] : by_kernel) {
    double pairs = 0;
    std::vector<double> p, a;
    for (size_t i = 0; i < rows.size(); ++i) {
      p.push_back(predicted[rows[i]]);
      a.push_back(actual[rows[i]]);
      for (size_t j = 0; j < i; ++j)
        pairs += actual[rows[i]] != actual[rows[j]];
    }
    if (pairs == 0) continue;
    sum += pairs * kendallTau(p, a);
    weight += pairs;
  }
  return weight == 0 ? std::numeric_limits<double>::quiet_NaN() : sum / weight;
}

Adapted adapt(const Model& source, const TargetSamples& t, const AdaptParams& params,
              const ToCycles& to_cycles) {
  const size_t n = t.x.size();
  if (t.labels.size() != n || t.kernel.size() != n || t.cycles.size() != n)
    throw std::logic_error("costmodel::adapt: samples of different lengths");
  // The folds: whole kernels, so that a candidate is scored on kernels it did not learn from, as
  // it will be used; the samples' rows when they hold a single kernel.
  std::vector<size_t> unit_of(n);
  std::map<size_t, size_t> kernels;
  for (size_t i = 0; i < n; ++i)
    kernels.emplace(t.kernel[i], kernels.size());
  const bool by_kernel = kernels.size() >= 2;
  for (size_t i = 0; i < n; ++i)
    unit_of[i] = by_kernel ? kernels.at(t.kernel[i]) : i;
  const size_t units = by_kernel ? kernels.size() : n;
  std::vector<size_t> order(units);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(params.seed);
  std::shuffle(order.begin(), order.end(), rng);
  const size_t folds = std::min(params.folds, units);
  std::vector<size_t> fold_of_unit(units);
  for (size_t i = 0; i < units; ++i)
    fold_of_unit[order[i]] = i % std::max<size_t>(1, folds);

  Adapted out;
  out.scores.fill(std::numeric_limits<double>::quiet_NaN());
  out.errors.fill(std::numeric_limits<double>::quiet_NaN());
  const Candidate candidates[kCandidates] = {Candidate::kSource, Candidate::kContinued,
                                             Candidate::kTarget};
  if (folds >= 2) {
    // Out-of-fold outputs of each candidate, as cycles.
    std::vector<std::vector<double>> predicted(kCandidates, std::vector<double>(n));
    std::vector<bool> possible(kCandidates, true);
    for (size_t f = 0; f < folds; ++f) {
      std::vector<size_t> train, test;
      for (size_t i = 0; i < n; ++i)
        (fold_of_unit[unit_of[i]] == f ? test : train).push_back(i);
      if (test.empty()) continue;
      const Rows rows = learnable(t, train);
      for (size_t c = 0; c < kCandidates; ++c) {
        if (!possible[c] || !predicts(candidates[c], rows, params)) {
          possible[c] = false;
          continue;
        }
        const std::optional<Model> m = fitted(candidates[c], source, rows, params);
        const std::vector<double> o = outputs(candidates[c], source, m, t, test, params);
        for (size_t i = 0; i < test.size(); ++i)
          predicted[c][test[i]] = to_cycles(test[i], o[i]);
      }
    }
    for (size_t c = 0; c < kCandidates; ++c) {
      if (!possible[c]) continue;
      out.scores[c] = groupedTau(predicted[c], t.cycles, t.kernel);
      if (params.predicts_cycles) out.errors[c] = logError(predicted[c], t.cycles);
    }
    // The best score; a tie goes to the smaller error, then to the earlier candidate (the one
    // fitting less to the target).
    auto better = [&](size_t c, size_t than) {
      if (std::isnan(out.scores[c])) return false;
      if (std::isnan(out.scores[than]) || out.scores[c] > out.scores[than]) return true;
      return out.scores[c] == out.scores[than] && out.errors[c] < out.errors[than];
    };
    size_t best = 0;
    for (size_t c = 1; c < kCandidates; ++c)
      if (better(c, best)) best = c;
    out.choice = candidates[best];
  }
  std::vector<size_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  const Rows rows = learnable(t, all);
  out.model = fitted(out.choice, source, rows, params);
  if (!out.model && out.choice != Candidate::kTarget) out.model = source.clone();
  return out;
}

}  // namespace tacit::costmodel
