// Text forms of the run counters and trace events (tacit run --stats / --trace).
#include <cstdio>

#include "oracle/machine.h"

namespace tacit::oracle {

std::string TraceEvent::text() const {
  const taidl::Instruction& inst = isa->instructions[static_cast<size_t>(instruction)];
  std::string out;
  if (!file.empty()) out += std::string(file) + ":";
  if (loc.known()) out += std::to_string(loc.line) + ":";
  if (!out.empty()) out += " ";
  out += isa->callText(inst, attrs);
  if (macro >= 0) out += "  [macro " + isa->macros[static_cast<size_t>(macro)].name.text + "]";
  return out;
}

namespace {

std::string row(const std::string& a, const std::string& b, const std::string& c) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "  %-32s %14s %16s\n", a.c_str(), b.c_str(), c.c_str());
  return buf;
}

}  // namespace

int64_t Stats::hbmBytes(const taidl::Isa& isa) const {
  int64_t bytes = 0;
  for (size_t a = 0; a < isa.buffers.size() && a < moved.size(); ++a) {
    for (size_t b = 0; b < isa.buffers.size() && b < moved[a].size(); ++b) {
      if (isa.buffers[a].is_hbm != isa.buffers[b].is_hbm) bytes += moved[a][b];
    }
  }
  return bytes;
}

std::string Stats::text(const taidl::Isa& isa) const {
  std::string out = "instructions: " + std::to_string(instructions) +
                    " executed (macro calls: " + std::to_string(macro_calls) +
                    ", statements: " + std::to_string(steps) +
                    ", specialisations compiled: " + std::to_string(specialisations) + ")\n";
  out += row("instruction", "count", "cost");
  for (size_t i = 0; i < per_instruction.size(); ++i) {
    if (per_instruction[i] == 0) continue;
    out += row(isa.instructions[i].name.text, std::to_string(per_instruction[i]),
               std::to_string(cost_per_instruction[i]));
  }
  out += "bytes moved (source -> destination: bytes written by instructions reading the source):\n";
  for (size_t s = 0; s < moved.size(); ++s) {
    for (size_t d = 0; d < moved[s].size(); ++d) {
      if (moved[s][d] == 0) continue;
      std::string src = s < isa.buffers.size() ? isa.buffers[s].name.text : "(nothing)";
      out += row(src + " -> " + isa.buffers[d].name.text, std::to_string(moved[s][d]), "");
    }
  }
  out += row("buffer", "bytes read", "bytes written");
  for (size_t b = 0; b < bytes_read.size(); ++b) {
    if (bytes_read[b] == 0 && bytes_written[b] == 0) continue;
    out += row(isa.buffers[b].name.text, std::to_string(bytes_read[b]),
               std::to_string(bytes_written[b]));
  }
  out += "total cost: " + std::to_string(total_cost) + "\n";
  return out;
}

}  // namespace tacit::oracle
