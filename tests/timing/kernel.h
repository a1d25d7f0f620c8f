// A shipped spec and program with random inputs, for the timing tests.
#pragma once

#include <map>
#include <string>

#include "common/paths.h"
#include "hlo_eval/random_literal.h"
#include "oracle/tasm.h"
#include "taidl/isa.h"

namespace tacit::timing::testing {

struct Kernel {
  taidl::Isa isa;
  oracle::Program program;
  std::map<std::string, hlo::Literal> inputs;
};

// Random inputs for every input of `k.program` (seeds seed, seed + 1, ...).
inline void randomInputs(Kernel& k, uint64_t seed) {
  for (const oracle::Tensor& t : k.program.tensors) {
    if (t.kind == oracle::TensorKind::kInput)
      k.inputs.emplace(t.name, hlo::randomLiteral(t.shape, seed++));
  }
}

// isa/<spec> and examples/<program> with random inputs.
inline Kernel shippedKernel(const std::string& spec, const std::string& program,
                            const taidl::ParamOverrides& params = {}, uint64_t seed = 11) {
  const std::string root = tacit::testing::sourceDir();
  Kernel k{taidl::loadIsaFile(root + "/isa/" + spec, params), {}, {}};
  k.program = oracle::parseProgramFile(k.isa, root + "/examples/" + program);
  randomInputs(k, seed);
  return k;
}

}  // namespace tacit::timing::testing
