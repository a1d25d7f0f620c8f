// A learned cost model (docs/costmodel.md): gradient-boosted regression trees (XGBoost, Debian's
// libxgboost-dev, through its C API) from program features (features.h) to the logarithm of the
// timing model's cycles. Ranking schedules is what a search needs from it: kendallTau measures it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tacit::costmodel {

struct TrainParams {
  // kRegression predicts cycles (log-squared error); kRanking learns the order of the programs
  // within each group (pairwise, XGBoost's rank:pairwise): what a search over one kernel's
  // schedules needs, without spending the trees on the differences between kernels.
  enum class Objective { kRegression, kRanking } objective = Objective::kRegression;
  int rounds = 200;
  int depth = 6;
  double eta = 0.1;
  uint64_t seed = 1;
};

class Model {
 public:
  Model();
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  // Trains on `x` (one row of features per program, all of one width) against `cycles`. With
  // `base`, continues from it (its trees kept, `params.rounds` more fitted to these rows): how a
  // model trained on one accelerator is adapted to another with a few of its samples.
  // `groups`: for kRanking, the sizes of the consecutive runs of rows ranked among themselves.
  static Model train(const std::vector<std::vector<float>>& x, const std::vector<double>& cycles,
                     const TrainParams& params, const Model* base = nullptr,
                     const std::vector<unsigned>& groups = {});
  // Cycles (kRegression), or scores that order programs as their cycles do (kRanking).
  std::vector<double> predict(const std::vector<std::vector<float>>& x) const;
  bool trained() const;
  // A copy: the same trees, predicting the same.
  Model clone() const;

 private:
  struct Booster;
  std::unique_ptr<Booster> booster_;
};

// Kendall's tau-b between two rankings (1: the same order, -1: reversed).
double kendallTau(const std::vector<double>& a, const std::vector<double>& b);
// Mean absolute percentage error of `predicted` against `actual`.
double mape(const std::vector<double>& predicted, const std::vector<double>& actual);

}  // namespace tacit::costmodel
