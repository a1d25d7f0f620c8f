// --verify: the emitted program, run on the oracle with random inputs, must compute exactly what
// the HLO evaluator computes for the kernel (bit for bit, or within a tolerance the user sets for
// float results).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "isel/kernel.h"
#include "oracle/program.h"

namespace tacit::backend {

struct VerifyOptions {
  int sets = 1;  // random input sets
  uint64_t seed = 1;
  double atol = 0;  // float results: |oracle - reference| <= atol + rtol * |reference|
  double rtol = 0;
  // When the program computes a rewriting of the user's kernel (CompileResult::computes: float
  // sums re-associated), the user's kernel: the largest difference from its float results is
  // measured (VerifyReport::deviation), the program being checked against the rewriting.
  const hlo::HloModule* original = nullptr;
};

struct VerifyReport {
  bool ok = true;
  int sets = 0;
  std::string mismatch;  // the first difference, if any
  // Against VerifyOptions::original: the largest |oracle - original| over the float results and
  // the largest such difference relative to |original| (where it is not 0), over every set.
  double deviation = 0, relative_deviation = 0;
};

VerifyReport verify(const taidl::Isa& isa, const hlo::HloModule& kernel,
                    const oracle::Program& program, const VerifyOptions& options = {});

// --verify of a compiled program as `tacit compile` and `tacit tune` report it: `program` against
// the kernel it computes — `computes` when not null (a re-association of `kernel`, its contraction
// summed in blocks of `block`; the largest difference from `kernel`'s sums is measured), else
// `kernel`. A mismatch is a DiagnosticError at `kernel_path` naming the `what` program ("compiled",
// "tuned"); otherwise the one-line report ("verified: ...").
std::string verifyProgram(const taidl::Isa& isa, const hlo::HloModule& kernel,
                          const hlo::HloModule* computes, int64_t block,
                          const oracle::Program& program, VerifyOptions options,
                          const std::string& kernel_path, std::string_view what);

// The first element where `got` (computed by `got_from`) differs from the HLO evaluator's `want`,
// bitwise or beyond the options' float tolerance, as "element I: oracle X, HLO evaluator Y";
// empty when they agree.
std::string firstDifference(const hlo::Literal& got, const hlo::Literal& want,
                            const VerifyOptions& options, std::string_view got_from = "oracle");

}  // namespace tacit::backend
