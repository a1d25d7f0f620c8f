// The timing descriptions of the shipped specs (docs/timing.md, "AMX", "Trainium", "TPUv1",
// "QKV") on one program each: which engines carry the work, the busy cycles and HBM bytes that
// follow from the specs' clauses and the program, and the latency parameters that bind where the
// program waits on them. Every expected number is derived in the comment next to it from the
// clauses (isa/*.taidl) and the rules (docs/timing.md), never copied from a run.
#include <gtest/gtest.h>

#include <string>

#include "timing/kernel.h"
#include "timing/timing.h"

namespace tacit::timing {
namespace {

using testing::Kernel;
using testing::randomInputs;
using testing::shippedKernel;

const EngineUse& engine(const Report& report, const std::string& name) {
  for (const EngineUse& e : report.engines) {
    if (e.name == name) return e;
  }
  ADD_FAILURE() << "no engine " << name;
  static const EngineUse kNone{};
  return kNone;
}

int64_t busySum(const Report& report) {
  int64_t busy = 0;
  for (const EngineUse& e : report.engines)
    busy += e.busy;
  return busy;
}

// ---------------------------------------------------------------------------------------------
// AMX: cnn_inference_amx_16 = 4 tilezero, 16 x (4 tileloadd + 4 tdpbusd), 4 tilestored.
// ---------------------------------------------------------------------------------------------

Kernel amxCnn(const taidl::ParamOverrides& params = {}) {
  return shippedKernel("amx.taidl", "amx/cnn_inference_amx_16.tasm", params);
}

TEST(TimingPlatforms, AmxTileProductsRunOnTheTmul) {
  Kernel r = amxCnn();
  Report report = simulate(r.isa, r.program, r.inputs);
  ASSERT_EQ(report.engines.size(), 4u);  // vec, tmul, load, store
  EXPECT_EQ(report.instructions, 4 + 16 * 8 + 4);
  // 4 tilezero (interval: cost 1) and 64 tdpbusd (interval 16).
  EXPECT_EQ(engine(report, "tmul").instructions, 4 + 64);
  EXPECT_EQ(engine(report, "tmul").busy, 4 * 1 + 64 * 16);
  // 64 tile loads of 16 rows at two rows per cycle: at least 8 cycles each (the port may hold
  // the engine longer, never shorter).
  EXPECT_EQ(engine(report, "load").instructions, 64);
  EXPECT_GE(engine(report, "load").busy, 64 * 8);
  EXPECT_EQ(engine(report, "store").instructions, 4);
  EXPECT_EQ(engine(report, "vec").instructions, 0);
  // 64 tiles in, 4 out, 1024 bytes each.
  EXPECT_EQ(report.hbm_bytes, 68 * 1024);
  // The TMUL is in order, so the program lasts at least its busy time; the loads overlap it.
  EXPECT_GE(report.cycles, engine(report, "tmul").busy);
  EXPECT_LT(report.cycles, busySum(report) + report.memory_busy);
}

TEST(TimingPlatforms, AmxALongTdpLatencyMakesTheAccumulatorChainBind) {
  // Each of the 16 tdpbusd into tile 0 reads the tile the previous one wrote: with a latency of
  // 128 (more than the 4 x 16 cycles of the four-accumulator rotation) the chain takes at least
  // 16 x 128 cycles.
  Kernel fast = amxCnn();
  Kernel slow = amxCnn({{"TDP_LATENCY", 128}});
  int64_t a = simulate(fast.isa, fast.program, fast.inputs).cycles;
  int64_t b = simulate(slow.isa, slow.program, slow.inputs).cycles;
  EXPECT_GE(b, 16 * 128);
  EXPECT_LT(a, b);
}

TEST(TimingPlatforms, AmxTheMemoryLatencyThrottlesTheTileLoads) {
  // At MEM_LATENCY 64, 16 lines of 64 bytes in flight carry 16 bytes per cycle: each 1024-byte
  // tile transfer holds the port max(1024 / 128, 1024 * 64 / (16 * 64)) = 64 cycles, 68 of them.
  Kernel fast = amxCnn();
  Kernel slow = amxCnn({{"MEM_LATENCY", 64}});
  Report a = simulate(fast.isa, fast.program, fast.inputs);
  Report b = simulate(slow.isa, slow.program, slow.inputs);
  EXPECT_EQ(b.memory_busy, 68 * 64);
  EXPECT_GE(b.cycles, b.memory_busy);  // one port: its reservations do not overlap
  EXPECT_LT(a.cycles, b.cycles);
}

// ---------------------------------------------------------------------------------------------
// Trainium: gemm_bias_relu_128x512x512 = 9 dma_copy_load, 4 nc_matmul (bf16, n = 512),
// 1 activation_psum (n = 512), 1 dma_copy_store. One tick = 1/5.6 ns.
// ---------------------------------------------------------------------------------------------

Kernel trainiumGemm(const taidl::ParamOverrides& params = {}) {
  return shippedKernel("trainium.taidl", "trainium/gemm_bias_relu_128x512x512.tasm", params);
}

TEST(TimingPlatforms, TrainiumEnginesCarryTheirInstructions) {
  Kernel r = trainiumGemm();
  Report report = simulate(r.isa, r.program, r.inputs);
  ASSERT_EQ(report.engines.size(), 4u);  // dma, tensor, vector, scalar
  EXPECT_EQ(engine(report, "dma").instructions, 10);
  EXPECT_EQ(engine(report, "tensor").instructions, 4);
  EXPECT_EQ(engine(report, "scalar").instructions, 1);
  EXPECT_EQ(engine(report, "vector").instructions, 0);
  // A bf16 matmul with 512 moving columns: max(512, 64) Tensor cycles of 2 ticks.
  EXPECT_EQ(engine(report, "tensor").busy, 4 * 2 * 512);
  // activation over 512 > 128 elements per partition: 512 Scalar cycles of 4 ticks, no overhead.
  EXPECT_EQ(engine(report, "scalar").busy, 4 * 512);
  // At, B and the bias in, the bf16 result out.
  const int64_t at = 4 * 128 * 256, b = 4 * 128 * 1024, bias = 128 * 4, out = 128 * 512 * 2;
  EXPECT_EQ(report.hbm_bytes, at + b + bias + out);
  // The port moves 16 x 27.2 GB/s / 5.6 GHz = 77 bytes per tick (requests in flight are derived
  // so that the latency does not bind): ceil(32768 / 77) = 426 per At block, ceil(131072 / 77) =
  // 1703 per B block and for the result, ceil(512 / 77) = 7 for the bias.
  EXPECT_EQ(report.memory_busy, 4 * 426 + 4 * 1703 + 7 + 1703);
}

TEST(TimingPlatforms, TrainiumTheDmaLatencyIsOnTheCriticalPath) {
  // Loads -> matmuls -> activation -> store: the store starts after a load's data arrived and
  // its own data arrive a DMA latency after its transfer, so the total is at least two
  // latencies (2000 ns = 11200 ticks each).
  Kernel fast = trainiumGemm();
  Kernel slow = trainiumGemm({{"DMA_LATENCY_NS", 2000}});
  int64_t a = simulate(fast.isa, fast.program, fast.inputs).cycles;
  int64_t b = simulate(slow.isa, slow.program, slow.inputs).cycles;
  EXPECT_GE(b, 2 * 11200);
  EXPECT_LT(a, b);
}

// ---------------------------------------------------------------------------------------------
// TPUv1 (no shipped example program): two 256 x 256 layers, the weights streamed through the
// FIFO. Host transfers move 65536 bytes at 10 GiB/s / 700 MHz: ceil(65536 * 7e8 / (10 * 2^30))
// = 4273 cycles each.
// ---------------------------------------------------------------------------------------------

constexpr const char* kTpuMlp = R"(
kernel mlp2 hbm=262144 {
  input x @0 : s8[256,256];
  input w @65536 : s8[2,256,256];
  output y @196608 : s8[256,256];
  read_host(nrows=256, hbm_addr=0, unb_start=0);
  read_weight(hbm_addr=65536);
  read_weight(hbm_addr=131072);
  update_weight();
  matmul(nrows=256, unb_start=0, acc_start=0);
  activate(nrows=256, function=1, unb_start=256, acc_start=0);
  update_weight();
  matmul(nrows=256, unb_start=256, acc_start=256);
  activate(nrows=256, function=1, unb_start=512, acc_start=256);
  write_host(nrows=256, hbm_addr=196608, unb_start=512);
}
)";

Kernel tpuMlp(const taidl::ParamOverrides& params = {}) {
  Kernel r{taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/tpuv1.taidl", params), {}, {}};
  r.program = oracle::parseProgram(r.isa, kTpuMlp, "mlp2.tasm");
  randomInputs(r, 11);
  return r;
}

TEST(TimingPlatforms, TpuWeightsStreamWhileTheHostLoads) {
  Kernel r = tpuMlp();
  Report report = simulate(r.isa, r.program, r.inputs);
  ASSERT_EQ(report.engines.size(), 4u);  // host, weight, mxu, act
  EXPECT_EQ(engine(report, "host").instructions, 2);
  EXPECT_EQ(engine(report, "host").busy, 2 * 4273);  // no memory-port time: bytes = 0
  EXPECT_EQ(engine(report, "weight").instructions, 2);
  // Two weight shifts of 256 cycles and two matmuls of 256 rows, one row per cycle.
  EXPECT_EQ(engine(report, "mxu").instructions, 4);
  EXPECT_EQ(engine(report, "mxu").busy, 2 * 256 + 2 * 256);
  EXPECT_EQ(engine(report, "act").busy, 2 * 256);
  // Only the weights use the Weight Memory port: two tiles of 65536 bytes at 30 GiB/s / 700 MHz
  // = 46 bytes per cycle, ceil(65536 / 46) = 1425 cycles each.
  EXPECT_EQ(report.hbm_bytes, 2 * 65536);
  EXPECT_EQ(report.memory_busy, 2 * 1425);
  // The weight reads overlap the host read.
  EXPECT_LT(report.cycles, busySum(report) + report.memory_busy);
}

TEST(TimingPlatforms, TpuTheHostLatencyIsOnTheCriticalPath) {
  // read_host -> matmul -> activate -> matmul -> activate -> write_host: both host transfers
  // are on the path, each interval plus HOST_LATENCY.
  Kernel fast = tpuMlp();
  Kernel slow = tpuMlp({{"HOST_LATENCY", 1400}});
  int64_t a = simulate(fast.isa, fast.program, fast.inputs).cycles;
  int64_t b = simulate(slow.isa, slow.program, slow.inputs).cycles;
  EXPECT_GE(a, 2 * (4273 + 700));
  EXPECT_GE(b, 2 * (4273 + 1400));
  EXPECT_LT(a, b);
}

// ---------------------------------------------------------------------------------------------
// QKV: no timing clauses (no published figures): one implicit engine at the spec's cost.
// ---------------------------------------------------------------------------------------------

TEST(TimingPlatforms, QkvRunsAtItsCostOnOneImplicitEngine) {
  Kernel r = shippedKernel("qkv.taidl", "qkv/attention.tasm");
  Report report = simulate(r.isa, r.program, r.inputs);
  ASSERT_EQ(report.engines.size(), 1u);
  EXPECT_EQ(report.instructions, 9);
  EXPECT_FALSE(report.has_memory);
  // Every cost is at least 1 and the one engine is in order with a queue of 1: the instructions
  // run back to back, so the total is their summed cost.
  EXPECT_EQ(report.cycles, report.engines[0].busy);
}

}  // namespace
}  // namespace tacit::timing
