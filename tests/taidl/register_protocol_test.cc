// Register protocols (docs/taidl.md section 5): macros whose composition reads registers set
// outside them become selectable when they compose to the same semantics in every register state
// reachable from the initial values; anything else stays not selectable with a reason.
#include <gtest/gtest.h>

#include "taidl/symbolic.h"
#include "test_util.h"

namespace tacit::taidl {
namespace {

using testing::load;
using testing::warningsOf;

// A two-deep FIFO of 4x4 tiles in front of one weight register, pushed and popped like TPUv1's.
const std::string kFifo = R"(isa f;
const DEPTH = 2;
buffer unb[16] of s8[4];
buffer acc[16] of s32[4];
buffer weights[] of s8[4, 4];
buffer fifo[DEPTH] of s8[4, 4];
reg $occupancy = 0;
reg $push = 0;
reg $pop = 0;

instruction push_tile(; hbm_addr) {
  require hbm_addr >= 0;
  require $occupancy < DEPTH;
  %In : u8[16] = read d0[hbm_addr];
  %r = u8[1, 4, 4] reshape(%In);
  %w = s8[1, 4, 4] bitcast-convert(%r);
  write fifo[$push, 0, 0] = %w;
  set $push = ($push + 1) % DEPTH;
  set $occupancy = $occupancy + 1;
}

instruction pop_tile() {
  require $occupancy > 0;
  %w : s8[1, 4, 4] = read fifo[$pop, 0, 0];
  %r = s8[4, 4] reshape(%w);
  write weights[0, 0] = %r;
  set $pop = ($pop + 1) % DEPTH;
  set $occupancy = $occupancy - 1;
}

instruction mmul(n; unb_start, acc_start) {
  require n >= 1 && n <= 16 && unb_start >= 0 && unb_start + n <= 16;
  require acc_start >= 0 && acc_start + n <= 16;
  reads unb[unb_start] size [n];
  reads weights[] size [];
  writes acc[acc_start] size [n];
  %a = s32[n, 4] convert(%In1);
  %b = s32[4, 4] convert(%In2);
  %Out0 = s32[n, 4] dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0};
}

macro multiply_by(n; hbm_addr, unb_start, acc_start) {
  push_tile(hbm_addr = hbm_addr);
  pop_tile();
  mmul(n = n, unb_start = unb_start, acc_start = acc_start);
}
)";

int32_t macroIndex(const Isa& isa, const std::string& name) {
  for (size_t i = 0; i < isa.macros.size(); ++i) {
    if (isa.macros[i].name.text == name) return static_cast<int32_t>(i);
  }
  return -1;
}

TEST(RegisterProtocol, AFifoMacroIsSelectableWithItsSlotWritesDropped) {
  Isa isa = load(kFifo);
  const Semantics& sem = isa.macro_semantics[static_cast<size_t>(macroIndex(isa, "multiply_by"))];
  ASSERT_TRUE(sem.selectable) << sem.reason;
  ASSERT_EQ(sem.cases.size(), 1u);
  const SymCase& c = sem.cases[0];
  // Inputs: the HBM tile and the unified-buffer rows; the FIFO slot read is the slot written.
  ASSERT_EQ(c.inputs.size(), 2u);
  for (const SymSlice& in : c.inputs)
    EXPECT_NE(isa.buffers[static_cast<size_t>(in.buffer)].name.text, "fifo");
  // Outputs: weights and acc; the FIFO slot (which no selectable unit reads) is not one.
  ASSERT_EQ(c.outputs.size(), 2u);
  for (const SymSlice& out : c.outputs)
    EXPECT_NE(isa.buffers[static_cast<size_t>(out.buffer)].name.text, "fifo");
  EXPECT_TRUE(warningsOf(kFifo).empty());
}

TEST(RegisterProtocol, EachReachableStateComposesTheSameSemantics) {
  Isa isa = load(kFifo);
  int32_t m = macroIndex(isa, "multiply_by");
  std::vector<bool> dropped(isa.buffers.size(), false);
  dropped[static_cast<size_t>(isa.findBuffer("fifo"))] = true;
  std::string first;
  // (occupancy, push, pop): the states the macro reaches from (0, 0, 0).
  for (std::vector<int64_t> state : {std::vector<int64_t>{0, 0, 0}, {0, 1, 1}}) {
    std::vector<std::vector<int64_t>> exits;
    Semantics sem = macroSemanticsAt(isa, m, state, &exits, &dropped);
    ASSERT_TRUE(sem.selectable) << sem.reason;
    ASSERT_EQ(exits.size(), 1u);
    EXPECT_EQ(exits[0], (std::vector<int64_t>{0, (state[1] + 1) % 2, (state[2] + 1) % 2}));
    std::string text = semanticsText(isa, sem);
    if (first.empty()) first = text;
    EXPECT_EQ(text, first);
  }
}

TEST(RegisterProtocol, AStateWhereTheMacroCannotExecuteIsAReasonNotAnError) {
  Isa isa = load(kFifo);
  std::vector<std::vector<int64_t>> exits;
  // A full FIFO: push_tile's require is false there.
  std::vector<int64_t> full = {2, 0, 0};
  Semantics sem = macroSemanticsAt(isa, macroIndex(isa, "multiply_by"), full, &exits);
  EXPECT_FALSE(sem.selectable);
  EXPECT_NE(sem.reason.find("false in a reachable register state"), std::string::npos)
      << sem.reason;
}

TEST(RegisterProtocol, AMacroThatOnlyPushesBreaksTheProtocolAndStaysUnselectable) {
  // push_only leaves the FIFO fuller each time; it is not selectable (it writes only the FIFO),
  // and since it is never emitted, multiply_by keeps its protocol.
  std::string text = kFifo + R"(
macro push_only(; hbm_addr) {
  push_tile(hbm_addr = hbm_addr);
}
)";
  Isa isa = load(text);
  EXPECT_FALSE(isa.macro_semantics[static_cast<size_t>(macroIndex(isa, "push_only"))].selectable);
  EXPECT_TRUE(isa.macro_semantics[static_cast<size_t>(macroIndex(isa, "multiply_by"))].selectable);
}

TEST(RegisterProtocol, AMacroReadingAnotherSlotThanItWroteIsNotSelectable) {
  // Two pushes, one pop: the pop reads the first slot, the second push's tile stays queued, so
  // the next call would pop it. Its semantics differ between states: not selectable.
  std::string text = kFifo + R"(
macro skewed(n; hbm_addr, unb_start, acc_start) {
  push_tile(hbm_addr = hbm_addr);
  push_tile(hbm_addr = hbm_addr + 16);
  pop_tile();
  mmul(n = n, unb_start = unb_start, acc_start = acc_start);
}
)";
  std::vector<std::string> warnings;
  for (const Diagnostic& d : warningsOf(text))
    warnings.push_back(d.message);
  Isa isa = load(text);
  EXPECT_FALSE(isa.macro_semantics[static_cast<size_t>(macroIndex(isa, "skewed"))].selectable);
  bool reported = false;
  for (const std::string& w : warnings)
    reported |= w.find("macro skewed is not selectable") != std::string::npos;
  EXPECT_TRUE(reported);
}

TEST(RegisterProtocol, ASelectableUnitThatSetsARegisterDisablesTheAnalysis) {
  // reset is selectable (it writes a buffer) and sets $push: the reachable states are no longer
  // those of the macros alone, so nothing is made selectable through them.
  std::string text = kFifo + R"(
instruction reset(; unb_start) {
  require unb_start >= 0 && unb_start < 16;
  writes unb[unb_start] size [1];
  %Out0 = s8[1, 4] constant(0);
  set $push = 1;
}
)";
  Isa isa = load(text);
  EXPECT_FALSE(isa.macro_semantics[static_cast<size_t>(macroIndex(isa, "multiply_by"))].selectable);
}

}  // namespace
}  // namespace tacit::taidl
