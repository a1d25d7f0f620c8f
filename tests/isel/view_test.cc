// Strided views against the evaluator: for random chains of data-movement ops, the bytes the
// evaluator produces must be exactly the base's bytes gathered by the computed view.
#include "isel/view.h"

#include <gtest/gtest.h>

#include <random>

#include "hlo/builder.h"
#include "hlo_eval/evaluator.h"
#include "hlo_eval/random_literal.h"

namespace tacit::isel {
namespace {

using hlo::HloInstruction;
using hlo::PrimitiveType;
using hlo::Shape;

std::vector<uint8_t> gather(const hlo::Literal& base, const StridedView& v) {
  std::vector<uint8_t> out;
  std::vector<int64_t> idx(v.dims.size(), 0);
  int64_t total = v.byteCount();
  for (int64_t n = 0; n < total; ++n) {
    int64_t off = v.offset;
    for (size_t k = 0; k < v.dims.size(); ++k)
      off += idx[k] * v.dims[k].stride;
    out.push_back(base.bytes()[off]);
    for (size_t k = v.dims.size(); k-- > 0;) {
      if (++idx[k] < v.dims[k].extent) break;
      idx[k] = 0;
    }
  }
  return out;
}

// Evaluates the chain ending at `root` on a random `base_shape` input and checks that its bytes
// are the view's bytes of that input.
void expectViewMatchesEvaluator(hlo::HloBuilder& b, HloInstruction* root,
                                const hlo::Shape& base_shape, const StridedView& view, int trial) {
  auto comp = b.build(root);
  hlo::Literal arg = hlo::randomLiteral(base_shape, static_cast<uint64_t>(trial));
  hlo::Literal out = hlo::evaluate(*comp, std::span<const hlo::Literal>(&arg, 1));
  std::vector<uint8_t> expected = gather(arg, view);
  ASSERT_EQ(out.byteCount(), expected.size()) << view.str();
  ASSERT_TRUE(std::equal(expected.begin(), expected.end(), out.bytes()))
      << "trial " << trial << " " << view.str();
}

std::vector<int64_t> factor(int64_t n, std::mt19937& rng) {
  std::vector<int64_t> dims;
  while (n > 1) {
    std::vector<int64_t> divisors;
    for (int64_t d = 2; d <= n; ++d) {
      if (n % d == 0) divisors.push_back(d);
    }
    int64_t d = divisors[rng() % divisors.size()];
    dims.push_back(d);
    n /= d;
  }
  if (dims.empty()) dims.push_back(1);
  return dims;
}

// Applies a random movement op to x; returns nullptr when it picked nothing applicable.
HloInstruction* randomMove(hlo::HloBuilder& b, HloInstruction* x, std::mt19937& rng) {
  const Shape& s = x->shape();
  switch (rng() % 6) {
    case 0:
      return b.reshape(x, factor(s.elementCount(), rng));
    case 1: {
      std::vector<int64_t> perm(static_cast<size_t>(s.rank()));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      return b.transpose(x, perm);
    }
    case 2: {
      std::vector<int64_t> starts, limits, strides;
      for (int64_t d : s.dims()) {
        int64_t a = static_cast<int64_t>(rng() % static_cast<uint64_t>(d));
        int64_t e = a + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(d - a));
        starts.push_back(a);
        limits.push_back(e);
        strides.push_back(1 + static_cast<int64_t>(rng() % 2));
      }
      return b.slice(x, starts, limits, strides);
    }
    case 3: {
      std::vector<int64_t> dims;
      for (int64_t i = 0; i < s.rank(); ++i) {
        if (rng() % 2) dims.push_back(i);
      }
      return b.reverse(x, dims);
    }
    case 4: {
      // Insert one new dimension of size 1..3 at a random position.
      int64_t pos = static_cast<int64_t>(rng() % static_cast<uint64_t>(s.rank() + 1));
      std::vector<int64_t> result, mapping;
      for (int64_t i = 0; i <= s.rank(); ++i) {
        if (i == pos) result.push_back(1 + static_cast<int64_t>(rng() % 3));
        if (i < s.rank()) {
          mapping.push_back(static_cast<int64_t>(result.size()));
          result.push_back(s.dim(i));
        }
      }
      return b.broadcast(x, result, mapping);
    }
    default:
      if (s.elementType() == PrimitiveType::kS32) return b.bitcastConvert(x, PrimitiveType::kU8);
      if (s.elementType() == PrimitiveType::kU8 && s.rank() > 0 && s.dims().back() == 4) {
        return b.bitcastConvert(x, PrimitiveType::kS32);
      }
      return b.copy(x);
  }
}

TEST(StridedView, RandomMovementChainsMatchTheEvaluator) {
  std::mt19937 rng(1234);
  int checked = 0, unrepresentable = 0;
  for (int trial = 0; trial < 400; ++trial) {
    hlo::HloBuilder b("chain");
    Shape base_shape(PrimitiveType::kS32, factor(24 * (1 + rng() % 4), rng));
    HloInstruction* base = b.parameter(0, base_shape);
    HloInstruction* x = base;
    std::optional<StridedView> view = StridedView::identity(base_shape.byteSize());
    int length = 1 + static_cast<int>(rng() % 5);
    for (int k = 0; k < length && view; ++k) {
      HloInstruction* y = randomMove(b, x, rng);
      view = applyMovement(*view, x->shape(), y->opcode(), y->attrs(), y->shape());
      x = y;
    }
    if (!view) {
      ++unrepresentable;
      continue;
    }
    expectViewMatchesEvaluator(b, x, base_shape, *view, trial);
    if (::testing::Test::HasFatalFailure()) return;
    ++checked;
  }
  EXPECT_GT(checked, 300) << unrepresentable << " chains had no strided view";
}

TEST(StridedView, CoalescingIsCanonical) {
  // Row-major [4,6] of bytes, transposed twice, is the identity.
  StridedView v = StridedView::identity(24);
  Shape s(PrimitiveType::kU8, {4, 6});
  hlo::HloAttributes t;
  t.dimensions = std::vector<int64_t>{1, 0};
  auto once = applyMovement(v, s, hlo::HloOpcode::kTranspose, t, Shape(PrimitiveType::kU8, {6, 4}));
  ASSERT_TRUE(once);
  EXPECT_EQ(once->str(), "@0[6:1,4:6]");
  auto twice =
      applyMovement(*once, Shape(PrimitiveType::kU8, {6, 4}), hlo::HloOpcode::kTranspose, t, s);
  ASSERT_TRUE(twice);
  EXPECT_EQ(*twice, v);
  EXPECT_TRUE(twice->isContiguous());
}

TEST(StridedView, RefineRejectsStraddlingSplits) {
  StridedView v;
  v.dims = {{3, 100}, {4, 1}};
  int64_t bad[] = {2, 6};
  EXPECT_FALSE(refine(v, bad));
  int64_t good[] = {3, 2, 2};
  auto parts = refine(v, good);
  ASSERT_TRUE(parts);
  EXPECT_EQ((*parts)[1], (ViewDims{{2, 2}}));
}

}  // namespace
}  // namespace tacit::isel

namespace tacit::isel {
namespace {

// A pitched read as a spec spells it (Gemmini's mvin): rows bytes of `pitch`, the last row only
// `used` long, padded to whole pitches, reshaped to rows, a column block sliced — then random
// movement. padView extends the view past the unpadded bytes; where the final view reads only
// real bytes (below the operand's end) it must be exactly the evaluator's result, and the random
// column blocks also read padding in some trials (not exact: never compared).
TEST(StridedView, PadThenSliceIsAViewOfTheUnpaddedBytes) {
  std::mt19937 rng(99);
  int exact = 0, inexact = 0;
  for (int trial = 0; trial < 300; ++trial) {
    int64_t rows = 1 + static_cast<int64_t>(rng() % 5), pitch = 2 + static_cast<int64_t>(rng() % 9);
    int64_t col = static_cast<int64_t>(rng() % static_cast<uint64_t>(pitch));
    int64_t width = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(pitch - col));
    int64_t used = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(pitch));
    int64_t bytes = (rows - 1) * pitch + used;
    hlo::HloBuilder b("pitched");
    Shape base_shape(PrimitiveType::kU8, {bytes});
    HloInstruction* x = b.parameter(0, base_shape);
    HloInstruction* zero = b.constant(hlo::Literal(Shape(PrimitiveType::kU8, {})));
    HloInstruction* padded = b.pad(x, zero, {hlo::PadDim{0, rows * pitch - bytes, 0}});
    auto view = padView(StridedView::identity(bytes), base_shape, padded->attrs().padding.value(),
                        padded->shape());
    ASSERT_TRUE(view);
    int64_t valid_end = bytes;
    HloInstruction* y =
        b.slice(b.reshape(padded, {rows, pitch}), {0, col}, {rows, col + width}, {1, 1});
    view = applyMovement(*view, Shape(PrimitiveType::kU8, {rows, pitch}), y->opcode(), y->attrs(),
                         y->shape());
    for (int k = 0; k < 2 && view; ++k) {
      HloInstruction* z = randomMove(b, y, rng);
      view = applyMovement(*view, y->shape(), z->opcode(), z->attrs(), z->shape());
      y = z;
    }
    if (!view) continue;
    if (maxPosition(*view) >= valid_end) {
      ++inexact;  // reads padding: not a view of x
      continue;
    }
    expectViewMatchesEvaluator(b, y, base_shape, *view, trial);
    if (::testing::Test::HasFatalFailure()) return;
    ++exact;
  }
  EXPECT_GT(exact, 100);
  EXPECT_GT(inexact, 10);
}

// Pads other than high padding of dimension 0 are not views.
TEST(StridedView, OnlyDimensionZeroHighPadsExtendAView) {
  Shape s(PrimitiveType::kU8, {2, 3});
  StridedView id = StridedView::identity(6);
  EXPECT_TRUE(padView(id, s, {{0, 2, 0}, {0, 0, 0}}, Shape(PrimitiveType::kU8, {4, 3})));
  EXPECT_FALSE(padView(id, s, {{1, 0, 0}, {0, 0, 0}}, Shape(PrimitiveType::kU8, {3, 3})));
  EXPECT_FALSE(padView(id, s, {{0, 0, 0}, {0, 1, 0}}, Shape(PrimitiveType::kU8, {2, 4})));
  EXPECT_FALSE(padView(id, s, {{0, 0, 1}, {0, 0, 0}}, Shape(PrimitiveType::kU8, {3, 3})));
  StridedView strided;
  strided.dims = {{2, 8}, {3, 1}};  // not contiguous
  EXPECT_FALSE(padView(strided, s, {{0, 1, 0}, {0, 0, 0}}, Shape(PrimitiveType::kU8, {3, 3})));
}

}  // namespace
}  // namespace tacit::isel
