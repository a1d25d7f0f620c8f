// libFuzzer target for the C++ side of `tacit import-python`: the shim's JSON record of a spec's
// run (docs/import-python.md) converted to .taidl text. The record comes from a Python process
// that runs the user's spec, so every field may be anything. Any input may be rejected with a
// DiagnosticError; anything else escaping is a bug. Accepted input must convert to .taidl text
// that the .taidl parser reads (the importer writes the language, not approximately).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string_view>

#include "import/importer.h"
#include "support/diagnostic.h"
#include "taidl/isa.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view record(reinterpret_cast<const char*>(data), size);
  tacit::importer::ImportResult result;
  try {
    result = tacit::importer::convertShimRecord(record, "fuzz_spec.py");
  } catch (const tacit::DiagnosticError&) {
    return 0;
  }
  try {
    tacit::taidl::parseIsa(result.text, "imported.taidl");
  } catch (const tacit::DiagnosticError& e) {
    std::fprintf(stderr, "the importer wrote text the parser rejects: %s\n%s\n", e.what(),
                 result.text.c_str());
    __builtin_trap();
  }
  return 0;
}
