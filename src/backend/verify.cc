#include "backend/verify.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <optional>
#include <sstream>

#include "backend/kernel_run.h"
#include "hlo_eval/evaluator.h"
#include "hlo_eval/random_literal.h"
#include "support/diagnostic.h"

namespace tacit::backend {

std::string firstDifference(const hlo::Literal& got, const hlo::Literal& want,
                            const VerifyOptions& opt, std::string_view got_from) {
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
      return "element " + std::to_string(i) + ": " + std::string(got_from) + " " +
             std::to_string(got.getDouble(i)) + ", HLO evaluator " +
             std::to_string(want.getDouble(i));
    }
  }
  return {};
}

namespace {

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
  std::vector<const oracle::Tensor*> outputs;
  for (const oracle::Tensor& t : program.tensors) {
    if (t.kind == oracle::TensorKind::kOutput) outputs.push_back(&t);
  }
  const std::vector<hlo::Shape> parameters = isel::entryParameterShapes(kernel);
  const size_t results = isel::entryResultShapes(kernel).size();
  for (int set = 0; set < options.sets; ++set) {
    std::vector<hlo::Literal> args;
    for (size_t i = 0; i < parameters.size(); ++i) {
      const hlo::Shape logical(parameters[i].elementType(), parameters[i].dims());
      args.push_back(hlo::randomLiteral(
          logical, options.seed * 7919 + static_cast<uint64_t>(set) * 104729 + i));
    }
    hlo::Literal expected = hlo::evaluate(kernel, args);
    std::optional<hlo::Literal> original;
    if (options.original) original = hlo::evaluate(*options.original, args);
    std::vector<const hlo::Literal*> arg_pointers;
    for (const hlo::Literal& a : args)
      arg_pointers.push_back(&a);
    const std::vector<hlo::Literal> got = runKernelProgram(isa, kernel, program, arg_pointers);
    for (size_t r = 0; r < results; ++r) {
      const hlo::Literal& want = results == 1 ? expected : expected.elements()[r];
      if (original)
        measureDeviation(got[r], results == 1 ? *original : original->elements()[r], report);
      std::string diff = firstDifference(got[r], want, options);
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

std::string verifyProgram(const taidl::Isa& isa, const hlo::HloModule& kernel,
                          const hlo::HloModule* computes, int64_t block,
                          const oracle::Program& program, VerifyOptions options,
                          const std::string& kernel_path, std::string_view what) {
  if (computes != nullptr) options.original = &kernel;
  const VerifyReport report = verify(isa, computes ? *computes : kernel, program, options);
  if (!report.ok)
    fail(kernel_path, {},
         "verification failed: the " + std::string(what) +
             " program differs from the HLO evaluator: " + report.mismatch,
         "this is a compiler bug; please report it with the kernel and the ISA");
  std::ostringstream out;
  out << "verified: " << report.sets << " random input set" << (report.sets == 1 ? "" : "s")
      << ", oracle == HLO evaluator bit for bit";
  if (computes != nullptr)
    out << " on the kernel with its contraction summed in blocks of " << block
        << "; largest difference from the kernel's sums " << std::setprecision(3)
        << report.deviation << " (relative " << report.relative_deviation << ")";
  return out.str();
}

}  // namespace tacit::backend
