// The compiler's command-line front end, shared by `tacit compile` and the standalone backends
// `tacit gen-backend` writes (docs/gen-backend.md): one list of flags, one validation of their
// values, one compile → report → verify → emit → write pipeline.
//
// This header is deliberately light (no compiler headers): a generated backend's main.cc includes
// only it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/command_line.h"

namespace tacit::taidl {
class Isa;
}

namespace tacit::backend {

// --output, --emit, --cost, --verify, --seed, --atol, --rtol, --time-limit, --explain, --stats,
// --no-piecewise, --dump-egraph, in the order --help lists them.
const std::vector<CommandLineOption>& compileFlags();

// The paragraph `--help` shows for `tacit compile` and for generated backends.
std::string_view compileDescription();

// Flag values by name as the command line gave them; a flag without a value maps to "".
using FlagValues = std::map<std::string, std::string>;

enum class EmitFormat { kTasm, kPython, kJson };

// A validated compilation request. Unset optionals keep the defaults of backend::CompileOptions
// and backend::VerifyOptions.
struct CompileRequest {
  std::string kernel_path;
  std::optional<std::string> output_path;  // unset: the program goes to `out`
  EmitFormat emit = EmitFormat::kTasm;
  std::optional<std::string> cost_model;  // a valid model name; unset: the ISA's default
  std::optional<double> time_limit_seconds;
  std::optional<int> verify_sets;  // set by --verify
  std::optional<uint64_t> seed;
  std::optional<double> atol, rtol;
  bool stats = false;
  bool explain = false;
  bool piecewise = true;                          // off with --no-piecewise
  bool tiling = true;                             // off with --no-tiling
  bool reassociate = false;                       // --reassociate (float contractions split)
  std::optional<std::string> schedule_path;       // --schedule FILE.json
  std::optional<std::string> emit_schedule_path;  // --emit-schedule FILE.json
  std::optional<std::string> dump_egraph_path;    // --dump-egraph FILE.dot
  std::optional<std::string> report_path;         // --report FILE.html (backend/report.h)
};

// Checks every flag value (before any work is done); a malformed one is a DiagnosticError naming
// the flag. `flags` may hold only names from compileFlags().
CompileRequest makeCompileRequest(std::string kernel_path, const FlagValues& flags);

// `--param K=V` values (as given, one per flag) as spec parameter overrides; a malformed one is a
// DiagnosticError naming the flag.
std::vector<std::pair<std::string, int64_t>> parseParamOverrides(
    const std::vector<std::string>& values);

// Parses and verifies the kernel, compiles it for `isa`, reports a summary (and --stats,
// --explain) to `log`, verifies it if asked, and writes the emitted program to the output file
// (atomically) or to `out`. Any failure is a DiagnosticError and writes no output.
void runCompile(const taidl::Isa& isa, const CompileRequest& request, std::ostream& out,
                std::ostream& log);

// What a generated backend embeds: its spec's text and the parameter overrides fixed when it was
// generated.
struct EmbeddedSpec {
  std::string_view name;       // the backend's name (the ISA's): usage lines, messages
  std::string_view file_name;  // the spec's file name, as diagnostics show it
  std::string_view text;       // the .taidl text, byte for byte
  std::vector<std::pair<std::string, int64_t>> overrides;
  std::string_view generator;  // "tacit 0.1.0": the version that generated and must link it
};

// The whole main() of a generated backend: parses `args` (without the program name) — --input
// KERNEL.hlo (or one positional), the flags of compileFlags(), --print-spec, --version and
// --help — loads the embedded spec and runs runCompile. Returns the exit status: 0, 1 after one
// diagnostic on `err`, 70 for an internal error.
int backendMain(const EmbeddedSpec& spec, const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err);
int backendMain(const EmbeddedSpec& spec, int argc, char** argv);

// The --help text of a generated backend.
std::string backendHelp(const EmbeddedSpec& spec);

// The tacit version the driver was built from ("tacit 0.1.0").
std::string_view driverVersion();

}  // namespace tacit::backend
