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

}  // namespace
}  // namespace tacit::isel
