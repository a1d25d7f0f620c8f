// The three readers of the opcode table's elementwise categories agree: the evaluator's kernels
// implement only opcodes of those categories, and .taidl admits exactly the ones the evaluator
// implements, plus copy (which the evaluator runs as a movement).
#include <gtest/gtest.h>

#include <string>

#include "hlo/opcode.h"
#include "hlo_eval/kernels/elementwise.h"
#include "test_util.h"

namespace tacit::taidl {
namespace {

using hlo::HloOpcode;

// Whether .taidl accepts `op` as an operation (a type error is still an accepted opcode).
bool taidlAdmits(HloOpcode op) {
  std::string operands = hlo::opcodeArity(op) == 1 ? "%x" : "%x, %x";
  std::string spec = R"(isa t;
buffer b[64] of f32[4];
instruction i(; a) {
  require a >= 0 && a + 1 <= 64;
  %x : f32[1, 4] = read b[a, 0];
  %y = f32[1, 4] )" + std::string(hlo::opcodeName(op)) +
                     "(" + operands + R"();
  write b[a, 0] = %y;
}
)";
  try {
    loadIsa(spec, "t.taidl", {});
  } catch (const DiagnosticError& e) {
    return e.diagnostic().message.find("is not supported in .taidl") == std::string::npos;
  }
  return true;
}

TEST(OpcodeTable, EvaluatorKernelsAndTaidlAgreeWithTheTable) {
  int unary = 0, binary = 0;
  for (size_t i = 0; i + 1 < hlo::kOpcodeCount; ++i) {
    auto op = static_cast<HloOpcode>(i);
    std::string name(hlo::opcodeName(op));
    bool kernel_unary = hlo::kernels::isUnaryElementwise(op);
    bool kernel_binary = hlo::kernels::isBinaryElementwise(op);
    EXPECT_TRUE(!kernel_unary || hlo::isElementwiseUnary(op)) << name;
    EXPECT_TRUE(!kernel_binary || hlo::isElementwiseBinary(op)) << name;
    unary += kernel_unary;
    binary += kernel_binary;
    if (!hlo::isElementwiseUnary(op) && !hlo::isElementwiseBinary(op)) continue;
    EXPECT_EQ(taidlAdmits(op), kernel_unary || kernel_binary || op == HloOpcode::kCopy) << name;
  }
  // docs/taidl.md section 4.5 lists them: 23 unary besides copy, 15 binary.
  EXPECT_EQ(unary, 23);
  EXPECT_EQ(binary, 15);
}

}  // namespace
}  // namespace tacit::taidl
