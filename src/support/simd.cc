#include "support/simd.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace tacit::simd {
namespace {

Level detect() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  // __builtin_cpu_supports also requires the operating system to save the registers (XCR0).
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vbmi");
  if (avx512) return Level::kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Level::kAvx2;
#endif
  return Level::kGeneric;
}

Level initial() {
  Level cpu = cpuLevel();
  if (const char* env = std::getenv("TACIT_SIMD")) {
    if (std::optional<Level> wanted = parseLevel(env)) return std::min(*wanted, cpu);
    // Not a diagnostic: no file is being read, and every level computes the same results.
    std::fprintf(stderr, "tacit: ignoring TACIT_SIMD=%s (expected generic, avx2 or avx512)\n", env);
  }
  return cpu;
}

std::atomic<Level>& current() {
  static std::atomic<Level> level{initial()};
  return level;
}

}  // namespace

std::string_view levelName(Level level) {
  switch (level) {
    case Level::kGeneric:
      return "generic";
    case Level::kAvx2:
      return "avx2";
    case Level::kAvx512:
      return "avx512";
  }
  return "generic";
}

std::optional<Level> parseLevel(std::string_view name) {
  for (Level l : {Level::kGeneric, Level::kAvx2, Level::kAvx512}) {
    if (name == levelName(l)) return l;
  }
  return std::nullopt;
}

Level cpuLevel() {
  static const Level cpu = detect();
  return cpu;
}

Level level() {
  return current().load(std::memory_order_relaxed);
}

std::string describe() {
  return std::string(levelName(level())) + " (this CPU: " + std::string(levelName(cpuLevel())) +
         ")";
}

Level setLevel(Level wanted) {
  Level l = std::min(wanted, cpuLevel());
  current().store(l, std::memory_order_relaxed);
  return l;
}

}  // namespace tacit::simd
