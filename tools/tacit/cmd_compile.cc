// `tacit compile --isa SPEC KERNEL.hlo -o OUT`: the compiler backend (docs/backend.md).
#include <fstream>
#include <iostream>

#include "backend/compiler.h"
#include "backend/emit.h"
#include "backend/verify.h"
#include "cli.h"
#include "egraph/dot.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"
#include "isel/explain.h"
#include "oracle/tasm.h"
#include "support/output.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::cli {
namespace {

taidl::ParamOverrides paramOverrides(const Args& args) {
  taidl::ParamOverrides out;
  for (const auto& [k, v] : args.keyValues("param")) {
    try {
      size_t used = 0;
      long long n = std::stoll(v, &used, 0);
      if (used != v.size()) throw std::invalid_argument(v);
      out.emplace_back(k, n);
    } catch (const std::exception&) {
      fail("--param " + k + " expects an integer, got '" + v + "'");
    }
  }
  return out;
}

backend::CompileOptions compileOptions(const Args& args, const taidl::Isa& isa) {
  backend::CompileOptions opts;
  if (auto m = args.get("cost")) {
    opts.cost = backend::parseCostModel(*m);
    if (!opts.cost) fail("--cost expects count, spec or bytes, got '" + *m + "'");
  }
  if (auto s = args.getDouble("time-limit")) {
    if (*s <= 0 || *s > 3600)
      fail("--time-limit expects seconds in (0, 3600], got " + std::to_string(*s));
    opts.time_limit = std::chrono::milliseconds(static_cast<int64_t>(*s * 1000));
    opts.selector.time_limit = opts.time_limit;
  }
  (void)isa;
  return opts;
}

backend::VerifyOptions verifyOptions(const Args& args) {
  backend::VerifyOptions v;
  std::string n = args.getOr("verify", "");
  if (!n.empty()) {
    try {
      size_t used = 0;
      long long sets = std::stoll(n, &used);
      if (used != n.size() || sets < 1 || sets > 10000) throw std::invalid_argument(n);
      v.sets = static_cast<int>(sets);
    } catch (const std::exception&) {
      fail("--verify expects a number of random input sets (1..10000), got '" + n + "'");
    }
  }
  if (auto seed = args.getInt("seed")) v.seed = static_cast<uint64_t>(*seed);
  if (auto atol = args.getDouble("atol")) v.atol = *atol;
  if (auto rtol = args.getDouble("rtol")) v.rtol = *rtol;
  return v;
}

std::string emit(const std::string& format, const taidl::Isa& isa,
                 const backend::CompileResult& r) {
  if (format == "tasm") return oracle::printProgram(isa, r.program);
  if (format == "py") return backend::emitPython(isa, r.program);
  if (format == "json") {
    return backend::emitJson(
        isa, r.program, {r.costs, std::string(backend::costModelName(r.model)), r.stats.json()});
  }
  fail("--emit expects tasm, py or json, got '" + format + "'");
}

int runCompile(const Args& args) {
  std::string kernel_path = args.positionals()[0];
  auto isa_path = args.get("isa");
  if (!isa_path)
    fail("tacit compile needs --isa SPEC",
         "e.g. tacit compile --isa isa/qkv.taidl kernel.hlo -o out.tasm");
  std::string format = args.getOr("emit", "tasm");
  if (format != "tasm" && format != "py" && format != "json")
    fail("--emit expects tasm, py or json, got '" + format + "'");
  backend::VerifyOptions vopts = verifyOptions(args);
  taidl::Isa isa = taidl::loadIsaFile(*isa_path, paramOverrides(args));
  auto kernel = hlo::parseModule(readFile(kernel_path), kernel_path);
  hlo::verifyModule(*kernel);
  backend::CompileResult result = backend::compile(isa, *kernel, compileOptions(args, isa));
  std::string text = emit(format, isa, result);
  std::cerr << "compiled " << kernel_path << " for " << isa.name << ": "
            << result.costs.instructions << " instructions, cost " << result.costs.of(result.model)
            << " (" << backend::costModelName(result.model) << "), " << result.costs.bytes
            << " bytes moved between buffers\n";
  if (args.has("stats")) std::cerr << result.stats.text();
  if (args.has("explain")) {
    std::cerr << "chosen instruction graph:\n" << result.graph.str(isa, isel::buildUnits(isa));
  }
  if (args.has("verify")) {
    backend::VerifyReport report = backend::verify(isa, *kernel, result.program, vopts);
    if (!report.ok) {
      fail(kernel_path, {},
           "verification failed: the compiled program differs from the HLO evaluator: " +
               report.mismatch,
           "this is a compiler bug; please report it with the kernel and the ISA");
    }
    std::cerr << "verified: " << report.sets << " random input set" << (report.sets == 1 ? "" : "s")
              << ", oracle == HLO evaluator bit for bit\n";
  }
  if (auto out = args.get("output")) {
    writeFileAtomic(*out, text);
  } else {
    std::cout << text;
  }
  return 0;
}

const Registration kCompile{Command{
    "compile",
    "KERNEL.hlo",
    "compile an HLO kernel for an ISA (instruction selection + Gecode allocation)",
    "Selects instructions by equality saturation over the kernel's e-graph, allocates every\n"
    "address with a constraint solver, searches candidates under a cost model and emits the best\n"
    "program: .tasm (default), a TAIDL-TO-style Python kernel (--emit py) or JSON (--emit json).\n"
    "--verify[=N] runs the program on the oracle with N random input sets (default 1) and "
    "compares\n"
    "with the HLO evaluator bit for bit (--atol/--rtol allow a tolerance for float results).",
    {
        {"isa", "SPEC", "the ISA description (.taidl)"},
        {"param", "K=V", "override a spec parameter", true},
        {"output", "OUT", "write the program here (default: stdout)", false, false, "o"},
        {"emit", "FORMAT", "tasm, py or json"},
        {"cost", "MODEL", "count, spec (default when the spec has costs) or bytes"},
        {"verify", "N", "check the program on the oracle with N random input sets", false, true},
        {"seed", "SEED", "random input seed for --verify"},
        {"atol", "X", "absolute tolerance for float results in --verify"},
        {"rtol", "X", "relative tolerance for float results in --verify"},
        {"time-limit", "S", "seconds for the whole search (default 10)"},
        {"explain", "",
         "print the chosen instruction graph (and, on failure, why no program exists)"},
        {"stats", "", "time per phase, candidates, e-graph size, solver time"},
    },
    1,
    1,
    runCompile}};

}  // namespace
}  // namespace tacit::cli
