// The tacit command line: subcommands register themselves with a declarative option list, and
// the dispatcher parses arguments strictly (unknown flags are errors), prints --help, and turns
// DiagnosticError into one message on stderr with exit code 1.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/command_line.h"

namespace tacit::cli {

using tacit::CommandLineOption;

class Args {
 public:
  bool has(const std::string& name) const { return parsed_.values.count(name) != 0; }
  // The value of a single-valued option, or nullopt.
  std::optional<std::string> get(const std::string& name) const;
  std::string getOr(const std::string& name, const std::string& fallback) const;
  // Every value of a repeated option, in command-line order.
  std::vector<std::string> all(const std::string& name) const;
  const std::vector<std::string>& positionals() const { return parsed_.positionals; }

  // Typed accessors: a malformed value is a DiagnosticError naming the flag.
  std::optional<int64_t> getInt(const std::string& name) const;
  std::optional<double> getDouble(const std::string& name) const;
  // Splits repeated `KEY=VALUE` options (e.g. --param DIM=16, --input q=q.npy).
  std::vector<std::pair<std::string, std::string>> keyValues(const std::string& name) const;

 private:
  friend Args parseArgs(const struct Command&, const std::vector<std::string>&);
  ParsedCommandLine parsed_;
};

struct Command {
  std::string name;         // "hlo check", "run", ...
  std::string positional;   // usage of positionals, e.g. "FILE..."
  std::string summary;      // one line
  std::string description;  // paragraph shown by --help
  std::vector<CommandLineOption> options;
  int min_positionals = 0;
  int max_positionals = -1;  // -1: unbounded
  std::function<int(const Args&)> run;
};

// Registers a command at static-initialisation time: `static Registration r{Command{...}};`.
struct Registration {
  explicit Registration(Command command);
};

Args parseArgs(const Command& command, const std::vector<std::string>& argv);
int dispatch(int argc, char** argv);

}  // namespace tacit::cli
