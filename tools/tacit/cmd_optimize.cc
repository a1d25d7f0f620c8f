// `tacit optimize --isa SPEC KERNEL.hlo --llm URL -o OUT.tasm`: language-model proposals, each
// verified on the oracle and timed, kept only when correct and faster (src/optimize,
// docs/optimize.md).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "backend/driver.h"
#include "cli.h"
#include "hlo/verifier.h"
#include "optimize/optimizer.h"
#include "oracle/tasm.h"
#include "stablehlo/input.h"
#include "support/output.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::cli {
namespace {

std::chrono::milliseconds seconds(double s) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::duration<double>(s));
}

int runOptimize(const Args& args) {
  const std::string kernel_path = args.positionals()[0];
  auto isa_path = args.get("isa");
  if (!isa_path)
    fail("tacit optimize needs --isa SPEC",
         "e.g. tacit optimize --isa isa/gemmini.taidl k.hlo --llm http://127.0.0.1:8080/v1 -o "
         "k.tasm");
  auto out_path = args.get("output");
  if (!out_path) fail("tacit optimize needs -o OUT.tasm");
  auto url = args.get("llm");
  auto replay = args.get("replay");
  if (!url && !replay)
    fail("tacit optimize needs --llm URL (an OpenAI-compatible server) or --replay DIR",
         "docs/optimize.md shows how to start a local server");
  if (url && replay) fail("give --llm or --replay, not both");
  taidl::Isa isa = taidl::loadIsaFile(*isa_path, backend::parseParamOverrides(args.all("param")));
  auto kernel = stablehlo::parseAnyModule(readFile(kernel_path), kernel_path);
  hlo::verifyModule(*kernel);

  optimize::OptimizeOptions o;
  if (auto v = args.getInt("beam")) o.beam = static_cast<int>(std::max<int64_t>(1, *v));
  if (auto v = args.getInt("iterations")) o.iterations = static_cast<int>(*v);
  if (auto v = args.getDouble("budget")) o.budget = seconds(*v);
  if (auto v = args.getInt("seed")) o.seed = static_cast<uint64_t>(*v);
  if (auto v = args.getInt("verify-sets")) o.verify_sets = static_cast<int>(*v);

  std::unique_ptr<optimize::Llm> llm;
  if (replay) {
    if (!std::filesystem::is_directory(*replay)) fail("--replay " + *replay + ": not a folder");
    // A --log folder holds its exchanges in exchanges/.
    const std::filesystem::path inner = std::filesystem::path(*replay) / "exchanges";
    llm = optimize::replayLlm(std::filesystem::is_directory(inner) ? inner.string() : *replay);
  } else {
    optimize::HttpOptions h;
    h.url = *url;
    h.model = args.getOr("model", "default");
    h.seed = o.seed;
    if (auto var = args.get("api-key-env")) {
      const char* key = std::getenv(var->c_str());
      if (key == nullptr) fail("--api-key-env " + *var + ": the variable is not set");
      h.api_key = key;
    }
    if (auto v = args.getDouble("timeout")) h.timeout = seconds(*v);
    if (auto v = args.getInt("retries")) h.retries = static_cast<int>(*v);
    llm = optimize::httpLlm(h);
    if (auto dir = args.get("log")) llm = optimize::loggedLlm(std::move(llm), *dir + "/exchanges");
  }
  std::ofstream proposals;
  if (auto dir = args.get("log")) {
    std::filesystem::create_directories(*dir);
    proposals.open(std::filesystem::path(*dir) / "proposals.jsonl", std::ios::trunc);
    if (!proposals) fail("cannot write --log " + *dir + "/proposals.jsonl");
  }
  backend::CompileOptions compile;
  optimize::OptimizeResult r =
      optimize::optimize(isa, *kernel, *llm, compile, o, [&](const optimize::Proposal& p) {
        std::cerr << "[optimize] iteration " << p.iteration << ", from #" << p.parent << ": "
                  << (p.accepted ? "accepted, " + std::to_string(p.cycles) + " cycles"
                                 : "rejected: " + p.reason.substr(0, 300))
                  << "\n";
        if (proposals) proposals << p.json() << "\n" << std::flush;
      });
  // Not one reply: the server (or the log) is the problem, not the program — an error, no output.
  const bool answered = std::any_of(r.proposals.begin(), r.proposals.end(), [](const auto& p) {
    return p.reason.rfind("the model could not be asked", 0) != 0;
  });
  if (!r.proposals.empty() && !answered)
    fail("no reply from the model: " + r.proposals.back().reason.substr(30),
         "check --llm (a server answering POST .../chat/completions) or --replay");
  OutputTransaction out;
  out.write(*out_path, r.best_tasm);
  out.commit();
  size_t accepted = 0;
  for (const optimize::Proposal& p : r.proposals)
    accepted += p.accepted ? 1 : 0;
  std::cerr << "optimized " << kernel_path << " for " << isa.name << ": " << r.start_cycles
            << " -> " << r.best_cycles << " cycles; " << accepted << " of " << r.proposals.size()
            << " proposals accepted\n";
  return 0;
}

const Registration kOptimize{Command{
    "optimize",
    "KERNEL.hlo",
    "improve a kernel's program with a language model's proposals, each one verified",
    "Starts from tacit's own program for the kernel and asks an OpenAI-compatible chat server\n"
    "(vLLM, llama.cpp's server, Ollama, hosted APIs) for a plan (given the ISA description, the\n"
    "program, its cycle breakdown and a menu of optimisation kinds) and then for the changed\n"
    ".tasm program or tiling schedule. Each proposal is parsed, run on the oracle against the HLO\n"
    "evaluator on random inputs bit for bit, and timed; only verified, faster programs join the\n"
    "beam, and every rejection is logged with its reason. --log DIR keeps every exchange and\n"
    "the proposals; --replay DIR answers from such a log, offline and deterministically.\n"
    "docs/optimize.md.",
    {{"isa", "SPEC", "the ISA description (.taidl)"},
     {"param", "K=V", "override a spec parameter", true},
     {"output", "OUT", "write the fastest verified program here (.tasm)", false, false, "o"},
     {"llm", "URL", "the chat-completions server (base URL, e.g. http://127.0.0.1:8080/v1)"},
     {"model", "NAME", "the model name sent to the server (default: default)"},
     {"api-key-env", "VAR", "send the key in this environment variable as a bearer token"},
     {"beam", "N", "programs kept per iteration (default 2)"},
     {"iterations", "N", "rounds of proposals (default 3)"},
     {"budget", "S", "wall-time budget in seconds (default 600)"},
     {"seed", "N", "the menus' dropout and the request seed (default 1)"},
     {"timeout", "S", "per request (default 120)"},
     {"retries", "N", "per request, on timeouts, 429 and 5xx (default 3)"},
     {"verify-sets", "N", "random input sets per proposal (default 3)"},
     {"log", "DIR", "write every exchange (DIR/exchanges) and the proposals (proposals.jsonl)"},
     {"replay", "DIR", "answer from a log's exchanges instead of a server"}},
    1,
    1,
    runOptimize}};

}  // namespace
}  // namespace tacit::cli
