// Structure-aware libFuzzer target for the compiler backend: the input's first byte picks a
// shipped ISA with a differential generator (tests/differential/generators.h), the rest are the
// generator's random choices, so every input is a small valid kernel of that ISA's menus. The
// kernel is compiled (phase 1, candidate search, allocation) and, if it compiles, verified on the
// oracle against the HLO evaluator. A rejection must be a DiagnosticError; a wrong program, any
// other exception and any memory error the sanitizers see in isel or alloc is a finding — the
// differential suite's Release build cannot see the latter.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/compiler.h"
#include "backend/verify.h"
#include "differential/generators.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"
#include "support/diagnostic.h"
#include "taidl/isa.h"

namespace {

const std::vector<tacit::taidl::Isa>& isas() {
  static const std::vector<tacit::taidl::Isa> loaded = [] {
    std::vector<tacit::taidl::Isa> out;
    for (const std::string& name : tacit::differential::generatorIsas())
      out.push_back(
          tacit::taidl::loadIsaFile(std::string(TACIT_SOURCE_DIR) + "/isa/" + name + ".taidl"));
    return out;
  }();
  return loaded;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::vector<std::string>& names = tacit::differential::generatorIsas();
  size_t which = data[0] % names.size();
  tacit::differential::GeneratedKernel k =
      tacit::differential::kernelFromBytes(names[which], data + 1, size - 1);
  // The generators write valid kernels: a parse or verifier error here is a generator bug.
  std::unique_ptr<tacit::hlo::HloModule> module = tacit::hlo::parseModule(k.hlo, k.name + ".hlo");
  tacit::hlo::verifyModule(*module);
  const tacit::taidl::Isa& isa = isas()[which];
  tacit::backend::CompileOptions options;
  options.time_limit = std::chrono::milliseconds(2000);  // sanitizer builds are ~10x slower
  tacit::backend::CompileResult result;
  try {
    result = tacit::backend::compile(isa, *module, options);
  } catch (const tacit::DiagnosticError&) {
    return 0;
  }
  tacit::backend::VerifyReport report =
      tacit::backend::verify(isa, *module, result.program, {.sets = 1, .seed = 7});
  if (!report.ok) __builtin_trap();  // a wrong program
  return 0;
}
