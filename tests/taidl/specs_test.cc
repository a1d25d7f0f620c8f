// The shipped specs (isa/*.taidl): each loads without errors, round-trips through the printer,
// and every selectable unit instantiates to verified HLO at the bounds of its alpha ranges.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/paths.h"
#include "hlo/verifier.h"
#include "taidl/symbolic.h"
#include "test_util.h"

namespace tacit::taidl {
namespace {

std::vector<std::string> shippedSpecs() {
  std::vector<std::string> out;
  std::string dir = tacit::testing::sourceDir() + "/isa";
  if (!std::filesystem::exists(dir)) return out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".taidl") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Instantiates every case of a selectable unit at the low and high ends of its alpha ranges
// (where they are bounded) and verifies the HLO.
void instantiateAtBounds(const Isa& isa, const Semantics& s, const std::vector<AlphaRange>& ranges,
                         const std::string& unit) {
  if (!s.selectable) return;
  for (bool high : {false, true}) {
    std::vector<int64_t> alpha;
    bool ok = true;
    for (const AlphaRange& r : ranges) {
      if (!r.bounded()) ok = false;
      // The high end is kept near the low one: large alpha values make large constants.
      alpha.push_back(high ? std::min(r.range.hi, r.range.lo + 3) : r.range.lo);
    }
    if (!ok) continue;
    for (const SymCase& c : s.cases) {
      // The point must satisfy the case's constraints on alpha (its path conditions included).
      bool feasible = true;
      for (const Expr& p : c.constraints) {
        if (!p.uses(RefKind::kBeta))
          feasible = feasible && evalExpr(p, EvalEnv{alpha, {}, {}}) != 0;
      }
      if (!feasible) continue;
      SCOPED_TRACE(unit);
      std::unique_ptr<hlo::HloModule> m = instantiate(isa, c, alpha);
      hlo::verifyModule(*m);
      EXPECT_EQ(m->entry()->parameterCount(), static_cast<int64_t>(c.inputs.size()));
    }
  }
}

void checkSpec(const std::string& path, const ParamOverrides& overrides) {
  SCOPED_TRACE(path);
  std::string text = readFile(path);
  DiagnosticSink warnings;
  Isa isa = loadIsa(text, path, overrides, &warnings);
  EXPECT_FALSE(warnings.hasErrors());
  std::string printed = printIsa(isa);
  Isa again = loadIsa(printed, "printed.taidl", {}, nullptr);
  EXPECT_EQ(printIsa(again), printed);
  EXPECT_EQ(again.instructions.size(), isa.instructions.size());
  for (size_t i = 0; i < isa.instructions.size(); ++i) {
    instantiateAtBounds(isa, isa.instruction_semantics[i], isa.instruction_ranges[i],
                        isa.instructions[i].name.text);
    EXPECT_EQ(isa.instruction_semantics[i].selectable, again.instruction_semantics[i].selectable);
  }
  for (size_t i = 0; i < isa.macros.size(); ++i)
    instantiateAtBounds(isa, isa.macro_semantics[i], isa.macro_ranges[i], isa.macros[i].name.text);
}

TEST(ShippedSpecs, EveryOneLoadsAndRoundTrips) {
  std::vector<std::string> specs = shippedSpecs();
  if (specs.empty()) GTEST_SKIP() << "no isa/*.taidl in this checkout";
  for (const std::string& path : specs)
    checkSpec(path, {});
}

TEST(ShippedSpecs, GemminiAtEveryDim) {
  std::string path = tacit::testing::sourceDir() + "/isa/gemmini.taidl";
  if (!fileExists(path)) GTEST_SKIP() << "no isa/gemmini.taidl";
  for (int64_t dim : {16, 64, 256}) {
    SCOPED_TRACE(dim);
    checkSpec(path, {{"DIM", dim}});
    Isa isa = loadIsaFile(path, {{"DIM", dim}});
    const Buffer& sp = isa.buffers[static_cast<size_t>(isa.findBuffer("sp"))];
    EXPECT_EQ(sp.access, (std::vector<int64_t>{1024 * dim}));
    EXPECT_EQ(sp.unit, (std::vector<int64_t>{dim}));
    int32_t os = isa.findMacro("matmul_os");
    ASSERT_GE(os, 0);
    EXPECT_TRUE(isa.macro_semantics[static_cast<size_t>(os)].selectable)
        << isa.macro_semantics[static_cast<size_t>(os)].reason;
  }
}

TEST(ShippedSpecs, QkvAlphaRanges) {
  std::string path = tacit::testing::sourceDir() + "/isa/qkv.taidl";
  if (!fileExists(path)) GTEST_SKIP() << "no isa/qkv.taidl";
  Isa isa = loadIsaFile(path);
  auto range = [&](const std::string& inst) {
    return isa.instruction_ranges[static_cast<size_t>(isa.findInstruction(inst))][0].range;
  };
  EXPECT_EQ(range("load_rm"), (Interval{1, 128}));
  EXPECT_EQ(range("load_cm"), (Interval{64, 64}));
  EXPECT_EQ(range("mov"), (Interval{1, 64}));
  for (const Semantics& s : isa.instruction_semantics)
    EXPECT_TRUE(s.selectable) << s.reason;
}

}  // namespace
}  // namespace tacit::taidl
