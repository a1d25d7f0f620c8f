// tacit import-python: specs written for these tests in both API styles (and several import
// styles) are run under the recording shim, converted, and compared with hand-written .taidl
// files; broken specs must give exactly one diagnostic naming the spec's line.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/paths.h"
#include "import/importer.h"
#include "support/diagnostic.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::taidl {
namespace {

using importer::convertShimRecord;
using importer::ImportOptions;
using importer::importPythonSpec;
using importer::ImportResult;

std::string dataPath(const std::string& rel) {
  return testing::sourceDir() + "/tests/import/data/" + rel;
}

// Comparison form of a .taidl text: its canonical printing (docs/taidl.md section 9), which also
// proves that the importer's output parses.
std::string canonical(const std::string& text, const std::string& name) {
  return printIsa(parseIsa(text, name));
}

void expectConverts(const std::string& spec, const std::string& expected) {
  ImportResult result = importPythonSpec(dataPath(spec));
  EXPECT_EQ(canonical(result.text, spec), canonical(readFile(dataPath(expected)), expected))
      << "spec: " << spec;
}

TEST(ImportPython, V1FeaturesMatchHandWrittenSpec) {
  expectConverts("v1_features.py", "v1_features.taidl");
}

TEST(ImportPython, V2FeaturesMatchHandWrittenSpec) {
  expectConverts("v2_features.py", "v2_features.taidl");
}

TEST(ImportPython, V1ImportStyles) {
  expectConverts("styles/v1_importlib.py", "styles/v1_style.taidl");
  expectConverts("styles/v1_idl_import.py", "styles/v1_style.taidl");
}

TEST(ImportPython, V2ImportStyles) {
  expectConverts("styles/v2_taidl_import.py", "styles/v2_style.taidl");
  expectConverts("styles/v2_act_generator.py", "styles/v2_style.taidl");
}

TEST(ImportPython, OutputStartsWithProvenanceAndParameters) {
  ImportResult result = importPythonSpec(dataPath("v1_features.py"));
  EXPECT_EQ(result.text.rfind(
                "# Imported by `tacit import-python` from v1_features.py (TAIDL v1 API).", 0),
            0u);
  // The argparse option is overridable; the module-level constant is not.
  EXPECT_NE(result.text.find("\nparam DIM = 8;\n"), std::string::npos);
  EXPECT_NE(result.text.find("\nconst ROWS = 64;\n"), std::string::npos);
  EXPECT_TRUE(result.warnings.empty());
}

TEST(ImportPython, ReadRangeNotSpanningTheExtentWarns) {
  ImportResult result = importPythonSpec(dataPath("warn_extent.py"));
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_EQ(
      result.warnings[0].rfind(dataPath("warn_extent.py") + ":7: warning: the index range", 0), 0u)
      << result.warnings[0];
  EXPECT_NE(result.text.find("read d0[addr]"), std::string::npos);
}

struct ErrorCase {
  const char* spec;
  int line;  // 0: the diagnostic names the spec without a line
  const char* message;
};

class ImportErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ImportErrors, OneDiagnosticWithTheSpecLine) {
  const ErrorCase& c = GetParam();
  std::string spec = dataPath(std::string("errors/") + c.spec);
  try {
    importPythonSpec(spec);
    FAIL() << "no error for " << c.spec;
  } catch (const DiagnosticError& e) {
    std::string text = e.what();
    std::string where = c.line > 0 ? spec + ":" + std::to_string(c.line) : spec;
    EXPECT_EQ(text.rfind(where + ": error: ", 0), 0u) << text;
    EXPECT_NE(text.find(c.message), std::string::npos) << text;
    EXPECT_EQ(text.find("error:"), text.rfind("error:")) << "more than one diagnostic: " << text;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Specs, ImportErrors,
    ::testing::Values(ErrorCase{"syntax.py", 5, "invalid Python syntax"},
                      ErrorCase{"unsupported_op.py", 8, "unsupported operator 'fancy_op'"},
                      ErrorCase{"exception.py", 6, "the spec raised KeyError: 'large'"},
                      ErrorCase{"undefined_value.py", 18,
                                "value %Out.32 is used before it is defined"},
                      ErrorCase{"no_accelerator.py", 0, "the spec created no Accelerator"},
                      ErrorCase{"unknown_attribute.py", 7, "undeclared attribute 'adr'"},
                      ErrorCase{"power.py", 6, "'**' is not supported"},
                      ErrorCase{"exit_status.py", 5, "exited with status 3"},
                      ErrorCase{"api_misuse.py", 5, "no attribute 'add_macro'"},
                      ErrorCase{"v2_bad_line.py", 11, "unsupported operator 'select_eq_var'"}),
    [](const ::testing::TestParamInfo<ErrorCase>& param_info) {
      std::string name = param_info.param.spec;
      return name.substr(0, name.find('.'));
    });

TEST(ImportPython, SpecRunningTooLongIsStopped) {
  ImportOptions options;
  options.timeout_seconds = 1;
  try {
    importPythonSpec(dataPath("timeout.py"), options);
    FAIL() << "no timeout";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("did not finish within 1 s"), std::string::npos)
        << e.what();
  }
}

TEST(ImportPython, MissingSpecAndMissingInterpreterAreDiagnosed) {
  EXPECT_THROW(importPythonSpec(dataPath("no_such_spec.py")), DiagnosticError);
  ImportOptions options;
  options.python = "/nonexistent/python3";
  try {
    importPythonSpec(dataPath("v1_features.py"), options);
    FAIL() << "no error";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("no Python interpreter"), std::string::npos) << e.what();
  }
}

// The converter on records written by hand: no Python involved.
TEST(ShimRecord, V2RecordConverts) {
  const char* record =
      R"({"status": "ok", "params": [], "ignored": [], "accelerators": [{"flavor": "v2",
    "calls": [
      {"method": "Accelerator", "line": 3, "args": ["R"], "kwargs": {}, "arg_lines": [3], "kwarg_lines": {}},
      {"method": "add_data_model", "line": 4, "args": ["d1", [4], [8], "s8"], "kwargs": {}, "arg_lines": [], "kwarg_lines": {}},
      {"method": "add_instruction", "line": 5, "args": ["neg", [], ["a"]], "kwargs": {}, "arg_lines": [], "kwarg_lines": {}, "instruction": 0},
      {"method": "set_inputs", "line": 6, "args": [[["d1", ["@a.a"], [1]]]], "kwargs": {}, "arg_lines": [], "kwarg_lines": {}, "instruction": 0},
      {"method": "set_outputs", "line": 7, "args": [[["d1", ["@a.a"], [1]]]], "kwargs": {}, "arg_lines": [], "kwarg_lines": {}, "instruction": 0},
      {"method": "add_semantics", "line": 8, "args": ["ENTRY neg { ROOT %Out0 = s8[1,8] negate(%In1); }"], "kwargs": {}, "arg_lines": [8], "kwarg_lines": {}, "instruction": 0}
    ]}]})";
  ImportResult result = convertShimRecord(record, "r.py");
  EXPECT_EQ(canonical(result.text, "r.py"),
            "isa R;\n\nbuffer d1[4] of s8[8];\n\ninstruction neg(; a) {\n"
            "  require a >= 0 && a + 1 <= 4;\n  reads d1[a] size [1];\n  writes d1[a] size [1];\n"
            "  %Out0 = s8[1, 8] negate(%In1);\n}\n");
}

TEST(ShimRecord, ErrorRecordBecomesOneDiagnostic) {
  try {
    convertShimRecord(
        R"({"status": "error", "line": 12, "message": "the spec raised ValueError: x"})", "s.py");
    FAIL() << "no error";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(std::string(e.what()), "s.py:12: error: the spec raised ValueError: x");
  }
}

TEST(ShimRecord, MalformedRecordIsReportedNotCrashed) {
  EXPECT_THROW(convertShimRecord("{\"status\": ", "s.py"), DiagnosticError);
  EXPECT_THROW(convertShimRecord("[1, 2", "s.py"), DiagnosticError);
}

// Fuzz finding (fuzz/seeds/import_record/regression-unclosed-marker-loops.json): a parameter
// marker (\x1eEXPR\x1dVALUE\x1f) left open in a v1 semantics statement looped for ever.
TEST(ShimRecord, UnclosedParameterMarkerIsDiagnosed) {
  std::string record = R"({"status": "ok", "accelerators": [{"flavor": "v1", "calls": [
    {"method": "Accelerator", "line": 1, "args": ["T"], "kwargs": {}},
    {"method": "add_data_model", "line": 2, "args": ["sp", "4", "4xs8"], "kwargs": {}},
    {"method": "add_instruction", "line": 3, "args": ["i", ["a"]], "kwargs": {}, "instruction": 0},
    {"method": "add_semantics", "line": 4, "args": ["
%x:__p0 <- sp[@a.a];
"],
     "kwargs": {}, "instruction": 0}]}]})";
  try {
    convertShimRecord(record, "s.py");
    FAIL() << "no error";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("marker"), std::string::npos) << e.what();
  }
}

// Fuzz finding (fuzz/seeds/import_record/regression-accelerator-without-calls.json): an
// Accelerator whose record lists no call (not even its construction) was named after the first
// call of an empty list (undefined behaviour, found by UBSan).
TEST(ShimRecord, AnAcceleratorWithoutCallsIsDiagnosed) {
  try {
    convertShimRecord(R"({"status": "ok", "accelerators": [{"flavor": "v1", "calls": []}]})",
                      "s.py");
    FAIL() << "no error";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("no recorded call"), std::string::npos) << e.what();
  }
}

// The CLI: output written atomically, nothing left behind on an error.
TEST(ImportCli, WritesOutputOnlyOnSuccess) {
  std::string tool = std::string(TACIT_BINARY_DIR) + "/tools/tacit/tacit";
  if (!fileExists(tool)) GTEST_SKIP() << "the tacit tool is not built at " << tool;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tacit-import-cli-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string out = (dir / "out.taidl").string();
  std::string bad =
      tool + " import-python " + dataPath("errors/syntax.py") + " -o " + out + " 2>/dev/null";
  EXPECT_NE(std::system(bad.c_str()), 0);
  EXPECT_FALSE(fileExists(out));
  std::string good = tool + " import-python " + dataPath("v2_features.py") + " -o " + out;
  EXPECT_EQ(std::system(good.c_str()), 0);
  ASSERT_TRUE(fileExists(out));
  EXPECT_EQ(canonical(readFile(out), out),
            canonical(readFile(dataPath("v2_features.taidl")), "v2"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tacit::taidl
