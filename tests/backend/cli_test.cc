// `tacit compile` and `tacit isa rules` through the real binary: the README's main job, the error
// contract (one located diagnostic, non-zero exit, no partial output) for kernels an ISA cannot
// express and for requests that cannot fit, and the selector's listing.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>

#include "common/paths.h"
#include "support/output.h"
#include "support/source.h"

namespace tacit::backend {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int status = -1;
  std::string out, err;
};

class CompileCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tacit_compile_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string source(const std::string& rel) const { return testing::sourceDir() + "/" + rel; }
  std::string write(const std::string& name, const std::string& text) const {
    writeFileAtomic(path(name), text);
    return path(name);
  }

  Outcome tacit(const std::string& args) const {
    std::string bin = std::string(TACIT_BINARY_DIR) + "/tools/tacit/tacit";
    std::string cmd = bin + " " + args + " > " + path("stdout") + " 2> " + path("stderr");
    int raw = std::system(cmd.c_str());
    Outcome r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = readFile(path("stdout"));
    r.err = readFile(path("stderr"));
    return r;
  }

  fs::path dir_;
};

size_t countCalls(const std::string& tasm, const std::vector<std::string>& names) {
  size_t n = 0;
  for (const std::string& name : names) {
    std::regex call("(^|\\n)\\s*" + name + "\\(");
    n += static_cast<size_t>(std::distance(std::sregex_iterator(tasm.begin(), tasm.end(), call),
                                           std::sregex_iterator()));
  }
  return n;
}

TEST_F(CompileCli, QkvAttentionCompilesToNineInstructionsAndVerifies) {
  Outcome r = tacit("compile --isa " + source("isa/qkv.taidl") + " " +
                    source("examples/attention/attention.hlo") + " -o " + path("a.tasm") +
                    " --verify=2 --stats");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string tasm = readFile(path("a.tasm"));
  EXPECT_EQ(
      countCalls(tasm, {"load_rm", "load_cm", "gemm", "softmax", "mov", "store_rm", "store_cm"}),
      9u)
      << tasm;
}

TEST_F(CompileCli, AnInexpressibleOperationNamesItsLineAndWritesNothing) {
  std::string kernel = write("tanh.hlo", R"(HloModule t
ENTRY main {
  a = bf16[64,64] parameter(0)
  ROOT t = bf16[64,64] tanh(a)
}
)");
  Outcome r =
      tacit("compile --isa " + source("isa/qkv.taidl") + " " + kernel + " -o " + path("out.tasm"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(kernel + ":4:8: error: no instruction of ISA 'qkv' can compute 't'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("hint:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out.tasm")));
}

TEST_F(CompileCli, AnOversizedUnsaturatedAddFailsAtItsLine) {
  // 2048x2048 int8 matrices (4 MiB each, beyond every scratchpad) added without the library's
  // saturation: no instruction computes it, and the diagnostic says so at once.
  std::string kernel = write("big.hlo", R"(HloModule big
ENTRY main {
  a = s8[2048,2048] parameter(0)
  b = s8[2048,2048] parameter(1)
  ROOT c = s8[2048,2048] add(a, b)
}
)");
  Outcome r = tacit("compile --isa " + source("isa/gemmini.taidl") + " " + kernel + " -o " +
                    path("out.tasm") + " --time-limit 5");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find(kernel + ":5:8: error:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out.tasm")));
}

TEST_F(CompileCli, UnplaceableCandidatesReportTheAllocationFailure) {
  // QKV's buffers are 64 wide: a 128-column product needs a column tiling whose every row is
  // loaded and stored by itself. Within a tiny time limit the allocator gives up and says why.
  Outcome r = tacit("compile --isa " + source("isa/qkv.taidl") + " " +
                    source("examples/qkv/matmul_128x64x128.hlo") + " -o " + path("out.tasm") +
                    " --time-limit 0.5");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("error:"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(path("out.tasm")));
}

TEST_F(CompileCli, DumpEgraphWritesDotEvenWhenCompilationFails) {
  std::string kernel = write("tanh.hlo", R"(HloModule t
ENTRY main {
  a = bf16[64,64] parameter(0)
  ROOT t = bf16[64,64] tanh(a)
}
)");
  Outcome r = tacit("compile --isa " + source("isa/qkv.taidl") + " " + kernel + " --dump-egraph " +
                    path("g.dot") + " -o " + path("out.tasm"));
  EXPECT_NE(r.status, 0);
  std::string dot = readFile(path("g.dot"));
  EXPECT_EQ(dot.rfind("digraph egraph {", 0), 0u) << dot;
  EXPECT_NE(dot.find("tanh"), std::string::npos) << dot;
  EXPECT_FALSE(fs::exists(path("out.tasm")));
}

TEST_F(CompileCli, IsaRulesListsPatternsAndSelectedRules) {
  Outcome r = tacit("isa rules " + source("isa/gemmini.taidl"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("IR->ISA patterns"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(dot:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dot-split-contracting"), std::string::npos) << r.out;
  Outcome q = tacit("isa rules " + source("isa/qkv.taidl"));
  ASSERT_EQ(q.status, 0) << q.err;
  EXPECT_NE(q.out.find("load_cm case 0 output 0"), std::string::npos) << q.out;
  EXPECT_NE(q.out.find("(pure data movement)"), std::string::npos) << q.out;
}

}  // namespace
}  // namespace tacit::backend
