// Malformed specs: each produces exactly one error, at the position of the offending token (given
// as a needle: the first occurrence of `at` in the text, or the n-th with `nth`), with a message
// saying what is wrong (docs/taidl.md section 8).
#include <gtest/gtest.h>

#include "test_util.h"

namespace tacit::taidl {
namespace {

struct Case {
  const char* name;
  std::string text;
  std::string at;       // the offending token's text
  const char* message;  // a substring of the message
  int nth = 1;          // which occurrence of `at`
  const char* hint = nullptr;
};

// Line and column (1-based) of the nth occurrence of `needle`.
SourceLoc position(const std::string& text, const std::string& needle, int nth) {
  size_t pos = std::string::npos;
  for (int i = 0; i < nth; ++i)
    pos = text.find(needle, pos == std::string::npos ? 0 : pos + 1);
  EXPECT_NE(pos, std::string::npos) << "needle '" << needle << "' not in:\n" << text;
  if (pos == std::string::npos) return {};
  SourceFile f("t.taidl", text);
  return f.locate(pos);
}

const std::string kBase =
    "isa t;\n"
    "param DIM = 16;\n"
    "buffer d1[128] of bf16[64];\n"
    "buffer sp[1024] of s8[DIM];\n"
    "reg $r = 0;\n";

// An instruction `i(n; a, b)` with the usual bounds and `body`.
std::string inst(const std::string& body) {
  return kBase +
         "instruction i(n; a, b) {\n"
         "  require n >= 1 && n <= 64;\n"
         "  require a >= 0 && a + n <= 128 && b >= 0 && b + n <= 128;\n" +
         body + "}\n";
}

// A well-formed load instruction for macro tests.
const std::string kLoad = kBase +
                          "instruction load(n; src, dst) {\n"
                          "  require n >= 1 && n <= 64 && src >= 0 && dst >= 0 && dst + n <= 128;\n"
                          "  reads d0[src] size [n * 128];\n"
                          "  writes d1[dst] size [n];\n"
                          "  %a = u8[n, 64, 2] reshape(%In1);\n"
                          "  %Out0 = bf16[n, 64] bitcast-convert(%a);\n"
                          "}\n";

const std::string kCopy =
    "  reads d1[a] size [n];\n"
    "  writes d1[b] size [n];\n";

std::vector<Case> cases() {
  return {
      // ---- syntax ----
      {"missing isa", "param X = 1;\n", "param", "expected 'isa NAME;' at the start of the spec"},
      {"missing semicolon", "isa t;\nparam X = 1\nparam Y = 2;\n", "param Y",
       "expected ';' after the value"},
      {"unknown element type", "isa t;\nbuffer b[4] of s9[2];\n", "s9",
       "unknown element type 's9'"},
      {"keyword as a name", "isa t;\nparam if = 1;\n", "if", "'if' is a keyword"},
      {"chained comparison", "isa t;\nconst X = 1 < 2 < 3;\n", "< 3", "comparisons do not chain"},
      {"float in an expression", "isa t;\nconst X = 1.5;\n", "1.5",
       "expected an integer expression"},
      {"unclosed body", kBase + "instruction i() {\n  cost 1;\n", "", "expected '}'", 1},
      {"lone ampersand", "isa t;\nconst X = 1 & 2;\n", "&", "unexpected '&'"},
      {"register without $", "isa t;\nreg x = 0;\n", "x", "expected a register name ($name)"},
      {"repeat range closed with ]", inst("  repeat i in [0, 4] {\n  }\n"), "] {",
       "expected ')' after the loop bounds"},
      {"two semicolons in attributes", "isa t;\ninstruction i(a; b; c) {}\n", "; c",
       "only one ';'"},
      {"not a statement", inst("  foo;\n"), "foo", "expected a statement"},
      {"bad escape", "isa t;\nconst X = \"a\\q\";\n", "\\q", "unknown escape sequence"},
      // ---- names ----
      {"unknown buffer", inst("  reads dx[a] size [n];\n"), "dx", "unknown buffer 'dx'"},
      {"unknown name", inst("  require m >= 1;\n"), "m >=", "unknown name 'm'"},
      {"unknown register", inst("  set $q = 1;\n"), "$q", "unknown register $q"},
      {"unknown instruction in a macro", kLoad + "macro m(; a) {\n  lod(1, a, 0);\n}\n", "lod",
       "unknown instruction 'lod'"},
      {"duplicate parameter", "isa t;\nparam DIM = 1;\nparam DIM = 2;\n", "DIM",
       "duplicate name 'DIM'", 2},
      {"duplicate attribute", kBase + "instruction i(n, n) {}\n", "n)",
       "attribute 'n' of instruction i is declared twice"},
      {"attribute shadows a parameter", kBase + "instruction i(DIM) {}\n", "DIM)",
       "shadows a parameter"},
      {"duplicate register", "isa t;\nreg $a = 0;\nreg $a = 1;\n", "$a = 1",
       "register $a is already declared"},
      {"declared later", "isa t;\nconst X = Y + 1;\nparam Y = 2;\n", "Y +", "unknown name 'Y'", 1,
       "declared later"},
      {"buffer as an integer", kBase + "const X = d1 + 1;\n", "d1 +",
       "'d1' is a buffer, not an integer"},
      {"d0 is implicit", "isa t;\nbuffer d0[4] of u8[];\n", "d0", "implicit HBM buffer"},
      // ---- alpha / beta / registers ----
      {"beta in a type", inst("  %x : s8[a, DIM] = read sp[0, 0];\n"), "a, DIM]",
       "addressing attribute 'a' cannot appear in a type"},
      {"beta in a condition", inst("  if (b == 0) {\n  }\n"), "b == 0",
       "addressing attribute 'b' cannot appear in an if condition"},
      {"register in a shape", inst("  %x : s8[$r, DIM] = read sp[0, 0];\n"), "$r,",
       "register $r cannot appear in a type"},
      {"register in an operation attribute",
       inst("  %x : s8[2, DIM] = read sp[0, 0];\n  %t = s8[DIM, 2] transpose(%x), dimensions={$r, "
            "0};\n"),
       "$r, 0", "register $r cannot appear in an operation attribute"},
      {"beta in a constant", inst("  %c = s32[] constant(a);\n"), "a);",
       "addressing attribute 'a' cannot appear in a constant literal"},
      {"register in a constant expression", "isa t;\nreg $a = 0;\nreg $b = $a;\n", "$a;",
       "register $a cannot appear in a constant expression"},
      {"macro alpha argument uses beta", kLoad + "macro m(; a) {\n  load(a, 0, 0);\n}\n", "a, 0, 0",
       "addressing attribute 'a' cannot appear in the argument of a computational attribute"},
      // ---- statements and values ----
      {"require inside if", inst("  if (n == 1) {\n    require a == 0;\n  }\n"), "require a == 0",
       "require must be at the top level"},
      {"declared slice inside repeat",
       inst("  repeat k in [0, 2) {\n    reads d1[a] size [n];\n  }\n"),
       "reads d1[a] size [n];\n  }", "declared slices (reads/writes) must be at the top level"},
      {"second cost", inst("  cost 1;\n  cost 2;\n"), "cost 2", "has a second cost"},
      {"loop variable shadows an attribute", inst("  repeat n in [0, 2) {\n  }\n"), "n in",
       "loop variable 'n' shadows an attribute"},
      {"unknown value", inst("  %x : s8[1, DIM] = read sp[0, 0];\n  %y = s8[1, DIM] copy(%zz);\n"),
       "%zz", "unknown value %zz"},
      {"redefinition", inst("  %x : s8[1, DIM] = read sp[0, 0];\n  %x = s8[1, DIM] copy(%x);\n"),
       "%x = s8", "value %x is already defined"},
      {"defined on one path only",
       inst("  if (n == 1) {\n    %x : s8[1, DIM] = read sp[0, 0];\n  }\n  write sp[0, 0] = %x;\n"),
       "%x;", "value %x is not defined on every path to this use"},
      {"branches disagree on a type",
       inst("  if (n == 1) {\n    %x : s8[1, DIM] = read sp[0, 0];\n  } else {\n"
            "    %x : s8[2, DIM] = read sp[0, 0];\n  }\n  write sp[0, 0] = %x;\n"),
       "%x : s8[2", "define %x with different types"},
      {"missing %Out0", inst(kCopy + "  %y = bf16[n, 64] copy(%In1);\n"), "writes d1[b]",
       "writes declares %Out0, but %Out0 is never defined"},
      {"unused %In2",
       inst("  reads d1[a] size [n];\n  reads d1[b] size [n];\n  writes d1[b] size [n];\n"
            "  %Out0 = bf16[n, 64] copy(%In1);\n"),
       "reads d1[b]", "%In2 (reads d1[b] size [n];) is never used"},
      {"read of the wrong rank", inst("  %x : s8[1, DIM] = read sp[0];\n"), "sp[0]",
       "read of sp needs 2 starts"},
      {"declared slice with too many starts", inst("  reads d1[a, 0] size [n];\n"), "d1[a, 0]",
       "buffer d1 has 1 access dimension, but the slice gives 2 starts"},
      {"wrong dtype in a read", inst("  %x : s32[1, DIM] = read sp[0, 0];\n"), "s32[1",
       "buffer sp holds s8 values; the read's type is s32[1, DIM]"},
      {"wrong dtype in a write",
       inst("  %x : s8[1, DIM] = read sp[0, 0];\n  %y = s32[1, DIM] convert(%x);\n  write sp[0, 0] "
            "= %y;\n"),
       "%y;", "buffer sp holds s8 values; %y is s32[1, DIM]"},
      // ---- operations ----
      {"shape mismatch",
       inst(kCopy + "  %c = bf16[64, 64] constant(0);\n  %Out0 = bf16[n, 64] add(%In1, %c);\n"),
       "add(", "(for n="},
      {"declared result does not match", inst(kCopy + "  %Out0 = bf16[n, 32] copy(%In1);\n"),
       "%Out0", "%Out0 is bf16[n, 32], but writes d1[b] size [n]; needs bf16[n, 64]"},
      {"broadcast without dimensions",
       inst("  %c = s32[] constant(0);\n  %b = s32[4] broadcast(%c);\n"), "broadcast",
       "broadcast requires the attribute dimensions", 1, "dimensions={}"},
      {"unknown opcode", inst("  %c = s32[] constant(0);\n  %b = s32[] frobnicate(%c);\n"),
       "frobnicate", "unknown opcode 'frobnicate'"},
      {"unsupported opcode", inst("  %c = s32[] constant(0);\n  %b = s32[] while(%c);\n"), "while",
       "opcode 'while' is not supported"},
      {"operand count", inst("  %c = s32[] constant(0);\n  %b = s32[] add(%c);\n"), "add",
       "add takes 2 operands, found 1"},
      {"attribute not valid for the opcode",
       inst("  %c = s32[] constant(0);\n  %b = s32[] copy(%c), dimensions={0};\n"), "dimensions",
       "attribute 'dimensions' is not valid for copy"},
      {"bad comparison direction",
       inst("  %c = s32[] constant(0);\n  %b = pred[] compare(%c, %c), direction=XX;\n"), "XX",
       "direction must be one of EQ, NE, LT, LE, GT, GE"},
      {"float literal for an integer type", inst("  %c = s32[] constant(0.5);\n"), "0.5",
       "a floating-point literal for the non-floating-point type s32"},
      {"literal of the wrong size", inst("  %c = s32[2] constant({1, 2, 3});\n"), "{1, 2, 3}",
       "literal has 3 elements at depth 0, but s32[2] needs 2"},
      {"inexact division in a type", inst("  %x : s8[n / 2, DIM] = read sp[0, 0];\n"), "/ 2",
       "inexact division 1 / 2"},
      {"invalid reducer for the type",
       inst("  %x : s8[2, DIM] = read sp[0, 0];\n  %f = f32[2, DIM] convert(%x);\n  %z = f32[] "
            "constant(0);\n"
            "  %s = f32[2] reduce(%f, %z), dimensions={1}, to_apply=and;\n"),
       "and;", "to_apply=and is not valid for f32 values"},
      // ---- slices ----
      {"slice past the end of its buffer",
       kBase + "instruction i(n; a) {\n  require n >= 1 && n <= 128 && a >= 0;\n  reads d1[a] size "
               "[n];\n"
               "  writes d1[0] size [n];\n  %Out0 = bf16[n, 64] copy(%In1);\n}\n",
       "a] size", "`a + n <= 128` does not follow from the constraints of i", 1,
       "add `require a + n <= 128;`"},
      {"slice start may be negative",
       kBase + "instruction i(n; a) {\n  require n >= 1 && n <= 64 && a <= 64;\n  reads d1[a] size "
               "[n];\n"
               "  writes d1[0] size [n];\n  %Out0 = bf16[n, 64] copy(%In1);\n}\n",
       "a] size", "may start below 0", 1, "add `require a >= 0;`"},
      {"explicit write past a unit",
       inst("  %x : s8[1, DIM] = read sp[0, 0];\n  write sp[0, 1] = %x;\n"), "1] = %x",
       "`1 + DIM <= DIM` does not follow"},
      // ---- attribute ranges ----
      {"infeasible attribute range",
       kBase + "instruction i(n) {\n  require n >= 5 && n <= 3;\n  %x : s8[n, DIM] = read sp[0, "
               "0];\n}\n",
       "n)", "the constraints of i leave no value for n"},
      {"loop variable in a shape with register bounds",
       inst("  repeat k in [0, $r) {\n    %x : s8[k + 1, DIM] = read sp[0, 0];\n  }\n"), "k in",
       "loop variable k is used in a type"},
      // ---- macros ----
      {"too many arguments", kLoad + "macro m(; a) {\n  load(1, a, 0, 7);\n}\n", "7)",
       "too many arguments: load(n; src, dst) takes 3 attributes"},
      {"missing argument", kLoad + "macro m(; a) {\n  load(1, a);\n}\n", "load(1",
       "missing argument for attribute dst of load(n; src, dst)"},
      {"unknown named argument", kLoad + "macro m(; a) {\n  load(1, a, dest = 0);\n}\n", "dest",
       "load has no attribute 'dest'"},
      {"positional after named", kLoad + "macro m(; a) {\n  load(n = 1, a, 0);\n}\n", "a, 0)",
       "positional argument after a named one"},
      {"argument given twice", kLoad + "macro m(; a) {\n  load(1, a, 0, n = 2);\n}\n", "n = 2",
       "attribute n of load is given twice"},
      {"call that can never execute",
       kLoad + "instruction need(; x) {\n  require $r == 1;\n  require x >= 0 && x + 1 <= 128;\n"
               "  reads d1[x] size [1];\n  writes d1[x] size [1];\n  %Out0 = bf16[1, 64] "
               "copy(%In1);\n}\n"
               "instruction zero() {\n  set $r = 0;\n}\n"
               "macro m(; a) {\n  zero();\n  need(a);\n}\n",
       "need(a)", "call 2 (need) can never execute in macro m: its constraint `$r == 1`"},
      {"macro declared later",
       kLoad + "macro m(; a) {\n  m2(a);\n}\nmacro m2(; b) {\n  load(1, b, 0);\n}\n", "m2(a)",
       "unknown instruction 'm2'", 1, "declared later"},
      // ---- let (section 4.7) ----
      {"let in a type",
       kBase + "buffer idx[8] of s32[];\ninstruction i(; a) {\n  require a >= 0 && a < 8;\n"
               "  let k = idx[a];\n  %x : s8[k, DIM] = read sp[0, 0];\n}\n",
       "k, DIM", "let-bound 'k' cannot appear in a type"},
      {"let sets a register",
       kBase + "buffer idx[8] of s32[];\ninstruction i(; a) {\n  require a >= 0 && a < 8;\n"
               "  let k = idx[a];\n  set $r = k;\n}\n",
       "k;\n}", "let-bound 'k' cannot appear in"},
      {"let reads a buffer the instruction writes",
       kBase + "buffer idx[8] of s32[];\ninstruction i(; a) {\n  require a >= 0 && a < 8;\n"
               "  let k = idx[a];\n  %z = s32[1] constant(0);\n  write idx[k] = %z;\n}\n",
       "let k", "let reads buffer idx, which i also writes"},
      {"let of a float buffer", inst("  let k = d1[a, 0];\n"), "d1[a, 0]",
       "let reads an integer, but buffer d1 holds bf16 values"},
      {"let with a unit index missing",
       kBase + "buffer idx[8] of s32[2];\ninstruction i(; a) {\n"
               "  require a >= 0 && a < 8;\n  let k = idx[a];\n}\n",
       "idx[a]", "let reads one element of idx: it needs 2 starts"},
      {"let shadows a loop variable",
       kBase + "buffer idx[8] of s32[];\ninstruction i() {\n  repeat k in [0, 8) {\n"
               "    let k = idx[k];\n  }\n}\n",
       "k = idx", "let 'k' shadows an enclosing loop variable"},
      {"let out of scope after its block",
       kBase + "buffer idx[8] of s32[];\ninstruction i(n;) {\n  require n >= 0 && n <= 1;\n"
               "  if (n == 1) {\n    let k = idx[0];\n  }\n  %x : s8[1, DIM] = read sp[k, 0];\n}\n",
       "k, 0]", "unknown name 'k'"},
      // ---- declarations ----
      {"zero buffer dimension", "isa t;\nbuffer b[0] of s8[];\n", "0]",
       "buffer dimension must be positive, got 0"},
      {"buffer too large", "isa t;\nbuffer b[1048576, 1048576] of f32[1024];\n", "1048576",
       "buffer b is too large", 2},
      {"unsupported element type", "isa t;\nbuffer b[4] of c64[];\n", "c64",
       "element type c64 is not supported"},
  };
}

TEST(Malformed, EachSpecHasOneLocatedError) {
  int checked = 0;
  for (Case c : cases()) {
    SCOPED_TRACE(c.name);
    Diagnostic d = testing::errorOf(c.text);
    SourceLoc want = c.at.empty() ? SourceFile("t", c.text).locate(c.text.size())
                                  : position(c.text, c.at, c.nth);
    EXPECT_EQ(d.file, "t.taidl");
    EXPECT_EQ(d.loc.line, want.line) << d.str() << "\n" << c.text;
    EXPECT_EQ(d.loc.col, want.col) << d.str() << "\n" << c.text;
    EXPECT_NE(d.message.find(c.message), std::string::npos) << d.str();
    if (c.hint) {
      EXPECT_NE(d.hint.find(c.hint), std::string::npos) << d.str();
    }
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

TEST(Malformed, UnknownParameterOverride) {
  try {
    loadIsa("isa t;\nparam DIM = 16;\n", "t.taidl", {{"DIMM", 4}});
    FAIL() << "expected an error";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(e.diagnostic().message.find("unknown parameter 'DIMM'"), std::string::npos);
    EXPECT_NE(e.diagnostic().hint.find("DIM"), std::string::npos);
  }
}

TEST(Malformed, LimitsAreEnforced) {
  std::string deep =
      "isa t;\nconst X = " + std::string(200, '(') + "1" + std::string(200, ')') + ";\n";
  EXPECT_NE(testing::errorOf(deep).message.find("nesting is too deep"), std::string::npos);
  std::string big = "isa t;\nconst X = 1";
  for (int i = 0; i < 600; ++i)
    big += " + 1";
  EXPECT_NE(testing::errorOf(big + ";\n").message.find("expression is too large"),
            std::string::npos);
  std::string unrolled =
      inst("  repeat k in [0, 70000) {\n    %x : s8[1, DIM] = read sp[k // 100, 0];\n  }\n");
  Diagnostic d = testing::errorOf(unrolled);
  EXPECT_NE(d.message.find("executes more than 65536 statements"), std::string::npos) << d.str();
}

}  // namespace
}  // namespace tacit::taidl
