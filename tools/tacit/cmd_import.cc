// tacit import-python SPEC.py -o SPEC.taidl: converts a TAIDL Python spec (v1 or v2 API).
#include <iostream>
#include <optional>

#include "cli.h"
#include "import/importer.h"
#include "support/diagnostic.h"
#include "support/output.h"

namespace tacit::cli {
namespace {

int runImport(const Args& args) {
  const std::string& spec = args.positionals().at(0);
  importer::ImportOptions options;
  options.python = args.getOr("python", options.python);
  if (auto t = args.getInt("timeout")) {
    if (*t < 1 || *t > 86400) fail("--timeout expects a number of seconds in [1, 86400]");
    options.timeout_seconds = static_cast<int>(*t);
  }
  importer::ImportResult result = importer::importPythonSpec(spec, options);
  for (const std::string& w : result.warnings)
    std::cerr << w << "\n";
  std::optional<std::string> out = args.get("o");
  if (!out) out = args.get("output");
  if (out) {
    writeFileAtomic(*out, result.text);
  } else {
    std::cout << result.text;
  }
  return 0;
}

const Registration kImport{
    Command{"import-python",
            "SPEC.py",
            "convert a TAIDL Python spec (v1 artifact API or v2 ACT API) into a .taidl spec",
            "Runs SPEC.py with the system Python under a recording shim (no package needs to be "
            "installed;\n"
            "argparse options keep their defaults) and converts the recorded Accelerator into "
            ".taidl text.\n"
            "argparse integer options become `param`s, module-level integer constants `const`s. "
            "Errors name\n"
            "the spec's line (SPEC.py:LINE: error: ...). See docs/import-python.md.",
            {{"o", "FILE", "write the .taidl spec to FILE (atomically) instead of stdout"},
             {"output", "FILE", "same as -o"},
             {"python", "PATH", "the Python 3 interpreter (default /usr/bin/python3)"},
             {"timeout", "SECONDS", "stop a spec that runs longer (default 60)"}},
            1,
            1,
            runImport}};

}  // namespace
}  // namespace tacit::cli
