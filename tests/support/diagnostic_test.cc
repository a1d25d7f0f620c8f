#include "support/diagnostic.h"

#include <gtest/gtest.h>

#include "support/source.h"

namespace tacit {
namespace {

TEST(Diagnostic, FormatsFileLineColumnMessageAndHint) {
  Diagnostic d = makeError("k.hlo", {3, 7}, "expected ')'", "close the operand list");
  EXPECT_EQ(d.str(), "k.hlo:3:7: error: expected ')'\n  hint: close the operand list");
}

TEST(Diagnostic, FormatsWithoutLocation) {
  Diagnostic d = makeError("", {}, "missing --isa");
  EXPECT_EQ(d.str(), "error: missing --isa");
}

TEST(Diagnostic, NotesAreIndented) {
  Diagnostic d = makeError("a", {1, 1}, "bad");
  d.notes.push_back(Diagnostic{Severity::kNote, "a", {2, 3}, "here", "", {}});
  EXPECT_EQ(d.str(), "a:1:1: error: bad\n  a:2:3: note: here");
}

TEST(SourceFile, LocatesLinesAndUtf8Columns) {
  SourceFile f("x", "ab\n\xc3\xa9z\nlast");
  EXPECT_EQ(f.locate(0), (SourceLoc{1, 1}));
  EXPECT_EQ(f.locate(1), (SourceLoc{1, 2}));
  EXPECT_EQ(f.locate(3), (SourceLoc{2, 1}));
  EXPECT_EQ(f.locate(5), (SourceLoc{2, 2}));  // after the two-byte e-acute
  EXPECT_EQ(f.locate(7), (SourceLoc{3, 1}));
  EXPECT_EQ(f.locate(1000), (SourceLoc{3, 5}));
  EXPECT_EQ(f.line(2), "\xc3\xa9z");
}

TEST(SourceFile, FailThrowsWithPosition) {
  SourceFile f("spec.taidl", "x\n  y");
  try {
    f.fail(4, "unexpected 'y'");
    FAIL();
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(std::string(e.what()), "spec.taidl:2:3: error: unexpected 'y'");
  }
}

TEST(ReadFile, MissingFileIsADiagnostic) {
  EXPECT_THROW(readFile("/nonexistent/tacit/file"), DiagnosticError);
  EXPECT_THROW(readFile("/"), DiagnosticError);
}

}  // namespace
}  // namespace tacit
