// libFuzzer target for tiling schedules (backend/schedule.h): the JSON `tacit compile --schedule`
// reads. Any input may be rejected with a DiagnosticError; anything else escaping is a bug. An
// accepted schedule prints (json()) to text that parses back to the same schedule.
#include <cstddef>
#include <cstdint>
#include <string>

#include "backend/schedule.h"
#include "support/diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tacit::backend::TileSchedule s;
  try {
    s = tacit::backend::TileSchedule::parse(text, "fuzz.json");
  } catch (const tacit::DiagnosticError&) {
    return 0;
  }
  if (!(tacit::backend::TileSchedule::parse(s.json(), "printed.json") == s)) __builtin_trap();
  return 0;
}
