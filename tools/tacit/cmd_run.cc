// `tacit run SPEC PROGRAM.tasm [--param K=V]... --input NAME=FILE.npy ... --output-dir DIR
//  [--trace] [--stats] [--timing] [--timing-trace FILE] [--timing-json FILE] [--clamp]
//  [--warn-constraints]`: runs a .tasm program on the oracle (docs/oracle.md) and writes one
// DIR/<output>.npy per output, all or nothing; --timing adds the cycle model (docs/timing.md).
#include <charconv>
#include <iostream>
#include <sstream>

#include "backend/driver.h"
#include "cli.h"
#include "hlo/npy_literal.h"
#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "support/output.h"
#include "support/strings.h"
#include "taidl/isa.h"
#include "timing/timing.h"

namespace tacit::cli {
namespace {

// Events a --timing-trace keeps (the report counts every instruction): a trace of a million
// events is about 150 MB of JSON, past what the trace viewers load comfortably.
constexpr int64_t kMaxTraceEvents = 1'000'000;

// --param K=V, parsed as `tacit compile` and generated backends parse it.
taidl::ParamOverrides paramOverrides(const Args& args) {
  return backend::parseParamOverrides(args.all("param"));
}

std::map<std::string, hlo::Literal> loadInputs(const oracle::Program& program, const Args& args) {
  std::map<std::string, hlo::Literal> inputs;
  for (const auto& [name, path] : args.keyValues("input")) {
    const oracle::Tensor* t = program.findTensor(name);
    if (t == nullptr || t->kind != oracle::TensorKind::kInput)
      fail("--input " + name + "=" + path + ": the program has no input '" + name + "'",
           "inputs: " + joinWith(program.tensors, ", ", [](const oracle::Tensor& x) {
             return x.kind == oracle::TensorKind::kInput ? x.name + " " + x.shape.shortStr()
                                                         : std::string();
           }));
    if (inputs.count(name)) fail("--input gives '" + name + "' twice");
    inputs.emplace(name, hlo::readNpyLiteral(path, t->shape, "input '" + name + "'"));
  }
  return inputs;
}

int runProgram(const Args& args) {
  auto dir = args.get("output-dir");
  if (!dir) fail("missing --output-dir DIR", "tacit run SPEC PROGRAM.tasm --output-dir DIR");
  DiagnosticSink warnings;
  taidl::Isa isa = taidl::loadIsaFile(args.positionals()[0], paramOverrides(args), &warnings);
  for (const Diagnostic& d : warnings.all())
    std::cerr << d.str() << "\n";
  warnings.clear();
  oracle::Program program = oracle::parseProgramFile(isa, args.positionals()[1]);
  std::map<std::string, hlo::Literal> inputs = loadInputs(program, args);

  oracle::RunOptions options;
  options.clamp = args.has("clamp");
  options.warn_constraints = args.has("warn-constraints");
  options.warnings = &warnings;
  bool print_trace = args.has("trace");
  std::optional<std::string> trace_file = args.get("timing-trace");
  std::optional<std::string> json_file = args.get("timing-json");
  bool timed = args.has("timing") || trace_file || json_file;
  timing::Simulator simulator(isa, {.keep_events = trace_file ? kMaxTraceEvents : 0});
  if (print_trace || timed) {
    options.trace = [&](const oracle::TraceEvent& e) {
      if (print_trace) std::cout << e.text() << "\n";
      if (timed) simulator.add(e);
    };
  }
  oracle::Machine machine(isa, options);
  std::map<std::string, hlo::Literal> outputs;
  try {
    outputs = machine.run(program, inputs);
  } catch (const DiagnosticError&) {
    for (const Diagnostic& d : warnings.all())
      std::cerr << d.str() << "\n";
    throw;
  }
  for (const Diagnostic& d : warnings.all())
    std::cerr << d.str() << "\n";

  makeDirectories(*dir);
  OutputTransaction out;
  for (const auto& [name, lit] : outputs)
    out.write(*dir + "/" + name + ".npy", hlo::serializeNpyLiteral(lit));
  timing::Report report = simulator.report();
  if (trace_file) {
    std::ostringstream text;
    simulator.writeChromeTrace(text);
    out.write(*trace_file, text.str());
  }
  if (json_file) out.write(*json_file, report.json());
  out.commit();
  if (args.has("stats")) std::cout << machine.stats().text(isa);
  if (args.has("timing")) std::cout << report.text();
  return 0;
}

Registration run_command{Command{
    "run",
    "SPEC PROGRAM.tasm",
    "run a .tasm program on the oracle",
    "Loads SPEC (a .taidl ISA description; --param K=V overrides its parameters), parses\n"
    "PROGRAM.tasm (docs/tasm.md), writes its constants and the --input tensors into HBM, executes\n"
    "it with the spec's semantics, bit for bit (docs/oracle.md), and writes DIR/<output>.npy for\n"
    "every output. A violated constraint or an out-of-range slice is an error naming the\n"
    "instruction and its attribute values (see --warn-constraints and --clamp).",
    {CommandLineOption("param", "K=V", "override a spec parameter (repeatable)", true),
     CommandLineOption("input", "NAME=FILE", "value of input NAME from a .npy file (repeatable)",
                       true),
     CommandLineOption("output-dir", "DIR",
                       "directory for the output .npy files (created if missing)"),
     CommandLineOption("trace", "", "print each executed instruction with its attribute values"),
     CommandLineOption("stats", "",
                       "print instruction counts, bytes moved per buffer pair and the total cost"),
     CommandLineOption("timing", "",
                       "print the cycle model's report: cycles, engine and memory-port use, "
                       "stalls (docs/timing.md)"),
     CommandLineOption("timing-trace", "FILE",
                       "write the cycle model's schedule as Chrome trace-event JSON (opens in "
                       "ui.perfetto.dev; the first million instructions)"),
     CommandLineOption("timing-json", "FILE", "write the cycle model's report as JSON"),
     CommandLineOption("clamp", "",
                       "clamp out-of-range slice starts as XLA does instead of failing"),
     CommandLineOption("warn-constraints", "",
                       "warn about violated constraints instead of failing")},
    2,
    2,
    runProgram}};

}  // namespace
}  // namespace tacit::cli
