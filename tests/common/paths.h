// Where tests find the repository and the shared corpus/conformance data (read in place).
#pragma once

#include <cstdlib>
#include <string>

namespace tacit::testing {

// The repository root.
inline std::string sourceDir() {
  return TACIT_SOURCE_DIR;
}

// ../shared next to the repository (corpus/, conformance/, docs/); the TACIT_SHARED_DIR
// environment variable overrides the compiled-in path.
inline std::string sharedDir() {
  if (const char* env = std::getenv("TACIT_SHARED_DIR"); env != nullptr && *env != '\0') return env;
  return TACIT_SHARED_DIR;
}

}  // namespace tacit::testing
