// examples/attention: the shipped module computes exactly what the corpus QKV module computes,
// and the shipped inputs are what inputs.hlo generates.
#include <gtest/gtest.h>

#include <cmath>

#include "common/paths.h"
#include "eval_test_util.h"
#include "hlo/npy_literal.h"
#include "support/source.h"

namespace tacit::hlo {
namespace {

std::string exampleDir() {
  return tacit::testing::sourceDir() + "/examples/attention/";
}

std::unique_ptr<HloModule> load(const std::string& path) {
  return parseModule(readFile(path), path);
}

std::vector<Literal> shippedInputs() {
  Shape s(PrimitiveType::kBF16, {64, 64});
  return {readNpyLiteral(exampleDir() + "q.npy", s, "q"),
          readNpyLiteral(exampleDir() + "k.npy", s, "k"),
          readNpyLiteral(exampleDir() + "v.npy", s, "v")};
}

TEST(AttentionExample, InputsAreWhatInputsHloGenerates) {
  Literal qkv = evaluate(*load(exampleDir() + "inputs.hlo"), std::vector<Literal>{});
  std::vector<Literal> shipped = shippedInputs();
  for (size_t i = 0; i < 3; ++i)
    EXPECT_LITERAL(qkv.elements()[i], shipped[i]) << i;
}

TEST(AttentionExample, MatchesTheCorpusModule) {
  TACIT_REQUIRE_SHARED_DATA("corpus/hlo");
  auto example = load(exampleDir() + "attention.hlo");
  auto corpus =
      load(tacit::testing::sharedDir() + "/corpus/hlo/attention_qkv_bf16_64x64_act_tutorial.hlo");
  std::vector<Literal> inputs = shippedInputs();
  Literal a = evaluate(*example, inputs), b = evaluate(*corpus, inputs);
  EXPECT_LITERAL(a, b);
  // Softmax rows are convex weights: outputs stay within the range of v (|v| <= 2.5).
  for (int64_t i = 0; i < a.elementCount(); ++i)
    EXPECT_LE(std::fabs(a.getDouble(i)), 2.5);
}

}  // namespace
}  // namespace tacit::hlo
