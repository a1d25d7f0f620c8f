// `tacit hlo eval FILE --input NAME=a.npy ... [--random-inputs SEED] --output-dir DIR`: evaluates
// an HLO module's entry computation with the reference evaluator and writes one .npy per output.
//
// Output files: DIR/<root>.npy for an array result; for a tuple result one file per array leaf,
// DIR/<root>.<i>.npy (nested tuples: DIR/<root>.<i>.<j>.npy). Per output, one line on stdout:
//   <file>: <shape> fnv1a64=<16 hex digits>
// where the checksum is 64-bit FNV-1a over the array's raw little-endian bytes in row-major order
// (the .npy payload without its header), so it identifies the values independently of the file.
#include <cstdio>
#include <iostream>
#include <map>

#include "cli.h"
#include "hlo/npy_literal.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"
#include "hlo_eval/evaluator.h"
#include "hlo_eval/random_literal.h"
#include "stablehlo/input.h"
#include "support/output.h"
#include "support/source.h"
#include "support/strings.h"

namespace tacit::cli {
namespace {

using hlo::Literal;
using hlo::Shape;

uint64_t fnv1a64(const uint8_t* data, size_t size) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= data[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string parameterList(const hlo::HloComputation& entry) {
  std::string out;
  for (int64_t i = 0; i < entry.parameterCount(); ++i) {
    const hlo::HloInstruction* p = entry.parameter(i);
    if (!out.empty()) out += ", ";
    out += std::to_string(i) + "=" + (p ? p->name() + " " + p->shape().shortStr() : "?");
  }
  return out.empty() ? "none" : out;
}

// Resolves an --input key (a parameter name, or its number) to a parameter number.
int64_t parameterIndex(const hlo::HloComputation& entry, const std::string& key) {
  for (int64_t i = 0; i < entry.parameterCount(); ++i) {
    if (entry.parameter(i) != nullptr && entry.parameter(i)->name() == key) return i;
  }
  bool digits = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
  if (digits && key.size() < 10 && std::stoll(key) < entry.parameterCount()) return std::stoll(key);
  fail("--input " + key + "=...: the entry computation has no parameter '" + key + "'",
       "parameters: " + parameterList(entry));
}

std::vector<Literal> loadInputs(const hlo::HloComputation& entry, const Args& args) {
  std::vector<std::optional<Literal>> inputs(static_cast<size_t>(entry.parameterCount()));
  for (const auto& [key, path] : args.keyValues("input")) {
    int64_t i = parameterIndex(entry, key);
    auto& slot = inputs[static_cast<size_t>(i)];
    const hlo::HloInstruction* param = entry.parameter(i);
    if (slot) fail("--input gives parameter '" + param->name() + "' twice");
    slot = hlo::readNpyLiteral(path, param->shape(), "parameter '" + param->name() + "'");
  }
  std::optional<int64_t> seed = args.getInt("random-inputs");
  std::vector<std::string> missing;
  std::vector<Literal> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const hlo::HloInstruction* param = entry.parameter(static_cast<int64_t>(i));
    if (!inputs[i] && seed) {
      inputs[i] = hlo::randomLiteral(param->shape(), hlo::mixSeed(static_cast<uint64_t>(*seed), i));
    }
    if (!inputs[i]) {
      missing.push_back(param->name() + " " + param->shape().shortStr());
      continue;
    }
    out.push_back(std::move(*inputs[i]));
  }
  if (!missing.empty()) {
    fail("missing " + plural(static_cast<int64_t>(missing.size()), "input") + ": " +
             join(missing, ", "),
         "give --input NAME=FILE.npy for each, or --random-inputs SEED");
  }
  return out;
}

// Flattens the result into (file suffix, leaf) pairs: "" for an array, ".0", ".1.2", ... inside
// tuples.
void flatten(const Literal& l, const std::string& suffix,
             std::vector<std::pair<std::string, const Literal*>>& out) {
  if (!l.isTuple()) {
    out.emplace_back(suffix, &l);
    return;
  }
  for (size_t i = 0; i < l.elements().size(); ++i) {
    flatten(l.elements()[i], suffix + "." + std::to_string(i), out);
  }
}

int runEval(const Args& args) {
  const std::string& path = args.positionals()[0];
  auto dir = args.get("output-dir");
  if (!dir)
    fail("missing --output-dir DIR", "tacit hlo eval FILE --input NAME=a.npy --output-dir DIR");
  std::vector<hlo::InputPart> parts = hlo::splitInputFile(readFile(path));
  if (parts.size() != 1) {
    fail(path, {},
         "the file holds " + std::to_string(parts.size()) + " modules; hlo eval takes one");
  }
  auto module = stablehlo::parseAnyModule(parts[0].text, path);
  hlo::verifyModule(*module);
  hlo::EvalOptions options;
  if (auto cap = args.getInt("max-while-iterations")) {
    if (*cap < 0) fail("--max-while-iterations must not be negative");
    options.max_while_iterations = *cap;
  }
  if (args.has("strict-dynamic-indices"))
    options.dynamic_index_mode = hlo::DynamicIndexMode::kError;
  hlo::EvalPlan plan = hlo::EvalPlan::compile(*module->entry(), options);
  std::vector<Literal> inputs = loadInputs(*module->entry(), args);
  Literal result = plan.run(inputs);

  std::vector<std::pair<std::string, const Literal*>> leaves;
  flatten(result, "", leaves);
  makeDirectories(*dir);
  OutputTransaction out;
  std::string report;
  for (const auto& [suffix, leaf] : leaves) {
    std::string file = *dir + "/" + module->entry()->root()->name() + suffix + ".npy";
    out.write(file, hlo::serializeNpyLiteral(*leaf));
    report += file + ": " + leaf->shape().shortStr() +
              " fnv1a64=" + hex64(fnv1a64(leaf->bytes(), leaf->byteCount())) + "\n";
  }
  out.commit();
  std::cout << report;
  return 0;
}

Registration eval_command{Command{
    "hlo eval",
    "FILE",
    "evaluate an HLO module with the reference evaluator",
    "Evaluates the entry computation of FILE (XLA CPU semantics, docs/numerics.md) on inputs\n"
    "given per parameter (by name or number) as .npy files, or random ones from a seed\n"
    "(docs/formats.md). Writes DIR/<root>.npy, or DIR/<root>.<i>.npy per element of a tuple\n"
    "result, and prints each output's shape and FNV-1a 64 checksum of its raw bytes.",
    {{"input", "NAME=FILE", "value of parameter NAME (or number) from a .npy file", true},
     {"random-inputs", "SEED", "random values (seeded) for parameters without --input"},
     {"output-dir", "DIR", "directory for the output .npy files (created if missing)"},
     {"max-while-iterations", "N", "fail a while loop after N iterations (default 1000000)"},
     {"strict-dynamic-indices", "",
      "report out-of-range dynamic-slice starts instead of clamping them"}},
    1,
    1,
    runEval}};

}  // namespace
}  // namespace tacit::cli
