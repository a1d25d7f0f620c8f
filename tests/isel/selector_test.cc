#include "isel/selector.h"

#include <gtest/gtest.h>

#include "common/paths.h"
#include "hlo/parser.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::isel {
namespace {

std::string example(const std::string& rel) {
  return testing::sourceDir() + "/" + rel;
}

std::unique_ptr<hlo::HloModule> loadKernel(const std::string& rel) {
  return hlo::parseModule(readFile(example(rel)), example(rel));
}

TEST(Selector, QkvAttentionFirstCandidateIsThePublishedNineInstructions) {
  taidl::Isa isa = taidl::loadIsaFile(example("isa/qkv.taidl"));
  auto kernel = loadKernel("examples/attention/attention.hlo");
  Selector sel(isa, *kernel);
  SaturationStats stats = sel.saturate();
  EXPECT_EQ(stats.stop, SaturationStop::kSaturated);
  auto ex = sel.extractor({});
  auto first = ex->next();
  ASSERT_TRUE(first.has_value()) << "no candidate; " << stats.nodes << " e-nodes, " << stats.piis
                                 << " piis";
  std::string text = first->str(isa, sel.units());
  EXPECT_EQ(first->callCount(), 9u) << text;
  std::vector<std::string> expected = {"load_rm", "load_cm", "gemm", "softmax", "mov",
                                       "load_rm", "gemm",    "mov",  "store_rm"};
  std::multiset<std::string> got;
  for (const PiiNode& n : first->nodes) {
    if (n.kind == PiiKind::kCall) got.insert(sel.units().units[static_cast<size_t>(n.unit)].name);
  }
  EXPECT_EQ(got, std::multiset<std::string>(expected.begin(), expected.end())) << text;
}

TEST(Selector, GemminiLibraryKernelsAndCompositionsAllHaveCandidates) {
  taidl::Isa isa = taidl::loadIsaFile(example("isa/gemmini.taidl"));
  for (const char* k : {"add", "matmul", "mac", "add3", "add4", "mm_add_mm", "mac_add", "mm3",
                        "mm3_add_a", "mm3_add_d", "mm4_a", "mm4_d"}) {
    SCOPED_TRACE(k);
    auto kernel = loadKernel(std::string("examples/gemmini/") + k + ".hlo");
    Selector sel(isa, *kernel);
    SaturationStats stats = sel.saturate();
    EXPECT_EQ(stats.stop, SaturationStop::kSaturated);
    auto first = sel.extractor({})->next();
    ASSERT_TRUE(first.has_value());
    // Intermediates stay on chip: one store to HBM per kernel result.
    size_t stores = 0;
    for (const PiiNode& n : first->nodes) {
      if (n.kind != PiiKind::kCall) continue;
      for (int32_t v : n.outputs)
        stores += first->values[static_cast<size_t>(v)].buffer == 0;
    }
    EXPECT_EQ(stores, 1u) << first->str(isa, sel.units());
  }
}

}  // namespace
}  // namespace tacit::isel
