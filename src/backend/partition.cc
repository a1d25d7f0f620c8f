#include "backend/partition.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "backend/module_lowering.h"
#include "backend/region_kernel.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "support/diagnostic.h"

namespace tacit::backend {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using Ops = std::vector<const HloInstruction*>;

// A diagnostic's first line without the instruction's name: operations that fail for one reason
// group under one text.
std::string reasonOf(const Diagnostic& d, const HloInstruction& op) {
  std::string why = d.message;
  const std::string quoted = "'" + op.name() + "'";
  for (const std::string& form : {" (" + quoted + ")", quoted + " ", quoted}) {
    size_t at = why.find(form);
    if (at != std::string::npos) {
      why.erase(at, form.size());
      break;
    }
  }
  return why.empty() ? "no reason given" : why;
}

// The entry computation as a graph: each instruction's position and users.
struct EntryGraph {
  std::unordered_map<const HloInstruction*, size_t> index;
  std::unordered_map<const HloInstruction*, Ops> users;

  explicit EntryGraph(const HloComputation& entry) {
    for (const auto& inst : entry.instructions()) {
      index[inst.get()] = index.size();
      for (const HloInstruction* o : inst->operands())
        users[o].push_back(inst.get());
    }
  }
  const Ops& usersOf(const HloInstruction* op) const {
    static const Ops none;
    auto it = users.find(op);
    return it == users.end() ? none : it->second;
  }
  void sort(Ops& ops) const {
    std::sort(ops.begin(), ops.end(), [&](const HloInstruction* a, const HloInstruction* b) {
      return index.at(a) < index.at(b);
    });
  }
};

// The connected components of `ops` (edges: operand to user, both inside `ops`), each in the
// computation's order.
std::vector<Ops> components(const Ops& ops, const EntryGraph& g) {
  std::unordered_map<const HloInstruction*, const HloInstruction*> parent;
  for (const HloInstruction* op : ops)
    parent[op] = op;
  auto find = [&](const HloInstruction* x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const HloInstruction* op : ops) {
    for (const HloInstruction* o : op->operands()) {
      if (parent.count(o)) parent[find(o)] = find(op);
    }
  }
  std::map<size_t, Ops> by_root;  // keyed by the root's index
  for (const HloInstruction* op : ops)
    by_root[g.index.at(find(op))].push_back(op);
  std::vector<Ops> out;
  for (auto& [root, members] : by_root) {
    g.sort(members);
    out.push_back(std::move(members));
  }
  return out;
}

// The operations of `region` that a path leaving it comes back to: reachable from an instruction
// outside the region that is itself reachable from the region. Regions already offloaded run as
// one step each, so a path that enters one continues from all of its operations. Empty when the
// region is convex. Its complement is never empty (an operation without a predecessor in the
// region is not reached) and is convex: a path from it that comes back would make its end reached.
std::set<const HloInstruction*> reentered(
    const Ops& region, const EntryGraph& g,
    const std::unordered_map<const HloInstruction*, size_t>& offloaded_in,
    const std::vector<AcceleratorRegion>& offloaded) {
  const std::set<const HloInstruction*> inside(region.begin(), region.end());
  std::set<const HloInstruction*> seen, reached;
  std::vector<bool> region_expanded(offloaded.size(), false);
  Ops stack;
  auto push = [&](const HloInstruction* op) {
    if (seen.insert(op).second) stack.push_back(op);
  };
  for (const HloInstruction* op : region) {
    for (const HloInstruction* u : g.usersOf(op)) {
      if (!inside.count(u)) push(u);
    }
  }
  while (!stack.empty()) {
    const HloInstruction* op = stack.back();
    stack.pop_back();
    if (inside.count(op)) reached.insert(op);
    auto in = offloaded_in.find(op);
    if (in != offloaded_in.end() && !region_expanded[in->second]) {
      region_expanded[in->second] = true;
      for (const HloInstruction* member : offloaded[in->second].operations)
        push(member);
    }
    for (const HloInstruction* u : g.usersOf(op))
      push(u);
  }
  return reached;
}

// `message` with each operation name of `from` quoted as diagnostics quote them ('name') replaced
// by the name at the same place in `to`.
std::string renamed(std::string message, const std::vector<std::string>& from,
                    const std::vector<std::string>& to) {
  std::string out;
  for (size_t at = 0; at < message.size();) {
    const size_t open = message.find('\'', at);
    const size_t close = open == std::string::npos ? open : message.find('\'', open + 1);
    if (close == std::string::npos) {
      out += message.substr(at);
      break;
    }
    std::string name = message.substr(open + 1, close - open - 1);
    for (size_t i = 0; i < from.size() && i < to.size(); ++i)
      if (from[i] == name) name = to[i];
    out += message.substr(at, open - at) + "'" + name + "'";
    at = close + 1;
  }
  return out;
}

// A region that stopped at a search limit and has at most this many operations gives up its last
// one; a larger one is halved.
constexpr size_t kPeeledRegion = 16;

class Partitioner {
 public:
  // `apart`: operations whose first regions are asked apart from the others (a convolution's data
  // movement, which would otherwise join its GEMM's region: a region the ISA computes only without
  // them).
  Partitioner(const isel::Target& target, const hlo::HloModule& module,
              const PartitionOptions& options,
              const std::unordered_set<const HloInstruction*>& apart = {})
      : target_(target), options_(options), graph_(*module.entry()), apart_(apart) {
    out_.module = &module;
    for (const auto& inst : module.entry()->instructions()) {
      if (!isPlumbing(inst->opcode())) out_.operations.push_back(inst.get());
    }
    compile_options_.time_limit = options.time_limit;
  }

  ModulePartition run() {
    // The first regions: connected components, cut into runs of at most max_region operations
    // in the computation's order (a compile of thousands of operations only finds its time
    // limit).
    std::vector<Ops> first;
    Ops together, apart;
    for (const HloInstruction* op : out_.operations)
      (apart_.count(op) ? apart : together).push_back(op);
    std::vector<Ops> initial = components(together, graph_);
    for (Ops& component : components(apart, graph_))
      initial.push_back(std::move(component));
    for (const Ops& component : initial) {
      for (size_t at = 0; at < component.size(); at += options_.max_region) {
        const size_t end = std::min(component.size(), at + options_.max_region);
        const Ops run(component.begin() + static_cast<long>(at),
                      component.begin() + static_cast<long>(end));
        for (Ops& part : components(run, graph_))
          first.push_back(std::move(part));
      }
    }
    schedule(std::move(first));
    while (!work_.empty()) {
      Ops region = std::move(work_.back());
      work_.pop_back();
      ask(region);
    }
    for (const HloInstruction* op : out_.operations) {
      if (offloaded_in_.count(op)) continue;
      auto why = host_.find(op);
      out_.host.push_back({op, why != host_.end() ? why->second : "not asked"});
    }
    return std::move(out_);
  }

 private:
  // Regions to ask next, in this order (the work list is popped from the back).
  void schedule(std::vector<Ops> regions) {
    for (auto it = regions.rbegin(); it != regions.rend(); ++it)
      work_.push_back(std::move(*it));
  }
  void scheduleOneByOne(const Ops& region) {
    std::vector<Ops> singles;
    for (const HloInstruction* op : region)
      singles.push_back({op});
    schedule(std::move(singles));
  }

  void ask(const Ops& region) {
    if (out_.compiles >= options_.max_compiles) {
      for (const HloInstruction* op : region)
        host_[op] = "not tried: the compile budget (" + std::to_string(options_.max_compiles) +
                    " compiles) is spent";
      return;
    }
    double region_bytes = 0;
    for (const HloInstruction* op : region)
      region_bytes += operationBytes(*op);
    if (region_bytes > options_.max_region_bytes) {
      if (region.size() == 1) {
        host_[region[0]] =
            "not tried: its operations move " +
            std::to_string(static_cast<int64_t>(region_bytes / (1 << 20))) +
            " MiB, above the coverage limit of " +
            std::to_string(static_cast<int64_t>(options_.max_region_bytes / (1 << 20))) + " MiB";
      } else {  // smaller pieces may fit
        scheduleOneByOne(region);
      }
      return;
    }
    const std::set<const HloInstruction*> late =
        reentered(region, graph_, offloaded_in_, out_.regions);
    if (!late.empty()) {  // not one step: the part a path comes back to is asked after the rest
      Ops early_ops, late_ops;
      for (const HloInstruction* op : region)
        (late.count(op) ? late_ops : early_ops).push_back(op);
      std::vector<Ops> pieces = components(early_ops, graph_);
      for (Ops& piece : components(late_ops, graph_))
        pieces.push_back(std::move(piece));
      schedule(std::move(pieces));
      return;
    }
    compileRegion(region);
  }

  // compile(), once per kernel: regions that differ only in their operations' names (a depthwise
  // convolution's blocks of channels, a model's repeated layers) share the result, or the
  // diagnostic (its line is the same operation's in each).
  CompileResult compileOnce(hlo::HloModule& kernel) {
    // The key: the kernel printed with its instructions renamed v0, v1, ... (then named back).
    std::vector<std::string> names;  // the kernel's, in order
    for (const auto& inst : kernel.entry()->instructions()) {
      names.push_back(inst->name());
      inst->setName("v" + std::to_string(names.size() - 1));
    }
    const std::string key = hlo::printModule(kernel);
    for (size_t i = 0; i < names.size(); ++i)
      kernel.entry()->instructions()[i]->setName(names[i]);
    auto known = compiled_.find(key);
    if (known != compiled_.end()) {
      if (const auto* failed = std::get_if<Failure>(&known->second)) {
        // The diagnostic names the first region's operations: this region's are at their places.
        Diagnostic d = failed->diagnostic;
        d.message = renamed(d.message, failed->names, names);
        throw DiagnosticError(std::move(d));
      }
      return std::get<CompileResult>(known->second);
    }
    try {
      CompileResult result = compile(target_, kernel, compile_options_);
      compiled_.emplace(key, result);
      return result;
    } catch (const DiagnosticError& e) {
      compiled_.emplace(key, Failure{e.diagnostic(), std::move(names)});
      throw;
    }
  }

  void compileRegion(const Ops& region) {
    const std::set<const HloInstruction*> inside(region.begin(), region.end());
    Ops outputs;
    for (const HloInstruction* op : region) {
      const Ops& u = graph_.usersOf(op);
      const bool used_outside =
          op->isRoot() || std::any_of(u.begin(), u.end(),
                                      [&](const HloInstruction* x) { return !inside.count(x); });
      if (used_outside) outputs.push_back(op);
    }
    RegionKernel kernel = regionKernel(region, outputs);
    ++out_.compiles;
    try {
      auto parsed = hlo::parseModule(kernel.text, "region.hlo");
      CompileResult compiled = compileOnce(*parsed);
      for (const HloInstruction* op : region)
        offloaded_in_[op] = out_.regions.size();
      out_.regions.push_back({region, std::move(kernel.parameters), std::move(outputs),
                              std::move(kernel.text), std::move(parsed), std::move(compiled)});
    } catch (const DiagnosticError& e) {
      // The operation the diagnostic points at stays on the host, with its reason; the rest of
      // the region is asked again, split where that operation joined it.
      const Diagnostic& d = e.diagnostic();
      if (stoppedAtALimit(d) && region.size() > 1) {
        // The operation named is only where the search had got to. A small region (a GEMM and
        // its epilogue) gives up its last operation, asked apart after the rest (an epilogue's
        // last step, say a ReLU the ISA lacks after a GEMM it computes); a larger one is asked as
        // its two halves in the computation's order, so that finding what the ISA computes in it
        // takes a number of compiles logarithmic in its size.
        const size_t keep = region.size() <= kPeeledRegion ? region.size() - 1 : region.size() / 2;
        std::vector<Ops> next =
            components(Ops(region.begin(), region.begin() + static_cast<long>(keep)), graph_);
        for (Ops& piece :
             components(Ops(region.begin() + static_cast<long>(keep), region.end()), graph_))
          next.push_back(std::move(piece));
        schedule(std::move(next));
        return;
      }
      const size_t at = d.loc.line > 0 ? static_cast<size_t>(d.loc.line - 1) : kernel.lines.size();
      const HloInstruction* culprit = at < kernel.lines.size() ? kernel.lines[at] : nullptr;
      if (culprit == nullptr && region.size() == 1) culprit = region[0];
      if (culprit == nullptr) {  // about the region as a whole: ask its operations one by one
        scheduleOneByOne(region);
        return;
      }
      host_[culprit] = reasonOf(d, *culprit);
      Ops rest;
      for (const HloInstruction* op : region) {
        if (op != culprit) rest.push_back(op);
      }
      schedule(components(rest, graph_));
    }
  }

  const isel::Target& target_;
  const PartitionOptions& options_;
  CompileOptions compile_options_;
  EntryGraph graph_;
  const std::unordered_set<const HloInstruction*>& apart_;
  ModulePartition out_;
  std::vector<Ops> work_;
  std::unordered_map<const HloInstruction*, std::string> host_;     // operation -> reason
  std::unordered_map<const HloInstruction*, size_t> offloaded_in_;  // operation -> its region
  struct Failure {
    Diagnostic diagnostic;
    std::vector<std::string> names;  // the failed kernel's instructions, in order
  };
  std::map<std::string, std::variant<CompileResult, Failure>> compiled_;  // by anonymous text
};

}  // namespace

ModuleLowering moduleLowering(const isel::Target& target) {
  // The smallest units: a multiple of the smallest depth tiles every deeper unit's steps too.
  ModuleLowering lowering;
  const isel::IsaNeeds& needs = target.needs();
  if (!needs.dot_depths.empty()) lowering.depth_multiple = *needs.dot_depths.begin();
  if (!needs.dot_cols.empty()) lowering.block = *needs.dot_cols.begin();
  lowering.column_multiple = std::max<int64_t>(lowering.block, 1);
  // Rows whose unit extent is a range are recorded by its largest (isel::IsaNeeds): they take the
  // column unit where it is smaller, as the tiler's unit tiles do.
  lowering.row_multiple = lowering.column_multiple;
  if (!needs.dot_rows.empty())
    lowering.row_multiple = std::min(lowering.row_multiple, *needs.dot_rows.begin());
  return lowering;
}

ModulePartition partition(const isel::Target& target, const hlo::HloModule& module,
                          const PartitionOptions& options) {
  ModulePartition p;
  LoweredModule lowered;
  if (options.lower) lowered = lowerModule(module, moduleLowering(target));
  if (lowered.module) {
    p = Partitioner(target, *lowered.module, options, lowered.layout).run();
    p.lowered = std::move(lowered.module);
    p.convolution_gemms = std::move(lowered.gemms);
  } else {
    p = Partitioner(target, module, options).run();
  }
  p.source = &module;
  p.convolutions_lowered = lowered.lowered;
  p.convolutions_kept = lowered.kept;
  p.fusions_inlined = lowered.fusions;
  return p;
}

}  // namespace tacit::backend
