// Kernels whose operands live in tiled HBM layouts (docs/backend.md, "Tiled layouts"): a window of
// a laid-out result is a box of its physical tensor, so a tile kernel writes whole layout tiles
// with plain stores; TPUv1 contractions deeper than its 256-row weight tile accumulate in place
// (`matmul_acc`), split by phase 1 or by the tiler; a kernel of a few tiles that does not compile
// whole is tiled.
#include <gtest/gtest.h>

#include <sstream>

#include "backend/compiler.h"
#include "backend/verify.h"
#include "common/paths.h"
#include "common/slowdown.h"
#include "hlo/parser.h"
#include "oracle/tasm.h"
#include "support/diagnostic.h"
#include "taidl/isa.h"

namespace tacit::backend {
namespace {

const taidl::Isa& tpuv1() {
  static const taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/tpuv1.taidl");
  return isa;
}

CompileOptions options() {
  CompileOptions o;
  o.time_limit = std::chrono::seconds(20) * testing::kSlowdown;
  return o;
}

// An int8 GEMM [m,k]x[k,n] with int32 sums wrapped to int8 (TPUv1's Activate without ReLU), its
// operands and result in `layout` (e.g. "{1,0:T(256,256)}": whole weight tiles contiguous, as the
// Weight Memory holds them).
std::string tpuGemm(int64_t m, int64_t k, int64_t n, const std::string& layout) {
  auto t = [](int64_t a, int64_t b) {
    return "[" + std::to_string(a) + "," + std::to_string(b) + "]";
  };
  std::ostringstream s;
  s << "HloModule tpu_gemm, entry_computation_layout={(s8" << t(m, k) << layout << ", s8" << t(k, n)
    << layout << ")->s8" << t(m, n) << layout << "}\n\nENTRY main {\n"
    << "  a = s8" << t(m, k) << layout << " parameter(0)\n"
    << "  b = s8" << t(k, n) << layout << " parameter(1)\n"
    << "  wa = s32" << t(m, k) << " convert(a)\n  wb = s32" << t(k, n) << " convert(b)\n"
    << "  d = s32" << t(m, n)
    << " dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    << "  ROOT r = s8" << t(m, n) << " convert(d)\n}\n";
  return s.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(TiledLayouts, TpuContractionDeeperThanAWeightTileAccumulatesInPlace) {
  // 256x512x256: compiled whole, phase 1 splits the contraction into two weight tiles, the
  // second added to the first's sums.
  auto kernel = hlo::parseModule(tpuGemm(256, 512, 256, "{1,0:T(256,256)}"), "tpu_k512.hlo");
  CompileResult r = compile(tpuv1(), *kernel, options());
  EXPECT_FALSE(r.schedule);
  const std::string text = oracle::printProgram(tpuv1(), r.program);
  EXPECT_EQ(count(text, "matmul_weights("), 1u) << text;
  EXPECT_EQ(count(text, "matmul_weights_acc("), 1u) << text;
  VerifyReport v = verify(tpuv1(), *kernel, r.program, {.sets = 2, .seed = 3});
  EXPECT_TRUE(v.ok) << v.mismatch;
}

TEST(TiledLayouts, TpuGemm1024IsALoopNestOverWholeLayoutTiles) {
  // 1024^3 does not compile whole (four column blocks of four weight tiles each); its tiles do:
  // each result window is whole 256x256 tiles of the result's layout, one contiguous write_host.
  auto kernel = hlo::parseModule(tpuGemm(1024, 1024, 1024, "{1,0:T(256,256)}"), "tpu_1024.hlo");
  CompileResult r = compile(tpuv1(), *kernel, options());
  ASSERT_TRUE(r.schedule);
  const std::string text = oracle::printProgram(tpuv1(), r.program);
  EXPECT_NE(text.find("loop t0 in [0, 4)"), std::string::npos) << text;
  EXPECT_NE(text.find("matmul_weights_acc("), std::string::npos) << text;
  EXPECT_LT(count(text, "\n"), 200u) << text;
  VerifyReport v = verify(tpuv1(), *kernel, r.program, {.sets = 1, .seed = 5});
  EXPECT_TRUE(v.ok) << v.mismatch;
  // The tiler's own split of the contraction (blocks of 256 in the accumulators) verifies too.
  CompileOptions given = options();
  given.schedule = TileSchedule{{256, 256}, {0, 1}, 256, "acc"};
  CompileResult split = compile(tpuv1(), *kernel, given);
  const std::string split_text = oracle::printProgram(tpuv1(), split.program);
  EXPECT_NE(split_text.find("loop k in [0, 2)"), std::string::npos) << split_text;
  VerifyReport w = verify(tpuv1(), *kernel, split.program, {.sets = 1, .seed = 6});
  EXPECT_TRUE(w.ok) << w.mismatch;
}

TEST(TiledLayouts, AWindowThatIsNotWholeLayoutTilesIsNamed) {
  // 128-row tiles of a result laid out in 256x256 tiles: a window would be part of a layout tile.
  auto kernel = hlo::parseModule(tpuGemm(512, 256, 512, "{1,0:T(256,256)}"), "tpu_part.hlo");
  CompileOptions o = options();
  o.schedule = TileSchedule{{128, 256}, {0, 1}, 0, ""};
  try {
    compile(tpuv1(), *kernel, o);
    FAIL() << "a 128-row window of 256-row layout tiles compiled";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(e.diagnostic().message.find("is not whole tiles of its layout"), std::string::npos)
        << e.diagnostic().message;
  }
}

TEST(TiledLayouts, QkvGemmWithATiledResultCompilesAndVerifies) {
  // QKV's stores write whole 64-element rows: a 64-column window of a row-major 256-wide result
  // cannot be stored alone, a 64x64 tile of a T(64,64) result is one contiguous block.
  static const taidl::Isa qkv = taidl::loadIsaFile(testing::sourceDir() + "/isa/qkv.taidl");
  const std::string hlo =
      "HloModule qkv_256, entry_computation_layout={(bf16[256,64]{1,0}, "
      "bf16[64,256]{1,0:T(64,64)})->bf16[256,256]{1,0:T(64,64)}}\n\nENTRY main {\n"
      "  a = bf16[256,64] parameter(0)\n  b = bf16[64,256]{1,0:T(64,64)} parameter(1)\n"
      "  ROOT c = bf16[256,256]{1,0:T(64,64)} dot(a, b), lhs_contracting_dims={1}, "
      "rhs_contracting_dims={0}\n}\n";
  auto kernel = hlo::parseModule(hlo, "qkv_256.hlo");
  CompileResult whole = compile(qkv, *kernel, options());
  VerifyReport v = verify(qkv, *kernel, whole.program, {.sets = 1, .seed = 2});
  EXPECT_TRUE(v.ok) << v.mismatch;
  CompileOptions given = options();
  given.schedule = TileSchedule{{64, 64}, {0, 1}, 0, ""};
  CompileResult tiled = compile(qkv, *kernel, given);
  EXPECT_LT(count(oracle::printProgram(qkv, tiled.program), "\n"), 40u);
  VerifyReport w = verify(qkv, *kernel, tiled.program, {.sets = 1, .seed = 4});
  EXPECT_TRUE(w.ok) << w.mismatch;
}

}  // namespace
}  // namespace tacit::backend
