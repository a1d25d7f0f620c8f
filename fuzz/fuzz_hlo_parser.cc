// libFuzzer target for the HLO text front end. Any input may be rejected with a DiagnosticError;
// anything else escaping is a bug. Accepted input must print to text that parses back to the same
// printed text (the canonical form is a fixed point), and the verifier must not crash on it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "support/diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::unique_ptr<tacit::hlo::HloModule> module;
  try {
    module = tacit::hlo::parseModule(text, "fuzz.hlo");
  } catch (const tacit::DiagnosticError&) {
    return 0;
  }
  std::string printed = tacit::hlo::printModule(*module);
  std::unique_ptr<tacit::hlo::HloModule> again;
  try {
    again = tacit::hlo::parseModule(printed, "printed.hlo");
  } catch (const tacit::DiagnosticError&) {
    __builtin_trap();  // the printer wrote text the parser rejects
  }
  if (tacit::hlo::printModule(*again) != printed) __builtin_trap();
  try {
    tacit::hlo::verifyModule(*module);
  } catch (const tacit::DiagnosticError&) {
  }
  return 0;
}
