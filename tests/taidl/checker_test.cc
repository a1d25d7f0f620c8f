// The checker on well-formed specs (docs/taidl.md section 8): what it accepts, the attribute
// ranges it infers, the types it compares at instantiation points, and its warnings.
#include <gtest/gtest.h>

#include "test_util.h"

namespace tacit::taidl {
namespace {

using testing::load;
using testing::warningsOf;

const char* kQkvLike = R"(isa q;
param ROWS = 128;
buffer d1[ROWS] of bf16[64];
buffer d2[64] of bf16[64];
instruction load_rm(n; addr_in, addr_out) {
  require n >= 1 && n <= ROWS;
  require addr_in >= 0;
  require addr_out >= 0 && addr_out + n <= ROWS;
  cost n;
  reads d0[addr_in] size [n * 128];
  writes d1[addr_out] size [n];
  %a = u8[n, 64, 2] reshape(%In1);
  %Out0 = bf16[n, 64] bitcast-convert(%a);
}
instruction strided(tiles, stride; src, dst) {
  require tiles >= 1 && tiles <= 4;
  require stride >= tiles * 16 && stride <= 4096;
  require src >= 0;
  require dst >= 0 && dst + 2 * tiles <= 64;
  reads d0[src] size [15 * stride + tiles * 16];
  writes d2[dst] size [2 * tiles];
  %z = u8[] constant(0);
  %full = u8[16 * stride] pad(%In1, %z), padding={[0:stride - tiles * 16]};
  %rows = u8[16, stride] reshape(%full);
  %used = u8[16, tiles * 16] slice(%rows), slice={[0:16], [0:tiles * 16]};
  %r = u8[tiles, 4, 4, 16] reshape(%used);
  %t = u8[2 * tiles, 64, 2] reshape(%r);
  %Out0 = bf16[2 * tiles, 64] bitcast-convert(%t);
}
instruction gemm(; a, b, out) {
  require a >= 0 && a + 64 <= ROWS && b >= 0 && b + 64 <= ROWS;
  require out >= 0 && out + 64 <= 64;
  reads d1[a] size [64];
  reads d1[b] size [64];
  writes d2[out] size [64];
  %Out0 = bf16[64, 64] dot(%In1, %In2), lhs_contracting_dims={1}, rhs_contracting_dims={0};
}
)";

TEST(Checker, AcceptsAWellFormedSpecWithoutWarnings) {
  DiagnosticSink sink;
  Isa isa = load(kQkvLike, &sink);
  for (const Diagnostic& d : sink.all())
    ADD_FAILURE() << d.str();
  ASSERT_EQ(isa.instructions.size(), 3u);
  EXPECT_EQ(isa.buffers[1].access, (std::vector<int64_t>{128}));
  EXPECT_EQ(isa.buffers[1].unit, (std::vector<int64_t>{64}));
  EXPECT_EQ(isa.instruction_ranges[0][0].range, (Interval{1, 128}));
  // stride >= tiles * 16 with tiles >= 1 gives stride >= 16.
  EXPECT_EQ(isa.instruction_ranges[1][0].range, (Interval{1, 4}));
  EXPECT_EQ(isa.instruction_ranges[1][1].range, (Interval{16, 4096}));
  ASSERT_EQ(isa.instructions[0].reads.size(), 1u);
  EXPECT_EQ(isa.instructions[0].reads[0]->name.text, "In1");
  EXPECT_EQ(isa.instructions[0].writes[0]->name.text, "Out0");
}

TEST(Checker, ParametersChangeEveryDerivedSize) {
  Isa isa = load(kQkvLike, nullptr, {{"ROWS", 256}});
  EXPECT_EQ(isa.buffers[1].access, (std::vector<int64_t>{256}));
  EXPECT_EQ(isa.instruction_ranges[0][0].range, (Interval{1, 256}));
}

TEST(Checker, RangesFromDisjunctionsAndEqualities) {
  Isa isa = load(R"(isa t;
buffer b[64] of s32[4];
instruction i(mode, n, k; a) {
  require mode == 0 || mode == 1;
  require n == 3;
  require 2 * k + 1 <= 9 && k > -1;
  require a >= 0 && a + n + k + 1 <= 64;
  %x : s32[n + mode + k, 4] = read b[a, 0];
  write b[a, 0] = %x;
}
)");
  const auto& r = isa.instruction_ranges[0];
  EXPECT_EQ(r[0].range, (Interval{0, 1}));
  EXPECT_EQ(r[1].range, (Interval{3, 3}));
  EXPECT_EQ(r[2].range, (Interval{0, 4}));
}

TEST(Checker, NonPolynomialBranchTypesAreComparedAtInstantiationPoints) {
  const char* same = R"(isa t;
buffer b[64] of s8[];
instruction i(n, m) {
  require n >= 1 && n <= 9 && m >= 0 && m <= 1;
  if (m == 0) {
    %x : s8[n // 2] = read b[0];
  } else {
    %x : s8[(n - n % 2) / 2] = read b[0];
  }
  write b[1] = %x;
}
)";
  load(same);
  std::string different = same;
  different.replace(different.find("(n - n % 2) / 2"), 15, "(n + 1) // 2");
  Diagnostic d = testing::errorOf(different);
  EXPECT_NE(d.message.find("different types"), std::string::npos) << d.str();
  EXPECT_NE(d.message.find("(for n=1, m="), std::string::npos) << d.str();
}

TEST(Checker, RegisterBranchesAreBothTypeChecked) {
  const char* spec = R"(isa t;
buffer b[64] of s32[4];
reg $mode = 0;
instruction i(; a) {
  require a >= 0 && a + 1 <= 64;
  %x : s32[1, 4] = read b[a, 0];
  if ($mode == 0) {
    %y = s32[1, 4] negate(%x);
  } else {
    %y = s32[1, 4] abs(%x);
  }
  write b[a, 0] = %y;
}
)";
  load(spec);
  std::string bad = spec;
  bad.replace(bad.find("abs(%x)"), 7, "exponential(%x)");  // not valid on s32
  Diagnostic d = testing::errorOf(bad);
  EXPECT_EQ(d.loc.line, 10u) << d.str();
  EXPECT_NE(d.message.find("exponential"), std::string::npos) << d.str();
}

TEST(Checker, HbmSlicesNeedOnlyANonNegativeStart) {
  // d0 is sized per program: the upper end is checked when the program runs.
  load(R"(isa t;
instruction copy(n; src, dst) {
  require n >= 1 && n <= 1000000 && src >= 0 && dst >= 0;
  reads d0[src] size [n];
  writes d0[dst] size [n];
  %Out0 = u8[n] copy(%In1);
}
)");
}

TEST(Checker, RegisterAddressesAreLeftToTheOracle) {
  load(R"(isa t;
buffer b[4] of s32[8];
reg $p = 0;
instruction push(; x) {
  require x >= 0 && x + 1 <= 4;
  %v : s32[1, 8] = read b[x, 0];
  write b[$p, 0] = %v;
  set $p = ($p + 1) % 4;
}
)");
}

std::vector<std::string> warningTexts(const std::string& text) {
  std::vector<std::string> out;
  for (const Diagnostic& d : warningsOf(text))
    out.push_back(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message);
  return out;
}

TEST(Checker, Warnings) {
  std::vector<std::string> w = warningTexts(R"(isa t;
buffer b[64] of s32[4];
instruction i(n, unused; a) {
  require n >= 1 && n <= 8 && a >= 0 && a + n <= 64;
  %x : s32[n, 4] = read b[a, 0];
  %dead = s32[n, 4] negate(%x);
  write b[a, 0] = %x;
  write b[a, 0] = %x;
  if (1 == 2) {
    write b[0, 0] = %x;
  }
  if (n >= 1) {
    write b[a, 0] = %x;
  }
}
)");
  std::vector<std::string> want = {
      "6:3: value %dead is never used",
      "3:18: attribute unused of i is never used",
      "9:7: condition `1 == 2` is always false",
      "12:7: condition `n >= 1` is always true for every attribute value the constraints allow",
      "7:3: this write to b is overwritten by the write at t.taidl:8:3 before it is read",
  };
  EXPECT_EQ(w, want);
}

TEST(Checker, WarnsAboutUnboundedComputationalAttributes) {
  std::vector<std::string> w = warningTexts(R"(isa t;
buffer b[64] of s32[];
instruction i(n) {
  require n >= 2;
  %c = s32[n] iota(), iota_dimension=0;
  %z = s32[] constant(0);
  %s = s32[] reduce(%c, %z), dimensions={0}, to_apply=add;
  %r = s32[1] reshape(%s);
  write b[0] = %r;
}
)");
  std::vector<std::string> want = {
      "3:15: computational attribute n of i has no inferable upper bound; types were checked "
      "for 2..9 only"};
  EXPECT_EQ(w, want);
}

TEST(Checker, MacroWarningsAndSelectability) {
  std::vector<std::string> w = warningTexts(R"(isa t;
buffer b[64] of s32[4];
reg $p = 0;
instruction pop(; x) {
  require x >= 0 && x + 1 <= 64;
  %v : s32[1, 4] = read b[$p, 0];
  write b[x, 0] = %v;
}
macro m(; x, y) {
  pop(x);
}
)");
  std::vector<std::string> want = {
      "9:14: attribute y of macro m is never used",
      "9:7: macro m is not selectable: call 1 (pop): address `$p` reads register $p, which is not "
      "set before it (machine state) (at t.taidl:6:27)",
  };
  EXPECT_EQ(w, want);
}

}  // namespace
}  // namespace tacit::taidl
