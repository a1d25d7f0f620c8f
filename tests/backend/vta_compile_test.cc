// The backend on isa/vta.taidl (issue 21), with no VTA-specific code in src/: GEMM and ALU read
// their addresses from micro-op words (lets), which the compiler makes from the allocated
// addresses and loads before each call (docs/backend.md, "Micro-op words"). An int8 GEMM with
// shift-and-clamp requantisation compiles and verifies bit for bit on the oracle, whole for one
// row and as a loop nest over rows for 16x16x16.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>

#include "backend/compiler.h"
#include "backend/verify.h"
#include "common/paths.h"
#include "common/slowdown.h"
#include "hlo/parser.h"
#include "oracle/tasm.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace tacit::backend {
namespace {

constexpr const char* kOneRow = R"(HloModule one_row
ENTRY main {
  a = s8[1,16] parameter(0)
  w = s8[16,16] parameter(1)
  dot = s32[1,16] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  six = s32[] constant(6)
  shift = s32[1,16] broadcast(six), dimensions={}
  scaled = s32[1,16] shift-right-arithmetic(dot, shift)
  lo = s32[] constant(-128)
  hi = s32[] constant(127)
  clamped = s32[1,16] clamp(lo, scaled, hi)
  ROOT out = s8[1,16] convert(clamped)
}
)";

struct Compiled {
  taidl::Isa isa;
  std::unique_ptr<hlo::HloModule> kernel;
  CompileResult result;
  std::string text;
};

Compiled compileText(const std::string& hlo, const std::string& file,
                     std::optional<TileSchedule> schedule = std::nullopt) {
  Compiled c;
  c.isa = taidl::loadIsaFile(testing::sourceDir() + "/isa/vta.taidl");
  c.kernel = hlo::parseModule(hlo, file);
  CompileOptions options;
  options.time_limit = std::chrono::seconds(20) * testing::kSlowdown;
  options.schedule = std::move(schedule);
  c.result = compile(c.isa, *c.kernel, options);
  c.text = oracle::printProgram(c.isa, c.result.program);
  return c;
}

void expectVerifies(const Compiled& c, uint64_t seed) {
  VerifyReport r = verify(c.isa, *c.kernel, c.result.program, {.sets = 3, .seed = seed});
  EXPECT_TRUE(r.ok) << r.mismatch << "\n" << c.text;
}

// Instruction names in program order, loops flattened.
std::vector<std::string> callNames(const Compiled& c, const std::vector<oracle::Stmt>& body) {
  std::vector<std::string> out;
  for (const oracle::Stmt& s : body) {
    if (s.kind == oracle::StmtKind::kLoop) {
      for (std::string& n : callNames(c, s.body))
        out.push_back(std::move(n));
    } else if (s.kind == oracle::StmtKind::kCall) {
      out.push_back(c.isa.instructions[static_cast<size_t>(s.unit)].name.text);
    }
  }
  return out;
}

TEST(VtaCompile, AOneRowGemmWithRequantisationLoadsEachCallsMicroOpAndVerifies) {
  Compiled c = compileText(kOneRow, "one_row.hlo");
  std::vector<std::string> names = callNames(c, c.result.program.body);
  std::map<std::string, int> count;
  for (const std::string& n : names)
    ++count[n];
  // The reset and the accumulating GEMM, SHR, MIN, MAX: each after the load of its micro-op.
  EXPECT_EQ(count["gemm"], 2) << c.text;
  EXPECT_EQ(count["alu"], 3) << c.text;
  EXPECT_EQ(count["load_uop"], 5) << c.text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "gemm" || names[i] == "alu") {
      ASSERT_GT(i, 0u);
      EXPECT_EQ(names[i - 1], "load_uop") << c.text;
    }
  }
  // The immediates are bound from the kernel's constants.
  EXPECT_NE(c.text.find("op=3, use_imm=1, imm=6"), std::string::npos) << c.text;
  EXPECT_NE(c.text.find("const words"), std::string::npos) << c.text;
  expectVerifies(c, 21);
}

TEST(VtaCompile, The16CubedRequantisedGemmCompilesWholeAndVerifies) {
  const std::string file = testing::sourceDir() + "/examples/vta/gemm_requant_16x16x16.hlo";
  Compiled c = compileText(readFile(file), file);
  std::map<std::string, int> count;
  for (const std::string& n : callNames(c, c.result.program.body))
    ++count[n];
  EXPECT_EQ(count["gemm"], 32) << c.text;  // a reset and an accumulation per row
  EXPECT_EQ(count["load_uop"], count["gemm"] + count["alu"]) << c.text;
  expectVerifies(c, 23);
}

TEST(VtaCompile, The16CubedRequantisedGemmCompilesAsALoopOverRowsAndVerifies) {
  const std::string file = testing::sourceDir() + "/examples/vta/gemm_requant_16x16x16.hlo";
  TileSchedule rows;
  rows.tile = {1, 16};
  rows.order = {0, 1};
  Compiled c = compileText(readFile(file), file, rows);
  ASSERT_FALSE(c.result.program.body.empty());
  EXPECT_EQ(c.result.program.body[0].kind, oracle::StmtKind::kLoop) << c.text;
  expectVerifies(c, 22);
}

TEST(VtaCompile, The64CubedGemmOfPackedWeightsTilesAndVerifies) {
  // W arrives packed ([out block][in block][out][in]) and is unpacked by a transpose and a
  // reshape: the tiles read it through the reshape's merged dimensions.
  const std::string file = testing::sourceDir() + "/examples/vta/gemm_requant_64x64x64.hlo";
  Compiled c = compileText(readFile(file), file);
  EXPECT_FALSE(c.result.stats.tiling.empty()) << c.text;
  expectVerifies(c, 24);
}

// A buffer that lets read words from and that also holds data: the word loads would overwrite
// the data, which the allocator does not know of, so the program is refused.
TEST(VtaCompile, DataInALetsBufferIsRefusedWithADiagnostic) {
  taidl::Isa isa = taidl::loadIsa(R"(isa shared_words;
buffer idx[8] of u32[];
buffer acc[16] of s32[1, 4];
instruction load_idx(n; dram, sram) {
  require n >= 1 && n <= 8 && sram >= 0 && sram + n <= 8 && dram >= 0;
  %bytes : u8[n * 4] = read d0[dram * 4];
  %quads = u8[n, 4] reshape(%bytes);
  %row = u32[n] bitcast-convert(%quads);
  write idx[sram] = %row;
}
instruction store_idx(n; dram, sram) {
  require n >= 1 && n <= 8 && sram >= 0 && sram + n <= 8 && dram >= 0;
  %row : u32[n] = read idx[sram];
  %quads = u8[n, 4] bitcast-convert(%row);
  %bytes = u8[n * 4] reshape(%quads);
  write d0[dram * 4] = %bytes;
}
instruction move(u; ) {
  require u >= 0 && u < 8;
  let w = idx[u];
  %x : s32[1, 1, 4] = read acc[w % 16, 0, 0];
  write acc[w // 16 % 16, 0, 0] = %x;
}
)",
                                  "shared_words.taidl");
  auto kernel = hlo::parseModule(R"(HloModule copy
ENTRY main {
  p = u32[4] parameter(0)
  ROOT c = u32[4] copy(p)
}
)",
                                 "copy.hlo");
  try {
    compile(isa, *kernel, {});
    ADD_FAILURE() << "a program keeping data in idx compiled";
  } catch (const DiagnosticError& e) {
    EXPECT_NE(std::string(e.what()).find("keeps data in buffer 'idx'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tacit::backend
