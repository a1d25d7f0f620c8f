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

// Checks `text` against the Trace Event Format's rules for what the simulator writes: metadata
// events naming the tracks first, complete events with integer times on named tracks. Returns
// the complete events, their last end and the named tracks.
struct TraceShape {
  int64_t complete = 0, last_end = 0;
  size_t tracks = 0;
  bool truncated = true;
};
TraceShape checkTrace(const std::string& text) {
  TraceShape shape;
  nlohmann::json trace = nlohmann::json::parse(text);
  EXPECT_TRUE(trace.contains("traceEvents"));
  std::set<int64_t> named_tracks;
  for (const auto& e : trace["traceEvents"]) {
    EXPECT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("name")) << e;
    std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "thread_name") named_tracks.insert(e["tid"].get<int64_t>());
      EXPECT_TRUE(e["args"].contains("name")) << e;
      continue;
    }
    EXPECT_EQ(ph, "X") << e;
    EXPECT_TRUE(e["ts"].is_number_integer() && e["dur"].is_number_integer()) << e;
    EXPECT_GE(e["dur"].get<int64_t>(), 0) << e;
    EXPECT_TRUE(named_tracks.count(e["tid"].get<int64_t>())) << e;  // names come first
    shape.last_end = std::max(shape.last_end, e["ts"].get<int64_t>() + e["dur"].get<int64_t>());
    ++shape.complete;
  }
  shape.tracks = named_tracks.size();
  shape.truncated = trace["otherData"]["truncated"].get<bool>();
  return shape;
}

std::string traceOf(const Kernel& k, Report* report) {
  Simulator sim(k.isa, {.keep_events = 100000});
  *report = simulate(k.isa, k.program, k.inputs, &sim);
  std::ostringstream text;
  sim.writeChromeTrace(text);
  return text.str();
}

TEST(TimingTrace, IsValidTraceEventJson) {
  Report report;
  TraceShape t = checkTrace(traceOf(tiledMatmul(), &report));
  EXPECT_EQ(t.tracks, 4u);  // load, store, execute, memory port
  // One event per instruction plus one per memory transfer (the 49 moves).
  EXPECT_EQ(t.complete, report.instructions + 49);
  EXPECT_EQ(t.last_end, report.cycles);
  EXPECT_FALSE(t.truncated);
}

// QKV attention (no timing clauses: one implicit engine, at its spec cost) and a tiled GEMM
// compiled by tacit (multiple buffering, loops) give valid traces too.
TEST(TimingTrace, AttentionAndATiledGemmGiveValidTraces) {
  Report report;
  TraceShape qkv =
      checkTrace(traceOf(testing::shippedKernel("qkv.taidl", "qkv/attention.tasm"), &report));
  EXPECT_EQ(qkv.tracks, 2u);  // the implicit engine and the (unused) memory port
  EXPECT_EQ(qkv.complete, report.instructions);
  EXPECT_EQ(qkv.last_end, report.cycles);
  Kernel tiled = testing::shippedKernel("gemmini.taidl", "gemmini/tiled_matmul_ws_16_256.tasm");
  TraceShape g = checkTrace(traceOf(tiled, &report));
  EXPECT_EQ(g.last_end, report.cycles);
  EXPECT_GT(g.complete, report.instructions);  // the memory transfers' events besides
  EXPECT_FALSE(g.truncated);
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
