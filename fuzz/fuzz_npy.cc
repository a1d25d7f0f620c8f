// libFuzzer target for the .npy reader (support/npy.h, hlo/npy_literal.h): the inputs, expected
// outputs and constants users hand `tacit run`, `tacit eval` and .tasm `const` statements. Any
// input may be rejected with a DiagnosticError; anything else escaping is a bug. An accepted array
// serialises to bytes that parse back to the same array, and, if its dtype is one tacit evaluates,
// converts to a literal whose .npy form parses back to the same literal bytes.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "hlo/npy_literal.h"
#include "support/diagnostic.h"
#include "support/npy.h"

namespace {

bool same(const tacit::NpyArray& a, const tacit::NpyArray& b) {
  return a.descr == b.descr && a.shape == b.shape && a.data == b.data;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  tacit::NpyArray array;
  try {
    array = tacit::parseNpy(bytes, "fuzz.npy");
  } catch (const tacit::DiagnosticError&) {
    return 0;
  }
  std::string written = tacit::serializeNpy(array);
  tacit::NpyArray again = tacit::parseNpy(written, "written.npy");  // must not throw
  if (!same(array, again)) __builtin_trap();
  tacit::hlo::Literal literal;
  try {
    literal = tacit::hlo::npyToLiteral(array, "fuzz.npy");
  } catch (const tacit::DiagnosticError&) {
    return 0;  // a dtype tacit does not evaluate, or a pred holding 2..255
  }
  tacit::NpyArray back = tacit::parseNpy(tacit::hlo::serializeNpyLiteral(literal), "lit.npy");
  tacit::hlo::Literal lit_again = tacit::hlo::npyToLiteral(back, "lit.npy");
  if (!(lit_again.shape() == literal.shape()) || lit_again.byteCount() != literal.byteCount() ||
      (literal.byteCount() &&
       std::memcmp(lit_again.bytes(), literal.bytes(), literal.byteCount()) != 0))
    __builtin_trap();
  return 0;
}
