#include "cli.h"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "support/diagnostic.h"

namespace tacit::cli {
namespace {

std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

std::string usageLine(const Command& c) {
  std::string out = "usage: tacit " + c.name;
  if (!c.positional.empty()) out += " " + c.positional;
  for (const OptionSpec& o : c.options) {
    std::string flag = "--" + o.name;
    if (!o.value_name.empty())
      flag += o.optional_value ? "[=" + o.value_name + "]" : " " + o.value_name;
    out += " [" + flag + "]";
    if (o.repeated) out += "...";
  }
  return out;
}

void printHelp(const Command& c) {
  std::cout << usageLine(c) << "\n\n" << c.summary << "\n";
  if (!c.description.empty()) std::cout << "\n" << c.description << "\n";
  if (!c.options.empty()) std::cout << "\noptions:\n";
  for (const OptionSpec& o : c.options) {
    std::string flag = (o.short_name.empty() ? "" : "-" + o.short_name + ", ") + "--" + o.name;
    if (!o.value_name.empty())
      flag += o.optional_value ? "[=" + o.value_name + "]" : " " + o.value_name;
    std::cout << "  " << flag;
    if (flag.size() < 26)
      std::cout << std::string(26 - flag.size(), ' ');
    else
      std::cout << "\n" << std::string(28, ' ');
    std::cout << o.help << (o.repeated ? " (repeatable)" : "") << "\n";
  }
  std::cout << "  --help                    show this help\n";
}

void printOverview() {
  std::vector<Command> sorted = registry();
  std::sort(sorted.begin(), sorted.end(),
            [](const Command& a, const Command& b) { return a.name < b.name; });
  std::cout << "tacit: one ISA description -> a bit-faithful test oracle and a verified compiler "
               "backend\n\n"
               "usage: tacit <command> [options]\n\ncommands:\n";
  for (const Command& c : sorted) {
    std::cout << "  " << c.name << std::string(c.name.size() < 20 ? 20 - c.name.size() : 1, ' ')
              << c.summary << "\n";
  }
  std::cout << "\nRun `tacit <command> --help` for a command's options.\n";
}

const Command* findCommand(const std::vector<std::string>& words, size_t& consumed) {
  const Command* best = nullptr;
  size_t best_len = 0;
  for (const Command& c : registry()) {
    std::istringstream in(c.name);
    std::vector<std::string> parts;
    for (std::string w; in >> w;)
      parts.push_back(w);
    if (parts.size() > words.size() || parts.size() <= best_len) continue;
    if (std::equal(parts.begin(), parts.end(), words.begin())) {
      best = &c;
      best_len = parts.size();
    }
  }
  consumed = best_len;
  return best;
}

}  // namespace

Registration::Registration(Command command) {
  registry().push_back(std::move(command));
}

std::optional<std::string> Args::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::string Args::getOr(const std::string& name, const std::string& fallback) const {
  auto v = get(name);
  return v ? *v : fallback;
}

std::vector<std::string> Args::all(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<int64_t> Args::getInt(const std::string& name) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  try {
    size_t used = 0;
    long long n = std::stoll(*v, &used, 0);
    if (used == v->size()) return n;
  } catch (const std::exception&) {
  }
  fail("--" + name + " expects an integer, got '" + *v + "'");
}

std::optional<double> Args::getDouble(const std::string& name) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  try {
    size_t used = 0;
    double d = std::stod(*v, &used);
    if (used == v->size()) return d;
  } catch (const std::exception&) {
  }
  fail("--" + name + " expects a number, got '" + *v + "'");
}

std::vector<std::pair<std::string, std::string>> Args::keyValues(const std::string& name) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& v : all(name)) {
    size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0) {
      fail("--" + name + " expects KEY=VALUE, got '" + v + "'", "e.g. --" + name + " NAME=VALUE");
    }
    out.emplace_back(v.substr(0, eq), v.substr(eq + 1));
  }
  return out;
}

Args parseArgs(const Command& command, const std::vector<std::string>& argv) {
  Args args;
  bool options_done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (options_done || a.size() < 2 || a[0] != '-' || a == "-") {
      args.positionals_.push_back(a);
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
    auto spec =
        std::find_if(command.options.begin(), command.options.end(), [&](const OptionSpec& o) {
          return o.name == body || (single_dash && !o.short_name.empty() && o.short_name == body);
        });
    if (spec == command.options.end()) {
      fail("unknown option '" + a + "' for 'tacit " + command.name + "'",
           "run 'tacit " + command.name + " --help' for the options it takes");
    }
    std::vector<std::string>& slot = args.values_[spec->name];
    if (!slot.empty() && !spec->repeated)
      fail("option '--" + spec->name + "' given more than once");
    if (spec->value_name.empty()) {
      if (inline_value) fail("option '--" + spec->name + "' takes no value");
      slot.push_back("");
    } else if (inline_value) {
      slot.push_back(*inline_value);
    } else if (spec->optional_value) {
      slot.push_back("");
    } else {
      if (i + 1 >= argv.size())
        fail("option '--" + spec->name + "' needs a value (" + spec->value_name + ")");
      slot.push_back(argv[++i]);
    }
  }
  int n = static_cast<int>(args.positionals_.size());
  if (n < command.min_positionals ||
      (command.max_positionals >= 0 && n > command.max_positionals)) {
    fail("wrong number of arguments for 'tacit " + command.name + "'", usageLine(command));
  }
  return args;
}

int dispatch(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    printOverview();
    return words.empty() ? 2 : 0;
  }
  if (words[0] == "--version") {
    std::cout << "tacit 0.1.0\n";
    return 0;
  }
  size_t consumed = 0;
  const Command* command = findCommand(words, consumed);
  if (command == nullptr) {
    std::cerr << "tacit: error: unknown command '" << words[0]
              << "'\n  hint: run 'tacit --help' for the list\n";
    return 2;
  }
  std::vector<std::string> rest(words.begin() + static_cast<std::ptrdiff_t>(consumed), words.end());
  if (std::find(rest.begin(), rest.end(), "--help") != rest.end() ||
      std::find(rest.begin(), rest.end(), "-h") != rest.end()) {
    printHelp(*command);
    return 0;
  }
  try {
    Args args = parseArgs(*command, rest);
    return command->run(args);
  } catch (const DiagnosticError& e) {
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "tacit: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    // Reaching here is a tacit bug: every user mistake should be a DiagnosticError.
    std::cerr << "tacit: internal error: " << e.what() << "\n";
    return 70;
  }
}

}  // namespace tacit::cli
