#include "differential/tiled.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <random>
#include <set>
#include <stdexcept>

#include "backend/tiling_internal.h"
#include "hlo/dtype.h"

namespace tacit::differential {
namespace {

std::string dims(int64_t a, int64_t b) {
  return "[" + std::to_string(a) + "," + std::to_string(b) + "]";
}

class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(g_);
  }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(g_) < p; }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uniform(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  std::mt19937_64 g_;
};

// A small HLO writer: parameters first, then the body; the last instruction is the root.
class Module {
 public:
  std::string param(const std::string& shape) {
    std::string n = "p" + std::to_string(params_count_);
    params_ += "  " + n + " = " + shape + " parameter(" + std::to_string(params_count_++) + ")\n";
    return n;
  }
  std::string op(const std::string& shape, const std::string& expr) {
    last_ = "v" + std::to_string(next_++);
    lines_.push_back(last_ + " = " + shape + " " + expr);
    return last_;
  }
  std::string constant(const std::string& type, const std::string& value) {
    return op(type + "[]", "constant(" + value + ")");
  }
  std::string broadcastScalar(const std::string& shape, const std::string& type,
                              const std::string& value) {
    return op(shape, "broadcast(" + constant(type, value) + "), dimensions={}");
  }
  void needAdd(const std::string& type) { add_type_ = type; }
  std::string text(const std::string& name) const {
    std::string t = "HloModule " + name + "\n\n";
    if (!add_type_.empty()) {
      t += "add_" + add_type_ + " {\n  x = " + add_type_ + "[] parameter(0)\n  y = " + add_type_ +
           "[] parameter(1)\n  ROOT s = " + add_type_ + "[] add(x, y)\n}\n\n";
    }
    t += "ENTRY main {\n" + params_;
    for (size_t i = 0; i < lines_.size(); ++i)
      t += (i + 1 == lines_.size() ? "  ROOT " : "  ") + lines_[i] + "\n";
    return t + "}\n";
  }

 private:
  std::string params_;
  int params_count_ = 0;
  std::vector<std::string> lines_;
  std::string last_, add_type_;
  int next_ = 0;
};

// What one generated kernel is, before its schedule: the result's dimensions, the ISA's unit tile
// per result dimension (the tile a schedule's sizes are multiples of), and for a dot its
// contraction (extent, unit depth, integer or not).
struct Draft {
  std::string kind;  // the category's kernel part
  Module m;
  std::vector<int64_t> result, unit;
  std::vector<int64_t> max_tile;  // per result dimension, the largest tile a unit takes (0: any)
  int64_t k = 0, depth = 0;       // contraction extent and unit depth; 0: no dot
  bool integer = false;
  std::string acc_type;  // the dot's element type (the accumulator's)
};

// An extent of 1 to `max_units` units; with probability `ragged`, ragged: 1 to unit/grain - 1
// grains short of that multiple (a remainder tile at the edge of every schedule).
int64_t extent(Rng& r, int64_t unit, int64_t max_units, double ragged, int64_t grain = 1) {
  int64_t units = r.uniform(1, max_units);
  int64_t e = units * unit;
  if (r.chance(ragged)) e -= grain * r.uniform(1, unit / grain - 1);
  return std::max<int64_t>(e, grain);
}

// ---------------------------------------------------------------------------------------------
// Gemmini (DIM = 16): int8 GEMMs accumulated in int32, saturated to int8 (clamp + convert), with
// a per-column int32 bias, a mac's D matrix, or the int32 result; a saturating elementwise add of
// large int8 matrices (the library's `add`) tiled by a given schedule.
// ---------------------------------------------------------------------------------------------

std::string sat8(Module& m, const std::string& x, int64_t rows, int64_t cols) {
  std::string lo = m.constant("s32", "-128"), hi = m.constant("s32", "127");
  std::string c = m.op("s32" + dims(rows, cols), "clamp(" + lo + ", " + x + ", " + hi + ")");
  return m.op("s8" + dims(rows, cols), "convert(" + c + ")");
}

std::string intDot(Module& m, const std::string& a8, const std::string& b8, int64_t rows, int64_t k,
                   int64_t cols) {
  std::string a = m.op("s32" + dims(rows, k), "convert(" + a8 + ")");
  std::string b = m.op("s32" + dims(k, cols), "convert(" + b8 + ")");
  return m.op("s32" + dims(rows, cols),
              "dot(" + a + ", " + b + "), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
}

void gemminiKernel(Draft& d, Rng& r) {
  const int64_t u = 16;
  bool ragged_any = false;
  auto ext = [&](int64_t max_units) {
    int64_t e = extent(r, u, max_units, 0.12);
    ragged_any = ragged_any || e % u != 0;
    return e;
  };
  if (r.chance(0.15)) {
    // The library's saturating add over many tiles: tiled only by a given schedule.
    int64_t rows = ext(8), cols = ext(8);
    std::string s8 = "s8" + dims(rows, cols), s32 = "s32" + dims(rows, cols);
    std::string a = d.m.op(s32, "convert(" + d.m.param(s8) + ")");
    std::string b = d.m.op(s32, "convert(" + d.m.param(s8) + ")");
    sat8(d.m, d.m.op(s32, "add(" + a + ", " + b + ")"), rows, cols);
    d.kind = "add-sat";
    d.result = {rows, cols};
    d.unit = {u, u};
  } else {
    int64_t rows = ext(8), cols = ext(8);
    int64_t k = r.chance(0.05) ? ext(8) : u * r.uniform(1, 8);
    ragged_any = ragged_any || k % u != 0;
    std::string a = d.m.param("s8" + dims(rows, k)), b = d.m.param("s8" + dims(k, cols));
    std::string prod = intDot(d.m, a, b, rows, k, cols);
    const std::string s32 = "s32" + dims(rows, cols);
    switch (r.uniform(0, 3)) {
      case 0:
        sat8(d.m, prod, rows, cols);
        d.kind = "dot-sat";
        break;
      case 1: {  // a per-column bias (a quantised layer)
        std::string bias = d.m.param("s32[" + std::to_string(cols) + "]");
        std::string bb = d.m.op(s32, "broadcast(" + bias + "), dimensions={1}");
        sat8(d.m, d.m.op(s32, "add(" + prod + ", " + bb + ")"), rows, cols);
        d.kind = "dot-bias-sat";
        break;
      }
      case 2: {  // mac: A·B + D, D an int8 matrix
        std::string dd = d.m.op(s32, "convert(" + d.m.param("s8" + dims(rows, cols)) + ")");
        sat8(d.m, d.m.op(s32, "add(" + prod + ", " + dd + ")"), rows, cols);
        d.kind = "dot-mac-sat";
        break;
      }
      default:
        d.kind = "dot-s32";  // the int32 accumulators as the result
        break;
    }
    d.result = {rows, cols};
    d.unit = {u, u};
    d.k = k, d.depth = u, d.integer = true, d.acc_type = "s32";
  }
  if (ragged_any) d.kind += "-ragged";
}

// ---------------------------------------------------------------------------------------------
// TPUv1: s8 rows of 256 times 256x256 weight tiles, int32 accumulators, activate (identity or
// ReLU, wrapping s32 -> s8). Rows are the unified buffer's: any count; a schedule takes row tiles
// in multiples of 32 and column tiles of 256. A quarter of the activated kernels have every
// operand and the result in 256x256 layout tiles (`-T256`: whole weight tiles contiguous, windows
// of whole layout tiles, docs/backend.md "Tiled layouts"); their tiles are multiples of 256.
// ---------------------------------------------------------------------------------------------

void tpuKernel(Draft& d, Rng& r) {
  const int kind = static_cast<int>(r.uniform(0, 2));
  const bool tiled = kind != 2 && r.chance(0.25);
  const std::string layout = tiled ? "{1,0:T(256,256)}" : "";
  const int64_t rows = tiled           ? 256 * r.uniform(1, 2)
                       : r.chance(0.3) ? 32 * r.uniform(1, 8)
                                       : r.uniform(1, 256);
  // At most one of K and N is 512 (the budget: both would be four weight tiles per row tile).
  const bool wide = r.chance(0.2);
  const bool wide_k = wide && r.chance(0.5);
  const int64_t k = wide_k ? 512 : 256, cols = wide && !wide_k ? 512 : 256;
  std::string x = d.m.param("s8" + dims(rows, k) + layout),
              w = d.m.param("s8" + dims(k, cols) + layout);
  std::string acc = intDot(d.m, x, w, rows, k, cols);
  const std::string s32 = "s32" + dims(rows, cols), s8 = "s8" + dims(rows, cols) + layout;
  switch (kind) {
    case 0:
      d.m.op(s8, "convert(" + acc + ")");
      d.kind = "dot-activate";
      break;
    case 1: {
      std::string z = d.m.broadcastScalar(s32, "s32", "0");
      d.m.op(s8, "convert(" + d.m.op(s32, "maximum(" + acc + ", " + z + ")") + ")");
      d.kind = "dot-relu";
      break;
    }
    default:
      d.kind = "dot-s32";
      break;
  }
  d.result = {rows, cols};
  d.unit = {tiled ? 256 : std::min<int64_t>(rows, 32), 256};
  d.k = k, d.depth = 256, d.integer = true, d.acc_type = "s32";
  if (tiled) d.kind += "-T256";
  if (rows % 32 != 0) d.kind += "-ragged";
}

// ---------------------------------------------------------------------------------------------
// QKV and QKV_new: bf16 64x64x64 gemms (f32 accumulation, one rounding), either orientation;
// softmax of the product (a row reduction: exp, bf16 row sums, divide) when its rows are one
// tile wide. No elementwise arithmetic.
// ---------------------------------------------------------------------------------------------

void qkvKernel(Draft& d, Rng& r) {
  const int64_t u = 64;
  // Rows may be ragged in steps of 16 (rows below the gemm's 64 are padded: dot-pad-rows).
  const int64_t rows = extent(r, u, 4, 0.2, 16);
  const bool softmax = r.chance(0.2);
  const int64_t cols = softmax ? u : u * r.uniform(1, 4);
  const int64_t k = r.chance(0.1) ? 128 : 64;
  const bool bt = r.chance(0.35);
  std::string a = d.m.param("bf16" + dims(rows, k));
  std::string b = d.m.param("bf16" + (bt ? dims(cols, k) : dims(k, cols)));
  const std::string out = "bf16" + dims(rows, cols);
  std::string p =
      d.m.op(out, "dot(" + a + ", " + b + "), lhs_contracting_dims={1}, rhs_contracting_dims={" +
                      (bt ? "1" : "0") + "}");
  d.kind = bt ? "dot-bt" : "dot";
  if (softmax) {
    std::string e = d.m.op(out, "exponential(" + p + ")");
    std::string z = d.m.constant("bf16", "0");
    d.m.needAdd("bf16");
    std::string s = d.m.op("bf16[" + std::to_string(rows) + "]",
                           "reduce(" + e + ", " + z + "), dimensions={1}, to_apply=add_bf16");
    std::string bs = d.m.op(out, "broadcast(" + s + "), dimensions={0}");
    d.m.op(out, "divide(" + e + ", " + bs + ")");
    d.kind += "-softmax";
  }
  if (k != u) d.kind += "-k128";
  d.result = {rows, cols};
  d.unit = {u, u};
  d.k = k, d.depth = u, d.integer = false, d.acc_type = "f32";
  if (rows % u != 0) d.kind += "-ragged";
}

// ---------------------------------------------------------------------------------------------
// AMX: u8 x s8 tile GEMMs (B in the VNNI layout T(16,4), K in blocks of 64), the int32 result in
// T(16,16) tiles or a oneDNN-style f32 epilogue (per-column bias, scale, ReLU) ending in f32 or
// requantised to u8; f32 GEMMs, whose contraction splits one product per step exactly (no f32
// dot unit: rank-1 updates onto zmm rows, in tiles of two rows); and large f32 elementwise chains
// on zmm rows, tiled by a given schedule.
// ---------------------------------------------------------------------------------------------

void amxKernel(Draft& d, Rng& r) {
  const int64_t u = 16;
  if (r.chance(0.15)) {
    const int64_t rows = 2 * r.uniform(1, 4), cols = u * r.uniform(1, 2), k = r.uniform(2, 8);
    d.m.op("f32" + dims(rows, cols), "dot(" + d.m.param("f32" + dims(rows, k)) + ", " +
                                         d.m.param("f32" + dims(k, cols)) +
                                         "), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
    d.kind = "dot-f32-chain";
    d.result = {rows, cols};
    d.unit = {2, u};
    d.max_tile = {2, 2 * u};  // more rows than two do not fit zmm with the sums in place
    d.k = k, d.depth = 1, d.integer = false, d.acc_type = "f32";
    return;
  }
  if (r.chance(0.25)) {
    int64_t rows = extent(r, u, 8, 0.2), cols = u * r.uniform(1, 8);
    const std::string m = "f32" + dims(rows, cols);
    std::string x = d.m.param(m);
    int ops = static_cast<int>(r.uniform(1, 3));
    for (int i = 0; i < ops; ++i) {
      switch (r.uniform(0, 3)) {
        case 0:
          x = d.m.op(m, "add(" + x + ", " + d.m.param(m) + ")");
          break;
        case 1:
          x = d.m.op(m, "maximum(" + x + ", " + d.m.broadcastScalar(m, "f32", "0") + ")");
          break;
        case 2:
          x = d.m.op(m, "multiply(" + x + ", " + d.m.broadcastScalar(m, "f32", "0.125") + ")");
          break;
        default:
          x = d.m.op(m,
                     "add(" + x + ", " +
                         d.m.op(m, "broadcast(" + d.m.param("f32[" + std::to_string(cols) + "]") +
                                       "), dimensions={1}") +
                         ")");
          break;
      }
    }
    d.kind = rows % u ? "elementwise-ragged" : "elementwise";
    d.result = {rows, cols};
    d.unit = {u, u};
    return;
  }
  const int epilogue = static_cast<int>(r.uniform(0, 2));
  // Ragged rows only with an f32 epilogue: the int32 result's tiles are whole 16x16 stores. Up
  // to 8 K blocks: contractions split into steps whose sums stay in tile registers.
  const int64_t rows = extent(r, u, 8, epilogue == 0 ? 0.0 : 0.2);
  const int64_t cols = u * r.uniform(1, 8), k = 64 * r.uniform(1, 8);
  std::string a = d.m.param("u8" + dims(rows, k) + "{1,0}");
  std::string b = d.m.param("s8" + dims(cols, k) + "{1,0:T(16,4)}");
  std::string wa = d.m.op("s32" + dims(rows, k), "convert(" + a + ")");
  std::string wb = d.m.op("s32" + dims(cols, k), "convert(" + b + ")");
  const std::string dot =
      "dot(" + wa + ", " + wb + "), lhs_contracting_dims={1}, rhs_contracting_dims={1}";
  const std::string m = "f32" + dims(rows, cols);
  if (epilogue == 0) {
    // Row-major (pitched tile stores, what tiles write) or oneDNN's T(16,16) tiles (whole).
    const bool tiled_layout = r.chance(0.25);
    d.m.op("s32" + dims(rows, cols) + (tiled_layout ? "{1,0:T(16,16)}" : "{1,0}"), dot);
    d.kind = tiled_layout ? "dot-s32-T16" : "dot-s32";
  } else {
    std::string x = d.m.op(m, "convert(" + d.m.op("s32" + dims(rows, cols), dot) + ")");
    if (r.chance(0.6)) {
      std::string bias = d.m.param("f32[" + std::to_string(cols) + "]");
      x = d.m.op(m, "add(" + x + ", " + d.m.op(m, "broadcast(" + bias + "), dimensions={1}") + ")");
    }
    if (r.chance(0.5))
      x = d.m.op(m, "multiply(" + x + ", " + d.m.broadcastScalar(m, "f32", "0.125") + ")");
    if (r.chance(0.5))
      x = d.m.op(m, "maximum(" + x + ", " + d.m.broadcastScalar(m, "f32", "0") + ")");
    if (epilogue == 1) {
      d.kind = "dot-f32";
    } else {  // requantised: clamp to [0, 255], round to nearest even, u8
      std::string c = d.m.op(m, "clamp(" + d.m.constant("f32", "0") + ", " + x + ", " +
                                    d.m.constant("f32", "255") + ")");
      d.m.op("u8" + dims(rows, cols),
             "convert(" + d.m.op(m, "round-nearest-even(" + c + ")") + ")");
      d.kind = "dot-u8";
    }
  }
  d.result = {rows, cols};
  d.unit = {u, u};
  d.k = k, d.depth = 64, d.integer = true, d.acc_type = "s32";
  if (rows % u) d.kind += "-ragged";
}

// ---------------------------------------------------------------------------------------------
// Trainium (NKI subset): the stationary-transposed bf16 GEMM At^T·B into fp32 PSUM (128
// partitions, up to 512 moving columns), with a per-row fp32 bias, ReLU and a bf16 result; a
// bf16 elementwise add and an fp32 row sum (tensor_reduce), tiled by a given schedule.
// ---------------------------------------------------------------------------------------------

void trainiumKernel(Draft& d, Rng& r) {
  const int64_t u = 128;
  const int roll = static_cast<int>(r.uniform(0, 99));
  if (roll < 15) {
    const int64_t rows = r.pick(std::vector<int64_t>{128, 256}),
                  cols = r.pick(std::vector<int64_t>{64, 128, 256});
    const std::string m = "bf16" + dims(rows, cols);
    d.m.op(m, "add(" + d.m.param(m) + ", " + d.m.param(m) + ")");
    d.kind = "elementwise";
    d.result = {rows, cols};
    d.unit = {u, std::min<int64_t>(cols, u)};
    d.max_tile = {u, 0};
    return;
  }
  if (roll < 30) {
    const int64_t rows = r.pick(std::vector<int64_t>{128, 256}),
                  cols = r.pick(std::vector<int64_t>{128, 256});
    std::string z = d.m.constant("f32", "0");
    d.m.needAdd("f32");
    d.m.op("f32[" + std::to_string(rows) + "]", "reduce(" + d.m.param("f32" + dims(rows, cols)) +
                                                    ", " + z +
                                                    "), dimensions={1}, to_apply=add_f32");
    d.kind = "reduce-rows";
    d.result = {rows};
    d.unit = {u};
    d.max_tile = {u};
    return;
  }
  const int64_t rows = r.pick(std::vector<int64_t>{64, 128, 256});
  const int64_t k = r.pick(std::vector<int64_t>{128, 256});
  const int64_t cols = r.chance(0.2) ? r.pick(std::vector<int64_t>{100, 200})
                                     : r.pick(std::vector<int64_t>{128, 256, 512});
  std::string at = d.m.param("bf16" + dims(k, rows)), b = d.m.param("bf16" + dims(k, cols));
  const std::string m = "f32" + dims(rows, cols);
  std::string x =
      d.m.op(m, "dot(" + at + ", " + b + "), lhs_contracting_dims={0}, rhs_contracting_dims={0}");
  d.kind = "dot";
  if (r.chance(0.6)) {
    std::string bias = d.m.param("f32[" + std::to_string(rows) + "]");
    x = d.m.op(m, "add(" + x + ", " + d.m.op(m, "broadcast(" + bias + "), dimensions={0}") + ")");
    d.kind += "-bias";
  }
  if (r.chance(0.5)) {
    x = d.m.op(m, "maximum(" + x + ", " + d.m.broadcastScalar(m, "f32", "0") + ")");
    d.kind += "-relu";
  }
  d.m.op("bf16" + dims(rows, cols), "convert(" + x + ")");
  d.result = {rows, cols};
  d.unit = {std::min<int64_t>(rows, u), std::min<int64_t>(cols, u)};
  // A tile's rows are PSUM partitions (128); its columns one PSUM bank of fp32 (512).
  d.max_tile = {u, 512};
  d.k = k, d.depth = u, d.integer = false, d.acc_type = "f32";
  if (cols % u) d.kind += "-ragged";
}

using KernelFn = void (*)(Draft&, Rng&);

KernelFn tiledGeneratorFor(const std::string& isa) {
  if (isa == "qkv" || isa == "qkv_new") return qkvKernel;
  if (isa == "gemmini") return gemminiKernel;
  if (isa == "amx") return amxKernel;
  if (isa == "tpuv1") return tpuKernel;
  if (isa == "trainium") return trainiumKernel;
  throw std::invalid_argument("no tiled differential generator for ISA '" + isa + "'");
}

uint64_t salt(const std::string& isa) {
  uint64_t h = 1469598103934665603ull ^ 0x7469'6c65'64ull;  // "tiled": not the other suite's
  for (char c : isa)
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// The sizes of every kind of output tile a schedule makes (full tiles and ragged remainders per
// dimension), as the tiled compile enumerates them.
std::vector<std::vector<int64_t>> tileKinds(const std::vector<int64_t>& result,
                                            const std::vector<int64_t>& tile) {
  std::vector<std::vector<int64_t>> kinds{{}};
  for (size_t i = 0; i < result.size(); ++i) {
    std::vector<int64_t> sizes;
    if (result[i] / tile[i] > 0) sizes.push_back(tile[i]);
    if (result[i] % tile[i] > 0) sizes.push_back(result[i] % tile[i]);
    std::vector<std::vector<int64_t>> next;
    for (const auto& k : kinds) {
      for (int64_t s : sizes) {
        auto x = k;
        x.push_back(s);
        next.push_back(std::move(x));
      }
    }
    kinds = std::move(next);
  }
  return kinds;
}

// A random schedule from a small space: one to four copies of the kernels' on-chip data (multiple
// buffering), per dimension the unit tile times 1, 2 or 4 (at most the
// dimension; the dimension itself where it is smaller than the unit), a random loop order, and for
// an integer dot whose contraction holds two or more unit depths, half the time a split into
// blocks of 1, 2 or 4 unit depths carried by one of the spec's accumulator buffers that holds the
// output tiles.
backend::TileSchedule randomSchedule(const taidl::Isa& isa, const Draft& d, Rng& r,
                                     std::string& kind) {
  backend::TileSchedule s{{}, {}, 0, ""};
  s.buffers = r.pick(std::vector<int64_t>{1, 2, 3, 4});
  for (size_t i = 0; i < d.result.size(); ++i) {
    std::vector<int64_t> sizes;
    for (int64_t f : {1, 2, 4}) {
      const bool fits = d.max_tile.empty() || d.max_tile[i] == 0 || d.unit[i] * f <= d.max_tile[i];
      if (d.unit[i] * f <= d.result[i] && fits) sizes.push_back(d.unit[i] * f);
    }
    s.tile.push_back(sizes.empty() ? d.result[i] : r.pick(sizes));
    s.order.push_back(static_cast<int64_t>(i));
  }
  // At most four unit tiles per tile: a larger tile kernel is a whole compile of many units (about
  // a second or the time limit each), which the default space does not try either.
  auto units = [&] {
    int64_t n = 1;
    for (size_t i = 0; i < s.tile.size(); ++i)
      n *= std::max<int64_t>(1, s.tile[i] / d.unit[i]);
    return n;
  };
  while (units() > 4) {
    size_t widest = 0;
    for (size_t i = 1; i < s.tile.size(); ++i) {
      if (s.tile[i] / d.unit[i] > s.tile[widest] / d.unit[widest]) widest = i;
    }
    s.tile[widest] /= 2;
  }
  for (size_t i = s.order.size(); i > 1; --i)
    std::swap(s.order[i - 1],
              s.order[static_cast<size_t>(r.uniform(0, static_cast<int64_t>(i) - 1))]);
  kind = "tiles";
  if (d.depth == 0 || d.k % d.depth != 0 || d.k < 2 * d.depth) return s;
  if (!d.integer) {
    // A float contraction split into unit-depth blocks (compiled with --reassociate, verified on
    // the blocked kernel), half the time, in unit tiles.
    std::vector<std::string> accumulators =
        accumulatorBuffers(isa, d.acc_type, tileKinds(d.result, s.tile));
    if (accumulators.empty() || r.chance(0.5)) return s;
    s.contraction = d.depth;
    s.accumulator = r.pick(accumulators);
    kind = "split-float";
    return s;
  }
  if (r.chance(0.4)) return s;
  // Mostly unit tiles: a step kernel of several units with its sums in accumulator rows is one
  // the solver rarely places within its limits (docs/backend.md), and takes them all.
  if (r.chance(0.7)) {
    for (size_t i = 0; i < s.tile.size(); ++i)
      s.tile[i] = std::min(d.unit[i], d.result[i]);
  }
  std::vector<std::string> accumulators =
      accumulatorBuffers(isa, d.acc_type, tileKinds(d.result, s.tile));
  if (accumulators.empty()) return s;
  std::vector<int64_t> blocks;
  for (int64_t f : {1, 2, 4}) {
    if (d.k % (d.depth * f) == 0 && d.k / (d.depth * f) >= 2) blocks.push_back(d.depth * f);
  }
  s.contraction = r.pick(blocks);
  s.accumulator = r.pick(accumulators);
  kind = s.contraction > d.depth && d.k / s.contraction >= 3 ? "split-wide" : "split";
  return s;
}

}  // namespace

std::vector<std::string> tiledIsas(const std::string& source_dir) {
  std::vector<std::string> isas{"qkv", "qkv_new", "gemmini", "amx", "tpuv1"};
  if (std::filesystem::exists(source_dir + "/isa/trainium.taidl")) isas.push_back("trainium");
  return isas;
}

std::vector<std::string> accumulatorBuffers(const taidl::Isa& isa, const std::string& element_type,
                                            const std::vector<std::vector<int64_t>>& tile_sizes) {
  std::vector<std::string> out;
  const hlo::PrimitiveType type =
      hlo::parsePrimitiveType(element_type).value_or(hlo::PrimitiveType::kInvalid);
  for (size_t b = 0; b < isa.buffers.size(); ++b) {
    bool holds = true;
    for (const std::vector<int64_t>& sizes : tile_sizes)
      holds = holds && backend::tiling::accumulators(isa, static_cast<int32_t>(b), type, sizes);
    if (holds) out.push_back(isa.buffers[b].name.text);
  }
  return out;
}

std::vector<TiledKernel> generateTiledKernels(const taidl::Isa& isa, const std::string& name,
                                              uint64_t seed, int count) {
  KernelFn fn = tiledGeneratorFor(name);
  Rng r(seed ^ salt(name));
  std::vector<TiledKernel> out;
  std::set<std::string> seen;
  for (int attempt = 0; static_cast<int>(out.size()) < count && attempt < count * 50; ++attempt) {
    Draft d;
    fn(d, r);
    std::string schedule_kind = "default";
    std::optional<backend::TileSchedule> schedule;
    // A third compile with the default space (what `tacit compile` does), the rest with a given
    // schedule (what a tuner does).
    if (!r.chance(1.0 / 3)) schedule = randomSchedule(isa, d, r, schedule_kind);
    const std::string category = d.kind + "/" + schedule_kind;
    std::string key = d.m.text("k") + (schedule ? schedule->json() : "");
    if (!seen.insert(key).second) continue;
    std::string kname = name + "_tiled_" + std::to_string(out.size()) + "_";
    for (char c : category)
      kname += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    out.push_back({GeneratedKernel{kname, category, Kind::kProbe, d.m.text(kname)}, schedule});
  }
  return out;
}

}  // namespace tacit::differential
