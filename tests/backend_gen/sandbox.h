// A scratch directory per test and a way to run commands in it (stdout, stderr, exit status).
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "common/paths.h"
#include "support/output.h"
#include "support/source.h"

namespace tacit::testing {

struct Outcome {
  int status = -1;
  std::string out, err;
  double seconds = 0;
};

class Sandbox : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tacit_backend_gen_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(dir_);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    writeFileAtomic(path(name), text);
    return path(name);
  }

  static std::string tacitBinary() { return std::string(TACIT_BINARY_DIR) + "/tools/tacit/tacit"; }
  static std::string source(const std::string& relative) { return sourceDir() + "/" + relative; }

  // Runs `command` with /bin/sh, from the sandbox.
  Outcome sh(const std::string& command) const {
    std::string full = "cd '" + dir_.string() + "' && ( " + command + " ) > '" + path(".stdout") +
                       "' 2> '" + path(".stderr") + "'";
    auto start = std::chrono::steady_clock::now();
    int raw = std::system(full.c_str());
    Outcome r;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = readFile(path(".stdout"));
    r.err = readFile(path(".stderr"));
    return r;
  }
  Outcome tacit(const std::string& args) const { return sh(tacitBinary() + " " + args); }

  std::filesystem::path dir_;
};

// Instruction lines of a .tasm program: `name(attr=value, ...);` inside the kernel block.
inline int countInstructions(const std::string& tasm) {
  int n = 0;
  size_t pos = 0;
  while (pos < tasm.size()) {
    size_t end = tasm.find('\n', pos);
    if (end == std::string::npos) end = tasm.size();
    std::string line = tasm.substr(pos, end - pos);
    size_t first = line.find_first_not_of(' ');
    bool declaration = line.compare(first == std::string::npos ? 0 : first, 6, "input ") == 0 ||
                       line.compare(first == std::string::npos ? 0 : first, 7, "output ") == 0 ||
                       line.compare(first == std::string::npos ? 0 : first, 9, "constant ") == 0;
    if (!declaration && line.size() > 2 && line.find('(') != std::string::npos &&
        line.compare(line.size() - 2, 2, ");") == 0)
      ++n;
    pos = end + 1;
  }
  return n;
}

}  // namespace tacit::testing
