#include "backend/coverage.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <set>
#include <unordered_map>

#include "backend/compiler.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "support/diagnostic.h"
#include "support/strings.h"

namespace tacit::backend {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Operands and results of these carry data between operations; they are not work to offload.
bool isPlumbing(HloOpcode op) {
  return op == HloOpcode::kParameter || op == HloOpcode::kConstant || op == HloOpcode::kTuple ||
         op == HloOpcode::kGetTupleElement;
}

double shapeBytes(const hlo::Shape& s) {
  if (s.isArray()) return static_cast<double>(s.byteSize());
  double n = 0;
  for (const hlo::Shape& e : s.tupleShapes())
    n += shapeBytes(e);
  return n;
}

// What an operation reads and writes.
double operationBytes(const HloInstruction& op) {
  double bytes = shapeBytes(op.shape());
  for (const HloInstruction* o : op.operands())
    bytes += shapeBytes(o->shape());
  return bytes;
}

// The computations `op` calls, and the ones they call, callees before callers (once each).
void calledInOrder(const HloInstruction& op, std::set<const HloComputation*>& seen,
                   std::vector<const HloComputation*>& order) {
  for (const hlo::CalledComputations& called : op.attrs().called) {
    for (const HloComputation* callee : called.computations) {
      if (callee == nullptr || !seen.insert(callee).second) continue;
      for (const auto& inst : callee->instructions())
        calledInOrder(*inst, seen, order);
      order.push_back(callee);
    }
  }
}

// The operation's text without its ROOT marker and its control predecessors (which name
// instructions the one-operation kernel does not have).
std::string operationText(const HloInstruction& op) {
  std::string text = hlo::printInstruction(op);
  if (text.rfind("ROOT ", 0) == 0) text.erase(0, 5);
  size_t control = text.find(", control-predecessors={");
  if (control != std::string::npos) text.erase(control, text.find('}', control) + 1 - control);
  return text;
}

// A region as a kernel: its operands from outside as parameters (named as they are, so the
// operations' text reads them), the computations its operations call, its operations in order,
// and as the root the values used outside it (a tuple when there are several). `lines` maps each
// line of the text to its operation (for the diagnostic's location).
struct RegionKernel {
  std::string text;
  std::vector<const HloInstruction*> lines;
};

RegionKernel regionKernel(const std::vector<const HloInstruction*>& region,
                          const std::vector<const HloInstruction*>& outputs) {
  RegionKernel out;
  auto line = [&](const std::string& text, const HloInstruction* op) {
    out.text += text + "\n";
    out.lines.push_back(op);
  };
  line("HloModule region", nullptr);
  std::set<const HloComputation*> seen;
  std::vector<const HloComputation*> called;
  for (const HloInstruction* op : region)
    calledInOrder(*op, seen, called);
  for (const HloComputation* c : called) {
    const std::string printed = hlo::printComputation(*c);  // split's views point into it
    for (std::string_view l : split(printed, '\n'))
      line(std::string(l), nullptr);
  }
  line("ENTRY main {", nullptr);
  std::set<const HloInstruction*> inside(region.begin(), region.end()), params;
  int64_t parameters = 0;
  for (const HloInstruction* op : region) {
    for (const HloInstruction* o : op->operands()) {
      if (inside.count(o) || !params.insert(o).second) continue;
      // A constant stays one (a clamp's bounds are what make it a saturation); any other value
      // from outside is a parameter.
      if (o->opcode() == HloOpcode::kConstant) {
        line("  " + operationText(*o), nullptr);
        continue;
      }
      line("  " + hlo::sigilName(o->name()) + " = " + o->shape().str() + " parameter(" +
               std::to_string(parameters++) + ")",
           nullptr);
    }
  }
  for (const HloInstruction* op : region) {
    const bool root = outputs.size() == 1 && outputs[0] == op;
    line(std::string(root ? "  ROOT " : "  ") + operationText(*op), op);
  }
  if (outputs.size() > 1) {
    std::vector<hlo::Shape> shapes;
    for (const HloInstruction* o : outputs)
      shapes.push_back(o->shape());
    line("  ROOT region.outputs = " + hlo::Shape::tuple(shapes).str() + " tuple(" +
             joinWith(outputs, ", ",
                      [](const HloInstruction* o) { return hlo::sigilName(o->name()); }) +
             ")",
         nullptr);
  }
  line("}", nullptr);
  return out;
}

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
  return why;
}

// The connected components of `ops` (edges: operand to user, both inside `ops`), each in the
// computation's order (`index`).
std::vector<std::vector<const HloInstruction*>> components(
    const std::vector<const HloInstruction*>& ops,
    const std::unordered_map<const HloInstruction*, size_t>& index) {
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
  std::map<size_t, std::vector<const HloInstruction*>> by_root;  // keyed by the root's index
  for (const HloInstruction* op : ops)
    by_root[index.at(find(op))].push_back(op);
  std::vector<std::vector<const HloInstruction*>> out;
  for (auto& [root, members] : by_root) {
    std::sort(members.begin(), members.end(),
              [&](const HloInstruction* a, const HloInstruction* b) {
                return index.at(a) < index.at(b);
              });
    out.push_back(std::move(members));
  }
  return out;
}

}  // namespace

double operationFlops(const HloInstruction& op) {
  const hlo::Shape& r = op.shape();
  if (!r.isArray()) return 0;
  const double results = static_cast<double>(r.elementCount());
  const hlo::HloAttributes& a = op.attrs();
  switch (op.opcode()) {
    case HloOpcode::kDot: {
      double depth = 1;
      if (a.dot_dims) {
        for (int64_t d : a.dot_dims->lhs_contracting)
          depth *= static_cast<double>(op.operand(0)->shape().dims()[static_cast<size_t>(d)]);
      }
      return 2 * results * depth;
    }
    case HloOpcode::kConvolution: {
      // Each result element sums the kernel's elements of one output feature.
      const hlo::Shape& k = op.operand(1)->shape();
      if (!a.conv_dims || !k.isArray()) return 0;
      const double outputs =
          static_cast<double>(k.dims()[static_cast<size_t>(a.conv_dims->kernel_output_feature)]);
      return 2 * results * static_cast<double>(k.elementCount()) / std::max(1.0, outputs);
    }
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
      return op.operandCount() > 0 && op.operand(0)->shape().isArray()
                 ? static_cast<double>(op.operand(0)->shape().elementCount())
                 : 0;
    default:
      break;
  }
  const hlo::OpcodeCategory c = hlo::opcodeCategory(op.opcode());
  const bool elementwise =
      c == hlo::OpcodeCategory::kUnary || c == hlo::OpcodeCategory::kTranscendental ||
      c == hlo::OpcodeCategory::kBinary || c == hlo::OpcodeCategory::kComparison ||
      c == hlo::OpcodeCategory::kTernary;
  return elementwise ? results : 0;
}

CoverageReport coverage(const isel::Target& target, const hlo::HloModule& module,
                        const CoverageOptions& options) {
  CoverageReport report;
  report.module = module.name();
  report.isa = target.isa().name;
  const HloComputation& entry = *module.entry();
  std::vector<const HloInstruction*> ops;
  std::unordered_map<const HloInstruction*, size_t> index;
  std::unordered_map<const HloInstruction*, std::vector<const HloInstruction*>> users;
  for (const auto& inst : entry.instructions()) {
    index[inst.get()] = index.size();
    for (const HloInstruction* o : inst->operands())
      users[o].push_back(inst.get());
    if (!isPlumbing(inst->opcode())) ops.push_back(inst.get());
  }
  std::unordered_map<const HloInstruction*, std::string> host;  // operation -> reason
  std::set<const HloInstruction*> offloaded;
  CompileOptions compile_options;
  compile_options.time_limit = options.time_limit;
  // The first regions: connected components, cut into runs of at most max_region operations
  // in the computation's order (a compile of thousands of operations only finds its time limit).
  std::vector<std::vector<const HloInstruction*>> work;
  for (const auto& component : components(ops, index)) {
    for (size_t at = 0; at < component.size(); at += options.max_region) {
      const size_t end = std::min(component.size(), at + options.max_region);
      const std::vector<const HloInstruction*> run(component.begin() + static_cast<long>(at),
                                                   component.begin() + static_cast<long>(end));
      for (auto& part : components(run, index))
        work.push_back(std::move(part));
    }
  }
  std::reverse(work.begin(), work.end());  // popped from the back: the module's order
  while (!work.empty()) {
    std::vector<const HloInstruction*> region = std::move(work.back());
    work.pop_back();
    if (report.compiles >= options.max_compiles) {
      for (const HloInstruction* op : region)
        host[op] = "not tried: the compile budget (" + std::to_string(options.max_compiles) +
                   " compiles) is spent";
      continue;
    }
    double region_bytes = 0;
    for (const HloInstruction* op : region)
      region_bytes += operationBytes(*op);
    if (region_bytes > options.max_region_bytes) {
      const std::string why =
          "not tried: its operations move " +
          std::to_string(static_cast<int64_t>(region_bytes / (1 << 20))) +
          " MiB, above the coverage limit of " +
          std::to_string(static_cast<int64_t>(options.max_region_bytes / (1 << 20))) + " MiB";
      if (region.size() == 1) {
        host[region[0]] = why;
      } else {  // smaller pieces may fit
        for (auto it = region.rbegin(); it != region.rend(); ++it)
          work.push_back({*it});
      }
      continue;
    }
    const std::set<const HloInstruction*> inside(region.begin(), region.end());
    std::vector<const HloInstruction*> outputs;
    for (const HloInstruction* op : region) {
      const auto& u = users[op];
      const bool used_outside =
          op->isRoot() || std::any_of(u.begin(), u.end(),
                                      [&](const HloInstruction* x) { return !inside.count(x); });
      if (used_outside) outputs.push_back(op);
    }
    const RegionKernel kernel = regionKernel(region, outputs);
    ++report.compiles;
    try {
      auto parsed = hlo::parseModule(kernel.text, "region.hlo");
      const CompileResult r = compile(target, *parsed, compile_options);
      offloaded.insert(region.begin(), region.end());
      report.regions.push_back({region.size(), static_cast<int64_t>(r.program.statementCount())});
      continue;
    } catch (const DiagnosticError& e) {
      // The operation the diagnostic points at stays on the host, with its reason; the rest of
      // the region is asked again, split where that operation joined it.
      const Diagnostic& d = e.diagnostic();
      const size_t at = d.loc.line > 0 ? static_cast<size_t>(d.loc.line - 1) : kernel.lines.size();
      const HloInstruction* culprit = at < kernel.lines.size() ? kernel.lines[at] : nullptr;
      if (culprit == nullptr && region.size() == 1) culprit = region[0];
      if (culprit == nullptr) {  // about the region as a whole: ask its operations one by one
        for (auto it = region.rbegin(); it != region.rend(); ++it)
          work.push_back({*it});
        continue;
      }
      std::string why = reasonOf(d, *culprit);
      host[culprit] = why.empty() ? "no reason given" : why;
      std::vector<const HloInstruction*> rest;
      for (const HloInstruction* op : region) {
        if (op != culprit) rest.push_back(op);
      }
      std::vector<std::vector<const HloInstruction*>> parts = components(rest, index);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it)
        work.push_back(std::move(*it));
    }
  }
  std::map<std::string, OpcodeCoverage> by_opcode;
  for (const HloInstruction* op : ops) {
    OpcodeCoverage& row = by_opcode[op->opcodeSpelling()];
    row.opcode = op->opcodeSpelling();
    const double flops = operationFlops(*op);
    const double bytes = operationBytes(*op);
    ++row.operations;
    row.flops += flops;
    row.bytes += bytes;
    if (offloaded.count(op)) {
      ++row.offloaded;
      row.flops_offloaded += flops;
      row.bytes_offloaded += bytes;
    } else {
      ++row.reasons[host.count(op) ? host[op] : "not asked"];
    }
  }
  for (auto& [name, row] : by_opcode) {
    report.operations += row.operations;
    report.offloaded += row.offloaded;
    report.flops += row.flops;
    report.flops_offloaded += row.flops_offloaded;
    report.bytes += row.bytes;
    report.bytes_offloaded += row.bytes_offloaded;
    report.opcodes.push_back(std::move(row));
  }
  return report;
}

std::string share(double part, double whole) {
  if (whole <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %%", 100 * part / whole);
  return buf;
}

std::string CoverageReport::text() const {
  std::string out = module + " on " + isa + ": " + std::to_string(offloaded) + " of " +
                    std::to_string(operations) + " operations offloaded, " +
                    share(flops_offloaded, flops) + " of the FLOPs, " +
                    share(bytes_offloaded, bytes) + " of the bytes, in " +
                    plural(static_cast<int64_t>(regions.size()), "region") + " (" +
                    plural(compiles, "compile") + ")\n";
  char line[160];
  std::snprintf(line, sizeof(line), "%-24s %10s %10s %10s %10s\n", "opcode", "operations",
                "offloaded", "FLOPs", "bytes");
  out += line;
  for (const OpcodeCoverage& r : opcodes) {
    std::snprintf(line, sizeof(line), "%-24s %10lld %10lld %10s %10s\n", r.opcode.c_str(),
                  static_cast<long long>(r.operations), static_cast<long long>(r.offloaded),
                  share(r.flops_offloaded, r.flops).c_str(),
                  share(r.bytes_offloaded, r.bytes).c_str());
    out += line;
    for (const auto& [why, n] : r.reasons)
      out += "    " + std::to_string(n) + "x " + why + "\n";
  }
  return out;
}

std::string CoverageReport::json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const OpcodeCoverage& r : opcodes) {
    nlohmann::json reasons = nlohmann::json::array();
    for (const auto& [why, n] : r.reasons)
      reasons.push_back({{"reason", why}, {"operations", n}});
    rows.push_back({{"opcode", r.opcode},
                    {"operations", r.operations},
                    {"offloaded", r.offloaded},
                    {"flops", r.flops},
                    {"flops_offloaded", r.flops_offloaded},
                    {"bytes", r.bytes},
                    {"bytes_offloaded", r.bytes_offloaded},
                    {"reasons", reasons}});
  }
  nlohmann::json regions_json = nlohmann::json::array();
  for (const OffloadedRegion& r : regions)
    regions_json.push_back({{"operations", r.operations}, {"statements", r.statements}});
  nlohmann::json j = {{"module", module},         {"isa", isa},
                      {"operations", operations}, {"offloaded", offloaded},
                      {"flops", flops},           {"flops_offloaded", flops_offloaded},
                      {"bytes", bytes},           {"bytes_offloaded", bytes_offloaded},
                      {"compiles", compiles},     {"regions", regions_json},
                      {"opcodes", rows}};
  return j.dump(2) + "\n";
}

}  // namespace tacit::backend
