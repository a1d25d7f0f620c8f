#include "costmodel/model.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <stdexcept>

namespace tacit::costmodel {
namespace {

// XGBoost reports errors by status; any here is a bug of ours (shapes, parameters).
void check(int status, const char* what) {
  if (status != 0)
    throw std::logic_error(std::string("xgboost: ") + what + ": " + XGBGetLastError());
}

struct Matrix {
  DMatrixHandle handle = nullptr;
  Matrix(const std::vector<std::vector<float>>& x, const std::vector<double>* cycles) {
    const size_t rows = x.size(), cols = rows ? x.front().size() : 0;
    std::vector<float> flat;
    flat.reserve(rows * cols);
    for (const std::vector<float>& r : x) {
      if (r.size() != cols) throw std::logic_error("costmodel: rows of different widths");
      flat.insert(flat.end(), r.begin(), r.end());
    }
    check(XGDMatrixCreateFromMat(flat.data(), rows, cols, NAN, &handle), "matrix");
    if (cycles) {
      std::vector<float> label;
      for (double c : *cycles)
        label.push_back(static_cast<float>(std::log(std::max(1.0, c))));
      check(XGDMatrixSetFloatInfo(handle, "label", label.data(), label.size()), "labels");
    }
  }
  ~Matrix() { XGDMatrixFree(handle); }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
};

}  // namespace

struct Model::Booster {
  BoosterHandle handle = nullptr;
  ~Booster() {
    if (handle) XGBoosterFree(handle);
  }
};

namespace {

// Loads the trees (and the learner's parameters) of booster `from` into booster `to`.
void loadTrees(BoosterHandle from, BoosterHandle to) {
  bst_ulong len = 0;
  const char* buf = nullptr;
  check(XGBoosterSaveModelToBuffer(from, R"({"format": "ubj"})", &len, &buf), "save base");
  check(XGBoosterLoadModelFromBuffer(to, buf, len), "load base");
}

}  // namespace

Model::Model() = default;
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

bool Model::trained() const {
  return booster_ != nullptr;
}

Model Model::clone() const {
  Model out;
  if (!trained()) return out;
  out.booster_ = std::make_unique<Booster>();
  check(XGBoosterCreate(nullptr, 0, &out.booster_->handle), "create");
  loadTrees(booster_->handle, out.booster_->handle);
  check(XGBoosterSetParam(out.booster_->handle, "nthread", "1"), "threads");
  return out;
}

Model Model::train(const std::vector<std::vector<float>>& x, const std::vector<double>& cycles,
                   const TrainParams& params, const Model* base,
                   const std::vector<unsigned>& groups) {
  Matrix m(x, &cycles);
  const bool ranking = params.objective == TrainParams::Objective::kRanking;
  if (ranking) {
    std::vector<unsigned> g =
        groups.empty() ? std::vector<unsigned>{static_cast<unsigned>(x.size())} : groups;
    check(XGDMatrixSetUIntInfo(m.handle, "group", g.data(), g.size()), "groups");
  }
  Model out;
  out.booster_ = std::make_unique<Booster>();
  check(XGBoosterCreate(&m.handle, 1, &out.booster_->handle), "create");
  BoosterHandle h = out.booster_->handle;
  if (base && base->trained()) loadTrees(base->booster_->handle, h);
  const std::string depth = std::to_string(params.depth), eta = std::to_string(params.eta),
                    seed = std::to_string(params.seed);
  check(XGBoosterSetParam(h, "objective", ranking ? "rank:pairwise" : "reg:squarederror"),
        "objective");
  check(XGBoosterSetParam(h, "max_depth", depth.c_str()), "depth");
  check(XGBoosterSetParam(h, "eta", eta.c_str()), "eta");
  check(XGBoosterSetParam(h, "seed", seed.c_str()), "seed");
  check(XGBoosterSetParam(h, "nthread", "1"), "threads");  // deterministic
  check(XGBoosterSetParam(h, "verbosity", "0"), "verbosity");
  int first = 0;
  if (base && base->trained()) check(XGBoosterBoostedRounds(h, &first), "rounds");
  for (int i = 0; i < params.rounds; ++i)
    check(XGBoosterUpdateOneIter(h, first + i, m.handle), "train");
  return out;
}

std::vector<double> Model::predict(const std::vector<std::vector<float>>& x) const {
  if (!trained()) throw std::logic_error("costmodel: predict before train");
  if (x.empty()) return {};
  Matrix m(x, nullptr);
  bst_ulong len = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(booster_->handle, m.handle, 0, 0, 0, &len, &out), "predict");
  // Regression predicts log cycles; a ranker's scores grow with the cycles (its labels), and
  // exp keeps that order.
  std::vector<double> cycles;
  for (bst_ulong i = 0; i < len; ++i)
    cycles.push_back(std::exp(static_cast<double>(out[i])));
  return cycles;
}

double kendallTau(const std::vector<double>& a, const std::vector<double>& b) {
  int64_t concordant = 0, discordant = 0, ties_a = 0, ties_b = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = i + 1; j < a.size(); ++j) {
      const double da = a[i] - a[j], db = b[i] - b[j];
      if (da == 0 && db == 0) continue;
      if (da == 0) {
        ++ties_a;
      } else if (db == 0) {
        ++ties_b;
      } else if ((da > 0) == (db > 0)) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  }
  const double n1 = static_cast<double>(concordant + discordant + ties_a);
  const double n2 = static_cast<double>(concordant + discordant + ties_b);
  if (n1 == 0 || n2 == 0) return 0;
  return static_cast<double>(concordant - discordant) / std::sqrt(n1 * n2);
}

double mape(const std::vector<double>& predicted, const std::vector<double>& actual) {
  double sum = 0;
  for (size_t i = 0; i < actual.size(); ++i)
    sum += std::abs(predicted[i] - actual[i]) / std::max(1.0, std::abs(actual[i]));
  return actual.empty() ? 0 : sum / static_cast<double>(actual.size());
}

}  // namespace tacit::costmodel
