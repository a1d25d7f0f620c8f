#include "backend/module_report.h"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "support/strings.h"

namespace tacit::backend {
namespace {

// An accelerator step's operations, the first few by name.
std::string operationList(const std::vector<std::string>& names) {
  constexpr size_t kShown = 6;
  std::string out = plural(static_cast<int64_t>(names.size()), "operation") + ": ";
  for (size_t i = 0; i < names.size() && i < kShown; ++i)
    out += (i ? ", " : "") + names[i];
  if (names.size() > kShown) out += ", ... (" + std::to_string(names.size() - kShown) + " more)";
  return out;
}

}  // namespace

ModuleRunReport moduleRunReport(const ModuleProgram& program, const ModuleRun& run,
                                const std::string& isa, uint64_t seed) {
  ModuleRunReport r;
  r.module = program.partition.module->name();
  r.isa = isa;
  r.seed = seed;
  r.operations = static_cast<int64_t>(program.partition.operations.size());
  for (const AcceleratorRegion& region : program.partition.regions)
    r.offloaded += static_cast<int64_t>(region.operations.size());
  for (const StepRun& done : run.steps) {
    const ModuleStep& s = program.steps[done.step];
    ModuleRunReport::Step step;
    step.accelerator = s.kind == StepKind::kAccelerator;
    if (step.accelerator) {
      for (const hlo::HloInstruction* op : program.partition.regions[s.region].operations)
        step.operations.push_back(op->name());
      ++r.accelerator_steps;
    } else {
      step.operations.push_back(s.operation->name());
      step.opcode = s.operation->opcodeSpelling();
      step.reason = s.reason;
      ++r.host_steps;
    }
    step.instructions = done.instructions;
    step.cost = done.cost;
    step.hbm_bytes = done.hbm_bytes;
    step.seconds = done.seconds;
    r.steps.push_back(std::move(step));
  }
  r.instructions = run.instructions;
  r.cost = run.cost;
  r.hbm_bytes = run.hbm_bytes;
  r.accelerator_seconds = run.accelerator_seconds;
  r.host_seconds = run.host_seconds;
  return r;
}

std::string ModuleRunReport::text() const {
  std::string out =
      module + " on " + isa + ": " + plural(static_cast<int64_t>(steps.size()), "step") + ", " +
      std::to_string(accelerator_steps) + " on the accelerator (" + std::to_string(offloaded) +
      " of " + std::to_string(operations) + " operations), " + std::to_string(host_steps) +
      " on the host; " + plural(instructions, "instruction") + " executed, cost " +
      std::to_string(cost) + ", " + std::to_string(hbm_bytes) +
      " bytes between HBM and the chip; random inputs from seed " + std::to_string(seed) + "\n";
  char line[96];
  std::snprintf(line, sizeof(line), "%5s  %-11s %12s %10s %9s  %s\n", "step", "where",
                "instructions", "cost", "seconds", "what");
  out += line;
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    std::snprintf(line, sizeof(line), "%5zu  %-11s %12s %10s %9.4f  ", i + 1,
                  s.accelerator ? "accelerator" : "host",
                  s.accelerator ? std::to_string(s.instructions).c_str() : "-",
                  s.accelerator ? std::to_string(s.cost).c_str() : "-", s.seconds);
    out += line;
    out += s.accelerator ? operationList(s.operations)
                         : s.opcode + " " + s.operations[0] + ": " + s.reason;
    out += "\n";
  }
  char seconds[96];
  std::snprintf(seconds, sizeof(seconds),
                "%.4f s on the accelerator (oracle), %.4f s on the host\n", accelerator_seconds,
                host_seconds);
  out += seconds;
  if (mismatch) {
    out += mismatch->empty()
               ? "verified: every output equals the HLO evaluator's for the whole module, bit for "
                 "bit\n"
               : "verification failed: " + *mismatch + "\n";
  }
  return out;
}

std::string ModuleRunReport::json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const Step& s : steps) {
    nlohmann::json row = {{"where", s.accelerator ? "accelerator" : "host"},
                          {"operations", s.operations},
                          {"seconds", s.seconds}};
    if (s.accelerator) {
      row["instructions"] = s.instructions;
      row["cost"] = s.cost;
      row["hbm_bytes"] = s.hbm_bytes;
    } else {
      row["opcode"] = s.opcode;
      row["reason"] = s.reason;
    }
    rows.push_back(std::move(row));
  }
  nlohmann::json j = {{"module", module},
                      {"isa", isa},
                      {"seed", seed},
                      {"operations", operations},
                      {"offloaded", offloaded},
                      {"accelerator_steps", accelerator_steps},
                      {"host_steps", host_steps},
                      {"instructions", instructions},
                      {"cost", cost},
                      {"hbm_bytes", hbm_bytes},
                      {"accelerator_seconds", accelerator_seconds},
                      {"host_seconds", host_seconds},
                      {"steps", rows}};
  if (mismatch) {
    j["verified"] = mismatch->empty();
    if (!mismatch->empty()) j["mismatch"] = *mismatch;
  }
  return j.dump(2) + "\n";
}

}  // namespace tacit::backend
