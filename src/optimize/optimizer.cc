#include "optimize/optimizer.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "backend/verify.h"
#include "hlo/printer.h"
#include "optimize/prompts.h"
#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "support/diagnostic.h"
#include "timing/timing.h"

namespace tacit::optimize {
namespace {

// The optimisation kinds a plan may choose from (each left out of a menu with the dropout's
// probability, so that successive plans explore different ones).
const std::vector<std::string> kMenu = {
    "tiling: other tile sizes, so that loaded data is reused by more compute",
    "loop order: which loop is innermost, so that data stays on chip across iterations",
    "double buffering: load the next iteration's data into other rows or registers while this "
    "iteration computes",
    "fusion: keep an intermediate on chip instead of storing and reloading it",
    "instruction substitution: an instruction (or fewer) with the same effect at lower cost",
    "hoisting: move loads or configuration that do not change out of a loop",
    "reordering: interleave independent instructions so that the engines overlap",
};

// A program with what one timed run on zeros says of it: its cycles, its executed statements and
// the cost breakdown a planning prompt shows of it.
struct Candidate {
  oracle::Program program;
  std::string tasm;
  int64_t cycles = 0;
  int64_t steps = 0;
  std::string costs;
};

std::string interfaceOf(const oracle::Program& p) {
  std::string out;
  for (const oracle::Tensor& t : p.tensors) {
    if (t.kind == oracle::TensorKind::kConst) continue;
    out += (t.kind == oracle::TensorKind::kInput ? "input " : "output ") + t.name + " : " +
           t.shape.str() + "; ";
  }
  return out;
}

// `program` timed on zeros in one oracle run of at most `max_steps` statements (a
// DiagnosticError beyond it, or at a violated constraint): its cycles, its statements, and the
// breakdown — the calls per instruction with their spec cost, and the timing model's report.
Candidate measured(const taidl::Isa& isa, oracle::Program program, int64_t max_steps) {
  oracle::RunOptions run;
  run.max_steps = max_steps;
  oracle::Stats stats;
  const timing::Report report =
      timing::simulate(isa, program, timing::zeroInputs(program), nullptr, run, &stats);
  std::ostringstream s;
  s << "Executed instructions per kind (spec cost):\n";
  for (size_t i = 0; i < stats.per_instruction.size(); ++i) {
    if (stats.per_instruction[i] == 0) continue;
    s << "- " << isa.instructions[i].name.text << ": " << stats.per_instruction[i] << " ("
      << stats.cost_per_instruction[i] << ")\n";
  }
  s << "\nThe cycle model (engines run concurrently, each in order; queues; one memory port):\n"
    << report.text();
  std::string tasm = oracle::printProgram(isa, program);
  return Candidate{std::move(program), std::move(tasm), report.cycles, stats.steps, s.str()};
}

std::string menu(std::mt19937_64& rng, double dropout) {
  std::string out;
  std::uniform_real_distribution<double> coin(0, 1);
  std::vector<std::string> kept;
  for (const std::string& k : kMenu) {
    if (coin(rng) >= dropout) kept.push_back(k);
  }
  if (kept.empty()) kept.push_back(kMenu[static_cast<size_t>(rng() % kMenu.size())]);
  for (const std::string& k : kept)
    out += "- " + k + "\n";
  return out;
}

}  // namespace

std::string Proposal::json() const {
  nlohmann::json j = {{"iteration", iteration},        {"parent", parent}, {"form", form},
                      {"accepted", accepted},          {"reason", reason}, {"cycles", cycles},
                      {"parent_cycles", parent_cycles}};
  return j.dump();
}

std::optional<std::string> fencedBlock(const std::string& reply, const std::string& language) {
  const std::string open = "```" + language;
  size_t at = reply.find(open);
  while (at != std::string::npos) {
    const size_t line = reply.find('\n', at);
    // The fence's info string is exactly the language (```tasm, not ```tasmfoo).
    const std::string info =
        reply.substr(at + 3, (line == std::string::npos ? reply.size() : line) - at - 3);
    const auto last = info.find_last_not_of(" \t\r");
    if (line != std::string::npos && info.substr(0, last + 1) == language) {
      const size_t close = reply.find("```", line + 1);
      if (close == std::string::npos) return std::nullopt;
      return reply.substr(line + 1, close - line - 1);
    }
    at = reply.find(open, at + 1);
  }
  return std::nullopt;
}

OptimizeResult optimize(const taidl::Isa& isa, const hlo::HloModule& kernel, Llm& llm,
                        const backend::CompileOptions& compile, const OptimizeOptions& options,
                        const std::function<void(const Proposal&)>& progress) {
  const auto deadline = std::chrono::steady_clock::now() + options.budget;
  std::vector<Candidate> beam;
  beam.push_back(measured(isa, backend::compile(isa, kernel, compile).program,
                          oracle::RunOptions{}.max_steps));
  const std::string interface = interfaceOf(beam[0].program);
  const int64_t max_steps = beam[0].steps * options.max_steps_factor + 1000000;
  const int64_t max_hbm = std::max<int64_t>(beam[0].program.hbm_bytes * 4, int64_t{64} << 20);
  const std::string isa_text = taidl::printIsa(isa);
  const std::string kernel_text = hlo::printModule(kernel);
  const std::string system(promptFile("system"));
  std::mt19937_64 rng(options.seed);
  OptimizeResult result;
  result.start_cycles = beam[0].cycles;
  int proposal_count = 0;

  // A reply's program, or why there is none that may join the beam.
  auto evaluate = [&](const std::string& reply, Proposal& p) -> std::optional<Candidate> {
    oracle::Program program("", 0);
    if (auto tasm = fencedBlock(reply, "tasm")) {
      p.form = "tasm";
      try {
        program = oracle::parseProgram(isa, *tasm,
                                       "proposal-" + std::to_string(proposal_count) + ".tasm");
      } catch (const DiagnosticError& e) {
        p.reason = "parse error: " + e.diagnostic().str();
        return std::nullopt;
      }
    } else if (auto schedule = fencedBlock(reply, "json")) {
      p.form = "schedule";
      try {
        backend::CompileOptions o = compile;
        o.schedule = backend::TileSchedule::parse(*schedule, "proposal schedule");
        program = backend::compile(isa, kernel, o).program;
      } catch (const DiagnosticError& e) {
        p.reason = "the schedule does not compile: " + e.diagnostic().str();
        return std::nullopt;
      }
    } else {
      p.reason = "malformed reply: no ```tasm or ```json block";
      return std::nullopt;
    }
    if (interfaceOf(program) != interface) {
      p.reason = "the kernel's interface changed: " + interfaceOf(program) + "(expected " +
                 interface + ")";
      return std::nullopt;
    }
    if (program.hbm_bytes > max_hbm) {
      p.reason = "HBM of " + std::to_string(program.hbm_bytes) + " bytes (at most " +
                 std::to_string(max_hbm) + ")";
      return std::nullopt;
    }
    std::optional<Candidate> c;
    try {
      // Bounded and timed first: verification runs the program without the step limit.
      c = measured(isa, std::move(program), max_steps);
      const backend::VerifyReport v =
          backend::verify(isa, kernel, c->program, {.sets = options.verify_sets, .seed = 17});
      if (!v.ok) {
        p.reason = "wrong output: " + v.mismatch;
        return std::nullopt;
      }
    } catch (const DiagnosticError& e) {
      p.reason = "rejected by the oracle: " + e.diagnostic().str();
      return std::nullopt;
    }
    p.cycles = c->cycles;
    if (c->cycles >= p.parent_cycles) {
      p.reason = "not faster: " + std::to_string(c->cycles) + " cycles against " +
                 std::to_string(p.parent_cycles);
      return std::nullopt;
    }
    return c;
  };

  for (int iteration = 1; iteration <= options.iterations; ++iteration) {
    std::vector<Candidate> accepted;
    for (size_t b = 0; b < beam.size(); ++b) {
      if (std::chrono::steady_clock::now() >= deadline) break;
      const Candidate& parent = beam[b];
      Proposal p;
      p.iteration = iteration;
      p.parent = static_cast<int>(b);
      p.parent_cycles = parent.cycles;
      ++proposal_count;
      try {
        const std::string planning =
            fill(promptFile("planning"), {{"isa", isa_text},
                                          {"kernel", kernel_text},
                                          {"program", parent.tasm},
                                          {"costs", parent.costs},
                                          {"menu", menu(rng, options.menu_dropout)}});
        const std::string plan = llm.chat({{"system", system}, {"user", planning}});
        const std::string implementation =
            fill(promptFile("implementation"), {{"plan", plan},
                                                {"program", parent.tasm},
                                                {"format", std::string(promptFile("format"))}});
        const std::string reply = llm.chat({{"system", system},
                                            {"user", planning},
                                            {"assistant", plan},
                                            {"user", implementation}});
        if (std::optional<Candidate> c = evaluate(reply, p)) {
          p.accepted = true;
          accepted.push_back(std::move(*c));
        }
      } catch (const LlmError& e) {
        p.reason = std::string("the model could not be asked: ") + e.what();
      }
      result.proposals.push_back(p);
      if (progress) progress(p);
    }
    // The beam: the fastest distinct programs of the old beam and the accepted proposals.
    for (Candidate& c : accepted)
      beam.push_back(std::move(c));
    std::stable_sort(beam.begin(), beam.end(),
                     [](const Candidate& x, const Candidate& y) { return x.cycles < y.cycles; });
    std::vector<Candidate> kept;
    for (Candidate& c : beam) {
      if (static_cast<int>(kept.size()) >= options.beam) break;
      if (std::none_of(kept.begin(), kept.end(),
                       [&](const Candidate& k) { return k.tasm == c.tasm; }))
        kept.push_back(std::move(c));
    }
    beam = std::move(kept);
    if (std::chrono::steady_clock::now() >= deadline) break;
  }
  result.best = std::move(beam[0].program);
  result.best_tasm = beam[0].tasm;
  result.best_cycles = beam[0].cycles;
  return result;
}

}  // namespace tacit::optimize
