// `tacit hlo eval`: outputs, checksums, input handling and the error contract (one diagnostic,
// non-zero exit, no partial output), run through the real binary.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>

#include "common/paths.h"
#include "eval_test_util.h"
#include "hlo/npy_literal.h"
#include "hlo_eval/random_literal.h"
#include "support/output.h"
#include "support/source.h"

namespace tacit::hlo {
namespace {

namespace fs = std::filesystem;
using testing::lit;

struct Result {
  int status = -1;
  std::string out, err;
};

class HloEvalCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tacit_hlo_eval_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string writeText(const std::string& name, const std::string& text) const {
    writeFileAtomic(path(name), text);
    return path(name);
  }
  std::string writeNpy(const std::string& name, const Literal& l) const {
    writeFileAtomic(path(name), serializeNpyLiteral(l));
    return path(name);
  }

  Result tacit(const std::string& args) const {
    std::string bin = std::string(TACIT_BINARY_DIR) + "/tools/tacit/tacit";
    std::string cmd = bin + " " + args + " > " + path("stdout") + " 2> " + path("stderr");
    int raw = std::system(cmd.c_str());
    Result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    r.out = readFile(path("stdout"));
    r.err = readFile(path("stderr"));
    return r;
  }

  fs::path dir_;
};

uint64_t fnv1a64(const uint8_t* p, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

const char* kAttention = R"(HloModule attention
add { x = bf16[] parameter(0)
 y = bf16[] parameter(1)
 ROOT s = bf16[] add(x, y) }
ENTRY main {
  q = bf16[4,8] parameter(0)
  k = bf16[4,8] parameter(1)
  v = bf16[4,8] parameter(2)
  kt = bf16[8,4] transpose(k), dimensions={1,0}
  s = bf16[4,4] dot(q, kt), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = bf16[4,4] exponential(s)
  z = bf16[] constant(0)
  sum = bf16[4] reduce(e, z), dimensions={1}, to_apply=add
  b = bf16[4,4] broadcast(sum), dimensions={0}
  p = bf16[4,4] divide(e, b)
  ROOT out = bf16[4,8] dot(p, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST_F(HloEvalCli, WritesOutputsAndPrintsChecksums) {
  std::string hlo = writeText("att.hlo", kAttention);
  Shape s(PrimitiveType::kBF16, {4, 8});
  std::vector<Literal> in = {randomLiteral(s, 1), randomLiteral(s, 2), randomLiteral(s, 3)};
  Result r = tacit("hlo eval " + hlo + " --input q=" + writeNpy("q.npy", in[0]) +
                   " --input k=" + writeNpy("k.npy", in[1]) +
                   " --input 2=" + writeNpy("v.npy", in[2]) + " --output-dir " + path("out"));
  ASSERT_EQ(r.status, 0) << r.err;
  Literal expected = evaluate(*testing::parseText(kAttention), in);
  Literal got = readNpyLiteral(path("out/out.npy"), s, "output");
  EXPECT_LITERAL(got, expected);
  EXPECT_EQ(r.out, path("out/out.npy") + ": bf16[4,8] fnv1a64=" +
                       hex(fnv1a64(expected.bytes(), expected.byteCount())) + "\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(HloEvalCli, ChecksumIsFnv1a64OfTheRawBytes) {
  // FNV-1a 64 of the single byte 'a' (0x61) is af63dc4c8601ec8c (the published test vector).
  std::string hlo =
      writeText("a.hlo", "HloModule m\nENTRY e {\n  ROOT a = u8[1] constant({97})\n}\n");
  Result r = tacit("hlo eval " + hlo + " --output-dir " + path("o"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, path("o/a.npy") + ": u8[1] fnv1a64=af63dc4c8601ec8c\n");
}

TEST_F(HloEvalCli, TupleResultsGetOneFilePerElement) {
  std::string hlo = writeText("t.hlo", R"(HloModule m
ENTRY e {
  p = s32[2] parameter(0)
  n = s32[2] negate(p)
  inner = (s32[2], s32[2]) tuple(p, n)
  ROOT t = (s32[2], (s32[2], s32[2])) tuple(n, inner)
})");
  Result r = tacit("hlo eval " + hlo + " --input p=" + writeNpy("p.npy", lit("s32[2]", "{1, -2}")) +
                   " --output-dir " + path("o"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_LITERAL(readNpyLiteral(path("o/t.0.npy")), lit("s32[2]", "{-1, 2}"));
  EXPECT_LITERAL(readNpyLiteral(path("o/t.1.0.npy")), lit("s32[2]", "{1, -2}"));
  EXPECT_LITERAL(readNpyLiteral(path("o/t.1.1.npy")), lit("s32[2]", "{-1, 2}"));
}

TEST_F(HloEvalCli, RandomInputsAreDeterministic) {
  std::string hlo = writeText("att.hlo", kAttention);
  Result a = tacit("hlo eval " + hlo + " --random-inputs 5 --output-dir " + path("a"));
  Result b =
      tacit("hlo eval " + hlo + " --input q=" +
            writeNpy("q.npy", randomLiteral(Shape(PrimitiveType::kBF16, {4, 8}), mixSeed(5, 0))) +
            " --random-inputs 5 --output-dir " + path("a"));
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(a.out, b.out);  // parameter i gets randomLiteral(shape, mixSeed(SEED, i))
}

// Each malformed invocation: exit status 1, exactly one diagnostic, no output directory.
void expectOneDiagnostic(const Result& r, const std::string& message) {
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "");
  size_t first = r.err.find("error:");
  EXPECT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("error:", first + 1), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
}

TEST_F(HloEvalCli, WrongDtypeOrShapeIsOneDiagnostic) {
  std::string hlo = writeText("att.hlo", kAttention);
  std::string good = writeNpy("good.npy", randomLiteral(Shape(PrimitiveType::kBF16, {4, 8}), 1));
  std::string f32 = writeNpy("f32.npy", randomLiteral(Shape(PrimitiveType::kF32, {4, 8}), 1));
  std::string wide = writeNpy("wide.npy", randomLiteral(Shape(PrimitiveType::kBF16, {4, 9}), 1));
  expectOneDiagnostic(
      tacit("hlo eval " + hlo + " --input q=" + f32 + " --input k=" + good + " --input v=" + good +
            " --output-dir " + path("out")),
      "f32.npy: error: dtype '<f4' does not match parameter 'q' of type bf16 (expected '|V2')");
  expectOneDiagnostic(tacit("hlo eval " + hlo + " --input q=" + good + " --input k=" + wide +
                            " --input v=" + good + " --output-dir " + path("out")),
                      "shape (4, 9) does not match parameter 'k' of shape bf16[4,8]");
  std::string junk = writeText("junk.npy", "not an npy file");
  expectOneDiagnostic(tacit("hlo eval " + hlo + " --input q=" + junk +
                            " --random-inputs 1 --output-dir " + path("out")),
                      "not a .npy file");
  EXPECT_FALSE(fs::exists(path("out")));
}

TEST_F(HloEvalCli, MissingAndUnknownInputsListTheParameters) {
  std::string hlo = writeText("att.hlo", kAttention);
  std::string good = writeNpy("good.npy", randomLiteral(Shape(PrimitiveType::kBF16, {4, 8}), 1));
  expectOneDiagnostic(
      tacit("hlo eval " + hlo + " --input q=" + good + " --output-dir " + path("out")),
      "missing 2 inputs: k bf16[4,8], v bf16[4,8]");
  expectOneDiagnostic(
      tacit("hlo eval " + hlo + " --input query=" + good + " --output-dir " + path("out")),
      "the entry computation has no parameter 'query'");
  Result r = tacit("hlo eval " + hlo + " --input 7=" + good + " --output-dir " + path("out"));
  expectOneDiagnostic(r, "no parameter '7'");
  EXPECT_NE(r.err.find("parameters: 0=q bf16[4,8], 1=k bf16[4,8], 2=v bf16[4,8]"),
            std::string::npos)
      << r.err;
  expectOneDiagnostic(tacit("hlo eval " + hlo + " --input q=" + good + " --input 0=" + good +
                            " --random-inputs 1 --output-dir " + path("out")),
                      "gives parameter 'q' twice");
  EXPECT_FALSE(fs::exists(path("out")));
}

TEST_F(HloEvalCli, UnsupportedOpsAndRuntimeFailuresLeaveNoOutput) {
  std::string bad = writeText(
      "bad.hlo",
      "HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT c = f32[2] cosh(p)\n}\n");
  expectOneDiagnostic(tacit("hlo eval " + bad + " --random-inputs 1 --output-dir " + path("out")),
                      "bad.hlo:4:8: error: 'c' (cosh): unsupported op 'cosh'");
  std::string loop = writeText("loop.hlo", R"(HloModule m
cond { s = s32[] parameter(0)
 ROOT t = pred[] constant(true) }
body { s = s32[] parameter(0)
 ROOT n = s32[] negate(s) }
ENTRY e {
  z = s32[] constant(1)
  w = s32[] while(z), condition=cond, body=body
  ROOT r = (s32[], s32[]) tuple(z, w)
})");
  expectOneDiagnostic(
      tacit("hlo eval " + loop + " --max-while-iterations 10 --output-dir " + path("out")),
      "did not finish within 10 iterations");
  EXPECT_FALSE(fs::exists(path("out/r.0.npy")));
  EXPECT_FALSE(fs::exists(path("out/r.1.npy")));
}

TEST_F(HloEvalCli, MissingOutputDirIsAnError) {
  std::string hlo = writeText("att.hlo", kAttention);
  expectOneDiagnostic(tacit("hlo eval " + hlo + " --random-inputs 1"), "missing --output-dir");
}

}  // namespace
}  // namespace tacit::hlo
