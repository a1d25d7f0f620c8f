// tacit optimize (src/optimize, docs/optimize.md): every outcome of a proposal against an
// in-process stub of an OpenAI-compatible server on 127.0.0.1 that replays scripted replies — a
// correct improvement (accepted: the cycles drop), a wrong program (the first differing element
// named), a malformed reply, a violated constraint, a timeout, an HTTP 500 then success (retried)
// —; the replay of a logged run giving the same program; and random mutations of a program as
// replies, after which the returned program still verifies.
#include "optimize/optimizer.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <deque>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "backend/cost.h"
#include "backend/verify.h"
#include "common/paths.h"
#include "hlo/parser.h"
#include "optimize/prompts.h"
#include "oracle/tasm.h"
#include "taidl/isa.h"

namespace tacit::optimize {
namespace {

// oneDNN's u8 x s8 GEMM on AMX at 128 x 256 x 128 (VNNI weights, s32 result): small enough to
// verify quickly, tiled, and with a faster schedule than the spec cost's choice.
std::string amxGemm() {
  return R"(HloModule amx_gemm, entry_computation_layout={(u8[128,256]{1,0}, s8[128,256]{1,0:T(16,4)})->s32[128,128]{1,0}}
ENTRY main {
  a = u8[128,256]{1,0} parameter(0)
  b = s8[128,256]{1,0:T(16,4)} parameter(1)
  wa = s32[128,256] convert(a)
  wb = s32[128,256] convert(b)
  ROOT c = s32[128,128] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={1}
}
)";
}

struct Fixture {
  taidl::Isa isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/amx.taidl");
  std::unique_ptr<hlo::HloModule> kernel = hlo::parseModule(amxGemm(), "amx_gemm.hlo");
  std::string start_tasm;
  int64_t start_cycles = 0;
  std::string faster_tasm;  // a verified program with fewer cycles: a model's good proposal
  int64_t faster_cycles = 0;

  Fixture() {
    backend::CompileResult start = backend::compile(isa, *kernel, {});
    start_tasm = oracle::printProgram(isa, start.program);
    start_cycles = backend::programCycles(isa, start.program);
    // What tacit finds ranking its candidates by the timing model (--cost cycles): the same
    // tiles, other instruction orders inside them (7224 cycles against 7352).
    backend::CompileOptions o;
    o.cost = backend::CostModel::kCycles;
    backend::CompileResult faster = backend::compile(isa, *kernel, o);
    faster_tasm = oracle::printProgram(isa, faster.program);
    faster_cycles = backend::programCycles(isa, faster.program);
  }
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

std::string tasmReply(const std::string& program) {
  return "Here is the program.\n```tasm\n" + program + "```\n";
}

// `text` with the first occurrence of `from` replaced by `to` (which must exist).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The stub server: each POST to /v1/chat/completions takes the next scripted step — a reply, an
// HTTP status, or a delay longer than the client waits.
class StubServer {
 public:
  struct Step {
    int status = 200;
    std::string content;
    std::chrono::milliseconds delay{0};
  };

  StubServer() {
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req,
                                                httplib::Response& res) {
      Step step;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        requests_.push_back(nlohmann::json::parse(req.body));
        if (!script_.empty()) {
          step = script_.front();
          script_.pop_front();
        } else {
          step = {503, "the script is exhausted", {}};
        }
      }
      if (step.delay.count() > 0) std::this_thread::sleep_for(step.delay);
      res.status = step.status;
      if (step.status == 200) {
        nlohmann::json body = {
            {"choices",
             {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", step.content}}}}}}};
        res.set_content(body.dump(), "application/json");
      } else {
        res.set_content(step.content, "text/plain");
      }
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~StubServer() {
    server_.stop();
    thread_.join();
  }
  void script(std::vector<Step> steps) {
    std::lock_guard<std::mutex> lock(mutex_);
    script_.assign(steps.begin(), steps.end());
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<nlohmann::json> requests() {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::deque<Step> script_;
  std::vector<nlohmann::json> requests_;
};

HttpOptions client(const StubServer& s) {
  HttpOptions h;
  h.url = s.url();
  h.model = "stub";
  h.timeout = std::chrono::milliseconds(2000);
  h.retries = 2;
  h.backoff = std::chrono::milliseconds(10);
  return h;
}

OptimizeResult runOnce(Llm& llm) {
  const Fixture& f = fixture();
  OptimizeOptions o;
  o.beam = 1;
  o.iterations = 1;
  o.verify_sets = 2;
  return optimize(f.isa, *f.kernel, llm, {}, o);
}

TEST(Optimize, TheFixturesProposalIsFasterAndVerifies) {
  const Fixture& f = fixture();
  EXPECT_LT(f.faster_cycles, f.start_cycles);
  EXPECT_NE(f.faster_tasm, f.start_tasm);
}

TEST(Optimize, ACorrectImprovementIsAcceptedAndItsCyclesDrop) {
  StubServer s;
  s.script({{200, "Plan: interleave the loads with the products.", {}},
            {200, tasmReply(fixture().faster_tasm), {}}});
  auto llm = httpLlm(client(s));
  OptimizeResult r = runOnce(*llm);
  ASSERT_EQ(r.proposals.size(), 1u);
  EXPECT_TRUE(r.proposals[0].accepted) << r.proposals[0].reason;
  EXPECT_EQ(r.start_cycles, fixture().start_cycles);
  EXPECT_EQ(r.best_cycles, fixture().faster_cycles);
  EXPECT_LT(r.best_cycles, r.start_cycles);
  // The requests: a plan (system + user), then the implementation with the plan as the
  // assistant's turn; the ISA description and the program are in the planning prompt.
  std::vector<nlohmann::json> requests = s.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0]["model"], "stub");
  EXPECT_EQ(requests[0]["messages"].size(), 2u);
  EXPECT_EQ(requests[1]["messages"].size(), 4u);
  const std::string planning = requests[0]["messages"][1]["content"];
  EXPECT_NE(planning.find("instruction tdpbusd"), std::string::npos);
  EXPECT_NE(planning.find("kernel amx_gemm"), std::string::npos);
  EXPECT_NE(planning.find("cycles"), std::string::npos);
  EXPECT_EQ(requests[1]["messages"][2]["content"], "Plan: interleave the loads with the products.");
}

TEST(Optimize, AWrongProgramIsRejectedNamingTheFirstDifference) {
  StubServer s;
  // One accumulating product left out: the sums of every tile miss a block.
  const std::string wrong = replaced(fixture().faster_tasm, "tdpbusd(", "tilezero(dst=0); #");
  s.script({{200, "plan", {}}, {200, tasmReply(wrong), {}}});
  auto llm = httpLlm(client(s));
  OptimizeResult r = runOnce(*llm);
  ASSERT_EQ(r.proposals.size(), 1u);
  EXPECT_FALSE(r.proposals[0].accepted);
  EXPECT_NE(r.proposals[0].reason.find("wrong output: output 'out'"), std::string::npos)
      << r.proposals[0].reason;
  EXPECT_NE(r.proposals[0].reason.find("element "), std::string::npos);
  EXPECT_EQ(r.best_cycles, r.start_cycles);
  EXPECT_EQ(r.best_tasm, fixture().start_tasm);
}

TEST(Optimize, AMalformedReplyAndAParseErrorAreRejectedWithTheirReason) {
  StubServer s;
  s.script({{200, "plan", {}},
            {200, "I would rather not write code.", {}},
            {200, "plan", {}},
            {200, tasmReply("kernel k hbm=64 {\n  tilezero(dst=0;\n}\n"), {}}});
  auto llm = httpLlm(client(s));
  const Fixture& f = fixture();
  OptimizeOptions o;
  o.beam = 1;
  o.iterations = 2;
  OptimizeResult r = optimize(f.isa, *f.kernel, *llm, {}, o);
  ASSERT_EQ(r.proposals.size(), 2u);
  EXPECT_EQ(r.proposals[0].reason, "malformed reply: no ```tasm or ```json block");
  EXPECT_EQ(r.proposals[1].form, "tasm");
  EXPECT_NE(r.proposals[1].reason.find("parse error: proposal-2.tasm:2:"), std::string::npos)
      << r.proposals[1].reason;
}

TEST(Optimize, AViolatedConstraintIsRejectedByTheOracle) {
  StubServer s;
  const std::string bad = replaced(fixture().faster_tasm, "tilezero(dst=0)", "tilezero(dst=9)");
  s.script({{200, "plan", {}}, {200, tasmReply(bad), {}}});
  auto llm = httpLlm(client(s));
  OptimizeResult r = runOnce(*llm);
  ASSERT_EQ(r.proposals.size(), 1u);
  EXPECT_NE(r.proposals[0].reason.find("rejected by the oracle:"), std::string::npos)
      << r.proposals[0].reason;
  EXPECT_NE(r.proposals[0].reason.find("tilezero"), std::string::npos) << r.proposals[0].reason;
}

TEST(Optimize, ATimeoutIsRetriedThenReported) {
  StubServer s;
  HttpOptions h = client(s);
  h.timeout = std::chrono::milliseconds(200);
  h.retries = 1;
  s.script({{200, "late", std::chrono::milliseconds(600)},
            {200, "late again", std::chrono::milliseconds(600)}});
  auto llm = httpLlm(h);
  OptimizeResult r = runOnce(*llm);
  ASSERT_EQ(r.proposals.size(), 1u);
  EXPECT_FALSE(r.proposals[0].accepted);
  EXPECT_NE(r.proposals[0].reason.find("the model could not be asked: HTTP request failed"),
            std::string::npos)
      << r.proposals[0].reason;
  EXPECT_EQ(s.requests().size(), 2u);  // the first attempt and one retry
  EXPECT_EQ(r.best_tasm, fixture().start_tasm);
}

TEST(Optimize, AnHttp500IsRetriedAndTheRunGoesOn) {
  StubServer s;
  s.script({{500, "overloaded", {}},
            {200, "plan", {}},
            {503, "still overloaded", {}},
            {200, tasmReply(fixture().faster_tasm), {}}});
  auto llm = httpLlm(client(s));
  OptimizeResult r = runOnce(*llm);
  ASSERT_EQ(r.proposals.size(), 1u);
  EXPECT_TRUE(r.proposals[0].accepted) << r.proposals[0].reason;
  EXPECT_EQ(s.requests().size(), 4u);
  // A client error is not retried.
  s.script({{400, "bad request", {}}});
  try {
    httpLlm(client(s))->chat({{"user", "x"}});
    ADD_FAILURE() << "an HTTP 400 was not an error";
  } catch (const LlmError& e) {
    EXPECT_NE(std::string(e.what()).find("HTTP 400"), std::string::npos) << e.what();
  }
  EXPECT_EQ(s.requests().size(), 5u);
}

TEST(Optimize, AReplayOfALoggedRunGivesTheSameProgram) {
  StubServer s;
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("tacit-optimize-log-" + std::to_string(getpid())))
          .string();
  std::filesystem::remove_all(dir);
  s.script({{200, "plan", {}},
            {200, "no code", {}},
            {200, "plan", {}},
            {200, tasmReply(fixture().faster_tasm), {}}});
  const Fixture& f = fixture();
  OptimizeOptions o;
  o.beam = 1;
  o.iterations = 2;
  auto logged = loggedLlm(httpLlm(client(s)), dir);
  OptimizeResult live = optimize(f.isa, *f.kernel, *logged, {}, o);
  auto replay = replayLlm(dir);
  OptimizeResult again = optimize(f.isa, *f.kernel, *replay, {}, o);
  EXPECT_EQ(again.best_tasm, live.best_tasm);
  EXPECT_EQ(again.best_cycles, live.best_cycles);
  ASSERT_EQ(again.proposals.size(), live.proposals.size());
  for (size_t i = 0; i < live.proposals.size(); ++i)
    EXPECT_EQ(again.proposals[i].json(), live.proposals[i].json());
  EXPECT_LT(live.best_cycles, live.start_cycles);
  std::filesystem::remove_all(dir);
}

// Replies from a list, no server: for the property test.
class Scripted : public Llm {
 public:
  explicit Scripted(std::vector<std::string> replies) : replies_(std::move(replies)) {}
  std::string chat(const std::vector<Message>&) override {
    if (next_ >= replies_.size()) throw LlmError("no more replies");
    return replies_[next_++];
  }

 private:
  std::vector<std::string> replies_;
  size_t next_ = 0;
};

// A random edit of a program's text: a number changed, a line deleted, duplicated or moved.
std::string mutate(const std::string& program, std::mt19937_64& rng) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < program.size()) {
    size_t end = program.find('\n', at);
    if (end == std::string::npos) end = program.size();
    lines.push_back(program.substr(at, end - at));
    at = end + 1;
  }
  auto pick = [&] { return static_cast<size_t>(rng() % lines.size()); };
  switch (rng() % 4) {
    case 0: {  // a number on a line nudged
      std::string& l = lines[pick()];
      std::vector<size_t> digits;
      for (size_t i = 0; i < l.size(); ++i)
        if (std::isdigit(static_cast<unsigned char>(l[i]))) digits.push_back(i);
      if (!digits.empty()) l[digits[rng() % digits.size()]] = static_cast<char>('0' + rng() % 10);
      break;
    }
    case 1:
      lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(pick()));
      break;
    case 2: {
      const size_t i = pick();
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(i), lines[i]);
      break;
    }
    default:
      std::swap(lines[pick()], lines[pick()]);
      break;
  }
  std::string out;
  for (const std::string& l : lines)
    out += l + "\n";
  return out;
}

TEST(OptimizeProperty, MutatedRepliesNeverYieldAProgramThatFailsVerification) {
  const Fixture& f = fixture();
  std::mt19937_64 rng(20261205);
  std::vector<std::string> replies;
  const int proposals = 24;
  for (int i = 0; i < proposals; ++i) {
    replies.push_back("plan");
    // Mutations of the faster program (some survive: an edit of a comment-free program that
    // keeps its meaning, e.g. a duplicated idempotent load), of the start, and sometimes the
    // faster program itself.
    const std::string& base = i % 3 == 0 ? f.start_tasm : f.faster_tasm;
    std::string program = base;
    const int edits = static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e)
      program = mutate(program, rng);
    replies.push_back(tasmReply(program));
  }
  Scripted llm(replies);
  OptimizeOptions o;
  o.beam = 1;
  o.iterations = proposals;
  o.verify_sets = 2;
  OptimizeResult r = optimize(f.isa, *f.kernel, llm, {}, o);
  ASSERT_EQ(r.proposals.size(), static_cast<size_t>(proposals));
  int rejected = 0;
  for (const Proposal& p : r.proposals)
    rejected += p.accepted ? 0 : 1;
  EXPECT_GT(rejected, 0);
  // The returned program verifies on input sets the loop never used.
  backend::VerifyReport v = backend::verify(f.isa, *f.kernel, r.best, {.sets = 4, .seed = 99});
  EXPECT_TRUE(v.ok) << v.mismatch << "\n" << r.best_tasm;
  EXPECT_LE(r.best_cycles, r.start_cycles);
}

TEST(OptimizePrompts, AreFilesWithPlaceholders) {
  EXPECT_NE(promptFile("planning").find("{{isa}}"), std::string_view::npos);
  EXPECT_NE(promptFile("implementation").find("{{plan}}"), std::string_view::npos);
  EXPECT_EQ(fill("a {{x}} b {{y}}", {{"x", "1"}}), "a 1 b {{y}}");
  EXPECT_EQ(fencedBlock("x\n```tasm\nk\n```\n", "tasm"), std::optional<std::string>("k\n"));
  EXPECT_EQ(fencedBlock("```tasmx\nk\n```", "tasm"), std::nullopt);
}

}  // namespace
}  // namespace tacit::optimize
