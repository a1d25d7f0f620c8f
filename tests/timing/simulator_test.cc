// timing::Simulator, one rule at a time (docs/timing.md): instruction streams are fed by hand, so
// each expected cycle follows from the rule under test and the clauses of the spec below.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "taidl/isa.h"
#include "timing/timing.h"

namespace tacit::timing {
namespace {

// Bandwidth of the memory interface: min(beat 4, in_flight 2 * request 8 / latency 10 = 1.6)
// bytes per cycle, so 16 bytes take max(ceil(16 / 4), ceil(16 * 10 / 16)) = 10 port cycles.
const char* kSpec = R"(
isa t;
engine ld(queue = 2);
engine ex(queue = 4);
engine q1;
memory(beat = 4, request = 8, in_flight = 2, latency = 10);
buffer x[64] of s8[4];
instruction load(n; h, r) {
  require n >= 1 && n <= 16 && h >= 0 && r >= 0 && r + n <= 64;
  timing ld(interval = n, latency = n + 3);
  reads d0[h] size [4 * n];
  writes x[r] size [n];
  %a = u8[n, 4] reshape(%In1);
  %Out0 = s8[n, 4] bitcast-convert(%a);
}
instruction fetch(n; h, r) {
  require n >= 1 && n <= 16 && h >= 0 && r >= 0 && r + n <= 64;
  timing ex(interval = n);
  reads d0[h] size [4 * n];
  writes x[r] size [n];
  %a = u8[n, 4] reshape(%In1);
  %Out0 = s8[n, 4] bitcast-convert(%a);
}
instruction op(n; a, b) {
  require n >= 1 && n <= 16 && a >= 0 && a + n <= 64 && b >= 0 && b + n <= 64;
  cost 7;
  timing ex(interval = n, latency = 2 * n);
  reads x[a] size [n];
  writes x[b] size [n];
  %Out0 = s8[n, 4] negate(%In1);
}
instruction slow(n; a, b) {
  require n >= 1 && n <= 16 && a >= 0 && a + n <= 64 && b >= 0 && b + n <= 64;
  cost 5;
  reads x[a] size [n];
  writes x[b] size [n];
  %Out0 = s8[n, 4] negate(%In1);
}
instruction hold(n; a, b) {
  require n >= 1 && n <= 16 && a >= 0 && a + n <= 64 && b >= 0 && b + n <= 64;
  timing q1(interval = 1, latency = 10 * n);
  reads x[a] size [n];
  writes x[b] size [n];
  %Out0 = s8[n, 4] negate(%In1);
}
instruction dma(n; h, r) {
  require n >= 1 && n <= 16 && h >= 0 && r >= 0 && r + n <= 64;
  timing ld(interval = 1, bytes = 2 * n);
  reads d0[h] size [4 * n];
  writes x[r] size [n];
  %a = u8[n, 4] reshape(%In1);
  %Out0 = s8[n, 4] bitcast-convert(%a);
}
instruction negative(n; a, b) {
  require n >= 1 && n <= 16 && a >= 0 && a + n <= 64 && b >= 0 && b + n <= 64;
  timing ex(interval = n - 2);
  reads x[a] size [n];
  writes x[b] size [n];
  %Out0 = s8[n, 4] negate(%In1);
}
)";

using oracle::TouchedRange;

TouchedRange hbmRead(int64_t at, int64_t bytes) {
  return {0, false, at, bytes};
}
TouchedRange read(int64_t row, int64_t rows) {
  return {1, false, row * 4, rows * 4};
}
TouchedRange write(int64_t row, int64_t rows) {
  return {1, true, row * 4, rows * 4};
}

class SimulatorTest : public testing::Test {
 protected:
  explicit SimulatorTest(const char* spec = kSpec)
      : isa_(taidl::loadIsa(spec, "t.taidl")), sim_(isa_, {.keep_events = 100}) {}

  // Feeds one executed instruction: `name(n; ...)` with the given cost and touched ranges.
  Event run(const std::string& name, int64_t n, std::vector<TouchedRange> touched,
            int64_t cost = 1) {
    int32_t inst = isa_.findInstruction(name);
    EXPECT_GE(inst, 0) << name;
    std::vector<int64_t> attrs = {n, 0, 0};
    oracle::TraceEvent e{&isa_, inst, attrs, -1, "p.tasm", SourceLoc{1, 1}, cost, touched};
    sim_.add(e);
    return sim_.events().back();
  }

  taidl::Isa isa_;
  Simulator sim_;
};

TEST_F(SimulatorTest, AnEngineRunsItsInstructionsInOrder) {
  const Event& a = run("op", 3, {read(0, 1), write(1, 1)});
  EXPECT_EQ(a.dispatch, 0);
  EXPECT_EQ(a.start, 0);
  EXPECT_EQ(a.finish, 6);  // latency 2 * n
  const Event& b = run("op", 3, {read(8, 1), write(9, 1)});
  EXPECT_EQ(b.dispatch, 1);
  EXPECT_EQ(b.start, 3);  // the engine is busy for the first one's interval, not its latency
  EXPECT_EQ(b.finish, 9);
  EXPECT_EQ(sim_.report().cycles, 9);
  EXPECT_EQ(sim_.report().engines[1].busy, 6);
}

TEST_F(SimulatorTest, EnginesRunConcurrently) {
  run("load", 2, {write(0, 2)});
  const Event& b = run("op", 3, {read(8, 1), write(9, 1)});
  EXPECT_EQ(b.start, 1);  // dispatched one cycle after the load, not after its end
  Report r = sim_.report();
  EXPECT_EQ(r.cycles, 7);
  EXPECT_EQ(r.engines[0].busy, 2);
  EXPECT_EQ(r.engines[1].busy, 3);
  EXPECT_EQ(r.dependency_stall, 0);
}

TEST_F(SimulatorTest, AReadWaitsForTheWriteItReads) {
  run("load", 2, {write(0, 2)});                             // finishes at 5
  const Event& b = run("op", 1, {read(1, 1), write(9, 1)});  // reads row 1
  EXPECT_EQ(b.start, 5);
  EXPECT_EQ(sim_.report().dependency_stall, 4);  // ready at 1 (dispatch), started at 5
}

TEST_F(SimulatorTest, AWriteWaitsForEarlierReadsAndWrites) {
  run("op", 3, {read(0, 1), write(9, 1)});  // reads row 0 until 6
  const Event& war = run("load", 1, {write(0, 1)});
  EXPECT_EQ(war.start, 6);
  const Event& waw = run("slow", 1, {read(30, 1), write(0, 1)}, 5);  // on ld, after war
  EXPECT_EQ(waw.start, war.finish);
}

TEST_F(SimulatorTest, ReadsOfTheSameDataAndOtherUnitsAreIndependent) {
  run("op", 3, {read(0, 1), write(9, 1)});
  const Event& rar = run("slow", 1, {read(0, 1), write(20, 1)}, 5);
  EXPECT_EQ(rar.start, 1);
  // Row 10 shares no byte with row 9.
  const Event& other = run("hold", 1, {read(10, 1), write(11, 1)});
  EXPECT_EQ(other.start, 2);
}

TEST_F(SimulatorTest, AnInstructionWithoutAClauseTakesItsCostOnTheFirstEngine) {
  const Event& e = run("slow", 1, {read(0, 1), write(1, 1)}, 5);
  EXPECT_EQ(e.engine, 0);
  EXPECT_EQ(e.finish - e.start, 5);
  EXPECT_EQ(e.interval, 5);
}

TEST_F(SimulatorTest, AFullQueueStopsDispatchForEveryEngine) {
  run("hold", 1, {read(0, 1), write(1, 1)});  // q1 holds one instruction, finishing at 10
  const Event& second = run("hold", 1, {read(2, 1), write(3, 1)});
  EXPECT_EQ(second.dispatch, 10);
  EXPECT_EQ(second.start, 10);
  const Event& behind = run("op", 1, {read(4, 1), write(5, 1)});  // another engine, in order
  EXPECT_EQ(behind.dispatch, 11);
  EXPECT_EQ(sim_.report().queue_stall, 9);
}

TEST_F(SimulatorTest, TheMemoryPortBindsByRequestsInFlightOrBandwidth) {
  const Event& a = run("load", 4, {hbmRead(0, 16), write(0, 4)});
  EXPECT_EQ(a.port_start, 0);
  EXPECT_EQ(a.port_end, 10);  // 16 bytes at 1.6 bytes per cycle
  EXPECT_EQ(a.finish, 20);    // the data arrive one memory latency after the port time
  const Event& b = run("load", 4, {hbmRead(64, 16), write(8, 4)});
  EXPECT_EQ(b.start, 10);  // the DMA engine is free once its requests are out
  EXPECT_EQ(b.port_start, 10);
  EXPECT_EQ(b.finish, 30);
  Report r = sim_.report();
  EXPECT_EQ(r.memory_busy, 20);
  EXPECT_EQ(r.hbm_bytes, 32);
}

TEST_F(SimulatorTest, EnginesShareTheMemoryPort) {
  run("load", 4, {hbmRead(0, 16), write(0, 4)});  // port [0, 10)
  const Event& b = run("fetch", 4, {hbmRead(64, 16), write(8, 4)});
  EXPECT_EQ(b.start, 1);
  EXPECT_EQ(b.port_start, 10);
}

TEST_F(SimulatorTest, ALaterTransferTakesAnEarlierGapOfThePort) {
  run("hold", 5, {read(0, 1), write(1, 1)});                          // writes row 1 at 50
  const Event& late = run("fetch", 1, {hbmRead(0, 4), write(1, 1)});  // waits for it
  EXPECT_EQ(late.start, 50);
  EXPECT_EQ(late.port_start, 50);
  const Event& early = run("load", 4, {hbmRead(64, 16), write(8, 4)});
  EXPECT_EQ(early.port_start, 2);  // before the earlier instruction's transfer
}

TEST_F(SimulatorTest, TheClauseBytesReplaceTheSlicesSpan) {
  // A pitched move reads the span of its rows; the DMA moves only the rows.
  const Event& e = run("dma", 5, {hbmRead(0, 100), write(0, 5)});
  EXPECT_EQ(e.hbm_bytes, 10);
  EXPECT_EQ(e.port_end - e.port_start, 7);  // ceil(10 * 10 / 16)
}

TEST_F(SimulatorTest, ANegativeIntervalIsAnErrorAtTheStatement) {
  try {
    run("negative", 1, {read(0, 1), write(1, 1)});
    FAIL() << "no error";
  } catch (const DiagnosticError& e) {
    std::string text = e.what();
    EXPECT_NE(text.find("p.tasm:1:1"), std::string::npos) << text;
    EXPECT_NE(text.find("timing interval of negative(n=1"), std::string::npos) << text;
    EXPECT_NE(text.find("is negative (-1)"), std::string::npos) << text;
  }
}

TEST(SimulatorNoEngines, TheTotalIsTheSumOfCosts) {
  taidl::Isa isa = taidl::loadIsa(R"(
isa plain;
buffer x[8] of s8[4];
instruction op(; a, b) {
  require a >= 0 && a < 8 && b >= 0 && b < 8;
  cost 3;
  reads x[a] size [1];
  writes x[b] size [1];
  %Out0 = s8[1, 4] negate(%In1);
}
)",
                                  "plain.taidl");
  Simulator sim(isa);
  std::vector<int64_t> attrs = {0, 1};
  for (int i = 0; i < 4; ++i) {
    std::vector<TouchedRange> t = {{1, false, 4 * i, 4}, {1, true, 4 * i + 16, 4}};
    sim.add(oracle::TraceEvent{&isa, 0, attrs, -1, "", {}, 3, t});
  }
  Report r = sim.report();
  EXPECT_EQ(r.cycles, 12);  // one implicit engine holding one instruction at a time
  ASSERT_EQ(r.engines.size(), 1u);
  EXPECT_EQ(r.engines[0].name, "core");
  EXPECT_FALSE(r.has_memory);
}

TEST(SimulatorBandwidth, ManyRequestsInFlightMakeTheBusTheLimit) {
  taidl::Isa isa = taidl::loadIsa(R"(
isa wide;
memory(beat = 4, request = 64, in_flight = 16, latency = 10);
buffer x[8] of s8[4];
instruction load(; h, r) {
  require h >= 0 && r >= 0 && r + 4 <= 8;
  reads d0[h] size [16];
  writes x[r] size [4];
  %a = u8[4, 4] reshape(%In1);
  %Out0 = s8[4, 4] bitcast-convert(%a);
}
)",
                                  "wide.taidl");
  Simulator sim(isa, {.keep_events = 1});
  std::vector<int64_t> attrs = {0, 0};
  std::vector<TouchedRange> t = {{0, false, 0, 16}, {1, true, 0, 16}};
  sim.add(oracle::TraceEvent{&isa, 0, attrs, -1, "", {}, 1, t});
  EXPECT_EQ(sim.events()[0].port_end, 4);  // 16 bytes at 4 per cycle
  EXPECT_EQ(sim.report().cycles, 14);
}

}  // namespace
}  // namespace tacit::timing
