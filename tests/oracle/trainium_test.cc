// isa/trainium.taidl (issue 21), the AWS Trainium NKI subset, on the oracle:
//  * conformance: each hand-written program of examples/trainium equals the HLO evaluator on the
//    same computation (the .hlo next to it), bit for bit, on random inputs;
//  * limits: every documented limit of the spec is a `require`: a call at the limit runs, one
//    past it fails with a diagnostic naming the instruction and the constraint, and writes no
//    output.
// No NKI simulator or hardware is reachable, so conformance is against the documented semantics
// as the spec states them and the HLO evaluator (docs/isa.md, "Trainium (NKI subset)").
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/paths.h"
#include "hlo/parser.h"
#include "hlo_eval/evaluator.h"
#include "hlo_eval/random_literal.h"
#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "spec_checks.h"
#include "support/diagnostic.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::oracle {
namespace {

using hlo::Literal;

taidl::Isa loadTrainium(taidl::ParamOverrides params = {}) {
  return taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/trainium.taidl", params);
}

const taidl::Isa& trainium() {
  static const taidl::Isa isa = loadTrainium();
  return isa;
}

std::string example(const std::string& file) {
  return tacit::testing::sourceDir() + "/examples/trainium/" + file;
}

void expectProgramEqualsHlo(const std::string& name, int sets) {
  spec_checks::expectProgramEqualsHlo(trainium(), example(name), sets, 100);
}

// Conformance.

// nc_matmul with the accumulate flag: four 128-deep blocks summed into one PSUM bank, then
// relu(psum + bias) by activation_psum, in bf16 with fp32 accumulation.
TEST(Trainium, GemmWithPsumAccumulationAndBiasReluEqualsHlo) {
  expectProgramEqualsHlo("gemm_bias_relu_128x512x512", 3);
}

TEST(Trainium, TransposeThroughPsumEqualsHlo) {
  expectProgramEqualsHlo("transpose_128x96", 3);
}

// tensor_reduce add (HLO reduce's order) and max, and a DMA store that casts.
TEST(Trainium, RowReductionsEqualHlo) {
  expectProgramEqualsHlo("reduce_rows_128x256", 3);
}

// tensor_tensor, tensor_scalar (vector and immediate), activation from SBUF, dma_copy_sbuf.
TEST(Trainium, VectorAndScalarEngineInstructionsEqualHlo) {
  expectProgramEqualsHlo("vector_ops_64x100", 3);
}

// The accumulation order is the spec's: each nc_matmul sums its block from +0 and adds the sum
// to PSUM, so a 4-deep contraction in two 2-deep matmuls is (p0 + p1) + (p2 + p3), which is not
// the sequential ((p0 + p1) + p2) + p3 of one 4-deep dot when the products are 2^24, 1, 1, 1
// (2^24 + 2 against 2^24 in fp32).
TEST(Trainium, MatmulAccumulationAddsEachBlockSumToPsum) {
  const taidl::Isa& isa = trainium();
  Program p = parseProgram(isa, R"(kernel acc hbm=64 {
  input at @0 : f32[4,1];
  input b @16 : f32[4,1];
  output out @32 : f32[1,1];
  dma_copy_load(p=4, nbytes=4, pitch=4, hbm_addr=0, part=0, off=0);
  dma_copy_load(p=4, nbytes=4, pitch=4, hbm_addr=16, part=0, off=4);
  nc_matmul(dt=2, accumulate=0, k=2, m=1, n=1, s_part=0, s_off=0, mv_part=0, mv_off=4, o_part=0, o_off=0);
  nc_matmul(dt=2, accumulate=1, k=2, m=1, n=1, s_part=2, s_off=0, mv_part=2, mv_off=4, o_part=0, o_off=0);
  tensor_copy(dt=2, out_dt=2, p=1, n=1, i_part=0, i_off=0, o_part=0, o_off=8);
  dma_copy_store(dt=2, out_dt=2, p=1, n=1, pitch=4, hbm_addr=32, part=0, off=8);
})",
                           "acc.tasm");
  Literal at(hlo::Shape(hlo::PrimitiveType::kF32, {4, 1}));
  Literal b(hlo::Shape(hlo::PrimitiveType::kF32, {4, 1}));
  const double products[] = {16777216.0, 1.0, 1.0, 1.0};
  for (int64_t i = 0; i < 4; ++i) {
    at.setDouble(i, 1.0);
    b.setDouble(i, products[i]);
  }
  auto out = run(isa, p, {{"at", at}, {"b", b}});
  EXPECT_EQ(out.at("out").getDouble(0), 16777218.0);
  auto one_dot = hlo::parseModule(R"(HloModule one_dot
ENTRY main {
  at = f32[4,1] parameter(0)
  b = f32[4,1] parameter(1)
  ROOT d = f32[1,1] dot(at, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
})",
                                  "one_dot.hlo");
  EXPECT_EQ(hlo::evaluate(*one_dot, std::vector<Literal>{at, b}).getDouble(0), 16777216.0);
}

// Casts: dma_copy_store and tensor_copy convert between every pair of bf16, fp16 and fp32 through
// fp32, rounding to nearest even, and copy the bytes between equal types: HLO's convert to f32
// and then to the result type (the identity for equal types on the finite random inputs). The
// tensor_copy data reaches PSUM by nc_transpose, an exact movement.
TEST(Trainium, CastsGoThroughFp32AndRoundToNearestEven) {
  const taidl::Isa& isa = trainium();
  const char* types[] = {"bf16", "f16", "f32"};
  const int bytes[] = {2, 2, 4};
  for (int t = 0; t < 3; ++t) {
    for (int u = 0; u < 3; ++u) {
      SCOPED_TRACE(std::string(types[t]) + " -> " + types[u]);
      const std::string dt = std::to_string(t), out_dt = std::to_string(u);
      Program store = parseProgram(
          isa,
          "kernel store hbm=2048 {\n  input x @0 : " + std::string(types[t]) +
              "[8,16];\n  output y @1024 : " + types[u] + "[8,16];\n" +
              "  dma_copy_load(p=8, nbytes=" + std::to_string(16 * bytes[t]) +
              ", pitch=" + std::to_string(16 * bytes[t]) + ", hbm_addr=0, part=0, off=0);\n" +
              "  dma_copy_store(dt=" + dt + ", out_dt=" + out_dt + ", p=8, n=16, pitch=" +
              std::to_string(16 * bytes[u]) + ", hbm_addr=1024, part=0, off=0);\n}\n",
          "store.tasm");
      Program copy = parseProgram(
          isa,
          "kernel copy hbm=2048 {\n  input x @0 : " + std::string(types[t]) +
              "[16,8];\n  output y @1024 : " + types[u] + "[8,16];\n" +
              "  dma_copy_load(p=16, nbytes=" + std::to_string(8 * bytes[t]) +
              ", pitch=" + std::to_string(8 * bytes[t]) + ", hbm_addr=0, part=0, off=0);\n" +
              "  nc_transpose(dt=" + dt + ", p=16, f=8, i_part=0, i_off=0, o_part=0, o_off=0);\n" +
              "  tensor_copy(dt=" + dt + ", out_dt=" + out_dt +
              ", p=8, n=16, i_part=0, i_off=0, o_part=0, o_off=1024);\n" +
              "  dma_copy_store(dt=" + out_dt + ", out_dt=" + out_dt + ", p=8, n=16, pitch=" +
              std::to_string(16 * bytes[u]) + ", hbm_addr=1024, part=0, off=1024);\n}\n",
          "copy.tasm");
      auto convert = [&](const std::string& shape, const std::string& pre) {
        return hlo::parseModule("HloModule cast\nENTRY main {\n  x = " + std::string(types[t]) +
                                    shape + " parameter(0)\n" + pre + "  f = f32[8,16] convert(" +
                                    (pre.empty() ? "x" : "xt") + ")\n  ROOT y = " + types[u] +
                                    "[8,16] convert(f)\n}\n",
                                "cast.hlo");
      };
      auto as_stored = convert("[8,16]", "");
      auto as_copied = convert(
          "[16,8]", "  xt = " + std::string(types[t]) + "[8,16] transpose(x), dimensions={1,0}\n");
      Literal x8 = hlo::randomLiteral(store.tensors[0].shape, 7 + t);
      Literal x16 = hlo::randomLiteral(copy.tensors[0].shape, 11 + t);
      EXPECT_TRUE(run(isa, store, {{"x", x8}})
                      .at("y")
                      .bitwiseEqual(hlo::evaluate(*as_stored, std::vector<Literal>{x8})));
      EXPECT_TRUE(run(isa, copy, {{"x", x16}})
                      .at("y")
                      .bitwiseEqual(hlo::evaluate(*as_copied, std::vector<Literal>{x16})));
    }
  }
}

// Limits: each `require` of the spec, at the limit and one past it.

using spec_checks::Limit;

const std::vector<Limit> kLimits = {
    {"a DMA moves at most 128 partitions",
     "dma_copy_load(p=128, nbytes=4, pitch=4, hbm_addr=0, part=0, off=0);",
     "dma_copy_load(p=129, nbytes=4, pitch=4, hbm_addr=0, part=0, off=0);", "dma_copy_load",
     "p >= 1 && p <= PARTITIONS"},
    {"a tile's partitions lie in SBUF's 128",
     "dma_copy_load(p=64, nbytes=4, pitch=4, hbm_addr=0, part=64, off=0);",
     "dma_copy_load(p=64, nbytes=4, pitch=4, hbm_addr=0, part=65, off=0);", "dma_copy_load",
     "part >= 0 && part + p <= PARTITIONS"},
    {"a tile's bytes lie in the partition's 192 KiB (trn1)",
     "dma_copy_load(p=1, nbytes=256, pitch=256, hbm_addr=0, part=0, off=196352);",
     "dma_copy_load(p=1, nbytes=256, pitch=256, hbm_addr=0, part=0, off=196353);", "dma_copy_load",
     "off >= 0 && off + nbytes <= SBUF_PARTITION_BYTES"},
    {"a DMA's HBM rows do not overlap",
     "dma_copy_load(p=2, nbytes=256, pitch=256, hbm_addr=0, part=0, off=0);",
     "dma_copy_load(p=2, nbytes=256, pitch=255, hbm_addr=0, part=0, off=0);", "dma_copy_load",
     "pitch >= nbytes && pitch <= PITCH_MAX"},
    {"element types are bf16, fp16, fp32",
     "dma_copy_store(dt=2, out_dt=2, p=1, n=1, pitch=4, hbm_addr=0, part=0, off=0);",
     "dma_copy_store(dt=2, out_dt=3, p=1, n=1, pitch=4, hbm_addr=0, part=0, off=0);",
     "dma_copy_store", "dt >= 0 && dt <= 2 && out_dt >= 0 && out_dt <= 2"},
    {"SBUF to SBUF stays inside SBUF",
     "dma_copy_sbuf(p=128, nbytes=8, src_part=0, src_off=0, dst_part=0, dst_off=196600);",
     "dma_copy_sbuf(p=128, nbytes=8, src_part=0, src_off=0, dst_part=0, dst_off=196601);",
     "dma_copy_sbuf", "dst_off >= 0 && dst_off + nbytes <= SBUF_PARTITION_BYTES"},
    {"nc_matmul contracts over at most 128 partitions",
     "nc_matmul(dt=0, accumulate=0, k=128, m=1, n=1, s_part=0, s_off=0, mv_part=0, mv_off=2, "
     "o_part=0, o_off=0);",
     "nc_matmul(dt=0, accumulate=0, k=129, m=1, n=1, s_part=0, s_off=0, mv_part=0, mv_off=2, "
     "o_part=0, o_off=0);",
     "nc_matmul", "k >= 1 && k <= PE_ROWS && k <= PARTITIONS"},
    {"the stationary free size is at most 128",
     "nc_matmul(dt=0, accumulate=0, k=1, m=128, n=1, s_part=0, s_off=0, mv_part=0, mv_off=512, "
     "o_part=0, o_off=0);",
     "nc_matmul(dt=0, accumulate=0, k=1, m=129, n=1, s_part=0, s_off=0, mv_part=0, mv_off=512, "
     "o_part=0, o_off=0);",
     "nc_matmul", "m >= 1 && m <= PE_COLS && m <= PARTITIONS"},
    {"the moving free size is at most 512",
     "nc_matmul(dt=0, accumulate=0, k=1, m=1, n=512, s_part=0, s_off=0, mv_part=0, mv_off=2, "
     "o_part=0, o_off=0);",
     "nc_matmul(dt=0, accumulate=0, k=1, m=1, n=513, s_part=0, s_off=0, mv_part=0, mv_off=2, "
     "o_part=0, o_off=0);",
     "nc_matmul", "n >= 1 && n <= MOVING_FREE_MAX"},
    {"a matmul result lies in one PSUM bank",
     "nc_matmul(dt=0, accumulate=0, k=1, m=1, n=256, s_part=0, s_off=0, mv_part=0, mv_off=2, "
     "o_part=0, o_off=1024);",
     "nc_matmul(dt=0, accumulate=0, k=1, m=1, n=256, s_part=0, s_off=0, mv_part=0, mv_off=2, "
     "o_part=0, o_off=1028);",
     "nc_matmul", "o_off % PSUM_BANK_BYTES + 4 * n <= PSUM_BANK_BYTES"},
    {"a matmul result lies in the partition's 16 KiB of PSUM",
     "nc_matmul(dt=0, accumulate=0, k=1, m=1, n=1, s_part=0, s_off=0, mv_part=0, mv_off=2, "
     "o_part=0, o_off=16380);",
     "nc_matmul(dt=0, accumulate=0, k=1, m=1, n=1, s_part=0, s_off=0, mv_part=0, mv_off=2, "
     "o_part=0, o_off=16384);",
     "nc_matmul", "o_off >= 0 && o_off + 4 * n <= PSUM_PARTITION_BYTES"},
    {"the accumulate flag is 0 or 1",
     "nc_matmul(dt=0, accumulate=1, k=1, m=1, n=1, s_part=0, s_off=0, mv_part=0, mv_off=2, "
     "o_part=0, o_off=0);",
     "nc_matmul(dt=0, accumulate=2, k=1, m=1, n=1, s_part=0, s_off=0, mv_part=0, mv_off=2, "
     "o_part=0, o_off=0);",
     "nc_matmul", "accumulate >= 0 && accumulate <= 1"},
    {"nc_transpose's free size is at most 128",
     "nc_transpose(dt=0, p=1, f=128, i_part=0, i_off=0, o_part=0, o_off=0);",
     "nc_transpose(dt=0, p=1, f=129, i_part=0, i_off=0, o_part=0, o_off=0);", "nc_transpose",
     "f >= 1 && f <= PE_COLS && f <= PARTITIONS"},
    {"nc_transpose moves at most 128 partitions",
     "nc_transpose(dt=0, p=128, f=1, i_part=0, i_off=0, o_part=0, o_off=0);",
     "nc_transpose(dt=0, p=129, f=1, i_part=0, i_off=0, o_part=0, o_off=0);", "nc_transpose",
     "p >= 1 && p <= PE_ROWS && p <= PARTITIONS"},
    {"a transpose result lies in one PSUM bank",
     "nc_transpose(dt=2, p=128, f=1, i_part=0, i_off=0, o_part=0, o_off=1536);",
     "nc_transpose(dt=2, p=128, f=1, i_part=0, i_off=0, o_part=0, o_off=1540);", "nc_transpose",
     "o_off % PSUM_BANK_BYTES + p * (2 + dt * (dt - 1)) <= PSUM_BANK_BYTES"},
    {"tensor_tensor has five operators",
     "tensor_tensor(op=4, dt=0, out_dt=0, p=1, n=1, a_part=0, a_off=0, b_part=0, b_off=2, "
     "o_part=0, o_off=4);",
     "tensor_tensor(op=5, dt=0, out_dt=0, p=1, n=1, a_part=0, a_off=0, b_part=0, b_off=2, "
     "o_part=0, o_off=4);",
     "tensor_tensor", "op >= 0 && op <= 4"},
    {"a PSUM operand lies in PSUM",
     "tensor_tensor_psum(op=0, dt=2, out_dt=2, p=1, n=100, a_part=0, a_off=15984, b_part=0, "
     "b_off=0, o_part=0, o_off=400);",
     "tensor_tensor_psum(op=0, dt=2, out_dt=2, p=1, n=100, a_part=0, a_off=15988, b_part=0, "
     "b_off=0, o_part=0, o_off=400);",
     "tensor_tensor_psum", "a_off >= 0 && a_off + n * 4 <= PSUM_PARTITION_BYTES"},
    {"tensor_scalar's vector operand lies in SBUF",
     "tensor_scalar(op=0, dt=2, out_dt=2, p=1, n=1, d_part=0, d_off=0, v_part=0, v_off=196604, "
     "o_part=0, o_off=4);",
     "tensor_scalar(op=0, dt=2, out_dt=2, p=1, n=1, d_part=0, d_off=0, v_part=0, v_off=196605, "
     "o_part=0, o_off=4);",
     "tensor_scalar", "v_off >= 0 && v_off + 4 <= SBUF_PARTITION_BYTES"},
    {"tensor_reduce reduces with add or max",
     "tensor_reduce(op=1, dt=2, out_dt=2, p=1, n=4, i_part=0, i_off=0, o_part=0, o_off=16);",
     "tensor_reduce(op=2, dt=2, out_dt=2, p=1, n=4, i_part=0, i_off=0, o_part=0, o_off=16);",
     "tensor_reduce", "op >= 0 && op <= 1"},
    {"activation has exactly specified functions only (copy, relu)",
     "activation_psum(func=1, scale_vec=0, scale_hi=16256, scale_lo=0, bias=0, out_dt=2, p=1, "
     "n=1, d_part=0, d_off=0, s_part=0, s_off=0, b_part=0, b_off=0, o_part=0, o_off=0);",
     "activation_psum(func=2, scale_vec=0, scale_hi=16256, scale_lo=0, bias=0, out_dt=2, p=1, "
     "n=1, d_part=0, d_off=0, s_part=0, s_off=0, b_part=0, b_off=0, o_part=0, o_off=0);",
     "activation_psum", "func >= 0 && func <= 1"},
    {"a scale vector leaves the constant scale at 1.0",
     "activation(func=0, scale_vec=1, scale_hi=16256, scale_lo=0, bias=0, dt=2, out_dt=2, p=1, "
     "n=1, d_part=0, d_off=0, s_part=0, s_off=4, b_part=0, b_off=0, o_part=0, o_off=8);",
     "activation(func=0, scale_vec=1, scale_hi=16384, scale_lo=0, bias=0, dt=2, out_dt=2, p=1, "
     "n=1, d_part=0, d_off=0, s_part=0, s_off=4, b_part=0, b_off=0, o_part=0, o_off=8);",
     "activation", "scale_vec == 0 || scale_hi == FP32_ONE_HI && scale_lo == 0"},
    {"tensor_copy reads at most a PSUM partition",
     "tensor_copy(dt=0, out_dt=0, p=1, n=8192, i_part=0, i_off=0, o_part=0, o_off=0);",
     "tensor_copy(dt=0, out_dt=0, p=1, n=8193, i_part=0, i_off=0, o_part=0, o_off=0);",
     "tensor_copy", "n >= 1 && n <= PSUM_FREE_MAX"},
};

std::string runCall(const taidl::Isa& isa, const std::string& call) {
  return spec_checks::errorOfCalls(isa, call);
}

TEST(Trainium, EveryLimitIsARequireThatRejectsOnePastIt) {
  spec_checks::expectLimitsAreRequires(trainium(), kLimits);
}

// A violated require stops the run: the program writes no output (run() throws before returning
// any).
TEST(Trainium, AViolatedRequireProducesNoOutput) {
  const taidl::Isa& isa = trainium();
  Program p = parseProgram(isa, R"(kernel bank hbm=64 {
  output out @0 : f32[1,4];
  nc_matmul(dt=0, accumulate=0, k=1, m=1, n=4, s_part=0, s_off=0, mv_part=0, mv_off=2, o_part=0, o_off=2040);
  tensor_copy(dt=2, out_dt=2, p=1, n=4, i_part=0, i_off=2040, o_part=0, o_off=0);
  dma_copy_store(dt=2, out_dt=2, p=1, n=4, pitch=16, hbm_addr=0, part=0, off=0);
})",
                           "bank.tasm");
  std::map<std::string, Literal> out;
  EXPECT_THROW(out = run(isa, p, {}), DiagnosticError);
  EXPECT_TRUE(out.empty());
}

// The SBUF size is a parameter: trn2's 224 KiB per partition admits what trn1's 192 KiB rejects.
TEST(Trainium, Trn2SbufIsAParameter) {
  const std::string call =
      "dma_copy_load(p=1, nbytes=256, pitch=256, hbm_addr=0, part=0, "
      "off=196608);";
  EXPECT_NE(runCall(trainium(), call).find("off + nbytes <= SBUF_PARTITION_BYTES"),
            std::string::npos);
  taidl::Isa trn2 = loadTrainium({{"SBUF_PARTITION_BYTES", 229376}});
  EXPECT_EQ(runCall(trn2, call), "");
  EXPECT_NE(runCall(trn2,
                    "dma_copy_load(p=1, nbytes=256, pitch=256, hbm_addr=0, part=0, "
                    "off=229121);")
                .find("off + nbytes <= SBUF_PARTITION_BYTES"),
            std::string::npos);
}

}  // namespace
}  // namespace tacit::oracle
