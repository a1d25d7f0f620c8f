// Rematerialisation (alloc/remat.h): the choice at a scratchpad overflow, the graph surgery, and
// the property that matters — every rewritten graph, placed and run on the oracle, computes what
// the HLO evaluator computes, bit for bit.
#include "alloc/remat.h"

#include <gtest/gtest.h>

#include "alloc/allocator.h"
#include "backend/emit.h"
#include "backend/verify.h"
#include "common/paths.h"
#include "hlo/parser.h"
#include "isel/selector.h"
#include "support/source.h"

namespace tacit::alloc {
namespace {

// A [128,64]x[64,64] product on QKV: the first candidate loads all of A (128 rows, all of d1)
// and views its halves, so B (64 rows) never fits next to it; one narrowed load per half does.
constexpr const char* kTallProduct = R"(HloModule tall
ENTRY main {
  a = bf16[128,64] parameter(0)
  b = bf16[64,64] parameter(1)
  ROOT c = bf16[128,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

struct Phase1 {
  taidl::Isa isa;
  std::unique_ptr<hlo::HloModule> kernel;
  std::unique_ptr<isel::Target> target;
  std::unique_ptr<isel::Selector> selector;
  std::unique_ptr<isel::CandidateExtractor> extractor;
};

std::unique_ptr<Phase1> phase1(const std::string& isa_file, const std::string& text,
                               const std::string& name) {
  auto p = std::make_unique<Phase1>();
  p->isa = taidl::loadIsaFile(testing::sourceDir() + "/" + isa_file);
  p->kernel = hlo::parseModule(text, name);
  p->target = std::make_unique<isel::Target>(p->isa);
  p->selector = std::make_unique<isel::Selector>(*p->target, *p->kernel);
  p->selector->saturate();
  p->extractor = p->selector->extractor({});
  return p;
}

std::unique_ptr<Phase1> phase1File(const std::string& isa_file, const std::string& kernel_file) {
  std::string path = testing::sourceDir() + "/" + kernel_file;
  return phase1(isa_file, readFile(path), path);
}

size_t callsOf(const Phase1& p, const isel::PiiGraph& g, const std::string& unit, int64_t n) {
  size_t count = 0;
  for (const isel::PiiNode& node : g.nodes) {
    count += node.kind == isel::PiiKind::kCall &&
             p.selector->units().units[static_cast<size_t>(node.unit)].name == unit &&
             !node.alpha.empty() && node.alpha[0] == n;
  }
  return count;
}

bool topological(const isel::PiiGraph& g) {
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int32_t o : g.nodes[n].operands) {
      if (g.values[static_cast<size_t>(o)].producer >= static_cast<int32_t>(n)) return false;
    }
    for (int32_t o : g.nodes[n].outputs) {
      if (g.values[static_cast<size_t>(o)].producer != static_cast<int32_t>(n)) return false;
    }
  }
  return true;
}

// Places `g` (with further duplications if it needs them) and runs it on the oracle against the
// evaluator. Returns false if it cannot be placed; a placed graph that computes something else
// fails the test.
bool placedAndExact(const Phase1& p, const isel::PiiGraph& g, uint64_t seed) {
  AllocOptions options;
  options.solver_time_limit = std::chrono::milliseconds(500);
  AllocResult placed = allocate(p.isa, p.selector->units(), g, p.selector->kernel(), options);
  if (placed.status != AllocStatus::kAllocated) return false;
  const isel::PiiGraph& final_graph = placed.graph(g);
  oracle::Program program = backend::buildProgram(p.isa, p.selector->units(), final_graph, placed,
                                                  p.selector->kernel(), p.kernel->name(), 1);
  backend::VerifyReport r = backend::verify(p.isa, *p.kernel, program, {.sets = 2, .seed = seed});
  EXPECT_TRUE(r.ok) << r.mismatch << "\n" << final_graph.str(p.isa, p.selector->units());
  return true;
}

TEST(Remat, RescuesCandidatesOfATallProductThatDoNotFitOtherwise) {
  // Without rematerialisation the candidates that load all of A are dropped; with it they are
  // placed (as one narrowed load per half), and no candidate placed without it is lost.
  auto p = phase1("isa/qkv.taidl", kTallProduct, "tall.hlo");
  AllocOptions without;
  without.max_remat_rounds = 0;
  size_t rescued = 0;
  for (size_t c = 0; c < 12; ++c) {
    std::optional<isel::PiiGraph> g = p->extractor->next();
    if (!g) break;
    AllocResult no = allocate(p->isa, p->selector->units(), *g, p->selector->kernel(), without);
    AllocResult yes = allocate(p->isa, p->selector->units(), *g, p->selector->kernel());
    if (no.status == AllocStatus::kAllocated) {
      EXPECT_EQ(yes.status, AllocStatus::kAllocated) << "candidate " << c << ": " << yes.reason;
      continue;
    }
    if (yes.status != AllocStatus::kAllocated) {
      EXPECT_NE(yes.reason.find("rematerialisations"), std::string::npos) << yes.reason;
      continue;
    }
    ++rescued;
    ASSERT_TRUE(yes.rewritten);
    EXPECT_GE(yes.rematerialised, 1u);
    const isel::PiiGraph& r = *yes.rewritten;
    EXPECT_TRUE(topological(r));
    if (callsOf(*p, *g, "load_rm", 128) == 1) {
      EXPECT_EQ(callsOf(*p, r, "load_rm", 128), 0u) << r.str(p->isa, p->selector->units());
    }
    EXPECT_TRUE(placedAndExact(*p, r, 7 + c)) << r.str(p->isa, p->selector->units());
  }
  EXPECT_GE(rescued, 1u);
}

TEST(Remat, TheChoiceIsTheCheapestDuplicationAtTheFirstOverflow) {
  auto p = phase1("isa/qkv.taidl", kTallProduct, "tall.hlo");
  isel::PiiGraph g = *p->extractor->next();
  isel::Storage storage = isel::buildStorage(p->isa, g);
  Order order = sethiUllmanOrder(p->isa, g, storage);
  std::vector<Interval> live = liveIntervals(g, storage, order);
  std::optional<Peak> peak =
      firstOverflow(p->isa, g, storage, storagePieces(g, storage, order, live));
  ASSERT_TRUE(peak);
  EXPECT_EQ(p->isa.buffers[static_cast<size_t>(peak->buffer)].name.text, "d1");
  EXPECT_EQ(peak->load, 192);
  // With one unit of cost per call, splitting A by region adds one load; copying B per reader
  // adds one too but B is the smaller group, so A (the larger) is split.
  std::optional<Rematerialisation> r =
      chooseRematerialisation(p->isa, p->selector->units(), g, storage, live, *peak, nullptr);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->kind, SplitKind::kByRegion);
  EXPECT_EQ(r->added_cost, 1);
  EXPECT_EQ(storage.extents[static_cast<size_t>(r->root)], std::vector<int64_t>{128});
  // Deterministic: the same graph, the same choice.
  std::optional<Rematerialisation> again =
      chooseRematerialisation(p->isa, p->selector->units(), g, storage, live, *peak, nullptr);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->graph.fingerprint(), r->graph.fingerprint());
}

TEST(Remat, AGroupReadWholeByOneCallIsNotSplit) {
  auto p = phase1File("isa/qkv.taidl", "examples/attention/attention.hlo");
  isel::PiiGraph g = *p->extractor->next();
  isel::Storage storage = isel::buildStorage(p->isa, g);
  size_t recomputable_splits = 0;
  for (int32_t r : storage.roots) {
    for (SplitKind kind : {SplitKind::kByRegion, SplitKind::kByReader}) {
      std::optional<isel::PiiGraph> split =
          splitGroup(p->isa, p->selector->units(), g, storage, r, kind);
      if (!split) continue;
      ++recomputable_splits;
      EXPECT_GT(split->callCount(), g.callCount());
    }
  }
  // Attention's loads of Q, K and V each have one reader that reads all of it.
  EXPECT_EQ(recomputable_splits, 0u) << g.str(p->isa, p->selector->units());
}

// The property: every split of every recomputable group of the first 12 candidates of shipped
// kernels, placed and run on the oracle, equals the evaluator bit for bit.
struct Kernel {
  const char* isa;
  const char* file;  // nullptr: the tall product above
};

class EverySplit : public ::testing::TestWithParam<Kernel> {};

TEST_P(EverySplit, ComputesTheKernel) {
  auto p = GetParam().file ? phase1File(GetParam().isa, GetParam().file)
                           : phase1(GetParam().isa, kTallProduct, "tall.hlo");
  size_t splits = 0, placed = 0;
  for (size_t c = 0; c < 12; ++c) {
    std::optional<isel::PiiGraph> g = p->extractor->next();
    if (!g) break;
    isel::Storage storage = isel::buildStorage(p->isa, *g);
    if (!storage.conflict.empty()) continue;
    for (int32_t r : storage.roots) {
      for (SplitKind kind : {SplitKind::kByRegion, SplitKind::kByReader}) {
        std::optional<isel::PiiGraph> split =
            splitGroup(p->isa, p->selector->units(), *g, storage, r, kind);
        if (!split) continue;
        ++splits;
        ASSERT_TRUE(topological(*split));
        ASSERT_TRUE(isel::buildStorage(p->isa, *split).conflict.empty());
        placed += placedAndExact(*p, *split, 100 + splits);
      }
    }
  }
  std::printf("%s: %zu splits, %zu placed and exact\n",
              GetParam().file ? GetParam().file : "tall product", splits, placed);
  EXPECT_GT(placed, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Shipped, EverySplit,
    ::testing::Values(Kernel{"isa/qkv.taidl", nullptr},
                      Kernel{"isa/gemmini.taidl", "examples/gemmini/mm4_a.hlo"},
                      Kernel{"isa/gemmini.taidl", "examples/gemmini/mm3_add_a.hlo"},
                      Kernel{"isa/amx.taidl", "examples/amx/k1_u8s8_gemm_32x32x64.hlo"}),
    [](const ::testing::TestParamInfo<Kernel>& kernel) {
      // The kernel file's stem ("tall" for the inline product): a stable test name.
      std::string stem = kernel.param.file ? kernel.param.file : "tall";
      stem = stem.substr(stem.rfind('/') + 1);
      return stem.substr(0, stem.find('.'));
    });

}  // namespace
}  // namespace tacit::alloc
