// The examples written as StableHLO (by hand, in the form JAX prints) compile through the tacit
// binary to the same program as their HLO twins, and `tacit hlo print --stablehlo` output reads
// back through `tacit hlo check` and `tacit hlo eval`.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "common/paths.h"
#include "support/source.h"

namespace tacit::stablehlo {
namespace {

namespace fs = std::filesystem;

class Twins : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tacit_stablehlo_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string source(const std::string& rel) { return testing::sourceDir() + "/" + rel; }
  int tacit(const std::string& args) const {
    std::string cmd = std::string(TACIT_BINARY_DIR) + "/tools/tacit/tacit " + args + " > " +
                      path("stdout") + " 2> " + path("stderr");
    int raw = std::system(cmd.c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  }

  fs::path dir_;
};

TEST_F(Twins, StableHloExamplesCompileToTheirHloTwinsPrograms) {
  const std::pair<std::string, std::string> cases[] = {
      {"isa/qkv.taidl", "examples/attention/attention"},
      {"isa/gemmini.taidl", "examples/gemmini/matmul"},
      {"isa/amx.taidl", "examples/amx/k1_u8s8_gemm_32x32x64"},
  };
  for (const auto& [isa, kernel] : cases) {
    SCOPED_TRACE(kernel);
    ASSERT_EQ(tacit("compile --isa " + source(isa) + " " + source(kernel + ".hlo") + " -o " +
                    path("hlo.tasm")),
              0)
        << readFile(path("stderr"));
    ASSERT_EQ(tacit("compile --isa " + source(isa) + " " + source(kernel + ".mlir") + " -o " +
                    path("mlir.tasm")),
              0)
        << readFile(path("stderr"));
    EXPECT_EQ(readFile(path("mlir.tasm")), readFile(path("hlo.tasm")));
  }
}

TEST_F(Twins, PrintedStableHloChecksAndEvaluates) {
  ASSERT_EQ(tacit("hlo print --stablehlo " + source("examples/attention/attention.hlo") + " -o " +
                  path("a.mlir")),
            0)
      << readFile(path("stderr"));
  ASSERT_EQ(tacit("hlo check " + path("a.mlir")), 0) << readFile(path("stderr"));
  EXPECT_NE(readFile(path("stdout"))
                .find("entry main (bf16[64,64], bf16[64,64], bf16[64,64]) -> "
                      "bf16[64,64]"),
            std::string::npos)
      << readFile(path("stdout"));
  ASSERT_EQ(tacit("hlo eval " + path("a.mlir") + " --random-inputs 1 --output-dir " + path("out")),
            0)
      << readFile(path("stderr"));
  ASSERT_EQ(tacit("hlo eval " + source("examples/attention/attention.hlo") +
                  " --random-inputs 1 --output-dir " + path("twin")),
            0);
  EXPECT_EQ(readFile(path("out/output.npy")), readFile(path("twin/output.npy")));
}

TEST_F(Twins, AnOpOutsideTheSubsetIsNamed) {
  std::string file = path("w.hlo");
  std::string text =
      "HloModule w\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT c = f32[4] copy(a)\n}\n";
  FILE* f = std::fopen(file.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  EXPECT_EQ(tacit("hlo print --stablehlo " + file), 1);
  EXPECT_NE(readFile(path("stderr")).find("w.hlo:4:8: error: 'copy' (%c) has no StableHLO op"),
            std::string::npos)
      << readFile(path("stderr"));
}

}  // namespace
}  // namespace tacit::stablehlo
