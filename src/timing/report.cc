// Text and JSON forms of the timing report (tacit run --timing, --timing-json).
#include <cstdio>

#include "support/strings.h"
#include "timing/timing.h"

namespace tacit::timing {
namespace {

std::string percent(int64_t part, int64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%",
                whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

std::string row(const std::string& a, const std::string& b, const std::string& c,
                const std::string& d) {
  char buf[256];
  std::snprintf(buf, sizeof(buf), "  %-20s %14s %14s %12s\n", a.c_str(), b.c_str(), c.c_str(),
                d.c_str());
  return buf;
}

}  // namespace

std::string Report::text() const {
  std::string out = "timing: " + std::to_string(cycles) + " cycles, " +
                    std::to_string(instructions) + " instructions (the model of docs/timing.md)\n";
  out += row("engine", "instructions", "busy cycles", "utilisation");
  for (const EngineUse& e : engines)
    out += row(e.name, std::to_string(e.instructions), std::to_string(e.busy),
               percent(e.busy, cycles));
  if (has_memory)
    out += row("memory port", std::to_string(hbm_bytes) + " B", std::to_string(memory_busy),
               percent(memory_busy, cycles));
  out += "stalls: " + std::to_string(queue_stall) + " cycles of dispatch on full queues, " +
         std::to_string(dependency_stall) + " cycles waiting for dependencies\n";
  return out;
}

std::string Report::json() const {
  std::string out = "{\"isa\": " + quote(isa, Escapes::kJson) +
                    ", \"cycles\": " + std::to_string(cycles) +
                    ", \"instructions\": " + std::to_string(instructions) + ", \"engines\": [";
  for (size_t i = 0; i < engines.size(); ++i) {
    const EngineUse& e = engines[i];
    out += std::string(i ? ", " : "") + "{\"name\": " + quote(e.name, Escapes::kJson) +
           ", \"instructions\": " + std::to_string(e.instructions) +
           ", \"busy\": " + std::to_string(e.busy) + "}";
  }
  out += "]";
  if (has_memory)
    out += ", \"memory\": {\"busy\": " + std::to_string(memory_busy) +
           ", \"bytes\": " + std::to_string(hbm_bytes) +
           ", \"latency\": " + std::to_string(memory_latency) + "}";
  out += ", \"queue_stall\": " + std::to_string(queue_stall) +
         ", \"dependency_stall\": " + std::to_string(dependency_stall) + "}\n";
  return out;
}

}  // namespace tacit::timing
