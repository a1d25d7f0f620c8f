#include "alloc/allocator.h"

#include <gtest/gtest.h>

#include "alloc/schedule.h"
#include "common/paths.h"
#include "hlo/parser.h"
#include "isel/selector.h"
#include "isel/storage.h"
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
  std::unique_ptr<isel::Target> target;
  std::unique_ptr<isel::Selector> selector;
  isel::PiiGraph graph;
  AllocResult alloc;
};

std::unique_ptr<Compiled> compileFirst(const std::string& isa_file,
                                       const std::string& kernel_file) {
  auto c = std::make_unique<Compiled>();
  c->isa = taidl::loadIsaFile(path(isa_file));
  c->kernel = hlo::parseModule(readFile(path(kernel_file)), path(kernel_file));
  c->target = std::make_unique<isel::Target>(c->isa);
  c->selector = std::make_unique<isel::Selector>(*c->target, *c->kernel);
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

// An input padded with undefined rows to the rows a load moves (dot-pad-rows on Gemmini): the root
// holding both is the input alone for interference, so the padding may lie on the next input.
TEST(Allocator, UndefinedRowsBesideAnInputHoldNothing) {
  auto c = compileFirst("isa/gemmini.taidl", "examples/gemmini/matmul_8x16.hlo");
  ASSERT_EQ(c->alloc.status, AllocStatus::kAllocated) << c->alloc.reason;
  isel::Storage storage = isel::buildStorage(c->isa, c->graph);
  Order order = sethiUllmanOrder(c->isa, c->graph, storage);
  StoragePieces pieces =
      storagePieces(c->graph, storage, order, liveIntervals(c->graph, storage, order));
  int padded_roots = 0;
  for (size_t i = 0; i < storage.roots.size(); ++i) {
    const int32_t root = storage.roots[i];
    bool has_undef = false, has_input = false;
    for (size_t v = 0; v < c->graph.values.size(); ++v) {
      if (storage.root[v] != root) continue;
      int32_t p = c->graph.values[v].producer;
      isel::PiiKind kind = c->graph.nodes[static_cast<size_t>(p)].kind;
      has_undef |= kind == isel::PiiKind::kUndef;
      has_input |= kind == isel::PiiKind::kInput;
    }
    if (!has_undef || !has_input) continue;
    ++padded_roots;
    ASSERT_EQ(pieces[i].size(), 1u);
    EXPECT_TRUE(pieces[i][0].held);
    EXPECT_NE(pieces[i][0].value, root);
    for (auto [a, b] : interference(c->graph, storage, pieces)) {
      EXPECT_NE(a, root);
      EXPECT_NE(b, root);
    }
  }
  EXPECT_EQ(padded_roots, 1) << c->graph.str(c->isa, c->selector->units());
}

}  // namespace
}  // namespace tacit::alloc
