// Shape inference per opcode: valid cases give the expected shape, invalid ones a precise message.
#include "hlo/shape_inference.h"

#include <gtest/gtest.h>

#include "hlo/builder.h"
#include "hlo/parser.h"

namespace tacit::hlo {
namespace {

Shape S(const std::string& s) {
  return parseShape(s);
}

struct Infer {
  HloOpcode op;
  std::vector<Shape> operands;
  HloAttributes attrs = {};
  std::optional<Shape> declared = std::nullopt;

  ShapeResult run() const {
    std::vector<const Shape*> ptrs;
    for (const Shape& s : operands)
      ptrs.push_back(&s);
    return inferShape(op, ptrs, attrs, declared ? &*declared : nullptr);
  }
  std::string shape() const {
    ShapeResult r = run();
    return r.ok() ? r.shape->str() : "error: " + r.error;
  }
  std::string error() const {
    ShapeResult r = run();
    return r.ok() ? "ok: " + r.shape->str() : r.error;
  }
};

HloAttributes dims(std::vector<int64_t> d) {
  HloAttributes a;
  a.dimensions = std::move(d);
  return a;
}

TEST(ShapeInference, ElementwiseUnary) {
  for (HloOpcode op : {HloOpcode::kAbs,
                       HloOpcode::kNegate,
                       HloOpcode::kSign,
                       HloOpcode::kExponential,
                       HloOpcode::kExponentialMinusOne,
                       HloOpcode::kLog,
                       HloOpcode::kLogPlusOne,
                       HloOpcode::kTanh,
                       HloOpcode::kLogistic,
                       HloOpcode::kSqrt,
                       HloOpcode::kRsqrt,
                       HloOpcode::kCbrt,
                       HloOpcode::kErf,
                       HloOpcode::kFloor,
                       HloOpcode::kCeil,
                       HloOpcode::kRoundNearestAfz,
                       HloOpcode::kRoundNearestEven,
                       HloOpcode::kSine,
                       HloOpcode::kCosine,
                       HloOpcode::kCopy}) {
    EXPECT_EQ((Infer{op, {S("f32[2,3]{0,1}")}}).shape(), "f32[2,3]") << opcodeName(op);
  }
  EXPECT_EQ((Infer{HloOpcode::kIsFinite, {S("bf16[4]")}}).shape(), "pred[4]");
  EXPECT_EQ((Infer{HloOpcode::kNot, {S("pred[4]")}}).shape(), "pred[4]");
  EXPECT_EQ((Infer{HloOpcode::kPopcnt, {S("u8[4]")}}).shape(), "u8[4]");
  EXPECT_EQ((Infer{HloOpcode::kCountLeadingZeros, {S("s32[]")}}).shape(), "s32[]");
  EXPECT_EQ((Infer{HloOpcode::kAbs, {S("c64[2]")}}).shape(), "f32[2]");
  EXPECT_EQ((Infer{HloOpcode::kExponential, {S("s32[2]")}}).error(),
            "exponential expects floating-point or complex operands, got s32");
  EXPECT_EQ((Infer{HloOpcode::kNot, {S("f32[2]")}}).error(),
            "not expects pred or integer operands, got f32");
  EXPECT_EQ((Infer{HloOpcode::kPopcnt, {S("f32[2]")}}).error(),
            "popcnt expects integer operands, got f32");
  EXPECT_EQ((Infer{HloOpcode::kIsFinite, {S("s32[2]")}}).error(),
            "is-finite expects floating-point operands, got s32");
  EXPECT_EQ((Infer{HloOpcode::kNegate, {S("f32[2]"), S("f32[2]")}}).error(),
            "negate expects 1 operand, got 2");
  EXPECT_EQ((Infer{HloOpcode::kNegate, {S("(f32[2])")}}).error(),
            "negate: the operand must be an array, got (f32[2])");
}

TEST(ShapeInference, ElementwiseBinary) {
  for (HloOpcode op : {HloOpcode::kAdd, HloOpcode::kSubtract, HloOpcode::kMultiply,
                       HloOpcode::kDivide, HloOpcode::kRemainder, HloOpcode::kPower,
                       HloOpcode::kMaximum, HloOpcode::kMinimum, HloOpcode::kAtan2}) {
    EXPECT_EQ((Infer{op, {S("f32[2]"), S("f32[2]")}}).shape(), "f32[2]") << opcodeName(op);
  }
  for (HloOpcode op : {HloOpcode::kAnd, HloOpcode::kOr, HloOpcode::kXor, HloOpcode::kShiftLeft,
                       HloOpcode::kShiftRightLogical, HloOpcode::kShiftRightArithmetic}) {
    EXPECT_EQ((Infer{op, {S("s8[3]"), S("s8[3]")}}).shape(), "s8[3]") << opcodeName(op);
  }
  EXPECT_EQ((Infer{HloOpcode::kAnd, {S("pred[3]"), S("pred[3]")}}).shape(), "pred[3]");
  EXPECT_EQ((Infer{HloOpcode::kAdd, {S("f32[2]"), S("f32[3]")}}).error(),
            "add: lhs f32[2] and rhs f32[3] have different dimensions");
  EXPECT_EQ((Infer{HloOpcode::kAdd, {S("f32[2]"), S("bf16[2]")}}).error(),
            "add: operands have different element types f32 and bf16");
  EXPECT_EQ((Infer{HloOpcode::kShiftLeft, {S("f32[2]"), S("f32[2]")}}).error(),
            "shift-left expects integer operands, got f32");
  EXPECT_EQ((Infer{HloOpcode::kAdd, {S("f32[2]"), S("f32[2]")}, {}, S("f32[3]")}).error(),
            "declared shape f32[3] does not match the inferred shape f32[2]");
}

TEST(ShapeInference, CompareSelectClamp) {
  HloAttributes gt;
  gt.direction = ComparisonDirection::kGt;
  EXPECT_EQ((Infer{HloOpcode::kCompare, {S("s32[4]"), S("s32[4]")}, gt}).shape(), "pred[4]");
  HloAttributes unsigned_type = gt;
  unsigned_type.comparison_type = ComparisonType::kUnsigned;
  EXPECT_EQ((Infer{HloOpcode::kCompare, {S("s32[4]"), S("s32[4]")}, unsigned_type}).error(),
            "compare: comparison type UNSIGNED does not apply to s32 operands");
  EXPECT_EQ((Infer{HloOpcode::kCompare, {S("s32[4]"), S("s32[4]")}}).error(),
            "compare requires a direction");
  EXPECT_EQ((Infer{HloOpcode::kSelect, {S("pred[4]"), S("f32[4]"), S("f32[4]")}}).shape(),
            "f32[4]");
  EXPECT_EQ((Infer{HloOpcode::kSelect, {S("pred[]"), S("f32[4]"), S("f32[4]")}}).shape(), "f32[4]");
  EXPECT_EQ((Infer{HloOpcode::kSelect, {S("pred[3]"), S("f32[4]"), S("f32[4]")}}).error(),
            "select: predicate pred[3] must be a scalar or have the dimensions of f32[4]");
  EXPECT_EQ((Infer{HloOpcode::kSelect, {S("s32[4]"), S("f32[4]"), S("f32[4]")}}).error(),
            "select: the predicate must be a pred array, got s32[4]");
  EXPECT_EQ((Infer{HloOpcode::kClamp, {S("f32[]"), S("f32[4]"), S("f32[4]")}}).shape(), "f32[4]");
  EXPECT_EQ((Infer{HloOpcode::kClamp, {S("f32[2]"), S("f32[4]"), S("f32[]")}}).error(),
            "clamp: bound f32[2] must be a scalar or have the dimensions of the operand f32[4]");
}

TEST(ShapeInference, ConversionsNeedTheDeclaredShape) {
  EXPECT_EQ((Infer{HloOpcode::kConvert, {S("f32[2]")}, {}, S("s8[2]")}).shape(), "s8[2]");
  EXPECT_EQ((Infer{HloOpcode::kConvert, {S("f32[2]")}}).error(),
            "convert needs its result shape written (it cannot be inferred)");
  EXPECT_EQ((Infer{HloOpcode::kConvert, {S("f32[2]")}, {}, S("s8[3]")}).error(),
            "convert: result s8[3] must have the dimensions of the operand f32[2]");
  EXPECT_EQ((Infer{HloOpcode::kBitcastConvert, {S("f32[2]")}, {}, S("u8[2,4]")}).shape(),
            "u8[2,4]");
  EXPECT_EQ((Infer{HloOpcode::kBitcastConvert, {S("u8[2,4]")}, {}, S("f32[2]")}).shape(), "f32[2]");
  EXPECT_EQ((Infer{HloOpcode::kBitcastConvert, {S("f32[2]")}, {}, S("s32[2]")}).shape(), "s32[2]");
  EXPECT_EQ(
      (Infer{HloOpcode::kBitcastConvert, {S("u8[2,3]")}, {}, S("f32[2]")}).error(),
      "bitcast-convert: converting u8[2,3] to the wider f32 needs a last dimension of size 4");
  EXPECT_EQ((Infer{HloOpcode::kBitcast, {S("f32[2,3]")}, {}, S("s32[6]")}).shape(), "s32[6]");
  EXPECT_EQ((Infer{HloOpcode::kBitcast, {S("f32[2,3]")}, {}, S("f32[5]")}).error(),
            "bitcast: operand f32[2,3] has 24 bytes but result f32[5] has 20");
  HloAttributes rp;
  rp.exponent_bits = 5;
  rp.mantissa_bits = 10;
  EXPECT_EQ((Infer{HloOpcode::kReducePrecision, {S("f32[2]")}, rp}).shape(), "f32[2]");
}

TEST(ShapeInference, ReshapeBroadcastTransposeReverse) {
  EXPECT_EQ((Infer{HloOpcode::kReshape, {S("f32[2,3]")}, {}, S("f32[6]")}).shape(), "f32[6]");
  EXPECT_EQ((Infer{HloOpcode::kReshape, {S("f32[2,3]")}, {}, S("f32[5]")}).error(),
            "reshape: operand f32[2,3] has 6 elements but result f32[5] has 5");
  EXPECT_EQ((Infer{HloOpcode::kBroadcast, {S("f32[3]")}, dims({1}), S("f32[2,3]")}).shape(),
            "f32[2,3]");
  EXPECT_EQ((Infer{HloOpcode::kBroadcast, {S("f32[]")}, {}, S("f32[2,3]")}).shape(), "f32[2,3]");
  EXPECT_EQ((Infer{HloOpcode::kBroadcast, {S("f32[3]")}, {}, S("f32[2,3]")}).error(),
            "broadcast of the non-scalar f32[3] needs dimensions={...}");
  EXPECT_EQ((Infer{HloOpcode::kBroadcast, {S("f32[3]")}, dims({0}), S("f32[2,3]")}).error(),
            "broadcast: operand dimension 0 has size 3 but result dimension 0 has size 2");
  EXPECT_EQ((Infer{HloOpcode::kBroadcast, {S("f32[2,3]")}, dims({1, 0}), S("f32[3,2]")}).error(),
            "broadcast: dimensions {1,0} must be increasing");
  EXPECT_EQ((Infer{HloOpcode::kTranspose, {S("f32[2,3,4]")}, dims({2, 0, 1})}).shape(),
            "f32[4,2,3]");
  EXPECT_EQ((Infer{HloOpcode::kTranspose, {S("f32[2,3]")}, dims({0, 0})}).error(),
            "transpose: dimension 0 appears more than once");
  EXPECT_EQ((Infer{HloOpcode::kTranspose, {S("f32[2,3]")}, dims({0})}).error(),
            "transpose: dimensions {0} is not a permutation of the 2 dimensions of f32[2,3]");
  EXPECT_EQ((Infer{HloOpcode::kReverse, {S("f32[2,3]")}, dims({1})}).shape(), "f32[2,3]");
  EXPECT_EQ((Infer{HloOpcode::kReverse, {S("f32[2,3]")}, dims({2})}).error(),
            "reverse: dimension 2 is out of range for rank 2");
}

TEST(ShapeInference, SlicesConcatenatePad) {
  HloAttributes sl;
  sl.slice = std::vector<SliceDim>{{0, 8, 3}, {1, 2, 1}};
  EXPECT_EQ((Infer{HloOpcode::kSlice, {S("f32[8,4]")}, sl}).shape(), "f32[3,1]");
  sl.slice->at(1).limit = 5;
  EXPECT_EQ((Infer{HloOpcode::kSlice, {S("f32[8,4]")}, sl}).error(),
            "slice: range [1:5] of dimension 1 is outside [0:4]");
  HloAttributes ds;
  ds.dynamic_slice_sizes = std::vector<int64_t>{2, 2};
  EXPECT_EQ((Infer{HloOpcode::kDynamicSlice, {S("f32[8,4]"), S("s32[]"), S("s32[]")}, ds}).shape(),
            "f32[2,2]");
  EXPECT_EQ((Infer{HloOpcode::kDynamicSlice, {S("f32[8,4]"), S("s32[2]")}, ds}).shape(),
            "f32[2,2]");
  EXPECT_EQ((Infer{HloOpcode::kDynamicSlice, {S("f32[8,4]"), S("s32[]")}, ds}).error(),
            "dynamic-slice needs one start index per operand dimension (2), got 1");
  EXPECT_EQ((Infer{HloOpcode::kDynamicSlice, {S("f32[8,4]"), S("f32[]"), S("f32[]")}, ds}).error(),
            "dynamic-slice: start indices must be integer scalars, got f32[]");
  ds.dynamic_slice_sizes = std::vector<int64_t>{9, 2};
  EXPECT_EQ((Infer{HloOpcode::kDynamicSlice, {S("f32[8,4]"), S("s32[]"), S("s32[]")}, ds}).error(),
            "dynamic-slice: slice size 9 of dimension 0 is outside [0, 8]");
  EXPECT_EQ((Infer{HloOpcode::kDynamicUpdateSlice,
                   {S("f32[8,4]"), S("f32[2,4]"), S("s32[]"), S("s32[]")}})
                .shape(),
            "f32[8,4]");
  EXPECT_EQ((Infer{HloOpcode::kDynamicUpdateSlice,
                   {S("f32[8,4]"), S("f32[2,5]"), S("s32[]"), S("s32[]")}})
                .error(),
            "dynamic-update-slice: update dimension 1 has size 5, larger than the operand's 4");
  EXPECT_EQ(
      (Infer{HloOpcode::kConcatenate, {S("f32[2,3]"), S("f32[2,5]"), S("f32[2,1]")}, dims({1})})
          .shape(),
      "f32[2,9]");
  EXPECT_EQ((Infer{HloOpcode::kConcatenate, {S("f32[2,3]"), S("f32[3,5]")}, dims({1})}).error(),
            "concatenate: operand 1 f32[3,5] differs from f32[2,3] in dimension 0");
  EXPECT_EQ((Infer{HloOpcode::kConcatenate, {S("f32[2,3]"), S("f32[2,3]")}, dims({0, 1})}).error(),
            "concatenate requires exactly one dimension in dimensions={d}");
  HloAttributes pd;
  pd.padding = std::vector<PadDim>{{1, 2, 1}, {-1, 0, 0}};
  EXPECT_EQ((Infer{HloOpcode::kPad, {S("f32[3,4]"), S("f32[]")}, pd}).shape(), "f32[8,3]");
  EXPECT_EQ((Infer{HloOpcode::kPad, {S("f32[3,4]"), S("s32[]")}, pd}).error(),
            "pad: the padding value must be a f32 scalar, got s32[]");
  pd.padding->at(1).lo = -9;
  EXPECT_EQ((Infer{HloOpcode::kPad, {S("f32[3,4]"), S("f32[]")}, pd}).error(),
            "pad: dimension 1 would have negative size -5");
  HloAttributes io;
  io.iota_dimension = 1;
  EXPECT_EQ((Infer{HloOpcode::kIota, {}, io, S("s32[2,3]")}).shape(), "s32[2,3]");
  io.iota_dimension = 2;
  EXPECT_EQ((Infer{HloOpcode::kIota, {}, io, S("s32[2,3]")}).error(),
            "iota: iota_dimension 2 is out of range for s32[2,3]");
}

TEST(ShapeInference, Dot) {
  HloAttributes a;
  a.dot_dims = DotDims{{0}, {2}, {0}, {1}};
  EXPECT_EQ((Infer{HloOpcode::kDot, {S("f32[5,2,64]"), S("f32[5,64,3]")}, a}).shape(),
            "f32[5,2,3]");
  EXPECT_EQ(
      (Infer{HloOpcode::kDot, {S("s8[5,2,64]"), S("s8[5,64,3]")}, a, S("s32[5,2,3]")}).shape(),
      "s32[5,2,3]");
  EXPECT_EQ((Infer{HloOpcode::kDot, {S("s8[5,2,64]"), S("bf16[5,64,3]")}, a}).error(),
            "dot: operand element types s8 and bf16 differ; write the result shape to give the "
            "result type");
  HloAttributes b;
  b.dot_dims = DotDims{{}, {1}, {}, {0}};
  EXPECT_EQ(
      (Infer{HloOpcode::kDot, {S("f32[8,64]"), S("f32[32,4]")}, b}).error(),
      "dot: lhs contracting dimension 1 has size 64 but rhs contracting dimension 0 has size 32");
  HloAttributes outer;
  outer.dot_dims = DotDims{};
  EXPECT_EQ((Infer{HloOpcode::kDot, {S("f32[2]"), S("f32[3]")}, outer}).shape(), "f32[2,3]");
  HloAttributes bad;
  bad.dot_dims = DotDims{{0}, {}, {}, {}};
  EXPECT_EQ((Infer{HloOpcode::kDot, {S("f32[2]"), S("f32[2]")}, bad}).error(),
            "dot: lhs_batch_dims {0} and rhs_batch_dims {} have different lengths");
  bad.dot_dims = DotDims{{}, {2}, {}, {0}};
  EXPECT_EQ((Infer{HloOpcode::kDot, {S("f32[2,2]"), S("f32[2]")}, bad}).error(),
            "dot: lhs batch/contracting dimension 2 is out of range for rank 2");
}

TEST(ShapeInference, Convolution) {
  auto m = parseModule(R"(HloModule m
ENTRY e {
  x = f32[1,8,8,3] parameter(0)
  k = f32[3,3,3,16] parameter(1)
  ROOT c = f32[1,4,4,16] convolution(x, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})",
                       "t.hlo");
  const HloInstruction& c = *m->entry()->root();
  EXPECT_EQ(
      (Infer{HloOpcode::kConvolution, {S("f32[1,8,8,3]"), S("f32[3,3,3,16]")}, c.attrs()}).shape(),
      "f32[1,4,4,16]");
  HloAttributes grouped = c.attrs();
  grouped.feature_group_count = 3;
  EXPECT_EQ(
      (Infer{HloOpcode::kConvolution, {S("f32[1,8,8,3]"), S("f32[3,3,1,15]")}, grouped}).shape(),
      "f32[1,4,4,15]");
  EXPECT_EQ(
      (Infer{HloOpcode::kConvolution, {S("f32[1,8,8,3]"), S("f32[3,3,4,16]")}, c.attrs()}).error(),
      "convolution: input feature size 3 / feature_group_count 1 does not match the kernel input "
      "feature size 4");
  EXPECT_EQ(
      (Infer{HloOpcode::kConvolution, {S("f32[1,8,8,3]"), S("f32[2,3,3,16]")}, c.attrs()}).error(),
      "convolution: window size 3 of spatial dimension 0 does not match the kernel's 2");
  HloAttributes no_window = c.attrs();
  no_window.window.reset();
  EXPECT_EQ(
      (Infer{HloOpcode::kConvolution, {S("f32[1,8,8,3]"), S("f32[3,3,3,16]")}, no_window}).error(),
      "convolution: window has 0 dimensions but there are 2 spatial dimensions");
}

TEST(ShapeInference, ReduceReduceWindowMapSortCallWhileConditional) {
  HloModule m("m");
  HloComputation* add = addScalarReducer(m, HloOpcode::kAdd, PrimitiveType::kF32);
  HloAttributes r = dims({1});
  r.called.push_back({"to_apply", {add}, false});
  EXPECT_EQ((Infer{HloOpcode::kReduce, {S("f32[4,8]"), S("f32[]")}, r}).shape(), "f32[4]");
  EXPECT_EQ((Infer{HloOpcode::kReduce, {S("s32[4,8]"), S("s32[]")}, r}).error(),
            "reduce: to_apply computation 'add_f32' parameter 0 is f32[] but must be s32[]");
  EXPECT_EQ((Infer{HloOpcode::kReduce, {S("f32[4,8]"), S("f32[4,8]"), S("f32[]"), S("f32[]")}, r})
                .error(),
            "reduce: to_apply computation 'add_f32' takes 2 parameters but needs 4");
  EXPECT_EQ((Infer{HloOpcode::kReduce, {S("f32[4,8]")}, r}).error(),
            "reduce expects inputs followed by as many init values, got 1 operand");
  HloAttributes rw;
  rw.window = std::vector<WindowDim>{{2, 2, 0, 0, 1, 1, false}, {3, 1, 1, 1, 1, 1, false}};
  rw.called.push_back({"to_apply", {add}, false});
  EXPECT_EQ((Infer{HloOpcode::kReduceWindow, {S("f32[4,8]"), S("f32[]")}, rw}).shape(), "f32[2,8]");
  HloAttributes mp;
  mp.called.push_back({"to_apply", {add}, false});
  EXPECT_EQ((Infer{HloOpcode::kMap, {S("f32[3]"), S("f32[3]")}, mp}).shape(), "f32[3]");
  EXPECT_EQ((Infer{HloOpcode::kMap, {S("f32[3]")}, mp}).error(),
            "map: to_apply computation 'add_f32' takes 2 parameters but is given 1 operand");
  EXPECT_EQ((Infer{HloOpcode::kCall, {S("f32[]"), S("f32[]")}, mp}).shape(), "f32[]");
  EXPECT_EQ((Infer{HloOpcode::kCall, {S("f32[]"), S("s32[]")}, mp}).error(),
            "call: to_apply computation 'add_f32' parameter 1 is f32[] but the operand is s32[]");
  HloAttributes fu;
  fu.called.push_back({"calls", {add}, false});
  EXPECT_EQ((Infer{HloOpcode::kFusion, {S("f32[]"), S("f32[]")}, fu, S("f32[]")}).shape(), "f32[]");

  HloBuilder lt("lt");
  lt.compare(lt.parameter(0, S("f32[]")), lt.parameter(1, S("f32[]")), ComparisonDirection::kLt);
  HloComputation* less = lt.addTo(m);
  HloAttributes so = dims({0});
  so.called.push_back({"to_apply", {less}, false});
  EXPECT_EQ((Infer{HloOpcode::kSort, {S("f32[5]")}, so}).shape(), "f32[5]");
  EXPECT_EQ((Infer{HloOpcode::kSort, {S("f32[5]"), S("f32[5]")}, so}).error(),
            "sort: to_apply computation 'lt' takes 2 parameters but is given 4 operands");
  HloAttributes bad_sort = dims({0});
  bad_sort.called.push_back({"to_apply", {add}, false});
  EXPECT_EQ((Infer{HloOpcode::kSort, {S("f32[5]")}, bad_sort}).error(),
            "sort: comparator 'add_f32' must return pred[], got f32[]");

  HloBuilder cb("cond");
  cb.compare(cb.parameter(0, S("f32[]")), cb.constant(scalarLiteral(PrimitiveType::kF32, 1)),
             ComparisonDirection::kLt);
  HloComputation* cond = cb.addTo(m);
  HloBuilder bb("body");
  bb.unary(HloOpcode::kNegate, bb.parameter(0, S("f32[]")));
  HloComputation* body = bb.addTo(m);
  HloAttributes wh;
  wh.called = {{"condition", {cond}, false}, {"body", {body}, false}};
  EXPECT_EQ((Infer{HloOpcode::kWhile, {S("f32[]")}, wh}).shape(), "f32[]");
  EXPECT_EQ((Infer{HloOpcode::kWhile, {S("s32[]")}, wh}).error(),
            "while: condition computation 'cond' parameter 0 is f32[] but the operand is s32[]");
  HloAttributes co;
  co.called = {{"true_computation", {body}, false}, {"false_computation", {body}, false}};
  EXPECT_EQ((Infer{HloOpcode::kConditional, {S("pred[]"), S("f32[]"), S("f32[]")}, co}).shape(),
            "f32[]");
  EXPECT_EQ((Infer{HloOpcode::kConditional, {S("s32[]"), S("f32[]"), S("f32[]")}, co}).error(),
            "conditional: with true/false_computation the predicate must be pred[], got s32[]");
  HloAttributes br;
  br.called = {{"branch_computations", {body, body, body}, true}};
  EXPECT_EQ((Infer{HloOpcode::kConditional, {S("s32[]"), S("f32[]"), S("f32[]")}, br}).error(),
            "conditional: 3 branches need 3 branch operands, got 2");
}

TEST(ShapeInference, TuplesAndOthers) {
  EXPECT_EQ((Infer{HloOpcode::kTuple, {S("f32[]"), S("(s32[2])")}}).shape(), "(f32[], (s32[2]))");
  HloAttributes i;
  i.index = 1;
  EXPECT_EQ((Infer{HloOpcode::kGetTupleElement, {S("(f32[], s32[2])")}, i}).shape(), "s32[2]");
  i.index = 2;
  EXPECT_EQ((Infer{HloOpcode::kGetTupleElement, {S("(f32[], s32[2])")}, i}).error(),
            "get-tuple-element: index 2 is out of range for (f32[], s32[2])");
  EXPECT_EQ((Infer{HloOpcode::kPartitionId, {}}).shape(), "u32[]");
  EXPECT_EQ((Infer{HloOpcode::kAfterAll, {S("token[]")}}).shape(), "token[]");
  ShapeResult unchecked =
      Infer{HloOpcode::kGather, {S("f32[4]"), S("s32[2]")}, {}, S("f32[2]")}.run();
  EXPECT_TRUE(unchecked.ok());
  EXPECT_FALSE(unchecked.checked);
  EXPECT_TRUE(resultShapeOptional(HloOpcode::kAdd));
  EXPECT_FALSE(resultShapeOptional(HloOpcode::kConvert));
  EXPECT_FALSE(resultShapeOptional(HloOpcode::kGather));
}

}  // namespace
}  // namespace tacit::hlo
