// Tiled compilation (backend/tiling.h, tile_kernel.h; docs/backend.md "Tiled compilation").
#include "backend/tiling.h"

#include <gtest/gtest.h>

#include <bit>
#include <iterator>
#include <span>
#include <sstream>

#include "backend/emit.h"
#include "backend/kernel_run.h"
#include "backend/tile_kernel.h"
#include "backend/verify.h"
#include "common/paths.h"
#include "common/slowdown.h"
#include "hlo/parser.h"
#include "hlo_eval/evaluator.h"
#include "hlo_eval/random_literal.h"
#include "oracle/tasm.h"
#include "support/diagnostic.h"
#include "taidl/isa.h"

namespace tacit::backend {
namespace {

// int8 GEMM [m,k]x[k,n] accumulated in int32, plus a per-column int32 bias when `bias`, saturated
// to int8: the shape of a quantised layer.
std::string gemm(int64_t m, int64_t k, int64_t n, bool bias = false) {
  auto t = [](int64_t a, int64_t b) {
    return "[" + std::to_string(a) + "," + std::to_string(b) + "]";
  };
  std::ostringstream s;
  s << "HloModule gemm_" << m << "x" << k << "x" << n << "\n\nENTRY main {\n"
    << "  a = s8" << t(m, k) << " parameter(0)\n"
    << "  b = s8" << t(k, n) << " parameter(1)\n";
  if (bias) s << "  bias = s32[" << n << "] parameter(2)\n";
  s << "  wa = s32" << t(m, k) << " convert(a)\n"
    << "  wb = s32" << t(k, n) << " convert(b)\n"
    << "  prod = s32" << t(m, n)
    << " dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
  std::string acc = "prod";
  if (bias) {
    s << "  bb = s32" << t(m, n) << " broadcast(bias), dimensions={1}\n"
      << "  sum = s32" << t(m, n) << " add(prod, bb)\n";
    acc = "sum";
  }
  s << "  lo = s32[] constant(-128)\n  hi = s32[] constant(127)\n"
    << "  clamped = s32" << t(m, n) << " clamp(lo, " << acc << ", hi)\n"
    << "  ROOT r = s8" << t(m, n) << " convert(clamped)\n}\n";
  return s.str();
}

const taidl::Isa& gemmini() {
  static const taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/gemmini.taidl");
  return isa;
}

CompileOptions options(std::optional<TileSchedule> schedule = std::nullopt) {
  CompileOptions o;
  o.time_limit = std::chrono::seconds(10) * testing::kSlowdown;
  o.schedule = std::move(schedule);
  return o;
}

TileSchedule tiles(std::vector<int64_t> tile, std::vector<int64_t> order) {
  return TileSchedule{std::move(tile), std::move(order), 0, ""};
}

size_t lines(const std::string& text) {
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Random arguments for every parameter of `kernel` (seeds seed, seed + 1, ...).
std::vector<hlo::Literal> randomArgs(const hlo::HloModule& kernel, uint64_t seed) {
  std::vector<hlo::Literal> args;
  for (int64_t i = 0; i < kernel.entry()->parameterCount(); ++i)
    args.push_back(
        hlo::randomLiteral(kernel.entry()->parameter(i)->shape(), seed + static_cast<uint64_t>(i)));
  return args;
}

// `part` (s8[sizes]) is the box [starts, starts + sizes) of `whole` (s8, rank 2).
void expectBoxOf(const hlo::Literal& part, const hlo::Literal& whole,
                 const std::vector<int64_t>& starts, const std::vector<int64_t>& sizes) {
  ASSERT_EQ(part.shape().dims(), sizes);
  const int64_t n = whole.shape().dim(1);
  for (int64_t i = 0; i < sizes[0]; ++i) {
    for (int64_t j = 0; j < sizes[1]; ++j) {
      ASSERT_EQ(part.data<int8_t>()[static_cast<size_t>(i * sizes[1] + j)],
                whole.data<int8_t>()[static_cast<size_t>((starts[0] + i) * n + starts[1] + j)])
          << "at (" << i << ", " << j << ")";
    }
  }
}

// The tile module computes exactly the tile's box of the kernel's result (evaluated, not assumed).
TEST(TileModule, ComputesTheBoxOfTheKernelsResult) {
  auto kernel = hlo::parseModule(gemm(64, 32, 48, /*bias=*/true), "gemm.hlo");
  const std::vector<int64_t> starts{16, 32}, sizes{32, 16};
  TileModuleOrReason tile = buildTileModule(*kernel, starts, sizes);
  ASSERT_TRUE(tile.tile) << tile.reason;
  // A moves with the result's rows, B with its columns, the bias with its columns.
  std::map<int64_t, std::vector<int64_t>> follows;
  for (const WindowMap& w : tile.tile->windows)
    follows[w.parameter] = w.result_dim;
  EXPECT_EQ(follows[0], (std::vector<int64_t>{0, -1}));
  EXPECT_EQ(follows[1], (std::vector<int64_t>{-1, 1}));
  EXPECT_EQ(follows[2], (std::vector<int64_t>{1}));
  const std::vector<hlo::Literal> args = randomArgs(*kernel, 7);
  expectBoxOf(hlo::evaluate(*tile.tile->module, args), hlo::evaluate(*kernel, args), starts, sizes);
}

// The contraction steps, evaluated one after the other with the accumulator passed from step to
// step, compute the tile (the re-association of an integer sum is exact).
TEST(TileModule, ContractionStepsComposeToTheTile) {
  auto kernel = hlo::parseModule(gemm(32, 64, 48, /*bias=*/true), "gemm.hlo");
  const std::vector<int64_t> starts{16, 16}, sizes{16, 32};
  const std::vector<hlo::Literal> args = randomArgs(*kernel, 3);
  auto step = [&](TileStep s, int64_t block, const hlo::Literal* acc) {
    TileModuleOrReason m = buildTileModule(*kernel, starts, sizes, s, {block * 16, 16, {}, 0});
    EXPECT_TRUE(m.tile) << m.reason;
    // The parameters' windows along the contraction move with the contraction loop (dimension 2).
    for (const WindowMap& w : m.tile->windows) {
      if (w.parameter == 0) {
        EXPECT_EQ(w.result_dim, (std::vector<int64_t>{0, 2}));
      } else if (w.parameter == 1) {
        EXPECT_EQ(w.result_dim, (std::vector<int64_t>{2, 1}));
      }
    }
    std::vector<hlo::Literal> in = args;
    if (acc) in.push_back(*acc);
    return hlo::evaluate(*m.tile->module, in);
  };
  hlo::Literal acc = step(TileStep::kFirst, 0, nullptr);
  for (int64_t b = 1; b < 3; ++b)
    acc = step(TileStep::kMiddle, b, &acc);
  expectBoxOf(step(TileStep::kLast, 3, &acc), hlo::evaluate(*kernel, args), starts, sizes);
}

// With the sums carried as blocks (two 16x16 accumulators of a 16x32 tile), the first and middle
// steps return the blocks as a tuple and take them as parameters, in row-major order.
TEST(TileModule, AccumulatorBlocksComposeToTheTile) {
  auto kernel = hlo::parseModule(gemm(32, 64, 48, /*bias=*/true), "gemm.hlo");
  const std::vector<int64_t> starts{16, 16}, sizes{16, 32};
  const std::vector<hlo::Literal> args = randomArgs(*kernel, 4);
  auto step = [&](TileStep s, int64_t block, const std::vector<hlo::Literal>& acc) {
    TileModuleOrReason m =
        buildTileModule(*kernel, starts, sizes, s, {block * 16, 16, {16, 16}, 0});
    EXPECT_TRUE(m.tile) << m.reason;
    std::vector<hlo::Literal> in = args;
    in.insert(in.end(), acc.begin(), acc.end());
    return hlo::evaluate(*m.tile->module, in);
  };
  hlo::Literal acc = step(TileStep::kFirst, 0, {});
  ASSERT_TRUE(acc.isTuple());
  for (int64_t b = 1; b < 3; ++b)
    acc = step(TileStep::kMiddle, b, acc.elements());
  ASSERT_EQ(acc.elements().size(), 2u);
  expectBoxOf(step(TileStep::kLast, 3, acc.elements()), hlo::evaluate(*kernel, args), starts,
              sizes);
  EXPECT_FALSE(
      buildTileModule(*kernel, starts, sizes, TileStep::kFirst, {0, 16, {16, 24}, 0}).tile);
}

TEST(TileModule, AFloatContractionIsSplitOnlyWhenReassociationIsAllowed) {
  auto kernel = hlo::parseModule(R"(HloModule f
ENTRY main {
  a = f32[32,64] parameter(0)
  b = f32[64,32] parameter(1)
  ROOT d = f32[32,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                 "f.hlo");
  TileModuleOrReason m =
      buildTileModule(*kernel, {0, 0}, {16, 16}, TileStep::kFirst, {0, 16, {}, 0});
  EXPECT_FALSE(m.tile);
  EXPECT_NE(m.reason.find("a float sum is re-associated only with --reassociate"),
            std::string::npos)
      << m.reason;
  TileModuleOrReason allowed =
      buildTileModule(*kernel, {0, 0}, {16, 16}, TileStep::kFirst, {0, 16, {}, 0, true});
  EXPECT_TRUE(allowed.tile) << allowed.reason;
}

// f32 values whose products and sums exercise every rule of a float dot's order (docs/numerics.md,
// "dot"): signed zeros (products of -0, sums that cancel), NaNs of both signs with payloads,
// infinities (inf * 0, inf - inf), subnormals, and values whose sums round.
hlo::Literal specialF32(const hlo::Shape& shape, uint64_t seed) {
  const uint32_t bits[] = {0x00000000, 0x80000000, 0x7fc12345, 0xffc00001, 0x7f800000,
                           0xff800000, 0x00000001, 0x80000003, 0x3f800000, 0xbf800000,
                           0x4b800001, 0x33800000, 0x7f7fffff, 0xff7fffff, 0x3eaaaaab};
  hlo::Literal l(shape);
  std::span<uint32_t> out = l.data<uint32_t>();
  for (size_t i = 0; i < out.size(); ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    // Mostly ordinary values, so that most sums are not NaN from their first special term.
    const uint64_t r = seed >> 33;
    out[i] = r % 4 == 0 ? bits[(r / 4) % std::size(bits)]
                        : std::bit_cast<uint32_t>(
                              static_cast<float>(static_cast<int64_t>(r % 2001) - 1000) / 256.0f);
  }
  return l;
}

// A float sum split one product per step adds the products in the dot's own order: the blocked
// kernel with blocks of 1, ((0 + a0*b0) + (0 + a1*b1)) + ..., is the kernel bit for bit, signed
// zeros and NaN payloads included (tiling_internal.h, Contraction::exact_chain).
TEST(TileModule, AFloatSumSplitOneProductPerStepIsTheKernel) {
  auto kernel = hlo::parseModule(R"(HloModule f
ENTRY main {
  a = f32[8,24] parameter(0)
  b = f32[24,8] parameter(1)
  ROOT d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                 "f.hlo");
  TileModuleOrReason unit = blockedKernel(*kernel, 1), pairs = blockedKernel(*kernel, 2);
  ASSERT_TRUE(unit.tile && pairs.tile) << unit.reason << pairs.reason;
  int differs_in_pairs = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::vector<hlo::Literal> args{specialF32(kernel->entry()->parameter(0)->shape(), seed),
                                   specialF32(kernel->entry()->parameter(1)->shape(), seed + 99)};
    hlo::Literal want = hlo::evaluate(*kernel, args);
    EXPECT_TRUE(hlo::evaluate(*unit.tile->module, args).bitwiseEqual(want)) << "seed " << seed;
    differs_in_pairs += hlo::evaluate(*pairs.tile->module, args).bitwiseEqual(want) ? 0 : 1;
  }
  EXPECT_GT(differs_in_pairs, 0);  // blocks of two re-associate: the inputs can tell
}

// The blocked form of a kernel: ((dot_0 + dot_1) + ...) over blocks of the contraction. Exact for
// integers (the same bits as the kernel); for floats the sum of the same products in another
// order, equal here to the kernel evaluated block by block by hand.
TEST(TileModule, BlockedKernelSumsTheContractionBlockByBlock) {
  auto ints = hlo::parseModule(gemm(32, 64, 16), "g.hlo");
  TileModuleOrReason blocked = blockedKernel(*ints, 16);
  ASSERT_TRUE(blocked.tile) << blocked.reason;
  std::vector<hlo::Literal> args = randomArgs(*ints, 3);
  EXPECT_TRUE(hlo::evaluate(*blocked.tile->module, args).bitwiseEqual(hlo::evaluate(*ints, args)));
  auto floats = hlo::parseModule(R"(HloModule f
ENTRY main {
  a = f32[8,64] parameter(0)
  b = f32[64,8] parameter(1)
  ROOT d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                 "f.hlo");
  TileModuleOrReason f = blockedKernel(*floats, 32);
  ASSERT_TRUE(f.tile) << f.reason;
  args = randomArgs(*floats, 4);
  const hlo::Literal got = hlo::evaluate(*f.tile->module, args);
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t j = 0; j < 8; ++j) {
      float halves[2] = {0, 0};
      for (int h = 0; h < 2; ++h) {
        for (int64_t k = 32 * h; k < 32 * h + 32; ++k) {
          // Rounded product, then rounded sum (volatile: no fused multiply-add).
          volatile float p = static_cast<float>(args[0].getDouble(i * 64 + k)) *
                             static_cast<float>(args[1].getDouble(k * 8 + j));
          halves[h] += p;
        }
      }
      EXPECT_EQ(static_cast<float>(got.getDouble(i * 8 + j)), halves[0] + halves[1]);
    }
  }
  EXPECT_FALSE(blockedKernel(*floats, 24).tile);  // 64 is not whole blocks of 24
}

TEST(TileModule, NamesTheOperationThatMustStayWhole) {
  auto kernel = hlo::parseModule(R"(HloModule r
ENTRY main {
  a = s32[64,64] parameter(0)
  t = s32[4096] reshape(a)
  ROOT r = s32[64,64] reshape(t)
})",
                                 "r.hlo");
  TileModuleOrReason tile = buildTileModule(*kernel, {0, 0}, {16, 16});
  EXPECT_FALSE(tile.tile);
  EXPECT_NE(tile.reason.find("'r' (reshape)"), std::string::npos) << tile.reason;
}

// A kernel of 64 unit tiles is a loop nest: a few lines (four copies of the innermost loop's body,
// multiple buffering), each tile kernel compiled once, verified.
TEST(Tiling, GemminiGemmIsALoopNestThatVerifies) {
  auto kernel = hlo::parseModule(gemm(128, 32, 128), "gemm.hlo");
  CompileResult r = compile(gemmini(), *kernel, options());
  ASSERT_TRUE(r.schedule);
  EXPECT_FALSE(r.stats.tiling.empty());
  const std::string text = oracle::printProgram(gemmini(), r.program);
  EXPECT_NE(text.find("loop t0 in [0, "), std::string::npos) << text;
  EXPECT_LT(lines(text), 120u) << text;
  VerifyReport v = verify(gemmini(), *kernel, r.program, {.sets = 2, .seed = 3});
  EXPECT_TRUE(v.ok) << v.mismatch;
  // The costs are the tile kernels' times their tiles.
  int64_t tiles = 0;
  for (const PartStats& p : r.stats.parts)
    tiles += static_cast<int64_t>(p.copies);
  EXPECT_EQ(tiles, (128 / r.schedule->tile[0]) * (128 / r.schedule->tile[1]));
}

// Every schedule of a small space, in both loop orders, with a fused bias epilogue: all verify,
// and the schedule compiled is the one given.
TEST(Tiling, GivenSchedulesAreCompiledAsGivenAndVerify) {
  auto kernel = hlo::parseModule(gemm(64, 32, 96, /*bias=*/true), "gemm_bias.hlo");
  for (const TileSchedule& s : {tiles({16, 16}, {0, 1}), tiles({16, 32}, {1, 0}),
                                tiles({32, 48}, {0, 1}), tiles({64, 16}, {1, 0})}) {
    CompileResult r = compile(gemmini(), *kernel, options(s));
    ASSERT_TRUE(r.schedule);
    EXPECT_EQ(*r.schedule, s);
    VerifyReport v = verify(gemmini(), *kernel, r.program, {.sets = 2, .seed = 11});
    EXPECT_TRUE(v.ok) << s.json() << v.mismatch;
  }
}

// The other emitters keep the loops' meaning: JSON nests them, the Python kernel unrolls them.
TEST(Tiling, JsonNestsTheLoopsAndPythonUnrollsThem) {
  auto kernel = hlo::parseModule(gemm(64, 16, 96), "gemm.hlo");
  CompileResult r = compile(gemmini(), *kernel, options(tiles({16, 16}, {0, 1})));
  const std::string json = emitJson(gemmini(), r.program, {});
  EXPECT_NE(json.find(R"({"loop": "t0", "from": 0, "to": 4, "body": [)"), std::string::npos);
  EXPECT_NE(json.find(R"("hbm_addr": "1536*t0 + 16*t1 + 2560")"), std::string::npos) << json;
  const std::string py = emitPython(gemmini(), r.program);
  size_t stores = 0;
  for (size_t at = py.find("api.mvout_spad("); at != std::string::npos;
       at = py.find("api.mvout_spad(", at + 1))
    ++stores;
  EXPECT_EQ(stores, 24u);  // one per tile
  EXPECT_NE(py.find("api.mvout_spad(rows=16, stride=96, hbm_addr=7248, sp_addr=0)"),
            std::string::npos);  // the last tile: 2560 + 1536*3 + 16*5
}

// A contraction longer than a few unit depths is a loop: each output tile's partial sums stay on
// chip (an accumulator buffer of the spec) from its first block to its last.
TEST(Tiling, ContractionStepsCarryTheAccumulatorOnChip) {
  auto kernel = hlo::parseModule(gemm(128, 128, 128), "gemm.hlo");
  CompileResult r = compile(gemmini(), *kernel, options());
  ASSERT_TRUE(r.schedule);
  EXPECT_EQ(r.schedule->contraction, 16);
  EXPECT_EQ(r.schedule->buffers, 4);
  const std::string text = oracle::printProgram(gemmini(), r.program);
  // Six middle steps: one group of four copies (a loop of one iteration: its body, inlined), then
  // two; with the first and the last, eight products per tile.
  EXPECT_EQ(text.find("loop k"), std::string::npos) << text;
  size_t products = 0;
  for (size_t at = text.find("matmul_os_"); at != std::string::npos;
       at = text.find("matmul_os_", at + 1))
    ++products;
  EXPECT_EQ(products, 8u) << text;
  EXPECT_LT(lines(text), 40u) << text;
  VerifyReport v = verify(gemmini(), *kernel, r.program, {.sets = 1, .seed = 5});
  EXPECT_TRUE(v.ok) << v.mismatch;
  // Every accumulator the space offers (the array's register and the accumulator rows), given;
  // a fused bias epilogue with the sums in the accumulator rows (the array's register is where
  // Gemmini's bias loads go: an accumulator there leaves the bias nowhere to be added).
  auto small = hlo::parseModule(gemm(32, 64, 48), "gemm.hlo");
  auto with_bias = hlo::parseModule(gemm(32, 64, 48, /*bias=*/true), "gemm_bias.hlo");
  for (const auto& [k, acc] :
       {std::pair{&small, "bias"}, std::pair{&small, "acc"}, std::pair{&with_bias, "acc"}}) {
    CompileResult c = compile(gemmini(), **k, options(TileSchedule{{16, 16}, {1, 0}, 16, acc}));
    VerifyReport w = verify(gemmini(), **k, c.program, {.sets = 2, .seed = 9});
    EXPECT_TRUE(w.ok) << acc << ": " << w.mismatch;
  }
}

// AMX's u8 x s8 GEMM with the weights in the VNNI layout (oneDNN's K1 form) and an s32 row-major
// result: the tile registers hold the partial sums as raw bytes (s32[16,16] as s8[1,16,64]), and a
// 32x32 tile carries them in four registers, each block accumulated in place by tdpbusd; the
// result blocks leave through pitched tile stores.
std::string amxGemm(int64_t m, int64_t k, int64_t n) {
  auto t = [](int64_t a, int64_t b) {
    return "[" + std::to_string(a) + "," + std::to_string(b) + "]";
  };
  std::ostringstream s;
  s << "HloModule amx_gemm, entry_computation_layout={(u8" << t(m, k) << "{1,0}, s8" << t(n, k)
    << "{1,0:T(16,4)})->s32" << t(m, n) << "{1,0}}\n\nENTRY main {\n"
    << "  a = u8" << t(m, k) << "{1,0} parameter(0)\n"
    << "  b = s8" << t(n, k) << "{1,0:T(16,4)} parameter(1)\n"
    << "  wa = s32" << t(m, k) << " convert(a)\n  wb = s32" << t(n, k) << " convert(b)\n"
    << "  ROOT c = s32" << t(m, n)
    << " dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}\n";
  return s.str();
}

// oneDNN's quantised layer: the GEMM's s32 tile leaves the tile registers through memory (HBM
// scratch), its rows are converted, scaled, biased, ReLU'd and requantised on AVX-512, and each
// row of the u8 window is one plain 16-byte store (no pitched store exists for zmm rows): a
// window's contiguous runs are written by whatever produces exactly their bytes.
std::string amxLayer(int64_t m, int64_t k, int64_t n) {
  auto t = [](int64_t a, int64_t b) {
    return "[" + std::to_string(a) + "," + std::to_string(b) + "]";
  };
  const std::string f = "f32" + t(m, n);
  std::ostringstream s;
  s << "HloModule amx_layer, entry_computation_layout={(u8" << t(m, k) << "{1,0}, s8" << t(n, k)
    << "{1,0:T(16,4)}, f32[" << n << "]{0})->u8" << t(m, n) << "{1,0}}\n\nENTRY main {\n"
    << "  a = u8" << t(m, k) << "{1,0} parameter(0)\n"
    << "  b = s8" << t(n, k) << "{1,0:T(16,4)} parameter(1)\n"
    << "  bias = f32[" << n << "]{0} parameter(2)\n"
    << "  wa = s32" << t(m, k) << " convert(a)\n  wb = s32" << t(n, k) << " convert(b)\n"
    << "  acc = s32" << t(m, n)
    << " dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
    << "  accf = " << f << " convert(acc)\n  scale = f32[] constant(0.125)\n"
    << "  scales = " << f << " broadcast(scale), dimensions={}\n"
    << "  scaled = " << f << " multiply(accf, scales)\n"
    << "  biases = " << f << " broadcast(bias), dimensions={1}\n"
    << "  biased = " << f << " add(scaled, biases)\n"
    << "  zero = f32[] constant(0)\n  top = f32[] constant(255)\n"
    << "  zeros = " << f << " broadcast(zero), dimensions={}\n"
    << "  relu = " << f << " maximum(biased, zeros)\n"
    << "  clamped = " << f << " clamp(zero, relu, top)\n"
    << "  rounded = " << f << " round-nearest-even(clamped)\n"
    << "  ROOT q = u8" << t(m, n) << " convert(rounded)\n}\n";
  return s.str();
}

TEST(Tiling, AmxLayerRunsItsEpilogueOnEachTile) {
  static const taidl::Isa amx = taidl::loadIsaFile(testing::sourceDir() + "/isa/amx.taidl");
  auto kernel = hlo::parseModule(amxLayer(64, 128, 64), "amx_layer.hlo");
  CompileResult r = compile(amx, *kernel, options(tiles({16, 32}, {0, 1})));
  ASSERT_TRUE(r.schedule);
  const std::string text = oracle::printProgram(amx, r.program);
  EXPECT_NE(text.find("loop t1 in [0, 2)"), std::string::npos) << text;
  EXPECT_NE(text.find("mm512_cvt_i8_store("), std::string::npos) << text;
  VerifyReport v = verify(amx, *kernel, r.program, {.sets = 2, .seed = 12});
  EXPECT_TRUE(v.ok) << v.mismatch;
}

TEST(Tiling, AmxGemmKeepsItsSumsInTileRegisters) {
  static const taidl::Isa amx = taidl::loadIsaFile(testing::sourceDir() + "/isa/amx.taidl");
  auto kernel = hlo::parseModule(amxGemm(256, 512, 128), "amx_gemm.hlo");
  CompileResult r = compile(amx, *kernel, options());
  ASSERT_TRUE(r.schedule);
  EXPECT_EQ(r.schedule->accumulator, "tiles");
  EXPECT_EQ(r.schedule->contraction, 64);
  EXPECT_EQ(r.schedule->tile, (std::vector<int64_t>{32, 32}));
  const std::string text = oracle::printProgram(amx, r.program);
  EXPECT_LT(lines(text), 60u) << text;
  EXPECT_NE(text.find("tilestored_pitched(pitch=512"), std::string::npos) << text;
  // Per 32x32 tile and K block: two A rows of tiles, two B column tiles, four tdpbusd into the
  // four accumulator registers, which no load overwrites.
  size_t in_loop = text.find("loop k in [0, 6)");
  ASSERT_NE(in_loop, std::string::npos) << text;
  const std::string body = text.substr(in_loop, text.find('}', in_loop) - in_loop);
  size_t products = 0, loads = 0;
  for (size_t at = body.find("tdpbusd("); at != std::string::npos;
       at = body.find("tdpbusd(", at + 1))
    ++products;
  for (size_t at = body.find("tileloadd"); at != std::string::npos;
       at = body.find("tileloadd", at + 1))
    ++loads;
  EXPECT_EQ(products, 4u) << body;
  EXPECT_EQ(loads, 4u) << body;
  VerifyReport v = verify(amx, *kernel, r.program, {.sets = 2, .seed = 7});
  EXPECT_TRUE(v.ok) << v.mismatch;
  // A 16x16 tile with one register of sums, given.
  CompileResult one = compile(amx, *kernel, options(TileSchedule{{16, 16}, {1, 0}, 64, "tiles"}));
  VerifyReport w = verify(amx, *kernel, one.program, {.sets = 1, .seed = 8});
  EXPECT_TRUE(w.ok) << w.mismatch;
  EXPECT_GT(one.costs.spec, r.costs.spec);  // it reloads A and B for every 16x16 tile
  // Three copies of its A and B registers (the sums' register stays): each K step loads into
  // registers the previous steps' tdpbusd do not read, so the loads run ahead of the TMUL.
  TileSchedule three{{16, 16}, {1, 0}, 64, "tiles"};
  three.buffers = 3;
  CompileResult rotated = compile(amx, *kernel, options(three));
  VerifyReport x = verify(amx, *kernel, rotated.program, {.sets = 1, .seed = 9});
  EXPECT_TRUE(x.ok) << x.mismatch;
  const std::string rotated_text = oracle::printProgram(amx, rotated.program);
  EXPECT_NE(rotated_text.find("tdpbusd(dst=0, src1=5, src2=6)"), std::string::npos) << rotated_text;
  EXPECT_LT(programCycles(amx, rotated.program), programCycles(amx, one.program));
}

// Multiple buffering: copy c of a middle step's scratchpad data lies c extents past the first, so
// a step's loads need not wait for the previous step's compute. Every number of copies computes
// the kernel, and the timing model says what it buys: with one copy each step's loads wait for
// the compute on the same rows (write after read), with more they run ahead.
// AMX has no f32 dot unit, so an f32 GEMM's contraction splits one product per step without
// --reassociate (an exact chain): each step is a rank-1 update (broadcast, multiply, add) onto
// sums kept in zmm registers, and the program computes the kernel itself. Checked on signed zeros,
// subnormals, an infinity and NaN payloads, each dot meeting at most one NaN: a compiled program
// may return either NaN when both operands of an add or multiply are NaN (docs/numerics.md).
TEST(Tiling, AnAmxF32GemmSplitsItsSumOneProductPerStepExactly) {
  static const taidl::Isa amx = taidl::loadIsaFile(testing::sourceDir() + "/isa/amx.taidl");
  auto kernel = hlo::parseModule(R"(HloModule f
ENTRY main {
  a = f32[16,8] parameter(0)
  b = f32[8,32] parameter(1)
  ROOT d = f32[16,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
                                 "f32_gemm.hlo");
  TileSchedule s = tiles({2, 16}, {0, 1});
  s.contraction = 1;
  s.accumulator = "zmm";
  CompileResult r = compile(amx, *kernel, options(s));
  ASSERT_TRUE(r.schedule);
  EXPECT_EQ(r.schedule->contraction, 1);
  EXPECT_FALSE(r.computes);  // the kernel itself, not a re-association of it
  EXPECT_FALSE(r.schedule->reassociate);
  const uint32_t b_bits[] = {0x00000000, 0x80000000, 0x00000001, 0x80000003, 0x7f800000,
                             0x3f800000, 0xbf800000, 0x4b800001, 0x33800000, 0xbeaaaaab};
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    // A: positive, subnormals among them (no product is -inf, so no sum is inf - inf); B: any
    // sign, zeros of both signs, +inf, and NaNs with payloads in one row only.
    hlo::Literal a(kernel->entry()->parameter(0)->shape()),
        b(kernel->entry()->parameter(1)->shape());
    uint64_t x = seed;
    auto next = [&] { return (x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
    for (uint32_t& v : a.data<uint32_t>())
      v = next() % 5 == 0 ? 0x00000007
                          : std::bit_cast<uint32_t>(1.0f + static_cast<float>(next() % 97) / 8.0f);
    std::span<uint32_t> bv = b.data<uint32_t>();
    const int64_t nan_row = static_cast<int64_t>(seed % 8);
    for (size_t i = 0; i < bv.size(); ++i) {
      const uint64_t v = next();
      bv[i] = static_cast<int64_t>(i / 32) == nan_row && v % 3 == 0
                  ? (v % 2 ? 0x7fc12345 : 0xffc00009)
              : v % 4 == 0 ? b_bits[(v / 4) % std::size(b_bits)]
                           : std::bit_cast<uint32_t>(
                                 static_cast<float>(static_cast<int64_t>(v % 2001) - 1000) / 64.0f);
    }
    const hlo::Literal* in[] = {&a, &b};
    std::vector<hlo::Literal> got = runKernelProgram(amx, *kernel, r.program, in);
    ASSERT_EQ(got.size(), 1u);
    std::vector<hlo::Literal> args;
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    EXPECT_TRUE(got[0].bitwiseEqual(hlo::evaluate(*kernel, args))) << "seed " << seed;
  }
  // Without a dot of its own the ISA gives a float GEMM no deeper step to re-associate into.
  EXPECT_FALSE(tiling::deepFloatContraction(isel::Target(amx), *kernel));
}

TEST(Tiling, MultipleBuffersVerifyAndOverlapLoadsWithCompute) {
  auto kernel = hlo::parseModule(gemm(64, 256, 64), "gemm.hlo");
  std::vector<int64_t> cycles;
  for (int64_t copies : {1, 2, 3, 4}) {
    TileSchedule s{{16, 16}, {0, 1}, 16, "bias"};
    s.buffers = copies;
    CompileResult r = compile(gemmini(), *kernel, options(s));
    ASSERT_TRUE(r.schedule);
    EXPECT_EQ(r.schedule->buffers, copies);
    VerifyReport v = verify(gemmini(), *kernel, r.program, {.sets = 2, .seed = 13});
    EXPECT_TRUE(v.ok) << copies << ": " << v.mismatch;
    cycles.push_back(programCycles(gemmini(), r.program));
    // Copy c's loads go c * 32 rows further (an A and a B tile per copy).
    const std::string text = oracle::printProgram(gemmini(), r.program);
    EXPECT_NE(text.find("sp_addr=" + std::to_string(32 * (copies - 1)) + ")"), std::string::npos)
        << text;
  }
  for (size_t i = 1; i < cycles.size(); ++i)
    EXPECT_LT(cycles[i], cycles[i - 1]) << "copies " << i + 1;
}

TEST(Tiling, SmallKernelsAndNoTilingCompileWhole) {
  auto small = hlo::parseModule(gemm(32, 16, 32), "small.hlo");
  EXPECT_FALSE(compile(gemmini(), *small, options()).schedule);
  auto large = hlo::parseModule(gemm(16, 16, 512), "wide.hlo");  // 32 unit tiles
  CompileOptions whole = options();
  whole.tiling = false;
  CompileResult r = compile(gemmini(), *large, whole);
  EXPECT_FALSE(r.schedule);
  EXPECT_TRUE(verify(gemmini(), *large, r.program).ok);
  EXPECT_TRUE(compile(gemmini(), *large, options()).schedule);
}

TEST(Tiling, AScheduleThatDoesNotFitIsADiagnostic) {
  auto kernel = hlo::parseModule(gemm(64, 16, 64), "gemm.hlo");
  auto message = [&](TileSchedule s) {
    CompileOptions o;
    o.schedule.emplace(std::move(s));
    try {
      compile(gemmini(), *kernel, o);
    } catch (const DiagnosticError& e) {
      return e.diagnostic().message;
    }
    return std::string("compiled");
  };
  EXPECT_NE(message(tiles({16}, {0})).find("one tile size and one loop per result dimension"),
            std::string::npos);
  EXPECT_NE(message(tiles({16, 80}, {0, 1})).find("tile size 80 of dimension 1 is not in [1, 64]"),
            std::string::npos);
  EXPECT_NE(message(tiles({16, 16}, {1, 1})).find("not a permutation"), std::string::npos);
  EXPECT_NE(message(TileSchedule{{16, 16}, {0, 1}, 48, "acc"}).find("not two or more blocks of 48"),
            std::string::npos);
  EXPECT_NE(message(TileSchedule{{16, 16}, {0, 1}, 8, "psum"}).find("has no buffer 'psum'"),
            std::string::npos);
}

TEST(TileSchedule, RoundTripsAndRejectsWhatIsNotOne) {
  TileSchedule s = tiles({32, 16}, {1, 0});
  EXPECT_EQ(TileSchedule::parse(s.json(), "s.json"), s);
  TileSchedule k{{16, 16}, {0, 1}, 64, "acc"};
  EXPECT_EQ(TileSchedule::parse(k.json(), "s.json"), k);
  k.buffers = 3;
  EXPECT_NE(k.json().find("\"buffers\": 3"), std::string::npos);
  EXPECT_EQ(TileSchedule::parse(k.json(), "s.json"), k);
  auto message = [](const std::string& text) {
    try {
      TileSchedule::parse(text, "s.json");
    } catch (const DiagnosticError& e) {
      return e.diagnostic().str();
    }
    return std::string("parsed");
  };
  EXPECT_NE(message("{\"tile\": [16,\n 16}").find("s.json:2:"), std::string::npos);
  EXPECT_NE(message(R"({"tile": [16], "order": [0], "unroll": 2})").find("unknown schedule member"),
            std::string::npos);
  EXPECT_NE(message(R"({"tile": [16.5], "order": [0]})").find("not an integer"), std::string::npos);
  EXPECT_NE(message(R"({"order": [0]})").find("needs \"tile\""), std::string::npos);
  EXPECT_NE(message(R"({"tile": [16], "order": [0], "accumulator": "acc"})")
                .find("\"accumulator\" without \"contraction\""),
            std::string::npos);
  EXPECT_NE(
      message(R"({"tile": [16], "order": [0], "contraction": 16})").find("needs \"accumulator\""),
      std::string::npos);
  for (const char* bad : {"0", "9", "\"two\""})
    EXPECT_NE(message(std::string(R"({"tile": [16], "order": [0], "buffers": )") + bad + "}")
                  .find("\"buffers\" is a number of copies in [1, 8]"),
              std::string::npos)
        << bad;
}

}  // namespace
}  // namespace tacit::backend
