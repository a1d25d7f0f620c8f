// dot on special values (NaN of both signs with payloads, signaling NaN, +-inf, +-0, subnormals,
// values whose products or sums overflow) against the rules of docs/numerics.md, bit for bit:
//
//  * a scalar reference loop written here: each output element sums its products from +0 in
//    contracting order in the accumulation type (f32, f64 if an operand or the result is f64,
//    modulo 2^64 for integers), acc = acc + a*b with separately rounded multiply and add, the
//    result rounded once at the end. NaNs follow x86 scalar arithmetic with the lhs element first
//    in the product and the accumulator first in the sum: a NaN operand propagates quieted, the
//    first operand's if both are NaN; an invalid operation (inf*0, inf-inf) gives the default NaN
//    (negative, zero payload). The reference spells these out bit by bit, so it does not depend on
//    how its own multiply and add are compiled.
//  * splitting free dimensions (rows, columns, batch) into blocks of any size: every output
//    element of a block's dot is the element of the whole dot, since its operations are the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "eval_test_util.h"
#include "hlo/float16.h"
#include "support/strings.h"

namespace tacit::hlo {
namespace {

using P = PrimitiveType;
using testing::eval;

// ---- reference arithmetic ----------------------------------------------------------------------

template <typename F>
using BitsOf = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;

template <typename F>
F quieted(F nan) {
  constexpr BitsOf<F> kQuiet = sizeof(F) == 4 ? BitsOf<F>{1} << 22 : BitsOf<F>{1} << 51;
  return std::bit_cast<F>(static_cast<BitsOf<F>>(std::bit_cast<BitsOf<F>>(nan) | kQuiet));
}

// x86's default NaN ("real indefinite"): sign set, quiet, zero payload.
template <typename F>
F defaultNan() {
  if constexpr (sizeof(F) == 4) {
    return std::bit_cast<F>(uint32_t{0xFFC00000u});
  } else {
    return std::bit_cast<F>(uint64_t{0xFFF8000000000000ull});
  }
}

// x op y on x86 scalar SSE/AVX with x the first source operand.
template <typename F, typename Op>
F x86(F x, F y, Op op) {
  if (std::isnan(x)) return quieted(x);
  if (std::isnan(y)) return quieted(y);
  F r = op(x, y);
  return std::isnan(r) ? defaultNan<F>() : r;
}

// f16 bits -> f32 (exact; NaN payloads move to the top of the f32 significand).
float f16BitsToF32(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu,
           mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  float mag = exp == 0 ? std::ldexp(static_cast<float>(mant), -24)
                       : std::ldexp(static_cast<float>(mant | 0x400u), static_cast<int>(exp) - 25);
  return sign ? -mag : mag;
}

// f32 -> f64 (exact; NaN payloads kept, not quieted: the product quiets them).
double f32ToF64(float f) {
  if (!std::isnan(f)) return static_cast<double>(f);
  uint32_t b = std::bit_cast<uint32_t>(f);
  return std::bit_cast<double>((static_cast<uint64_t>(b >> 31) << 63) | 0x7ff0000000000000ull |
                               (static_cast<uint64_t>(b & 0x7fffffu) << 29));
}

// f64 -> f32 as x86 cvtsd2ss: nearest even; a NaN keeps its sign and the top of its payload.
float f64ToF32(double d) {
  if (!std::isnan(d)) return static_cast<float>(d);
  uint64_t b = std::bit_cast<uint64_t>(d);
  return std::bit_cast<float>(static_cast<uint32_t>(b >> 63) << 31 | 0x7fc00000u |
                              static_cast<uint32_t>((b >> 29) & 0x7fffffu));
}

int64_t signExtend(uint64_t bits, int width) {
  if (width == 64) return static_cast<int64_t>(bits);
  uint64_t sign = uint64_t{1} << (width - 1);
  bits &= (sign << 1) - 1;
  return static_cast<int64_t>((bits ^ sign) - sign);
}

bool isSignedInt(P t) {
  return t == P::kS8 || t == P::kS16 || t == P::kS32 || t == P::kS64;
}

// An element (raw bits of type t) converted to the accumulation type, as `convert` does.
float elementF32(P t, uint64_t bits) {
  switch (t) {
    case P::kBF16:
      return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
    case P::kF16:
      return f16BitsToF32(static_cast<uint16_t>(bits));
    case P::kF32:
      return std::bit_cast<float>(static_cast<uint32_t>(bits));
    default:
      if (isSignedInt(t)) return static_cast<float>(signExtend(bits, bitWidth(t)));
      return static_cast<float>(bits);
  }
}
double elementF64(P t, uint64_t bits) {
  if (t == P::kF64) return std::bit_cast<double>(bits);
  if (isFloat(t)) return f32ToF64(elementF32(t, bits));
  if (isSignedInt(t)) return static_cast<double>(signExtend(bits, bitWidth(t)));
  return static_cast<double>(bits);
}
uint64_t elementInt(P t, uint64_t bits) {
  return isSignedInt(t) ? static_cast<uint64_t>(signExtend(bits, bitWidth(t))) : bits;
}

// The final rounding of an accumulator to the result type (as `convert`).
uint64_t storeF32(P out, float v) {
  switch (out) {
    case P::kF32:
      return std::bit_cast<uint32_t>(v);
    case P::kBF16:
      return f32ToBf16(v).bits;
    case P::kF16:
      return f32ToF16(v).bits;
    default:
      ADD_FAILURE() << "no f32 accumulation for " << primitiveTypeName(out);
      return 0;
  }
}
uint64_t storeF64(P out, double v) {
  switch (out) {
    case P::kF64:
      return std::bit_cast<uint64_t>(v);
    case P::kF32:
      return std::bit_cast<uint32_t>(f64ToF32(v));
    case P::kBF16:
      return f32ToBf16(f64ToF32(v)).bits;  // through f32, as convert
    case P::kF16:
      return f64ToF16(v).bits;
    default:
      ADD_FAILURE() << "no f64 accumulation for " << primitiveTypeName(out);
      return 0;
  }
}

// ---- cases -------------------------------------------------------------------------------------

// out[b, i, j] = sum_p lhs[b, i, p] * rhs[b, p, j]; lhs stored [b?][m][k] or (lhs_t) [b?][k][m],
// rhs [b?][k][n] or (rhs_t) [b?][n][k]. batch == 0: no batch dimension.
struct Case {
  P lt, rt, ot;
  int64_t batch = 0, m = 1, k = 1, n = 1;
  bool lhs_t = false, rhs_t = false;
};

int64_t batches(const Case& c) {
  return std::max<int64_t>(c.batch, 1);
}
std::vector<int64_t> lhsDims(const Case& c) {
  std::vector<int64_t> d;
  if (c.batch) d.push_back(c.batch);
  d.push_back(c.lhs_t ? c.k : c.m);
  d.push_back(c.lhs_t ? c.m : c.k);
  return d;
}
std::vector<int64_t> rhsDims(const Case& c) {
  std::vector<int64_t> d;
  if (c.batch) d.push_back(c.batch);
  d.push_back(c.rhs_t ? c.n : c.k);
  d.push_back(c.rhs_t ? c.k : c.n);
  return d;
}
std::vector<int64_t> outDims(const Case& c) {
  std::vector<int64_t> d;
  if (c.batch) d.push_back(c.batch);
  d.push_back(c.m);
  d.push_back(c.n);
  return d;
}
int64_t lhsIndex(const Case& c, int64_t b, int64_t i, int64_t p) {
  return b * c.m * c.k + (c.lhs_t ? p * c.m + i : i * c.k + p);
}
int64_t rhsIndex(const Case& c, int64_t b, int64_t p, int64_t j) {
  return b * c.k * c.n + (c.rhs_t ? j * c.k + p : p * c.n + j);
}
int64_t outIndex(const Case& c, int64_t b, int64_t i, int64_t j) {
  return (b * c.m + i) * c.n + j;
}

std::string hloText(const Case& c) {
  int base = c.batch ? 1 : 0;
  std::string batch = c.batch ? "lhs_batch_dims={0}, rhs_batch_dims={0}, " : "";
  return "HloModule m\nENTRY e {\na = " + Shape(c.lt, lhsDims(c)).shortStr() +
         " parameter(0)\nb = " + Shape(c.rt, rhsDims(c)).shortStr() +
         " parameter(1)\nROOT d = " + Shape(c.ot, outDims(c)).shortStr() + " dot(a, b), " + batch +
         "lhs_contracting_dims={" + std::to_string(base + (c.lhs_t ? 0 : 1)) +
         "}, rhs_contracting_dims={" + std::to_string(base + (c.rhs_t ? 1 : 0)) + "}\n}\n";
}

uint64_t getBits(const Literal& l, int64_t i) {
  int e = byteSize(l.shape().elementType());
  uint64_t v = 0;
  std::memcpy(&v, l.bytes() + i * e, static_cast<size_t>(e));
  return v;
}
void setBits(Literal& l, int64_t i, uint64_t v) {
  int e = byteSize(l.shape().elementType());
  std::memcpy(l.bytes() + i * e, &v, static_cast<size_t>(e));
}

// Special bit patterns per float type: NaNs (+, -, payloads, signaling), +-inf, +-0, subnormals,
// the largest finite values and values whose products overflow.
std::vector<uint64_t> specials(P t) {
  switch (t) {
    case P::kF32:
      return {0x7fc00000, 0xffc00000, 0x7fc0beef, 0xffd00001, 0x7f800001, 0xffa5a5a5,
              0x7f800000, 0xff800000, 0x00000000, 0x80000000, 0x00000001, 0x807fffff,
              0x7f7fffff, 0xff7fffff, 0x64000000, 0xe4000000};
    case P::kBF16:
      return {0x7fc0, 0xffc0, 0x7fef, 0xffd1, 0x7f81, 0xffa5, 0x7f80, 0xff80,
              0x0000, 0x8000, 0x0001, 0x807f, 0x7f7f, 0xff7f, 0x6400, 0xe400};
    case P::kF16:
      return {0x7e00, 0xfe00, 0x7e5a, 0xff01, 0x7c01, 0xfd55, 0x7c00, 0xfc00,
              0x0000, 0x8000, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x7800, 0xf800};
    case P::kF64:
      return {0x7ff8000000000000, 0xfff8000000000000, 0x7ff80000deadbeef, 0xfffc000000000001,
              0x7ff0000000000001, 0xfff5555555555555, 0x7ff0000000000000, 0xfff0000000000000,
              0x0000000000000000, 0x8000000000000000, 0x0000000000000001, 0x800fffffffffffff,
              0x7fefffffffffffff, 0xffefffffffffffff, 0x6000000000000000, 0xe000000000000000};
    default: {  // integers: 0, +-1, the bounds
      int w = bitWidth(t);
      uint64_t mask = w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
      uint64_t top = uint64_t{1} << (w - 1);
      return {0, 1, mask, top, top - 1, top + 1};
    }
  }
}

// A finite value of moderate magnitude with a full significand.
uint64_t ordinary(P t, std::mt19937_64& rng) {
  uint64_t r = rng();
  switch (t) {
    case P::kF32:
      return (r & 0x807fffffu) | ((120 + (r >> 32) % 15) << 23);
    case P::kBF16:
      return ((r & 0x807fffffu) | ((120 + (r >> 32) % 15) << 23)) >> 16;
    case P::kF16:
      return (r & 0x83ffu) | ((11 + (r >> 32) % 8) << 10);
    case P::kF64:
      return (r & 0x800fffffffffffffull) | ((1016 + (r >> 52) % 15) << 52);
    default: {
      int w = bitWidth(t);
      return w == 64 ? r : r & ((uint64_t{1} << w) - 1);
    }
  }
}

Literal randomOperand(P t, const std::vector<int64_t>& dims, double density, std::mt19937_64& rng) {
  Literal l(Shape(t, dims));
  std::vector<uint64_t> sp = specials(t);
  std::uniform_real_distribution<double> u(0, 1);
  for (int64_t i = 0; i < l.elementCount(); ++i)
    setBits(l, i, u(rng) < density ? sp[rng() % sp.size()] : ordinary(t, rng));
  return l;
}

P accumulation(const Case& c) {
  if (isFloat(c.ot)) {
    return c.ot == P::kF64 || c.lt == P::kF64 || c.rt == P::kF64 ? P::kF64 : P::kF32;
  }
  return P::kU64;
}

// The documented result, element by element (raw bits of c.ot).
std::vector<uint64_t> reference(const Case& c, const Literal& a, const Literal& b) {
  std::vector<uint64_t> out(static_cast<size_t>(batches(c) * c.m * c.n));
  P acc = accumulation(c);
  int ow = bitWidth(c.ot);
  for (int64_t bb = 0; bb < batches(c); ++bb) {
    for (int64_t i = 0; i < c.m; ++i) {
      for (int64_t j = 0; j < c.n; ++j) {
        uint64_t& o = out[static_cast<size_t>(outIndex(c, bb, i, j))];
        if (acc == P::kF32) {
          float s = 0.0f;
          for (int64_t p = 0; p < c.k; ++p) {
            float x = elementF32(c.lt, getBits(a, lhsIndex(c, bb, i, p)));
            float y = elementF32(c.rt, getBits(b, rhsIndex(c, bb, p, j)));
            float prod = x86(x, y, [](float u, float v) { return u * v; });
            s = x86(s, prod, [](float u, float v) { return u + v; });
          }
          o = storeF32(c.ot, s);
        } else if (acc == P::kF64) {
          double s = 0.0;
          for (int64_t p = 0; p < c.k; ++p) {
            double x = elementF64(c.lt, getBits(a, lhsIndex(c, bb, i, p)));
            double y = elementF64(c.rt, getBits(b, rhsIndex(c, bb, p, j)));
            double prod = x86(x, y, [](double u, double v) { return u * v; });
            s = x86(s, prod, [](double u, double v) { return u + v; });
          }
          o = storeF64(c.ot, s);
        } else {
          uint64_t s = 0;
          for (int64_t p = 0; p < c.k; ++p) {
            s += elementInt(c.lt, getBits(a, lhsIndex(c, bb, i, p))) *
                 elementInt(c.rt, getBits(b, rhsIndex(c, bb, p, j)));
          }
          o = ow == 64 ? s : s & ((uint64_t{1} << ow) - 1);
        }
      }
    }
  }
  return out;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The operands of the block [b0,b1) x [i0,i1) x [j0,j1) of case c, and its case.
struct Block {
  Case c;
  Literal a, b;
};
Block blockOf(const Case& c, const Literal& a, const Literal& b, int64_t b0, int64_t b1, int64_t i0,
              int64_t i1, int64_t j0, int64_t j1) {
  Block blk{c, {}, {}};
  blk.c.batch = c.batch ? b1 - b0 : 0;
  blk.c.m = i1 - i0;
  blk.c.n = j1 - j0;
  blk.a = Literal(Shape(c.lt, lhsDims(blk.c)));
  blk.b = Literal(Shape(c.rt, rhsDims(blk.c)));
  for (int64_t bb = 0; bb < b1 - b0; ++bb) {
    for (int64_t p = 0; p < c.k; ++p) {
      for (int64_t i = 0; i < blk.c.m; ++i)
        setBits(blk.a, lhsIndex(blk.c, bb, i, p), getBits(a, lhsIndex(c, b0 + bb, i0 + i, p)));
      for (int64_t j = 0; j < blk.c.n; ++j)
        setBits(blk.b, rhsIndex(blk.c, bb, p, j), getBits(b, rhsIndex(c, b0 + bb, p, j0 + j)));
    }
  }
  return blk;
}

// A random partition of [0, n) into blocks of random sizes (sometimes all of one size).
std::vector<int64_t> cuts(int64_t n, std::mt19937_64& rng) {
  std::vector<int64_t> at = {0};
  int64_t fixed = rng() % 3 == 0 ? 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(n)) : 0;
  while (at.back() < n) {
    int64_t step = fixed ? fixed : 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
    at.push_back(std::min(n, at.back() + step));
  }
  return at;
}

class DotChecker {
 public:
  // Checks `got` (the evaluator's dot of c, or of a block at offsets b0, i0, j0 of c) against
  // the reference of c. Returns false after too many reported failures.
  bool check(const Case& c, const std::vector<uint64_t>& want, const Case& g, const Literal& got,
             int64_t b0, int64_t i0, int64_t j0, const std::string& what) {
    for (int64_t bb = 0; bb < batches(g); ++bb) {
      for (int64_t i = 0; i < g.m; ++i) {
        for (int64_t j = 0; j < g.n; ++j) {
          uint64_t w = want[static_cast<size_t>(outIndex(c, b0 + bb, i0 + i, j0 + j))];
          uint64_t v = getBits(got, outIndex(g, bb, i, j));
          if (v == w) continue;
          ADD_FAILURE() << what << ": element [" << b0 + bb << "," << i0 + i << "," << j0 + j
                        << "] is " << hex(v) << ", want " << hex(w) << "\n"
                        << hloText(g);
          return ++failures_ < 8;
        }
      }
    }
    return true;
  }
  bool ok() const { return failures_ < 8; }

 private:
  int failures_ = 0;
};

struct Types {
  P lt, rt, ot;
};

const Types kTypes[] = {
    {P::kF32, P::kF32, P::kF32},   {P::kBF16, P::kBF16, P::kBF16}, {P::kBF16, P::kBF16, P::kF32},
    {P::kF16, P::kF16, P::kF16},   {P::kF16, P::kF16, P::kF32},    {P::kF64, P::kF64, P::kF64},
    {P::kF32, P::kF32, P::kBF16},  {P::kBF16, P::kF32, P::kF32},   {P::kF32, P::kF64, P::kF32},
    {P::kBF16, P::kBF16, P::kF64}, {P::kS8, P::kS8, P::kF32},      {P::kS8, P::kS8, P::kS32},
    {P::kU8, P::kS8, P::kS32},     {P::kS16, P::kS16, P::kS32},    {P::kS32, P::kS32, P::kS32},
    {P::kU16, P::kU16, P::kU32},   {P::kS64, P::kS64, P::kS64},    {P::kU64, P::kS32, P::kU64},
    {P::kS8, P::kS8, P::kS8},
};

Case randomCase(const Types& t, std::mt19937_64& rng, int64_t max_mn, int64_t max_k) {
  Case c{t.lt, t.rt, t.ot};
  auto dim = [&](int64_t max) {
    return 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(max));
  };
  c.batch = rng() % 4 == 0 ? dim(3) : 0;
  c.m = dim(max_mn);
  c.k = dim(max_k);
  c.n = dim(max_mn);
  c.lhs_t = rng() % 4 == 0;
  c.rhs_t = rng() % 4 == 0;
  return c;
}

// Evaluates c on (a, b) and checks it and dots of blocks of its free dimensions against the
// reference.
void checkCase(DotChecker& checker, const Case& c, const Literal& a, const Literal& b,
               std::mt19937_64& rng) {
  std::vector<uint64_t> want = reference(c, a, b);
  Literal whole = eval(hloText(c), {a, b});
  if (!checker.check(c, want, c, whole, 0, 0, 0, "whole dot")) return;
  auto blocks = [&](const std::vector<int64_t>& bc, const std::vector<int64_t>& ic,
                    const std::vector<int64_t>& jc, const char* what) {
    for (size_t x = 0; x + 1 < bc.size(); ++x) {
      for (size_t y = 0; y + 1 < ic.size(); ++y) {
        for (size_t z = 0; z + 1 < jc.size(); ++z) {
          Block blk = blockOf(c, a, b, bc[x], bc[x + 1], ic[y], ic[y + 1], jc[z], jc[z + 1]);
          Literal got = eval(hloText(blk.c), {blk.a, blk.b});
          if (!checker.check(c, want, blk.c, got, bc[x], ic[y], jc[z], what)) return;
        }
      }
    }
  };
  int64_t nb = batches(c);
  std::vector<int64_t> all_b = {0, nb}, all_m = {0, c.m}, all_n = {0, c.n};
  blocks(all_b, all_m, cuts(c.n, rng), "column blocks");
  blocks(all_b, cuts(c.m, rng), all_n, "row blocks");
  // A few tiles of both (the first tiles of a random grid).
  std::vector<int64_t> ic = cuts(c.m, rng), jc = cuts(c.n, rng);
  ic.resize(std::min<size_t>(ic.size(), 4));
  jc.resize(std::min<size_t>(jc.size(), 4));
  blocks(all_b, ic, jc, "tiles");
  if (c.batch > 1) blocks(cuts(nb, rng), all_m, all_n, "batch blocks");
}

const double kDensities[] = {0.0, 0.03, 0.2, 0.6};

// Shapes up to 64 in every dimension, all element types, special values at several densities.
TEST(EvalDotProperties, SpecialValuesMatchTheScalarLoopAndBlocksOfFreeDimensions) {
  std::mt19937_64 rng(2026);
  DotChecker checker;
  for (const Types& t : kTypes) {
    for (int trial = 0; trial < 24 && checker.ok(); ++trial) {
      Case c = randomCase(t, rng, 64, 64);
      double da = kDensities[rng() % 4], db = kDensities[rng() % 4];
      Literal a = randomOperand(c.lt, lhsDims(c), da, rng);
      Literal b = randomOperand(c.rt, rhsDims(c), db, rng);
      SCOPED_TRACE(hloText(c) + "densities " + std::to_string(da) + " " + std::to_string(db));
      checkCase(checker, c, a, b, rng);
    }
  }
}

// The bits of +inf of float type t with the sign of `like`.
uint64_t infinityLike(P t, uint64_t like) {
  switch (t) {
    case P::kF32:
      return (like & 0x80000000u) | 0x7f800000u;
    case P::kBF16:
      return (like & 0x8000u) | 0x7f80u;
    case P::kF16:
      return (like & 0x8000u) | 0x7c00u;
    default:
      return (like & 0x8000000000000000ull) | 0x7ff0000000000000ull;
  }
}

// Long contractions cross the GEMM's k blocks (256 deep): NaNs (with payloads) only in the first
// block, infinities and zeros everywhere, so sums carried over from the first block as NaNs meet
// the default NaNs of inf*0 and inf-inf of later blocks, which hold no NaN operand.
TEST(EvalDotProperties, SpecialValuesAcrossContractionBlocks) {
  std::mt19937_64 rng(7);
  DotChecker checker;
  const Types types[] = {{P::kF32, P::kF32, P::kF32},
                         {P::kBF16, P::kBF16, P::kBF16},
                         {P::kF16, P::kF16, P::kF32},
                         {P::kF64, P::kF64, P::kF64}};
  for (const Types& t : types) {
    for (int trial = 0; trial < 4 && checker.ok(); ++trial) {
      Case c = randomCase(t, rng, 40, 700);
      c.k = std::max<int64_t>(c.k, 257);
      double density = trial % 2 ? 0.05 : 0.3;
      Literal a = randomOperand(c.lt, lhsDims(c), density, rng);
      Literal b = randomOperand(c.rt, rhsDims(c), density, rng);
      for (int64_t bb = 0; bb < batches(c); ++bb) {
        for (int64_t p = 256; p < c.k; ++p) {
          for (int64_t i = 0; i < c.m; ++i) {
            uint64_t x = getBits(a, lhsIndex(c, bb, i, p));
            if (std::isnan(elementF64(c.lt, x)))
              setBits(a, lhsIndex(c, bb, i, p), infinityLike(c.lt, x));
          }
          for (int64_t j = 0; j < c.n; ++j) {
            uint64_t x = getBits(b, rhsIndex(c, bb, p, j));
            if (std::isnan(elementF64(c.rt, x)))
              setBits(b, rhsIndex(c, bb, p, j), infinityLike(c.rt, x));
          }
        }
      }
      SCOPED_TRACE(hloText(c));
      checkCase(checker, c, a, b, rng);
    }
  }
}

// The colleague's case (rules_test dot-split-columns): bf16 [m,k] x [k,48] against its 16-column
// blocks, operands holding +-NaN, +-inf and +-0.
TEST(EvalDotProperties, Bf16ColumnBlocksOfSixteenMatchTheWholeDot) {
  std::mt19937_64 rng(48);
  DotChecker checker;
  for (int trial = 0; trial < 20 && checker.ok(); ++trial) {
    Case c{P::kBF16, P::kBF16, P::kBF16};
    c.m = 32;
    c.k = 8;
    c.n = 48;
    c.lhs_t = trial % 2 == 0;
    c.rhs_t = trial % 4 < 2;
    Literal a = randomOperand(c.lt, lhsDims(c), 0.4, rng);
    Literal b = randomOperand(c.rt, rhsDims(c), 0.4, rng);
    std::vector<uint64_t> want = reference(c, a, b);
    Literal whole = eval(hloText(c), {a, b});
    checker.check(c, want, c, whole, 0, 0, 0, "whole dot");
    for (int64_t j = 0; j < 48; j += 16) {
      Block blk = blockOf(c, a, b, 0, 1, 0, c.m, j, j + 16);
      checker.check(c, want, blk.c, eval(hloText(blk.c), {blk.a, blk.b}), 0, 0, j,
                    "16-column block");
    }
  }
}

}  // namespace
}  // namespace tacit::hlo
