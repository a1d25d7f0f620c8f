// Verifier diagnostics: structural mistakes the parser lets through, each reported at the
// offending instruction with file:line:col.
#include "hlo/verifier.h"

#include <gtest/gtest.h>

#include "hlo/builder.h"
#include "test_util.h"

namespace tacit::hlo {
namespace {

#define W(body) "HloModule m\nENTRY e {\n" body "\n}\n"
constexpr const char* kAdd =
    "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] "
    "add(a, b)\n}\n";

TEST(HloVerifier, AcceptsValidModules) {
  EXPECT_NO_THROW(
      verifyModule(*testing::parse(W("  x = f32[2] parameter(0)\n  ROOT y = f32[2] add(x, x)"))));
}

TEST(HloVerifier, DeclaredShapeMustMatchInference) {
  EXPECT_DIAG(W("  x = f32[2] parameter(0)\n  ROOT y = f32[3] add(x, x)"), true, 4, 8,
              "instruction 'y': declared shape f32[3] does not match the inferred shape f32[2]");
  EXPECT_DIAG(W("  x = f32[2,3] parameter(0)\n  ROOT y = f32[2,3] transpose(x), dimensions={1,0}"),
              true, 4, 8, "does not match the inferred shape f32[3,2]");
  EXPECT_DIAG(
      W("  x = f32[8,64] parameter(0)\n  y = f32[32,4] parameter(1)\n  ROOT d = f32[8,4] dot(x, "
        "y), lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      true, 5, 8,
      "dot: lhs contracting dimension 1 has size 64 but rhs contracting dimension 0 has size 32");
  EXPECT_DIAG(W("  x = f32[2,3] parameter(0)\n  ROOT y = f32[7] reshape(x)"), true, 4, 8,
              "reshape: operand f32[2,3] has 6 elements but result f32[7] has 7");
}

TEST(HloVerifier, LayoutsAreIgnoredInShapeChecks) {
  EXPECT_NO_THROW(verifyModule(
      *testing::parse(W("  x = f32[2,3]{0,1} parameter(0)\n  ROOT y = f32[2,3]{1,0} negate(x)"))));
}

TEST(HloVerifier, ParameterNumbering) {
  EXPECT_DIAG(W("  x = f32[] parameter(0)\n  y = f32[] parameter(0)\n  ROOT z = f32[] add(x, y)"),
              true, 4, 3, "parameter number 0 is already used by 'x'");
  EXPECT_DIAG(W("  x = f32[] parameter(0)\n  y = f32[] parameter(2)\n  ROOT z = f32[] add(x, y)"),
              true, 2, 7, "computation 'e' has no parameter(1)");
}

TEST(HloVerifier, BroadcastNeedsDimensionsForNonScalars) {
  EXPECT_DIAG(W("  x = f32[3] parameter(0)\n  ROOT y = f32[2,3] broadcast(x)"), true, 4, 8,
              "broadcast of the non-scalar f32[3] needs dimensions={...}");
}

TEST(HloVerifier, ReducerSignatures) {
  std::string wrong_arity =
      std::string(kAdd) +
      "ENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = (f32[], f32[]) reduce(x, x, z, z), dimensions={0}, to_apply=add\n}\n";
  EXPECT_DIAG(wrong_arity, true, 10, 8,
              "reduce: to_apply computation 'add' takes 2 parameters but needs 4");
  std::string wrong_type = std::string(kAdd) +
                           "ENTRY e {\n  x = s32[4] parameter(0)\n  z = s32[] constant(0)\n"
                           "  ROOT r = s32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n";
  EXPECT_DIAG(wrong_type, true, 10, 8,
              "to_apply computation 'add' parameter 0 is f32[] but must be s32[]");
  std::string scatter =
      std::string(kAdd) +
      "ENTRY e {\n  x = s32[4] parameter(0)\n  i = s32[1,1] parameter(1)\n  u = s32[1] "
      "parameter(2)\n"
      "  ROOT s = s32[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n";
  EXPECT_DIAG(scatter, true, 11, 8,
              "to_apply computation 'add' parameter 0 is f32[] but must be s32[]");
  std::string all_reduce =
      std::string(kAdd) +
      "ENTRY e {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] all-reduce(x), to_apply=add\n}\n";
  EXPECT_NO_THROW(verifyModule(*testing::parse(all_reduce)));
}

TEST(HloVerifier, WhileAndConditionalSignatures) {
  std::string text =
      "HloModule m\ncond {\n  p = f32[] parameter(0)\n  ROOT c = f32[] negate(p)\n}\n"
      "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT w = f32[] while(x), condition=cond, "
      "body=cond\n}\n";
  EXPECT_DIAG(text, true, 8, 8,
              "while: condition computation 'cond' must return pred[], got f32[]");
  std::string cond =
      "HloModule m\nb {\n  p = s32[] parameter(0)\n  ROOT c = s32[] negate(p)\n}\n"
      "ENTRY e {\n  i = pred[] parameter(0)\n  x = f32[] parameter(1)\n"
      "  ROOT c = s32[] conditional(i, x, x), true_computation=b, false_computation=b\n}\n";
  EXPECT_DIAG(
      cond, true, 9, 8,
      "conditional: branch 0 computation 'b' parameter 0 is s32[] but the operand is f32[]");
}

TEST(HloVerifier, EntryLayoutMustMatchSignature) {
  EXPECT_DIAG(
      "HloModule m, entry_computation_layout={(f32[2]{0})->f32[3]{0}}\nENTRY e {\n  ROOT x = "
      "f32[2] parameter(0)\n}\n",
      true, 2, 7, "entry_computation_layout result is f32[3] but the entry returns f32[2]");
  EXPECT_DIAG(
      "HloModule m, entry_computation_layout={()->f32[2]{0}}\nENTRY e {\n  ROOT x = f32[2] "
      "parameter(0)\n}\n",
      true, 2, 7,
      "entry_computation_layout lists 0 parameters but the entry computation 'e' has 1");
}

TEST(HloVerifier, UnknownOpcodesAndAsyncSugar) {
  EXPECT_DIAG(W("  x = f32[2] parameter(0)\n  ROOT y = f32[2] frobnicate(x)"), true, 4, 8,
              "unknown opcode 'frobnicate'");
  Diagnostic d = testing::diagnosticOf(
      W("  x = f32[2] parameter(0)\n  ROOT y = f32[2] custom-call-start(x)"), true);
  EXPECT_NE(d.hint.find("async"), std::string::npos);
}

TEST(HloVerifier, DynamicShapesAreRejectedElidedConstantsAccepted) {
  EXPECT_DIAG(W("  ROOT x = f32[<=4] parameter(0)"), true, 3, 8,
              "the result has the dynamic shape f32[<=4]; tacit does not support dynamic shapes");
  EXPECT_NO_THROW(verifyModule(*testing::parse(W("  ROOT c = f32[64,64] constant({...})"))));
}

TEST(HloVerifier, OperandCountsAndRequiredAttributes) {
  HloModule m("m");
  HloBuilder b("e");
  HloInstruction* x = b.parameter(0, Shape(PrimitiveType::kF32, {2, 3}));
  b.addTo(m, true);
  HloComputation* e = m.entry();
  auto t = std::make_unique<HloInstruction>(HloOpcode::kTranspose, "t",
                                            Shape(PrimitiveType::kF32, {3, 2}));
  t->addOperand(x);
  t->setLoc({7, 3});
  m.setSourceFile("built.hlo");
  e->setRoot(e->addInstruction(std::move(t)));
  try {
    verifyModule(m);
    FAIL();
  } catch (const DiagnosticError& err) {
    EXPECT_EQ(
        err.diagnostic().str(),
        "built.hlo:7:3: error: instruction 't': 'transpose' requires the attribute 'dimensions'");
  }
  auto n =
      std::make_unique<HloInstruction>(HloOpcode::kNegate, "n", Shape(PrimitiveType::kF32, {2, 3}));
  n->addOperand(x);
  n->addOperand(x);
  HloModule m2("m2");
  HloBuilder b2("e");
  HloInstruction* y = b2.parameter(0, Shape(PrimitiveType::kF32, {2, 3}));
  HloComputation* e2 = b2.addTo(m2, true);
  auto neg = std::make_unique<HloInstruction>(HloOpcode::kNegate, "n", y->shape());
  neg->addOperand(y);
  neg->addOperand(y);
  e2->setRoot(e2->addInstruction(std::move(neg)));
  EXPECT_THROW(verifyModule(m2), DiagnosticError);
  try {
    verifyModule(m2);
  } catch (const DiagnosticError& err) {
    EXPECT_NE(err.diagnostic().message.find("'negate' takes 1 operands, got 2"), std::string::npos);
  }
}

TEST(HloVerifier, TypedAttributeOnWrongOpcode) {
  HloModule m("m");
  HloBuilder b("e");
  HloInstruction* x = b.parameter(0, Shape(PrimitiveType::kF32, {2}));
  HloInstruction* y = b.unary(HloOpcode::kNegate, x);
  y->attrs().dimensions = std::vector<int64_t>{0};
  b.addTo(m, true);
  try {
    verifyModule(m);
    FAIL();
  } catch (const DiagnosticError& err) {
    EXPECT_NE(err.diagnostic().message.find("attribute 'dimensions' is not valid for 'negate'"),
              std::string::npos);
  }
}

TEST(HloVerifier, OperandOrderAndCallees) {
  HloModule m("m");
  HloBuilder b("e");
  HloInstruction* x = b.parameter(0, Shape(PrimitiveType::kF32, {}));
  HloInstruction* y = b.unary(HloOpcode::kNegate, x);
  b.addTo(m, true);
  y->setOperand(0, y);  // self-use
  try {
    verifyModule(m);
    FAIL();
  } catch (const DiagnosticError& err) {
    EXPECT_NE(err.diagnostic().message.find("operand 'negate' must be defined before its use"),
              std::string::npos);
  }
  // A callee defined after its caller.
  HloModule m2("m2");
  HloBuilder c("e");
  HloInstruction* p = c.parameter(0, Shape(PrimitiveType::kF32, {}));
  HloComputation* caller = c.addTo(m2, true);
  HloBuilder callee("later");
  callee.unary(HloOpcode::kAbs, callee.parameter(0, Shape(PrimitiveType::kF32, {})));
  HloComputation* later = callee.addTo(m2);
  auto call =
      std::make_unique<HloInstruction>(HloOpcode::kCall, "call", Shape(PrimitiveType::kF32, {}));
  call->addOperand(p);
  call->attrs().called.push_back({"to_apply", {later}, false});
  caller->setRoot(caller->addInstruction(std::move(call)));
  try {
    verifyModule(m2);
    FAIL();
  } catch (const DiagnosticError& err) {
    EXPECT_NE(
        err.diagnostic().message.find("to_apply computation 'later' must be defined before 'e'"),
        std::string::npos);
  }
}

}  // namespace
}  // namespace tacit::hlo
