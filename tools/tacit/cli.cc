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
  for (const CommandLineOption& o : c.options)
    out += " [" + optionUsage(o) + "]" + (o.repeated ? "..." : "");
  return out;
}

void printHelp(const Command& c) {
  std::cout << usageLine(c) << "\n\n" << c.summary << "\n";
  if (!c.description.empty()) std::cout << "\n" << c.description << "\n";
  std::cout << "\noptions:\n" << optionsHelp(c.options);
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
  auto it = parsed_.values.find(name);
  if (it == parsed_.values.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::string Args::getOr(const std::string& name, const std::string& fallback) const {
  auto v = get(name);
  return v ? *v : fallback;
}

std::vector<std::string> Args::all(const std::string& name) const {
  auto it = parsed_.values.find(name);
  return it == parsed_.values.end() ? std::vector<std::string>{} : it->second;
}

std::optional<int64_t> Args::getInt(const std::string& name) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  return integerOptionValue(name, *v);
}

std::optional<double> Args::getDouble(const std::string& name) const {
  auto v = get(name);
  if (!v) return std::nullopt;
  return numberOptionValue(name, *v);
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
  args.parsed_ = parseCommandLine(command.options, argv, "tacit " + command.name);
  int n = static_cast<int>(args.parsed_.positionals.size());
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
  return runReportingErrors("tacit", std::cerr,
                            [&] { return command->run(parseArgs(*command, rest)); });
}

}  // namespace tacit::cli
