// `tacit run-python SPEC KERNELS.py --kernel NAME ...`: a TAIDL-TO kernel function run unchanged on
// the oracle (docs/python.md, "TAIDL-TO kernels"). The kernels are Python, so the work is done by
// the Python package's `tacit.run_python` (python/tacit/run_python.py) under the interpreter the
// package was built for; this command checks the options and replaces itself with that process.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cli.h"
#include "support/diagnostic.h"

namespace tacit::cli {
namespace {

// The options, every one passed through to tacit.run_python under its own name.
const std::vector<CommandLineOption> kOptions = {
    {"kernel", "NAME", "the kernel function"},
    {"size", "N", "a positional size argument of the function", true},
    {"arg", "K=V", "a keyword argument of the function", true},
    {"param", "K=V", "override a spec parameter", true},
    {"input", "FILE", "an input (.npy), in the decorator's order", true},
    {"random", "SEED", "random inputs instead"},
    {"output-dir", "DIR", "write the outputs here as .npy"},
    {"emit-tasm", "FILE", "write the recorded .tasm program"}};

int runPython(const Args& args) {
#if defined(TACIT_PYTHON_EXECUTABLE) && defined(TACIT_PYTHON_DIR)
  if (!args.has("kernel")) fail("tacit run-python needs --kernel NAME", "the kernel function");
  std::vector<std::string> argv = {TACIT_PYTHON_EXECUTABLE, "-m", "tacit.run_python",
                                   args.positionals()[0], args.positionals()[1]};
  for (const CommandLineOption& option : kOptions) {
    for (const std::string& value : args.all(option.name)) {
      argv.push_back("--" + option.name);
      argv.push_back(value);
    }
  }
  // The build tree's package first (an installed one is on the interpreter's own path).
  std::error_code ec;
  if (std::filesystem::is_directory(std::string(TACIT_PYTHON_DIR) + "/tacit", ec)) {
    const char* old = std::getenv("PYTHONPATH");
    std::string path = TACIT_PYTHON_DIR;
    if (old != nullptr && *old != '\0') path += std::string(":") + old;
    setenv("PYTHONPATH", path.c_str(), 1);
  }
  std::vector<char*> raw;
  for (std::string& a : argv)
    raw.push_back(a.data());
  raw.push_back(nullptr);
  std::fflush(nullptr);
  execv(raw[0], raw.data());
  fail(std::string("cannot start the Python interpreter ") + TACIT_PYTHON_EXECUTABLE + ": " +
           std::strerror(errno),
       "tacit run-python needs the interpreter its Python package was built for");
#else
  (void)args;
  fail("this tacit was built without its Python package (TACIT_PYTHON=OFF)",
       "build with -DTACIT_PYTHON=ON (the default outside sanitizer builds)");
#endif
}

const Registration kRunPython{Command{
    "run-python", "SPEC KERNELS.py", "run a TAIDL-TO Python test kernel unchanged on the oracle",
    "Calls the kernel function NAME of KERNELS.py as the TAIDL-TO artifact's drivers do,\n"
    "NAME(kernel, api, sizes...), with tacit's @kernel decorator and api: the calls it makes\n"
    "are recorded as a .tasm program (Python loops repeated, api.start_loop/end_loop as .tasm\n"
    "loops) and run on the oracle with the given inputs (.npy, in the decorator's order) or\n"
    "random ones. Writes the outputs to DIR/out0.npy, ... with --output-dir and the recorded\n"
    "program with --emit-tasm. Runs the Python package's tacit.run_python; docs/python.md.",
    kOptions, 2, 2, runPython}};

}  // namespace
}  // namespace tacit::cli
