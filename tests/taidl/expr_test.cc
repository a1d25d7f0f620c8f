// Expression semantics (docs/taidl.md section 6), printing, polynomials, affine forms, intervals
// and simplification.
#include <gtest/gtest.h>

#include "taidl/expr.h"
#include "taidl/poly.h"
#include "taidl/simplify.h"
#include "test_util.h"

namespace tacit::taidl {
namespace {

using testing::errorOf;
using testing::load;

int64_t value(const std::string& expr) {
  Isa isa = load("isa t;\nconst X = " + expr + ";\n");
  return isa.consts[0].value;
}

TEST(ExprSemantics, EveryOperator) {
  EXPECT_EQ(value("1 + 2 * 3"), 7);
  EXPECT_EQ(value("(1 + 2) * 3"), 9);
  EXPECT_EQ(value("2 - 3 - 4"), -5);
  EXPECT_EQ(value("12 / 2 / 3"), 2);
  EXPECT_EQ(value("17 // 5"), 3);
  EXPECT_EQ(value("17 % 5"), 2);
  EXPECT_EQ(value("-3"), -3);
  EXPECT_EQ(value("--3"), 3);
  EXPECT_EQ(value("!0"), 1);
  EXPECT_EQ(value("!7"), 0);
  EXPECT_EQ(value("3 == 3"), 1);
  EXPECT_EQ(value("3 != 3"), 0);
  EXPECT_EQ(value("2 < 3"), 1);
  EXPECT_EQ(value("3 <= 3"), 1);
  EXPECT_EQ(value("2 > 3"), 0);
  EXPECT_EQ(value("2 >= 3"), 0);
  EXPECT_EQ(value("2 && 3"), 1);
  EXPECT_EQ(value("0 || 0"), 0);
  EXPECT_EQ(value("0 || 5"), 1);
  EXPECT_EQ(value("1 ? 10 : 20"), 10);
  EXPECT_EQ(value("0 ? 10 : 20"), 20);
  EXPECT_EQ(value("0 ? 1 : 0 ? 2 : 3"), 3);
  EXPECT_EQ(value("min(4, -2)"), -2);
  EXPECT_EQ(value("max(4, -2)"), 4);
  EXPECT_EQ(value("true + true"), 2);
  EXPECT_EQ(value("false"), 0);
  EXPECT_EQ(value("0x10 + 0xff"), 271);
  EXPECT_EQ(value("1 + 2 < 4 && 5 > 4"), 1);
}

TEST(ExprSemantics, PythonFloorDivisionAndModulo) {
  EXPECT_EQ(value("-7 // 2"), -4);
  EXPECT_EQ(value("7 // -2"), -4);
  EXPECT_EQ(value("-7 // -2"), 3);
  EXPECT_EQ(value("-8 // 2"), -4);
  EXPECT_EQ(value("-1 % 4"), 3);
  EXPECT_EQ(value("-7 % 4"), 1);
  EXPECT_EQ(value("7 % -4"), -1);
  EXPECT_EQ(value("-7 % -4"), -3);
  EXPECT_EQ(value("8 % -4"), 0);
  EXPECT_EQ(value("-9223372036854775807 - 1 + 0"), INT64_MIN);
  EXPECT_EQ(value("(-9223372036854775807 - 1) % -1"), 0);
}

TEST(ExprSemantics, ShortCircuitSkipsErrors) {
  EXPECT_EQ(value("0 && 1 / 0"), 0);
  EXPECT_EQ(value("1 || 1 // 0"), 1);
  EXPECT_EQ(value("1 ? 5 : 1 / 0"), 5);
  EXPECT_EQ(value("0 ? 1 % 0 : 6"), 6);
}

TEST(ExprSemantics, ErrorsAreLocatedAtTheOperator) {
  Diagnostic d = errorOf("isa t;\nconst X = 7 / 2;\n");
  EXPECT_EQ(d.loc.line, 2u);
  EXPECT_EQ(d.loc.col, 13u);
  EXPECT_NE(d.message.find("inexact division 7 / 2"), std::string::npos) << d.str();
  d = errorOf("isa t;\nparam P = 1 // 0;\n");
  EXPECT_EQ(d.loc.col, 13u);
  EXPECT_NE(d.message.find("division by zero"), std::string::npos) << d.str();
  EXPECT_NE(d.message.find("parameter P"), std::string::npos) << d.str();
  d = errorOf("isa t;\nconst X = 5 % (2 - 2);\n");
  EXPECT_NE(d.message.find("division by zero"), std::string::npos) << d.str();
  d = errorOf("isa t;\nconst X = 9223372036854775807 + 1;\n");
  EXPECT_EQ(d.loc.col, 31u);
  EXPECT_NE(d.message.find("integer overflow"), std::string::npos) << d.str();
  d = errorOf("isa t;\nconst X = 4611686018427387904 * 2;\n");
  EXPECT_NE(d.message.find("integer overflow"), std::string::npos) << d.str();
  d = errorOf("isa t;\nconst X = -(-9223372036854775807 - 1);\n");
  EXPECT_NE(d.message.find("integer overflow"), std::string::npos) << d.str();
  d = errorOf("isa t;\nconst X = (-9223372036854775807 - 1) // -1;\n");
  EXPECT_NE(d.message.find("integer overflow"), std::string::npos) << d.str();
  d = errorOf("isa t;\nconst X = 99999999999999999999;\n");
  EXPECT_NE(d.message.find("too large"), std::string::npos) << d.str();
}

std::string printed(const std::string& expr) {
  std::string text = testing::canonical("isa t;\nparam X = " + expr + ";\n");
  size_t b = text.find("param X = ") + 10;
  return text.substr(b, text.find(";\n", b) - b);
}

TEST(ExprPrinting, MinimalParentheses) {
  EXPECT_EQ(printed("(a + b) * c"), "(a + b) * c");
  EXPECT_EQ(printed("a + (b * c)"), "a + b * c");
  EXPECT_EQ(printed("a - (b - c)"), "a - (b - c)");
  EXPECT_EQ(printed("(a - b) - c"), "a - b - c");
  EXPECT_EQ(printed("a / (b * c)"), "a / (b * c)");
  EXPECT_EQ(printed("-(a + b)"), "-(a + b)");
  EXPECT_EQ(printed("(-a) * b"), "-a * b");
  EXPECT_EQ(printed("!(a < b)"), "!(a < b)");
  EXPECT_EQ(printed("a ? b : (c ? d : e)"), "a ? b : c ? d : e");
  EXPECT_EQ(printed("(a ? b : c) ? d : e"), "(a ? b : c) ? d : e");
  EXPECT_EQ(printed("(a || b) ? c : d"), "a || b ? c : d");
  EXPECT_EQ(printed("min(a, b) + max(1, (2))"), "min(a, b) + max(1, 2)");
  EXPECT_EQ(printed("(a < b) == (c < d)"), "(a < b) == (c < d)");
  EXPECT_EQ(printed("a && (b || c)"), "a && (b || c)");
  EXPECT_EQ(printed("a || (b && c)"), "a || b && c");
  EXPECT_EQ(printed("(a || b) || c"), "a || b || c");
  EXPECT_EQ(printed("a || (b || c)"), "a || (b || c)");
  EXPECT_EQ(printed("a % 4 // 2"), "a % 4 // 2");
  EXPECT_EQ(printed("a%4"), "a % 4");
  EXPECT_EQ(printed("($r + 1) % 4"), "($r + 1) % 4");
  EXPECT_EQ(printed("true && !false"), "true && !false");
  EXPECT_EQ(printed("0x1F"), "31");
}

Expr alpha(int32_t slot, const std::string& name) {
  return Expr::ref(RefKind::kAlpha, slot, name);
}
Expr beta(int32_t slot, const std::string& name) {
  return Expr::ref(RefKind::kBeta, slot, name);
}
Expr num(int64_t v) {
  return Expr::integer(v);
}
Expr bin(ExprOp op, Expr a, Expr b) {
  return Expr::binary(op, std::move(a), std::move(b));
}

TEST(ExprEval, ReadsSlotsFromTheEnvironment) {
  Expr e = bin(ExprOp::kAdd, bin(ExprOp::kMul, alpha(0, "n"), num(128)), beta(1, "addr"));
  std::vector<int64_t> attrs = {3, 10};
  EXPECT_EQ(evalExpr(e, EvalEnv{attrs, {}, {}}), 394);
  Expr r = bin(ExprOp::kMod, bin(ExprOp::kAdd, Expr::ref(RefKind::kReg, 0, "p"), num(1)), num(4));
  std::vector<int64_t> regs = {3};
  EXPECT_EQ(evalExpr(r, EvalEnv{{}, regs, {}}), 0);
  Expr l = bin(ExprOp::kMul, Expr::ref(RefKind::kLoop, 0, "i"), num(2));
  std::vector<int64_t> loops = {21};
  EXPECT_EQ(evalExpr(l, EvalEnv{{}, {}, loops}), 42);
  Expr z = bin(ExprOp::kDiv, num(1), alpha(0, "n"));
  std::vector<int64_t> zero = {0};
  EXPECT_THROW(evalExpr(z, EvalEnv{zero, {}, {}}), ExprError);
}

TEST(Poly, CanonicalForm) {
  Expr n = alpha(0, "n");
  auto p = toPoly(bin(ExprOp::kMul, bin(ExprOp::kAdd, n, num(1)), bin(ExprOp::kSub, n, num(1))));
  auto q = toPoly(bin(ExprOp::kSub, bin(ExprOp::kMul, n, n), num(1)));
  ASSERT_TRUE(p && q);
  EXPECT_EQ(*p, *q);
  EXPECT_EQ(p->degree(), 2);
  auto half = toPoly(bin(ExprOp::kDiv, bin(ExprOp::kMul, num(2), n), num(2)));
  ASSERT_TRUE(half);
  EXPECT_EQ(*half, Poly::var(Var{RefKind::kAlpha, 0}));
  EXPECT_FALSE(toPoly(bin(ExprOp::kDiv, n, num(2))));
  EXPECT_FALSE(toPoly(bin(ExprOp::kFloorDiv, n, num(2))));
  EXPECT_FALSE(toPoly(bin(ExprOp::kMin, n, num(2))));
  EXPECT_FALSE(toPoly(bin(ExprOp::kMul, num(INT64_MAX), bin(ExprOp::kMul, n, num(2)))));
  Expr back = polyToExpr(*p, [](Var) { return std::string("n"); });
  EXPECT_EQ(exprText(back), "n * n - 1");
}

TEST(Poly, AffineInBeta) {
  Expr a = beta(1, "a"), b = beta(2, "b"), n = alpha(0, "n");
  Expr e =
      bin(ExprOp::kAdd, bin(ExprOp::kAdd, bin(ExprOp::kMul, num(2), a), bin(ExprOp::kMul, n, b)),
          bin(ExprOp::kMul, num(3), n));
  auto aff = affineIn(*toPoly(e), RefKind::kBeta);
  ASSERT_TRUE(aff);
  EXPECT_EQ(aff->constant, *toPoly(bin(ExprOp::kMul, num(3), n)));
  ASSERT_EQ(aff->terms.size(), 2u);
  EXPECT_EQ(aff->terms[0].var.slot, 1);
  EXPECT_EQ(aff->terms[0].coeff, Poly::constant(2));
  EXPECT_EQ(aff->terms[1].coeff, *toPoly(n));
  EXPECT_FALSE(affineIn(*toPoly(bin(ExprOp::kMul, a, b)), RefKind::kBeta));
  EXPECT_FALSE(affineIn(*toPoly(bin(ExprOp::kMul, a, a)), RefKind::kBeta));
}

TEST(Interval, Bounds) {
  Expr n = alpha(0, "n");
  VarBounds bounds = [](Var) { return Interval{1, 10}; };
  EXPECT_EQ(boundExpr(bin(ExprOp::kAdd, bin(ExprOp::kMul, n, num(2)), num(1)), bounds),
            (Interval{3, 21}));
  EXPECT_EQ(boundExpr(bin(ExprOp::kFloorDiv, n, num(2)), bounds), (Interval{0, 5}));
  EXPECT_EQ(boundExpr(bin(ExprOp::kMod, n, num(3)), bounds), (Interval{0, 2}));
  EXPECT_EQ(boundExpr(bin(ExprOp::kMin, n, num(3)), bounds), (Interval{1, 3}));
  EXPECT_EQ(boundExpr(bin(ExprOp::kGe, n, num(1)), bounds), (Interval{1, 1}));
  EXPECT_EQ(boundExpr(bin(ExprOp::kGt, n, num(10)), bounds), (Interval{0, 0}));
  EXPECT_EQ(boundExpr(bin(ExprOp::kLt, n, num(5)), bounds), (Interval{0, 1}));
  EXPECT_EQ(boundExpr(Expr::unary(ExprOp::kNeg, n), bounds), (Interval{-10, -1}));
  Interval open = boundExpr(bin(ExprOp::kMul, n, n), [](Var) {
    return Interval{-2, Interval::kPosInf};
  });
  EXPECT_FALSE(open.hasHi());
  EXPECT_EQ(boundPoly(*toPoly(bin(ExprOp::kMul, n, n)),
                      [](Var) {
                        return Interval{-2, 3};
                      }),
            (Interval{0, 9}));
}

TEST(Simplify, FoldsAndCanonicalises) {
  auto name = [](Var v) { return v.kind == RefKind::kBeta ? std::string("d") : std::string("x"); };
  Expr d = beta(0, "d"), x = alpha(1, "x");
  EXPECT_EQ(exprText(simplify(bin(ExprOp::kMul, bin(ExprOp::kAdd, d, num(0)), num(1)), name)), "d");
  EXPECT_EQ(exprText(simplify(Expr::cond(bin(ExprOp::kEq, num(1), num(1)), x, d), name)), "x");
  EXPECT_EQ(exprText(simplify(bin(ExprOp::kSub, bin(ExprOp::kAdd, x, num(1)), x), name)), "1");
  EXPECT_EQ(exprText(simplify(bin(ExprOp::kEq, bin(ExprOp::kAdd, x, num(2)),
                                  bin(ExprOp::kAdd, num(1), bin(ExprOp::kAdd, x, num(1)))),
                              name)),
            "1");
  EXPECT_EQ(exprText(simplify(bin(ExprOp::kAnd, num(1), bin(ExprOp::kLt, x, num(3))), name)),
            "x < 3");
  EXPECT_EQ(exprText(simplify(bin(ExprOp::kAnd, num(0), bin(ExprOp::kDiv, x, num(0))), name)), "0");
  // A failing subexpression is kept as written.
  EXPECT_EQ(exprText(simplify(bin(ExprOp::kDiv, num(7), num(2)), name)), "7 / 2");
}

}  // namespace
}  // namespace tacit::taidl
