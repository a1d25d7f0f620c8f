// libFuzzer target for the .tasm front end (docs/tasm.md), against the small ISA of the oracle's
// unit tests. Any input may be rejected with a DiagnosticError; anything else escaping is a bug.
// An accepted program must print canonically, parse back to the same program, print to the same
// text, and (if its HBM is small) run on the Machine with zero inputs, clamping or not, within a
// step limit, failing only with DiagnosticErrors.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "oracle/toy_isa.h"
#include "support/diagnostic.h"

namespace {

using namespace tacit::oracle;

void runSmall(const tacit::taidl::Isa& isa, const Program& p, bool clamp) {
  if (p.hbm_bytes > (1 << 20)) return;
  std::map<std::string, tacit::hlo::Literal> inputs;
  for (const Tensor& t : p.tensors)
    if (t.kind == TensorKind::kInput) inputs.emplace(t.name, tacit::hlo::Literal(t.shape));
  RunOptions o;
  o.clamp = clamp;
  o.max_steps = 10000;
  o.debug = [](const std::string&) {};
  try {
    run(isa, p, inputs, o);
  } catch (const tacit::DiagnosticError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tacit::taidl::Isa& isa = testing::toyIsa();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ParseOptions options;
  options.allow_files = false;
  Program p;
  try {
    p = parseProgram(isa, text, "fuzz.tasm", options);
  } catch (const tacit::DiagnosticError&) {
    return 0;
  }
  std::string printed = printProgram(isa, p);
  Program again = parseProgram(isa, printed, "fuzz.tasm", options);  // must not throw
  if (!sameProgram(p, again)) __builtin_trap();
  if (printProgram(isa, again) != printed) __builtin_trap();
  runSmall(isa, p, false);
  runSmall(isa, p, true);
  return 0;
}
