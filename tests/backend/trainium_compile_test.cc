// The backend on isa/trainium.taidl (issue 21), with no Trainium-specific code in src/: the bf16
// GEMM + bias + ReLU with fp32 PSUM accumulation, its 512-deep form with the accumulate flag, an
// elementwise addition and a row reduction compile to the programs an NKI kernel writes and verify
// bit for bit on the oracle. What does not compile is recorded in docs/isa.md.
#include <gtest/gtest.h>

#include <chrono>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <string>

#include "backend/compiler.h"
#include "backend/verify.h"
#include "common/paths.h"
#include "common/slowdown.h"
#include "hlo/parser.h"
#include "oracle/tasm.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace tacit::backend {
namespace {

struct Compiled {
  taidl::Isa isa;
  std::unique_ptr<hlo::HloModule> kernel;
  CompileResult result;
  std::string text;  // the program as .tasm
};

Compiled compileExample(const std::string& name) {
  Compiled c;
  c.isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/trainium.taidl");
  const std::string file = testing::sourceDir() + "/examples/trainium/" + name + ".hlo";
  c.kernel = hlo::parseModule(readFile(file), file);
  CompileOptions options;
  options.time_limit = std::chrono::seconds(10) * testing::kSlowdown;
  c.result = compile(c.isa, *c.kernel, options);
  c.text = oracle::printProgram(c.isa, c.result.program);
  return c;
}

// How many calls of each instruction the program makes (the programs here have no loops).
std::map<std::string, int> calls(const Compiled& c) {
  std::map<std::string, int> out;
  for (const oracle::Stmt& s : c.result.program.body) {
    EXPECT_EQ(s.kind, oracle::StmtKind::kCall);
    ++out[c.isa.instructions[static_cast<size_t>(s.unit)].name.text];
  }
  return out;
}

void expectVerifies(const Compiled& c, uint64_t seed) {
  VerifyReport r = verify(c.isa, *c.kernel, c.result.program, {.sets = 3, .seed = seed});
  EXPECT_TRUE(r.ok) << r.mismatch << "\n" << c.text;
}

// Loads of At, B and the bias, one nc_matmul into PSUM, the epilogue as one activation reading
// PSUM (relu, bias vector, scale 1.0, bf16 out), one store: what the NKI GEMM tutorial writes.
TEST(TrainiumCompile, Bf16GemmBiasReluIsOneMatmulAndOneActivation) {
  Compiled c = compileExample("gemm_bias_relu_128x128x128");
  EXPECT_EQ(
      calls(c),
      (std::map<std::string, int>{
          {"dma_copy_load", 3}, {"nc_matmul", 1}, {"activation_psum", 1}, {"dma_copy_store", 1}}))
      << c.text;
  EXPECT_NE(c.text.find("nc_matmul(dt=0, accumulate=0, k=128, m=128, n=128,"), std::string::npos)
      << c.text;
  EXPECT_NE(c.text.find("activation_psum(func=1, scale_vec=0, scale_hi=16256, scale_lo=0, bias=1, "
                        "out_dt=0, p=128, n=128,"),
            std::string::npos)
      << c.text;
  expectVerifies(c, 41);
}

// K = 512 as four 128-deep products summed in order: four nc_matmul into one PSUM tile, the
// first overwriting, the others with the accumulate flag; N = 512 fills one PSUM bank.
TEST(TrainiumCompile, DeepGemmAccumulatesInPsum) {
  Compiled c = compileExample("gemm_bias_relu_128x512x512");
  std::map<std::string, int> n = calls(c);
  EXPECT_EQ(n["nc_matmul"], 4) << c.text;
  EXPECT_EQ(n["activation_psum"], 1) << c.text;
  int accumulating = 0;
  for (size_t at = c.text.find("accumulate=1"); at != std::string::npos;
       at = c.text.find("accumulate=1", at + 1))
    ++accumulating;
  EXPECT_EQ(accumulating, 3) << c.text;
  expectVerifies(c, 43);
}

// The same GEMM with K = 1024 written as one dot: without --reassociate there is no program (and
// the diagnostic says why); with it, a loop of accumulating nc_matmul into one PSUM tile that
// computes the kernel summed in 128-deep blocks bit for bit, and the kernel itself up to rounding.
TEST(TrainiumCompile, OneDeepFloatDotSplitsItsSumOnlyWhenReassociationIsAllowed) {
  const taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/trainium.taidl");
  const std::string file =
      testing::sourceDir() + "/examples/trainium/gemm_bias_relu_128x1024x512.hlo";
  auto kernel = hlo::parseModule(readFile(file), file);
  CompileOptions options;
  options.time_limit = std::chrono::seconds(10) * testing::kSlowdown;
  try {
    compile(isa, *kernel, options);
    FAIL() << "a float contraction was split without --reassociate";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("--reassociate"), std::string::npos) << e.what();
  }
  options.reassociate = true;
  CompileResult r = compile(isa, *kernel, options);
  ASSERT_TRUE(r.schedule);
  EXPECT_EQ(r.schedule->contraction, 128);
  EXPECT_EQ(r.schedule->accumulator, "psum");
  ASSERT_TRUE(r.computes);
  const std::string text = oracle::printProgram(isa, r.program);
  // Eight 128-deep blocks: the first writes the PSUM tile, the seven others add to it (six middle
  // steps, a group of four buffered copies and two, then the last).
  size_t accumulating = 0;
  for (size_t at = text.find("accumulate=1"); at != std::string::npos;
       at = text.find("accumulate=1", at + 1))
    ++accumulating;
  EXPECT_EQ(accumulating, 7u) << text;
  VerifyReport exact =
      verify(isa, *r.computes, r.program, {.sets = 2, .seed = 47, .original = kernel.get()});
  EXPECT_TRUE(exact.ok) << exact.mismatch << "\n" << text;
  EXPECT_GT(exact.deviation, 0);              // the blocks' order rounds otherwise...
  EXPECT_LT(exact.relative_deviation, 0.05);  // ...by a few bf16 units in the last place
  EXPECT_FALSE(verify(isa, *kernel, r.program, {.sets = 1, .seed = 47}).ok);
}

TEST(TrainiumCompile, Bf16AddIsOneTensorTensor) {
  Compiled c = compileExample("add_bf16_128x64");
  EXPECT_EQ(calls(c), (std::map<std::string, int>{
                          {"dma_copy_load", 2}, {"tensor_tensor", 1}, {"dma_copy_store", 1}}))
      << c.text;
  expectVerifies(c, 45);
}

TEST(TrainiumCompile, RowSumIsOneTensorReduce) {
  Compiled c = compileExample("row_sum_128x256");
  EXPECT_EQ(calls(c), (std::map<std::string, int>{
                          {"dma_copy_load", 1}, {"tensor_reduce", 1}, {"dma_copy_store", 1}}))
      << c.text;
  expectVerifies(c, 47);
}

// Issue 21's proof that the backend learnt nothing about its two ISAs: no file under src/ names
// them ("trainium" anywhere; "nki" and "vta" as words of their own: "linking" or "ranking" are not
// names of either).
TEST(TrainiumCompile, NothingInSrcNamesTheIsa) {
  namespace fs = std::filesystem;
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(testing::sourceDir() + "/src")) {
    if (!e.is_regular_file()) continue;
    ++files;
    std::string text = readFile(e.path().string());
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    EXPECT_EQ(text.find("trainium"), std::string::npos) << e.path();
    for (const char* name : {"nki", "vta"}) {
      for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
        bool alone = (at == 0 || !is_word(text[at - 1])) &&
                     (at + 3 == text.size() || !is_word(text[at + 3]));
        EXPECT_FALSE(alone) << e.path() << " names " << name << " at byte " << at;
      }
    }
  }
  EXPECT_GT(files, 100);
}

}  // namespace
}  // namespace tacit::backend
