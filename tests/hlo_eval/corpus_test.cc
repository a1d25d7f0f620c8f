// Every module of the shared HLO corpus whose operations and types the evaluator supports
// evaluates on random inputs without error; the others are rejected by checkEvaluable with the
// documented reason. The folder is enumerated, so a new corpus file fails this test until it is
// either evaluable or listed below.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "common/paths.h"
#include "eval_test_util.h"
#include "hlo/verifier.h"
#include "hlo_eval/random_literal.h"
#include "support/source.h"
#include "support/strings.h"

namespace tacit::hlo {
namespace {

// Corpus files the evaluator does not evaluate, with the reason its diagnostic gives.
const std::map<std::string, std::string>& expectedSkips() {
  static const std::map<std::string, std::string> skips = {
      {"dot_fp8_e4m3fn_fusion.hlo", "unsupported element type f8e4m3fn"},
      {"large_maxtext_train_step_before_optimizations.hlo", "unsupported op 'gather'"},
      {"pytorch_xla_gpt2_block.hlo", "unsupported op 'custom-call'"},
      {"pytorch_xla_linear_relu_neuron.hlo", "unsupported op 'custom-call'"},
      {"pytorch_xla_mini_mlp_train_step.hlo", "unsupported op 'custom-call'"},
      {"syntax_hlo_to_mhlo_import_catalog.hlo",
       "window size 3 of spatial dimension 0"},  // invalid HLO
      {"syntax_parser_test_AddDependency.hlo", "unsupported op 'after-all'"},
      {"syntax_parser_test_AllReduce.hlo", "unsupported op 'all-reduce'"},
      {"syntax_parser_test_AsyncOpsWithSyntaxSugar.hlo", "unknown opcode 'custom-call-start'"},
      {"syntax_parser_test_CustomCallWithBackendConfigInCurlyBraces.hlo",
       "unsupported op 'custom-call'"},
      {"syntax_parser_test_DotWithAlgorithm.hlo", "unsupported algorithm=dot_tf32_tf32_f32"},
      {"syntax_parser_test_ParseC64Literal.hlo", "unsupported element type c64"},
      {"syntax_parser_test_Scatter.hlo", "unsupported op 'scatter'"},
      {"syntax_parser_test_TopK.hlo", "unsupported op 'topk'"},
  };
  return skips;
}

std::vector<std::filesystem::path> corpusFiles() {
  std::vector<std::filesystem::path> files;
  std::filesystem::path dir = std::filesystem::path(tacit::testing::sharedDir()) / "corpus" / "hlo";
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Literal> randomArguments(const HloComputation& entry, uint64_t seed) {
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry.parameterCount(); ++i) {
    args.push_back(
        randomLiteral(entry.parameter(i)->shape(), mixSeed(seed, static_cast<uint64_t>(i))));
  }
  return args;
}

// Modules whose parameters and result exceed this many bytes are compiled and checked but not
// run here (they take seconds and gigabytes; `tacit hlo eval --random-inputs` runs them).
constexpr int64_t kRunBudgetBytes = int64_t{96} << 20;

int64_t ioBytes(const HloComputation& entry) {
  int64_t bytes = 0;
  std::vector<Shape> shapes = flattenShape(entry.root()->shape());
  for (int64_t i = 0; i < entry.parameterCount(); ++i) {
    for (const Shape& s : flattenShape(entry.parameter(i)->shape()))
      shapes.push_back(s);
  }
  for (const Shape& s : shapes)
    bytes += s.isArray() ? s.byteSize() : 0;
  return bytes;
}

std::vector<std::string>& tooLargeToRun() {
  static std::vector<std::string> files;
  return files;
}

// Parses, verifies, checks and evaluates every part of a file; returns the first diagnostic.
std::string evaluateFile(const std::filesystem::path& path) {
  std::string name = path.string();
  try {
    for (const InputPart& part : splitInputFile(readFile(name))) {
      auto m = parseModule(part.text, name);
      verifyModule(*m);
      checkEvaluable(*m);
      if (ioBytes(*m->entry()) > kRunBudgetBytes) {
        tooLargeToRun().push_back(path.filename().string());
        continue;
      }
      EvalPlan plan = EvalPlan::compile(*m->entry());
      std::vector<Literal> args = randomArguments(*m->entry(), 7);
      Literal first = plan.run(args);
      EXPECT_TRUE(first.shape().compatible(m->entry()->root()->shape())) << name;
      // Plans are deterministic across runs.
      EXPECT_TRUE(plan.run(args).bitwiseEqual(first)) << name;
    }
  } catch (const DiagnosticError& e) {
    return e.diagnostic().message;
  }
  return {};
}

TEST(EvalCorpus, EverySupportedModuleEvaluates) {
  TACIT_REQUIRE_SHARED_DATA("corpus/hlo");
  std::vector<std::filesystem::path> files = corpusFiles();
  ASSERT_GT(files.size(), 50u);
  int evaluated = 0;
  for (const auto& path : files) {
    std::string file = path.filename().string();
    std::string error = evaluateFile(path);
    auto skip = expectedSkips().find(file);
    if (skip == expectedSkips().end()) {
      EXPECT_EQ(error, "") << file;
      if (error.empty()) ++evaluated;
    } else {
      EXPECT_NE(error.find(skip->second), std::string::npos) << file << ": " << error;
    }
  }
  EXPECT_EQ(evaluated + static_cast<int>(expectedSkips().size()), static_cast<int>(files.size()));
  std::printf(
      "%d corpus files supported (%zu of them checked but too large to run here: %s), %zu "
      "skipped\n",
      evaluated, tooLargeToRun().size(), join(tooLargeToRun(), ", ").c_str(),
      expectedSkips().size());
}

}  // namespace
}  // namespace tacit::hlo
