// isa/vta.taidl (issue 21), VTA's default configuration, on the oracle:
//  * conformance with VTA's own functional simulator: every golden run of
//    ../shared/conformance/vta (program.txt: the instructions and micro-ops; data.txt: DRAM before
//    and after, the final SRAM contents) executed instruction by instruction reproduces every
//    DRAM byte of the outputs and every dumped SRAM element;
//  * the hand-written programs of examples/vta equal the HLO evaluator on their .hlo twins;
//  * every limit of the encoding is a `require` (a call at the limit runs, one past it fails);
//  * micro-op indices outside a buffer are the oracle's error (the simulator's CHECK).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/paths.h"
#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "spec_checks.h"
#include "support/diagnostic.h"
#include "support/source.h"
#include "taidl/isa.h"

namespace tacit::oracle {
namespace {

using hlo::Literal;

const taidl::Isa& vta() {
  static const taidl::Isa isa = taidl::loadIsaFile(tacit::testing::sourceDir() + "/isa/vta.taidl");
  return isa;
}

// ---- the golden format (../shared/conformance/vta/README.md) ------------------------------------

struct GoldenInsn {
  std::string op;  // LOAD, STORE, GEMM, ALU, FINISH
  std::map<std::string, int64_t> fields;
};

struct GoldenCase {
  std::vector<GoldenInsn> insns;
  int64_t dram_base_addr = 0, dram_size = 0;
  std::vector<std::pair<int64_t, std::vector<uint8_t>>> mem_in, mem_out;  // physical address
  // Per buffer name ("acc", "inp", "wgt"): element index -> its values.
  std::map<std::string, std::map<int64_t, std::vector<int64_t>>> sram;
};

std::vector<uint8_t> hexBytes(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

GoldenCase readCase(const std::string& dir) {
  GoldenCase c;
  std::istringstream program(readFile(dir + "/program.txt"));
  for (std::string line; std::getline(program, line);) {
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word != "insn") continue;
    GoldenInsn insn;
    in >> word >> insn.op;
    while (in >> word) {
      size_t eq = word.find('=');
      if (eq == std::string::npos || word.substr(0, eq) == "raw") continue;
      insn.fields[word.substr(0, eq)] = std::stoll(word.substr(eq + 1));
    }
    c.insns.push_back(std::move(insn));
  }
  std::istringstream data(readFile(dir + "/data.txt"));
  for (std::string line; std::getline(data, line);) {
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "dram_base_addr") in >> c.dram_base_addr;
    if (word == "dram_size") in >> c.dram_size;
    if (word == "mem_in" || word == "mem_out") {
      int64_t addr = 0;
      std::string hex;
      in >> addr >> hex;
      (word == "mem_in" ? c.mem_in : c.mem_out).emplace_back(addr, hexBytes(hex));
    }
    if (word.rfind("sram_", 0) == 0) {
      int64_t index = 0;
      in >> index;
      std::vector<int64_t>& values = c.sram[word.substr(5)][index];
      for (int64_t v; in >> v;)
        values.push_back(v);
    }
  }
  return c;
}

// The call of one golden instruction: the spec's instruction and its attribute values in
// declaration order, from the encoding's fields (the dependency tokens are dropped: tacit runs in
// program order; docs/isa.md, "VTA").
std::pair<std::string, std::vector<int64_t>> callOf(const GoldenInsn& g) {
  static const std::map<int64_t, std::string> kLoads = {
      {0, "load_uop"}, {1, "load_wgt"}, {2, "load_inp"}, {3, "load_acc"}, {5, "load_acc8"}};
  std::string name;
  std::map<std::string, int64_t> fields = g.fields;
  if (g.op == "LOAD") name = kLoads.at(fields.at("memory_type"));
  if (g.op == "STORE") {
    EXPECT_EQ(fields.at("memory_type"), 4);
    for (const char* pad : {"y_pad_0", "y_pad_1", "x_pad_0", "x_pad_1"})
      EXPECT_EQ(fields.at(pad), 0) << "a STORE with padding (the simulator rejects it)";
    name = "store";
  }
  if (g.op == "GEMM") name = "gemm";
  if (g.op == "ALU") name = "alu";
  if (g.op == "FINISH") name = "finish";
  if (fields.count("reset_reg")) fields["reset"] = fields.at("reset_reg");
  if (fields.count("alu_opcode")) fields["op"] = fields.at("alu_opcode");
  const taidl::Isa& isa = vta();
  int32_t index = isa.findInstruction(name);
  EXPECT_GE(index, 0) << g.op;
  std::vector<int64_t> attrs;
  for (const taidl::Attribute& a : isa.instructions[static_cast<size_t>(index)].attrs)
    attrs.push_back(fields.at(a.name.text));
  return {name, attrs};
}

// The golden case's SRAM element `index` of `buffer` as the machine holds it.
std::vector<int64_t> sramElement(Machine& m, const std::string& buffer, int64_t index) {
  const taidl::Isa& isa = vta();
  int32_t b = isa.findBuffer(buffer);
  const taidl::Buffer& buf = isa.buffers[static_cast<size_t>(b)];
  int64_t lanes = 1;
  for (int64_t u : buf.unit)
    lanes *= u;
  int64_t width = hlo::byteSize(buf.dtype);
  std::span<uint8_t> mem = m.memory(b);
  std::vector<int64_t> out;
  for (int64_t i = 0; i < lanes; ++i) {
    const uint8_t* p = mem.data() + (index * lanes + i) * width;
    if (width == 1) {
      out.push_back(static_cast<int8_t>(*p));
    } else {
      int32_t v = 0;
      std::memcpy(&v, p, 4);
      out.push_back(v);
    }
  }
  return out;
}

std::vector<std::string> goldenCases() {
  std::vector<std::string> out;
  std::string root = tacit::testing::sharedDir() + "/conformance/vta";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root, ec)) {
    if (std::filesystem::exists(e.path() / "program.txt")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Vta, ReproducesEveryGoldenRunOfTheFunctionalSimulator) {
  TACIT_REQUIRE_SHARED_DATA("conformance/vta");
  std::vector<std::string> cases = goldenCases();
  ASSERT_GE(cases.size(), 14u) << "the README lists 14 cases";
  for (const std::string& dir : cases) {
    SCOPED_TRACE(dir);
    GoldenCase c = readCase(dir);
    ASSERT_FALSE(c.insns.empty());
    ASSERT_FALSE(c.mem_out.empty());
    Machine m(vta());
    m.reset(c.dram_base_addr + c.dram_size);  // HBM address = physical address
    std::span<uint8_t> hbm = m.memory(0);
    for (const auto& [addr, bytes] : c.mem_in)
      std::memcpy(hbm.data() + addr, bytes.data(), bytes.size());
    for (const GoldenInsn& g : c.insns) {
      auto [name, attrs] = callOf(g);
      ASSERT_NO_THROW(m.call(name, attrs)) << g.op;
    }
    hbm = m.memory(0);
    int64_t wrong = 0, checked = 0;
    for (const auto& [addr, bytes] : c.mem_out) {
      for (size_t i = 0; i < bytes.size(); ++i, ++checked) {
        if (hbm[static_cast<size_t>(addr) + i] == bytes[i]) continue;
        if (wrong++ < 3)
          ADD_FAILURE() << "DRAM byte " << addr + static_cast<int64_t>(i) << ": got "
                        << int(hbm[static_cast<size_t>(addr) + i]) << ", want " << int(bytes[i]);
      }
    }
    EXPECT_EQ(wrong, 0) << "of " << checked << " DRAM bytes";
    EXPECT_GT(checked, 0);
    for (const auto& [buffer, elements] : c.sram) {
      for (const auto& [index, values] : elements)
        EXPECT_EQ(sramElement(m, buffer, index), values) << buffer << "[" << index << "]";
    }
    EXPECT_FALSE(c.sram["acc"].empty());
  }
}

// ---- the hand-written programs against the HLO evaluator ----------------------------------------

void expectProgramEqualsHlo(const std::string& name, int sets) {
  spec_checks::expectProgramEqualsHlo(vta(), tacit::testing::sourceDir() + "/examples/vta/" + name,
                                      sets, 300, [&](const Literal& want) {
                                        // The clamp must be exercised both ways, or the test could
                                        // not tell SHR/MIN/MAX apart.
                                        int64_t high = 0, low = 0;
                                        for (int64_t i = 0; i < want.elementCount(); ++i) {
                                          high += want.getInt64(i) == 127;
                                          low += want.getInt64(i) == -128;
                                        }
                                        EXPECT_GT(high, 0) << name;
                                        EXPECT_GT(low, 0) << name;
                                      });
}

TEST(Vta, Gemm16WithShiftAndClampEqualsHlo) {
  expectProgramEqualsHlo("gemm_requant_16x16x16", 3);
}

TEST(Vta, Gemm64InPackedTilesWithShiftAndClampEqualsHlo) {
  expectProgramEqualsHlo("gemm_requant_64x64x64", 2);
}

// ---- limits ---------------------------------------------------------------------------------

// The error of running `calls` on a fresh machine (HBM of 64 KiB), or "" if they run.
std::string runCalls(const std::string& calls) {
  return spec_checks::errorOfCalls(vta(), calls, 65536);
}

std::string load(const std::string& unit, int64_t y_size, int64_t x_size, int64_t pad,
                 int64_t sram_base) {
  return unit + "(y_size=" + std::to_string(y_size) + ", x_size=" + std::to_string(x_size) +
         ", y_pad_0=" + std::to_string(pad) +
         ", y_pad_1=0, x_pad_0=0, x_pad_1=0, sram_base=" + std::to_string(sram_base) +
         ", dram_base=0, x_stride=" + std::to_string(x_size) + ");";
}

std::string loop(const std::string& unit, const std::string& extra, int64_t iter_out,
                 int64_t uop_end, int64_t dst_factor_out) {
  return unit + "(" + extra + "iter_out=" + std::to_string(iter_out) +
         ", iter_in=1, uop_bgn=0, uop_end=" + std::to_string(uop_end) +
         ", dst_factor_out=" + std::to_string(dst_factor_out) +
         ", dst_factor_in=0, src_factor_out=0, src_factor_in=0" +
         (unit == "gemm" ? ", wgt_factor_out=0, wgt_factor_in=0" : "") + ");";
}

using spec_checks::Limit;

TEST(Vta, EveryEncodingLimitIsARequireThatRejectsOnePastIt) {
  const std::vector<Limit> limits = {
      {"the input buffer holds 2048 vectors", load("load_inp", 1, 16, 0, 2032),
       load("load_inp", 1, 16, 0, 2033), "load_inp",
       "sram_base + (y_pad_0 + y_size + y_pad_1) * (x_pad_0 + x_size + x_pad_1) <= INP_DEPTH"},
      {"the weight buffer holds 1024 blocks", load("load_wgt", 1, 1, 0, 1023),
       load("load_wgt", 1, 1, 0, 1024), "load_wgt",
       "sram_base + (y_pad_0 + y_size + y_pad_1) * (x_pad_0 + x_size + x_pad_1) <= WGT_DEPTH"},
      {"the micro-op buffer holds 8192 words", load("load_uop", 1, 1, 0, 8191),
       load("load_uop", 1, 1, 0, 8192), "load_uop",
       "sram_base + (y_pad_0 + y_size + y_pad_1) * (x_pad_0 + x_size + x_pad_1) <= UOP_DEPTH"},
      {"pads are 4 bits wide", load("load_acc", 0, 1, 15, 0), load("load_acc", 0, 1, 16, 0),
       "load_acc", "y_pad_0 >= 0 && y_pad_0 < PAD_LIMIT && y_pad_1 >= 0 && y_pad_1 < PAD_LIMIT"},
      {"sizes are 16 bits wide", load("load_acc8", 0, 65535, 0, 0),
       load("load_acc8", 0, 65536, 0, 0), "load_acc8",
       "y_size >= 0 && y_size < SIZE_LIMIT && x_size >= 0 && x_size < SIZE_LIMIT"},
      {"STORE reads at most the accumulator",
       "store(y_size=1, x_size=16, sram_base=2032, dram_base=0, x_stride=16);",
       "store(y_size=1, x_size=16, sram_base=2033, dram_base=0, x_stride=16);", "store",
       "sram_base + y_size * x_size <= ACC_DEPTH"},
      {"the destination factor is 11 bits wide", loop("gemm", "reset=1, ", 1, 1, 2047),
       loop("gemm", "reset=1, ", 1, 1, 2048), "gemm",
       "dst_factor_out >= 0 && dst_factor_out < ACC_DEPTH"},
      {"loop extents are 14 bits wide", loop("gemm", "reset=1, ", 16383, 0, 0),
       loop("gemm", "reset=1, ", 16384, 0, 0), "gemm",
       "iter_out >= 0 && iter_out < ITER_LIMIT && iter_in >= 0 && iter_in < ITER_LIMIT"},
      {"the ALU has five operations", loop("alu", "op=4, use_imm=1, imm=1, ", 1, 1, 0),
       loop("alu", "op=5, use_imm=1, imm=1, ", 1, 1, 0), "alu", "op >= 0 && op <= 4"},
      {"immediates are 16 bits, signed", loop("alu", "op=2, use_imm=1, imm=-32768, ", 1, 1, 0),
       loop("alu", "op=2, use_imm=1, imm=-32769, ", 1, 1, 0), "alu",
       "imm >= -32768 && imm < 32768"},
  };
  spec_checks::expectLimitsAreRequires(vta(), limits, 65536);
}

// A micro-op's index plus the loop's factors past the accumulator: the simulator CHECKs it, the
// oracle reports the slice and writes no output.
TEST(Vta, AMicroOpIndexOutsideTheBufferIsAnError) {
  const std::string ok = loop("gemm", "reset=1, ", 2, 1, 1023);  // dst 0 and 1023
  EXPECT_EQ(runCalls(ok), "");
  const std::string error = runCalls(loop("gemm", "reset=1, ", 3, 1, 1024));  // dst 2048
  EXPECT_NE(error.find("acc"), std::string::npos) << error;
  EXPECT_NE(error.find("2048"), std::string::npos) << error;
  // The micro-op word itself is data: its index field points outside the buffer.
  Machine m(vta());
  m.reset(64);
  std::span<uint8_t> uop = m.memory(vta().findBuffer("uop"));
  uint32_t word = 2047 + 2047 * 2048u;  // dst 2047, src 2047
  std::memcpy(uop.data(), &word, 4);
  EXPECT_NO_THROW(m.call("alu", std::vector<int64_t>{2, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0}));
  EXPECT_THROW(m.call("alu", std::vector<int64_t>{2, 0, 0, 2, 1, 0, 1, 1, 0, 0, 0}),
               DiagnosticError);
}

}  // namespace
}  // namespace tacit::oracle
