#include "support/command_line.h"

#include <gtest/gtest.h>

#include <new>
#include <sstream>
#include <stdexcept>

#include "support/diagnostic.h"

namespace tacit {
namespace {

const std::vector<CommandLineOption>& options() {
  static const std::vector<CommandLineOption> table = {
      {"output", "OUT", "where", false, false, "o"},
      {"param", "K=V", "override", true},
      {"verify", "N", "check", false, true},
      {"stats", "", "print statistics"},
  };
  return table;
}

ParsedCommandLine parse(const std::vector<std::string>& argv) {
  return parseCommandLine(options(), argv, "tacit compile");
}

std::string errorOf(const std::vector<std::string>& argv) {
  try {
    parse(argv);
  } catch (const DiagnosticError& e) {
    return e.what();
  }
  return "";
}

TEST(CommandLine, EverySpellingOfAValue) {
  ParsedCommandLine p =
      parse({"k.hlo", "-o", "a", "--param=A=1", "--param", "B=2", "--verify", "--stats"});
  EXPECT_EQ(p.positionals, std::vector<std::string>{"k.hlo"});
  EXPECT_EQ(p.values["output"], std::vector<std::string>{"a"});
  EXPECT_EQ(p.values["param"], (std::vector<std::string>{"A=1", "B=2"}));
  EXPECT_EQ(p.values["verify"], std::vector<std::string>{""});
  EXPECT_EQ(p.values["stats"], std::vector<std::string>{""});
  EXPECT_EQ(parse({"--verify=3"}).values["verify"], std::vector<std::string>{"3"});
  EXPECT_EQ(parse({"-o=b"}).values["output"], std::vector<std::string>{"b"});
}

TEST(CommandLine, DoubleDashAndLoneDashArePositionals) {
  ParsedCommandLine p = parse({"-", "--", "--stats", "-o"});
  EXPECT_EQ(p.positionals, (std::vector<std::string>{"-", "--stats", "-o"}));
  EXPECT_TRUE(p.values.empty());
}

TEST(CommandLine, MistakesAreOneDiagnosticNamingTheOption) {
  EXPECT_NE(errorOf({"--bogus"}).find("unknown option '--bogus' for 'tacit compile'"),
            std::string::npos);
  EXPECT_NE(errorOf({"--bogus"}).find("run 'tacit compile --help'"), std::string::npos);
  // A short name is only a short name after one dash.
  EXPECT_NE(errorOf({"--o", "x"}).find("unknown option '--o'"), std::string::npos);
  EXPECT_NE(errorOf({"-o", "a", "--output", "b"}).find("'--output' given more than once"),
            std::string::npos);
  EXPECT_NE(errorOf({"--output"}).find("'--output' needs a value (OUT)"), std::string::npos);
  EXPECT_NE(errorOf({"--stats=1"}).find("'--stats' takes no value"), std::string::npos);
}

TEST(CommandLine, AnUnknownOptionMayGetAMoreSpecificDiagnostic) {
  auto fixed = [](const std::string& name) {
    if (name == "isa") fail("--isa was fixed when this backend was generated");
  };
  try {
    parseCommandLine(options(), {"--isa=x.taidl"}, "qkv", fixed);
    FAIL() << "no diagnostic";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("fixed when this backend"), std::string::npos);
  }
  try {
    parseCommandLine(options(), {"--nope"}, "qkv", fixed);
    FAIL() << "no diagnostic";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown option '--nope' for 'qkv'"), std::string::npos);
  }
}

TEST(CommandLine, NumericValuesAreWholeNumbers) {
  EXPECT_EQ(integerOptionValue("seed", "42"), 42);
  EXPECT_EQ(integerOptionValue("seed", "0x10"), 16);
  EXPECT_EQ(integerOptionValue("seed", "-3"), -3);
  EXPECT_DOUBLE_EQ(numberOptionValue("atol", "1e-3"), 1e-3);
  for (const char* bad : {"", "4x", "x", "99999999999999999999"})
    EXPECT_THROW(integerOptionValue("seed", bad), DiagnosticError) << bad;
  for (const char* bad : {"", "1.5s", "fast"})
    EXPECT_THROW(numberOptionValue("atol", bad), DiagnosticError) << bad;
}

TEST(CommandLine, HelpListsUsageShortNamesAndRepetition) {
  std::string help = optionsHelp(options());
  EXPECT_NE(help.find("  -o, --output OUT          where\n"), std::string::npos) << help;
  EXPECT_NE(help.find("--param K=V               override (repeatable)\n"), std::string::npos);
  EXPECT_NE(help.find("--verify[=N]"), std::string::npos);
  EXPECT_NE(help.find("  --help                    show this help\n"), std::string::npos);
  EXPECT_EQ(optionUsage(options()[3]), "--stats");
}

TEST(CommandLine, EscapingErrorsBecomeExitStatuses) {
  std::ostringstream err;
  EXPECT_EQ(runReportingErrors("tacit", err, [] { return 0; }), 0);
  EXPECT_EQ(runReportingErrors("tacit", err, []() -> int { fail("bad flag"); }), 1);
  EXPECT_EQ(runReportingErrors("tacit", err, []() -> int { throw std::bad_alloc(); }), 1);
  EXPECT_EQ(runReportingErrors("tacit", err, []() -> int { throw std::logic_error("bug"); }), 70);
  EXPECT_EQ(err.str(),
            "error: bad flag\ntacit: error: out of memory\ntacit: internal error: bug\n");
}

}  // namespace
}  // namespace tacit
