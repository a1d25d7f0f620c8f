#include "differential/generators.h"

#include <cctype>
#include <functional>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <stdexcept>
#include <utility>

namespace tacit::differential {
namespace {

// A tiny HLO text writer: parameters first, then instructions in order; the root is the last.
class Hlo {
 public:
  std::string param(const std::string& shape) {
    std::string n = "p" + std::to_string(params_.size());
    params_.push_back("  " + n + " = " + shape + " parameter(" + std::to_string(params_.size()) +
                      ")");
    return n;
  }
  std::string op(const std::string& shape, const std::string& expr) {
    std::string n = "v" + std::to_string(next_++);
    body_.push_back({n, shape + " " + expr});
    // Value numbering: equal expressions of equal operands get the same number.
    std::string key = shape + " ";
    static const std::regex operand(R"(\b[vp][0-9]+\b)");
    auto it = std::sregex_iterator(expr.begin(), expr.end(), operand);
    size_t pos = 0;
    for (; it != std::sregex_iterator(); ++it) {
      key += expr.substr(pos, static_cast<size_t>(it->position()) - pos) + "#" +
             std::to_string(number(it->str()));
      pos = static_cast<size_t>(it->position() + it->length());
    }
    key += expr.substr(pos);
    numbers_[n] = numbering_.emplace(key, numbering_.size()).first->second;
    return n;
  }
  // Whether two values are provably equal (the same value number).
  bool same(const std::string& a, const std::string& b) { return number(a) == number(b); }
  // One constant per (shape, value), emitted where first needed.
  std::string constant(const std::string& shape, const std::string& value) {
    auto key = shape + "=" + value;
    auto it = constants_.find(key);
    if (it != constants_.end()) return it->second;
    std::string n = op(shape, "constant(" + value + ")");
    constants_[key] = n;
    return n;
  }
  // `to_apply` computations for reduce, added once per element type.
  std::string addComputation(const std::string& type) {
    std::string n = "add_" + type;
    if (computations_.insert(n).second) {
      header_ += n + " {\n  x = " + type + "[] parameter(0)\n  y = " + type +
                 "[] parameter(1)\n  ROOT s = " + type + "[] add(x, y)\n}\n\n";
    }
    return n;
  }
  std::string maxComputation(const std::string& type) {
    std::string n = "max_" + type;
    if (computations_.insert(n).second) {
      header_ += n + " {\n  x = " + type + "[] parameter(0)\n  y = " + type +
                 "[] parameter(1)\n  ROOT m = " + type + "[] maximum(x, y)\n}\n\n";
    }
    return n;
  }
  size_t paramCount() const { return params_.size(); }
  size_t number(const std::string& value) {
    auto it = numbers_.find(value);
    if (it != numbers_.end()) return it->second;
    // A parameter: a number of its own.
    return numbers_[value] = numbering_.emplace("param " + value, numbering_.size()).first->second;
  }
  // The module text with the last instruction as ROOT (the body is never empty).
  std::string text(const std::string& name) const {
    std::string t = "HloModule " + name + "\n\n" + header_ + "ENTRY main {\n";
    for (const std::string& p : params_)
      t += p + "\n";
    for (size_t i = 0; i < body_.size(); ++i) {
      t += std::string(i + 1 == body_.size() ? "  ROOT " : "  ") + body_[i].first + " = " +
           body_[i].second + "\n";
    }
    return t + "}\n";
  }
  // The text without the module name (to detect duplicates).
  std::string key() const { return text("k"); }

 private:
  std::vector<std::string> params_;
  std::vector<std::pair<std::string, std::string>> body_;
  std::map<std::string, std::string> constants_;
  std::set<std::string> computations_;
  std::string header_;
  int next_ = 0;
  std::map<std::string, size_t> numbering_;  // expression (operands as numbers) -> number
  std::map<std::string, size_t> numbers_;    // value -> number
};

std::string dims(int64_t a, int64_t b) {
  return "[" + std::to_string(a) + "," + std::to_string(b) + "]";
}

// The generators' random choices: from a seeded engine, or read from a byte string (the fuzz
// target's input, so that a mutated byte changes one choice; zeros past its end).
class Rng {
 public:
  explicit Rng(uint64_t seed) : g_(seed) {}
  Rng(const uint8_t* bytes, size_t size) : bytes_(bytes), end_(bytes + size) {}
  int uniform(int lo, int hi) {
    if (bytes_ == nullptr) return std::uniform_int_distribution<int>(lo, hi)(g_);
    uint32_t v = byte() | (uint32_t{byte()} << 8);
    return lo + static_cast<int>(v % (static_cast<uint32_t>(hi - lo) + 1));
  }
  bool chance(double p) {
    if (bytes_ == nullptr) return std::uniform_real_distribution<double>(0, 1)(g_) < p;
    return (byte() + 0.5) / 256 < p;
  }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uniform(0, static_cast<int>(v.size()) - 1))];
  }

 private:
  uint8_t byte() { return bytes_ < end_ ? *bytes_++ : 0; }

  std::mt19937_64 g_;
  const uint8_t* bytes_ = nullptr;
  const uint8_t* end_ = nullptr;
};

struct Draft {
  std::string category;
  Kind kind = Kind::kExpressible;
  Hlo hlo;
};

// Operands of a random DAG: each use takes an existing value (chains, reuse) or a new parameter.
class Pool {
 public:
  Pool(Hlo& h, Rng& r, std::string shape) : h_(h), r_(r), shape_(std::move(shape)) {}
  std::string take(double reuse = 0.6) {
    if (!values_.empty() && r_.chance(reuse)) {
      // Prefer the newest values, so kernels chain rather than fan out.
      if (r_.chance(0.6)) return values_.back();
      return r_.pick(values_);
    }
    std::string p = h_.param(shape_);
    values_.push_back(p);
    return p;
  }
  void add(const std::string& v) { values_.push_back(v); }
  bool empty() const { return values_.empty(); }
  const std::vector<std::string>& values() const { return values_; }

 private:
  Hlo& h_;
  Rng& r_;
  std::string shape_;
  std::vector<std::string> values_;
};

// Data-movement-only kernels (copy, slice, concatenate, transpose pairs, reshape round trips) of
// `type[rows, cols]`: every ISA can express them with its loads and stores.
void movementKernel(Draft& d, Rng& r, const std::string& type, int64_t rows, int64_t cols) {
  d.category = "movement";
  d.kind = Kind::kProbe;
  std::string s = type + dims(rows, cols);
  switch (r.uniform(0, 3)) {
    case 0: {
      std::string a = d.hlo.param(s);
      d.hlo.op(s, "copy(" + a + ")");
      break;
    }
    case 1: {
      std::string a = d.hlo.param(type + dims(2 * rows, cols));
      int64_t off = r.chance(0.5) ? 0 : rows;
      d.hlo.op(s, "slice(" + a + "), slice={[" + std::to_string(off) + ":" +
                      std::to_string(off + rows) + "], [0:" + std::to_string(cols) + "]}");
      break;
    }
    case 2: {
      std::string a = d.hlo.param(s), b = d.hlo.param(s);
      d.hlo.op(type + dims(2 * rows, cols), "concatenate(" + a + ", " + b + "), dimensions={0}");
      break;
    }
    default: {
      std::string a = d.hlo.param(s);
      std::string f =
          d.hlo.op(type + "[" + std::to_string(rows * cols) + "]", "reshape(" + a + ")");
      d.hlo.op(s, "reshape(" + f + ")");
      break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// QKV and QKV_new: bf16 rows of 64; gemm is 64x64x64 (f32 accumulation, one rounding), loads
// row- or column-major (QKV) or an on-chip 64x64 transpose (QKV_new), softmax on gemm results
// (exp, bf16 row sums, divide). No elementwise arithmetic, no accumulation across gemms.
// ---------------------------------------------------------------------------------------------

const char* kBf = "bf16[64,64]";

std::string qkvDot(Hlo& h, const std::string& a, const std::string& b, bool rhs_transposed,
                   const std::string& shape = kBf) {
  return h.op(shape, "dot(" + a + ", " + b + "), lhs_contracting_dims={1}, rhs_contracting_dims={" +
                         (rhs_transposed ? "1" : "0") + "}");
}

std::string qkvSoftmax(Hlo& h, const std::string& x) {
  std::string e = h.op(kBf, "exponential(" + x + ")");
  std::string z = h.constant("bf16[]", "0");
  std::string s = h.op("bf16[64]", "reduce(" + e + ", " + z +
                                       "), dimensions={1}, to_apply=" + h.addComputation("bf16"));
  std::string b = h.op(kBf, "broadcast(" + s + "), dimensions={0}");
  return h.op(kBf, "divide(" + e + ", " + b + ")");
}

void qkvKernel(Draft& d, Rng& r) {
  Hlo& h = d.hlo;
  int roll = r.uniform(0, 99);
  if (roll < 70) {
    // Chains and DAGs of gemms (either orientation), softmax of gemm results, transposes.
    d.category = "chain";
    Pool pool(h, r, kBf);
    std::vector<std::string> softmaxable;   // gemm results not yet through a softmax
    std::map<std::string, int> transposes;  // values that are transposes of a parameter: how many
    int ops = r.uniform(1, 4);
    for (int i = 0; i < ops; ++i) {
      int k = r.uniform(0, 9);
      if (k < 6 || pool.empty()) {
        std::string a = pool.take(), b = pool.take(0.4);
        std::string v = qkvDot(h, a, b, r.chance(0.35));
        pool.add(v);
        softmaxable.push_back(v);
      } else if (k < 9 && !softmaxable.empty()) {
        std::string v = qkvSoftmax(h, softmaxable.back());
        softmaxable.clear();
        pool.add(v);
      } else {
        std::string x = pool.take(0.5);
        std::string t = h.op(kBf, "transpose(" + x + "), dimensions={1,0}");
        if (transposes.count(x) || x[0] == 'p') transposes[t] = transposes[x] + 1;
        pool.add(t);
      }
    }
    // An output equal to a parameter (a parameter, or an even number of transposes of one) is
    // finding F1.
    auto isParam = [&](const std::string& v) {
      return v[0] == 'p' || (transposes.count(v) && transposes[v] % 2 == 0);
    };
    const auto& v = pool.values();
    if (r.chance(0.1) && v.size() >= 2) {
      h.op("(" + std::string(kBf) + ", " + kBf + ")",
           "tuple(" + v[v.size() - 2] + ", " + v.back() + ")");
      d.category = "chain-tuple";
      if (isParam(v[v.size() - 2]) || isParam(v.back())) d.category += "-param-out";
      if (h.same(v[v.size() - 2], v.back())) d.category += "-dup-out";
    } else if (r.chance(0.1)) {
      std::string t = h.op(kBf, "transpose(" + v.back() + "), dimensions={1,0}");
      if (transposes.count(v.back())) transposes[t] = transposes[v.back()] + 1;
      d.category = "chain-transposed-out";
      if (isParam(t)) d.category += "-param-out";
    } else if (isParam(v.back())) {
      d.category += "-param-out";
    }
    return;
  }
  if (roll < 78) {
    // Attention with random orientation choices: softmax(Q·K or Q·Kᵀ)·V.
    d.category = "attention";
    std::string q = h.param(kBf), k = h.param(kBf), v = h.param(kBf);
    bool kt = r.chance(0.5);
    std::string s = kt ? qkvDot(h, q, k, true)
                       : qkvDot(h, q, h.op(kBf, "transpose(" + k + "), dimensions={1,0}"), false);
    std::string p = qkvSoftmax(h, s);
    qkvDot(h, p, v, r.chance(0.3));
    return;
  }
  if (roll < 86) {
    // Row tiling: [128,64]·[64,64], [64,64]·[64,128], [128,64]·[64,128].
    d.category = "tile128";
    d.kind = Kind::kProbe;
    int m = r.chance(0.5) ? 128 : 64, n = m == 64 || r.chance(0.5) ? 128 : 64;
    std::string a = h.param("bf16" + dims(m, 64)), b = h.param("bf16" + dims(64, n));
    qkvDot(h, a, b, false, "bf16" + dims(m, n));
    return;
  }
  if (roll < 90) {
    // Fewer rows than the gemm's 64 (needs padding).
    d.category = "rows<64";
    d.kind = Kind::kProbe;
    int m = r.pick(std::vector<int>{16, 32, 48});
    std::string a = h.param("bf16" + dims(m, 64)), b = h.param(kBf);
    qkvDot(h, a, b, false, "bf16" + dims(m, 64));
    return;
  }
  if (roll < 93) {
    // A contraction longer than 64: two gemms and an add the ISA lacks.
    d.category = "k128";
    d.kind = Kind::kProbe;
    std::string a = h.param("bf16[64,128]"), b = h.param("bf16[128,64]");
    qkvDot(h, a, b, false);
    return;
  }
  if (roll < 96) {
    // Softmax of an input (softmax works on d2, which only gemm and nothing from HBM writes).
    d.category = "softmax-of-input";
    d.kind = Kind::kProbe;
    qkvSoftmax(h, h.param(kBf));
    return;
  }
  movementKernel(d, r, "bf16", r.pick(std::vector<int>{16, 32, 64}), 64);
}

// ---------------------------------------------------------------------------------------------
// Gemmini (DIM = 16): int8 16x16 tiles; the library operations saturate to int8 (add, matmul,
// mac = A·B + C), int32 results through the accumulator (A·B, A·B + D), identity-matmul additions.
// ---------------------------------------------------------------------------------------------

struct Gemmini {
  Gemmini(Hlo& hlo, Rng& rng) : h(hlo), r(rng) {}
  Hlo& h;
  Rng& r;
  std::string t8 = "s8[16,16]", t32 = "s32[16,16]";
  std::map<std::string, std::string> widened;  // s8 value -> its s32 convert (sometimes reused)

  std::string widen(const std::string& x8, const std::string& shape = "s32[16,16]") {
    auto it = widened.find(x8);
    if (it != widened.end() && r.chance(0.5)) return it->second;
    return widened[x8] = h.op(shape, "convert(" + x8 + ")");
  }
  std::string sat8(const std::string& x32, const std::string& shape32 = "s32[16,16]",
                   const std::string& shape8 = "s8[16,16]") {
    std::string lo = h.constant("s32[]", "-128"), hi = h.constant("s32[]", "127");
    std::string c = h.op(shape32, "clamp(" + lo + ", " + x32 + ", " + hi + ")");
    return h.op(shape8, "convert(" + c + ")");
  }
  std::string dot(const std::string& a32, const std::string& b32,
                  const std::string& shape = "s32[16,16]", bool rhs_transposed = false) {
    return h.op(shape, "dot(" + a32 + ", " + b32 + "), lhs_contracting_dims={1}, " +
                           "rhs_contracting_dims={" + (rhs_transposed ? "1" : "0") + "}");
  }
  std::string add(const std::string& a, const std::string& b,
                  const std::string& shape = "s32[16,16]") {
    return r.chance(0.5) ? h.op(shape, "add(" + a + ", " + b + ")")
                         : h.op(shape, "add(" + b + ", " + a + ")");
  }
};

void gemminiKernel(Draft& d, Rng& r) {
  Hlo& h = d.hlo;
  Gemmini g(h, r);
  int roll = r.uniform(0, 99);
  if (roll < 72) {
    // DAGs of library operations on 16x16 tiles; int32 values where the accumulator keeps them.
    d.category = "chain";
    Pool p8(h, r, g.t8), p32(h, r, g.t32);
    int ops = r.uniform(1, 5);
    bool any32 = false;
    std::string last;
    bool last32 = false;
    for (int i = 0; i < ops; ++i) {
      int k = r.uniform(0, 11);
      if (k < 3) {  // add
        last = g.sat8(g.add(g.widen(p8.take()), g.widen(p8.take())));
        p8.add(last), last32 = false;
      } else if (k < 6) {  // matmul
        last = g.sat8(g.dot(g.widen(p8.take()), g.widen(p8.take(0.5))));
        p8.add(last), last32 = false;
      } else if (k < 9) {  // mac
        std::string prod = g.dot(g.widen(p8.take()), g.widen(p8.take(0.5)));
        last = g.sat8(g.add(prod, g.widen(p8.take(0.5))));
        p8.add(last), last32 = false;
      } else if (k < 10) {  // int32 matmul (accumulator result)
        last = g.dot(g.widen(p8.take()), g.widen(p8.take(0.5)));
        p32.add(last), last32 = true, any32 = true;
      } else if (k < 11) {  // int32 A·B + D
        std::string prod = g.dot(g.widen(p8.take()), g.widen(p8.take(0.5)));
        last = g.add(prod, p32.take(0.5));
        p32.add(last), last32 = true, any32 = true;
      } else {  // saturate an int32 value
        if (p32.empty()) {
          last = g.sat8(g.dot(g.widen(p8.take()), g.widen(p8.take())));
        } else {
          last = g.sat8(p32.take(0.9));
        }
        p8.add(last), last32 = false;
      }
    }
    if (any32) d.category = "chain-s32";
    // Roots: the last value, a tuple of the last two s8 values, or their concatenation.
    const auto& v8 = p8.values();
    if (!last32 && v8.size() >= 2 && v8.back() == last && r.chance(0.2)) {
      std::string prev = v8[v8.size() - 2];
      // A parameter as a tuple element or concatenated into the output (finding F1).
      bool passthrough = prev[0] == 'p';
      if (r.chance(0.5)) {
        h.op("(s8[16,16], s8[16,16])", "tuple(" + prev + ", " + last + ")");
        d.category += "-tuple";
        if (h.same(prev, last)) d.category += "-dup-out";
      } else {
        int dim = r.uniform(0, 1);
        h.op(dim == 0 ? "s8[32,16]" : "s8[16,32]",
             "concatenate(" + prev + ", " + last + "), dimensions={" + std::to_string(dim) + "}");
        d.category += "-concat";
      }
      if (passthrough) d.category += "-param-out";
    }
    return;
  }
  d.kind = Kind::kProbe;
  if (roll < 80 && r.chance(0.3)) {
    // Fewer rows than the array's 16 (a small batch): A is loaded with the rows after it in HBM.
    d.category = "rows<16";
    int m = r.pick(std::vector<int>{1, 4, 8, 12});
    std::string s8 = "s8" + dims(m, 16), s32 = "s32" + dims(m, 16);
    std::string prod = g.dot(g.widen(h.param(s8), s32), g.widen(h.param(g.t8)), s32);
    int k = r.uniform(0, 2);
    if (k == 1) prod = g.add(prod, g.widen(h.param(s8), s32), s32);  // mac
    if (k < 2) g.sat8(prod, s32, s8);                                // else the int32 product
    return;
  }
  if (roll < 80) {
    // Several tiles: the DMA moves up to four 16-column blocks; the array is 16x16.
    d.category = "multi-tile";
    std::vector<std::pair<int, int>> shapes{{32, 16}, {16, 32}, {32, 32}, {16, 64}, {64, 16}};
    auto [m, n] = r.pick(shapes);
    std::string s8 = "s8" + dims(m, n), s32 = "s32" + dims(m, n);
    if (r.chance(0.5)) {
      g.sat8(g.add(g.widen(h.param(s8), s32), g.widen(h.param(s8), s32), s32), s32, s8);
    } else {
      int k = r.pick(std::vector<int>{16, 32});
      std::string a = h.param("s8" + dims(m, k)), b = h.param("s8" + dims(k, n));
      g.sat8(g.dot(g.widen(a, "s32" + dims(m, k)), g.widen(b, "s32" + dims(k, n)), s32), s32, s8);
    }
    return;
  }
  if (roll < 84) {
    // Contraction over 32 or 64 (int32 accumulation of 16-wide blocks, then one saturation).
    d.category = "k>16";
    int k = r.chance(0.5) ? 32 : 64;
    std::string a = h.param("s8" + dims(16, k)), b = h.param("s8" + dims(k, 16));
    std::string prod = g.dot(g.widen(a, "s32" + dims(16, k)), g.widen(b, "s32" + dims(k, 16)));
    if (r.chance(0.5)) g.sat8(prod);
    return;
  }
  if (roll < 87) {
    // I-BERT helpers: int8 wrap-around add and transpose (HBM to HBM).
    d.category = "ibert-add-transpose";
    std::string a = h.param(g.t8);
    if (r.chance(0.5)) {
      h.op(g.t8, "add(" + a + ", " + h.param(g.t8) + ")");
    } else {
      h.op(g.t8, "transpose(" + a + "), dimensions={1,0}");
    }
    return;
  }
  if (roll < 90) {
    // A·Bᵀ (the transpose exists only as an HBM-to-HBM helper).
    d.category = "dot-rhs-transposed";
    g.sat8(g.dot(g.widen(h.param(g.t8)), g.widen(h.param(g.t8)), g.t32, true));
    return;
  }
  if (roll < 93) {
    // Subtraction: an identity matmul cannot negate.
    d.category = "subtract";
    g.sat8(h.op(g.t32, "subtract(" + g.widen(h.param(g.t8)) + ", " + g.widen(h.param(g.t8)) + ")"));
    return;
  }
  movementKernel(d, r, "s8", 16, r.chance(0.5) ? 16 : 32);
}

// ---------------------------------------------------------------------------------------------
// AMX + AVX-512: f32 vectors of 16 (zmm), elementwise add/sub/mul/max/min, scalar broadcast from
// memory, loadi of a constant; u8·s8 tile dot products in the VNNI layout (tdpbusd).
// ---------------------------------------------------------------------------------------------

// oneDNN-style epilogues (K5): an elementwise chain over a matrix of f32 rows — scalar scales,
// a per-column bias (broadcast along the rows), a per-row scale (broadcast along the columns),
// ReLU, clamp, another matrix — on an f32 or s32 input or on a tiled u8·s8 GEMM result (then a
// tuple of both), ending in f32 or requantised to u8. They are what piecewise compilation
// (backend/piecewise.h) splits into row pieces, and the pieces' inputs lie in every layout.
void epilogueKernel(Draft& d, Rng& r) {
  Hlo& h = d.hlo;
  d.category = "epilogue";
  bool gemm = r.chance(0.3);
  int rows = gemm ? r.pick(std::vector<int>{16, 32}) : r.pick(std::vector<int>{2, 4, 16, 32});
  int cols = gemm ? r.pick(std::vector<int>{16, 32}) : r.pick(std::vector<int>{16, 32, 48});
  const std::string m = "f32" + dims(rows, cols);
  std::string acc, x;
  if (gemm) {
    d.category = "epilogue-gemm";
    std::string a = h.op("s32" + dims(rows, 64), "convert(" + h.param("u8" + dims(rows, 64)) + ")");
    std::string b = h.op("s32" + dims(cols, 64),
                         "convert(" + h.param("s8" + dims(cols, 64) + "{1,0:T(16,4)}") + ")");
    acc = h.op("s32" + dims(rows, cols) + "{1,0:T(16,16)}",
               "dot(" + a + ", " + b + "), lhs_contracting_dims={1}, rhs_contracting_dims={1}");
    x = h.op(m, "convert(" + acc + ")");
  } else {
    x = r.chance(0.5) ? h.param(m) : h.op(m, "convert(" + h.param("s32" + dims(rows, cols)) + ")");
  }
  auto scalar = [&](const char* value) {
    return h.op(m, "broadcast(" + h.constant("f32[]", value) + "), dimensions={}");
  };
  auto broadcastParameter = [&](int n, int dim) {
    return h.op(m, "broadcast(" + h.param("f32[" + std::to_string(n) + "]") + "), dimensions={" +
                       std::to_string(dim) + "}");
  };
  int ops = r.uniform(1, 4);
  for (int i = 0; i < ops; ++i) {
    switch (r.uniform(0, 5)) {
      case 0:
        x = h.op(m, "multiply(" + x + ", " + scalar(r.chance(0.5) ? "0.125" : "2") + ")");
        break;
      case 1:  // a bias per column
        x = h.op(m, "add(" + x + ", " + broadcastParameter(cols, 1) + ")");
        break;
      case 2:  // a scale per row
        x = h.op(m, "multiply(" + x + ", " + broadcastParameter(rows, 0) + ")");
        break;
      case 3:
        x = h.op(m, "maximum(" + x + ", " + scalar("0") + ")");
        break;
      case 4:
        x = h.op(m, "minimum(" + x + ", " + h.param(m) + ")");
        break;
      default:
        x = h.op(m, "clamp(" + h.constant("f32[]", "-4") + ", " + x + ", " +
                        h.constant("f32[]", "64") + ")");
        break;
    }
  }
  std::string q = x;
  if (r.chance(0.5)) {  // requantised: clamp to [0, 255], round to nearest even, u8
    std::string c = h.op(m, "clamp(" + h.constant("f32[]", "0") + ", " + x + ", " +
                                h.constant("f32[]", "255") + ")");
    q = h.op("u8" + dims(rows, cols), "convert(" + h.op(m, "round-nearest-even(" + c + ")") + ")");
  }
  if (gemm) {
    std::string out = q == x ? m : "u8" + dims(rows, cols);
    h.op("(s32" + dims(rows, cols) + "{1,0:T(16,16)}, " + out + ")",
         "tuple(" + acc + ", " + q + ")");
  }
}

void amxKernel(Draft& d, Rng& r) {
  Hlo& h = d.hlo;
  const std::string v = "f32[1,16]";
  int roll = r.uniform(0, 99);
  if (roll < 72) {
    d.category = "vector-chain";
    Pool pool(h, r, v);
    int ops = r.uniform(1, 5);
    for (int i = 0; i < ops; ++i) {
      int k = r.uniform(0, 11);
      if (k < 9 || pool.empty()) {
        static const std::vector<std::string> bin{"add", "subtract", "multiply", "maximum",
                                                  "minimum"};
        std::string a = pool.take(), b = pool.take(0.5);
        pool.add(h.op(v, r.pick(bin) + "(" + a + ", " + b + ")"));
      } else if (k < 11) {  // a scalar parameter broadcast (vbroadcastss from memory)
        std::string s = h.op(v, "broadcast(" + h.param("f32[]") + "), dimensions={}");
        d.category = "vector-chain-broadcast";
        std::string a = pool.take();
        pool.add(h.op(v, (r.chance(0.5) ? "multiply(" : "add(") + a + ", " + s + ")"));
      } else {  // ReLU against a zero vector
        std::string z = h.op(v, "broadcast(" + h.constant("f32[]", "0") + "), dimensions={}");
        d.category = "vector-chain-relu";
        pool.add(h.op(v, "maximum(" + pool.take() + ", " + z + ")"));
      }
    }
    return;
  }
  d.kind = Kind::kProbe;
  if (roll < 76) {
    epilogueKernel(d, r);
    return;
  }
  if (roll < 80) {
    // Several vectors: rows of 16 (one zmm each), or a rank-1 f32[16*n].
    d.category = "vector-multi-row";
    int rows = r.pick(std::vector<int>{2, 4, 14});
    std::string s =
        r.chance(0.3) ? "f32[" + std::to_string(16 * rows / 2) + "]" : "f32" + dims(rows, 16);
    static const std::vector<std::string> bin{"add", "multiply", "maximum"};
    h.op(s, r.pick(bin) + "(" + h.param(s) + ", " + h.param(s) + ")");
    return;
  }
  if (roll < 92) {
    // u8 x s8 GEMMs in the VNNI layout (oneDNN K1/K2 shapes and the single tile).
    d.category = "tile-gemm";
    int m = r.pick(std::vector<int>{16, 32}), n = r.pick(std::vector<int>{16, 32});
    int k = r.pick(std::vector<int>{64, 128});
    std::string a = h.param("u8" + dims(m, k) + "{1,0}");
    std::string b = h.param("s8" + dims(n, k) + "{1,0:T(16,4)}");
    std::string wa = h.op("s32" + dims(m, k), "convert(" + a + ")");
    std::string wb = h.op("s32" + dims(n, k), "convert(" + b + ")");
    h.op("s32" + dims(m, n) + "{1,0:T(16,16)}",
         "dot(" + wa + ", " + wb + "), lhs_contracting_dims={1}, rhs_contracting_dims={1}");
    return;
  }
  if (roll < 96) {
    // f32 rank-1 update (oneDNN K3/K4 shapes): column of B times row A.
    d.category = "outer-product";
    int rows = r.pick(std::vector<int>{4, 8, 14}), cols = r.pick(std::vector<int>{16, 32, 48});
    std::string a = h.param("f32[" + std::to_string(cols) + "]");
    std::string b = h.param("f32" + dims(rows, 4));
    std::string row = h.op("f32" + dims(1, cols), "reshape(" + a + ")");
    std::string col = h.op("f32" + dims(rows, 1),
                           "slice(" + b + "), slice={[0:" + std::to_string(rows) + "], [0:1]}");
    h.op("f32" + dims(rows, cols),
         "dot(" + col + ", " + row + "), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
    return;
  }
  movementKernel(d, r, "f32", 1, 16);
}

// ---------------------------------------------------------------------------------------------
// TPUv1: s8 rows of 256; matmul of unified-buffer rows by a 256x256 weight tile (s32 into acc),
// activate (identity or ReLU, s32 -> s8 wrapping); host reads and writes of whole rows.
// ---------------------------------------------------------------------------------------------

void tpuKernel(Draft& d, Rng& r) {
  Hlo& h = d.hlo;
  int roll = r.uniform(0, 99);
  int n = r.uniform(1, 32);
  std::string rows8 = "s8" + dims(n, 256), rows32 = "s32" + dims(n, 256);
  if (roll < 75) {
    d.category = "matmul";
    d.kind = Kind::kProbe;  // the weight FIFO macros are not selectable (docs/isa.md)
    std::string x = h.param(rows8);
    int layers = r.uniform(1, 2);
    for (int l = 0; l < layers; ++l) {
      std::string w = h.param("s8[256,256]");
      std::string a = h.op(rows32, "convert(" + x + ")");
      std::string b = h.op("s32[256,256]", "convert(" + w + ")");
      std::string acc = h.op(
          rows32, "dot(" + a + ", " + b + "), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
      if (l + 1 == layers && r.chance(0.3)) break;  // the int32 accumulators as the result
      if (r.chance(0.5)) {
        d.category = "matmul-relu";
        std::string z = h.op(rows32, "broadcast(" + h.constant("s32[]", "0") + "), dimensions={}");
        acc = h.op(rows32, "maximum(" + acc + ", " + z + ")");
      } else {
        d.category = "matmul-activate";
      }
      x = h.op(rows8, "convert(" + acc + ")");
    }
    if (layers == 2) d.category += "-2layers";
    return;
  }
  movementKernel(d, r, "s8", n, 256);
}

// ---------------------------------------------------------------------------------------------
// VTA: int8 GEMMs of 1x16 input rows by 16x16 weight blocks ([out][in], as VTA keeps them) into
// int32 accumulators, requantised there by the ALU (immediate shifts, multiplies, adds, MIN / MAX
// clamps, a second accumulator tile: a bias loaded as int32) and stored truncated to int8; and
// elementwise ALU chains on int8 inputs sign-extended into the accumulators (ACC_8BIT loads).
// ---------------------------------------------------------------------------------------------

// An ALU epilogue over `x` (s32[rows, cols]); `extra` yields a second s32 operand.
std::string vtaEpilogue(Hlo& h, Rng& r, std::string x, const std::string& shape,
                        const std::function<std::string()>& extra, std::string& category) {
  auto splat = [&](int v) {
    return h.op(shape, "broadcast(" + h.constant("s32[]", std::to_string(v)) + "), dimensions={}");
  };
  int steps = r.uniform(1, 3);
  for (int i = 0; i < steps; ++i) {
    switch (r.uniform(0, 5)) {
      case 0:
        x = h.op(shape, "shift-right-arithmetic(" + x + ", " + splat(r.uniform(0, 12)) + ")");
        category += "-shr";
        break;
      case 1:
        x = h.op(shape, "multiply(" + x + ", " + splat(r.uniform(-8, 8)) + ")");
        category += "-mul";
        break;
      case 2:
        x = h.op(shape, "add(" + x + ", " + splat(r.uniform(-300, 300)) + ")");
        category += "-addimm";
        break;
      case 3:
        x = h.op(shape, "add(" + x + ", " + extra() + ")");
        category += "-add";
        break;
      case 4:
        x = h.op(shape, (r.chance(0.5) ? "maximum(" : "minimum(") + x + ", " + extra() + ")");
        category += "-minmax";
        break;
      default:
        x = h.op(shape, "maximum(" + x + ", " + splat(0) + ")");
        category += "-relu";
        break;
    }
  }
  if (r.chance(0.6)) {
    x = h.op(shape, "clamp(" + h.constant("s32[]", "-128") + ", " + x + ", " +
                        h.constant("s32[]", "127") + ")");
    category += "-clamp";
  }
  return x;
}

void vtaKernel(Draft& d, Rng& r) {
  Hlo& h = d.hlo;
  const int rows = r.pick(std::vector<int>{1, 2, 3, 4, 8, 16});
  if (r.chance(0.6)) {
    // GEMM: a[rows, 16] · Wᵀ with W [cols][16] (one or two 16x16 blocks), then the epilogue.
    const int cols = r.chance(0.7) ? 16 : 32;
    const std::string acc = "s32" + dims(rows, cols);
    d.category = cols == 16 ? "gemm" : "gemm2";
    std::string a = h.param("s8" + dims(rows, 16)), w = h.param("s8" + dims(cols, 16));
    std::string x =
        h.op(acc, "dot(" + a + ", " + w + "), lhs_contracting_dims={1}, rhs_contracting_dims={1}");
    auto bias = [&] { return h.param(acc); };
    x = vtaEpilogue(h, r, x, acc, bias, d.category);
    h.op("s8" + dims(rows, cols), "convert(" + x + ")");
    return;
  }
  // Elementwise: int8 inputs widened to int32, an ALU chain, truncated back.
  d.category = "alu";
  const std::string acc = "s32" + dims(rows, 16);
  Pool pool(h, r, "s8" + dims(rows, 16));
  auto widened = [&] { return h.op(acc, "convert(" + pool.take(0.3) + ")"); };
  std::string x = vtaEpilogue(h, r, widened(), acc, widened, d.category);
  h.op("s8" + dims(rows, 16), "convert(" + x + ")");
}

// ---------------------------------------------------------------------------------------------
// Trainium (NKI subset): the stationary-transposed bf16 GEMM `Atᵀ·B` (K = 128 partitions, fp32
// PSUM) with per-partition bias and ReLU epilogues; fp32 elementwise chains of bf16 or fp32 tiles
// (tensor_tensor, per-partition tensor_scalar); row reductions over the free dimension.
// ---------------------------------------------------------------------------------------------

void trainiumKernel(Draft& d, Rng& r) {
  Hlo& h = d.hlo;
  const int p = r.pick(std::vector<int>{32, 64, 128});
  const int roll = r.uniform(0, 99);
  auto f32 = [](int a, int b) { return "f32" + dims(a, b); };
  auto out = [&](const std::string& x, int a, int b) {
    if (r.chance(0.5)) {  // else the fp32 result, the last instruction, is the root
      h.op("bf16" + dims(a, b), "convert(" + x + ")");
      d.category += "-bf16";
    }
  };
  if (roll < 30) {
    d.category = "gemm";
    const int n = r.pick(std::vector<int>{128, 256, 512});
    std::string at = h.param("bf16" + dims(128, p)), b = h.param("bf16" + dims(128, n));
    std::string x = h.op(f32(p, n), "dot(" + at + ", " + b +
                                        "), lhs_contracting_dims={0}, rhs_contracting_dims={0}");
    if (r.chance(0.6)) {
      std::string bias = h.op(f32(p, n), "broadcast(" + h.param("f32[" + std::to_string(p) + "]") +
                                             "), dimensions={0}");
      x = h.op(f32(p, n), "add(" + x + ", " + bias + ")");
      d.category += "-bias";
    }
    if (r.chance(0.6)) {
      std::string z = h.op(f32(p, n), "broadcast(" + h.constant("f32[]", "0") + "), dimensions={}");
      x = h.op(f32(p, n), "maximum(" + x + ", " + z + ")");
      d.category += "-relu";
    }
    out(x, p, n);
    return;
  }
  const int f = r.pick(std::vector<int>{64, 100, 256, 512});
  const std::string in = r.chance(0.5) ? "bf16" : "f32";
  auto input = [&] {
    std::string v = h.param(in + dims(p, f));
    return in == "f32" ? v : h.op(f32(p, f), "convert(" + v + ")");
  };
  if (roll < 80) {
    d.category = "elementwise-" + in;
    std::string x = input();
    const int steps = r.uniform(1, 3);
    for (int i = 0; i < steps; ++i) {
      if (r.chance(0.6)) {
        const std::string op =
            r.pick(std::vector<std::string>{"add", "subtract", "multiply", "maximum", "minimum"});
        x = h.op(f32(p, f), op + "(" + x + ", " + input() + ")");
        d.category += "-" + op;
      } else {
        const std::string op = r.pick(std::vector<std::string>{"add", "multiply"});
        std::string s = h.op(f32(p, f), "broadcast(" + h.param("f32[" + std::to_string(p) + "]") +
                                            "), dimensions={0}");
        x = h.op(f32(p, f), op + "(" + x + ", " + s + ")");
        d.category += "-scalar-" + op;
      }
    }
    out(x, p, f);
    return;
  }
  if (roll < 95) {
    const bool sum = r.chance(0.5);
    d.category = std::string(sum ? "row-sum-" : "row-max-") + in;
    std::string reducer = sum ? h.addComputation("f32") : h.maxComputation("f32");
    std::string init = h.constant("f32[]", sum ? "0" : "-inf");
    h.op("f32[" + std::to_string(p) + "]",
         "reduce(" + input() + ", " + init + "), dimensions={1}, to_apply=" + reducer);
    return;
  }
  movementKernel(d, r, "bf16", p, f);
}

using KernelFn = void (*)(Draft&, Rng&);

KernelFn generatorFor(const std::string& isa) {
  if (isa == "qkv" || isa == "qkv_new") return qkvKernel;
  if (isa == "gemmini") return gemminiKernel;
  if (isa == "amx") return amxKernel;
  if (isa == "tpuv1") return tpuKernel;
  if (isa == "vta") return vtaKernel;
  if (isa == "trainium") return trainiumKernel;
  throw std::invalid_argument("no differential generator for ISA '" + isa + "'");
}

uint64_t isaSalt(const std::string& isa) {
  uint64_t h = 1469598103934665603ull;
  for (char c : isa)
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

GeneratedKernel finish(const std::string& name, Draft& d) {
  return {name, d.category, d.kind, d.hlo.text(name)};
}

}  // namespace

const std::vector<std::string>& generatorIsas() {
  static const std::vector<std::string> isas{"qkv",   "qkv_new", "gemmini", "amx",
                                             "tpuv1", "vta",     "trainium"};
  return isas;
}

std::vector<GeneratedKernel> generateKernels(const std::string& isa, uint64_t seed, int count) {
  KernelFn fn = generatorFor(isa);
  Rng r(seed ^ isaSalt(isa));
  std::vector<GeneratedKernel> out;
  std::set<std::string> seen;
  // Small menus repeat themselves; give up on distinctness after many tries.
  for (int attempt = 0; static_cast<int>(out.size()) < count && attempt < count * 50; ++attempt) {
    Draft d;
    fn(d, r);
    if (!seen.insert(d.hlo.key()).second) continue;
    std::string name = isa + "_" + std::to_string(out.size()) + "_";
    for (char c : d.category)
      name += (std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
    out.push_back(finish(name, d));
  }
  return out;
}

GeneratedKernel kernelFromBytes(const std::string& isa, const uint8_t* bytes, size_t size) {
  Rng r(bytes, size);
  Draft d;
  generatorFor(isa)(d, r);
  return finish(isa + "_fuzz", d);
}

std::vector<GeneratedKernel> inexpressibleKernels(const std::string& isa) {
  std::vector<GeneratedKernel> out;
  auto add = [&](const std::string& category, const std::string& shape, const std::string& op,
                 int arity) {
    Draft d;
    d.category = category;
    d.kind = Kind::kInexpressible;
    std::string args;
    for (int i = 0; i < arity; ++i)
      args += (i ? ", " : "") + d.hlo.param(shape);
    d.hlo.op(shape, op + "(" + args + ")");
    out.push_back(finish(isa + "_inexpressible_" + category, d));
  };
  if (isa == "qkv" || isa == "qkv_new") {
    add("tanh", "bf16[64,64]", "tanh", 1);
    add("add", "bf16[64,64]", "add", 2);
    add("f32_exp", "f32[64,64]", "exponential", 1);
    add("f64_multiply", "f64[64,64]", "multiply", 2);
    add("s8_add", "s8[64,64]", "add", 2);
  } else if (isa == "gemmini") {
    add("f64_add", "f64[16,16]", "add", 2);
    add("f32_multiply", "f32[16,16]", "multiply", 2);
    add("bf16_exp", "bf16[16,16]", "exponential", 1);
    add("s16_divide", "s16[16,16]", "divide", 2);
    add("s32_multiply", "s32[16,16]", "multiply", 2);
  } else if (isa == "amx") {
    add("f64_add", "f64[1,16]", "add", 2);
    add("tanh", "f32[1,16]", "tanh", 1);
    add("f32_divide", "f32[1,16]", "divide", 2);
    add("bf16_add", "bf16[1,16]", "add", 2);
    add("s16_multiply", "s16[1,16]", "multiply", 2);
  } else if (isa == "tpuv1") {
    add("f32_add", "f32[4,256]", "add", 2);
    add("tanh", "f32[4,256]", "tanh", 1);
    add("s8_multiply", "s8[4,256]", "multiply", 2);
    add("f64_subtract", "f64[4,256]", "subtract", 2);
  } else if (isa == "trainium") {
    add("f64_add", "f64[128,64]", "add", 2);
    add("s32_divide", "s32[128,64]", "divide", 2);
    add("tanh", "f32[128,64]", "tanh", 1);
  } else if (isa == "vta") {
    add("f32_add", "f32[1,16]", "add", 2);
    add("s32_divide", "s32[1,16]", "divide", 2);
    add("s16_add", "s16[1,16]", "add", 2);
    add("tanh", "f32[1,16]", "tanh", 1);
  } else {
    throw std::invalid_argument("no inexpressible kernels for ISA '" + isa + "'");
  }
  return out;
}

}  // namespace tacit::differential
