// `tacit gen-backend`: the files it writes, the commands it prints, and the error contract (one
// diagnostic, exit 1, nothing written), run through the real binary.
#include <filesystem>
#include <regex>

#include "sandbox.h"

namespace tacit::testing {
namespace {

namespace fs = std::filesystem;

using GenBackend = Sandbox;

// The bytes of spec.cc's kSpecText array.
std::string embeddedBytes(const std::string& spec_cc) {
  size_t begin = spec_cc.find("kSpecText[");
  size_t open = spec_cc.find('{', begin);
  size_t close = spec_cc.find("};", open);
  std::string out;
  std::regex byte("0x([0-9a-f]{2})");
  std::string body = spec_cc.substr(open + 1, close - open - 1);
  for (std::sregex_iterator it(body.begin(), body.end(), byte), end; it != end; ++it)
    out += static_cast<char>(std::stoi((*it)[1].str(), nullptr, 16));
  return out;
}

TEST_F(GenBackend, WritesTheProjectAndPrintsTheBuildCommands) {
  Outcome r = tacit("gen-backend " + source("isa/qkv.taidl") + " -o out/qkv-backend");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* f : {"CMakeLists.txt", "main.cc", "spec.cc"})
    EXPECT_TRUE(fileExists(path(std::string("out/qkv-backend/") + f))) << f;
  EXPECT_EQ(std::distance(fs::directory_iterator(path("out/qkv-backend")), {}), 3);

  std::string cmake = readFile(path("out/qkv-backend/CMakeLists.txt"));
  EXPECT_NE(cmake.find("find_package(tacit 0.1.0 EXACT CONFIG REQUIRED HINTS [["),
            std::string::npos)
      << cmake;
  EXPECT_NE(cmake.find("OUTPUT_NAME qkv\n"), std::string::npos) << cmake;
  EXPECT_NE(cmake.find("tacit::backend"), std::string::npos) << cmake;
  EXPECT_EQ(embeddedBytes(readFile(path("out/qkv-backend/spec.cc"))),
            readFile(source("isa/qkv.taidl")));
  std::string main_cc = readFile(path("out/qkv-backend/main.cc"));
  EXPECT_NE(main_cc.find("backendMain(tacitEmbeddedSpec(), argc, argv)"), std::string::npos);

  // Outcome from a build tree, it points the project at this build's package.
  EXPECT_NE(r.out.find("build it with:\n  cmake -S out/qkv-backend -B out/qkv-backend/build -G "
                       "Ninja -Dtacit_DIR=" +
                       fs::canonical(TACIT_BINARY_DIR).string() +
                       " && cmake --build out/qkv-backend/build\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("then run:\n  out/qkv-backend/qkv --input KERNEL.hlo"), std::string::npos)
      << r.out;
  EXPECT_TRUE(fileExists(std::string(TACIT_BINARY_DIR) + "/tacitConfig.cmake"));
  EXPECT_TRUE(fileExists(std::string(TACIT_BINARY_DIR) + "/tacitTargets.cmake"));
}

TEST_F(GenBackend, BakesParametersIn) {
  Outcome r = tacit("gen-backend " + source("isa/gemmini.taidl") + " --param DIM=8 -o gemmini8");
  ASSERT_EQ(r.status, 0) << r.err;
  std::string spec_cc = readFile(path("gemmini8/spec.cc"));
  EXPECT_NE(spec_cc.find("{{\"DIM\", 8}}"), std::string::npos)
      << spec_cc.substr(spec_cc.size() - 400);
  EXPECT_NE(spec_cc.find("(--param DIM=8)"), std::string::npos);
  EXPECT_NE(r.out.find("(--param DIM=8)"), std::string::npos) << r.out;
  EXPECT_NE(readFile(path("gemmini8/CMakeLists.txt")).find("OUTPUT_NAME gemmini\n"),
            std::string::npos);
}

TEST_F(GenBackend, EmbedsAnySpecTextByteForByte) {
  // Quotes, a raw-string terminator, backslashes, trigraph-like text and non-ASCII bytes in
  // comments must reach the backend unchanged.
  std::string text = readFile(source("isa/qkv.taidl"));
  text = "# )\" )__\" \\ \\\\n ?? / \"quoted\" \xc3\xa9 \xff\xfe \t*/ /* R\"x(\n" + text +
         "\n# ]] ]=] }; 0x00\n";
  std::string spec = write("odd name.taidl", text);
  Outcome r = tacit("gen-backend '" + spec + "' -o 'dir with space'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(embeddedBytes(readFile(path("dir with space/spec.cc"))), text);
  EXPECT_NE(readFile(path("dir with space/spec.cc")).find("\"odd name.taidl\""), std::string::npos);
  EXPECT_NE(r.out.find("cmake -S 'dir with space' -B 'dir with space/build'"), std::string::npos)
      << r.out;
}

TEST_F(GenBackend, InvalidSpecWritesNothing) {
  std::string text = readFile(source("isa/qkv.taidl"));
  size_t at = text.find("isa qkv;");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 8, "\nbuffer d9[4] of nonsense[2];");
  std::string spec = write("broken.taidl", text);
  Outcome r = tacit("gen-backend " + spec + " -o out");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^" + spec + ":[0-9]+:[0-9]+: error: ")))
      << r.err;
  EXPECT_FALSE(fs::exists(path("out")));

  // An existing directory is left as it was.
  fs::create_directories(path("existing"));
  write("existing/keep.txt", "x");
  EXPECT_EQ(tacit("gen-backend " + spec + " -o existing").status, 1);
  EXPECT_EQ(std::distance(fs::directory_iterator(path("existing")), {}), 1);

  Outcome missing = tacit("gen-backend " + path("nope.taidl") + " -o out");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("nope.taidl"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(path("out")));
}

TEST_F(GenBackend, InvalidParametersWriteNothing) {
  struct Case {
    std::string param, message;
  };
  for (const Case& c : std::vector<Case>{
           {"NOPE=3",
            "error: unknown parameter 'NOPE' (--param NOPE=3)\n  hint: the parameters "
            "of qkv are SOFTMAX_BROADCAST_DIM\n"},
           {"SOFTMAX_BROADCAST_DIM=x",
            "error: --param SOFTMAX_BROADCAST_DIM expects an integer, got 'x'\n"},
           {"SOFTMAX_BROADCAST_DIM",
            "error: --param expects KEY=VALUE, got "
            "'SOFTMAX_BROADCAST_DIM'\n  hint: e.g. --param NAME=VALUE\n"},
       }) {
    Outcome r = tacit("gen-backend " + source("isa/qkv.taidl") + " --param " + c.param + " -o out");
    EXPECT_EQ(r.status, 1) << c.param;
    EXPECT_EQ(r.err, c.message);
    EXPECT_EQ(r.out, "");
    EXPECT_FALSE(fs::exists(path("out"))) << c.param;
  }
  // A value the spec rejects (gemmini's buffers are sized by DIM).
  Outcome r = tacit("gen-backend " + source("isa/gemmini.taidl") + " --param DIM=0 -o out");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("error: "), std::string::npos);
  EXPECT_FALSE(fs::exists(path("out")));
}

TEST_F(GenBackend, UsageErrors) {
  Outcome no_dir = tacit("gen-backend " + source("isa/qkv.taidl"));
  EXPECT_EQ(no_dir.status, 1);
  EXPECT_EQ(no_dir.err,
            "error: tacit gen-backend needs -o DIR\n  hint: e.g. tacit gen-backend isa/qkv.taidl "
            "-o qkv-backend\n");
  write("file", "x");
  Outcome not_dir = tacit("gen-backend " + source("isa/qkv.taidl") + " -o file");
  EXPECT_EQ(not_dir.status, 1);
  EXPECT_NE(not_dir.err.find("file: error: not a directory"), std::string::npos) << not_dir.err;
  EXPECT_EQ(tacit("gen-backend -o x").status, 1);
}

TEST_F(GenBackend, Help) {
  Outcome r = tacit("gen-backend --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("usage: tacit gen-backend SPEC [--param K=V]... [--output DIR]\n", 0), 0u)
      << r.out;
  EXPECT_NE(r.out.find("docs/gen-backend.md"), std::string::npos);
  Outcome overview = tacit("--help");
  EXPECT_NE(overview.out.find("  gen-backend "), std::string::npos) << overview.out;
}

}  // namespace
}  // namespace tacit::testing
