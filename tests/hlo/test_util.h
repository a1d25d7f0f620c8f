// Helpers for the HLO front-end tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "support/diagnostic.h"

namespace tacit::hlo::testing {

inline std::unique_ptr<HloModule> parse(const std::string& text) {
  return parseModule(text, "t.hlo");
}

// The diagnostic that parsing (and, if `verify`, verifying) `text` throws; fails the test if none.
inline Diagnostic diagnosticOf(const std::string& text, bool verify = false) {
  try {
    auto m = parseModule(text, "t.hlo");
    if (verify) verifyModule(*m);
  } catch (const DiagnosticError& e) {
    return e.diagnostic();
  }
  ADD_FAILURE() << "expected a diagnostic for:\n" << text;
  return {};
}

// Asserts one diagnostic at line:col whose message contains `message`.
#define EXPECT_DIAG(TEXT, VERIFY, LINE, COL, MESSAGE)                           \
  do {                                                                          \
    ::tacit::Diagnostic d_ = ::tacit::hlo::testing::diagnosticOf(TEXT, VERIFY); \
    EXPECT_EQ(d_.file, "t.hlo");                                                \
    EXPECT_EQ(d_.loc.line, static_cast<uint32_t>(LINE)) << d_.str();            \
    EXPECT_EQ(d_.loc.col, static_cast<uint32_t>(COL)) << d_.str();              \
    EXPECT_NE(d_.message.find(MESSAGE), std::string::npos) << d_.str();         \
  } while (0)

// print(parse(text)), asserting that it is a fixed point of print . parse.
inline std::string canonical(const std::string& text) {
  auto m = parseModule(text, "t.hlo");
  std::string once = printModule(*m);
  std::string twice = printModule(*parseModule(once, "printed.hlo"));
  EXPECT_EQ(once, twice);
  return once;
}

}  // namespace tacit::hlo::testing
