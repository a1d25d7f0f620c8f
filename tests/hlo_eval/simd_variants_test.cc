// Every SIMD level (support/simd.h) computes the same bytes: the evaluator's integer GEMMs (the
// pair kernels: AVX-512 VNNI, AVX2 vpmaddwd, generic C++), its byte-permuted copies and its
// elementwise runs, on random shapes and on extreme values, compared bit for bit with the generic
// level. The levels this CPU lacks are capped (and the test says so); CI also runs the whole
// evaluator and oracle suites at each level (tests/hlo_eval/CMakeLists.txt).
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "eval_test_util.h"
#include "hlo/parser.h"
#include "hlo_eval/evaluator.h"
#include "hlo_eval/random_literal.h"
#include "support/simd.h"

namespace tacit::hlo {
namespace {

using simd::Level;

// Restores the level the test started with.
class LevelGuard {
 public:
  LevelGuard() : saved_(simd::level()) {}
  ~LevelGuard() { simd::setLevel(saved_); }

 private:
  Level saved_;
};

std::vector<Level> levelsHere() {
  std::vector<Level> out;
  for (Level l : {Level::kGeneric, Level::kAvx2, Level::kAvx512}) {
    if (l <= simd::cpuLevel()) out.push_back(l);
  }
  return out;
}

// Random inputs (seeded).
std::vector<Literal> inputsFor(const EvalPlan& plan, uint64_t seed) {
  std::vector<Literal> out;
  for (const Shape& s : plan.inputShapes())
    out.push_back(randomLiteral(s, seed++));
  return out;
}

// The outputs of `text` at `level` (plan compiled and run at that level).
// (planned at `level`, run at `run_level`: a plan keeps the GEMM path its workspace was made for,
// whatever the level when it runs).
std::vector<std::vector<uint8_t>> runAt(Level level, const std::string& text, uint64_t seed,
                                        std::optional<Level> run_level = std::nullopt) {
  simd::setLevel(level);
  auto module = parseModule(text, "simd.hlo");
  EvalPlan plan = EvalPlan::compile(*module->entry());
  simd::setLevel(run_level.value_or(level));
  std::vector<Literal> inputs = inputsFor(plan, seed);
  std::vector<const void*> input_ptrs;
  for (const Literal& l : inputs)
    input_ptrs.push_back(l.bytes());
  return testing::runPlan(plan, input_ptrs);
}

// Runs `text` at every level here and compares with the generic level.
void expectSameAtEveryLevel(const std::string& text, uint64_t seed) {
  LevelGuard guard;
  const auto want = runAt(Level::kGeneric, text, seed);
  for (Level level : levelsHere()) {
    const auto got = runAt(level, text, seed);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] == want[i]) continue;
      size_t at = 0;
      while (at < got[i].size() && got[i][at] == want[i][at])
        ++at;
      ADD_FAILURE() << "level " << simd::levelName(level) << ": output " << i
                    << " differs from the generic level's first at byte " << at << "\n"
                    << text;
      return;
    }
  }
  // Planned at the CPU's level and run at the generic one: the generic pair kernel.
  EXPECT_EQ(runAt(simd::cpuLevel(), text, seed, Level::kGeneric), want) << text;
}

std::string dotModule(const std::string& a, const std::string& b, int64_t m, int64_t n, int64_t k) {
  auto shape = [](const std::string& t, int64_t r, int64_t c) {
    return t + "[" + std::to_string(r) + "," + std::to_string(c) + "]";
  };
  return "HloModule dot\n\nENTRY main {\n  a = " + shape(a, m, k) +
         " parameter(0)\n  b = " + shape(b, k, n) +
         " parameter(1)\n  ROOT d = " + shape("s32", m, n) +
         " dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
}

TEST(SimdVariants, LevelsParseAndCapAtTheCpu) {
  LevelGuard guard;
  for (Level l : {Level::kGeneric, Level::kAvx2, Level::kAvx512}) {
    EXPECT_EQ(simd::parseLevel(simd::levelName(l)), l);
    EXPECT_EQ(simd::setLevel(l), std::min(l, simd::cpuLevel()));
    EXPECT_EQ(simd::level(), std::min(l, simd::cpuLevel()));
  }
  EXPECT_FALSE(simd::parseLevel("sse2").has_value());
  if (simd::cpuLevel() < Level::kAvx512)
    std::printf("[tacit: this CPU's SIMD level is %s; higher levels are not tested here]\n",
                std::string(simd::levelName(simd::cpuLevel())).c_str());
}

// Random shapes around the kernels' tiles (8 x 32 pair tiles, k blocks of 256, odd k: a half pair).
TEST(SimdVariants, IntegerDotsAreIdenticalAtEveryLevel) {
  std::mt19937_64 rng(2026);
  const std::vector<std::pair<std::string, std::string>> types = {
      {"s8", "s8"}, {"u8", "s8"}, {"s8", "u8"}, {"u8", "u8"}, {"s16", "s16"}, {"s16", "s8"}};
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int t = 0; t < 60; ++t) {
    const auto& [a, b] = types[static_cast<size_t>(t) % types.size()];
    int64_t m = pick(1, 40), n = pick(1, 70), k = pick(1, 70);
    if (t % 10 == 0) k = pick(250, 600);  // several k blocks: sums resume from C
    SCOPED_TRACE(a + " x " + b + " " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                 std::to_string(k));
    expectSameAtEveryLevel(dotModule(a, b, m, n, k), static_cast<uint64_t>(t));
    if (HasFailure()) return;
  }
}

// The extremes: -128 x -128 and -32768 x -32768 pairs (vpmaddwd's one wrapping pair sum).
TEST(SimdVariants, ExtremeProductsWrapAlikeAtEveryLevel) {
  for (const std::string& t : {std::string("s8"), std::string("s16")}) {
    const std::string lo = t == "s8" ? "-128" : "-32768";
    // minimum(parameter, lo) is lo at run time: the evaluator cannot fold it away.
    const std::string text =
        "HloModule dot\n\nENTRY main {\n  c = " + t + "[] constant(" + lo + ")\n  ca = " + t +
        "[16,64] broadcast(c), dimensions={}\n  cb = " + t +
        "[64,40] broadcast(c), dimensions={}\n  p = " + t + "[16,64] parameter(0)\n  q = " + t +
        "[64,40] parameter(1)\n  x = " + t + "[16,64] minimum(p, ca)\n  y = " + t +
        "[64,40] minimum(q, cb)\n  ROOT d = s32[16,40] dot(x, y), lhs_contracting_dims={1}, "
        "rhs_contracting_dims={0}\n}\n";
    expectSameAtEveryLevel(text, 7);
  }
}

// Small transposes and permutes whose inner blocks are at most 64 bytes (the byte-permute copy).
TEST(SimdVariants, BytePermutedCopiesAreIdenticalAtEveryLevel) {
  const std::vector<std::string> copies = {
      "s8[64,16] transpose(s8[16,64] p), dimensions={1,0}",
      "u8[4,16] transpose(u8[16,4] p), dimensions={1,0}",
      "s8[8,2,4] transpose(s8[2,4,8] p), dimensions={2,0,1}",
      "s16[32,8,3] transpose(s16[8,32,3] p), dimensions={1,0,2}",
      "f32[5,3,4] transpose(f32[4,3,5] p), dimensions={2,1,0}",
      "u8[9,7,2,3] transpose(u8[3,2,7,9] p), dimensions={3,2,1,0}",
      "s8[100,6] transpose(s8[6,100] p), dimensions={1,0}",
  };
  for (size_t i = 0; i < copies.size(); ++i) {
    const std::string& c = copies[i];
    // "T[out] transpose(T[in] p), dims" -> a module with parameter p of T[in].
    size_t open = c.find('(') + 1, space = c.find(' ', open);
    std::string in = c.substr(open, space - open);
    std::string text = "HloModule copy\n\nENTRY main {\n  p = " + in +
                       " parameter(0)\n  ROOT t = " + c.substr(0, c.find(' ')) + " transpose(p), " +
                       c.substr(c.find("dimensions")) + "\n}\n";
    SCOPED_TRACE(text);
    expectSameAtEveryLevel(text, i);
  }
}

// Elementwise runs: compiled to native code at avx512, interpreted below it.
TEST(SimdVariants, ElementwiseRunsAreIdenticalAtEveryLevel) {
  const std::string text =
      "HloModule ew\n\nENTRY main {\n  a = f32[64] parameter(0)\n  b = f32[64] parameter(1)\n"
      "  i = s32[64] parameter(2)\n  m = f32[64] multiply(a, b)\n  s = f32[64] add(m, a)\n"
      "  x = f32[64] maximum(s, b)\n  c = s32[64] convert(x)\n  d = s32[64] add(c, i)\n"
      "  e = f32[64] convert(d)\n  ROOT t = (f32[64], s32[64]) tuple(e, d)\n}\n";
  expectSameAtEveryLevel(text, 3);
}

}  // namespace
}  // namespace tacit::hlo
