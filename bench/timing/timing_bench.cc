// The timing model on the shipped conformance programs (examples/: the TAIDL-TO kernels whose
// outputs are checked against Gemmini's Spike model and Intel SDE) and on tiled GEMMs compiled by
// tacit (docs/timing.md).
//
// For each program: executed instructions, the spec cost, the model's cycles, each engine's and
// the memory port's utilisation, and what the model costs: the time of a timed run against a plain
// oracle run (medians of interleaved rounds of two warm Machines, one of them traced into a fresh
// simulator per run; and their ratio: tracing also turns off the oracle's compiled call sites and
// batching), and the simulator's own memory (dependency granules, port calendar). Inputs are
// random; the model's cycles do not depend on them.
//
// Usage: bench_timing [--rounds N] [FILTER]   (FILTER: substring of the row name)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backend/compiler.h"
#include "common/gemm_hlo.h"
#include "hlo/parser.h"
#include "hlo_eval/random_literal.h"
#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "support/source.h"
#include "timing/timing.h"

namespace {

using namespace tacit;

struct Row {
  std::string name;
  std::string spec;     // isa/<spec>.taidl
  int64_t dim = 0;      // Gemmini DIM (0: the default)
  std::string program;  // examples/<program>.tasm; empty: `hlo` compiled
  std::string hlo;      // a kernel to compile (tiled)
};

std::vector<Row> rows() {
  std::vector<Row> out;
  for (const char* flow : {"os", "ws"}) {
    for (auto [dim, iters] : {std::pair{16, 1}, {16, 16}, {16, 256}, {64, 16}, {256, 16}}) {
      std::string sz = std::to_string(dim) + "_" + std::to_string(iters);
      out.push_back({"gemmini " + std::string(flow) + " DIM=" + std::to_string(dim) +
                         " I=" + std::to_string(iters),
                     "gemmini", dim, "gemmini/tiled_matmul_" + std::string(flow) + "_" + sz, ""});
    }
  }
  out.push_back({"gemmini exo 512^3", "gemmini", 0, "gemmini/exo_512x512x512", ""});
  for (int64_t n : {256, 512, 1024})
    out.push_back(
        {"gemmini tacit " + std::to_string(n) + "^3", "gemmini", 0, "", bench::gemmHlo(n, n, n)});
  for (const char* k : {"cnn_inference_amx", "rnn_inference_amx", "sgemm_avx"}) {
    for (int blocks : {16, 256})
      out.push_back({std::string(k) + " blocks=" + std::to_string(blocks), "amx", 0,
                     "amx/" + std::string(k) + "_" + std::to_string(blocks), ""});
  }
  return out;
}

double ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string percent(int64_t part, int64_t whole) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.0f%%", whole ? 100.0 * part / whole : 0.0);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  std::string filter;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else
      filter = argv[i];
  }
  std::printf("%-24s %9s %10s %11s  %-36s %9s %9s %6s %8s\n", "program", "instr", "spec", "cycles",
              "utilisation (engines..., memory port)", "run ms", "timed ms", "x", "sim MiB");
  for (const Row& row : rows()) {
    if (!filter.empty() && row.name.find(filter) == std::string::npos) continue;
    taidl::ParamOverrides params;
    if (row.dim) params.emplace_back("DIM", row.dim);
    taidl::Isa isa =
        taidl::loadIsaFile(std::string(TACIT_SOURCE_DIR) + "/isa/" + row.spec + ".taidl", params);
    oracle::Program program;
    if (row.program.empty()) {
      auto kernel = hlo::parseModule(row.hlo, row.name);
      program = backend::compile(isa, *kernel).program;
    } else {
      program = oracle::parseProgramFile(
          isa, std::string(TACIT_SOURCE_DIR) + "/examples/" + row.program + ".tasm");
    }
    std::map<std::string, hlo::Literal> inputs;
    uint64_t seed = 1;
    for (const oracle::Tensor& t : program.tensors) {
      if (t.kind == oracle::TensorKind::kInput)
        inputs.emplace(t.name, hlo::randomLiteral(t.shape, seed++));
    }
    // Two warm machines (every specialisation planned), the timed one feeding a fresh
    // simulator per run.
    oracle::Machine plain(isa);
    plain.run(program, inputs);
    int64_t spec = plain.stats().total_cost;
    std::optional<timing::Simulator> sim;
    oracle::RunOptions traced;
    traced.trace = [&](const oracle::TraceEvent& e) { sim->add(e); };
    oracle::Machine timed(isa, traced);
    sim.emplace(isa);
    timed.run(program, inputs);
    std::vector<double> plain_ms, timed_ms;
    for (int r = 0; r < rounds; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      plain.run(program, inputs);
      plain_ms.push_back(ms(std::chrono::steady_clock::now() - t0));
      t0 = std::chrono::steady_clock::now();
      sim.emplace(isa);
      timed.run(program, inputs);
      timed_ms.push_back(ms(std::chrono::steady_clock::now() - t0));
    }
    timing::Report report = sim->report();
    int64_t sim_bytes = sim->memoryBytes();
    std::string use;
    for (const timing::EngineUse& e : report.engines)
      use += e.name + " " + percent(e.busy, report.cycles) + ", ";
    use += report.has_memory ? "port " + percent(report.memory_busy, report.cycles) : "no port";
    double p = median(plain_ms), t = median(timed_ms);
    std::printf("%-24s %9lld %10lld %11lld  %-36s %9.2f %9.2f %5.1fx %8.2f\n", row.name.c_str(),
                static_cast<long long>(report.instructions), static_cast<long long>(spec),
                static_cast<long long>(report.cycles), use.c_str(), p, t, t / p,
                static_cast<double>(sim_bytes) / (1 << 20));
    std::fflush(stdout);
  }
  return 0;
}
