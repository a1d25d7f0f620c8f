// The cycle model on a real program: Gemmini's tiled matmul conformance kernel through the
// oracle. The report and the Chrome trace are checked against their formats (the trace against
// the Trace Event Format's rules for complete and metadata events), and the timing run computes
// the same outputs as a plain run.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "timing/kernel.h"
#include "timing/timing.h"

namespace tacit::timing {
namespace {

using testing::Kernel;

Kernel tiledMatmul(const taidl::ParamOverrides& params = {}) {
  return testing::shippedKernel("gemmini.taidl", "gemmini/tiled_matmul_os_16_16.tasm", params, 7);
}

TEST(TimingTrace, IsValidTraceEventJson) {
  Kernel r = tiledMatmul();
  Simulator sim(r.isa, {.keep_events = 1000});
  Report report = simulate(r.isa, r.program, r.inputs, &sim);
  std::ostringstream text;
  sim.writeChromeTrace(text);
  nlohmann::json trace = nlohmann::json::parse(text.str());
  ASSERT_TRUE(trace.contains("traceEvents"));
  std::set<int64_t> named_tracks;
  int64_t complete = 0, last_end = 0;
  for (const auto& e : trace["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e;
    std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "thread_name") named_tracks.insert(e["tid"].get<int64_t>());
      ASSERT_TRUE(e["args"].contains("name")) << e;
      continue;
    }
    ASSERT_EQ(ph, "X") << e;
    ASSERT_TRUE(e["ts"].is_number_integer() && e["dur"].is_number_integer()) << e;
    EXPECT_GE(e["dur"].get<int64_t>(), 0) << e;
    EXPECT_TRUE(named_tracks.count(e["tid"].get<int64_t>())) << e;  // names come first
    last_end = std::max(last_end, e["ts"].get<int64_t>() + e["dur"].get<int64_t>());
    ++complete;
  }
  EXPECT_EQ(named_tracks.size(), 4u);  // load, store, execute, memory port
  // One event per instruction plus one per memory transfer (the 49 moves).
  EXPECT_EQ(complete, report.instructions + 49);
  EXPECT_EQ(last_end, report.cycles);
  EXPECT_FALSE(trace["otherData"]["truncated"].get<bool>());
}

TEST(TimingTrace, TheReportAddsUpAndReadsBackAsJson) {
  Kernel r = tiledMatmul();
  Report report = simulate(r.isa, r.program, r.inputs);
  EXPECT_EQ(report.instructions, 82);
  int64_t busy = 0;
  for (const EngineUse& e : report.engines) {
    EXPECT_LE(e.busy, report.cycles) << e.name;
    busy += e.busy;
  }
  // The engines overlap: the program is shorter than their busy times one after another.
  EXPECT_LT(report.cycles, busy + report.memory_busy);
  EXPECT_EQ(report.hbm_bytes, 12544);  // 33 tiles in, 16 out, 256 bytes each
  nlohmann::json j = nlohmann::json::parse(report.json());
  EXPECT_EQ(j["cycles"].get<int64_t>(), report.cycles);
  EXPECT_EQ(j["engines"].size(), 3u);
  EXPECT_NE(report.text().find("memory port"), std::string::npos);
}

TEST(TimingTrace, TheMemoryLatencyParameterMovesTheTotal) {
  // More latency with the same requests in flight: the loads are latency-bound, so the total
  // grows; the outputs do not change.
  Kernel fast = tiledMatmul({{"MEM_LATENCY", 20}});
  Kernel slow = tiledMatmul({{"MEM_LATENCY", 400}});
  int64_t a = simulate(fast.isa, fast.program, fast.inputs).cycles;
  int64_t b = simulate(slow.isa, slow.program, slow.inputs).cycles;
  EXPECT_LT(a, b);
}

TEST(TimingTrace, TimingDoesNotChangeTheOutputs) {
  Kernel r = tiledMatmul();
  auto plain = oracle::run(r.isa, r.program, r.inputs);
  Simulator sim(r.isa);
  oracle::RunOptions o;
  o.trace = [&](const oracle::TraceEvent& e) { sim.add(e); };
  auto timed = oracle::run(r.isa, r.program, r.inputs, o);
  ASSERT_EQ(plain.size(), timed.size());
  for (const auto& [name, lit] : plain)
    EXPECT_TRUE(lit.bitwiseEqual(timed.at(name))) << name;
}

}  // namespace
}  // namespace tacit::timing
