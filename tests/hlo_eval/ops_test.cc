// One test per operation with hand-checked expected values (docs/numerics.md for the rules).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "eval_test_util.h"

namespace tacit::hlo {
namespace {

using testing::eval;
using testing::lit;

// Evaluates a one-instruction-family body: `ENTRY e { <body> }`.
Literal run(const std::string& body, const std::vector<Literal>& args = {}) {
  return eval("HloModule m\nENTRY e {\n" + body + "\n}\n", args);
}

TEST(EvalOps, ParameterConstantTupleGetTupleElement) {
  Literal r = run(R"(p = f32[2] parameter(0)
c = s32[] constant(7)
t = (f32[2], s32[]) tuple(p, c)
x = s32[] get-tuple-element(t), index=1
ROOT r = (s32[], f32[2]) tuple(x, p))",
                  {lit("f32[2]", "{1.5, -2}")});
  ASSERT_TRUE(r.isTuple());
  EXPECT_LITERAL(r.elements()[0], lit("s32[]", "7"));
  EXPECT_LITERAL(r.elements()[1], lit("f32[2]", "{1.5, -2}"));
}

TEST(EvalOps, Iota) {
  EXPECT_LITERAL(run("ROOT i = s32[2,3] iota(), iota_dimension=1"),
                 lit("s32[2,3]", "{{0, 1, 2}, {0, 1, 2}}"));
  EXPECT_LITERAL(run("ROOT i = s32[2,3] iota(), iota_dimension=0"),
                 lit("s32[2,3]", "{{0, 0, 0}, {1, 1, 1}}"));
  EXPECT_LITERAL(run("ROOT i = bf16[4] iota(), iota_dimension=0"), lit("bf16[4]", "{0, 1, 2, 3}"));
  // 257 is not a bf16 value: the index rounds to nearest even (256).
  Literal big = run("ROOT i = bf16[258] iota(), iota_dimension=0");
  EXPECT_EQ(big.getDouble(257), 256.0);
  EXPECT_EQ(big.getDouble(256), 256.0);
}

TEST(EvalOps, ReshapeKeepsRowMajorOrder) {
  EXPECT_LITERAL(run("p = s32[2,3] parameter(0)\nROOT r = s32[3,2] reshape(p)",
                     {lit("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}),
                 lit("s32[3,2]", "{{1, 2}, {3, 4}, {5, 6}}"));
}

TEST(EvalOps, BitcastWithDefaultLayoutsIsReshape) {
  EXPECT_LITERAL(run("p = s32[2,3] parameter(0)\nROOT r = s32[6] bitcast(p)",
                     {lit("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}),
                 lit("s32[6]", "{1, 2, 3, 4, 5, 6}"));
}

TEST(EvalOps, BitcastReadsPhysicalLayout) {
  // {0,1} is column-major: the physical bytes of p are 1 4 2 5 3 6.
  EXPECT_LITERAL(run("p = s32[2,3]{0,1} parameter(0)\nROOT r = s32[6]{0} bitcast(p)",
                     {lit("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}),
                 lit("s32[6]", "{1, 4, 2, 5, 3, 6}"));
  // And back: physical 1..6 read through a column-major result layout.
  EXPECT_LITERAL(run("p = s32[6]{0} parameter(0)\nROOT r = s32[2,3]{0,1} bitcast(p)",
                     {lit("s32[6]", "{1, 2, 3, 4, 5, 6}")}),
                 lit("s32[2,3]", "{{1, 3, 5}, {2, 4, 6}}"));
}

TEST(EvalOps, Broadcast) {
  Literal v = lit("s32[2]", "{1, 2}");
  EXPECT_LITERAL(
      run("p = s32[2] parameter(0)\nROOT b = s32[2,3] broadcast(p), dimensions={0}", {v}),
      lit("s32[2,3]", "{{1, 1, 1}, {2, 2, 2}}"));
  EXPECT_LITERAL(
      run("p = s32[2] parameter(0)\nROOT b = s32[3,2] broadcast(p), dimensions={1}", {v}),
      lit("s32[3,2]", "{{1, 2}, {1, 2}, {1, 2}}"));
  EXPECT_LITERAL(run("c = f32[] constant(2.5)\nROOT b = f32[2,2] broadcast(c), dimensions={}"),
                 lit("f32[2,2]", "{{2.5, 2.5}, {2.5, 2.5}}"));
}

TEST(EvalOps, Transpose) {
  EXPECT_LITERAL(run("p = s32[2,3] parameter(0)\nROOT t = s32[3,2] transpose(p), dimensions={1,0}",
                     {lit("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}),
                 lit("s32[3,2]", "{{1, 4}, {2, 5}, {3, 6}}"));
  // result[i][j][k] = p[j][k][i]
  EXPECT_LITERAL(
      run("p = s32[2,2,2] parameter(0)\nROOT t = s32[2,2,2] transpose(p), dimensions={2,0,1}",
          {lit("s32[2,2,2]", "{{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}}")}),
      lit("s32[2,2,2]", "{{{0, 2}, {4, 6}}, {{1, 3}, {5, 7}}}"));
}

TEST(EvalOps, StridedSlice) {
  EXPECT_LITERAL(run("p = s32[6] parameter(0)\nROOT s = s32[3] slice(p), slice={[1:6:2]}",
                     {lit("s32[6]", "{0, 1, 2, 3, 4, 5}")}),
                 lit("s32[3]", "{1, 3, 5}"));
  EXPECT_LITERAL(
      run("p = s32[3,4] parameter(0)\nROOT s = s32[2,2] slice(p), slice={[1:3], [0:4:3]}",
          {lit("s32[3,4]", "{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}}")}),
      lit("s32[2,2]", "{{4, 7}, {8, 11}}"));
}

TEST(EvalOps, DynamicSliceClampsStarts) {
  const char* body = R"(p = s32[5] parameter(0)
i = s32[] parameter(1)
ROOT d = s32[3] dynamic-slice(p, i), dynamic_slice_sizes={3})";
  Literal v = lit("s32[5]", "{10, 11, 12, 13, 14}");
  EXPECT_LITERAL(run(body, {v, lit("s32[]", "1")}), lit("s32[3]", "{11, 12, 13}"));
  EXPECT_LITERAL(run(body, {v, lit("s32[]", "4")}), lit("s32[3]", "{12, 13, 14}"));
  EXPECT_LITERAL(run(body, {v, lit("s32[]", "-3")}), lit("s32[3]", "{10, 11, 12}"));
}

TEST(EvalOps, DynamicSlice2D) {
  EXPECT_LITERAL(run(R"(p = s32[3,3] parameter(0)
i = u8[] constant(1)
j = u8[] constant(2)
ROOT d = s32[2,1] dynamic-slice(p, i, j), dynamic_slice_sizes={2,1})",
                     {lit("s32[3,3]", "{{0, 1, 2}, {3, 4, 5}, {6, 7, 8}}")}),
                 lit("s32[2,1]", "{{5}, {8}}"));
}

TEST(EvalOps, DynamicUpdateSlice) {
  const char* body = R"(p = s32[5] parameter(0)
u = s32[2] parameter(1)
i = s32[] parameter(2)
ROOT d = s32[5] dynamic-update-slice(p, u, i))";
  Literal z = lit("s32[5]", "{0, 0, 0, 0, 0}"), u = lit("s32[2]", "{7, 8}");
  EXPECT_LITERAL(run(body, {z, u, lit("s32[]", "1")}), lit("s32[5]", "{0, 7, 8, 0, 0}"));
  EXPECT_LITERAL(run(body, {z, u, lit("s32[]", "4")}), lit("s32[5]", "{0, 0, 0, 7, 8}"));
}

TEST(EvalOps, ConcatenateNary) {
  EXPECT_LITERAL(run(R"(a = s32[2,1] parameter(0)
b = s32[2,2] parameter(1)
c = s32[2,1] parameter(2)
ROOT r = s32[2,4] concatenate(a, b, c), dimensions={1})",
                     {lit("s32[2,1]", "{{1}, {2}}"), lit("s32[2,2]", "{{3, 4}, {5, 6}}"),
                      lit("s32[2,1]", "{{7}, {8}}")}),
                 lit("s32[2,4]", "{{1, 3, 4, 7}, {2, 5, 6, 8}}"));
}

TEST(EvalOps, PadWithInteriorAndNegativeEdges) {
  Literal v = lit("s32[3]", "{1, 2, 3}");
  EXPECT_LITERAL(run("p = s32[3] parameter(0)\nz = s32[] constant(9)\nROOT r = s32[8] pad(p, z), "
                     "padding=1_2_1",
                     {v}),
                 lit("s32[8]", "{9, 1, 9, 2, 9, 3, 9, 9}"));
  EXPECT_LITERAL(
      run("p = s32[3] parameter(0)\nz = s32[] constant(9)\nROOT r = s32[2] pad(p, z), padding=-1_0",
          {v}),
      lit("s32[2]", "{2, 3}"));
  // Interior padding then cropping both ends: 1 9 2 9 3 -> crop 2 low, 1 high -> 2 9.
  EXPECT_LITERAL(run("p = s32[3] parameter(0)\nz = s32[] constant(9)\nROOT r = s32[2] pad(p, z), "
                     "padding=-2_-1_1",
                     {v}),
                 lit("s32[2]", "{2, 9}"));
  EXPECT_LITERAL(run("p = s32[1,2] parameter(0)\nz = s32[] constant(0)\nROOT r = s32[3,3] pad(p, "
                     "z), padding=1_1x0_1",
                     {lit("s32[1,2]", "{{4, 5}}")}),
                 lit("s32[3,3]", "{{0, 0, 0}, {4, 5, 0}, {0, 0, 0}}"));
}

TEST(EvalOps, Reverse) {
  EXPECT_LITERAL(run("p = s32[2,3] parameter(0)\nROOT r = s32[2,3] reverse(p), dimensions={1}",
                     {lit("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}),
                 lit("s32[2,3]", "{{3, 2, 1}, {6, 5, 4}}"));
  EXPECT_LITERAL(run("p = s32[2,3] parameter(0)\nROOT r = s32[2,3] reverse(p), dimensions={0,1}",
                     {lit("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}),
                 lit("s32[2,3]", "{{6, 5, 4}, {3, 2, 1}}"));
}

TEST(EvalOps, DotMatrixMatrix) {
  // [[1,2,3],[4,5,6]] x [[1,0],[0,1],[1,1]] = [[4,5],[10,11]]
  EXPECT_LITERAL(
      run(R"(a = f32[2,3] parameter(0)
b = f32[3,2] parameter(1)
ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})",
          {lit("f32[2,3]", "{{1, 2, 3}, {4, 5, 6}}"), lit("f32[3,2]", "{{1, 0}, {0, 1}, {1, 1}}")}),
      lit("f32[2,2]", "{{4, 5}, {10, 11}}"));
}

TEST(EvalOps, DotTransposedOperandsBatchAndOuter) {
  // lhs contracting dim 0: a^T b with a = [[1,2],[3,4]], b = [[5],[6]] -> [[1*5+3*6],[2*5+4*6]].
  EXPECT_LITERAL(run(R"(a = s32[2,2] parameter(0)
b = s32[2,1] parameter(1)
ROOT d = s32[2,1] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0})",
                     {lit("s32[2,2]", "{{1, 2}, {3, 4}}"), lit("s32[2,1]", "{{5}, {6}}")}),
                 lit("s32[2,1]", "{{23}, {34}}"));
  // Batched: batch 0 is [1,2].[3,4] = 11, batch 1 is [5,6].[7,8] = 83.
  EXPECT_LITERAL(run(R"(a = s32[2,2] parameter(0)
b = s32[2,2] parameter(1)
ROOT d = s32[2] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1})",
                     {lit("s32[2,2]", "{{1, 2}, {5, 6}}"), lit("s32[2,2]", "{{3, 4}, {7, 8}}")}),
                 lit("s32[2]", "{11, 83}"));
  // Outer product (no contracting dimensions).
  EXPECT_LITERAL(
      run("a = s32[2] parameter(0)\nb = s32[3] parameter(1)\nROOT d = s32[2,3] dot(a, b)",
          {lit("s32[2]", "{1, 2}"), lit("s32[3]", "{3, 4, 5}")}),
      lit("s32[2,3]", "{{3, 4, 5}, {6, 8, 10}}"));
}

TEST(EvalOps, DotMultipleContractingDimensions) {
  // sum over (i, j) of a[i][j] * b[j][i]: 1*5 + 2*7 + 3*6 + 4*8 = 69
  EXPECT_LITERAL(run(R"(a = s32[2,2] parameter(0)
b = s32[2,2] parameter(1)
ROOT d = s32[] dot(a, b), lhs_contracting_dims={0,1}, rhs_contracting_dims={1,0})",
                     {lit("s32[2,2]", "{{1, 2}, {3, 4}}"), lit("s32[2,2]", "{{5, 6}, {7, 8}}")}),
                 lit("s32[]", "69"));
}

const char* kConv1d = R"(x = f32[1,1,5] parameter(0)
k = f32[1,1,3] parameter(1)
ROOT c = f32[1,1,%d] convolution(x, k), window={%s}, dim_labels=bf0_oi0->bf0)";

Literal conv1d(int out, const std::string& window, const std::string& kernel = "{{{1, 0, -1}}}") {
  char body[512];
  std::snprintf(body, sizeof(body), kConv1d, out, window.c_str());
  return run(body, {lit("f32[1,1,5]", "{{{1, 2, 3, 4, 5}}}"), lit("f32[1,1,3]", kernel)});
}

TEST(EvalOps, Convolution1D) {
  EXPECT_LITERAL(conv1d(3, "size=3"), lit("f32[1,1,3]", "{{{-2, -2, -2}}}"));
  EXPECT_LITERAL(conv1d(5, "size=3 pad=1_1"), lit("f32[1,1,5]", "{{{-2, -2, -2, -2, 4}}}"));
  EXPECT_LITERAL(conv1d(2, "size=3 stride=2"), lit("f32[1,1,2]", "{{{-2, -2}}}"));
  // lhs_dilate=2: the input becomes 1 0 2 0 3 0 4 0 5.
  EXPECT_LITERAL(conv1d(7, "size=3 lhs_dilate=2"),
                 lit("f32[1,1,7]", "{{{-1, 0, -1, 0, -1, 0, -1}}}"));
  // rhs_dilate=2: taps at 0, 2, 4: 1*1 + 3*0 + 5*(-1).
  EXPECT_LITERAL(conv1d(1, "size=3 rhs_dilate=2"), lit("f32[1,1,1]", "{{{-4}}}"));
  // rhs_reversal: the kernel is applied as -1 0 1.
  EXPECT_LITERAL(conv1d(3, "size=3 rhs_reversal=1"), lit("f32[1,1,3]", "{{{2, 2, 2}}}"));
}

TEST(EvalOps, Convolution2DNhwcHwio) {
  // 3x3 input, 2x2 kernel of ones, two input features (second feature = 10 x first), one output.
  Literal x = lit(
      "f32[1,3,3,2]",
      "{{{{1, 10}, {2, 20}, {3, 30}}, {{4, 40}, {5, 50}, {6, 60}}, {{7, 70}, {8, 80}, {9, 90}}}}");
  Literal k = lit("f32[2,2,2,1]", "{{{{1}, {1}}, {{1}, {1}}}, {{{1}, {1}}, {{1}, {1}}}}");
  // Each output = 11 * (sum of the 2x2 window of 1..9).
  EXPECT_LITERAL(run(R"(x = f32[1,3,3,2] parameter(0)
k = f32[2,2,2,1] parameter(1)
ROOT c = f32[1,2,2,1] convolution(x, k), window={size=2x2}, dim_labels=b01f_01io->b01f)",
                     {x, k}),
                 lit("f32[1,2,2,1]", "{{{{132}, {176}}, {{264}, {308}}}}"));
}

TEST(EvalOps, ConvolutionFeatureGroups) {
  // Depthwise: 2 features, 2 groups; group 0 scales by 1, group 1 by 10.
  EXPECT_LITERAL(
      run(R"(x = s32[1,2,3] parameter(0)
k = s32[1,2,1] parameter(1)
ROOT c = s32[1,2,3] convolution(x, k), window={size=1}, dim_labels=bf0_io0->bf0, feature_group_count=2)",
          {lit("s32[1,2,3]", "{{{1, 2, 3}, {4, 5, 6}}}"), lit("s32[1,2,1]", "{{{1}, {10}}}")}),
      lit("s32[1,2,3]", "{{{1, 2, 3}, {40, 50, 60}}}"));
}

TEST(EvalOps, ConvolutionBatchGroups) {
  // batch_group_count=2: batch 0 pairs with output feature 0, batch 1 with output feature 1.
  EXPECT_LITERAL(
      run(R"(x = s32[2,1,2] parameter(0)
k = s32[1,2,1] parameter(1)
ROOT c = s32[1,2,2] convolution(x, k), window={size=1}, dim_labels=bf0_io0->bf0, batch_group_count=2)",
          {lit("s32[2,1,2]", "{{{1, 2}}, {{3, 4}}}"), lit("s32[1,2,1]", "{{{2}, {5}}}")}),
      lit("s32[1,2,2]", "{{{2, 4}, {15, 20}}}"));
}

const char* kAddS32 =
    "add { a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(a, b) }\n";
const char* kMaxS32 =
    "mx { a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] maximum(a, b) }\n";

TEST(EvalOps, Reduce) {
  Literal v = lit("s32[2,3]", "{{1, 2, 3}, {4, 5, 6}}");
  EXPECT_LITERAL(eval(std::string("HloModule m\n") + kAddS32 + R"(ENTRY e {
p = s32[2,3] parameter(0)
z = s32[] constant(0)
ROOT r = s32[2] reduce(p, z), dimensions={1}, to_apply=add })",
                      {v}),
                 lit("s32[2]", "{6, 15}"));
  EXPECT_LITERAL(eval(std::string("HloModule m\n") + kMaxS32 + R"(ENTRY e {
p = s32[2,3] parameter(0)
z = s32[] constant(-100)
ROOT r = s32[3] reduce(p, z), dimensions={0}, to_apply=mx })",
                      {v}),
                 lit("s32[3]", "{4, 5, 6}"));
  EXPECT_LITERAL(eval(std::string("HloModule m\n") + kAddS32 + R"(ENTRY e {
p = s32[2,3] parameter(0)
z = s32[] constant(100)
ROOT r = s32[] reduce(p, z), dimensions={0,1}, to_apply=add })",
                      {v}),
                 lit("s32[]", "121"));
}

TEST(EvalOps, VariadicReduceArgmax) {
  // (value, index) pairs keep the larger value; ties keep the smaller index.
  const char* text = R"(HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[2,4] parameter(0)
  idx = s32[2,4] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(x, idx, ninf, zero), dimensions={1}, to_apply=argmax
})";
  Literal r = eval(text, {lit("f32[2,4]", "{{1, 7, 3, 7}, {-1, -5, -2, -9}}")});
  EXPECT_LITERAL(r.elements()[0], lit("f32[2]", "{7, -1}"));
  EXPECT_LITERAL(r.elements()[1], lit("s32[2]", "{1, 0}"));
}

TEST(EvalOps, ReduceWindow) {
  std::string m = std::string("HloModule m\n") + kAddS32 + kMaxS32;
  EXPECT_LITERAL(eval(m + R"(ENTRY e {
p = s32[5] parameter(0)
z = s32[] constant(0)
ROOT r = s32[4] reduce-window(p, z), window={size=2}, to_apply=add })",
                      {lit("s32[5]", "{1, 2, 3, 4, 5}")}),
                 lit("s32[4]", "{3, 5, 7, 9}"));
  // Padding positions are skipped: windows [-1,2), [1,4), [3,6).
  EXPECT_LITERAL(eval(m + R"(ENTRY e {
p = s32[5] parameter(0)
z = s32[] constant(0)
ROOT r = s32[3] reduce-window(p, z), window={size=3 stride=2 pad=1_1}, to_apply=add })",
                      {lit("s32[5]", "{1, 2, 3, 4, 5}")}),
                 lit("s32[3]", "{3, 9, 9}"));
  // 2x2 max pool, stride 2.
  EXPECT_LITERAL(eval(m + R"(ENTRY e {
p = s32[2,4] parameter(0)
z = s32[] constant(-100)
ROOT r = s32[1,2] reduce-window(p, z), window={size=2x2 stride=2x2}, to_apply=mx })",
                      {lit("s32[2,4]", "{{1, 8, 3, 2}, {5, 4, 0, 7}}")}),
                 lit("s32[1,2]", "{{8, 7}}"));
  // Base dilation 2 (holes skipped) with window dilation: size=2 rhs_dilate=2 over 1 _ 2 _ 3.
  EXPECT_LITERAL(eval(m + R"(ENTRY e {
p = s32[3] parameter(0)
z = s32[] constant(0)
ROOT r = s32[3] reduce-window(p, z), window={size=2 lhs_dilate=2 rhs_dilate=2}, to_apply=add })",
                      {lit("s32[3]", "{1, 2, 3}")}),
                 lit("s32[3]", "{3, 0, 5}"));
}

TEST(EvalOps, SelectCompareClamp) {
  EXPECT_LITERAL(run(R"(a = s32[3] parameter(0)
b = s32[3] parameter(1)
p = pred[3] compare(a, b), direction=LT
ROOT s = s32[3] select(p, a, b))",
                     {lit("s32[3]", "{1, 5, -3}"), lit("s32[3]", "{2, 4, -3}")}),
                 lit("s32[3]", "{1, 4, -3}"));
  EXPECT_LITERAL(run(R"(lo = s32[] constant(0)
x = s32[4] parameter(0)
hi = s32[] constant(10)
ROOT c = s32[4] clamp(lo, x, hi))",
                     {lit("s32[4]", "{-5, 0, 7, 12}")}),
                 lit("s32[4]", "{0, 0, 7, 10}"));
  EXPECT_LITERAL(run(R"(p = pred[] constant(false)
a = f32[2] parameter(0)
b = f32[2] parameter(1)
ROOT s = f32[2] select(p, a, b))",
                     {lit("f32[2]", "{1, 2}"), lit("f32[2]", "{3, 4}")}),
                 lit("f32[2]", "{3, 4}"));
}

TEST(EvalOps, CompareDirections) {
  const char* body =
      "a = s32[3] parameter(0)\nb = s32[3] parameter(1)\nROOT c = pred[3] compare(a, b), "
      "direction=%s";
  Literal a = lit("s32[3]", "{1, 2, 3}"), b = lit("s32[3]", "{2, 2, 2}");
  std::pair<const char*, const char*> cases[] = {{"EQ", "{0, 1, 0}"}, {"NE", "{1, 0, 1}"},
                                                 {"LT", "{1, 0, 0}"}, {"LE", "{1, 1, 0}"},
                                                 {"GT", "{0, 0, 1}"}, {"GE", "{0, 1, 1}"}};
  for (auto [dir, expected] : cases) {
    char text[256];
    std::snprintf(text, sizeof(text), body, dir);
    EXPECT_LITERAL(run(text, {a, b}), lit("pred[3]", expected)) << dir;
  }
}

TEST(EvalOps, Map) {
  EXPECT_LITERAL(eval(R"(HloModule m
f {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  two = f32[] constant(2)
  t = f32[] multiply(x, two)
  ROOT r = f32[] add(t, y)
}
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  ROOT m = f32[3] map(a, b), dimensions={0}, to_apply=f
})",
                      {lit("f32[3]", "{1, 2, 3}"), lit("f32[3]", "{10, 20, 30}")}),
                 lit("f32[3]", "{12, 24, 36}"));
}

TEST(EvalOps, CallAndFusion) {
  EXPECT_LITERAL(eval(R"(HloModule m
sq {
  x = s32[2] parameter(0)
  ROOT y = s32[2] multiply(x, x)
}
fused {
  a = s32[2] parameter(0)
  b = s32[2] parameter(1)
  ROOT c = s32[2] subtract(a, b)
}
ENTRY e {
  p = s32[2] parameter(0)
  c = s32[2] call(p), to_apply=sq
  ROOT f = s32[2] fusion(c, p), kind=kLoop, calls=fused
})",
                      {lit("s32[2]", "{3, -4}")}),
                 lit("s32[2]", "{6, 20}"));
}

TEST(EvalOps, WhileSumsOneToTen) {
  EXPECT_LITERAL(eval(R"(HloModule m
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  a = s32[] add(acc, j)
  ROOT t = (s32[], s32[]) tuple(j, a)
}
ENTRY e {
  z = s32[] constant(0)
  init = (s32[], s32[]) tuple(z, z)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT r = s32[] get-tuple-element(w), index=1
})",
                      {}),
                 lit("s32[]", "55"));
}

TEST(EvalOps, Conditional) {
  std::string branches = R"(HloModule m
neg { x = s32[] parameter(0)
 ROOT y = s32[] negate(x) }
dbl { x = s32[] parameter(0)
 ROOT y = s32[] add(x, x) }
inc { x = s32[] parameter(0)
 one = s32[] constant(1)
 ROOT y = s32[] add(x, one) }
)";
  std::string by_pred = branches + R"(ENTRY e {
p = pred[] parameter(0)
x = s32[] parameter(1)
ROOT c = s32[] conditional(p, x, x), true_computation=neg, false_computation=dbl })";
  EXPECT_LITERAL(eval(by_pred, {lit("pred[]", "true"), lit("s32[]", "5")}), lit("s32[]", "-5"));
  EXPECT_LITERAL(eval(by_pred, {lit("pred[]", "false"), lit("s32[]", "5")}), lit("s32[]", "10"));
  std::string by_index = branches + R"(ENTRY e {
i = s32[] parameter(0)
x = s32[] parameter(1)
ROOT c = s32[] conditional(i, x, x, x), branch_computations={neg, dbl, inc} })";
  EXPECT_LITERAL(eval(by_index, {lit("s32[]", "1"), lit("s32[]", "5")}), lit("s32[]", "10"));
  // Out-of-range indices run the last branch (XLA).
  EXPECT_LITERAL(eval(by_index, {lit("s32[]", "7"), lit("s32[]", "5")}), lit("s32[]", "6"));
  EXPECT_LITERAL(eval(by_index, {lit("s32[]", "-1"), lit("s32[]", "5")}), lit("s32[]", "6"));
}

const char* kLessF32 = R"(less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
)";

TEST(EvalOps, SortSingleOperand) {
  EXPECT_LITERAL(eval(std::string("HloModule m\n") + kLessF32 + R"(ENTRY e {
p = f32[2,4] parameter(0)
ROOT s = f32[2,4] sort(p), dimensions={1}, to_apply=less })",
                      {lit("f32[2,4]", "{{3, -1, 2, 0}, {9, 8, 7, 6}}")}),
                 lit("f32[2,4]", "{{-1, 0, 2, 3}, {6, 7, 8, 9}}"));
  EXPECT_LITERAL(eval(std::string("HloModule m\n") + kLessF32 + R"(ENTRY e {
p = f32[3,2] parameter(0)
ROOT s = f32[3,2] sort(p), dimensions={0}, to_apply=less })",
                      {lit("f32[3,2]", "{{3, 1}, {1, 2}, {2, 0}}")}),
                 lit("f32[3,2]", "{{1, 0}, {2, 1}, {3, 2}}"));
}

TEST(EvalOps, SortKeysAndValuesStably) {
  // Compares keys only (a generic comparator: it also reads the values); equal keys keep order.
  Literal r = eval(R"(HloModule m
cmp {
  ka = s32[] parameter(0)
  kb = s32[] parameter(1)
  va = f32[] parameter(2)
  vb = f32[] parameter(3)
  ROOT c = pred[] compare(ka, kb), direction=GT
}
ENTRY e {
  k = s32[5] parameter(0)
  v = f32[5] parameter(1)
  ROOT s = (s32[5], f32[5]) sort(k, v), dimensions={0}, is_stable=true, to_apply=cmp
})",
                   {lit("s32[5]", "{1, 3, 1, 3, 2}"), lit("f32[5]", "{10, 20, 30, 40, 50}")});
  EXPECT_LITERAL(r.elements()[0], lit("s32[5]", "{3, 3, 2, 1, 1}"));
  EXPECT_LITERAL(r.elements()[1], lit("f32[5]", "{20, 40, 50, 10, 30}"));
}

TEST(EvalOps, OptBarrierAndCopyAreIdentities) {
  Literal r = run(R"(p = f32[2] parameter(0)
c = f32[2] copy(p)
t = (f32[2]) tuple(c)
o = (f32[2]) opt-barrier(t)
ROOT g = f32[2] get-tuple-element(o), index=0)",
                  {lit("f32[2]", "{1, 2}")});
  EXPECT_LITERAL(r, lit("f32[2]", "{1, 2}"));
}

TEST(EvalOps, UnaryFloat) {
  auto un = [](const char* op, const char* in, const char* out) {
    int n = static_cast<int>(std::count(in, in + std::strlen(in), ',')) + 1;
    std::string shape = "f32[" + std::to_string(n) + "]";
    std::string body = "p = " + shape + " parameter(0)\nROOT r = " + shape + " " + op + "(p)";
    EXPECT_LITERAL(run(body, {lit(shape, in)}), lit(shape, out)) << op;
  };
  un("abs", "{-2, 3, -0.0}", "{2, 3, 0}");
  un("negate", "{-2, 3, 0}", "{2, -3, -0.0}");
  un("sign", "{-2, 3, 0, -0.0, inf}", "{-1, 1, 0, -0.0, 1}");
  un("exponential", "{0, -inf}", "{1, 0}");
  un("exponential-minus-one", "{0}", "{0}");
  un("log", "{1, 0}", "{0, -inf}");
  un("log-plus-one", "{0}", "{0}");
  un("sqrt", "{4, 2.25, -0.0}", "{2, 1.5, -0.0}");
  un("rsqrt", "{4, 0.25}", "{0.5, 2}");
  un("cbrt", "{27, -8}", "{3, -2}");
  un("tanh", "{0, inf}", "{0, 1}");
  un("logistic", "{0, inf}", "{0.5, 1}");
  un("erf", "{0, inf}", "{0, 1}");
  un("sine", "{0}", "{0}");
  un("cosine", "{0}", "{1}");
  un("floor", "{-2.5, -0.5, 0.5, 1.5}", "{-3, -1, 0, 1}");
  un("ceil", "{-2.5, -0.5, 0.5, 1.5}", "{-2, -0.0, 1, 2}");
  un("round-nearest-afz", "{-2.5, -0.5, 0.5, 1.5, 2.5}", "{-3, -1, 1, 2, 3}");
  un("round-nearest-even", "{-2.5, -0.5, 0.5, 1.5, 2.5}", "{-2, -0.0, 0, 2, 2}");
}

TEST(EvalOps, UnaryPredicatesAndBits) {
  EXPECT_LITERAL(run("p = f32[4] parameter(0)\nROOT r = pred[4] is-finite(p)",
                     {lit("f32[4]", "{1, inf, -inf, nan}")}),
                 lit("pred[4]", "{1, 0, 0, 0}"));
  EXPECT_LITERAL(run("p = s8[3] parameter(0)\nROOT r = s8[3] not(p)", {lit("s8[3]", "{0, -1, 5}")}),
                 lit("s8[3]", "{-1, 0, -6}"));
  EXPECT_LITERAL(
      run("p = pred[2] parameter(0)\nROOT r = pred[2] not(p)", {lit("pred[2]", "{0, 1}")}),
      lit("pred[2]", "{1, 0}"));
  EXPECT_LITERAL(
      run("p = u16[3] parameter(0)\nROOT r = u16[3] popcnt(p)", {lit("u16[3]", "{0, 7, 65535}")}),
      lit("u16[3]", "{0, 3, 16}"));
  EXPECT_LITERAL(run("p = s32[3] parameter(0)\nROOT r = s32[3] count-leading-zeros(p)",
                     {lit("s32[3]", "{0, 1, -1}")}),
                 lit("s32[3]", "{32, 31, 0}"));
  EXPECT_LITERAL(
      run("p = s32[3] parameter(0)\nROOT r = s32[3] sign(p)", {lit("s32[3]", "{-7, 0, 9}")}),
      lit("s32[3]", "{-1, 0, 1}"));
}

TEST(EvalOps, BinaryArithmetic) {
  auto bin = [](const char* type, const char* op, const char* a, const char* b, const char* out) {
    int n = static_cast<int>(std::count(a, a + std::strlen(a), ',')) + 1;
    std::string shape = std::string(type) + "[" + std::to_string(n) + "]";
    std::string body = "a = " + shape + " parameter(0)\nb = " + shape +
                       " parameter(1)\nROOT r = " + shape + " " + op + "(a, b)";
    EXPECT_LITERAL(run(body, {lit(shape, a), lit(shape, b)}), lit(shape, out)) << type << " " << op;
  };
  bin("f32", "add", "{1, 0.5}", "{2, 0.25}", "{3, 0.75}");
  bin("f32", "subtract", "{1, 0.5}", "{2, 0.25}", "{-1, 0.25}");
  bin("f32", "multiply", "{3, -0.5}", "{2, 4}", "{6, -2}");
  bin("f32", "divide", "{1, 1, -1}", "{4, 0, 0}", "{0.25, inf, -inf}");
  bin("f32", "remainder", "{7, -7, 5.5}", "{3, 3, 2}", "{1, -1, 1.5}");
  bin("f32", "power", "{2, 9, 4}", "{10, 0.5, -1}", "{1024, 3, 0.25}");
  bin("f32", "atan2", "{0, 0}", "{1, -1}", "{0, 3.14159274}");
  bin("f32", "maximum", "{1, -2}", "{-1, 3}", "{1, 3}");
  bin("f32", "minimum", "{1, -2}", "{-1, 3}", "{-1, -2}");
  bin("s32", "add", "{1, -5}", "{2, 3}", "{3, -2}");
  bin("s32", "divide", "{7, -7, 7}", "{2, 2, -2}", "{3, -3, -3}");
  bin("s32", "remainder", "{7, -7, 7}", "{2, 2, -2}", "{1, -1, 1}");
  bin("s32", "power", "{2, -3, 5}", "{10, 3, 0}", "{1024, -27, 1}");
  bin("s32", "maximum", "{1, -2}", "{-1, 3}", "{1, 3}");
  bin("u8", "minimum", "{1, 200}", "{255, 3}", "{1, 3}");
  bin("s32", "and", "{12, -1}", "{10, 5}", "{8, 5}");
  bin("s32", "or", "{12, 0}", "{10, 5}", "{14, 5}");
  bin("s32", "xor", "{12, -1}", "{10, 0}", "{6, -1}");
  bin("s32", "shift-left", "{1, 3}", "{4, 1}", "{16, 6}");
  bin("s32", "shift-right-logical", "{-16, 16}", "{28, 2}", "{15, 4}");
  bin("s32", "shift-right-arithmetic", "{-16, 16}", "{2, 2}", "{-4, 4}");
  bin("pred", "and", "{0, 1, 1}", "{1, 0, 1}", "{0, 0, 1}");
  bin("pred", "or", "{0, 1, 0}", "{1, 0, 0}", "{1, 1, 0}");
  bin("pred", "xor", "{0, 1, 1}", "{1, 1, 0}", "{1, 0, 1}");
}

TEST(EvalOps, ConvertAndBitcastConvert) {
  EXPECT_LITERAL(run("p = f32[3] parameter(0)\nROOT r = s32[3] convert(p)",
                     {lit("f32[3]", "{1.9, -1.9, 0.5}")}),
                 lit("s32[3]", "{1, -1, 0}"));
  EXPECT_LITERAL(run("p = f32[2] parameter(0)\nROOT r = u32[2] bitcast-convert(p)",
                     {lit("f32[2]", "{1, -2}")}),
                 lit("u32[2]", "{1065353216, 3221225472}"));
  // Little-endian: 1.0f = 0x3f800000 is bytes 00 00 80 3f; the bytes become a trailing dimension.
  EXPECT_LITERAL(
      run("p = f32[1] parameter(0)\nROOT r = u8[1,4] bitcast-convert(p)", {lit("f32[1]", "{1}")}),
      lit("u8[1,4]", "{{0, 0, 128, 63}}"));
  EXPECT_LITERAL(run("p = u8[2,2] parameter(0)\nROOT r = u16[2] bitcast-convert(p)",
                     {lit("u8[2,2]", "{{1, 2}, {255, 0}}")}),
                 lit("u16[2]", "{513, 255}"));
}

}  // namespace
}  // namespace tacit::hlo

namespace tacit::hlo {
namespace {

TEST(EvalOps, ZeroSizedArrays) {
  Literal empty = lit("f32[0,3]", "{}");
  EXPECT_LITERAL(
      run("a = f32[0,3] parameter(0)\nROOT t = f32[3,0] transpose(a), dimensions={1,0}", {empty}),
      lit("f32[3,0]", "{{}, {}, {}}"));
  // A dot contracting an empty dimension gives zeros.
  EXPECT_LITERAL(run(R"(a = f32[2,0] parameter(0)
b = f32[0,2] parameter(1)
ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0})",
                     {lit("f32[2,0]", "{{}, {}}"), lit("f32[0,2]", "{}")}),
                 lit("f32[2,2]", "{{0, 0}, {0, 0}}"));
  // Reducing an empty dimension gives the init value.
  EXPECT_LITERAL(eval(R"(HloModule m
add { a = f32[] parameter(0)
 b = f32[] parameter(1)
 ROOT s = f32[] add(a, b) }
ENTRY e {
  p = f32[0,3] parameter(0)
  z = f32[] constant(7)
  ROOT r = f32[3] reduce(p, z), dimensions={0}, to_apply=add
})",
                      {empty}),
                 lit("f32[3]", "{7, 7, 7}"));
  EXPECT_LITERAL(run(R"(a = f32[0,3] parameter(0)
b = f32[2,3] parameter(1)
ROOT c = f32[2,3] concatenate(a, b), dimensions={0})",
                     {empty, lit("f32[2,3]", "{{1, 2, 3}, {4, 5, 6}}")}),
                 lit("f32[2,3]", "{{1, 2, 3}, {4, 5, 6}}"));
  EXPECT_LITERAL(run("a = f32[0,3] parameter(0)\nz = f32[] constant(1)\nROOT p = f32[2,3] pad(a, "
                     "z), padding=1_1x0_0",
                     {empty}),
                 lit("f32[2,3]", "{{1, 1, 1}, {1, 1, 1}}"));
  EXPECT_LITERAL(run("a = f32[0,3] parameter(0)\nROOT n = f32[0,3] exponential(a)", {empty}),
                 empty);
  // Every other operation on empty operands or results.
  std::string ops = R"(HloModule m
add { a = f32[] parameter(0)
 b = f32[] parameter(1)
 ROOT s = f32[] add(a, b) }
less { a = f32[] parameter(0)
 b = f32[] parameter(1)
 ROOT c = pred[] compare(a, b), direction=LT }
ENTRY e {
  a = f32[0,3] parameter(0)
  z = f32[] constant(0)
  rw = f32[0,2] reduce-window(a, z), window={size=1x2}, to_apply=add
  so = f32[0,3] sort(a), dimensions={1}, to_apply=less
  i = s32[] constant(1)
  ds = f32[0,2] dynamic-slice(a, i, i), dynamic_slice_sizes={0,2}
  u = f32[0,1] slice(a), slice={[0:0], [1:2]}
  dus = f32[0,3] dynamic-update-slice(a, u, i, i)
  sl = f32[0,1] slice(a), slice={[0:0], [0:1]}
  b = f32[4,0] broadcast(z), dimensions={}
  io = s32[0] iota(), iota_dimension=0
  rv = f32[0,3] reverse(a), dimensions={0,1}
  p = pred[0,3] compare(a, a), direction=LT
  se = f32[0,3] select(p, a, a)
  cl = f32[0,3] clamp(z, a, z)
  mp = f32[0,3] map(a, a), dimensions={0,1}, to_apply=add
  bc = f32[3,0]{0,1} bitcast(a)
  cv = s32[0,3] convert(a)
  rs = f32[3,0] reshape(a)
  c1 = f32[1,1,2] constant({{{1, 2}}})
  k1 = f32[1,1,3] constant({{{1, 1, 1}}})
  cz = f32[1,1,0] convolution(c1, k1), window={size=3}, dim_labels=bf0_oi0->bf0
  ROOT t = (f32[0,2], f32[0,3], f32[0,2], f32[0,3], f32[0,1], f32[4,0], s32[0], f32[0,3], f32[0,3], f32[0,3], f32[0,3], f32[3,0], s32[0,3], f32[3,0], f32[1,1,0]) tuple(rw, so, ds, dus, sl, b, io, rv, se, cl, mp, bc, cv, rs, cz)
})";
  Literal t = eval(ops, {empty});
  ASSERT_EQ(t.elements().size(), 15u);
  for (const Literal& e : t.elements())
    EXPECT_EQ(e.elementCount(), 0) << e.shape().shortStr();
  // A convolution over an empty input feature dimension is all zeros.
  EXPECT_LITERAL(run(R"(x = f32[1,0,3] parameter(0)
k = f32[2,0,1] parameter(1)
ROOT c = f32[1,2,3] convolution(x, k), window={size=1}, dim_labels=bf0_oi0->bf0)",
                     {lit("f32[1,0,3]", "{{}}"), lit("f32[2,0,1]", "{{}, {}}")}),
                 lit("f32[1,2,3]", "{{{0, 0, 0}, {0, 0, 0}}}"));
}

}  // namespace
}  // namespace tacit::hlo
