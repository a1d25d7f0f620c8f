// The HTML compile report (backend/report.h): its timeline is the allocation the solver found —
// one rectangle per live storage root, and no two rectangles of a buffer overlap in both their
// live range and their addresses (what a valid allocation means) — and the page holds every
// section, the candidates of the search and the pictures.
#include "backend/report.h"

#include <gtest/gtest.h>

#include "alloc/schedule.h"
#include "common/paths.h"
#include "hlo/parser.h"
#include "isel/storage.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::backend {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

struct Case {
  const char* spec;
  const char* kernel;
};

class Report : public ::testing::TestWithParam<Case> {};

TEST_P(Report, TheTimelineIsAValidAllocationAndThePageHasEverySection) {
  const taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/" + GetParam().spec);
  const std::string path = testing::sourceDir() + "/" + GetParam().kernel;
  const std::string text = readFile(path);
  auto kernel = hlo::parseModule(text, path);
  const isel::Target target(isa);
  CompileResult r = compile(target, *kernel, {});
  const bool tiled = !r.stats.tiling.empty();
  const std::vector<TimelineRect> rects = memoryTimeline(isa, r, tiled);
  // Every storage root with a live range is drawn once.
  const isel::Storage storage = isel::buildStorage(isa, r.graph);
  const std::vector<alloc::Interval> live =
      alloc::liveIntervals(r.graph, storage, r.allocation.order, tiled);
  size_t expected = 0;
  for (int32_t root : storage.roots)
    expected += live[static_cast<size_t>(root)].empty() ? 0 : 1;
  EXPECT_EQ(rects.size(), expected);
  for (size_t i = 0; i < rects.size(); ++i) {
    const TimelineRect& a = rects[i];
    const auto& start = r.allocation.placement.start[static_cast<size_t>(a.value)];
    EXPECT_EQ(a.start, start.empty() ? 0 : start[0]);
    for (size_t j = i + 1; j < rects.size(); ++j) {
      const TimelineRect& b = rects[j];
      if (a.buffer != b.buffer) continue;
      const bool in_time = a.begin <= b.end && b.begin <= a.end;
      const bool in_space = a.start < b.start + b.extent && b.start < a.start + a.extent;
      EXPECT_FALSE(in_time && in_space)
          << "values " << a.value << " and " << b.value << " overlap in buffer " << a.buffer;
    }
  }
  const std::string html = htmlReport(target, *kernel, text, r);
  for (const char* id :
       {"summary", "costs", "candidates", "timeline", "graph", "egraph", "kernel", "program"})
    EXPECT_NE(html.find(std::string("<section id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_EQ(count(html, "<rect class=\"value\""), rects.size());
  EXPECT_EQ(count(html, "<tr class=\"candidate\">"), r.stats.candidate_log.size());
  // A piecewise program joins parts, each with its own search: no one log.
  if (r.stats.parts.empty() || tiled) {
    EXPECT_GE(r.stats.candidate_log.size(), 1u);
  } else {
    EXPECT_EQ(count(html, "<tr class=\"part\">"), r.stats.parts.size());
  }
  EXPECT_EQ(count(html, "<g class=\"call\">"), r.allocation.order.size());
  EXPECT_EQ(html.find("<script"), std::string::npos);  // self-contained and static
  for (const char* external : {"<link", "src=\"", "href=\"", "@import", "url("})
    EXPECT_EQ(html.find(external), std::string::npos) << external;  // nothing to fetch
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, Report,
    ::testing::Values(Case{"isa/qkv.taidl", "examples/attention/attention.hlo"},
                      Case{"isa/amx.taidl", "examples/amx/k5_int8_gemm_requantize.hlo"},
                      Case{"isa/gemmini.taidl", "examples/gemmini/matmul.hlo"},
                      Case{"isa/gemmini.taidl", "examples/gemmini/gemm_128x128x128.hlo"}));

}  // namespace
}  // namespace tacit::backend
