// --verify: the emitted program, run on the oracle with random inputs, must compute exactly what
// the HLO evaluator computes for the kernel (bit for bit, or within a tolerance the user sets for
// float results).
#pragma once

#include <cstdint>
#include <string>

#include "isel/kernel.h"
#include "oracle/program.h"

namespace tacit::backend {

struct VerifyOptions {
  int sets = 1;  // random input sets
  uint64_t seed = 1;
  double atol = 0;  // float results: |oracle - reference| <= atol + rtol * |reference|
  double rtol = 0;
};

struct VerifyReport {
  bool ok = true;
  int sets = 0;
  std::string mismatch;  // the first difference, if any
};

VerifyReport verify(const taidl::Isa& isa, const hlo::HloModule& kernel,
                    const oracle::Program& program, const VerifyOptions& options = {});

}  // namespace tacit::backend
