// Command lines of tacit's executables — the `tacit` CLI and the standalone backends that
// `tacit gen-backend` writes: one option table, one strict parser (unknown options are errors),
// one help layout, one reading of numeric values and one top-level error report, so that both
// front ends accept the same spellings and print the same messages.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tacit {

struct CommandLineOption {
  // A constructor (not an aggregate) so that option tables may omit trailing fields.
  CommandLineOption(std::string name_, std::string value_name_, std::string help_,
                    bool repeated_ = false, bool optional_value_ = false,
                    std::string short_name_ = {})
      : name(std::move(name_)),
        value_name(std::move(value_name_)),
        help(std::move(help_)),
        repeated(repeated_),
        optional_value(optional_value_),
        short_name(std::move(short_name_)) {}

  std::string name;        // without dashes: "output-dir"
  std::string value_name;  // e.g. "DIR"; empty for a boolean flag
  std::string help;
  bool repeated = false;
  bool optional_value = false;  // `--verify` or `--verify=N`
  std::string short_name;       // e.g. "o": `-o OUT` is `--output OUT`
};

// "--emit FORMAT", "--verify[=N]", "--stats".
std::string optionUsage(const CommandLineOption& option);

// The "options:" lines of --help: one per option (short form, usage, help), then --help itself.
std::string optionsHelp(const std::vector<CommandLineOption>& options);

struct ParsedCommandLine {
  // Every value of each option given, in command-line order; a flag without a value gives "".
  std::map<std::string, std::vector<std::string>> values;
  std::vector<std::string> positionals;
};

// Parses `argv` (without the program and command words) strictly: `--flag=value`, `--flag value`,
// `-s value` for a short name, `--` ends the options, a non-repeated option given twice is an
// error. `program` names the command in diagnostics ("tacit compile", "qkv"). `on_unknown`, if
// set, sees an unknown option's name first and may fail with a more specific diagnostic.
ParsedCommandLine parseCommandLine(const std::vector<CommandLineOption>& options,
                                   const std::vector<std::string>& argv, const std::string& program,
                                   const std::function<void(const std::string&)>& on_unknown = {});

// An option's value as an integer (decimal, 0x hex or 0 octal) or as a number; anything else,
// trailing text included, is a DiagnosticError naming the option.
int64_t integerOptionValue(const std::string& name, const std::string& value);
double numberOptionValue(const std::string& name, const std::string& value);

// Runs a command's body and turns what escapes it into an exit status: a DiagnosticError is
// printed as is (1), running out of memory is one error line (1), any other exception is a tacit
// bug reported as an internal error (70).
int runReportingErrors(const std::string& program, std::ostream& err,
                       const std::function<int()>& body);

}  // namespace tacit
