// libFuzzer target for the StableHLO text front end. Any input may be rejected with a
// DiagnosticError; anything else escaping is a bug. Accepted input is in the subset, so it must
// print as StableHLO; the printed text must parse back, and after that one round (which shares
// identical reducers) printing is a fixed point. The verifier must not crash on it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hlo/verifier.h"
#include "stablehlo/input.h"
#include "stablehlo/printer.h"
#include "support/diagnostic.h"

namespace {

std::unique_ptr<tacit::hlo::HloModule> reparse(const std::string& text) {
  try {
    return tacit::stablehlo::parseStableHlo(text, "printed.mlir");
  } catch (const tacit::DiagnosticError&) {
    __builtin_trap();  // the printer wrote text the parser rejects
  }
}

std::string print(const tacit::hlo::HloModule& module) {
  try {
    return tacit::stablehlo::printStableHlo(module);
  } catch (const tacit::DiagnosticError&) {
    __builtin_trap();  // a module read from StableHLO must print as StableHLO
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<tacit::hlo::HloModule> module;
  try {
    module = tacit::stablehlo::parseStableHlo(text, "fuzz.mlir");
  } catch (const tacit::DiagnosticError&) {
    return 0;
  }
  try {
    tacit::hlo::verifyModule(*module);
  } catch (const tacit::DiagnosticError&) {
  }
  const std::string once = print(*module);
  const std::string twice = print(*reparse(once));
  if (print(*reparse(twice)) != twice) __builtin_trap();
  return 0;
}
