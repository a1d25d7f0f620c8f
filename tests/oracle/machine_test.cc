// oracle::Machine: statements, loops, registers, constraints, out-of-range slices, macros,
// debug, trace, stats, inputs/outputs and limits (acceptance 2 of issue #4).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <random>

#include "common/paths.h"
#include "hlo_eval/random_literal.h"
#include "oracle/machine.h"
#include "oracle/memory.h"
#include "oracle/tasm.h"
#include "oracle/toy_isa.h"
#include "support/simd.h"
#include "taidl/walk.h"

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

TEST(Machine, ConstraintsAreCheckedInEveryLoopIteration) {
  // Requires proven for a call's whole attribute range are not re-evaluated; here row = i + 4
  // reaches row + n = 9 > 8 only in the last iteration, so the proof fails and the run must stop
  // there (i = 4), while the earlier iterations execute.
  Program p = parse(
      "kernel k hbm=512 {\n  loop i in [0, 5) {\n    load(n=1, addr=0, row=i + 4);\n  }\n}\n");
  std::string e = errorOf([&] { run(toyIsa(), p, {}); });
  EXPECT_NE(e.find("t.tasm:3:5"), std::string::npos) << e;
  EXPECT_NE(e.find("load(n=1, addr=0, row=8)"), std::string::npos) << e;
  EXPECT_NE(e.find("row + n <= 8"), std::string::npos) << e;
  // The same loop one iteration shorter is proven in range and runs.
  Program q = parse(
      "kernel k hbm=512 {\n  loop i in [0, 4) {\n    load(n=1, addr=0, row=i + 4);\n  }\n}\n");
  Machine m(toyIsa());
  EXPECT_NO_THROW(m.run(q, {}));
  EXPECT_EQ(m.stats().instructions, 4);
}

TEST(Machine, RegisterUpdatesSurviveTheFullWalkFallback) {
  // push sets $ptr after its register-addressed write; the fifth push is out of range and must
  // report with the registers of its entry (the compiled walk leaves them untouched).
  Program p = parse("kernel k hbm=64 {\n  loop i in [0, 8) { push(0); }\n}\n");
  Machine m(toyIsa());
  EXPECT_NO_THROW(m.run(p, {}));
  EXPECT_EQ(m.registers()[0], 8);
  EXPECT_EQ(m.registers()[1], 8);
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

// What a run of `p` prints through its debug statements.
std::string debugOutput(const Program& p, const std::map<std::string, Literal>& inputs,
                        bool clamp = false) {
  std::string text;
  RunOptions o;
  o.clamp = clamp;
  o.debug = [&](const std::string& s) { text += s; };
  run(toyIsa(), p, inputs, o);
  return text;
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
  EXPECT_EQ(debugOutput(p, {{"x", s32({2, 4})}}),
            "rows: sp[0:2, 1:3] = s32[2,2] { {2, 3}, {6, 7} }\n"
            "sp[0:1, 0:4] = s32[1,4] { {1, 2, 3, 4} }\n"
            "sp[1:2, 0:4] = s32[1,4] { {5, 6, 7, 8} }\n"
            "d0[0:8] as s32 = s32[2] {1, 2}\n");
}

// Fuzz finding (fuzz/seeds/tasm_parser/regression-empty-debug-slice.tasm): an empty debug
// slice, viewed as another type, copied from a null pointer (UBSan); it prints an empty literal.
TEST(Machine, DebugOfAnEmptySlicePrintsAnEmptyLiteral) {
  Program p = parse(R"(
kernel d hbm=512 {
  input x @0 : s32[2,4];
  loop j in [1, 3) { debug "row" sp[j:j + 0, 0:4]; }
  debug d0[0:00] as f32;
})");
  EXPECT_EQ(debugOutput(p, {{"x", s32({2, 4})}}),
            "row: sp[1:1, 0:4] = s32[0,4] {}\n"
            "row: sp[2:2, 0:4] = s32[0,4] {}\n"
            "d0[0:0] as f32 = f32[0] {}\n");
  std::ifstream seed(tacit::testing::sourceDir() +
                     "/fuzz/seeds/tasm_parser/regression-empty-debug-slice.tasm");
  std::string finding((std::istreambuf_iterator<char>(seed)), {});
  ASSERT_FALSE(finding.empty());
  // As the fuzzer found it: clamped (its store runs past d0 otherwise).
  std::string text = debugOutput(parse(finding), {{"x", s32({8, 4})}}, /*clamp=*/true);
  EXPECT_NE(text.find("d0[0:0] as f32 = f32[0] {}"), std::string::npos) << text;
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

// A loop whose body is only compiled calls runs them from a flat list: the step limit still
// stops the run at the statement that passes it, with the stats of the walked run, wherever in
// the body (and in the first iteration, which is walked) the limit falls.
TEST(Machine, StepLimitInsideAFlatLoopBodyStopsWhereTheWalkStops) {
  Program q = parse(
      "kernel k hbm=512 {\n  loop i in [0, 600) {\n    addrows(0, 1, 2);\n"
      "    addrows(2, 1, 3);\n    addrows(3, 1, 4);\n  }\n}\n");
  for (int64_t limit : {2, 3, 4, 5, 1000, 1001, 1002, 1003}) {
    std::string error[2];
    Stats stats[2];
    for (int compiled : {0, 1}) {
      RunOptions o;
      o.max_steps = limit;
      o.compiled_sites = compiled == 1;
      Machine m(toyIsa(), o);
      error[compiled] = errorOf([&] { m.run(q, {}); });
      stats[compiled] = m.stats();
    }
    EXPECT_NE(error[1].find("more than " + std::to_string(limit)), std::string::npos) << error[1];
    EXPECT_EQ(error[0], error[1]) << limit;
    EXPECT_EQ(stats[0].steps, stats[1].steps) << limit;
    EXPECT_EQ(stats[0].instructions, stats[1].instructions) << limit;
    EXPECT_EQ(stats[0].total_cost, stats[1].total_cost) << limit;
  }
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

// Specialisations that only move bytes are copied from their byte map (Executor::prepareMoves)
// instead of running their plan: a reverse of rows (two pieces at a negative step), a slice
// broadcast (one piece repeated) and a plain copy, each with its slices in disjoint places, in
// the same place, and overlapping (then the plan runs: it reads every input before writing).
TEST(Machine, ByteMovesCopyWhatThePlanWould) {
  taidl::Isa isa = taidl::loadIsa(R"(isa moves;
buffer r[8] of u8[8];
instruction rev(; src, dst) {
  require src >= 0 && src + 2 <= 8 && dst >= 0 && dst + 2 <= 8;
  reads r[src] size [2];
  writes r[dst] size [2];
  %Out0 = u8[2, 8] reverse(%In1), dimensions={0};
}
instruction bcast(; src, dst) {
  require src >= 0 && src < 8 && dst >= 0 && dst + 2 <= 8;
  reads r[src] size [1];
  writes r[dst] size [2];
  %s = u8[1, 4] slice(%In1), slice={[0:1], [2:6]};
  %w = u32[1] bitcast-convert(%s);
  %x = u32[] reshape(%w);
  %b = u32[4] broadcast(%x), dimensions={};
  %c = u8[4, 4] bitcast-convert(%b);
  %Out0 = u8[2, 8] reshape(%c);
}
instruction load(; addr, dst) {
  require addr >= 0 && dst >= 0 && dst < 8;
  reads d0[addr] size [8];
  writes r[dst] size [1];
  %Out0 = u8[1, 8] reshape(%In1);
}
instruction store(; src, addr) {
  require addr >= 0 && src >= 0 && src < 8;
  reads r[src] size [1];
  writes d0[addr] size [8];
  %Out0 = u8[8] reshape(%In1);
}
)",
                                  "moves.taidl");
  Program p = parseProgram(isa, R"(kernel moves hbm=128 {
  input a @0 : u8[64];
  output out @64 : u8[64];
  loop k in [0, 8) {
    load(addr=8*k, dst=k);
  }
  rev(src=0, dst=4);
  rev(src=2, dst=2);
  rev(src=5, dst=6);
  bcast(src=1, dst=1);
  bcast(src=7, dst=0);
  loop k in [0, 8) {
    store(src=k, addr=64 + 8*k);
  }
})",
                           "moves.tasm");
  hlo::Literal a(hlo::Shape(hlo::PrimitiveType::kU8, {64}));
  std::vector<uint8_t> r(64);
  for (size_t i = 0; i < 64; ++i)
    r[i] = a.bytes()[i] = static_cast<uint8_t>(i * 7 + 3);
  auto row = [&](size_t k) { return r.begin() + static_cast<ptrdiff_t>(8 * k); };
  auto rev = [&](size_t src, size_t dst) {
    std::vector<uint8_t> in(row(src), row(src + 2));
    std::copy(in.begin() + 8, in.end(), row(dst));
    std::copy(in.begin(), in.begin() + 8, row(dst + 1));
  };
  auto bcast = [&](size_t src, size_t dst) {
    std::vector<uint8_t> in(row(src) + 2, row(src) + 6);
    for (size_t i = 0; i < 16; ++i)
      row(dst)[static_cast<ptrdiff_t>(i)] = in[i % 4];
  };
  rev(0, 4);
  rev(2, 2);
  rev(5, 6);
  bcast(1, 1);
  bcast(7, 0);
  for (bool batch : {true, false}) {
    RunOptions options;
    options.batch = batch;
    auto out = run(isa, p, {{"a", a}}, options);
    const hlo::Literal& got = out.at("out");
    EXPECT_EQ(std::memcmp(got.bytes(), r.data(), 64), 0);
  }
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

// ---- the compiled walk
// ---------------------------------------------------------------------------

namespace tacit::oracle {
namespace {

// taidl::CompiledWalk (the oracle's per-instruction path) must give walk()'s result exactly, or
// decline with the registers untouched whenever walk() throws or warns. Random attribute values
// (mostly small, some far out of range) and register values on every instruction of every
// shipped spec and the toy ISA.
TEST(CompiledWalk, AgreesWithTheWalkOnEveryShippedInstruction) {
  std::vector<taidl::Isa> isas;
  for (const char* name : {"amx", "gemmini", "qkv", "qkv_new", "tpuv1"})
    isas.push_back(taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/" + name + ".taidl", {}));
  uint64_t seed = 12345;
  auto next = [&] {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return seed >> 33;
  };
  auto value = [&]() -> int64_t {
    switch (next() % 8) {
      case 0:
        return -static_cast<int64_t>(next() % 4);
      case 1:
        return static_cast<int64_t>(next() % 100000);
      case 2:
        return std::numeric_limits<int64_t>::max() - static_cast<int64_t>(next() % 2);
      default:
        return static_cast<int64_t>(next() % 40);
    }
  };
  int64_t accepted = 0, declined = 0;
  auto check = [&](const taidl::Isa& isa) {
    for (size_t i = 0; i < isa.instructions.size(); ++i) {
      auto inst = static_cast<int32_t>(i);
      taidl::CompiledWalk cw(isa, inst);
      for (int trial = 0; trial < 300; ++trial) {
        std::vector<int64_t> attrs(isa.instructions[i].attrs.size());
        for (int64_t& a : attrs)
          a = value();
        std::vector<int64_t> regs(isa.registers.size());
        for (int64_t& r : regs)
          r = value() % 9;
        std::vector<int64_t> fast_regs = regs, slow_regs = regs;
        taidl::WalkResult fast, slow;
        bool ok = cw.run(attrs, fast_regs, fast);
        taidl::WalkOptions options;
        DiagnosticSink warnings;
        options.constraints = taidl::ConstraintMode::kWarn;
        options.warnings = &warnings;
        bool threw = false;
        try {
          taidl::walk(isa, inst, attrs, slow_regs, options, slow);
        } catch (const DiagnosticError&) {
          threw = true;
        }
        if (!ok) {
          ++declined;
          EXPECT_EQ(fast_regs, regs) << isa.instructions[i].name.text;
          continue;
        }
        ++accepted;
        ASSERT_FALSE(threw) << isa.instructions[i].name.text;
        ASSERT_TRUE(warnings.all().empty()) << isa.instructions[i].name.text;
        EXPECT_EQ(fast.key.words, slow.key.words) << isa.instructions[i].name.text;
        EXPECT_EQ(fast.starts, slow.starts) << isa.instructions[i].name.text;
        EXPECT_EQ(fast.cost, slow.cost) << isa.instructions[i].name.text;
        EXPECT_EQ(fast.accesses, slow.accesses) << isa.instructions[i].name.text;
        EXPECT_EQ(fast_regs, slow_regs) << isa.instructions[i].name.text;
      }
    }
  };
  for (const taidl::Isa& isa : isas)
    check(isa);
  check(toyIsa());
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(declined, 100);
}

// provablyHolds only claims what holds at both ends of every attribute range (and between).
TEST(CompiledWalk, ProofsOfRequiresAreSound) {
  const taidl::Isa& isa = toyIsa();
  int32_t load = isa.findInstruction("load");
  std::vector<int64_t> lo = {1, 0, 0}, hi = {4, 100, 4};    // n, addr, row
  EXPECT_TRUE(taidl::provablyHolds(isa, load, 0, lo, hi));  // n in [1, 8]
  EXPECT_TRUE(taidl::provablyHolds(isa, load, 1, lo, hi));  // addr >= 0
  EXPECT_TRUE(taidl::provablyHolds(isa, load, 2, lo, hi));  // row + n <= 8
  hi[2] = 5;                                                // row 5 + n 4 > 8
  EXPECT_FALSE(taidl::provablyHolds(isa, load, 2, lo, hi));
  lo[1] = -1;
  EXPECT_FALSE(taidl::provablyHolds(isa, load, 1, lo, hi));
  // An empty range (lo > hi) proves nothing.
  EXPECT_FALSE(taidl::provablyHolds(isa, load, 0, std::vector<int64_t>{2, 0, 0},
                                    std::vector<int64_t>{1, 0, 0}));
}

// Batched execution (RunOptions::batch) queues elementwise executions and runs them together; the
// queue must run before anything that reads or writes what it writes, and results must be bit for
// bit those of one-at-a-time execution.
std::map<std::string, Literal> runBoth(const taidl::Isa& isa, const Program& p, Stats* batched) {
  std::map<std::string, Literal> inputs;
  uint64_t seed = 7;
  for (const Tensor& t : p.tensors) {
    if (t.kind == TensorKind::kInput) inputs.emplace(t.name, hlo::randomLiteral(t.shape, seed++));
  }
  RunOptions single, batch;
  single.batch = false;
  auto one = run(isa, p, inputs, single);
  auto many = run(isa, p, inputs, batch, batched);
  EXPECT_EQ(one.size(), many.size());
  for (const auto& [name, lit] : one) {
    const Literal& other = many.at(name);
    EXPECT_EQ(lit.byteCount(), other.byteCount());
    EXPECT_EQ(std::memcmp(lit.bytes(), other.bytes(), lit.byteCount()), 0) << p.file << " " << name;
  }
  return many;
}

// tileloadd_pitched (isa/amx.taidl, TILELOADD's row pitch): 16 rows of 64 bytes, each `pitch`
// bytes after the previous one; at pitch 64 it is the contiguous tileloadd.
TEST(Machine, AmxPitchedTileLoadReadsRowsAtItsPitch) {
  taidl::Isa isa = taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/amx.taidl", {});
  Program p = parseProgram(isa, R"(kernel pitched hbm=5120 {
  input a @0 : u8[16,128];
  output half @2048 : u8[16,64];
  output pitched64 @3072 : u8[16,64];
  output contiguous @4096 : u8[16,64];
  tileloadd_pitched(pitch=128, dst=0, addr=64);
  tilestored(stride=64, src=0, addr=2048);
  tileloadd_pitched(pitch=64, dst=1, addr=0);
  tilestored(stride=64, src=1, addr=3072);
  tileloadd(stride=64, dst=2, addr=0);
  tilestored(stride=64, src=2, addr=4096);
})",
                           "pitched.tasm");
  hlo::Literal a = hlo::randomLiteral(hlo::Shape(hlo::PrimitiveType::kU8, {16, 128}), 7);
  auto out = run(isa, p, {{"a", a}});
  for (int64_t r = 0; r < 16; ++r) {
    for (int64_t c = 0; c < 64; ++c) {
      EXPECT_EQ(out.at("half").getInt64(r * 64 + c), a.getInt64(r * 128 + 64 + c)) << r << " " << c;
      EXPECT_EQ(out.at("pitched64").getInt64(r * 64 + c), a.getInt64(r * 64 + c)) << r << " " << c;
    }
  }
  EXPECT_TRUE(out.at("pitched64").bitwiseEqual(out.at("contiguous")));
}

TEST(Machine, BatchedExecutionHonoursEveryDependency) {
  taidl::Isa isa = taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/amx.taidl", {});
  // fmadd r+8 reads zmm r+1 (zmm8 for r = 7: written by a queued fmadd); the load (a plain copy,
  // executed at once) overwrites zmm15, which a queued fmadd writes; zmm16 reads queued results;
  // stores, loads and add_mem go through the same HBM bytes; the last store overwrites one of
  // the earlier ones.
  Program p = parseProgram(isa, R"(kernel mix hbm=2048 {
  input a @0 : f32[8,16];
  output out @1024 : f32[8,16];
  output scratch @512 : f32[3,16];
  loop r in [8, 17) {
    mm512_xor(dst=r, src1=r, src2=r);
  }
  loop r in [0, 8) {
    mm512_load(dst=r, addr=64*r);
  }
  loop k in [0, 3) {
    loop r in [0, 8) {
      mm512_fmadd(dst=r + 8, src1=r, src2=r + 1);
    }
    mm512_load(dst=15, addr=64*k);
    mm512_fmadd(dst=16, src1=8, src2=9);
    mm512_store(addr=512 + 64*k, src=16);
    mm512_load(dst=7, addr=512 + 64*k);
    mm512_add_mem(dst=6, addr=512 + 64*k, src2=6);
  }
  loop r in [0, 8) {
    mm512_store(addr=1024 + 64*r, src=r + 8);
  }
  mm512_store(addr=1088, src=16);
})",
                           "mix.tasm");
  runBoth(isa, p, nullptr);
}

// Loop bodies of compiled calls skip the conflict test of a call proven not to touch what the
// body's queued executions of the same loop instance write. Each body here has a dependency the
// proof must see: (A) on the previous iteration's write, (B) on an earlier call of the same
// iteration, (C) on a later call of the previous iteration, (D) none within an instance but on the
// previous instance's queued writes (the sgemm shape), (E) a constant register read and written.
// Wrong proofs (or skipping the tests after the instance's first flush is not known) make the
// batched results differ from one-at-a-time.
TEST(Machine, FlatLoopBodiesSkipOnlyProvenConflictTests) {
  taidl::Isa isa = taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/amx.taidl", {});
  Program p = parseProgram(isa, R"(kernel flat hbm=4096 {
  input a @0 : f32[32,16];
  output out @2048 : f32[32,16];
  loop r in [0, 32) {
    mm512_load(dst=r, addr=64*r);
  }
  loop j in [0, 6) {
    mm512_fmadd(dst=j + 5, src1=j + 4, src2=0);
  }
  loop j in [0, 4) {
    mm512_fmadd(dst=j + 12, src1=1, src2=0);
    mm512_fmadd(dst=j + 16, src1=j + 12, src2=1);
  }
  loop j in [1, 4) {
    mm512_fmadd(dst=j + 20, src1=j + 23, src2=0);
    mm512_fmadd(dst=j + 24, src1=2, src2=1);
  }
  loop k in [0, 3) {
    mm512_load(dst=1, addr=64*k);
    loop j in [0, 4) {
      mm512_fmadd(dst=2*j + 8, src1=1, src2=0);
      mm512_fmadd(dst=2*j + 9, src1=1, src2=2);
    }
  }
  loop j in [0, 3) {
    mm512_fmadd(dst=28, src1=28, src2=3);
  }
  loop r in [0, 32) {
    mm512_store(addr=2048 + 64*r, src=r);
  }
})",
                           "flat.tasm");
  runBoth(isa, p, nullptr);
}

// Batches of 24, then 2 (its plan, compiled up front to check the entry and dropped unused when
// the plan for 24 was compiled, is compiled again), then 5, then 24 again.
TEST(Machine, BatchSizesComingAndGoingGiveOneAtATimeResults) {
  taidl::Isa isa = taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/amx.taidl", {});
  Program p = parseProgram(isa, R"(kernel sizes hbm=4096 {
  input a @0 : f32[2,16];
  output out @1024 : f32[24,16];
  mm512_load(dst=0, addr=0);
  mm512_load(dst=1, addr=64);
  loop r in [8, 32) {
    mm512_fmadd(dst=r, src1=0, src2=1);
  }
  loop r in [8, 10) {
    mm512_fmadd(dst=r, src1=r, src2=1);
  }
  mm512_store(addr=128, src=8);
  loop r in [8, 13) {
    mm512_fmadd(dst=r, src1=r, src2=0);
  }
  mm512_store(addr=192, src=9);
  loop r in [8, 32) {
    mm512_fmadd(dst=r, src1=r, src2=r);
  }
  loop r in [8, 32) {
    mm512_store(addr=1024 + 64*(r - 8), src=r);
  }
})",
                           "sizes.tasm");
  runBoth(isa, p, nullptr);
  // The same machine again (plans kept across runs).
  std::map<std::string, Literal> inputs{{"a", hlo::randomLiteral(p.tensors[0].shape, 3)}};
  RunOptions single;
  single.batch = false;
  Machine m(isa);
  auto first = m.run(p, inputs);
  auto second = m.run(p, inputs);
  auto expected = run(isa, p, inputs, single);
  for (const auto* got : {&first, &second}) {
    const Literal& x = got->at("out");
    const Literal& y = expected.at("out");
    EXPECT_EQ(std::memcmp(x.bytes(), y.bytes(), y.byteCount()), 0);
  }
}

TEST(Machine, BatchedExecutionMatchesOneAtATimeOnTheShippedAmxKernels) {
  taidl::Isa isa = taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/amx.taidl", {});
  for (const char* name : {"sgemm_avx_16", "cnn_inference_amx_4", "rnn_inference_amx_4"}) {
    Program p = parseProgramFile(
        isa, tacit::testing::sourceDir() + "/examples/amx/" + std::string(name) + ".tasm");
    Stats stats;
    runBoth(isa, p, &stats);
    EXPECT_GT(stats.instructions, 0) << name;
  }
}

// ZeroedMemory clears the pages written (runs of them crossing bitmap words, the partial last
// page) and nothing is left behind, round after round; after wroteAnywhere() it maps anew.
TEST(Machine, ZeroedMemoryClearsEveryWrittenPage) {
  std::mt19937 rng(9);
  for (size_t bytes : {size_t{1} << 20 | 100, size_t{300000}, size_t{4096}}) {
    detail::ZeroedMemory mem(bytes);
    for (int round = 0; round < 20; ++round) {
      for (int w = 0; w < 1 + static_cast<int>(rng() % 6); ++w) {
        size_t lo = rng() % bytes;
        size_t len = round % 3 == 0 ? rng() % (bytes - lo) + 1 : rng() % 9000 + 1;
        size_t hi = std::min(bytes, lo + len);
        std::memset(mem.data() + lo, 0x5a, hi - lo);
        mem.wrote(lo, hi);
      }
      if (round % 7 == 6) {
        mem.data()[bytes - 1] = 1;
        mem.wroteAnywhere();
      }
      mem.allocate(bytes);
      ASSERT_EQ(mem.size(), bytes);
      ASSERT_TRUE(std::all_of(mem.data(), mem.data() + bytes, [](uint8_t x) { return x == 0; }))
          << bytes << " round " << round;
    }
  }
}

// A reset keeps memory of the same size and clears only what was written since: every buffer
// must read zero again, and a second run must equal a run on a fresh machine.
TEST(Machine, ResetClearsEverythingARunWrote) {
  taidl::Isa isa =
      taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/gemmini.taidl", {{"DIM", 16}});
  Program p = parseProgramFile(
      isa, tacit::testing::sourceDir() + "/examples/gemmini/tiled_matmul_os_16_4.tasm");
  auto inputs = [&](uint64_t seed) {
    std::map<std::string, Literal> in;
    for (const Tensor& t : p.tensors) {
      if (t.kind == TensorKind::kInput) in.emplace(t.name, hlo::randomLiteral(t.shape, seed++));
    }
    return in;
  };
  Machine m(isa);
  m.run(p, inputs(1));
  m.memory(1)[7] = 0xab;  // a write through memory()
  m.reset(p.hbm_bytes);
  for (int32_t b = 0; b < static_cast<int32_t>(isa.buffers.size()); ++b) {
    std::span<uint8_t> mem = m.memory(b);
    EXPECT_TRUE(std::all_of(mem.begin(), mem.end(), [](uint8_t x) { return x == 0; }))
        << isa.buffers[static_cast<size_t>(b)].name.text;
  }
  auto second = m.run(p, inputs(5));
  auto fresh = run(isa, p, inputs(5));
  for (const auto& [name, lit] : fresh) {
    const Literal& other = second.at(name);
    EXPECT_EQ(std::memcmp(lit.bytes(), other.bytes(), lit.byteCount()), 0) << name;
  }
}

// memoryUse(): the state counts a large mapping's resident pages only (the 256 KiB scratchpad of
// Gemmini DIM=16 is barely touched by a 4-tile matmul), the plans their data.
TEST(Machine, MemoryUseCountsResidentStateAndPlanData) {
  taidl::Isa isa =
      taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/gemmini.taidl", {{"DIM", 16}});
  Program p = parseProgramFile(
      isa, tacit::testing::sourceDir() + "/examples/gemmini/tiled_matmul_os_16_4.tasm");
  Machine m(isa);
  MemoryUse before = m.memoryUse();
  EXPECT_EQ(before.plan_bytes, 0);
  std::map<std::string, Literal> in;
  uint64_t seed = 1;
  for (const Tensor& t : p.tensors) {
    if (t.kind == TensorKind::kInput) in.emplace(t.name, hlo::randomLiteral(t.shape, seed++));
  }
  m.run(p, in);
  MemoryUse after = m.memoryUse();
  int64_t footprint = 0;
  for (int32_t b = 0; b < static_cast<int32_t>(isa.buffers.size()); ++b)
    footprint += b == 0 ? p.hbm_bytes : static_cast<int64_t>(m.memory(b).size());
  EXPECT_GE(after.state_bytes, p.hbm_bytes);
  EXPECT_LT(after.state_bytes, footprint / 2);  // the untouched scratchpad pages are not counted
  EXPECT_GT(after.plan_bytes, 0);
}

// ---- compiled call sites (RunOptions::compiled_sites) against the walk, bit for bit ------------

// Random AMX programs: AVX-512 and tile instructions in loops (nested, bounds over enclosing
// variables), registers and addresses affine in the loop variables — mostly in range, sometimes
// not (a violated require or an out-of-range slice must be reported identically).
class RandomAmxProgram {
 public:
  RandomAmxProgram(const taidl::Isa& isa, uint32_t seed) : isa_(isa), rng_(seed), p_("r", kHbm) {
    p_.addInput("x", 0, hlo::Shape(PrimitiveType::kF32, {1024}));
    p_.addOutput("y", 4096, hlo::Shape(PrimitiveType::kF32, {1024}));
    block(0, 8 + static_cast<int>(rng_() % 10));
  }
  Program& program() { return p_; }

 private:
  static constexpr int64_t kHbm = 8192;
  struct Var {
    Affine v;
    int64_t lo, hi;  // inclusive range
  };

  int64_t pick(int64_t n) { return static_cast<int64_t>(rng_() % static_cast<uint64_t>(n)); }

  // A value in [0, limit) for every iteration (rarely one that leaves it), scaled by `step`.
  Affine value(int64_t limit, int64_t step = 1) {
    bool wild = pick(300) == 0;
    if (vars_.empty() || pick(3) == 0) return Affine(step * (wild ? limit : pick(limit)));
    const Var& x = vars_[static_cast<size_t>(pick(static_cast<int64_t>(vars_.size())))];
    int64_t span = x.hi - x.lo;
    if (span >= limit) return Affine(step * pick(limit));
    int64_t c = pick(limit - span) - x.lo + (wild ? limit : 0);
    return step * (x.v + Affine(c));
  }
  Affine reg() { return value(32); }
  Affine tile() { return value(8); }
  Affine addr(int64_t bytes) { return value((kHbm - bytes) / 4, 4); }

  void call() {
    switch (pick(11)) {
      case 0:
        p_.call(isa_, "mm512_load", {reg(), addr(64)});
        return;
      case 1:
        p_.call(isa_, "mm512_store", {addr(64), reg()});
        return;
      case 2:
      case 3:
        p_.call(isa_, "mm512_fmadd", {reg(), reg(), reg()});
        return;
      case 4:
        p_.call(isa_, "mm512_add", {reg(), reg(), reg()});
        return;
      case 5:
        p_.call(isa_, pick(2) ? "mm512_xor" : "mm512_max", {reg(), reg(), reg()});
        return;
      case 6:
        p_.call(isa_, "mm512_broadcast_mem", {reg(), addr(4)});
        return;
      case 7:
        p_.call(isa_, "mm512_add_mem", {reg(), addr(64), reg()});
        return;
      case 8: {
        int64_t stride = pick(2) ? 64 : 16;
        p_.call(isa_, pick(2) ? "tileloadd" : "tilestored",
                {Affine(stride), tile(), addr(16 * 64)});
        return;
      }
      case 9: {  // three distinct tiles (else a violated require), sometimes moving with a loop
        int64_t t0 = pick(8), t1 = (t0 + 1 + pick(7)) % 8, t2 = (t0 + 1 + pick(7)) % 8;
        if (t1 == t2) t2 = (t2 + 1) % 8 == t0 ? (t2 + 2) % 8 : (t2 + 1) % 8;
        Affine d(t0);
        if (!vars_.empty() && vars_.back().hi - vars_.back().lo == 0 && pick(2) == 0)
          d = vars_.back().v + Affine(t0 - vars_.back().lo);
        p_.call(isa_, "tdpbusd", {d, Affine(t1), Affine(t2)});
        return;
      }
      default:
        p_.call(isa_, "tilezero", {tile()});
        return;
    }
  }

  void block(int depth, int n) {
    for (int i = 0; i < n; ++i) {
      if (depth < 2 && pick(4) == 0) {
        int64_t lo = pick(3), len = 1 + pick(4);
        Affine hi(lo + len);
        int64_t hi_max = lo + len - 1;
        if (!vars_.empty() && pick(3) == 0) {  // bound over the enclosing variable
          hi = vars_.back().v + Affine(lo + len - vars_.back().lo);
          hi_max = lo + len - vars_.back().lo + vars_.back().hi - 1;
        }
        Affine v = p_.beginLoop("v" + std::to_string(depth) + "_" + std::to_string(i), lo, hi);
        vars_.push_back({v, lo, hi_max});
        block(depth + 1, 1 + static_cast<int>(pick(5)));
        vars_.pop_back();
        p_.endLoop();
        continue;
      }
      call();
    }
  }

  const taidl::Isa& isa_;
  std::mt19937 rng_;
  Program p_;
  std::vector<Var> vars_;
};

// Runs `p` with `options` on `m`: the outputs, the stats, or the error text.
struct Outcome {
  std::map<std::string, Literal> out;
  Stats stats;
  std::string error;
};
Outcome runOn(Machine& m, const Program& p, const std::map<std::string, Literal>& inputs) {
  Outcome o;
  try {
    o.out = m.run(p, inputs);
    o.stats = m.stats();
  } catch (const DiagnosticError& e) {
    o.error = e.what();
  }
  return o;
}

void expectSameOutcome(const Outcome& a, const Outcome& b, const std::string& what) {
  ASSERT_EQ(a.error, b.error) << what;
  ASSERT_EQ(a.out.size(), b.out.size()) << what;
  for (const auto& [name, lit] : a.out) {
    const Literal& other = b.out.at(name);
    ASSERT_EQ(std::memcmp(lit.bytes(), other.bytes(), lit.byteCount()), 0) << what << " " << name;
  }
  if (!a.error.empty()) return;
  EXPECT_EQ(a.stats.instructions, b.stats.instructions) << what;
  EXPECT_EQ(a.stats.steps, b.stats.steps) << what;
  EXPECT_EQ(a.stats.total_cost, b.stats.total_cost) << what;
  EXPECT_EQ(a.stats.per_instruction, b.stats.per_instruction) << what;
  EXPECT_EQ(a.stats.cost_per_instruction, b.stats.cost_per_instruction) << what;
  EXPECT_EQ(a.stats.moved, b.stats.moved) << what;
  EXPECT_EQ(a.stats.bytes_read, b.stats.bytes_read) << what;
  EXPECT_EQ(a.stats.bytes_written, b.stats.bytes_written) << what;
}

std::map<std::string, Literal> randomInputs(const Program& p, uint64_t seed) {
  std::map<std::string, Literal> in;
  for (const Tensor& t : p.tensors) {
    if (t.kind == TensorKind::kInput) in.emplace(t.name, hlo::randomLiteral(t.shape, seed++));
  }
  return in;
}

TEST(Machine, CompiledSitesMatchTheWalkOnRandomPrograms) {
  taidl::Isa isa = taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/amx.taidl", {});
  int errors = 0, nests = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    RandomAmxProgram gen(isa, seed);
    const Program& p = gen.program();
    auto inputs = randomInputs(p, seed);
    // The most general path (every call walked and executed at once) against compiled sites,
    // batched or not.
    RunOptions walked;
    walked.compiled_sites = false;
    walked.batch = false;
    walked.native = false;
    RunOptions compiled;
    compiled.batch = seed % 3 != 0;
    Machine a(isa, walked), b(isa, compiled);
    Outcome want = runOn(a, p, inputs);
    errors += want.error.empty() ? 0 : 1;
    std::string what = "seed " + std::to_string(seed) + "\n" + printProgram(isa, p);
    expectSameOutcome(want, runOn(b, p, inputs), what);
    // A second run reuses the compiled sites.
    Outcome again = runOn(b, p, inputs);
    expectSameOutcome(want, again, what + " (second run)");
    nests += again.stats.nest_iterations > 0 ? 1 : 0;
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(errors, 0);  // the generator also exercises the error paths
  EXPECT_LT(errors, 200);
  EXPECT_GT(nests, 10);  // and loops that run as direct nests
}

// sgemm's shape (examples/amx/sgemm_avx_*.tasm) with one more level: a loop whose body holds
// loops, every call a native kernel or a move. Its iterations after the first run as one direct
// nest (docs/oracle.md, "Direct loop nests"), with the walked machine's outputs and stats; where
// the step limit falls inside the nest, the run stops where the walk stops. Without the nest
// (mm512_xor batches) the zeroing loop runs as before.
constexpr const char* kNestedLoops = R"(kernel k hbm=8192 {
  input x @0 : f32[1024];
  output y @4096 : f32[1024];
  loop r in [8, 24) {
    mm512_xor(dst=r, src1=r, src2=r);
  }
  loop i in [0, 6) {
    mm512_load(dst=0, addr=256*i);
    mm512_load(dst=1, addr=256*i + 64);
    loop j in [0, 3) {
      mm512_fmadd(dst=2*j + 8, src1=0, src2=1);
      mm512_broadcast_mem(dst=2, addr=4*j + 128*i + 8);
      mm512_fmadd(dst=2*j + 9, src1=1, src2=2);
      loop k in [0, 2) {
        mm512_fmadd(dst=k + 20, src1=0, src2=2);
      }
      loop e in [0, 3) {
      }
    }
    mm512_fmadd(dst=i + 1, src1=i + 9, src2=0);
  }
  loop r in [0, 16) {
    mm512_store(addr=64*r + 4096, src=r + 8);
  }
  loop r in [0, 6) {
    mm512_store(addr=64*r + 5120, src=r + 1);
  }
})";

TEST(Machine, DirectNestsMatchTheWalk) {
  taidl::Isa isa = taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/amx.taidl", {});
  Program p = parseProgram(isa, kNestedLoops, "nest.tasm");
  auto inputs = randomInputs(p, 7);
  RunOptions walked;
  walked.compiled_sites = false;
  walked.native = false;
  Machine a(isa, walked), b(isa);
  Outcome want = runOn(a, p, inputs);
  ASSERT_TRUE(want.error.empty()) << want.error;
  EXPECT_EQ(want.stats.nest_iterations, 0);
  for (const char* run : {"first run", "second run"}) {
    Outcome got = runOn(b, p, inputs);
    expectSameOutcome(want, got, run);
    // i = 1..5, the first i's j = 1, 2, the first j's k = 1, and the stores' r = 1..; the
    // zeroing loop's xor batches (it may be queued), so that loop does not qualify. Without
    // native kernels (the generic SIMD level) mm512_fmadd batches too: only the stores' loops
    // qualify, once the queue has run.
    if (simd::level() >= simd::Level::kAvx2) {
      EXPECT_EQ(got.stats.nest_iterations, 5 + 2 + 1 + 15 + 5) << run;
    } else {
      EXPECT_GT(got.stats.nest_iterations, 0) << run;
    }
  }
}

// A nest whose statements outnumber int64 is not run on a count that overflowed: from i = 1 the
// nest would run (2^64 + 2) / 9 iterations of 8 statements plus one per further iteration, a
// count that wraps to 1. The statement-by-statement path stops at the limit, where the walk stops.
TEST(Machine, ANestBeyondEveryStepLimitStopsAtTheLimit) {
  taidl::Isa isa = taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/amx.taidl", {});
  Program p = parseProgram(isa, R"(kernel k hbm=8192 {
  input x @0 : f32[1024];
  output y @4096 : f32[1024];
  mm512_load(dst=0, addr=0);
  mm512_load(dst=1, addr=64);
  loop i in [0, 2049638230412172403) {
    loop j in [0, 4) {
      mm512_fmadd(dst=j + 8, src1=0, src2=1);
    }
  }
})",
                           "huge.tasm");
  auto inputs = randomInputs(p, 3);
  std::string error[2];
  for (int compiled : {0, 1}) {
    RunOptions o;
    o.max_steps = 1000;
    o.compiled_sites = compiled == 1;
    Machine m(isa, o);
    error[compiled] = runOn(m, p, inputs).error;
  }
  EXPECT_NE(error[1].find("more than 1000 statements"), std::string::npos) << error[1];
  EXPECT_EQ(error[0], error[1]);
}

TEST(Machine, StepLimitInsideADirectNestStopsWhereTheWalkStops) {
  taidl::Isa isa = taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/amx.taidl", {});
  Program p = parseProgram(isa, kNestedLoops, "nest.tasm");
  auto inputs = randomInputs(p, 7);
  RunOptions o;
  o.max_steps = 1'000'000;
  Machine probe(isa, o);
  int64_t total = runOn(probe, p, inputs).stats.steps;
  for (int64_t limit = 30; limit <= total; limit += 7) {
    std::string error[2];
    Stats stats[2];
    for (int compiled : {0, 1}) {
      o.max_steps = limit;
      o.compiled_sites = compiled == 1;
      Machine m(isa, o);
      error[compiled] = runOn(m, p, inputs).error;
      stats[compiled] = m.stats();
    }
    EXPECT_EQ(error[0], error[1]) << limit;
    EXPECT_EQ(stats[0].steps, stats[1].steps) << limit;
    EXPECT_EQ(stats[0].instructions, stats[1].instructions) << limit;
    EXPECT_EQ(stats[0].per_instruction, stats[1].per_instruction) << limit;
  }
}

// A statement changed between two runs of the same Program is compiled again, not reused.
TEST(Machine, CompiledSitesFollowAChangedProgram) {
  taidl::Isa isa = taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/amx.taidl", {});
  Program p = parseProgram(isa, R"(kernel k hbm=8192 {
  input x @0 : f32[1024];
  output y @4096 : f32[1024];
  loop i in [0, 4) {
    mm512_load(dst=i, addr=64*i);
    mm512_fmadd(dst=i, src1=i, src2=i);
    mm512_store(addr=64*i + 4096, src=i);
  }
})",
                           "k.tasm");
  auto inputs = randomInputs(p, 3);
  Machine m(isa);
  m.run(p, inputs);
  p.body[0].body[2].attrs[0] = p.body[0].body[2].attrs[0] + Affine(256);  // store elsewhere
  RunOptions walked;
  walked.compiled_sites = false;
  Machine fresh(isa, walked);
  expectSameOutcome(runOn(fresh, p, inputs), runOn(m, p, inputs), "changed store");
  p.body[0].body[2].attrs[0] = p.body[0].body[2].attrs[0] + Affine(4096);  // now out of range
  expectSameOutcome(runOn(fresh, p, inputs), runOn(m, p, inputs), "out of range");
}

TEST(Machine, CompiledSitesMatchTheWalkOnTheShippedKernels) {
  struct K {
    const char* spec;
    int64_t dim;
    const char* program;
  };
  for (K k :
       {K{"amx", 0, "amx/sgemm_avx_16"}, K{"amx", 0, "amx/cnn_inference_amx_16"},
        K{"amx", 0, "amx/rnn_inference_amx_16"}, K{"gemmini", 16, "gemmini/tiled_matmul_os_16_8"},
        K{"gemmini", 16, "gemmini/tiled_matmul_ws_16_8"},
        K{"gemmini", 64, "gemmini/tiled_matmul_ws_64_4"}}) {
    taidl::ParamOverrides params;
    if (k.dim) params.emplace_back("DIM", k.dim);
    taidl::Isa isa = taidl::loadIsaFile(
        tacit::testing::sourceDir() + "/isa/" + std::string(k.spec) + ".taidl", params);
    Program p = parseProgramFile(
        isa, tacit::testing::sourceDir() + "/examples/" + std::string(k.program) + ".tasm");
    auto inputs = randomInputs(p, 11);
    RunOptions walked;
    walked.compiled_sites = false;
    walked.native = false;
    Machine a(isa, walked), b(isa);
    Outcome want = runOn(a, p, inputs);
    EXPECT_TRUE(want.error.empty()) << want.error;
    expectSameOutcome(want, runOn(b, p, inputs), k.program);
    expectSameOutcome(want, runOn(b, p, inputs), std::string(k.program) + " (second run)");
  }
}

// A direct kernel (an elementwise instruction compiled to native code, called on the buffer in
// place) updating exactly its input, a disjoint slice, and slices that overlap its input only
// partly (which must take the staged path): the outputs equal the interpreted machine's.
TEST(Machine, DirectKernelsMatchTheInterpreterWhateverTheOverlap) {
  taidl::Isa isa = taidl::loadIsa(R"(isa direct;
buffer v[64] of s32[1];
instruction load(; addr, row) {
  require addr >= 0 && row >= 0 && row + 16 <= 64;
  reads d0[addr] size [64];
  writes v[row] size [16];
  %a = u8[16, 1, 4] reshape(%In1);
  %Out0 = s32[16, 1] bitcast-convert(%a);
}
instruction store(; row, addr) {
  require addr >= 0 && row >= 0 && row + 16 <= 64;
  reads v[row] size [16];
  writes d0[addr] size [64];
  %a = u8[16, 1, 4] bitcast-convert(%In1);
  %Out0 = u8[64] reshape(%a);
}
instruction mix(; a, c) {
  require a >= 0 && a + 16 <= 64 && c >= 0 && c + 16 <= 64;
  reads v[a] size [16];
  writes v[c] size [16];
  %x = s32[16, 1] multiply(%In1, %In1);
  %Out0 = s32[16, 1] add(%x, %In1);
}
)",
                                  "direct.taidl");
  // Each result is stored before anything overwrites it.
  Program p = parseProgram(isa, R"(kernel k hbm=2048 {
  input x @0 : s32[64];
  output y @256 : s32[320];
  loop r in [0, 4) {
    load(addr=64*r, row=16*r);
  }
  mix(a=0, c=0);
  store(row=0, addr=256);
  mix(a=0, c=8);
  store(row=8, addr=320);
  mix(a=20, c=4);
  store(row=4, addr=384);
  mix(a=40, c=16);
  store(row=16, addr=448);
  mix(a=48, c=47);
  store(row=47, addr=512);
  loop i in [0, 5) {
    mix(a=8*i, c=8*i);
    store(row=8*i, addr=576 + 192*i);
    mix(a=8*i, c=8*i + 4);
    store(row=8*i + 4, addr=640 + 192*i);
    mix(a=48 - 8*i, c=8*i);
    store(row=8*i, addr=704 + 192*i);
  }
})",
                           "direct.tasm");
  auto inputs = randomInputs(p, 5);
  RunOptions interpreted;
  interpreted.native = false;
  Machine a(isa, interpreted), b(isa);
  Outcome want = runOn(a, p, inputs);
  ASSERT_TRUE(want.error.empty()) << want.error;
  expectSameOutcome(want, runOn(b, p, inputs), "direct kernels");
  expectSameOutcome(want, runOn(b, p, inputs), "direct kernels (second run)");
}

}  // namespace
}  // namespace tacit::oracle
