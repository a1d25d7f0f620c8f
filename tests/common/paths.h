// Where tests find the repository and the shared corpus/conformance data (read in place).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>

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

// The marker that starts every skip for missing shared data; scripts/test counts the lines that
// carry it, and CI fails when there is one (README.md, "Test data").
inline constexpr const char* kMissingSharedData = "[tacit: missing shared data]";

// Empty when every shared data area of `areas` ("corpus/hlo", "conformance") exists, else why a
// test that reads them skips. Only a missing area is a skip: a file missing inside an existing
// area is the test's failure, so partial or damaged data never passes as absent data.
inline std::string missingSharedData(std::initializer_list<std::string_view> areas) {
  for (std::string_view area : areas) {
    std::filesystem::path dir = std::filesystem::path(sharedDir()) / area;
    std::error_code ec;
    if (std::filesystem::is_directory(dir, ec)) continue;
    return std::string(kMissingSharedData) + " " + dir.lexically_normal().string() +
           " does not exist; set TACIT_SHARED_DIR to a copy of the shared data (README.md, "
           "\"Test data\")";
  }
  return "";
}

}  // namespace tacit::testing

// Skips the current test when one of the shared data areas (string literals) is absent (see
// missingSharedData): TACIT_REQUIRE_SHARED_DATA("conformance", "corpus/hlo").
#define TACIT_REQUIRE_SHARED_DATA(...)                                                        \
  do {                                                                                        \
    if (std::string why_ = ::tacit::testing::missingSharedData({__VA_ARGS__}); !why_.empty()) \
      GTEST_SKIP() << why_;                                                                   \
  } while (0)
