#include "backend/verify.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "hlo_eval/evaluator.h"
#include "hlo_eval/random_literal.h"
#include "oracle/machine.h"

namespace tacit::backend {
namespace {

hlo::Shape entryParameterShape(const hlo::HloModule& m, int64_t i) {
  if (m.entryLayout() && static_cast<size_t>(i) < m.entryLayout()->parameters.size()) {
    return m.entryLayout()->parameters[static_cast<size_t>(i)];
  }
  return m.entry()->parameter(i)->shape();
}

std::vector<hlo::Shape> resultShapes(const hlo::HloModule& m) {
  hlo::Shape r = m.entryLayout() ? m.entryLayout()->result : m.entry()->root()->shape();
  return r.isTuple() ? r.tupleShapes() : std::vector<hlo::Shape>{r};
}

// The first element where two results differ (bitwise, or beyond the tolerance), as text.
std::string firstDifference(const hlo::Literal& got, const hlo::Literal& want,
                            const VerifyOptions& opt) {
  bool tolerant = hlo::isFloat(want.shape().elementType()) && (opt.atol > 0 || opt.rtol > 0);
  if (!tolerant && got.bitwiseEqual(want)) return {};
  int64_t n = want.elementCount();
  int width = hlo::byteSize(want.shape().elementType());
  for (int64_t i = 0; i < n; ++i) {
    bool same;
    if (tolerant) {
      double a = got.getDouble(i), b = want.getDouble(i);
      same = (std::isnan(a) && std::isnan(b)) ||
             std::fabs(a - b) <= opt.atol + opt.rtol * std::fabs(b);
    } else {
      same = std::memcmp(got.bytes() + i * width, want.bytes() + i * width,
                         static_cast<size_t>(width)) == 0;
    }
    if (!same) {
      return "element " + std::to_string(i) + ": oracle " + std::to_string(got.getDouble(i)) +
             ", HLO evaluator " + std::to_string(want.getDouble(i));
    }
  }
  return {};
}

// The largest absolute and relative differences of float results from the user's kernel's.
void measureDeviation(const hlo::Literal& got, const hlo::Literal& original, VerifyReport& report) {
  if (!hlo::isFloat(original.shape().elementType())) return;
  for (int64_t i = 0; i < original.elementCount(); ++i) {
    const double a = got.getDouble(i), b = original.getDouble(i);
    if (std::isnan(a) || std::isnan(b)) continue;
    const double d = std::fabs(a - b);
    report.deviation = std::max(report.deviation, d);
    if (b != 0) report.relative_deviation = std::max(report.relative_deviation, d / std::fabs(b));
  }
}

}  // namespace

VerifyReport verify(const taidl::Isa& isa, const hlo::HloModule& kernel,
                    const oracle::Program& program, const VerifyOptions& options) {
  VerifyReport report;
  std::vector<const oracle::Tensor*> inputs, outputs;
  for (const oracle::Tensor& t : program.tensors) {
    if (t.kind == oracle::TensorKind::kInput) inputs.push_back(&t);
    if (t.kind == oracle::TensorKind::kOutput) outputs.push_back(&t);
  }
  std::vector<hlo::Shape> results = resultShapes(kernel);
  for (int set = 0; set < options.sets; ++set) {
    std::vector<hlo::Literal> args;
    std::map<std::string, hlo::Literal> oracle_inputs;
    for (int64_t i = 0; i < kernel.entry()->parameterCount(); ++i) {
      hlo::Shape shape = entryParameterShape(kernel, i);
      hlo::Shape logical(shape.elementType(), shape.dims());
      args.push_back(hlo::randomLiteral(
          logical,
          options.seed * 7919 + static_cast<uint64_t>(set) * 104729 + static_cast<uint64_t>(i)));
      oracle_inputs[inputs[static_cast<size_t>(i)]->name] = isel::toPhysical(args.back(), shape);
    }
    hlo::Literal expected = hlo::evaluate(kernel, args);
    std::optional<hlo::Literal> original;
    if (options.original) original = hlo::evaluate(*options.original, args);
    std::map<std::string, hlo::Literal> got = oracle::run(isa, program, oracle_inputs);
    for (size_t r = 0; r < results.size(); ++r) {
      const hlo::Literal& want = results.size() == 1 ? expected : expected.elements()[r];
      hlo::Literal logical = isel::fromPhysical(got.at(outputs[r]->name), results[r]);
      if (original) {
        const hlo::Literal& o = results.size() == 1 ? *original : original->elements()[r];
        measureDeviation(logical, o, report);
      }
      std::string diff = firstDifference(logical, want, options);
      if (!diff.empty()) {
        report.ok = false;
        report.mismatch = "output '" + outputs[r]->name + "' on random input set " +
                          std::to_string(set) + " (seed " + std::to_string(options.seed) +
                          "): " + diff;
        return report;
      }
    }
    ++report.sets;
  }
  return report;
}

}  // namespace tacit::backend
