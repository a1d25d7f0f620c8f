#include "support/command_line.h"

#include <algorithm>
#include <new>
#include <optional>
#include <ostream>

#include "support/diagnostic.h"

namespace tacit {

std::string optionUsage(const CommandLineOption& option) {
  std::string out = "--" + option.name;
  if (!option.value_name.empty())
    out += option.optional_value ? "[=" + option.value_name + "]" : " " + option.value_name;
  return out;
}

std::string optionsHelp(const std::vector<CommandLineOption>& options) {
  constexpr size_t kHelpColumn = 26;
  std::string out;
  auto line = [&](const std::string& flag, const std::string& help) {
    out += "  " + flag;
    if (flag.size() < kHelpColumn)
      out += std::string(kHelpColumn - flag.size(), ' ');
    else
      out += "\n" + std::string(kHelpColumn + 2, ' ');
    out += help + "\n";
  };
  for (const CommandLineOption& o : options) {
    line((o.short_name.empty() ? "" : "-" + o.short_name + ", ") + optionUsage(o),
         o.help + (o.repeated ? " (repeatable)" : ""));
  }
  line("--help", "show this help");
  return out;
}

ParsedCommandLine parseCommandLine(const std::vector<CommandLineOption>& options,
                                   const std::vector<std::string>& argv, const std::string& program,
                                   const std::function<void(const std::string&)>& on_unknown) {
  ParsedCommandLine parsed;
  bool options_done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (options_done || a.size() < 2 || a[0] != '-' || a == "-") {
      parsed.positionals.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    std::string body = a.substr(a[1] == '-' ? 2 : 1);
    std::optional<std::string> inline_value;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      inline_value = body.substr(eq + 1);
      body = body.substr(0, eq);
    }
    bool single_dash = a[1] != '-';
    auto option = std::find_if(options.begin(), options.end(), [&](const CommandLineOption& o) {
      return o.name == body || (single_dash && !o.short_name.empty() && o.short_name == body);
    });
    if (option == options.end()) {
      if (on_unknown) on_unknown(body);
      fail("unknown option '" + a + "' for '" + program + "'",
           "run '" + program + " --help' for the options it takes");
    }
    std::vector<std::string>& slot = parsed.values[option->name];
    if (!slot.empty() && !option->repeated)
      fail("option '--" + option->name + "' given more than once");
    if (option->value_name.empty()) {
      if (inline_value) fail("option '--" + option->name + "' takes no value");
      slot.push_back("");
    } else if (inline_value) {
      slot.push_back(*inline_value);
    } else if (option->optional_value) {
      slot.push_back("");
    } else {
      if (i + 1 >= argv.size())
        fail("option '--" + option->name + "' needs a value (" + option->value_name + ")");
      slot.push_back(argv[++i]);
    }
  }
  return parsed;
}

int64_t integerOptionValue(const std::string& name, const std::string& value) {
  try {
    size_t used = 0;
    long long n = std::stoll(value, &used, 0);
    if (used == value.size()) return n;
  } catch (const std::exception&) {
  }
  fail("--" + name + " expects an integer, got '" + value + "'");
}

double numberOptionValue(const std::string& name, const std::string& value) {
  try {
    size_t used = 0;
    double d = std::stod(value, &used);
    if (used == value.size()) return d;
  } catch (const std::exception&) {
  }
  fail("--" + name + " expects a number, got '" + value + "'");
}

int runReportingErrors(const std::string& program, std::ostream& err,
                       const std::function<int()>& body) {
  try {
    return body();
  } catch (const DiagnosticError& e) {
    err << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    err << program << ": error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    // Reaching here is a tacit bug: every user mistake should be a DiagnosticError.
    err << program << ": internal error: " << e.what() << "\n";
    return 70;
  }
}

}  // namespace tacit
