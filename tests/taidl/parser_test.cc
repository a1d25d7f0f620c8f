// Parsing and canonical printing (docs/taidl.md sections 1, 2 and 9): every grammar construct
// round-trips, and the canonical form is what section 9 says.
#include <gtest/gtest.h>

#include "taidl/isa.h"
#include "taidl/lexer.h"
#include "test_util.h"

namespace tacit::taidl {
namespace {

using testing::canonical;

// Every construct of the grammar, written untidily (comments, spacing, redundant parentheses).
const char* kEveryConstruct = R"(# a comment
isa   everything ;
param DIM = 16;   # trailing comment
param N = (2 * DIM);
const ROWS = 1024 * DIM;
const NEG = -(3);
buffer sp[ROWS] of s8[DIM];
buffer slot[] of s8[DIM, DIM];
buffer grid[2, 4] of f32[8];
buffer scalar[] of s32[];
reg $flag = 0;
reg $ptr = -1;
instruction none() { cost 1; }
instruction only_beta(; a, b) { require a >= 0 && b >= 0; }
instruction only_alpha(n, m;) { require n == m; }
instruction full(n, k; addr, out) {
  require n >= 1 && n <= 4;
  require addr + n * DIM <= ROWS || !(k != 0);
  cost k == 1 ? 4 * n : n;
  set $ptr = (addr + 1) % 4;
  set $flag = $flag + 1;
  reads sp[addr] size [n * DIM];
  reads slot[] size [];
  writes sp[out] size [n * DIM];
  %x : s8[n * DIM, DIM] = read sp[addr, 0];
  %c0 = s32[] constant(0);
  %cf = f32[2] constant(0.5);
  %cn = f32[2] constant(-1e-05);
  %ci = f32[] constant(inf);
  %cm = f32[] constant(-inf);
  %cnan = f32[] constant(nan);
  %nested = s32[2, 2] constant({{1, n}, {3, -4}});
  %nf = f32[2] constant({1.5, 2});
  %e = s32[n] constant(n + 1);
  %s = s8[DIM, DIM] slice(%In2), slice={[0:DIM], [0:DIM:1]};
  %p = s8[DIM, DIM + 2] pad(%s, %c0), padding={[0:0], [1:1:0]};
  %t = s8[DIM, DIM] transpose(%s), dimensions={1,0};
  %b = s32[4, 2] broadcast(%c0), dimensions={};
  %d = s32[DIM, DIM] dot(%a, %b2), rhs_contracting_dims={0}, lhs_contracting_dims={1}, lhs_batch_dims={}, rhs_batch_dims={};
  %r = s32[DIM] reduce(%d, %c0), to_apply=add, dimensions={1};
  %cmp = pred[DIM] compare(%r, %r), type=SIGNED, direction=LT;
  %sel = s32[DIM] select(%cmp, %r, %r);
  %io = s32[4] iota(), iota_dimension=0;
  %ds = s8[1, DIM] dynamic-slice(%s, %i0, %i1), dynamic_slice_sizes={1, DIM};
  %bc = u8[DIM, DIM] bitcast-convert(%s);
  %cat = s8[2 * DIM, DIM] concatenate(%s, %s), dimensions={0};
  %A.8 = s8[DIM, DIM] copy(%s);
  %1 = s8[DIM, DIM] add(%A.8, %s);
  write sp[out, 0] = %1;
  if (k == 0) {
    %z : s8[1, DIM] = read sp[$ptr, 0];
  } else if (k == 1) {
    write sp[addr, 0] = %x;
  } else {
    set $flag = 0;
  }
  if ($flag) {
  }
  repeat i in [0, n) {
    repeat j in [i, 2 * i + 1) {
      %y : s8[1, DIM] = read sp[addr + i * j, 0];
    }
  }
}
macro m(n; a, b) {
  full(n, 1, a, b);
  full(n = n, k = 0, addr = a + 1, out = b);
  none();
}
macro m2(; x) { only_beta(a = x, b = x * 2); }
)";

TEST(Parser, EveryConstructRoundTrips) {
  std::string once = canonical(kEveryConstruct);
  // Spot checks of the canonical form: comments dropped, minimal parentheses, attributes in the
  // order of the opcode table, two-space indentation, else-if chains.
  EXPECT_EQ(once.find('#'), std::string::npos);
  EXPECT_NE(once.find("param N = 2 * DIM;\n"), std::string::npos) << once;
  EXPECT_NE(once.find("const NEG = -3;\n"), std::string::npos) << once;
  EXPECT_NE(once.find("instruction only_alpha(n, m) {"), std::string::npos) << once;
  EXPECT_NE(once.find("instruction only_beta(; a, b) {"), std::string::npos) << once;
  EXPECT_NE(once.find("instruction none() {"), std::string::npos) << once;
  EXPECT_NE(once.find("  require addr + n * DIM <= ROWS || !(k != 0);\n"), std::string::npos)
      << once;
  EXPECT_NE(once.find("  reads slot[] size [];\n"), std::string::npos) << once;
  EXPECT_NE(
      once.find("dot(%a, %b2), lhs_batch_dims={}, lhs_contracting_dims={1}, rhs_batch_dims={}, "
                "rhs_contracting_dims={0};"),
      std::string::npos)
      << once;
  EXPECT_NE(once.find("reduce(%d, %c0), dimensions={1}, to_apply=add;"), std::string::npos) << once;
  EXPECT_NE(once.find("compare(%r, %r), direction=LT, type=SIGNED;"), std::string::npos) << once;
  EXPECT_NE(once.find("slice={[0:DIM], [0:DIM:1]}"), std::string::npos) << once;
  EXPECT_NE(once.find("padding={[0:0], [1:1:0]}"), std::string::npos) << once;
  EXPECT_NE(once.find("constant(-1e-05)"), std::string::npos) << once;
  EXPECT_NE(once.find("constant(-inf)"), std::string::npos) << once;
  EXPECT_NE(once.find("constant(nan)"), std::string::npos) << once;
  EXPECT_NE(once.find("constant({{1, n}, {3, -4}})"), std::string::npos) << once;
  EXPECT_NE(once.find("constant({1.5, 2})"), std::string::npos) << once;
  EXPECT_NE(once.find("constant(0.5)"), std::string::npos) << once;
  EXPECT_NE(once.find("  } else if (k == 1) {\n"), std::string::npos) << once;
  EXPECT_NE(once.find("  } else {\n    set $flag = 0;\n  }\n"), std::string::npos) << once;
  EXPECT_NE(once.find("  if ($flag) {\n  }\n"), std::string::npos) << once;
  EXPECT_NE(once.find("    repeat j in [i, 2 * i + 1) {\n"), std::string::npos) << once;
  EXPECT_NE(once.find("  full(n = n, k = 0, addr = a + 1, out = b);\n"), std::string::npos) << once;
  EXPECT_NE(once.find("%A.8 = s8[DIM, DIM] copy(%s);"), std::string::npos) << once;
  EXPECT_NE(
      once.find("%ds = s8[1, DIM] dynamic-slice(%s, %i0, %i1), dynamic_slice_sizes={1, DIM};"),
      std::string::npos)
      << once;
}

TEST(Parser, CanonicalFormOfASmallSpec) {
  std::string text =
      "isa  q ; buffer d1[128] of bf16[64];\n"
      "instruction mov(n;a,b){require n>=1&&a+n<=128&&b+n<=128; reads d1[a] size[n];"
      "writes d1[b] size [n]; %Out0=bf16[n,64] copy(%In1);}";
  EXPECT_EQ(canonical(text),
            "isa q;\n"
            "\n"
            "buffer d1[128] of bf16[64];\n"
            "\n"
            "instruction mov(n; a, b) {\n"
            "  require n >= 1 && a + n <= 128 && b + n <= 128;\n"
            "  reads d1[a] size [n];\n"
            "  writes d1[b] size [n];\n"
            "  %Out0 = bf16[n, 64] copy(%In1);\n"
            "}\n");
}

TEST(Parser, OverriddenParametersPrintTheirValue) {
  Isa isa = loadIsa("isa t;\nparam DIM = 16;\nconst X = DIM * 2;\n", "t.taidl", {{"DIM", 64}});
  EXPECT_EQ(isa.params[0].value, 64);
  EXPECT_EQ(isa.consts[0].value, 128);
  EXPECT_EQ(printIsa(isa), "isa t;\n\nparam DIM = 64;\n\nconst X = DIM * 2;\n");
}

TEST(Parser, FloatsKeepAFloatSpelling) {
  std::string once =
      canonical("isa t; instruction i() { %c = f32[] constant(1.0); %d = f32[] constant(2e3); }");
  EXPECT_NE(once.find("constant(1.0)"), std::string::npos) << once;
  EXPECT_NE(once.find("constant(2000.0)"), std::string::npos) << once;
}

TEST(Lexer, TokensAndPositions) {
  SourceFile f("t", "%In1 $r 0x1F 1.5e3 // % && || != <= >= == @ \"a\\n\" bitcast-convert");
  Lexer lex(f);
  std::vector<Tok> kinds;
  Token t = lex.lex(0);
  while (!t.is(Tok::kEof)) {
    kinds.push_back(t.kind);
    t = lex.lex(t.end);
  }
  std::vector<Tok> want = {Tok::kValue,   Tok::kReg,    Tok::kInt,  Tok::kFloat,  Tok::kSlashSlash,
                           Tok::kPercent, Tok::kAndAnd, Tok::kOrOr, Tok::kNe,     Tok::kLe,
                           Tok::kGe,      Tok::kEq,     Tok::kAt,   Tok::kString, Tok::kIdent,
                           Tok::kMinus,   Tok::kIdent};
  EXPECT_EQ(kinds, want);
  Token s = lex.lex(44);
  ASSERT_TRUE(s.is(Tok::kString));
  EXPECT_EQ(lex.stringValue(s), "a\n");
  Token op = lex.lexOpcode(50);
  EXPECT_EQ(op.text, "bitcast-convert");
  EXPECT_EQ(lex.lex(0).text, "In1");
  EXPECT_EQ(lex.lex(5).text, "r");
  EXPECT_EQ(lex.lex(8).int_value, 31);
  EXPECT_DOUBLE_EQ(lex.lex(13).float_value, 1500.0);
}

TEST(Lexer, KeywordsAreReserved) {
  for (const char* k :
       {"isa",   "param",  "const",  "buffer", "of",    "reg",   "instruction", "macro",
        "reads", "writes", "size",   "read",   "write", "set",   "require",     "cost",
        "if",    "else",   "repeat", "in",     "true",  "false", "min",         "max"})
    EXPECT_TRUE(isKeyword(k)) << k;
  for (const char* k : {"add", "dot", "s8", "f32", "constant", "dimensions", "DIM"})
    EXPECT_FALSE(isKeyword(k)) << k;
}

}  // namespace
}  // namespace tacit::taidl
