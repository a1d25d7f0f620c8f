#include "backend/driver.h"

#include <algorithm>
#include <iostream>
#include <new>

#include "backend/compiler.h"
#include "backend/emit.h"
#include "backend/verify.h"
#include "egraph/dot.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"
#include "isel/explain.h"
#include "oracle/tasm.h"
#include "support/diagnostic.h"
#include "support/output.h"
#include "support/source.h"
#include "taidl/isa.h"

#ifndef TACIT_VERSION
#error "TACIT_VERSION must be defined (src/backend/CMakeLists.txt)"
#endif

namespace tacit::backend {
namespace {

// The same parsing rules and messages as the tacit CLI (tools/tacit/cli.cc).
std::optional<int64_t> intValue(const FlagValues& flags, const std::string& name) {
  auto it = flags.find(name);
  if (it == flags.end()) return std::nullopt;
  const std::string& v = it->second;
  try {
    size_t used = 0;
    long long n = std::stoll(v, &used, 0);
    if (used == v.size()) return n;
  } catch (const std::exception&) {
  }
  fail("--" + name + " expects an integer, got '" + v + "'");
}

std::optional<double> doubleValue(const FlagValues& flags, const std::string& name) {
  auto it = flags.find(name);
  if (it == flags.end()) return std::nullopt;
  const std::string& v = it->second;
  try {
    size_t used = 0;
    double d = std::stod(v, &used);
    if (used == v.size()) return d;
  } catch (const std::exception&) {
  }
  fail("--" + name + " expects a number, got '" + v + "'");
}

std::string emitText(EmitFormat format, const taidl::Isa& isa, const CompileResult& r) {
  switch (format) {
    case EmitFormat::kTasm:
      return oracle::printProgram(isa, r.program);
    case EmitFormat::kPython:
      return emitPython(isa, r.program);
    case EmitFormat::kJson:
      return emitJson(isa, r.program,
                      {r.costs, std::string(costModelName(r.model)), r.stats.json()});
  }
  fail("unknown output format");
}

// ---- a generated backend's command line ---------------------------------------------------

struct BackendOption {
  DriverFlag flag;
  bool compile = false;  // one of compileFlags()
};

std::vector<BackendOption> backendOptions() {
  std::vector<BackendOption> out;
  out.push_back({{"input", "KERNEL.hlo", "the HLO kernel to compile (or give it as the argument)",
                  false, "i"},
                 false});
  for (const DriverFlag& f : compileFlags())
    out.push_back({f, true});
  out.push_back({{"print-spec", "", "print the embedded .taidl spec and exit"}, false});
  out.push_back({{"version", "", "print the backend's ISA, parameters and tacit version"}, false});
  return out;
}

std::string flagText(const DriverFlag& f) {
  std::string flag = "--" + f.name;
  if (!f.value_name.empty())
    flag += f.optional_value ? "[=" + f.value_name + "]" : " " + f.value_name;
  return flag;
}

std::string usageLine(const EmbeddedSpec& spec) {
  std::string out = "usage: " + std::string(spec.name) + " [--input] KERNEL.hlo";
  for (const BackendOption& o : backendOptions()) {
    if (o.flag.name == "input") continue;
    out += " [" + flagText(o.flag) + "]";
  }
  return out;
}

std::string paramsText(const EmbeddedSpec& spec) {
  if (spec.overrides.empty()) return "the spec's defaults";
  std::string out;
  for (const auto& [k, v] : spec.overrides)
    out += (out.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return out;
}

struct BackendArgs {
  FlagValues compile;
  std::map<std::string, std::string> own;  // input, print-spec, version
  std::vector<std::string> positionals;
};

// Mirrors cli::parseArgs: unknown flags are errors, `--flag=value` and `--flag value`, `-o OUT`,
// `--` ends the options, a non-repeatable flag given twice is an error.
BackendArgs parseBackendArgs(const EmbeddedSpec& spec, const std::vector<std::string>& argv) {
  const std::string name(spec.name);
  std::vector<BackendOption> options = backendOptions();
  BackendArgs args;
  bool options_done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (options_done || a.size() < 2 || a[0] != '-' || a == "-") {
      args.positionals.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    std::string body = a.substr(a[1] == '-' ? 2 : 1);
    std::optional<std::string> inline_value;
    if (size_t eq = body.find('='); eq != std::string::npos) {
      inline_value = body.substr(eq + 1);
      body = body.substr(0, eq);
    }
    bool single_dash = a[1] != '-';
    auto spec_it = std::find_if(options.begin(), options.end(), [&](const BackendOption& o) {
      return o.flag.name == body ||
             (single_dash && !o.flag.short_name.empty() && o.flag.short_name == body);
    });
    if (spec_it == options.end()) {
      if (body == "param" || body == "isa") {
        fail("'--" + body + "' is not an option of " + name + ": its spec (" +
                 std::string(spec.file_name) + ", " + paramsText(spec) +
                 ") was fixed by tacit gen-backend",
             "generate another backend with tacit gen-backend SPEC --param K=V -o DIR");
      }
      fail("unknown option '" + a + "' for '" + name + "'",
           "run '" + name + " --help' for the options it takes");
    }
    const DriverFlag& flag = spec_it->flag;
    std::map<std::string, std::string>& slot = spec_it->compile ? args.compile : args.own;
    if (slot.count(flag.name)) fail("option '--" + flag.name + "' given more than once");
    if (flag.value_name.empty()) {
      if (inline_value) fail("option '--" + flag.name + "' takes no value");
      slot[flag.name] = "";
    } else if (inline_value) {
      slot[flag.name] = *inline_value;
    } else if (flag.optional_value) {
      slot[flag.name] = "";
    } else {
      if (i + 1 >= argv.size())
        fail("option '--" + flag.name + "' needs a value (" + flag.value_name + ")");
      slot[flag.name] = argv[++i];
    }
  }
  return args;
}

int runBackend(const EmbeddedSpec& spec, const std::vector<std::string>& argv, std::ostream& out,
               std::ostream& err) {
  // The embedded spec is checked first, whatever the command line: a backend whose spec does not
  // load (a tacit library other than the one that generated it) must not pretend to work.
  taidl::Isa isa = taidl::loadIsa(spec.text, std::string(spec.file_name), spec.overrides);
  BackendArgs args = parseBackendArgs(spec, argv);
  if (args.own.count("version")) {
    out << spec.name << ": compiler backend for ISA " << isa.name << " (" << spec.file_name << ", "
        << paramsText(spec) << "), generated by " << spec.generator << ", built with "
        << driverVersion() << "\n";
    return 0;
  }
  if (args.own.count("print-spec")) {
    out << spec.text;
    return 0;
  }
  const std::string name(spec.name);
  auto input = args.own.find("input");
  if (input != args.own.end() && !args.positionals.empty())
    fail("give the kernel either as --input KERNEL.hlo or as the argument, not both",
         usageLine(spec));
  if (input == args.own.end() && args.positionals.size() != 1) {
    fail(args.positionals.empty() ? name + " needs --input KERNEL.hlo"
                                  : "wrong number of arguments for '" + name + "'",
         "e.g. " + name + " --input kernel.hlo --output out.tasm");
  }
  std::string kernel = input != args.own.end() ? input->second : args.positionals[0];
  CompileRequest request = makeCompileRequest(kernel, args.compile);
  runCompile(isa, request, out, err);
  return 0;
}

}  // namespace

std::string_view driverVersion() {
  return "tacit " TACIT_VERSION;
}

const std::vector<DriverFlag>& compileFlags() {
  static const std::vector<DriverFlag> flags = {
      {"output", "OUT", "write the program here (default: stdout)", false, "o"},
      {"emit", "FORMAT", "tasm, py or json"},
      {"cost", "MODEL", "count, spec (default when the spec has costs) or bytes"},
      {"verify", "N", "check the program on the oracle with N random input sets", true},
      {"seed", "SEED", "random input seed for --verify"},
      {"atol", "X", "absolute tolerance for float results in --verify"},
      {"rtol", "X", "relative tolerance for float results in --verify"},
      {"time-limit", "S", "seconds for the whole search (default 10)"},
      {"explain", "",
       "print the chosen instruction graph (and, on failure, why no program exists)"},
      {"stats", "", "time per phase, candidates, e-graph size, solver time"},
      {"dump-egraph", "FILE", "write phase 1's saturated e-graph as Graphviz DOT (debugging)"},
  };
  return flags;
}

std::string_view compileDescription() {
  return "Selects instructions by equality saturation over the kernel's e-graph, allocates every\n"
         "address with a constraint solver, searches candidates under a cost model and emits the "
         "best\n"
         "program: .tasm (default), a TAIDL-TO-style Python kernel (--emit py) or JSON (--emit "
         "json).\n"
         "--verify[=N] runs the program on the oracle with N random input sets (default 1) and "
         "compares\n"
         "with the HLO evaluator bit for bit (--atol/--rtol allow a tolerance for float results).";
}

CompileRequest makeCompileRequest(std::string kernel_path, const FlagValues& flags) {
  for (const auto& flag : flags) {
    const std::string& name = flag.first;  // (clang 14 cannot capture a structured binding)
    const auto& known = compileFlags();
    if (std::none_of(known.begin(), known.end(),
                     [&](const DriverFlag& f) { return f.name == name; }))
      fail("unknown option '--" + name + "'");
  }
  auto get = [&](const std::string& name) -> std::optional<std::string> {
    auto it = flags.find(name);
    if (it == flags.end()) return std::nullopt;
    return it->second;
  };
  CompileRequest r;
  r.kernel_path = std::move(kernel_path);
  r.output_path = get("output");
  r.stats = flags.count("stats") != 0;
  r.explain = flags.count("explain") != 0;
  r.dump_egraph_path = get("dump-egraph");

  std::string format = get("emit").value_or("tasm");
  if (format == "tasm") {
    r.emit = EmitFormat::kTasm;
  } else if (format == "py") {
    r.emit = EmitFormat::kPython;
  } else if (format == "json") {
    r.emit = EmitFormat::kJson;
  } else {
    fail("--emit expects tasm, py or json, got '" + format + "'");
  }

  if (auto n = get("verify")) {
    r.verify_sets = 1;
    if (!n->empty()) {
      try {
        size_t used = 0;
        long long sets = std::stoll(*n, &used);
        if (used != n->size() || sets < 1 || sets > 10000) throw std::invalid_argument(*n);
        r.verify_sets = static_cast<int>(sets);
      } catch (const std::exception&) {
        fail("--verify expects a number of random input sets (1..10000), got '" + *n + "'");
      }
    }
  }
  if (auto seed = intValue(flags, "seed")) r.seed = static_cast<uint64_t>(*seed);
  r.atol = doubleValue(flags, "atol");
  r.rtol = doubleValue(flags, "rtol");

  if (auto m = get("cost")) {
    if (!parseCostModel(*m)) fail("--cost expects count, spec or bytes, got '" + *m + "'");
    r.cost_model = *m;
  }
  if (auto s = doubleValue(flags, "time-limit")) {
    if (*s <= 0 || *s > 3600)
      fail("--time-limit expects seconds in (0, 3600], got " + std::to_string(*s));
    r.time_limit_seconds = *s;
  }
  return r;
}

std::vector<std::pair<std::string, int64_t>> parseParamOverrides(
    const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const std::string& kv : values) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      fail("--param expects KEY=VALUE, got '" + kv + "'", "e.g. --param NAME=VALUE");
    std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
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

void runCompile(const taidl::Isa& isa, const CompileRequest& request, std::ostream& out,
                std::ostream& log) {
  const std::string& kernel_path = request.kernel_path;
  CompileOptions opts;
  if (request.cost_model) opts.cost = parseCostModel(*request.cost_model);
  if (request.time_limit_seconds) {
    opts.time_limit =
        std::chrono::milliseconds(static_cast<int64_t>(*request.time_limit_seconds * 1000));
    opts.selector.time_limit = opts.time_limit;
  }
  if (request.dump_egraph_path) {
    // Written even if the compilation then fails: that is when the e-graph is most wanted.
    opts.after_saturation = [path = *request.dump_egraph_path](const isel::Selector& sel) {
      egraph::DotOptions dot;
      dot.max_classes = 5000;
      dot.node_label = [&sel](const egraph::EGraph& g, egraph::NodeId n) {
        egraph::ENode e = g.node(n);
        if (e.op() != sel.ir().piiOp()) return sel.ir().describe(e.op(), e.attr());
        const isel::PiiDesc& p = sel.ir().piiDesc(e.attr());  // name the unit
        return sel.units().units[static_cast<size_t>(p.unit)].name + " " +
               sel.ir().describe(e.op(), e.attr());
      };
      writeFileAtomic(path, egraph::toDot(sel.egraph(), dot));
    };
  }
  VerifyOptions vopts;
  if (request.verify_sets) vopts.sets = *request.verify_sets;
  if (request.seed) vopts.seed = *request.seed;
  if (request.atol) vopts.atol = *request.atol;
  if (request.rtol) vopts.rtol = *request.rtol;

  auto kernel = hlo::parseModule(readFile(kernel_path), kernel_path);
  hlo::verifyModule(*kernel);
  CompileResult result = compile(isa, *kernel, opts);
  std::string text = emitText(request.emit, isa, result);
  log << "compiled " << kernel_path << " for " << isa.name << ": " << result.costs.instructions
      << " instructions, cost " << result.costs.of(result.model) << " ("
      << costModelName(result.model) << "), " << result.costs.bytes
      << " bytes moved between buffers (" << result.costs.hbm_bytes
      << " between HBM and on-chip buffers)\n";
  if (request.stats) log << result.stats.text();
  if (request.explain) {
    log << "chosen instruction graph:\n" << result.graph.str(isa, isel::buildUnits(isa));
  }
  if (request.verify_sets) {
    VerifyReport report = verify(isa, *kernel, result.program, vopts);
    if (!report.ok) {
      fail(kernel_path, {},
           "verification failed: the compiled program differs from the HLO evaluator: " +
               report.mismatch,
           "this is a compiler bug; please report it with the kernel and the ISA");
    }
    log << "verified: " << report.sets << " random input set" << (report.sets == 1 ? "" : "s")
        << ", oracle == HLO evaluator bit for bit\n";
  }
  if (request.output_path) {
    writeFileAtomic(*request.output_path, text);
  } else {
    out << text;
  }
}

std::string backendHelp(const EmbeddedSpec& spec) {
  std::string out = usageLine(spec) + "\n\n";
  out += "compile an HLO kernel for the " + std::string(spec.name) + " ISA (spec " +
         std::string(spec.file_name) + " embedded, " + paramsText(spec) + "; generated by " +
         std::string(spec.generator) + " gen-backend)\n\n";
  out += std::string(compileDescription()) + "\n\noptions:\n";
  for (const BackendOption& o : backendOptions()) {
    std::string flag =
        (o.flag.short_name.empty() ? "" : "-" + o.flag.short_name + ", ") + flagText(o.flag);
    out += "  " + flag;
    if (flag.size() < 26)
      out += std::string(26 - flag.size(), ' ');
    else
      out += "\n" + std::string(28, ' ');
    out += o.flag.help + "\n";
  }
  out += "  --help                    show this help\n";
  return out;
}

int backendMain(const EmbeddedSpec& spec, const std::vector<std::string>& args, std::ostream& out,
                std::ostream& err) {
  if (std::find(args.begin(), args.end(), "--help") != args.end() ||
      std::find(args.begin(), args.end(), "-h") != args.end()) {
    out << backendHelp(spec);
    return 0;
  }
  try {
    return runBackend(spec, args, out, err);
  } catch (const DiagnosticError& e) {
    err << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    err << spec.name << ": error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    // Reaching here is a tacit bug: every user mistake should be a DiagnosticError.
    err << spec.name << ": internal error: " << e.what() << "\n";
    return 70;
  }
}

int backendMain(const EmbeddedSpec& spec, int argc, char** argv) {
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  int status = backendMain(spec, args, std::cout, std::cerr);
  std::cout.flush();
  return status;
}

}  // namespace tacit::backend
