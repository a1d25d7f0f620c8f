// The shipped ISA specs (isa/*.taidl) load with the .taidl checker, Gemmini at the array sizes
// of the conformance data, and keep what the compiler and the oracle rely on: QKV's published
// instruction set, Gemmini's selectable preload+compute macros, AMX's instruction set.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/paths.h"
#include "support/diagnostic.h"
#include "taidl/isa.h"

namespace tacit::taidl {
namespace {

std::string isaPath(const std::string& name) {
  return testing::sourceDir() + "/isa/" + name;
}

std::vector<std::string> instructionNames(const Isa& isa) {
  std::vector<std::string> out;
  for (const Instruction& i : isa.instructions)
    out.push_back(i.name.text);
  return out;
}

// Loads a spec; a checker error fails the test with its diagnostic, warnings are returned.
std::vector<std::string> load(const std::string& name, const ParamOverrides& params, Isa& out) {
  DiagnosticSink sink;
  try {
    out = loadIsaFile(isaPath(name), params, &sink);
  } catch (const DiagnosticError& e) {
    ADD_FAILURE() << e.what();
  }
  std::vector<std::string> warnings;
  for (const Diagnostic& d : sink.all())
    warnings.push_back(d.str());
  return warnings;
}

TEST(ShippedSpecs, QkvKeepsThePublishedInstructionSetAllSelectable) {
  Isa isa;
  EXPECT_TRUE(load("qkv.taidl", {}, isa).empty());
  EXPECT_EQ(instructionNames(isa),
            (std::vector<std::string>{"load_rm", "load_cm", "store_rm", "store_cm", "mov", "gemm",
                                      "softmax"}));
  ASSERT_EQ(isa.instruction_semantics.size(), isa.instructions.size());
  for (size_t i = 0; i < isa.instructions.size(); ++i) {
    EXPECT_TRUE(isa.instruction_semantics[i].selectable)
        << isa.instructions[i].name.text << ": " << isa.instruction_semantics[i].reason;
  }
}

TEST(ShippedSpecs, QkvNewHasItsTenInstructions) {
  Isa isa;
  EXPECT_TRUE(load("qkv_new.taidl", {}, isa).empty());
  EXPECT_EQ(isa.instructions.size(), 10u);
  EXPECT_EQ(isa.buffers.size(), 4u);  // d0, d1, d2, d3
}

TEST(ShippedSpecs, AmxLoadsWithoutWarnings) {
  Isa isa;
  EXPECT_TRUE(load("amx.taidl", {}, isa).empty());
  std::vector<std::string> names = instructionNames(isa);
  for (const char* needed : {"tdpbusd", "mm512_fmadd", "mm512_cvt_i32", "mm512_xor", "tileloadd"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), needed), names.end()) << needed;
  }
  EXPECT_EQ(std::find(names.begin(), names.end(), "tdpbusd_repeat"), names.end());
}

TEST(ShippedSpecs, Tpuv1LoadsAndItsWeightFifoMacrosAreSelectableThroughTheProtocol) {
  Isa isa;
  std::vector<std::string> warnings = load("tpuv1.taidl", {}, isa);
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(isa.macro_semantics.size(), 3u);  // load_weights, matmul_weights, matmul_weights_acc
  for (size_t m = 0; m < isa.macros.size(); ++m) {
    const Semantics& s = isa.macro_semantics[m];
    EXPECT_TRUE(s.selectable) << isa.macros[m].name.text << ": " << s.reason;
    // The FIFO slot the macro writes is not an output (no selectable unit reads it).
    for (const SymCase& c : s.cases) {
      for (const SymSlice& out : c.outputs)
        EXPECT_NE(isa.buffers[static_cast<size_t>(out.buffer)].name.text, "fifo");
    }
  }
  // The FIFO instructions alone stay register-dependent (the oracle runs the exact protocol).
  int32_t read_weight = isa.findInstruction("read_weight");
  ASSERT_GE(read_weight, 0);
  EXPECT_FALSE(isa.instruction_semantics[static_cast<size_t>(read_weight)].selectable);
}

class GemminiDim : public ::testing::TestWithParam<int> {};

TEST_P(GemminiDim, LoadsAndEveryMacroIsSelectable) {
  Isa isa;
  std::vector<std::string> warnings = load("gemmini.taidl", {{"DIM", GetParam()}}, isa);
  ASSERT_EQ(warnings.size(), 1u);  // the unused rs2 the published kernels pass
  EXPECT_NE(warnings[0].find("rs2 of matmul32_compute_accumulated"), std::string::npos)
      << warnings[0];
  ASSERT_EQ(isa.macro_semantics.size(), 9u);
  for (size_t m = 0; m < isa.macros.size(); ++m) {
    EXPECT_TRUE(isa.macro_semantics[m].selectable)
        << isa.macros[m].name.text << ": " << isa.macro_semantics[m].reason;
  }
  // The preload/compute instructions themselves stay register-dependent (the oracle runs the
  // exact protocol); the macros are what the compiler selects.
  int32_t compute = isa.findInstruction("matmul8_compute_preloaded");
  ASSERT_GE(compute, 0);
  EXPECT_FALSE(isa.instruction_semantics[static_cast<size_t>(compute)].selectable);
}

INSTANTIATE_TEST_SUITE_P(ArraySizes, GemminiDim, ::testing::Values(16, 64, 256));

}  // namespace
}  // namespace tacit::taidl
