// Property tests: algebraic identities of the data-movement ops on random shapes, and dot /
// convolution / reduce against naive reference implementations written here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>

#include "eval_test_util.h"
#include "hlo_eval/kernels/copy.h"
#include "hlo_eval/kernels/scalar.h"
#include "hlo_eval/random_literal.h"
#include "support/strings.h"

namespace tacit::hlo {
namespace {

using testing::eval;

std::string dimsText(const std::vector<int64_t>& d) {
  return "{" + join(d, ",") + "}";
}
std::string shapeText(PrimitiveType t, const std::vector<int64_t>& d) {
  return Shape(t, d).shortStr();
}

std::vector<int64_t> randomDims(std::mt19937& rng, int rank, int max_dim = 6) {
  std::vector<int64_t> d;
  for (int i = 0; i < rank; ++i)
    d.push_back(1 + static_cast<int64_t>(rng() % max_dim));
  return d;
}

PrimitiveType randomType(std::mt19937& rng) {
  const PrimitiveType types[] = {PrimitiveType::kS8,  PrimitiveType::kU16,  PrimitiveType::kS32,
                                 PrimitiveType::kF16, PrimitiveType::kBF16, PrimitiveType::kF32,
                                 PrimitiveType::kF64, PrimitiveType::kPred, PrimitiveType::kU64};
  return types[rng() % std::size(types)];
}

TEST(EvalProperties, TransposeOfTransposeIsIdentity) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 40; ++trial) {
    int rank = 1 + static_cast<int>(rng() % 5);
    PrimitiveType t = randomType(rng);
    std::vector<int64_t> dims = randomDims(rng, rank, rank > 3 ? 5 : 40);
    std::vector<int64_t> perm(static_cast<size_t>(rank)), inv(static_cast<size_t>(rank)), tdims;
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (int i = 0; i < rank; ++i) {
      inv[static_cast<size_t>(perm[static_cast<size_t>(i)])] = i;
      tdims.push_back(dims[static_cast<size_t>(perm[static_cast<size_t>(i)])]);
    }
    std::string text = "HloModule m\nENTRY e {\np = " + shapeText(t, dims) +
                       " parameter(0)\nt = " + shapeText(t, tdims) +
                       " transpose(p), dimensions=" + dimsText(perm) +
                       "\nROOT r = " + shapeText(t, dims) +
                       " transpose(t), dimensions=" + dimsText(inv) + "\n}\n";
    Literal x = randomLiteral(Shape(t, dims), static_cast<uint64_t>(trial));
    EXPECT_LITERAL(eval(text, {x}), x) << text;
  }
}

// CopyNest (transposes, broadcasts, reversals; small transposes take the byte-permutation path)
// against a naive element-by-element copy.
TEST(EvalProperties, CopyNestMatchesNaiveElementCopy) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 400; ++trial) {
    int rank = 1 + static_cast<int>(rng() % 4);
    const int sizes[] = {1, 2, 4, 8};
    int elem = sizes[rng() % 4];
    std::vector<int64_t> src_dims = randomDims(rng, rank, trial % 2 ? 17 : 5);
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int64_t> rs = rowMajorStrides(src_dims), dims, strides;
    int64_t base = 0;
    for (int64_t d : perm) {
      auto i = static_cast<size_t>(d);
      dims.push_back(src_dims[i]);
      int64_t st = rs[i];
      int kind = static_cast<int>(rng() % 10);
      if (kind == 0) st = 0;  // broadcast
      if (kind == 1) {        // reversal
        base += (src_dims[i] - 1) * st;
        st = -st;
      }
      strides.push_back(st);
    }
    int64_t src_n = 1, n = 1;
    for (int64_t d : src_dims)
      src_n *= d;
    for (int64_t d : dims)
      n *= d;
    std::vector<uint8_t> src(static_cast<size_t>(src_n * elem));
    for (uint8_t& b : src)
      b = static_cast<uint8_t>(rng());
    std::vector<uint8_t> got(static_cast<size_t>(n * elem), 0xAA), want = got;
    kernels::CopyNest nest(elem, dims, strides, rowMajorStrides(dims));
    nest.run(src.data() + base * elem, got.data());
    std::vector<int64_t> idx(dims.size(), 0);
    for (int64_t e = 0; e < n; ++e) {
      int64_t off = base;
      for (size_t k = 0; k < dims.size(); ++k)
        off += idx[k] * strides[k];
      std::memcpy(want.data() + e * elem, src.data() + off * elem, static_cast<size_t>(elem));
      for (size_t k = dims.size(); k-- > 0;) {
        if (++idx[k] < dims[k]) break;
        idx[k] = 0;
      }
    }
    ASSERT_EQ(got, want) << "trial " << trial << " dims " << dimsText(dims) << " strides "
                         << dimsText(strides) << " elem " << elem;
  }
}

// select and clamp with scalar predicates / bounds (whole-operand and vectorized loops) against
// the same operations on broadcast arrays (the strided loops), and select against a naive pick.
TEST(EvalProperties, SelectAndClampWithScalarOperandsMatchBroadcastArrays) {
  using P = PrimitiveType;
  const P types[] = {P::kS8, P::kU16, P::kS32, P::kF32, P::kF64, P::kU64, P::kBF16};
  std::mt19937 rng(4);
  for (int trial = 0; trial < 60; ++trial) {
    P t = types[rng() % std::size(types)];
    std::vector<int64_t> dims = randomDims(rng, 1 + static_cast<int>(rng() % 3), 40);
    std::string s = shapeText(t, dims), ps = shapeText(P::kPred, dims), sc = shapeText(t, {});
    Literal a = randomLiteral(Shape(t, dims), 4 * static_cast<uint64_t>(trial));
    Literal b = randomLiteral(Shape(t, dims), 4 * static_cast<uint64_t>(trial) + 1);
    Literal pred = randomLiteral(Shape(P::kPred, dims), 4 * static_cast<uint64_t>(trial) + 2);
    Literal lo = randomLiteral(Shape(t, {}), 4 * static_cast<uint64_t>(trial) + 3);
    Literal hi = randomLiteral(Shape(t, {}), 4 * static_cast<uint64_t>(trial) + 5);
    std::string head = "HloModule m\nENTRY e {\na = " + s + " parameter(0)\nb = " + s +
                       " parameter(1)\np = " + ps + " parameter(2)\nq = pred[] parameter(3)\n";
    std::string bcast = "qb = " + ps + " broadcast(q), dimensions={}\n";
    for (uint8_t qv : {uint8_t{0}, uint8_t{1}}) {
      Literal q(Shape(P::kPred, {}));
      q.bytes()[0] = qv;
      Literal scalar = eval(head + "ROOT r = " + s + " select(q, a, b)\n}\n", {a, b, pred, q});
      Literal arr =
          eval(head + bcast + "ROOT r = " + s + " select(qb, a, b)\n}\n", {a, b, pred, q});
      EXPECT_LITERAL(scalar, qv ? a : b);
      EXPECT_LITERAL(arr, qv ? a : b);
    }
    Literal picked = eval(head + "ROOT r = " + s + " select(p, a, b)\n}\n",
                          {a, b, pred, Literal(Shape(P::kPred, {}))});
    Literal want(Shape(t, dims));
    size_t e = static_cast<size_t>(byteSize(t));
    for (int64_t i = 0; i < want.elementCount(); ++i) {
      const Literal& from = pred.bytes()[i] ? a : b;
      std::memcpy(want.bytes() + static_cast<size_t>(i) * e,
                  from.bytes() + static_cast<size_t>(i) * e, e);
    }
    EXPECT_LITERAL(picked, want);
    std::string ch = "HloModule m\nENTRY e {\nx = " + s + " parameter(0)\nl = " + sc +
                     " parameter(1)\nh = " + sc + " parameter(2)\n";
    Literal scalar_bounds = eval(ch + "ROOT r = " + s + " clamp(l, x, h)\n}\n", {a, lo, hi});
    Literal array_bounds =
        eval(ch + "lb = " + s + " broadcast(l), dimensions={}\nhb = " + s +
                 " broadcast(h), dimensions={}\nROOT r = " + s + " clamp(lb, x, hb)\n}\n",
             {a, lo, hi});
    EXPECT_LITERAL(scalar_bounds, array_bounds) << s;
  }
}

// is-finite on random bit patterns (NaNs, infinities, subnormals, -0 among them) against the
// exponent field: finite unless all of its bits are set.
TEST(EvalProperties, IsFiniteMatchesTheExponentField) {
  using P = PrimitiveType;
  struct T {
    P type;
    uint64_t exponent;
  };
  std::mt19937_64 rng(8);
  for (T t : {T{P::kF64, 0x7FF0000000000000}, T{P::kF32, 0x7F800000}, T{P::kF16, 0x7C00},
              T{P::kBF16, 0x7F80}}) {
    Literal x(Shape(t.type, {4096}));
    size_t e = static_cast<size_t>(byteSize(t.type));
    Literal want(Shape(P::kPred, {4096}));
    for (int64_t i = 0; i < 4096; ++i) {
      uint64_t bits = rng();
      if (i % 7 == 0) bits |= t.exponent;  // many more NaNs and infinities
      std::memcpy(x.bytes() + static_cast<size_t>(i) * e, &bits, e);
      want.bytes()[i] = (bits & t.exponent) != t.exponent ? 1 : 0;
    }
    std::string s = shapeText(t.type, {4096});
    Literal got = eval(
        "HloModule m\nENTRY e {\np = " + s + " parameter(0)\nROOT r = pred[4096] is-finite(p)\n}\n",
        {x});
    EXPECT_LITERAL(got, want) << s;
  }
}

TEST(EvalProperties, ReshapeRoundTripsAndReverseTwiceIsIdentity) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 30; ++trial) {
    PrimitiveType t = randomType(rng);
    std::vector<int64_t> dims = randomDims(rng, 3, 8);
    int64_t n = dims[0] * dims[1] * dims[2];
    std::string s = shapeText(t, dims);
    std::string text = "HloModule m\nENTRY e {\np = " + s +
                       " parameter(0)\nf = " + shapeText(t, {n}) +
                       " reshape(p)\nv = " + shapeText(t, {n}) +
                       " reverse(f), dimensions={0}\nw = " + shapeText(t, {n}) +
                       " reverse(v), dimensions={0}\nq = " + s + " reshape(w)\nROOT r = " + s +
                       " reverse(q), dimensions={0,2}\n}\n";
    Literal x = randomLiteral(Shape(t, dims), static_cast<uint64_t>(trial));
    std::string back = "HloModule m\nENTRY e {\np = " + s + " parameter(0)\nROOT r = " + s +
                       " reverse(p), dimensions={0,2}\n}\n";
    EXPECT_LITERAL(eval(text, {x}), eval(back, {x})) << text;
  }
}

TEST(EvalProperties, SlicesConcatenateBackToTheOperand) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 30; ++trial) {
    PrimitiveType t = randomType(rng);
    int rank = 1 + static_cast<int>(rng() % 3);
    std::vector<int64_t> dims = randomDims(rng, rank, 12);
    auto axis = static_cast<size_t>(rng() % static_cast<unsigned>(rank));
    // Cut the axis into pieces at random points.
    std::vector<int64_t> cuts = {0};
    for (int64_t i = 1; i < dims[axis]; ++i) {
      if (rng() % 3 == 0) cuts.push_back(i);
    }
    cuts.push_back(dims[axis]);
    std::string text = "HloModule m\nENTRY e {\np = " + shapeText(t, dims) + " parameter(0)\n";
    std::vector<std::string> names;
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      std::vector<int64_t> pd = dims;
      pd[axis] = cuts[k + 1] - cuts[k];
      std::string range;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (d) range += ", ";
        range += d == axis ? "[" + std::to_string(cuts[k]) + ":" + std::to_string(cuts[k + 1]) + "]"
                           : "[0:" + std::to_string(dims[d]) + "]";
      }
      names.push_back("piece" + std::to_string(k));
      text += names.back() + " = " + shapeText(t, pd) + " slice(p), slice={" + range + "}\n";
    }
    text += "ROOT r = " + shapeText(t, dims) + " concatenate(" + join(names, ", ") +
            "), dimensions={" + std::to_string(axis) + "}\n}\n";
    Literal x = randomLiteral(Shape(t, dims), static_cast<uint64_t>(trial));
    EXPECT_LITERAL(eval(text, {x}), x) << text;
  }
}

TEST(EvalProperties, StridedSliceUndoesInteriorPadding) {
  std::mt19937 rng(4);
  for (int trial = 0; trial < 30; ++trial) {
    PrimitiveType t = randomType(rng);
    std::vector<int64_t> dims = randomDims(rng, 2, 7);
    std::string pad, range;
    std::vector<int64_t> pdims;
    for (size_t d = 0; d < 2; ++d) {
      int64_t lo = static_cast<int64_t>(rng() % 3), hi = static_cast<int64_t>(rng() % 3);
      int64_t in = static_cast<int64_t>(rng() % 3);
      int64_t size = lo + hi + dims[d] + (dims[d] - 1) * in;
      pdims.push_back(size);
      pad +=
          (d ? "x" : "") + std::to_string(lo) + "_" + std::to_string(hi) + "_" + std::to_string(in);
      range += (d ? ", [" : "[") + std::to_string(lo) + ":" +
               std::to_string(lo + (dims[d] - 1) * (in + 1) + 1) + ":" + std::to_string(in + 1) +
               "]";
    }
    std::string text = "HloModule m\nENTRY e {\np = " + shapeText(t, dims) +
                       " parameter(0)\nz = " + shapeText(t, {}) +
                       " constant(0)\nq = " + shapeText(t, pdims) + " pad(p, z), padding=" + pad +
                       "\nROOT r = " + shapeText(t, dims) + " slice(q), slice={" + range + "}\n}\n";
    Literal x = randomLiteral(Shape(t, dims), static_cast<uint64_t>(trial));
    EXPECT_LITERAL(eval(text, {x}), x) << text;
  }
}

// ---- dot against naive loops -------------------------------------------------------------------

struct DotCase {
  std::vector<int64_t> lhs_dims, rhs_dims;
  DotDims dd;
  std::vector<int64_t> out_dims;
};

// A random general dot: batch dims B, free dims, contracting dims K, permuted in each operand.
DotCase randomDot(std::mt19937& rng, int64_t max_dim) {
  int nb = static_cast<int>(rng() % 2), nk = 1 + static_cast<int>(rng() % 2);
  int nl = static_cast<int>(rng() % 2) + 1, nr = static_cast<int>(rng() % 2);
  std::vector<int64_t> b = randomDims(rng, nb, 3),
                       k = randomDims(rng, nk, static_cast<int>(max_dim));
  std::vector<int64_t> lf = randomDims(rng, nl, static_cast<int>(max_dim)),
                       rf = randomDims(rng, nr, static_cast<int>(max_dim));
  // Operand dimension order: a random permutation of (batch, free, contracting).
  auto place = [&](const std::vector<int64_t>& free, std::vector<int64_t>& dims,
                   std::vector<int64_t>& bpos, std::vector<int64_t>& kpos) {
    std::vector<std::pair<char, size_t>> parts;
    for (size_t i = 0; i < b.size(); ++i)
      parts.emplace_back('b', i);
    for (size_t i = 0; i < free.size(); ++i)
      parts.emplace_back('f', i);
    for (size_t i = 0; i < k.size(); ++i)
      parts.emplace_back('k', i);
    std::shuffle(parts.begin(), parts.end(), rng);
    bpos.assign(b.size(), 0);
    kpos.assign(k.size(), 0);
    std::vector<std::pair<char, size_t>> free_order;
    for (size_t p = 0; p < parts.size(); ++p) {
      auto [kind, i] = parts[p];
      dims.push_back(kind == 'b' ? b[i] : kind == 'k' ? k[i] : free[i]);
      if (kind == 'b') bpos[i] = static_cast<int64_t>(p);
      if (kind == 'k') kpos[i] = static_cast<int64_t>(p);
    }
  };
  DotCase c;
  place(lf, c.lhs_dims, c.dd.lhs_batch, c.dd.lhs_contracting);
  place(rf, c.rhs_dims, c.dd.rhs_batch, c.dd.rhs_contracting);
  c.out_dims = b;
  auto appendFree = [&](const std::vector<int64_t>& dims, const std::vector<int64_t>& bp,
                        const std::vector<int64_t>& kp) {
    for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
      if (std::find(bp.begin(), bp.end(), d) == bp.end() &&
          std::find(kp.begin(), kp.end(), d) == kp.end()) {
        c.out_dims.push_back(dims[static_cast<size_t>(d)]);
      }
    }
  };
  appendFree(c.lhs_dims, c.dd.lhs_batch, c.dd.lhs_contracting);
  appendFree(c.rhs_dims, c.dd.rhs_batch, c.dd.rhs_contracting);
  return c;
}

std::string dotText(const DotCase& c, PrimitiveType lt, PrimitiveType rt, PrimitiveType ot) {
  return "HloModule m\nENTRY e {\na = " + shapeText(lt, c.lhs_dims) +
         " parameter(0)\nb = " + shapeText(rt, c.rhs_dims) +
         " parameter(1)\nROOT d = " + shapeText(ot, c.out_dims) +
         " dot(a, b), lhs_batch_dims=" + dimsText(c.dd.lhs_batch) +
         ", lhs_contracting_dims=" + dimsText(c.dd.lhs_contracting) +
         ", rhs_batch_dims=" + dimsText(c.dd.rhs_batch) +
         ", rhs_contracting_dims=" + dimsText(c.dd.rhs_contracting) + "\n}\n";
}

// out[batch, lfree, rfree] = sum over contracting indices (listed order, first outermost) of
// lhs * rhs, accumulated with `acc` (a callable (acc, lhs_value, rhs_value) -> acc).
template <typename Acc, typename Step>
std::vector<Acc> naiveDot(const DotCase& c, Acc zero, Step step) {
  std::vector<int64_t> ls = rowMajorStrides(c.lhs_dims), rs = rowMajorStrides(c.rhs_dims);
  auto freeDims = [](const std::vector<int64_t>& dims, const std::vector<int64_t>& bp,
                     const std::vector<int64_t>& kp) {
    std::vector<int64_t> f;
    for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
      if (std::find(bp.begin(), bp.end(), d) == bp.end() &&
          std::find(kp.begin(), kp.end(), d) == kp.end())
        f.push_back(d);
    }
    return f;
  };
  std::vector<int64_t> lf = freeDims(c.lhs_dims, c.dd.lhs_batch, c.dd.lhs_contracting);
  std::vector<int64_t> rf = freeDims(c.rhs_dims, c.dd.rhs_batch, c.dd.rhs_contracting);
  int64_t out_n = 1, k_n = 1;
  for (int64_t d : c.out_dims)
    out_n *= d;
  std::vector<int64_t> kdims;
  for (int64_t d : c.dd.lhs_contracting) {
    kdims.push_back(c.lhs_dims[static_cast<size_t>(d)]);
    k_n *= kdims.back();
  }
  std::vector<Acc> out;
  std::vector<int64_t> oi(c.out_dims.size(), 0);
  for (int64_t o = 0; o < out_n; ++o) {
    int64_t lbase = 0, rbase = 0;
    size_t p = 0;
    for (size_t i = 0; i < c.dd.lhs_batch.size(); ++i, ++p) {
      lbase += oi[p] * ls[static_cast<size_t>(c.dd.lhs_batch[i])];
      rbase += oi[p] * rs[static_cast<size_t>(c.dd.rhs_batch[i])];
    }
    for (int64_t d : lf)
      lbase += oi[p++] * ls[static_cast<size_t>(d)];
    for (int64_t d : rf)
      rbase += oi[p++] * rs[static_cast<size_t>(d)];
    Acc acc = zero;
    std::vector<int64_t> ki(kdims.size(), 0);
    for (int64_t kk = 0; kk < k_n; ++kk) {
      int64_t lo = lbase, ro = rbase;
      for (size_t i = 0; i < kdims.size(); ++i) {
        lo += ki[i] * ls[static_cast<size_t>(c.dd.lhs_contracting[i])];
        ro += ki[i] * rs[static_cast<size_t>(c.dd.rhs_contracting[i])];
      }
      acc = step(acc, lo, ro);
      for (size_t i = kdims.size(); i-- > 0;) {
        if (++ki[i] < kdims[i]) break;
        ki[i] = 0;
      }
    }
    out.push_back(acc);
    for (size_t i = oi.size(); i-- > 0;) {
      if (++oi[i] < c.out_dims[i]) break;
      oi[i] = 0;
    }
  }
  return out;
}

TEST(EvalProperties, IntegerDotsMatchNaiveLoops) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 60; ++trial) {
    DotCase c = randomDot(rng, trial < 50 ? 9 : 70);
    bool unsigned_lhs = trial % 3 == 0;
    PrimitiveType lt = unsigned_lhs ? PrimitiveType::kU8 : PrimitiveType::kS8,
                  rt = PrimitiveType::kS8;
    Literal a = randomLiteral(Shape(lt, c.lhs_dims), 2 * static_cast<uint64_t>(trial));
    Literal b = randomLiteral(Shape(rt, c.rhs_dims), 2 * static_cast<uint64_t>(trial) + 1);
    Literal got = eval(dotText(c, lt, rt, PrimitiveType::kS32), {a, b});
    std::vector<int64_t> want = naiveDot<int64_t>(c, 0, [&](int64_t acc, int64_t lo, int64_t ro) {
      return acc + a.getInt64(lo) * b.getInt64(ro);
    });
    ASSERT_EQ(static_cast<int64_t>(want.size()), got.elementCount());
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(got.getInt64(static_cast<int64_t>(i)), want[i])
          << dotText(c, lt, rt, PrimitiveType::kS32);
    }
  }
}

// Integer dots read exactly widening converts' operands in their narrow types (the int8/int16
// kernels): against the same dot of the converted values passed as parameters (the general
// path), bit for bit, with chains of converts and converts that must not be looked through.
TEST(EvalProperties, IntegerDotsOfWidenedOperandsMatchConvertedParameters) {
  using P = PrimitiveType;
  const P narrow[] = {P::kS8, P::kU8, P::kS16, P::kU16, P::kS32, P::kU32};
  const P wide[] = {P::kS16, P::kS32, P::kU32, P::kS64, P::kU64, P::kS8, P::kU8};
  std::mt19937 rng(11);
  for (int trial = 0; trial < 120; ++trial) {
    DotCase c = randomDot(rng, trial < 100 ? 9 : 40);
    P result = trial % 4 == 3 ? P::kS64 : trial % 4 == 2 ? P::kU32 : P::kS32;
    // Each operand: a narrow parameter through one or two converts.
    std::string text = "HloModule m\nENTRY e {\n";
    std::vector<Literal> args, converted;
    std::vector<P> final_types;
    for (int side = 0; side < 2; ++side) {
      const std::vector<int64_t>& dims = side == 0 ? c.lhs_dims : c.rhs_dims;
      std::string x = side == 0 ? "a" : "b";
      P t0 = narrow[rng() % std::size(narrow)];
      args.push_back(randomLiteral(Shape(t0, dims), 3 * static_cast<uint64_t>(trial) + side));
      text += x + "0 = " + shapeText(t0, dims) + " parameter(" + std::to_string(side) + ")\n";
      std::string chain = "HloModule c\nENTRY e {\np = " + shapeText(t0, dims) + " parameter(0)\n";
      std::string prev = "p";
      P t = t0;
      int steps = 1 + static_cast<int>(rng() % 2);
      for (int k = 1; k <= steps; ++k) {
        t = wide[rng() % std::size(wide)];
        std::string name = x + std::to_string(k);
        text += name + " = " + shapeText(t, dims) + " convert(" + x + std::to_string(k - 1) + ")\n";
        chain += std::string(k == steps ? "ROOT " : "") + "c" + std::to_string(k) + " = " +
                 shapeText(t, dims) + " convert(" + prev + ")\n";
        prev = "c" + std::to_string(k);
      }
      converted.push_back(eval(chain + "}\n", {args.back()}));
      final_types.push_back(t);
    }
    std::string dims_attr = ", lhs_batch_dims=" + dimsText(c.dd.lhs_batch) +
                            ", lhs_contracting_dims=" + dimsText(c.dd.lhs_contracting) +
                            ", rhs_batch_dims=" + dimsText(c.dd.rhs_batch) +
                            ", rhs_contracting_dims=" + dimsText(c.dd.rhs_contracting) + "\n}\n";
    std::string la = "a" + std::to_string(text.find("a2 =") != std::string::npos ? 2 : 1);
    std::string lb = "b" + std::to_string(text.find("b2 =") != std::string::npos ? 2 : 1);
    text +=
        "ROOT d = " + shapeText(result, c.out_dims) + " dot(" + la + ", " + lb + ")" + dims_attr;
    Literal got = eval(text, {args[0], args[1]});
    Literal want =
        eval(dotText(c, final_types[0], final_types[1], result), {converted[0], converted[1]});
    EXPECT_LITERAL(got, want) << text;
  }
}

TEST(EvalProperties, F32DotOfSmallIntegersMatchesExactF64Sums) {
  std::mt19937 rng(6);
  for (int trial = 0; trial < 40; ++trial) {
    DotCase c = randomDot(rng, 12);
    auto smallInts = [&](const std::vector<int64_t>& dims) {
      Literal l(Shape(PrimitiveType::kF32, dims));
      for (int64_t i = 0; i < l.elementCount(); ++i)
        l.setDouble(i, static_cast<double>(static_cast<int>(rng() % 17) - 8));
      return l;
    };
    Literal a = smallInts(c.lhs_dims), b = smallInts(c.rhs_dims);
    Literal got =
        eval(dotText(c, PrimitiveType::kF32, PrimitiveType::kF32, PrimitiveType::kF32), {a, b});
    std::vector<double> want = naiveDot<double>(c, 0.0, [&](double acc, int64_t lo, int64_t ro) {
      return acc + a.getDouble(lo) * b.getDouble(ro);
    });
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(got.getDouble(static_cast<int64_t>(i)), want[i]);
  }
}

// Large enough to cross the GEMM's k blocks (256) and tile edges: the documented order is
// ((0 + a0*b0) + a1*b1) + ... with f32 rounding after every multiply and add.
TEST(EvalProperties, F32AndBf16DotsAreSequentialInContractingOrder) {
  std::mt19937 rng(7);
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kBF16}) {
    for (auto [m, k, n] :
         {std::array<int64_t, 3>{37, 600, 45}, {5, 1, 70}, {70, 300, 3}, {1, 513, 1}}) {
      DotCase c;
      c.lhs_dims = {m, k};
      c.rhs_dims = {k, n};
      c.dd.lhs_contracting = {1};
      c.dd.rhs_contracting = {0};
      c.out_dims = {m, n};
      Literal a = randomLiteral(Shape(t, c.lhs_dims), rng()),
              b = randomLiteral(Shape(t, c.rhs_dims), rng());
      Literal got = eval(dotText(c, t, t, t), {a, b});
      std::vector<float> want = naiveDot<float>(c, 0.0f, [&](float acc, int64_t lo, int64_t ro) {
        float p = static_cast<float>(a.getDouble(lo)) * static_cast<float>(b.getDouble(ro));
        return acc + p;
      });
      Literal expected(Shape(t, c.out_dims));
      for (size_t i = 0; i < want.size(); ++i) {
        if (t == PrimitiveType::kF32) {
          expected.data<float>()[i] = want[i];
        } else {
          expected.data<bfloat16>()[i] = f32ToBf16(want[i]);
        }
      }
      EXPECT_LITERAL(got, expected) << m << "x" << k << "x" << n;
    }
  }
}

// ---- convolution against a naive reference -----------------------------------------------------

struct ConvCase {
  int spatial;
  int64_t batch, in_f, out_f, fgc, bgc;
  std::vector<int64_t> in_size, k_size;
  std::vector<WindowDim> window;
  std::string labels;                              // dim_labels
  std::vector<int64_t> in_perm, k_perm, out_perm;  // logical (b, f, s...) -> physical dimension
};

// Builds "b01f_01io->b01f"-style labels from permutations of logical dimensions.
std::string labelsOf(const std::vector<int64_t>& perm, const char* roles) {
  std::string s(perm.size(), '?');
  for (size_t i = 0; i < perm.size(); ++i)
    s[static_cast<size_t>(perm[i])] = roles[i];
  return s;
}

std::vector<int64_t> physicalDims(const std::vector<int64_t>& logical,
                                  const std::vector<int64_t>& perm) {
  std::vector<int64_t> d(logical.size());
  for (size_t i = 0; i < perm.size(); ++i)
    d[static_cast<size_t>(perm[i])] = logical[i];
  return d;
}

TEST(EvalProperties, ConvolutionMatchesNaiveReference) {
  std::mt19937 rng(8);
  int checked = 0;
  for (int trial = 0; trial < 120; ++trial) {
    ConvCase c;
    c.spatial = 1 + static_cast<int>(rng() % 2);
    c.fgc = trial % 4 == 1 ? 2 : 1;
    c.bgc = trial % 4 == 3 ? 2 : 1;
    c.batch = (1 + static_cast<int64_t>(rng() % 2)) * c.bgc;
    int64_t cin_g = 1 + static_cast<int64_t>(rng() % 3);
    c.in_f = cin_g * c.fgc;
    c.out_f = (1 + static_cast<int64_t>(rng() % 3)) * std::max(c.fgc, c.bgc);
    std::vector<int64_t> out_size;
    bool ok = true;
    for (int d = 0; d < c.spatial; ++d) {
      WindowDim w;
      w.size = 1 + static_cast<int64_t>(rng() % 3);
      w.stride = 1 + static_cast<int64_t>(rng() % 2);
      w.pad_lo = static_cast<int64_t>(rng() % 4) - 1;
      w.pad_hi = static_cast<int64_t>(rng() % 4) - 1;
      w.lhs_dilation = 1 + static_cast<int64_t>(rng() % 3);
      w.rhs_dilation = 1 + static_cast<int64_t>(rng() % 2);
      w.reversal = rng() % 2 == 0;
      int64_t n = 2 + static_cast<int64_t>(rng() % 5);
      int64_t padded = (n - 1) * w.lhs_dilation + 1 + w.pad_lo + w.pad_hi;
      int64_t span = (w.size - 1) * w.rhs_dilation + 1;
      if (padded < span) ok = false;
      out_size.push_back(padded < span ? 0 : (padded - span) / w.stride + 1);
      c.in_size.push_back(n);
      c.k_size.push_back(w.size);
      c.window.push_back(w);
    }
    if (!ok) continue;
    auto shuffled = [&](size_t n) {
      std::vector<int64_t> p(n);
      std::iota(p.begin(), p.end(), 0);
      std::shuffle(p.begin(), p.end(), rng);
      return p;
    };
    size_t rank = static_cast<size_t>(c.spatial) + 2;
    c.in_perm = shuffled(rank);
    c.k_perm = shuffled(rank);
    c.out_perm = shuffled(rank);
    std::string labels = labelsOf(c.in_perm, "bf01") + "_" + labelsOf(c.k_perm, "io01") + "->" +
                         labelsOf(c.out_perm, "bf01");
    std::vector<int64_t> in_log = {c.batch, c.in_f}, k_log = {cin_g, c.out_f},
                         out_log = {c.batch / c.bgc, c.out_f};
    in_log.insert(in_log.end(), c.in_size.begin(), c.in_size.end());
    k_log.insert(k_log.end(), c.k_size.begin(), c.k_size.end());
    out_log.insert(out_log.end(), out_size.begin(), out_size.end());
    std::vector<int64_t> in_dims = physicalDims(in_log, c.in_perm),
                         k_dims = physicalDims(k_log, c.k_perm),
                         out_dims = physicalDims(out_log, c.out_perm);
    std::string window;
    auto field = [&](auto get) {
      std::string f;
      for (int d = 0; d < c.spatial; ++d)
        f += (d ? "x" : "") + get(c.window[static_cast<size_t>(d)]);
      return f;
    };
    window =
        "size=" + field([](const WindowDim& w) { return std::to_string(w.size); }) +
        " stride=" + field([](const WindowDim& w) { return std::to_string(w.stride); }) +
        " pad=" + field([](const WindowDim& w) {
          return std::to_string(w.pad_lo) + "_" + std::to_string(w.pad_hi);
        }) +
        " lhs_dilate=" + field([](const WindowDim& w) { return std::to_string(w.lhs_dilation); }) +
        " rhs_dilate=" + field([](const WindowDim& w) { return std::to_string(w.rhs_dilation); }) +
        " rhs_reversal=" +
        field([](const WindowDim& w) { return std::string(w.reversal ? "1" : "0"); });
    std::string text = "HloModule m\nENTRY e {\nx = " + shapeText(PrimitiveType::kS32, in_dims) +
                       " parameter(0)\nk = " + shapeText(PrimitiveType::kS32, k_dims) +
                       " parameter(1)\nROOT c = " + shapeText(PrimitiveType::kS32, out_dims) +
                       " convolution(x, k), window={" + window + "}, dim_labels=" + labels +
                       ", feature_group_count=" + std::to_string(c.fgc) +
                       ", batch_group_count=" + std::to_string(c.bgc) + "\n}\n";
    Literal x =
        randomLiteral(Shape(PrimitiveType::kS32, in_dims), 100 + static_cast<uint64_t>(trial));
    Literal k =
        randomLiteral(Shape(PrimitiveType::kS32, k_dims), 200 + static_cast<uint64_t>(trial));
    Literal got = eval(text, {x, k});
    // Naive reference: for every output (logical b, f, o...) sum over input features of the group
    // and window positions of x[padded/dilated position] * k[(reversed) tap].
    std::vector<int64_t> xs = rowMajorStrides(in_dims), ks = rowMajorStrides(k_dims),
                         os = rowMajorStrides(out_dims);
    auto at = [](const std::vector<int64_t>& strides, const std::vector<int64_t>& perm,
                 const std::vector<int64_t>& logical) {
      int64_t off = 0;
      for (size_t i = 0; i < logical.size(); ++i)
        off += logical[i] * strides[static_cast<size_t>(perm[i])];
      return off;
    };
    int64_t groups = std::max(c.fgc, c.bgc), cout_g = c.out_f / groups, out_b = c.batch / c.bgc;
    std::vector<int64_t> o(out_log.size(), 0);
    int64_t total = 1;
    for (int64_t d : out_log)
      total *= d;
    for (int64_t e = 0; e < total; ++e) {
      int64_t ob = o[0], of = o[1], g = of / cout_g;
      int64_t sum = 0;
      std::vector<int64_t> w(static_cast<size_t>(c.spatial), 0);
      int64_t wcount = 1;
      for (int64_t s : c.k_size)
        wcount *= s;
      for (int64_t wi = 0; wi < wcount; ++wi) {
        std::vector<int64_t> xl = {c.bgc > 1 ? g * out_b + ob : ob, 0}, kl = {0, of};
        bool valid = true;
        for (int d = 0; d < c.spatial; ++d) {
          const WindowDim& wd = c.window[static_cast<size_t>(d)];
          int64_t pos = o[static_cast<size_t>(d) + 2] * wd.stride +
                        w[static_cast<size_t>(d)] * wd.rhs_dilation - wd.pad_lo;
          valid = valid && pos >= 0 && pos % wd.lhs_dilation == 0 &&
                  pos / wd.lhs_dilation < c.in_size[static_cast<size_t>(d)];
          xl.push_back(valid ? pos / wd.lhs_dilation : 0);
          kl.push_back(wd.reversal ? wd.size - 1 - w[static_cast<size_t>(d)]
                                   : w[static_cast<size_t>(d)]);
        }
        if (valid) {
          for (int64_t ci = 0; ci < cin_g; ++ci) {
            xl[1] = (c.fgc > 1 ? g * cin_g : 0) + ci;
            kl[0] = ci;
            sum += x.getInt64(at(xs, c.in_perm, xl)) * k.getInt64(at(ks, c.k_perm, kl));
          }
        }
        for (int d = c.spatial; d-- > 0;) {
          if (++w[static_cast<size_t>(d)] < c.k_size[static_cast<size_t>(d)]) break;
          w[static_cast<size_t>(d)] = 0;
        }
      }
      ASSERT_EQ(got.getInt64(at(os, c.out_perm, o)), static_cast<int32_t>(sum)) << text;
      for (size_t i = o.size(); i-- > 0;) {
        if (++o[i] < out_log[i]) break;
        o[i] = 0;
      }
    }
    ++checked;
  }
  EXPECT_GT(checked, 60);
}

// ---- reductions --------------------------------------------------------------------------------

TEST(EvalProperties, IntegerReductionsMatchNaiveSums) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 30; ++trial) {
    std::vector<int64_t> dims = randomDims(rng, 3, trial < 20 ? 8 : 80);
    std::vector<int64_t> rdims, kept;
    for (int64_t d = 0; d < 3; ++d) {
      if (rng() % 2) {
        rdims.push_back(d);
      } else {
        kept.push_back(dims[static_cast<size_t>(d)]);
      }
    }
    std::string text =
        "HloModule m\nadd { a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] "
        "add(a, b) }\n"
        "ENTRY e {\np = " +
        shapeText(PrimitiveType::kS32, dims) +
        " parameter(0)\nz = s32[] constant(0)\nROOT r = " + shapeText(PrimitiveType::kS32, kept) +
        " reduce(p, z), dimensions=" + dimsText(rdims) + ", to_apply=add\n}\n";
    Literal x = randomLiteral(Shape(PrimitiveType::kS32, dims), static_cast<uint64_t>(trial));
    Literal got = eval(text, {x});
    std::vector<int64_t> want(static_cast<size_t>(got.elementCount()), 0);
    std::vector<int64_t> idx(3, 0);
    for (int64_t e = 0; e < x.elementCount(); ++e) {
      int64_t o = 0;
      for (int64_t d = 0; d < 3; ++d) {
        if (std::find(rdims.begin(), rdims.end(), d) == rdims.end())
          o = o * dims[static_cast<size_t>(d)] + idx[static_cast<size_t>(d)];
      }
      want[static_cast<size_t>(o)] += x.getInt64(e);
      for (size_t i = 3; i-- > 0;) {
        if (++idx[i] < dims[i]) break;
        idx[i] = 0;
      }
    }
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(got.getInt64(static_cast<int64_t>(i)), want[i]) << text;
  }
}

// f32 row sums of length n: the XLA tree rule written out directly (windows of 32 with SAME
// padding, each folded from the init, then the window results folded from the init, repeated).
float treeSum(const std::vector<float>& x) {
  if (x.size() <= 32) {
    float acc = 0;
    for (float v : x)
      acc = acc + v;
    return acc;
  }
  auto n = static_cast<int64_t>(x.size());
  int64_t out = (n + 31) / 32, pad = (out - 1) * 32 + 32 - n, lo = pad / 2;
  std::vector<float> partial;
  for (int64_t w = 0; w < out; ++w) {
    float acc = 0;
    for (int64_t i = w * 32 - lo; i < w * 32 - lo + 32; ++i) {
      if (i >= 0 && i < n) acc = acc + x[static_cast<size_t>(i)];
    }
    partial.push_back(acc);
  }
  return treeSum(partial);
}

TEST(EvalProperties, F32RowSumsFollowTheTreeRule) {
  std::mt19937 rng(10);
  for (int64_t n : {1, 31, 32, 33, 64, 65, 100, 1000, 1025, 5000}) {
    std::string text =
        "HloModule m\nadd { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] "
        "add(a, b) }\n"
        "ENTRY e {\np = f32[3," +
        std::to_string(n) +
        "] parameter(0)\nz = f32[] constant(0)\n"
        "ROOT r = f32[3] reduce(p, z), dimensions={1}, to_apply=add\n}\n";
    Literal x = randomLiteral(Shape(PrimitiveType::kF32, {3, n}), rng());
    Literal got = eval(text, {x});
    for (int64_t row = 0; row < 3; ++row) {
      std::vector<float> v(x.data<float>().begin() + row * n,
                           x.data<float>().begin() + (row + 1) * n);
      EXPECT_EQ(testing::bitsOf(got.data<float>()[static_cast<size_t>(row)]),
                testing::bitsOf(treeSum(v)))
          << n;
    }
  }
}

}  // namespace
}  // namespace tacit::hlo
