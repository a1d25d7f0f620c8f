#include "backend/module_run.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "backend/kernel_run.h"
#include "backend/verify.h"
#include "hlo_eval/evaluator.h"
#include "hlo_eval/random_literal.h"
#include "oracle/machine.h"
#include "support/diagnostic.h"

namespace tacit::backend {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The steps the root depends on: as the HLO evaluator, a run leaves the others out (an operation
// it cannot evaluate whose result nobody reads does not stop it).
std::vector<bool> liveSteps(const ModuleProgram& program) {
  std::unordered_set<const HloInstruction*> live;
  std::vector<const HloInstruction*> stack = {program.partition.module->entry()->root()};
  while (!stack.empty()) {
    const HloInstruction* op = stack.back();
    stack.pop_back();
    if (!live.insert(op).second) continue;
    stack.insert(stack.end(), op->operands().begin(), op->operands().end());
  }
  std::vector<bool> out;
  for (const ModuleStep& s : program.steps) {
    if (s.kind != StepKind::kAccelerator) {
      out.push_back(live.count(s.operation) > 0);
      continue;
    }
    const auto& ops = program.partition.regions[s.region].operations;
    out.push_back(std::any_of(ops.begin(), ops.end(),
                              [&](const HloInstruction* op) { return live.count(op); }));
  }
  return out;
}

// The values computed so far, each kept until its last reader has taken it (a module's
// intermediates need not all be alive at once).
class Values {
 public:
  Values(const ModuleProgram& program, const std::vector<bool>& live) {
    for (size_t i = 0; i < program.steps.size(); ++i) {
      if (!live[i]) continue;
      for (const HloInstruction* p : readsOf(program, program.steps[i]))
        ++readers_[p];
    }
    ++readers_[program.partition.module->entry()->root()];  // the run's result
  }

  // The instructions a step reads the values of (each once).
  static std::vector<const HloInstruction*> readsOf(const ModuleProgram& program,
                                                    const ModuleStep& s) {
    switch (s.kind) {
      case StepKind::kAccelerator:
        return program.partition.regions[s.region].parameters;
      case StepKind::kHost:
        return s.parameters;
      case StepKind::kPlumbing:
        return {s.operation->operands().begin(), s.operation->operands().end()};
    }
    return {};
  }

  void set(const HloInstruction* op, hlo::Literal value) {
    if (readers_[op] > 0) values_[op] = std::move(value);
  }
  const hlo::Literal& get(const HloInstruction* op) const {
    auto it = values_.find(op);
    if (it == values_.end())
      throw std::logic_error("module run: '" + op->name() + "' is read before it is computed");
    return it->second;
  }
  // The value for its reader: moved out when this is its last read, copied otherwise.
  hlo::Literal take(const HloInstruction* op) {
    const hlo::Literal& v = get(op);
    if (--readers_[op] > 0) return v;
    hlo::Literal out = std::move(values_[op]);
    values_.erase(op);
    return out;
  }
  // A read that needs no copy: done() once the reader is finished with it.
  void done(const HloInstruction* op) {
    if (--readers_[op] == 0) values_.erase(op);
  }

 private:
  std::unordered_map<const HloInstruction*, int64_t> readers_;
  std::unordered_map<const HloInstruction*, hlo::Literal> values_;
};

hlo::Literal plumbing(const HloInstruction& op, std::span<const hlo::Literal> arguments,
                      Values& values) {
  switch (op.opcode()) {
    case HloOpcode::kParameter: {
      const auto i = static_cast<size_t>(op.parameterNumber());
      if (i >= arguments.size())
        fail("the module takes parameter " + std::to_string(i) + " ('" + op.name() + "'), and " +
             std::to_string(arguments.size()) + " values were given");
      const hlo::Shape& given = arguments[i].shape();
      const bool fits = op.shape().isArray()
                            ? given.isArray() && given.elementType() == op.shape().elementType() &&
                                  given.dims() == op.shape().dims()
                            : given.isTuple();
      if (!fits)
        fail("parameter " + std::to_string(i) + " ('" + op.name() + "') is " + op.shape().str() +
             ", the value given is " + arguments[i].shape().str());
      return arguments[i];
    }
    case HloOpcode::kConstant:
      if (!op.literal() || op.literal()->isUnknown())
        fail(op.parent()->parent()->sourceFile(), op.loc(),
             "constant '" + op.name() +
                 "' has no data (the module elides it as {...}): the "
                 "module cannot be run");
      return *op.literal();
    case HloOpcode::kTuple: {
      std::vector<hlo::Literal> elements;
      for (const HloInstruction* o : op.operands())
        elements.push_back(values.take(o));
      return hlo::Literal::tuple(std::move(elements));
    }
    case HloOpcode::kGetTupleElement: {
      const HloInstruction* tuple = op.operand(0);
      const auto i = static_cast<size_t>(op.attrs().index.value_or(-1));
      const hlo::Literal& t = values.get(tuple);
      if (!t.isTuple() || i >= t.elements().size())
        throw std::logic_error("module run: get-tuple-element '" + op.name() +
                               "' of a value without that element");
      hlo::Literal out = t.elements()[i];
      values.done(tuple);
      return out;
    }
    default:
      throw std::logic_error("module run: '" + op.name() + "' is not plumbing");
  }
}

// The region kernel's results as the values of its result instructions: the kernel's root is
// the one result, or the tuple of them (results are arrays, or one tuple of arrays).
void storeRegionResults(const AcceleratorRegion& region, std::vector<hlo::Literal> results,
                        Values& values) {
  if (region.results.size() == 1 && region.results[0]->shape().isTuple()) {
    values.set(region.results[0], hlo::Literal::tuple(std::move(results)));
    return;
  }
  if (results.size() != region.results.size())
    throw std::logic_error("module run: a region's program returned " +
                           std::to_string(results.size()) + " values for " +
                           std::to_string(region.results.size()) + " results");
  for (size_t i = 0; i < results.size(); ++i)
    values.set(region.results[i], std::move(results[i]));
}

void flatten(const hlo::Literal& v, std::vector<const hlo::Literal*>& out) {
  if (!v.isTuple()) {
    out.push_back(&v);
    return;
  }
  for (const hlo::Literal& e : v.elements())
    flatten(e, out);
}

// The instruction that produced each array leaf of the root's value, where the root is a tuple
// of values (itself, otherwise).
std::vector<const HloInstruction*> leafProducers(const HloInstruction& root) {
  std::vector<const HloInstruction*> out;
  const size_t leaves = hlo::flattenShape(root.shape()).size();
  if (root.opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* o : root.operands()) {
      const size_t n = hlo::flattenShape(o->shape()).size();
      out.insert(out.end(), n, o);
    }
  }
  if (out.size() != leaves) out.assign(leaves, &root);
  return out;
}

// A host step's operation evaluated; a failure is located at the operation in the module (not
// in the one-operation kernel, a text the user never sees).
hlo::Literal evaluateOnHost(const ModuleStep& step, std::span<const hlo::Literal> args,
                            const hlo::HloModule& module) {
  try {
    return hlo::evaluate(*step.kernel, args);
  } catch (const DiagnosticError& e) {
    fail(module.sourceFile(), step.operation->loc(),
         "the HLO evaluator cannot evaluate host operation '" + step.operation->name() +
             "': " + e.diagnostic().message);
  }
}

}  // namespace

void checkRunFits(const hlo::HloModule& module, double max_bytes) {
  double total = 0, largest = 0;
  const HloInstruction* largest_value = nullptr;
  for (const auto& inst : module.entry()->instructions()) {
    double bytes = 0;
    for (const hlo::Shape& leaf : hlo::flattenShape(inst->shape()))
      bytes += static_cast<double>(leaf.byteSize());
    total += bytes;
    if (bytes > largest) {
      largest = bytes;
      largest_value = inst.get();
    }
  }
  if (total <= max_bytes) return;
  auto mib = [](double b) { return std::to_string(static_cast<int64_t>(b / (1 << 20))) + " MiB"; };
  fail(module.sourceFile(), largest_value->loc(),
       "the module's values take " + mib(total) + ", above the run limit of " + mib(max_bytes) +
           " (the largest, '" + largest_value->name() + "', " + mib(largest) + ")",
       "a run holds its inputs, its intermediate values and, to verify, the HLO evaluator's");
}

ModuleRun runModule(const taidl::Isa& isa, const ModuleProgram& program,
                    std::span<const hlo::Literal> arguments, const ModuleRunOptions& options) {
  checkRunFits(*program.partition.module, options.max_bytes);
  const hlo::HloComputation& entry = *program.partition.module->entry();
  if (arguments.size() != static_cast<size_t>(entry.parameterCount()))
    fail("the module takes " + std::to_string(entry.parameterCount()) + " parameters, and " +
         std::to_string(arguments.size()) + " values were given");
  ModuleRun run;
  const std::vector<bool> live = liveSteps(program);
  Values values(program, live);
  for (size_t i = 0; i < program.steps.size(); ++i) {
    if (!live[i]) continue;
    const ModuleStep& step = program.steps[i];
    const auto t0 = Clock::now();
    switch (step.kind) {
      case StepKind::kPlumbing:
        values.set(step.operation, plumbing(*step.operation, arguments, values));
        continue;
      case StepKind::kHost: {
        std::vector<hlo::Literal> args;
        for (const HloInstruction* p : step.parameters)
          args.push_back(values.take(p));
        values.set(step.operation, evaluateOnHost(step, args, *program.partition.module));
        const double s = since(t0);
        run.host_seconds += s;
        run.steps.push_back({i, s, 0, 0});
        continue;
      }
      case StepKind::kAccelerator: {
        const AcceleratorRegion& region = program.partition.regions[step.region];
        std::vector<const hlo::Literal*> args;
        for (const HloInstruction* p : region.parameters)
          args.push_back(&values.get(p));
        oracle::Stats stats;
        std::vector<hlo::Literal> results =
            runKernelProgram(isa, *region.kernel, region.compiled.program, args, &stats);
        for (const HloInstruction* p : region.parameters)
          values.done(p);
        if (options.on_accelerator_results) options.on_accelerator_results(step, results);
        storeRegionResults(region, std::move(results), values);
        const double s = since(t0);
        run.accelerator_seconds += s;
        run.instructions += stats.instructions;
        run.cost += stats.total_cost;
        // The compiler's count, as `tacit compile` reports it (a store's updated bytes).
        const int64_t hbm = region.compiled.costs.hbm_bytes;
        run.hbm_bytes += hbm;
        run.steps.push_back({i, s, stats.instructions, stats.total_cost, hbm});
        continue;
      }
    }
  }
  run.result = values.take(entry.root());
  return run;
}

std::vector<hlo::Literal> randomArguments(const hlo::HloModule& module, uint64_t seed,
                                          double max_bytes) {
  checkRunFits(module, max_bytes);
  std::vector<hlo::Literal> out;
  for (const HloInstruction* p : module.entry()->parameters())
    out.push_back(hlo::randomLiteral(p->shape(), hlo::mixSeed(seed, out.size())));
  return out;
}

std::string firstOutputDifference(const hlo::HloModule& module, const hlo::Literal& got,
                                  const hlo::Literal& want) {
  std::vector<const hlo::Literal*> g, w;
  flatten(got, g);
  flatten(want, w);
  const std::vector<const HloInstruction*> producers = leafProducers(*module.entry()->root());
  if (g.size() != w.size())
    return "the module run returned " + std::to_string(g.size()) + " outputs, the HLO evaluator " +
           std::to_string(w.size());
  for (size_t i = 0; i < w.size(); ++i) {
    const std::string name = "output " + std::to_string(i) + " ('" +
                             (i < producers.size() ? producers[i]->name() : "?") + "'): ";
    const hlo::Shape& gs = g[i]->shape();
    const hlo::Shape& ws = w[i]->shape();
    if (gs.elementType() != ws.elementType() || gs.dims() != ws.dims())
      return name + "the module run computed " + gs.str() + ", the HLO evaluator " + ws.str();
    const std::string diff = firstDifference(*g[i], *w[i], {}, "module run");
    if (!diff.empty()) return name + diff;
  }
  return {};
}

}  // namespace tacit::backend
