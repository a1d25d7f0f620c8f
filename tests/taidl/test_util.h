// Helpers for the .taidl tests.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "support/diagnostic.h"
#include "taidl/isa.h"

namespace tacit::taidl::testing {

inline Isa load(const std::string& text, DiagnosticSink* warnings = nullptr,
                const ParamOverrides& overrides = {}) {
  return loadIsa(text, "t.taidl", overrides, warnings);
}

// The error that loading `text` throws; fails the test if none.
inline Diagnostic errorOf(const std::string& text, const ParamOverrides& overrides = {}) {
  try {
    loadIsa(text, "t.taidl", overrides);
  } catch (const DiagnosticError& e) {
    return e.diagnostic();
  }
  ADD_FAILURE() << "expected an error for:\n" << text;
  return {};
}

// The warnings of loading `text` (which must load).
inline std::vector<Diagnostic> warningsOf(const std::string& text) {
  DiagnosticSink sink;
  loadIsa(text, "t.taidl", {}, &sink);
  return sink.all();
}

// Asserts one error at line:col whose message contains `message`.
#define EXPECT_TAIDL_ERROR(TEXT, LINE, COL, MESSAGE)                    \
  do {                                                                  \
    ::tacit::Diagnostic d_ = ::tacit::taidl::testing::errorOf(TEXT);    \
    EXPECT_EQ(d_.file, "t.taidl") << d_.str();                          \
    EXPECT_EQ(d_.loc.line, static_cast<uint32_t>(LINE)) << d_.str();    \
    EXPECT_EQ(d_.loc.col, static_cast<uint32_t>(COL)) << d_.str();      \
    EXPECT_NE(d_.message.find(MESSAGE), std::string::npos) << d_.str(); \
  } while (0)

// print(parse(text)), asserting that printing is a fixed point: print(parse(print(x))) == print(x).
inline std::string canonical(const std::string& text) {
  std::string once = printIsa(parseIsa(text, "t.taidl"));
  std::string twice = printIsa(parseIsa(once, "printed.taidl"));
  EXPECT_EQ(once, twice);
  return once;
}

}  // namespace tacit::taidl::testing
