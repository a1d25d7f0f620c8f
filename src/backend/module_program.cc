#include "backend/module_program.h"

#include <functional>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "backend/region_kernel.h"
#include "hlo/parser.h"
#include "support/diagnostic.h"

namespace tacit::backend {
namespace {

using hlo::HloInstruction;

// The step an instruction belongs to before ordering: every instruction is one, except the
// operations of a region, which share their region's.
struct Unordered {
  std::vector<ModuleStep> steps;
  std::vector<size_t> first;  // each step's first instruction in the computation's order
  std::unordered_map<const HloInstruction*, size_t> step_of;
};

Unordered unorderedSteps(const ModulePartition& partition) {
  Unordered u;
  std::unordered_map<const HloInstruction*, size_t> region_of;
  for (size_t r = 0; r < partition.regions.size(); ++r) {
    for (const HloInstruction* op : partition.regions[r].operations)
      region_of[op] = r;
  }
  std::unordered_map<const HloInstruction*, const std::string*> reason;
  for (const HostOperation& h : partition.host)
    reason[h.operation] = &h.reason;
  std::unordered_map<size_t, size_t> region_step;
  size_t index = 0;
  for (const auto& inst : partition.module->entry()->instructions()) {
    const HloInstruction* op = inst.get();
    auto r = region_of.find(op);
    if (r != region_of.end()) {
      auto [it, added] = region_step.try_emplace(r->second, u.steps.size());
      if (added) {
        ModuleStep s;
        s.kind = StepKind::kAccelerator;
        s.region = r->second;
        u.steps.push_back(std::move(s));
        u.first.push_back(index);
      }
      u.step_of[op] = it->second;
    } else {
      ModuleStep s;
      s.operation = op;
      if (!isPlumbing(op->opcode())) {
        s.kind = StepKind::kHost;
        auto why = reason.find(op);
        s.reason = why != reason.end() ? *why->second : "not asked";
        RegionKernel k = regionKernel({op}, {op});
        try {
          s.kernel = hlo::parseModule(k.text, "host-" + op->name() + ".hlo");
        } catch (const DiagnosticError& e) {
          fail(partition.module->sourceFile(), op->loc(),
               "operation '" + op->name() +
                   "' cannot be written as a kernel of its own for the "
                   "host: " +
                   e.diagnostic().message);
        }
        s.parameters = std::move(k.parameters);
      }
      u.step_of[op] = u.steps.size();
      u.steps.push_back(std::move(s));
      u.first.push_back(index);
    }
    ++index;
  }
  return u;
}

}  // namespace

int64_t ModuleProgram::count(StepKind kind) const {
  int64_t n = 0;
  for (const ModuleStep& s : steps)
    n += s.kind == kind;
  return n;
}

ModuleProgram moduleProgram(ModulePartition partition) {
  Unordered u = unorderedSteps(partition);
  const size_t n = u.steps.size();
  // The dependences between steps (an edge per operand read across steps; repeats are harmless).
  std::vector<std::vector<size_t>> successors(n);
  std::vector<size_t> pending(n, 0);
  for (const auto& inst : partition.module->entry()->instructions()) {
    const size_t to = u.step_of.at(inst.get());
    for (const HloInstruction* o : inst->operands()) {
      const size_t from = u.step_of.at(o);
      if (from == to) continue;
      successors[from].push_back(to);
      ++pending[to];
    }
  }
  // Kahn's order, the ready step that comes first in the computation taken first.
  using Ready = std::pair<size_t, size_t>;  // (first instruction, step)
  std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
  for (size_t s = 0; s < n; ++s) {
    if (pending[s] == 0) ready.push({u.first[s], s});
  }
  ModuleProgram program;
  while (!ready.empty()) {
    const size_t s = ready.top().second;
    ready.pop();
    for (size_t next : successors[s]) {
      if (--pending[next] == 0) ready.push({u.first[next], next});
    }
    program.steps.push_back(std::move(u.steps[s]));
  }
  if (program.steps.size() != n)
    throw std::logic_error("module program: the partition's steps depend on each other in a cycle");
  program.partition = std::move(partition);
  return program;
}

}  // namespace tacit::backend
