// Symbolic semantics and macro composition (docs/taidl.md section 5): the register-free form the
// instruction selector consumes, and the reasons a unit is not selectable.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "hlo/verifier.h"
#include "hlo_eval/evaluator.h"
#include "taidl/symbolic.h"
#include "test_util.h"

namespace tacit::taidl {
namespace {

using testing::load;

// A Gemmini-like systolic array (DIM = 4): the preload + compute register protocol, dataflow
// chosen by a register, and the two macros that make it selectable.
const char* kArray = R"(isa g;
param DIM = 4;
buffer sp[64] of s8[DIM];
buffer bias[] of s32[DIM, DIM];
reg $dataflow = 0;
reg $preload = 0;
reg $rs1 = -1;
reg $rs2 = 0;

instruction config(dataflow) {
  require dataflow == 0 || dataflow == 1;
  set $dataflow = dataflow;
}

instruction preload(; rs1, rs2) {
  cost DIM;
  set $rs1 = rs1;
  set $rs2 = rs2;
  set $preload = 1;
}

instruction compute(; rs1, rs2) {
  require $preload == 1;
  require rs1 >= 0 && rs1 + DIM <= 64;
  require rs2 >= 0 && rs2 + DIM <= 64;
  cost DIM;
  set $preload = 0;
  %A8 : s8[DIM, DIM] = read sp[rs1, 0];
  if ($dataflow == 0) {
    %B8 : s8[DIM, DIM] = read sp[rs2, 0];
    %D8 : s8[DIM, DIM] = read sp[$rs1, 0];
  } else {
    %B8 : s8[DIM, DIM] = read sp[$rs1, 0];
    %D8 : s8[DIM, DIM] = read sp[rs2, 0];
  }
  %A = s32[DIM, DIM] convert(%A8);
  %B = s32[DIM, DIM] convert(%B8);
  %D = s32[DIM, DIM] convert(%D8);
  %dot = s32[DIM, DIM] dot(%A, %B), lhs_contracting_dims={1}, rhs_contracting_dims={0};
  %C = s32[DIM, DIM] add(%dot, %D);
  %lo = s32[] constant(-128);
  %hi = s32[] constant(127);
  %Cc = s32[DIM, DIM] clamp(%lo, %C, %hi);
  %C8 = s8[DIM, DIM] convert(%Cc);
  write bias[0, 0] = %C;
  write sp[$rs2, 0] = %C8;
}

macro matmul_os(; a, b, d, c) {
  config(0);
  preload(rs1 = d, rs2 = c);
  compute(rs1 = a, rs2 = b);
}

macro matmul_ws(; a, b, d, c) {
  config(1);
  preload(rs1 = b, rs2 = c);
  compute(rs1 = a, rs2 = d);
}

macro unprotocoled(; a, b) {
  compute(a, b);
}
)";

const Semantics& macroSem(const Isa& isa, const std::string& name) {
  return isa.macro_semantics[static_cast<size_t>(isa.findMacro(name))];
}
const Semantics& instSem(const Isa& isa, const std::string& name) {
  return isa.instruction_semantics[static_cast<size_t>(isa.findInstruction(name))];
}

std::string starts(const SymSlice& s) {
  std::string out;
  for (const Expr& e : s.starts)
    out += (out.empty() ? "" : ",") + exprText(e);
  return out;
}

TEST(Symbolic, PreloadComputeProtocolComposesToTheRegisterFreeFormula) {
  Isa isa = load(kArray);
  const Semantics& os = macroSem(isa, "matmul_os");
  ASSERT_TRUE(os.selectable) << os.reason;
  ASSERT_EQ(os.cases.size(), 1u);
  const SymCase& c = os.cases[0];
  ASSERT_EQ(c.inputs.size(), 3u);
  EXPECT_EQ(starts(c.inputs[0]), "a");
  EXPECT_EQ(starts(c.inputs[1]), "b");
  EXPECT_EQ(starts(c.inputs[2]), "d");
  for (const SymSlice& in : c.inputs) {
    EXPECT_EQ(in.buffer, isa.findBuffer("sp"));
    ASSERT_EQ(in.affine.size(), 1u);
    ASSERT_EQ(in.affine[0].terms.size(), 1u);
    EXPECT_EQ(in.affine[0].terms[0].var.kind, RefKind::kBeta);
    EXPECT_EQ(in.affine[0].terms[0].coeff, Poly::constant(1));
    EXPECT_EQ(exprText(in.extents[0]), "4");
  }
  ASSERT_EQ(c.outputs.size(), 2u);
  EXPECT_EQ(c.outputs[0].buffer, isa.findBuffer("bias"));
  EXPECT_TRUE(c.outputs[0].state);
  EXPECT_TRUE(c.outputs[0].starts.empty());
  EXPECT_EQ(starts(c.outputs[1]), "c");
  EXPECT_FALSE(c.outputs[1].state);
  EXPECT_EQ(exprText(c.cost), "9");  // config 1 + preload 4 + compute 4
  // Only the compute's address constraints remain: `$preload == 1` and the dataflow test were
  // decided by the values the macro itself set.
  std::vector<std::string> constraints;
  for (const Expr& e : c.constraints)
    constraints.push_back(exprText(e));
  EXPECT_EQ(constraints,
            (std::vector<std::string>{"a >= 0", "a + 4 <= 64", "b >= 0", "b + 4 <= 64"}));
  // Weight stationary reads B through the preload and D directly: the same formula.
  const Semantics& ws = macroSem(isa, "matmul_ws");
  ASSERT_TRUE(ws.selectable) << ws.reason;
  std::string os_text = semanticsText(isa, os);
  std::string ws_text = semanticsText(isa, ws);
  EXPECT_EQ(os_text.substr(os_text.find("%0")), ws_text.substr(ws_text.find("%0")));
}

TEST(Symbolic, ComposedFormulaComputesSat8OfAxBPlusD) {
  Isa isa = load(kArray);
  const SymCase& c = macroSem(isa, "matmul_os").cases[0];
  std::unique_ptr<hlo::HloModule> m = instantiate(isa, c, std::vector<int64_t>{});
  hlo::verifyModule(*m);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(-128, 127);
  std::vector<hlo::Literal> args;
  int8_t data[3][4][4];
  for (int k = 0; k < 3; ++k) {
    hlo::Literal lit(hlo::Shape(hlo::PrimitiveType::kS8, {4, 4}));
    for (int i = 0; i < 16; ++i) {
      data[k][i / 4][i % 4] = static_cast<int8_t>(dist(rng));
      lit.setInt64(i, data[k][i / 4][i % 4]);
    }
    args.push_back(std::move(lit));
  }
  hlo::Literal out = hlo::evaluate(*m, args);
  ASSERT_EQ(out.elements().size(), 2u);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) {
      int32_t acc = data[2][i][j];
      for (int k = 0; k < 4; ++k)
        acc += data[0][i][k] * data[1][k][j];
      EXPECT_EQ(out.elements()[0].getInt64(i * 4 + j), acc);
      EXPECT_EQ(out.elements()[1].getInt64(i * 4 + j), std::clamp(acc, -128, 127));
    }
  }
}

TEST(Symbolic, UnsetRegistersMakeAUnitNotSelectable) {
  Isa isa = load(kArray);
  const Semantics& m = macroSem(isa, "unprotocoled");
  EXPECT_FALSE(m.selectable);
  EXPECT_EQ(m.reason,
            "call 1 (compute): require `$preload == 1` reads register $preload, which is not set "
            "before it (machine state) (at t.taidl:23:3)");
  EXPECT_EQ(m.reason_loc.line, 23u);
  EXPECT_TRUE(m.cases.empty());
  EXPECT_FALSE(instSem(isa, "compute").selectable);
  EXPECT_EQ(instSem(isa, "config").reason,
            "instruction config writes no buffer (it only changes registers)");
}

const char* kUnits = R"(isa u;
buffer b[16] of s32[4];
buffer d1[16] of bf16[64];
buffer out[16] of s32[4];
reg $x = 0;

instruction load(n; src, dst) {
  require n >= 1 && n <= 4 && src >= 0 && dst >= 0 && dst + n <= 16;
  reads d0[src] size [n * 128];
  writes d1[dst] size [n];
  %a = u8[n, 64, 2] reshape(%In1);
  %Out0 = bf16[n, 64] bitcast-convert(%a);
}

instruction twice(n; a, c) {
  require n >= 1 && n <= 4 && a >= 0 && a + n <= 16 && c >= 0 && c + n <= 16;
  reads d1[a] size [n];
  writes d1[c] size [n];
  %Out0 = bf16[n, 64] add(%In1, %In1);
}

instruction modes(mode; a, c) {
  require mode == 0 || mode == 1;
  require a >= 0 && a + 1 <= 16 && c >= 0 && c + 1 <= 16;
  %v : s32[1, 4] = read b[a, 0];
  if (mode == 0) {
    %w = s32[1, 4] negate(%v);
  } else {
    %w = s32[1, 4] abs(%v);
  }
  write b[c, 0] = %w;
}

instruction fixed(mode; a, c) {
  require mode == 1;
  require a >= 0 && a + 1 <= 16 && c >= 0 && c + 1 <= 16;
  %v : s32[1, 4] = read b[a, 0];
  if (mode != 1) {
    %w = s32[1, 4] negate(%v);
  } else {
    %w = s32[1, 4] abs(%v);
  }
  write b[c, 0] = %w;
}

instruction lanes(; a) {
  require a >= 0 && a + 1 <= 16;
  %v : s32[1, 2] = read b[a, 1];
  write b[a, 1] = %v;
}

instruction square(; a) {
  require a >= 0 && a * a + 1 <= 16;
  reads b[a * a] size [1];
  writes b[0] size [1];
  %Out0 = s32[1, 4] copy(%In1);
}

instruction unrolled(; a, c) {
  require a >= 0 && a + 2 <= 16 && c >= 0 && c + 2 <= 16;
  repeat i in [0, 2) {
    %v : s32[1, 4] = read b[a + i, 0];
    write out[c + i, 0] = %v;
  }
}

instruction counted(n; a) {
  require n >= 1 && n <= 3 && a >= 0 && a + 3 <= 16;
  repeat i in [0, n) {
    %v : s32[1, 4] = read b[a + i, 0];
    write b[a + i, 0] = %v;
  }
}

instruction regif(; a) {
  require a >= 0 && a + 1 <= 16;
  %v : s32[1, 4] = read b[a, 0];
  if ($x == 0) {
    write b[a, 0] = %v;
  }
}

instruction setx(; v) {
  set $x = v;
}

instruction counter(; a) {
  require a >= 0 && a + 1 <= 16;
  set $x = $x + 1;
  %v : s32[1, 4] = read b[a, 0];
  %w = s32[1, 4] negate(%v);
  write b[a, 0] = %w;
}

macro load_twice(; src, t, u) {
  load(4, src, t);
  twice(4, t, u);
}

macro on_address(; v, a) {
  setx(v);
  regif(a);
}
)";

TEST(Symbolic, AlphaConditionsSplitIntoCases) {
  Isa isa = load(kUnits);
  const Semantics& s = instSem(isa, "modes");
  ASSERT_TRUE(s.selectable) << s.reason;
  ASSERT_EQ(s.cases.size(), 2u);
  ASSERT_EQ(s.cases[0].path.size(), 1u);
  EXPECT_EQ(exprText(s.cases[0].path[0]), "mode == 0");
  EXPECT_EQ(exprText(s.cases[1].path[0]), "mode != 0");
  EXPECT_EQ(s.cases[0].ops.back().opcode, hlo::HloOpcode::kNegate);
  EXPECT_EQ(s.cases[1].ops.back().opcode, hlo::HloOpcode::kAbs);
  EXPECT_EQ(isa.instruction_ranges[static_cast<size_t>(isa.findInstruction("modes"))][0].range,
            (Interval{0, 1}));
}

TEST(Symbolic, InfeasibleCasesArePruned) {
  Isa isa = load(kUnits);
  const Semantics& s = instSem(isa, "fixed");
  ASSERT_TRUE(s.selectable) << s.reason;
  ASSERT_EQ(s.cases.size(), 1u);
  EXPECT_EQ(exprText(s.cases[0].path[0]), "mode == 1");
  EXPECT_EQ(s.cases[0].ops.back().opcode, hlo::HloOpcode::kAbs);
}

TEST(Symbolic, ReadsOfSlicesWrittenEarlierReceiveTheWrittenValue) {
  Isa isa = load(kUnits);
  const Semantics& s = macroSem(isa, "load_twice");
  ASSERT_TRUE(s.selectable) << s.reason;
  const SymCase& c = s.cases[0];
  ASSERT_EQ(c.inputs.size(), 1u);  // only the HBM bytes: twice's read of d1[t] is forwarded
  EXPECT_EQ(c.inputs[0].buffer, 0);
  EXPECT_EQ(exprText(c.inputs[0].extents[0]), "512");
  ASSERT_EQ(c.outputs.size(), 2u);
  EXPECT_EQ(starts(c.outputs[0]), "t");
  EXPECT_EQ(starts(c.outputs[1]), "u");
  // Evaluate: the second output is the first doubled.
  std::unique_ptr<hlo::HloModule> m = instantiate(isa, c, std::vector<int64_t>{});
  hlo::Literal bytes(hlo::Shape(hlo::PrimitiveType::kU8, {512}));
  for (int i = 0; i < 512; i += 2) {
    bytes.setInt64(i, 0);
    bytes.setInt64(i + 1, 0x3f);  // bf16 0x3f00 = 0.5
  }
  hlo::Literal out = hlo::evaluate(*m, std::vector<hlo::Literal>{bytes});
  EXPECT_EQ(out.elements()[0].getDouble(0), 0.5);
  EXPECT_EQ(out.elements()[1].getDouble(255), 1.0);
}

TEST(Symbolic, ReasonsForNotSelectable) {
  Isa isa = load(kUnits);
  EXPECT_NE(instSem(isa, "lanes").reason.find("reads part of a unit of b (dimension 1: start `1`"),
            std::string::npos)
      << instSem(isa, "lanes").reason;
  EXPECT_NE(instSem(isa, "square").reason.find("the address `a * a` of b is not affine"),
            std::string::npos)
      << instSem(isa, "square").reason;
  EXPECT_NE(instSem(isa, "regif").reason.find("if condition `$x == 0` reads register $x"),
            std::string::npos)
      << instSem(isa, "regif").reason;
  EXPECT_NE(
      macroSem(isa, "on_address")
          .reason.find("call 2 (regif): if condition `v == 0` depends on an addressing attribute"),
      std::string::npos)
      << macroSem(isa, "on_address").reason;
}

TEST(Symbolic, AWrittenSliceIsReportedAtTheCallThatWroteIt) {
  // The macro's written slices are checked after its last call; the reason names the call that
  // wrote the slice (found by the taidl parser's fuzz target: the index past the last call was
  // used to name it).
  std::string spec = kArray;
  spec +=
      "macro nonaffine_out(; a, b, d, c) {\n  config(0);\n  preload(rs1 = d, rs2 = c * c);\n"
      "  compute(rs1 = a, rs2 = b);\n}\n";
  Isa isa = load(spec);
  const std::string& reason = macroSem(isa, "nonaffine_out").reason;
  EXPECT_NE(reason.find("call 3 (compute): the address `c * c` of sp is not affine"),
            std::string::npos)
      << reason;
}

TEST(Symbolic, RepeatsWithConstantBoundsUnroll) {
  Isa isa = load(kUnits);
  const Semantics& s = instSem(isa, "unrolled");
  ASSERT_TRUE(s.selectable) << s.reason;
  const SymCase& c = s.cases[0];
  ASSERT_EQ(c.inputs.size(), 2u);
  EXPECT_EQ(starts(c.inputs[0]), "a");
  EXPECT_EQ(starts(c.inputs[1]), "a + 1");
  ASSERT_EQ(c.outputs.size(), 2u);
  EXPECT_EQ(starts(c.outputs[1]), "c + 1");
  ASSERT_EQ(c.inputs[1].affine.size(), 1u);
  EXPECT_EQ(c.inputs[1].affine[0].constant, Poly::constant(1));
}

TEST(Symbolic, RegisterUpdatesDoNotHideTheDataSemantics) {
  Isa isa = load(kUnits);
  const Semantics& s = instSem(isa, "counter");
  ASSERT_TRUE(s.selectable) << s.reason;
  EXPECT_EQ(s.cases[0].ops.size(), 2u);
}

TEST(Symbolic, InstantiationChecksTypes) {
  Isa isa = load(kUnits);
  const SymCase& c = instSem(isa, "load").cases[0];
  std::unique_ptr<hlo::HloModule> m = instantiate(isa, c, std::vector<int64_t>{2});
  EXPECT_EQ(m->entry()->parameter(0)->shape().shortStr(), "u8[256]");
  EXPECT_THROW(instantiate(isa, c, std::vector<int64_t>{-1}), DiagnosticError);
}

TEST(Symbolic, ALoopOverComputationalBoundsIsSelectedWithOneTrip) {
  Isa isa = load(kUnits);
  const Semantics& s = instSem(isa, "counted");
  ASSERT_TRUE(s.selectable) << s.reason;
  ASSERT_EQ(s.cases.size(), 1u);
  const std::string text = semanticsText(isa, s);
  EXPECT_NE(text.find("n == 1"), std::string::npos) << text;
  EXPECT_EQ(s.cases[0].outputs.size(), 1u);
}

constexpr const char* kWords = R"(isa words;
buffer uop[8] of u32[];
buffer acc[16] of s32[1, 4];
instruction move(u; ) {
  require u >= 0 && u < 8;
  let w = uop[u];
  %x : s32[1, 1, 4] = read acc[w % 16, 0, 0];
  write acc[w // 16 % 16, 0, 0] = %x;
}
instruction doubled(u; ) {
  require u >= 0 && u < 8;
  let w = uop[u];
  %x : s32[1, 1, 4] = read acc[(w + 1) % 16, 0, 0];
  write acc[0, 0, 0] = %x;
}
instruction overlapping(u; ) {
  require u >= 0 && u < 8;
  let w = uop[u];
  %x : s32[1, 1, 4] = read acc[w % 32 // 2 % 16, 0, 0];
  %y : s32[1, 1, 4] = read acc[w % 32 % 16, 0, 0];
  write acc[w // 16 % 16, 0, 0] = %y;
}
instruction looped(u; ) {
  require u >= 0 && u < 8;
  let w = uop[u];
  repeat i in [0, w) {
    %x : s32[1, 1, 4] = read acc[i, 0, 0];
    write acc[i, 0, 0] = %x;
  }
}
)";

TEST(Symbolic, ALetsWordIsBitFieldsThatAreAddressingAttributes) {
  Isa isa = load(kWords);
  const Semantics& s = instSem(isa, "move");
  ASSERT_TRUE(s.selectable) << s.reason;
  ASSERT_EQ(s.let_fields.size(), 2u);
  // Slots past the unit's one attribute: word % 16 (the read), word // 16 % 16 (the write).
  EXPECT_EQ(s.let_fields[0].slot, 1);
  EXPECT_EQ(s.let_fields[0].divisor, 1);
  EXPECT_EQ(s.let_fields[0].modulus, 16);
  EXPECT_EQ(s.let_fields[1].slot, 2);
  EXPECT_EQ(s.let_fields[1].divisor, 16);
  EXPECT_EQ(s.let_fields[1].modulus, 16);
  ASSERT_EQ(s.cases.size(), 1u);
  const SymCase& c = s.cases[0];
  ASSERT_EQ(c.lets.size(), 1u);
  EXPECT_EQ(c.lets[0].fields, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(exprText(c.lets[0].starts[0]), "u");
  // The slices are addressed by the fields, affinely.
  ASSERT_EQ(c.inputs.size(), 1u);
  EXPECT_TRUE(c.inputs[0].starts[0].usesSlot(RefKind::kBeta, 1));
  EXPECT_TRUE(c.outputs[0].starts[0].usesSlot(RefKind::kBeta, 2));
  // Each field within its modulus is a constraint of the case.
  const std::string text = semanticsText(isa, s);
  EXPECT_NE(text.find("w//16%16 < 16"), std::string::npos) << text;
}

TEST(Symbolic, ALetWordUsedOtherThanAsFieldsIsNotSelectable) {
  Isa isa = load(kWords);
  EXPECT_NE(instSem(isa, "doubled").reason.find("other than as bit fields"), std::string::npos)
      << instSem(isa, "doubled").reason;
  EXPECT_NE(instSem(isa, "overlapping").reason.find("other than as bit fields"), std::string::npos)
      << instSem(isa, "overlapping").reason;
  EXPECT_NE(instSem(isa, "looped").reason.find("depend on data"), std::string::npos)
      << instSem(isa, "looped").reason;
}

}  // namespace
}  // namespace tacit::taidl
