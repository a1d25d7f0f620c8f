// The Python-expression translation of the importer: TAIDL specs write constraints, updates,
// backquoted dimensions and IF conditions in Python; .taidl has its own operators (docs/taidl.md
// §6).
#include <gtest/gtest.h>

#include "import/importer_internal.h"

namespace tacit::importer {
namespace {

std::string translate(const std::string& python, const Naming& naming = {}) {
  return printExpr(*parsePyExpr(python, 1), naming);
}

TEST(PyExpr, ArithmeticKeepsPythonPrecedenceWithMinimalParentheses) {
  EXPECT_EQ(translate("@a.x + @a.y * 2"), "x + y * 2");
  EXPECT_EQ(translate("(@a.x + @a.y) * 2"), "(x + y) * 2");
  EXPECT_EQ(translate("@a.a - (@a.b - @a.c)"), "a - (b - c)");
  EXPECT_EQ(translate("@a.a - @a.b - @a.c"), "a - b - c");
  EXPECT_EQ(translate("@a.x // 4 % 3"), "x // 4 % 3");
  EXPECT_EQ(translate("@a.x / (@a.y * 2)"), "x / (y * 2)");
  EXPECT_EQ(translate("-@a.x + -3"), "-x + -3");
}

TEST(PyExpr, BooleansConditionalsAndChainedComparisons) {
  EXPECT_EQ(translate("@a.n >= 1 and @a.n <= 4 or not @s.f"), "n >= 1 && n <= 4 || !$f");
  EXPECT_EQ(translate("0 if @s.p == -1 else @s.p"), "$p == -1 ? 0 : $p");
  EXPECT_EQ(translate("0 < @a.x < 5"), "0 < x && x < 5");
  EXPECT_EQ(translate("(@a.a == 1) == (@a.b == 1)"), "(a == 1) == (b == 1)");
  EXPECT_EQ(translate("True and False"), "1 && 0");
}

TEST(PyExpr, ReferencesResolveAsWholeTokens) {
  // TAIDL-TO substituted names textually, corrupting `addr_in` when `addr` was replaced first.
  Naming naming;
  naming.attrs = {{"addr", "A"}, {"addr_in", "B"}};
  EXPECT_EQ(translate("@a.addr + @a.addr_in", naming), "A + B");
  EXPECT_EQ(translate("@c.n * 128 + @l.i", naming), "n * 128 + i");
}

TEST(PyExpr, ParameterMarkersBecomeParameterExpressions) {
  Naming naming;
  naming.params = {{"__p0", "SIZE"}};
  EXPECT_EQ(translate("@a.rows*\x1e(1024 * __p0)\x1d"
                      "16384\x1f",
                      naming),
            "rows * (1024 * SIZE)");
  EXPECT_EQ(concreteText("x\x1e__p0\x1d"
                         "16\x1fy"),
            "x16y");
}

TEST(PyExpr, IntOfDivisionIsFloorDivision) {
  EXPECT_EQ(translate("int(@a.h / 4)"), "h // 4");
}

TEST(PyExpr, UnsupportedSyntaxIsAnErrorWithTheLine) {
  for (const char* bad : {"2 ** 3", "@a.", "f(1)", "@q.x", "(1 + 2", "1 +"}) {
    try {
      parsePyExpr(bad, 42);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const ImportError& e) {
      EXPECT_EQ(e.line, 42) << bad;
    }
  }
}

std::string notChain(int n) {
  std::string s;
  for (int k = 0; k < n; ++k)
    s += "not ";
  return s + "1";
}

TEST(PyExpr, DeepNestingIsAnErrorNotAStackOverflow) {
  for (const std::string& bad : {std::string(100000, '(') + "1" + std::string(100000, ')'),
                                 std::string(100000, '-') + "1", notChain(50000)}) {
    try {
      parsePyExpr(bad, 7);
      ADD_FAILURE() << "accepted a deeply nested expression";
    } catch (const ImportError& e) {
      EXPECT_EQ(e.line, 7);
      EXPECT_LT(e.message.size(), 200u) << "the message quotes the whole expression";
    }
  }
}

TEST(PyExpr, EvaluationFollowsPythonAndExactDivision) {
  std::map<std::string, int64_t> env = {{"a:x", -1}, {"a:y", 7}};
  EXPECT_EQ(evalExpr(*parsePyExpr("@a.x % 4", 1), env), 3);
  EXPECT_EQ(evalExpr(*parsePyExpr("@a.x // 4", 1), env), -1);
  EXPECT_EQ(evalExpr(*parsePyExpr("@a.y / 7", 1), env), 1);
  EXPECT_EQ(evalExpr(*parsePyExpr("@a.y / 2", 1), env), std::nullopt);  // inexact
  EXPECT_EQ(evalExpr(*parsePyExpr("@a.z + 1", 1), env), std::nullopt);  // unknown
}

TEST(Json, ParsesTheShimsEncoding) {
  Json j = parseJson(R"({"a": [1, -2, 3.5, "x\u001ey", true, null], "b": {"c": "\u00e9"}})");
  ASSERT_TRUE(j.isObject());
  const Json* a = j.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items.size(), 6u);
  EXPECT_EQ(a->items[1].i, -2);
  EXPECT_EQ(a->items[3].s, "x\x1ey");
  EXPECT_TRUE(a->items[4].b);
  EXPECT_EQ(j.find("b")->find("c")->s, "\xc3\xa9");
  EXPECT_THROW(parseJson("{\"a\": }"), std::runtime_error);
  EXPECT_THROW(parseJson(std::string(500, '[')), std::runtime_error);
}

// Fuzz finding (fuzz/seeds/import_record/regression-float-in-a-size.json): `n * .32` in a size
// was printed as it stood, which .taidl cannot read; floats stand only as constant values, where
// they are written as .taidl float literals.
TEST(PyExpr, FloatsAreConstantValuesOnly) {
  try {
    parsePyExpr("@a.n * .32", 7);
    FAIL() << "a float in an integer expression was accepted";
  } catch (const ImportError& e) {
    EXPECT_EQ(e.line, 7);
    EXPECT_NE(e.message.find("floating-point"), std::string::npos) << e.message;
  }
  EXPECT_NO_THROW(parsePyExpr(".32", 1, FloatLiterals::kAllowed));
  EXPECT_EQ(floatText(".32"), "0.32");
  EXPECT_EQ(floatText("5."), "5.0");
  EXPECT_EQ(floatText("1e5"), "1e+05");
  EXPECT_EQ(floatText("1e999"), "inf");
}

// Fuzz finding (fuzz/seeds/import_record/regression-expression-nested-too-deep.json): 69 unary
// minuses in a buffer index passed the importer's parser (100 levels of its own recursion) and were
// written as they stood, which .taidl (64 levels, blocks included) refused to read. The importer
// now measures the nesting of what it will write: 48 levels at most, whatever makes them.
TEST(PyExpr, NestingIsBoundedAsTaidlWillReadIt) {
  auto nested = [](int unary, int parens) {
    return std::string(static_cast<size_t>(unary), '-') + "@a.row" +
           std::string(static_cast<size_t>(parens), ')');
  };
  EXPECT_NO_THROW(parsePyExpr(nested(kMaxExprNesting, 0), 3));
  try {
    parsePyExpr(nested(kMaxExprNesting + 1, 0), 3);
    FAIL() << "an expression nested deeper than .taidl reads was accepted";
  } catch (const ImportError& e) {
    EXPECT_EQ(e.line, 3);
    EXPECT_NE(e.message.find("the limit is 48"), std::string::npos) << e.message;
  }
  // Parentheses the printer writes count too: 45 minuses before x - (x - (x - x)) are 48 levels
  // (the difference and both right operands parenthesised), one more difference is 49.
  auto minusDifferences = [](int differences) {
    std::string e = "@a.x";
    for (int k = 0; k < differences; ++k)
      e = "(@a.x - " + e + ")";
    return std::string(45, '-') + e;
  };
  EXPECT_NO_THROW(parsePyExpr(minusDifferences(3), 1));
  try {
    parsePyExpr(minusDifferences(4), 1);
    FAIL() << "an expression nested deeper than .taidl reads was accepted";
  } catch (const ImportError& e) {
    EXPECT_NE(e.message.find("nests 49 levels"), std::string::npos) << e.message;
  }
  // A left-nested sum prints without parentheses: no nesting at all (the 30 parentheses of the
  // input count only against the importer's own parser, 100 levels of its recursion).
  std::string sum = "@a.x";
  for (int k = 0; k < 30; ++k)
    sum = "(" + sum + ") + @a.x";
  EXPECT_NO_THROW(parsePyExpr(sum, 1));
}

}  // namespace
}  // namespace tacit::importer
