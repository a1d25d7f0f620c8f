#include "alloc/allocator.h"

#include <gtest/gtest.h>

#include "common/paths.h"
#include "hlo/parser.h"
#include "isel/selector.h"
#include "support/source.h"
#include "support/strings.h"

namespace tacit::alloc {
namespace {

std::string path(const std::string& rel) {
  return testing::sourceDir() + "/" + rel;
}

struct Compiled {
  taidl::Isa isa;
  std::unique_ptr<hlo::HloModule> kernel;
  std::unique_ptr<isel::Selector> selector;
  isel::PiiGraph graph;
  AllocResult alloc;
};

std::unique_ptr<Compiled> compileFirst(const std::string& isa_file,
                                       const std::string& kernel_file) {
  auto c = std::make_unique<Compiled>();
  c->isa = taidl::loadIsaFile(path(isa_file));
  c->kernel = hlo::parseModule(readFile(path(kernel_file)), path(kernel_file));
  c->selector = std::make_unique<isel::Selector>(c->isa, *c->kernel);
  c->selector->saturate();
  auto first = c->selector->extractor({})->next();
  if (!first) return c;
  c->graph = *first;
  c->alloc = allocate(c->isa, c->selector->units(), c->graph, c->selector->kernel());
  return c;
}

std::string listing(const Compiled& c) {
  std::string out;
  for (int32_t n : c.alloc.order) {
    const isel::PiiNode& node = c.graph.nodes[static_cast<size_t>(n)];
    out += c.selector->units().units[static_cast<size_t>(node.unit)].name + "(" +
           join(c.alloc.placement.attrs[static_cast<size_t>(n)], ", ") + ")\n";
  }
  return out;
}

TEST(Allocator, QkvAttentionAllocatesNineInstructions) {
  auto c = compileFirst("isa/qkv.taidl", "examples/attention/attention.hlo");
  ASSERT_EQ(c->alloc.status, AllocStatus::kAllocated) << c->alloc.reason;
  EXPECT_EQ(c->alloc.order.size(), 9u);
  // The result is stored at its HBM offset: inputs 3 x 8 KiB, then the output.
  const isel::PiiNode& last = c->graph.nodes[static_cast<size_t>(c->alloc.order.back())];
  EXPECT_EQ(c->selector->units().units[static_cast<size_t>(last.unit)].name, "store_rm");
  EXPECT_EQ(c->alloc.placement.attrs[static_cast<size_t>(c->alloc.order.back())].back(), 3 * 8192)
      << listing(*c);
  EXPECT_EQ(c->alloc.placement.hbm_bytes, 4 * 8192);
}

TEST(Allocator, GemminiCompositionsAllocate) {
  for (const char* k : {"add", "matmul", "mac", "add3", "mm3", "mm4_d"}) {
    SCOPED_TRACE(k);
    auto c = compileFirst("isa/gemmini.taidl", std::string("examples/gemmini/") + k + ".hlo");
    ASSERT_EQ(c->alloc.status, AllocStatus::kAllocated) << c->alloc.reason;
  }
}

}  // namespace
}  // namespace tacit::alloc
