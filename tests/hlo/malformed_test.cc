// Malformed HLO text: each input gives exactly one diagnostic, with file:line:col and a message
// saying what was expected. The cases live in malformed_cases.inc.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace tacit::hlo {
namespace {

struct MalformedCase {
  const char* name;
  std::string text;
  uint32_t line;
  uint32_t col;
  const char* message;
};

const std::vector<MalformedCase>& cases() {
  static const std::vector<MalformedCase> all = {
#define CASE(name, text, line, col, message) \
  {#name, std::string(text, sizeof(text) - 1), line, col, message},
#include "malformed_cases.inc"
#undef CASE
  };
  return all;
}

TEST(HloMalformed, AtLeastFortyCases) {
  EXPECT_GE(cases().size(), 40u);
}

TEST(HloMalformed, EachGivesOneDiagnosticAtItsPosition) {
  for (const MalformedCase& c : cases()) {
    SCOPED_TRACE(c.name);
    try {
      parseModule(c.text, "t.hlo");
      ADD_FAILURE() << "no diagnostic";
    } catch (const DiagnosticError& e) {
      const Diagnostic& d = e.diagnostic();
      EXPECT_EQ(d.file, "t.hlo");
      EXPECT_EQ(d.loc.line, c.line) << d.str();
      EXPECT_EQ(d.loc.col, c.col) << d.str();
      EXPECT_NE(d.message.find(c.message), std::string::npos) << d.str();
      EXPECT_TRUE(d.notes.empty());
      EXPECT_EQ(
          std::string(e.what()).rfind(
              "t.hlo:" + std::to_string(c.line) + ":" + std::to_string(c.col) + ": error: ", 0),
          0u);
    }
  }
}

TEST(HloMalformed, HintsForCommonPitfalls) {
  auto hint = [](const std::string& text) { return testing::diagnosticOf(text).hint; };
  EXPECT_NE(
      hint("HloModule m\nENTRY e {\n  x=f32[] parameter(0)\n}\n").find("put a space before '='"),
      std::string::npos);
  EXPECT_NE(hint("HloModule m\nENTRY e {\n  s1 = f32[] parameter(0)\n}\n").find("write %s1"),
            std::string::npos);
  EXPECT_NE(hint("HloModule m\nENTRY e {\n  x = f32[4,8]{T(16,64)} parameter(0)\n}\n")
                .find("{1,0:T(...)}"),
            std::string::npos);
  EXPECT_NE(hint("HloModule m\nENTRY e {\n  x = f32[4,8]{} parameter(0)\n}\n").find("{1,0}"),
            std::string::npos);
  EXPECT_NE(
      hint("HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  y = f32[] generate-token(x)\n}\n")
          .find("after-all"),
      std::string::npos);
  EXPECT_NE(hint("HloModule m\nENTRY e {\n  x = i8[] parameter(0)\n}\n").find("s8"),
            std::string::npos);
  EXPECT_NE(hint("HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  y = f32[] negate(ROOT)\n}\n")
                .find("%ROOT"),
            std::string::npos);
}

TEST(HloMalformed, DeepNestingIsRejectedNotOverflowed) {
  std::string shape;
  for (int i = 0; i < 5000; ++i)
    shape += "(";
  try {
    parseShape(shape);
    FAIL();
  } catch (const DiagnosticError& e) {
    EXPECT_NE(e.diagnostic().message.find("nesting is too deep"), std::string::npos);
    EXPECT_EQ(e.diagnostic().loc.col,
              static_cast<uint32_t>(kMaxNestingDepth + 1));  // the first '(' too many
  }
  std::string nested = "x";
  for (int i = 0; i < 5000; ++i)
    nested = "negate(" + nested + ")";
  std::string text =
      "HloModule m\nENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] " + nested + "\n}\n";
  EXPECT_NE(testing::diagnosticOf(text).message.find("nesting is too deep"), std::string::npos);
  std::string braces =
      "HloModule m\nENTRY e {\n  ROOT x = f32[] custom-call(), custom_call_target=\"a\", metadata=";
  for (int i = 0; i < 5000; ++i)
    braces += "{";
  EXPECT_NE(testing::diagnosticOf(braces).message.find("nesting is too deep"), std::string::npos);
}

TEST(HloMalformed, HugeConstantsDoNotAllocate) {
  EXPECT_NE(
      testing::diagnosticOf("HloModule m\nENTRY e {\n  ROOT c = f32[1000000000] constant({1})\n}\n")
          .message.find("more than the text can hold"),
      std::string::npos);
  EXPECT_NE(
      testing::diagnosticOf("HloModule m\nENTRY e {\n  ROOT c = f32[1000000000] constant(1)\n}\n")
          .message.find("more than a scalar may fill"),
      std::string::npos);
  EXPECT_NE(testing::diagnosticOf(
                "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(1000000000000)\n}\n")
                .message.find("out of range"),
            std::string::npos);
}

}  // namespace
}  // namespace tacit::hlo
