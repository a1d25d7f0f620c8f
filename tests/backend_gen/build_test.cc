// End to end: `tacit gen-backend isa/qkv.taidl`, then the exact commands it prints (a nested CMake
// configure and build against this build tree's tacit package), then the backend on the attention
// kernel with --verify. Labelled nested_build (tests/backend_gen/CMakeLists.txt); ~3 s.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "sandbox.h"

namespace tacit::testing {
namespace {

namespace fs = std::filesystem;

using GeneratedBackend = Sandbox;

// `A && B && ...` with each command run with this build's compiler and tools (CXX, CXXFLAGS and
// PATH are read by CMake's first configure).
std::string inBuildEnvironment(const std::string& command, const std::string& cxxflags) {
  std::string env = "env CXX='" + std::string(TACIT_CXX_COMPILER) + "' CXXFLAGS='" + cxxflags +
                    "' PATH='" + fs::path(TACIT_CMAKE_COMMAND).parent_path().string() + ":" +
                    fs::path(TACIT_MAKE_PROGRAM).parent_path().string() + ":" +
                    std::getenv("PATH") + "' ";
  std::string out;
  for (size_t start = 0; start < command.size();) {
    size_t amp = command.find(" && ", start);
    if (amp == std::string::npos) amp = command.size();
    out += (out.empty() ? "" : " && ") + env + command.substr(start, amp - start);
    start = amp + 4;
  }
  return out;
}

// The line after "build it with:" in gen-backend's report.
std::string buildCommand(const std::string& report) {
  size_t at = report.find("build it with:\n  ");
  if (at == std::string::npos) return {};
  at += 17;
  return report.substr(at, report.find('\n', at) - at);
}

TEST_F(GeneratedBackend, BuildsAndCompilesAttention) {
  Outcome gen = tacit("gen-backend " + source("isa/qkv.taidl") + " -o qkv-backend");
  ASSERT_EQ(gen.status, 0) << gen.err;
  std::string command = buildCommand(gen.out);
  ASSERT_FALSE(command.empty()) << gen.out;

  // The printed command, verbatim, in this build's environment; the generated sources must compile
  // without warnings.
  std::string sh_command = inBuildEnvironment(command, "-Wall -Wextra -Werror");
  Outcome build = sh(sh_command);
  std::cerr << "[ nested ] configure + build: " << build.seconds << " s\n";
  ASSERT_EQ(build.status, 0) << sh_command << "\n" << build.out << build.err;
  ASSERT_TRUE(fileExists(path("qkv-backend/qkv")));

  std::string kernel = source("examples/attention/attention.hlo");
  Outcome run = sh("qkv-backend/qkv --input " + kernel + " --output att.tasm --verify");
  std::cerr << "[ nested ] qkv --verify: " << run.seconds << " s\n";
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.err.find(": 9 instructions, "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("verified: 1 random input set, oracle == HLO evaluator bit for bit\n"),
            std::string::npos)
      << run.err;
  std::string tasm = readFile(path("att.tasm"));
  EXPECT_EQ(countInstructions(tasm), 9) << tasm;

  // The same front end as `tacit compile`: the same program, the same report.
  Outcome reference =
      tacit("compile --isa " + source("isa/qkv.taidl") + " " + kernel + " -o ref.tasm --verify");
  ASSERT_EQ(reference.status, 0) << reference.err;
  EXPECT_EQ(tasm, readFile(path("ref.tasm")));
  EXPECT_EQ(run.err, reference.err);

  // The error contract: file:line:col, exit 1, no partial output; no spec file needed.
  write("bad.hlo", "HloModule m\nENTRY e {\n  ROOT x = f32[2] bogus()\n}\n");
  Outcome bad = sh("qkv-backend/qkv --input bad.hlo --output bad.tasm");
  EXPECT_EQ(bad.status, 1);
  EXPECT_EQ(bad.err, "bad.hlo:3:8: error: instruction 'x': unknown opcode 'bogus'\n");
  EXPECT_FALSE(fileExists(path("bad.tasm")));
  Outcome help = sh("qkv-backend/qkv --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_EQ(help.out.rfind("usage: qkv [--input] KERNEL.hlo", 0), 0u) << help.out;
}

// Without a package next to the executable (a copied tacit), the project builds tacit's
// libraries from the source tree tacit was built from: its configure step must work.
TEST_F(GeneratedBackend, FallsBackToTheSourceTree) {
  fs::path bin = fs::path(TACIT_BINARY_DIR) / "tests/backend_gen" /
                 ("relocated-" + std::to_string(::getpid())) / "bin";
  fs::remove_all(bin.parent_path());
  fs::create_directories(bin);
  std::error_code ec;
  fs::create_hard_link(tacitBinary(), bin / "tacit", ec);
  if (ec) fs::copy_file(tacitBinary(), bin / "tacit");
  Outcome gen = sh((bin / "tacit").string() + " gen-backend " + source("isa/qkv.taidl") + " -o q");
  fs::remove_all(bin.parent_path());
  ASSERT_EQ(gen.status, 0) << gen.err;
  std::string command = buildCommand(gen.out);
  EXPECT_NE(command.find(" -DTACIT_SOURCE_DIR=" + sourceDir() + " && "), std::string::npos)
      << gen.out;
  EXPECT_NE(readFile(path("q/CMakeLists.txt")).find("set(TACIT_SOURCE_DIR [[" + sourceDir() + "]]"),
            std::string::npos);
  std::string configure = command.substr(0, command.find(" && "));
  Outcome r = sh(inBuildEnvironment(configure, ""));
  std::cerr << "[ nested ] configure with tacit's sources: " << r.seconds << " s\n";
  ASSERT_EQ(r.status, 0) << configure << "\n" << r.out << r.err;
  EXPECT_TRUE(fileExists(path("q/build/build.ninja")));
}

}  // namespace
}  // namespace tacit::testing
