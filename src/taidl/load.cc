// loadIsa: parse, then check (docs/taidl.md section 8).
#include "taidl/check.h"
#include "taidl/isa.h"

namespace tacit::taidl {

Isa loadIsa(std::string_view text, const std::string& filename, const ParamOverrides& overrides,
            DiagnosticSink* warnings) {
  Isa isa = parseIsa(text, filename);
  Checker(isa, overrides, warnings).run();
  return isa;
}

Isa loadIsaFile(const std::string& path, const ParamOverrides& overrides,
                DiagnosticSink* warnings) {
  return loadIsa(readFile(path), path, overrides, warnings);
}

}  // namespace tacit::taidl
