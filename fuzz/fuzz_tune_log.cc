// libFuzzer target for `tacit tune --resume` logs (backend/tune.h): one JSON line per evaluation.
// Any input may be rejected with a DiagnosticError; anything else escaping is a bug. An accepted
// line prints (json()) to a line that parses back to the same evaluation.
#include <cstddef>
#include <cstdint>
#include <string>

#include "backend/tune.h"
#include "support/diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tacit::backend::TuneEvaluation e;
  try {
    e = tacit::backend::TuneEvaluation::parse(text, "fuzz.jsonl", 1);
  } catch (const tacit::DiagnosticError&) {
    return 0;
  }
  const tacit::backend::TuneEvaluation again =
      tacit::backend::TuneEvaluation::parse(e.json(), "printed.jsonl", 1);
  if (!(again.schedule == e.schedule) || again.rung != e.rung || again.fraction != e.fraction ||
      again.cycles != e.cycles || again.instructions != e.instructions)
    __builtin_trap();
  return 0;
}
