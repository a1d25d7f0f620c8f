// The timing model's declarations (docs/taidl.md sections 3.5 and 4.1): engines, the memory
// interface and timing clauses parse, check, print canonically, and every misuse is one located
// diagnostic.
#include <gtest/gtest.h>

#include "taidl/test_util.h"

namespace tacit::taidl {
namespace {

using testing::canonical;
using testing::load;

// An instruction with `clause` in its body, after the declarations `decls` (the clause's line
// is 5 plus the number of lines of `decls`).
std::string spec(const std::string& decls, const std::string& clause) {
  return "isa t;\n" + decls +
         "buffer x[8] of s8[4];\n"
         "instruction op(n; a, b) {\n"
         "  require n >= 1 && n <= 4 && a >= 0 && a + n <= 8 && b >= 0 && b + n <= 8;\n" +
         clause +
         "\n"
         "  reads x[a] size [n];\n"
         "  writes x[b] size [n];\n"
         "  %Out0 = s8[n, 4] negate(%In1);\n"
         "}\n";
}

const std::string kEngines = "engine ld(queue = 2);\nengine ex;\n";

TEST(TimingDeclarations, LoadAndResolve) {
  Isa isa =
      load(spec(kEngines + "param LAT = 7;\nmemory(beat = 16, in_flight = 4, latency = LAT);\n",
                "  timing ex(interval = n, latency = n + LAT, bytes = 4 * n);"));
  ASSERT_EQ(isa.engines.size(), 2u);
  EXPECT_EQ(isa.engines[0].queue, 2);
  EXPECT_EQ(isa.engines[1].queue, 1);  // the default: one instruction at a time
  ASSERT_TRUE(isa.memory.has_value());
  EXPECT_EQ(isa.memory->beat, 16);
  EXPECT_EQ(isa.memory->request, 16);  // the default: one beat
  EXPECT_EQ(isa.memory->in_flight, 4);
  EXPECT_EQ(isa.memory->latency, 7);
  const Stmt* t = isa.instructions[0].timing;
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->engine, 1);
  std::vector<int64_t> attrs = {3, 0, 0};
  EXPECT_EQ(evalExpr(t->expr2, EvalEnv{attrs, {}, {}}), 10);
  EXPECT_EQ(evalExpr(t->expr3, EvalEnv{attrs, {}, {}}), 12);
  // --param reaches the memory interface.
  Isa slow = load(spec(kEngines + "param LAT = 7;\nmemory(beat = 16, latency = LAT);\n", ""),
                  nullptr, {{"LAT", 300}});
  EXPECT_EQ(slow.memory->latency, 300);
}

TEST(TimingDeclarations, PrintCanonically) {
  std::string once = canonical(
      spec(kEngines + "memory(beat=16,request=64);\n", "  timing ld(latency=n*2,interval=n);"));
  EXPECT_NE(once.find("engine ld(queue = 2);\nengine ex;\n"), std::string::npos) << once;
  EXPECT_NE(once.find("memory(beat = 16, request = 64);\n"), std::string::npos) << once;
  EXPECT_NE(once.find("  timing ld(interval = n, latency = n * 2);\n"), std::string::npos) << once;
}

TEST(TimingDeclarations, NamesAreContextualKeywords) {
  // `engine`, `memory` and `timing` are keywords only where a declaration or statement starts.
  Isa isa = load(
      "isa t;\nparam memory = 2;\nbuffer x[8] of s8[4];\n"
      "instruction engine(timing; a, b) {\n"
      "  require timing >= 1 && timing <= memory && a >= 0 && a + timing <= 8 && b >= 0 &&\n"
      "    b + timing <= 8;\n"
      "  reads x[a] size [timing];\n  writes x[b] size [timing];\n"
      "  %Out0 = s8[timing, 4] negate(%In1);\n}\n");
  EXPECT_EQ(isa.instructions[0].name.text, "engine");
}

TEST(TimingDeclarations, Misuses) {
  EXPECT_TAIDL_ERROR(spec(kEngines, "  timing zz(interval = n);"), 7, 10, "unknown engine 'zz'");
  EXPECT_TAIDL_ERROR(spec("", "  timing ex();"), 5, 10, "unknown engine 'ex'");
  EXPECT_TAIDL_ERROR(spec(kEngines + "engine ld;\n", ""), 4, 8, "engine ld is already declared");
  EXPECT_TAIDL_ERROR(spec("engine ld(depth = 2);\n", ""), 2, 11, "unknown setting 'depth'");
  EXPECT_TAIDL_ERROR(spec("engine ld(queue = 0);\n", ""), 2, 19, "must be in [1, 2^30], got 0");
  EXPECT_TAIDL_ERROR(spec("engine ld(queue = 1, queue = 2);\n", ""), 2, 22, "is given twice");
  EXPECT_TAIDL_ERROR(spec("memory(latency = 3);\n", ""), 2, 1, "needs its bus width");
  EXPECT_TAIDL_ERROR(spec("memory(beat = 4);\nmemory(beat = 8);\n", ""), 3, 1,
                     "a second memory declaration");
  EXPECT_TAIDL_ERROR(spec("memory(beat = 4, latency = -1);\n", ""), 2, 28, "got -1");
  EXPECT_TAIDL_ERROR(spec(kEngines, "  timing ex(cycles = n);"), 7, 13,
                     "unknown timing setting 'cycles'");
  EXPECT_TAIDL_ERROR(spec(kEngines, "  timing ex(interval = n, interval = 2);"), 7, 27,
                     "'interval' is set twice");
  EXPECT_TAIDL_ERROR(spec(kEngines, "  timing ex();\n  timing ld();"), 8, 3,
                     "has a second timing clause");
  EXPECT_TAIDL_ERROR(spec(kEngines + "reg $r = 0;\n", "  timing ex(interval = $r);"), 8, 24,
                     "register $r cannot appear in a timing clause");
  EXPECT_TAIDL_ERROR(spec(kEngines, "  if (n == 1) {\n    timing ex();\n  }"), 8, 5,
                     "timing must be at the top level");
}

TEST(TimingDeclarations, AnEngineIsDeclaredBeforeItsUse) {
  Diagnostic d = testing::errorOf(spec("", "  timing late();") + "engine late;\n");
  EXPECT_NE(d.message.find("unknown engine 'late'"), std::string::npos) << d.str();
  EXPECT_NE(d.hint.find("declared later"), std::string::npos) << d.str();
}

}  // namespace
}  // namespace tacit::taidl
