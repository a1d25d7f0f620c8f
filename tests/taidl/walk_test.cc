// The oracle-facing API (walk.h, specialize.h): keys, access starts, register updates in
// execution order, phases for reads after writes, constraint checks, runtime errors, and data
// results computed through the specialised HLO.
#include <gtest/gtest.h>

#include <cstring>

#include "mini_oracle.h"
#include "test_util.h"

namespace tacit::taidl {
namespace {

using testing::load;
using testing::MiniMachine;

const char* kSpec = R"(isa w;
buffer b[16] of s32[4];
buffer d1[8] of bf16[64];
reg $p = 0;
reg $q = 0;
reg $d = 0;

instruction ctl(n, mode; x) {
  require n >= 0 && n <= 3;
  require mode == 0 || mode == 1;
  require x >= 0 && x + 5 <= 16;
  cost 10 + n;
  set $p = $p + 1;
  %a : s32[1, 4] = read b[x + $p, 0];
  if ($q == 0) {
    %c = s32[1, 4] negate(%a);
  } else {
    %c = s32[1, 4] abs(%a);
  }
  repeat i in [0, n) {
    write b[x + i + 2, 0] = %c;
  }
  set $q = mode;
}

instruction rmw(; x, y) {
  require x >= 0 && x + 1 <= 16 && y >= 0 && y + 1 <= 15;
  %a : s32[1, 4] = read b[x, 0];
  %n = s32[1, 4] negate(%a);
  write b[y, 0] = %n;
  %c : s32[1, 4] = read b[x, 0];
  %s = s32[1, 4] add(%c, %a);
  write b[15, 0] = %s;
}

instruction load_rm(n; addr_in, addr_out) {
  require n >= 1 && n <= 8;
  require addr_in >= 0;
  require addr_out >= 0 && addr_out + n <= 8;
  cost n;
  reads d0[addr_in] size [n * 128];
  writes d1[addr_out] size [n];
  %a = u8[n, 64, 2] reshape(%In1);
  %Out0 = bf16[n, 64] bitcast-convert(%a);
}

instruction store_rm(n; addr_in, addr_out) {
  require n >= 1 && n <= 8;
  require addr_in >= 0 && addr_in + n <= 8;
  require addr_out >= 0;
  reads d1[addr_in] size [n];
  writes d0[addr_out] size [n * 128];
  %a = u8[n, 64, 2] bitcast-convert(%In1);
  %Out0 = u8[n * 128] reshape(%a);
}

instruction divide(; x) {
  require x >= 0 && x < 16;
  %a : s32[1, 4] = read b[x // $d, 0];
  write b[0, 0] = %a;
}

macro move(n; src, tmp, dst) {
  load_rm(n, src, tmp);
  store_rm(n = n, addr_in = tmp, addr_out = dst + 2 * src);
}
)";

int32_t rowValue(const MiniMachine& m, int64_t row, int64_t lane) {
  int32_t v;
  std::memcpy(&v, m.memory[1].data() + (row * 4 + lane) * 4, 4);
  return v;
}
void setRow(MiniMachine& m, int64_t row, std::vector<int32_t> v) {
  std::memcpy(m.memory[1].data() + row * 16, v.data(), 16);
}

TEST(Walk, KeysStartsRegistersAndCost) {
  Isa isa = load(kSpec);
  int32_t ctl = isa.findInstruction("ctl");
  std::vector<int64_t> regs = {0, 0, 0};
  WalkResult r;
  walk(isa, ctl, std::vector<int64_t>{2, 1, 3}, regs, {}, r);
  EXPECT_EQ(r.key.words, (std::vector<int64_t>{2, 1, /*if $q == 0*/ 1, /*repeat lo, trips*/ 0, 2}));
  EXPECT_EQ(r.starts, (std::vector<int64_t>{4, 0, 5, 0, 6, 0}));
  EXPECT_EQ(r.accesses, 3u);
  EXPECT_EQ(r.cost, 12);
  EXPECT_EQ(regs, (std::vector<int64_t>{1, 1, 0}));
  // The register file now takes the other branch and moves the read.
  walk(isa, ctl, std::vector<int64_t>{0, 0, 3}, regs, {}, r);
  EXPECT_EQ(r.key.words, (std::vector<int64_t>{0, 0, 0, 0, 0}));
  EXPECT_EQ(r.starts, (std::vector<int64_t>{5, 0}));
  EXPECT_EQ(regs, (std::vector<int64_t>{2, 0, 0}));
  EXPECT_EQ(SpecKeyHash()(r.key), SpecKeyHash()(SpecKey{{0, 0, 0, 0, 0}}));
  EXPECT_NE(SpecKeyHash()(r.key), SpecKeyHash()(SpecKey{{0, 0, 1, 0, 0}}));
}

TEST(Walk, SpecialisationFollowsTheKey) {
  Isa isa = load(kSpec);
  MiniMachine m(isa, 4096);
  setRow(m, 4, {1, -2, 3, -4});
  m.run("ctl", {2, 1, 3});  // $p = 1: reads row 4, negates (since $q == 0), writes rows 5, 6
  EXPECT_EQ(rowValue(m, 5, 0), -1);
  EXPECT_EQ(rowValue(m, 6, 1), 2);
  EXPECT_EQ(rowValue(m, 7, 0), 0);
  m.run("ctl", {1, 0, 3});  // $p = 2, $q = 1: reads row 5 (-1, 2, -3, 4), abs, writes row 5
  EXPECT_EQ(rowValue(m, 5, 0), 1);
  EXPECT_EQ(rowValue(m, 5, 2), 3);
  EXPECT_EQ(m.specialisations, 2u);
  m.run("ctl", {2, 1, 2});  // $q == 0 again: the first call's key, so the cached program
  EXPECT_EQ(m.specialisations, 2u);
  EXPECT_EQ(rowValue(m, 4, 0), -1);  // row 5 (now 1, 2, 3, 4) negated into rows 4 and 5
  EXPECT_EQ(rowValue(m, 5, 3), -4);
  EXPECT_EQ(m.total_cost, 12 + 11 + 12);

  std::unique_ptr<Specialization> s =
      specialize(isa, isa.findInstruction("ctl"), SpecKey{{2, 1, 1, 0, 2}});
  ASSERT_EQ(s->accesses.size(), 3u);
  EXPECT_FALSE(s->accesses[0].write);
  EXPECT_TRUE(s->accesses[1].write);
  EXPECT_EQ(s->accesses[2].start_offset, 4u);
  EXPECT_EQ(s->accesses[0].shape.shortStr(), "s32[1,4]");
  EXPECT_EQ(s->phases.size(), 1u);
  EXPECT_EQ(s->start_count, 6u);
  EXPECT_THROW(specialize(isa, isa.findInstruction("ctl"), SpecKey{{2, 1, 1}}), DiagnosticError);
}

TEST(Walk, ReadsAfterWritesObserveThemThroughPhases) {
  Isa isa = load(kSpec);
  std::unique_ptr<Specialization> s = specialize(isa, isa.findInstruction("rmw"), SpecKey{});
  ASSERT_EQ(s->phases.size(), 2u);
  EXPECT_EQ(s->phases[0].reads, (std::vector<uint32_t>{0}));
  EXPECT_EQ(s->phases[0].writes, (std::vector<uint32_t>{1}));
  EXPECT_EQ(s->phases[0].carried_out, 1u);  // %a is used again in phase 1
  EXPECT_EQ(s->phases[1].reads, (std::vector<uint32_t>{2}));
  EXPECT_EQ(s->phases[1].carried_in, 1u);
  EXPECT_EQ(s->phases[1].writes, (std::vector<uint32_t>{3}));
  EXPECT_EQ(s->accesses[2].phase, 1u);

  MiniMachine m(isa, 0);
  setRow(m, 3, {5, 6, 7, 8});
  m.run("rmw", {3, 3});  // the second read sees -a: b[15] = -a + a = 0
  EXPECT_EQ(rowValue(m, 15, 0), 0);
  EXPECT_EQ(rowValue(m, 3, 0), -5);
  setRow(m, 4, {5, 6, 7, 8});
  m.run("rmw", {4, 9});  // no aliasing: b[15] = a + a
  EXPECT_EQ(rowValue(m, 15, 3), 16);
  EXPECT_EQ(rowValue(m, 9, 3), -8);
}

TEST(Walk, DeclaredSlicesMoveBytesThroughHbm) {
  Isa isa = load(kSpec);
  MiniMachine m(isa, 8192);
  for (size_t i = 0; i < 512; ++i)
    m.memory[0][i] = static_cast<uint8_t>(i * 7 + 1);
  m.run("move", {2, 0, 3, 1000});  // d0[0..256) -> d1 rows 3, 4 -> d0[1000..1256)
  for (size_t i = 0; i < 256; ++i) {
    ASSERT_EQ(m.memory[2][3 * 128 + i], m.memory[0][i]) << i;
    ASSERT_EQ(m.memory[0][1000 + i], m.memory[0][i]) << i;
  }
  EXPECT_EQ(m.memory[0][1256], 0);
  EXPECT_EQ(m.total_cost, 2 + 1);
  std::vector<ExpandedCall> calls =
      expandMacro(isa, isa.findMacro("move"), std::vector<int64_t>{2, 5, 3, 1000});
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].attrs, (std::vector<int64_t>{2, 3, 1010}));
}

TEST(Walk, ConstraintViolationsAreErrorsOrWarnings) {
  Isa isa = load(kSpec);
  int32_t rmw = isa.findInstruction("rmw");
  std::vector<int64_t> regs = {0, 0, 0};
  WalkResult r;
  WalkOptions options;
  options.site = CallSite{"prog.tasm", SourceLoc{3, 5}};
  try {
    walk(isa, rmw, std::vector<int64_t>{20, 0}, regs, options, r);
    FAIL() << "expected a constraint error";
  } catch (const DiagnosticError& e) {
    const Diagnostic& d = e.diagnostic();
    EXPECT_EQ(d.file, "prog.tasm");
    EXPECT_EQ(d.loc, (SourceLoc{3, 5}));
    EXPECT_EQ(d.message,
              "constraint `x >= 0 && x + 1 <= 16 && y >= 0 && y + 1 <= 15` of rmw is "
              "violated by rmw(x=20, y=0)");
    ASSERT_EQ(d.notes.size(), 1u);
    EXPECT_EQ(d.notes[0].file, "t.taidl");
    EXPECT_EQ(d.notes[0].loc.line, 27u);
  }
  DiagnosticSink sink;
  options.constraints = ConstraintMode::kWarn;
  options.warnings = &sink;
  walk(isa, rmw, std::vector<int64_t>{20, 0}, regs, options, r);
  ASSERT_EQ(sink.count(Severity::kWarning), 1u);
  EXPECT_EQ(r.starts, (std::vector<int64_t>{20, 0, 0, 0, 20, 0, 15, 0}));
  // The oracle's bounds check then reports the access itself.
  std::unique_ptr<Specialization> s = specialize(isa, rmw, r.key);
  try {
    checkAccesses(isa, *s, r, std::vector<int64_t>{20, 0}, 0, options.site);
    FAIL() << "expected an out-of-range error";
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(
        e.diagnostic().message,
        "rmw(x=20, y=0): the read of b[20, 0] of s32[1,4] exceeds b (s32[16,4]) in dimension 0");
  }
}

TEST(Walk, RegistersInConstraintsAreNamedWithTheirValues) {
  Isa isa = load(R"(isa t;
buffer b[4] of s32[];
reg $busy = 0;
instruction go(; x) {
  require $busy == 0 && x >= 0 && x < 4;
  %v : s32[1] = read b[x];
  write b[x] = %v;
  set $busy = 1;
}
)");
  std::vector<int64_t> regs = {0};
  WalkResult r;
  walk(isa, 0, std::vector<int64_t>{1}, regs, {}, r);
  try {
    walk(isa, 0, std::vector<int64_t>{1}, regs, {}, r);
    FAIL();
  } catch (const DiagnosticError& e) {
    EXPECT_NE(e.diagnostic().message.find("violated by go(x=1) with $busy=1"), std::string::npos)
        << e.what();
  }
}

TEST(Walk, RuntimeExpressionErrorsNameTheCall) {
  Isa isa = load(kSpec);
  std::vector<int64_t> regs = {0, 0, 0};
  WalkResult r;
  try {
    walk(isa, isa.findInstruction("divide"), std::vector<int64_t>{5}, regs, {}, r);
    FAIL();
  } catch (const DiagnosticError& e) {
    EXPECT_EQ(e.diagnostic().message,
              "division by zero in 5 // 0 in `x // $d` while executing divide(x=5)");
  }
  regs[2] = 2;
  walk(isa, isa.findInstruction("divide"), std::vector<int64_t>{5}, regs, {}, r);
  EXPECT_EQ(r.starts, (std::vector<int64_t>{2, 0, 0, 0}));
}

TEST(Walk, RegisterAddressesAreBoundsChecked) {
  Isa isa = load(kSpec);
  MiniMachine m(isa, 0);
  m.regs[0] = 13;  // $p becomes 14: ctl reads b[x + 14]
  EXPECT_THROW(m.run("ctl", {0, 0, 3}), DiagnosticError);
}

// A let reads an integer of the machine's buffers (docs/taidl.md section 4.7): little-endian,
// sign-extended for signed types; it addresses like a register, and an index outside its buffer
// or a walk without the machine state is an error.
TEST(Walk, LetsReadIndicesFromTheBuffers) {
  Isa isa = load(R"(isa l;
buffer idx[4] of s16[];
buffer b[16] of s8[];
instruction pick(; a) {
  require a >= 0 && a < 8;
  let k = idx[a];
  %x : s8[1] = read b[k];
  write b[0] = %x;
}
)");
  std::vector<uint8_t> idx = {5, 0, 0xff, 0xff, 15, 0, 16, 0};  // 5, -1, 15, 16
  std::vector<uint8_t> b(16);
  WalkOptions options;
  options.memory = [&](int32_t buffer) {
    std::vector<uint8_t>& m = buffer == isa.findBuffer("idx") ? idx : b;
    return BufferBytes{m.data(), static_cast<int64_t>(m.size())};
  };
  std::vector<int64_t> regs;
  WalkResult r;
  int32_t pick = isa.findInstruction("pick");
  walk(isa, pick, std::vector<int64_t>{0}, regs, options, r);
  EXPECT_EQ(r.starts, (std::vector<int64_t>{5, 0}));  // read b[5], write b[0]
  walk(isa, pick, std::vector<int64_t>{2}, regs, options, r);
  EXPECT_EQ(r.starts, (std::vector<int64_t>{15, 0}));
  walk(isa, pick, std::vector<int64_t>{1}, regs, options, r);
  EXPECT_EQ(r.starts, (std::vector<int64_t>{-1, 0}));  // the executor's bounds check rejects it
  try {
    walk(isa, pick, std::vector<int64_t>{5}, regs, options, r);
    ADD_FAILURE() << "idx[5] is outside idx";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("let k of pick(a=5) reads idx[5], outside the buffer"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(walk(isa, pick, std::vector<int64_t>{0}, regs, {}, r), DiagnosticError);
  CompiledWalk compiled(isa, pick);
  EXPECT_FALSE(compiled.run(std::vector<int64_t>{0}, regs, r));  // lets take walk()
  // Not selectable: the element it reads is chosen by an addressing attribute.
  EXPECT_FALSE(isa.instruction_semantics[static_cast<size_t>(pick)].selectable);
  EXPECT_NE(isa.instruction_semantics[static_cast<size_t>(pick)].reason.find(
                "an index that depends on addressing attributes or data"),
            std::string::npos);
}

}  // namespace
}  // namespace tacit::taidl
