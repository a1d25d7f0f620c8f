// oracle::Machine: statements, loops, registers, constraints, out-of-range slices, macros,
// debug, trace, stats, inputs/outputs and limits (acceptance 2 of issue #4).
#include <gtest/gtest.h>

#include <cstring>

#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "oracle/toy_isa.h"

namespace tacit::oracle {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;
using testing::toyIsa;

Program parse(const std::string& text) {
  return parseProgram(toyIsa(), text, "t.tasm");
}

Literal s32(std::vector<int64_t> dims, int32_t first = 1) {
  Literal l(hlo::Shape(PrimitiveType::kS32, std::move(dims)));
  for (int64_t i = 0; i < l.elementCount(); ++i)
    l.setInt64(i, first + i);
  return l;
}

std::vector<int32_t> values(const Literal& l) {
  auto d = l.data<int32_t>();
  return {d.begin(), d.end()};
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const DiagnosticError& e) {
    return e.what();
  }
  return "no error";
}

const char* kCopy = R"(
kernel copy hbm=512 {
  input x @0 : s32[4,4];
  output y @256 : s32[4,4];
  load(n=4, addr=0, row=2);
  store(4, 2, 256);
}
)";

TEST(Machine, CallsMoveDataThroughTheScratchpad) {
  Stats stats;
  auto out = run(toyIsa(), parse(kCopy), {{"x", s32({4, 4})}}, {}, &stats);
  EXPECT_EQ(values(out.at("y")), values(s32({4, 4})));
  EXPECT_EQ(stats.instructions, 2);
  EXPECT_EQ(stats.total_cost, 8);
}

TEST(Machine, LoopsEvaluateAffineAttributesPerIteration) {
  // Row i of x goes to row 7 - i of the scratchpad, then back in order: y reverses x's rows.
  Program p = parse(R"(
kernel rev hbm=512 {
  input x @0 : s32[8,4];
  output y @256 : s32[8,4];
  loop i in [0, 8) { load(n=1, addr=16*i, row=7 - i); }
  store(8, 0, 256);
})");
  Stats stats;
  auto out = run(toyIsa(), p, {{"x", s32({8, 4})}}, {}, &stats);
  std::vector<int32_t> got = values(out.at("y")), want;
  for (int r = 7; r >= 0; --r)
    for (int c = 0; c < 4; ++c)
      want.push_back(1 + 4 * r + c);
  EXPECT_EQ(got, want);
  EXPECT_EQ(stats.instructions, 9);
  EXPECT_EQ(stats.specialisations, 2);  // one key per (instruction, n): the loop re-plans nothing
}

TEST(Machine, NestedLoopsWithBoundsOverEnclosingVariables) {
  // Triangular: row j accumulates rows 0..j (addrows in place), so row j = sum of x rows 0..j.
  Program p = parse(R"(
kernel tri hbm=512 {
  input x @0 : s32[4,4];
  output y @256 : s32[4,4];
  load(4, 0, 0);
  load(4, 0, 4);
  loop j in [1, 4) {
    loop k in [0, j) { addrows(a=j, b=k + 4, c=j); }
  }
  store(4, 0, 256);
})");
  auto out = run(toyIsa(), p, {{"x", s32({4, 4})}});
  std::vector<int32_t> got = values(out.at("y"));
  for (int j = 0; j < 4; ++j)
    for (int c = 0; c < 4; ++c) {
      int sum = 0;
      for (int r = 0; r <= j; ++r)
        sum += 1 + 4 * r + c;
      EXPECT_EQ(got[static_cast<size_t>(4 * j + c)], sum) << j << "," << c;
    }
}

TEST(Machine, RegistersPersistAcrossCallsAndAddressWrites) {
  Program p = parse(R"(
kernel regs hbm=512 {
  input x @0 : s32[3,4];
  output y @256 : s32[3,4];
  loop i in [0, 3) { push(addr=16*i); }
  store(3, 0, 256);
})");
  Machine m(toyIsa());
  auto out = m.run(p, {{"x", s32({3, 4})}});
  EXPECT_EQ(values(out.at("y")), values(s32({3, 4})));
  EXPECT_EQ(m.registers()[0], 3);  // $ptr
  EXPECT_EQ(m.registers()[1], 3);  // $count
  // A second run starts from the initial register values again.
  m.run(p, {{"x", s32({3, 4}, 100)}});
  EXPECT_EQ(m.registers()[0], 3);
}

TEST(Machine, StridedAndUnalignedSlicesAreStaged) {
  Program p = parse(R"(
kernel neg hbm=512 {
  input x @0 : s32[8,4];
  output y @256 : s32[8,4];
  load(8, 0, 0);
  negcol(k=1);
  negcol(k=3);
  store(8, 0, 256);
})");
  auto out = run(toyIsa(), p, {{"x", s32({8, 4})}});
  std::vector<int32_t> got = values(out.at("y"));
  for (int i = 0; i < 32; ++i)
    EXPECT_EQ(got[static_cast<size_t>(i)], (i % 4 == 1 || i % 4 == 3) ? -(1 + i) : 1 + i);
}

TEST(Machine, UnalignedHbmAddressesWork) {
  Program p = parse(R"(
kernel odd hbm=512 {
  input x @3 : s32[2,4];
  output y @301 : s32[2,4];
  load(2, 3, 0);
  store(2, 0, 301);
})");
  auto out = run(toyIsa(), p, {{"x", s32({2, 4})}});
  EXPECT_EQ(values(out.at("y")), values(s32({2, 4})));
}

TEST(Machine, ViolatedConstraintNamesTheCallTheValuesAndTheConstraint) {
  Program p = parse("kernel k hbm=512 {\n  load(n=4, addr=0, row=6);\n}\n");
  std::string e = errorOf([&] { run(toyIsa(), p, {}); });
  EXPECT_NE(e.find("t.tasm:2:3"), std::string::npos) << e;
  EXPECT_NE(e.find("load(n=4, addr=0, row=6)"), std::string::npos) << e;
  EXPECT_NE(e.find("row + n <= 8"), std::string::npos) << e;
}

TEST(Machine, WarnConstraintsReportsAndContinues) {
  // The violation is reported as a warning; the then out-of-range slice is clamped.
  Program p = parse("kernel k hbm=512 {\n  load(n=4, addr=0, row=6);\n}\n");
  DiagnosticSink warnings;
  RunOptions o;
  o.warn_constraints = true;
  o.clamp = true;
  o.warnings = &warnings;
  EXPECT_NO_THROW(run(toyIsa(), p, {}, o));
  ASSERT_EQ(warnings.all().size(), 1u);
  EXPECT_NE(warnings.all()[0].message.find("row + n <= 8"), std::string::npos);
}

TEST(Machine, OutOfRangeSlicesAreReportedWithTheBounds) {
  // The fifth push writes sp row 8 of 8 (a register-dependent address the checker cannot prove).
  Program p = parse("kernel k hbm=64 {\n  loop i in [0, 9) { push(0); }\n}\n");
  std::string e = errorOf([&] { run(toyIsa(), p, {}); });
  EXPECT_NE(e.find("t.tasm:2:22"), std::string::npos) << e;
  EXPECT_NE(e.find("push(addr=0)"), std::string::npos) << e;
  EXPECT_NE(e.find("exceeds sp"), std::string::npos) << e;
  // HBM ends are checked at run time too.
  Program q = parse("kernel k hbm=64 {\n  load(n=4, addr=8, row=0);\n}\n");
  e = errorOf([&] { run(toyIsa(), q, {}); });
  EXPECT_NE(e.find("exceeds d0"), std::string::npos) << e;
}

TEST(Machine, ClampModeClampsStartsLikeXla) {
  // load(n=2, addr=40) on 64 bytes of HBM: XLA clamps the start to 64 - 32 = 32.
  Program p = parse(R"(
kernel k hbm=64 {
  input x @0 : s32[4,4];
  load(n=2, addr=40, row=0);
  store(n=2, row=0, addr=0);
})");
  p.addOutput("y", 0, hlo::Shape(PrimitiveType::kS32, {2, 4}));
  RunOptions o;
  o.clamp = true;
  auto out = run(toyIsa(), p, {{"x", s32({4, 4})}}, o);
  std::vector<int32_t> want = {9, 10, 11, 12, 13, 14, 15, 16};
  EXPECT_EQ(values(out.at("y")), want);
  EXPECT_NE(errorOf([&] {
              run(toyIsa(), p, {{"x", s32({4, 4})}});
            }).find("exceeds d0"),
            std::string::npos);
}

TEST(Machine, MacrosExpandIntoTheirCalls) {
  Program p = parse(R"(
kernel m hbm=512 {
  input x @0 : s32[1,4];
  output y @256 : s32[1,4];
  copy2(0, 5, 256);
})");
  std::vector<std::string> trace;
  RunOptions o;
  o.trace = [&](const TraceEvent& e) { trace.push_back(e.text()); };
  Stats stats;
  auto out = run(toyIsa(), p, {{"x", s32({1, 4})}}, o, &stats);
  EXPECT_EQ(values(out.at("y")), values(s32({1, 4})));
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0], "t.tasm:5: load(n=1, addr=0, row=5)  [macro copy2]");
  EXPECT_EQ(trace[1], "t.tasm:5: store(n=1, row=5, addr=256)  [macro copy2]");
  EXPECT_EQ(stats.macro_calls, 1);
  EXPECT_EQ(stats.instructions, 2);
}

TEST(Machine, DebugPrintsASliceAndHbmViews) {
  Program p = parse(R"(
kernel d hbm=512 {
  input x @0 : s32[2,4];
  load(2, 0, 0);
  debug "rows" sp[0:2, 1:3];
  loop i in [0, 2) { debug sp[i]; }
  debug d0[0:8] as s32;
})");
  std::string text;
  RunOptions o;
  o.debug = [&](const std::string& s) { text += s; };
  run(toyIsa(), p, {{"x", s32({2, 4})}}, o);
  EXPECT_EQ(text,
            "rows: sp[0:2, 1:3] = s32[2,2] { {2, 3}, {6, 7} }\n"
            "sp[0:1, 0:4] = s32[1,4] { {1, 2, 3, 4} }\n"
            "sp[1:2, 0:4] = s32[1,4] { {5, 6, 7, 8} }\n"
            "d0[0:8] as s32 = s32[2] {1, 2}\n");
}

TEST(Machine, StatsCountInstructionsBytesPerBufferPairAndCost) {
  Machine m(toyIsa());
  m.run(parse(kCopy), {{"x", s32({4, 4})}});
  const Stats& s = m.stats();
  int32_t load = toyIsa().findInstruction("load"), store = toyIsa().findInstruction("store");
  EXPECT_EQ(s.per_instruction[static_cast<size_t>(load)], 1);
  EXPECT_EQ(s.per_instruction[static_cast<size_t>(store)], 1);
  EXPECT_EQ(s.moved[0][1], 64);  // d0 -> sp
  EXPECT_EQ(s.moved[1][0], 64);  // sp -> d0
  EXPECT_EQ(s.bytes_read[0], 64);
  EXPECT_EQ(s.bytes_written[0], 64);
  EXPECT_EQ(s.total_cost, 8);
  std::string text = s.text(toyIsa());
  EXPECT_NE(text.find("d0 -> sp"), std::string::npos) << text;
  EXPECT_NE(text.find("total cost: 8"), std::string::npos) << text;
}

TEST(Machine, InputsAreCheckedByNameAndShape) {
  Program p = parse(kCopy);
  EXPECT_NE(errorOf([&] { run(toyIsa(), p, {}); }).find("missing input 'x'"), std::string::npos);
  EXPECT_NE(errorOf([&] {
              run(toyIsa(), p, {{"x", s32({4, 4})}, {"z", s32({1})}});
            }).find("no input 'z'"),
            std::string::npos);
  std::string e = errorOf([&] { run(toyIsa(), p, {{"x", s32({4, 3})}}); });
  EXPECT_NE(e.find("declared s32[4,4]"), std::string::npos) << e;
  EXPECT_NE(e.find("t.tasm:3:3"), std::string::npos) << e;
}

TEST(Machine, ConstantsAreWrittenBeforeTheRun) {
  Program p = parse(R"(
kernel c hbm=512 {
  const k @0 : s32[1,4] = {{7, -8, 9, 10}};
  output y @256 : s32[1,4];
  load(1, 0, 0);
  store(1, 0, 256);
})");
  auto out = run(toyIsa(), p, {});
  EXPECT_EQ(values(out.at("y")), (std::vector<int32_t>{7, -8, 9, 10}));
}

TEST(Machine, StepLimitStopsRunawayPrograms) {
  Program p = parse("kernel k hbm=512 {\n  loop i in [0, 1000000000000) { }\n}\n");
  RunOptions o;
  o.max_steps = 1000;
  std::string e = errorOf([&] { run(toyIsa(), p, {}, o); });
  EXPECT_NE(e.find("more than 1000 statements"), std::string::npos) << e;
  Program q = parse("kernel k hbm=512 {\n  loop i in [0, 600) { addrows(0, 0, 0); }\n}\n");
  e = errorOf([&] { run(toyIsa(), q, {}, o); });
  EXPECT_NE(e.find("t.tasm:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("more than 1000"), std::string::npos) << e;
  EXPECT_EQ(errorOf([&] { run(toyIsa(), q, {}); }), "no error");
}

TEST(Machine, BuiltProgramsRunLikeParsedOnes) {
  Program built("rev", 512);
  built.addInput("x", 0, hlo::Shape(PrimitiveType::kS32, {8, 4}));
  built.addOutput("y", 256, hlo::Shape(PrimitiveType::kS32, {8, 4}));
  Affine i = built.beginLoop("i", 0, 8);
  built.call(toyIsa(), "load", {{"n", 1}, {"addr", 16 * i}, {"row", 7 - i}});
  built.endLoop();
  built.call(toyIsa(), "store", {8, 0, 256});
  Program parsed = parse(printProgram(toyIsa(), built));
  parsed.file.clear();
  EXPECT_TRUE(sameProgram(built, parsed));
  auto a = run(toyIsa(), built, {{"x", s32({8, 4})}});
  auto b = run(toyIsa(), parsed, {{"x", s32({8, 4})}});
  EXPECT_TRUE(a.at("y").bitwiseEqual(b.at("y")));
}

TEST(Machine, BuilderRejectsMistakes) {
  Program p("k", 64);
  EXPECT_NE(errorOf([&] { p.call(toyIsa(), "nope", {1}); }).find("no instruction or macro 'nope'"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              p.call(toyIsa(), "load", {1, 2});
            }).find("needs 3 attributes"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              p.call(toyIsa(), "load", {{"n", 1}, {"addr", 0}});
            }).find("missing attribute 'row'"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              p.call(toyIsa(), "load", {{"n", 1}, {"n", 1}, {"addr", 0}});
            }).find("given twice"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { p.endLoop(); }).find("without an open loop"), std::string::npos);
  EXPECT_NE(errorOf([&] {
              p.call(toyIsa(), "addrows", {Affine::var(0), 0, 0});
            }).find("outside its loop"),
            std::string::npos);
}

TEST(Machine, DirectCallsAndMemoryAccess) {
  Machine m(toyIsa());
  m.reset(64);
  auto hbm = m.memory(0);
  int32_t v[4] = {1, 2, 3, 4};
  std::memcpy(hbm.data(), v, 16);
  int64_t attrs[] = {1, 0, 3};
  m.call("load", attrs);
  auto sp = m.memory(1);
  EXPECT_EQ(std::memcmp(sp.data() + 3 * 16, v, 16), 0);
  EXPECT_EQ(m.stats().instructions, 1);
}

}  // namespace
}  // namespace tacit::oracle
