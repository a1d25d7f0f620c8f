// Which NaN a binary float operation returns (docs/numerics.md, "Floating point"): x86's rule
// for the operation in HLO operand order. If the first operand is NaN, it (quieted); else if the
// second is, it (quieted); an invalid operation on numbers gives the default NaN (negative, zero
// payload). f16/bf16 compute in f32 and round, which keeps the sign and the top of the payload.
// Pinned on every path an elementwise binary op runs through: one element (scalar code), long
// arrays whose lengths are not multiples of the vector width (vectorised loops and their tails),
// fused chunked runs of elementwise steps, and the typed reduce loops against the same reducer
// run as a computation per element.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "eval_test_util.h"
#include "hlo/float16.h"

namespace tacit::hlo {
namespace {

using testing::eval;

// One float type: its name, width, and how its raw bits map to the compute type.
struct FloatType {
  const char* name;
  PrimitiveType type;
  int bytes;
  uint64_t quiet_bit;
  uint64_t default_nan;
  std::vector<uint64_t> nans;  // quiet and signalling, both signs, distinct payloads
  std::vector<uint64_t> numbers;
};

const std::vector<FloatType>& floatTypes() {
  static const std::vector<FloatType> kTypes = {
      {"f32",
       PrimitiveType::kF32,
       4,
       0x00400000,
       0xFFC00000,
       {0x7FC00001, 0xFFC12345, 0x7FA00005, 0xFF800003, 0x7FC00000, 0xFFC00000},
       {0x3FC00000 /*1.5*/, 0xC0000000 /*-2*/, 0x00000000, 0x80000000, 0x7F800000, 0xFF800000,
        0x3F800000 /*1*/, 0x00000001}},
      {"f64",
       PrimitiveType::kF64,
       8,
       0x0008000000000000ull,
       0xFFF8000000000000ull,
       {0x7FF8000000000001ull, 0xFFF8000123456789ull, 0x7FF4000000000005ull, 0xFFF0000000000003ull,
        0x7FF8000000000000ull, 0xFFF8000000000000ull},
       {0x3FF8000000000000ull, 0xC000000000000000ull, 0, 0x8000000000000000ull,
        0x7FF0000000000000ull, 0xFFF0000000000000ull, 0x3FF0000000000000ull, 1}},
      {"bf16",
       PrimitiveType::kBF16,
       2,
       0x0040,
       0xFFC0,
       {0x7FC1, 0xFFD5, 0x7FA1, 0xFF83, 0x7FC0, 0xFFC0},
       {0x3FC0, 0xC000, 0x0000, 0x8000, 0x7F80, 0xFF80, 0x3F80, 0x0001}},
      {"f16",
       PrimitiveType::kF16,
       2,
       0x0200,
       0xFE00,
       {0x7E01, 0xFE35, 0x7D01, 0xFC03, 0x7E00, 0xFE00},
       {0x3E00, 0xC000, 0x0000, 0x8000, 0x7C00, 0xFC00, 0x3C00, 0x0001}},
  };
  return kTypes;
}

bool isNan(const FloatType& t, uint64_t raw) {
  switch (t.bytes) {
    case 2:
      if (t.type == PrimitiveType::kBF16) return (raw & 0x7FFF) > 0x7F80;
      return (raw & 0x7FFF) > 0x7C00;
    case 4:
      return (raw & 0x7FFFFFFF) > 0x7F800000;
    default:
      return (raw & 0x7FFFFFFFFFFFFFFFull) > 0x7FF0000000000000ull;
  }
}

// The f32 compute value of raw f32/f16/bf16 bits (exact; a signalling NaN stays signalling: a
// conversion to double would quiet it, and libm treats the two differently: pow(sNaN, 0) is NaN),
// and the stored bits of an f32 (non-NaN) result.
float toF32(const FloatType& t, uint64_t raw) {
  if (t.type == PrimitiveType::kBF16) return bf16ToF32(bfloat16{static_cast<uint16_t>(raw)});
  if (t.type == PrimitiveType::kF16) return f16ToF32(half{static_cast<uint16_t>(raw)});
  return std::bit_cast<float>(static_cast<uint32_t>(raw));
}
uint64_t fromF32(const FloatType& t, float v) {
  if (t.type == PrimitiveType::kBF16) return f32ToBf16(v).bits;
  if (t.type == PrimitiveType::kF16) return f32ToF16(v).bits;
  return std::bit_cast<uint32_t>(v);
}

struct BinaryOp {
  const char* name;
  std::function<float(float, float)> f32;
  std::function<double(double, double)> f64;
};

const std::vector<BinaryOp>& binaryOps() {
  static const std::vector<BinaryOp> kOps = {
      {"add", [](float a, float b) { return a + b; }, [](double a, double b) { return a + b; }},
      {"subtract", [](float a, float b) { return a - b; },
       [](double a, double b) { return a - b; }},
      {"multiply", [](float a, float b) { return a * b; },
       [](double a, double b) { return a * b; }},
      {"divide", [](float a, float b) { return a / b; }, [](double a, double b) { return a / b; }},
      {"remainder", [](float a, float b) { return std::fmod(a, b); },
       [](double a, double b) { return std::fmod(a, b); }},
      {"power", [](float a, float b) { return std::pow(a, b); },
       [](double a, double b) { return std::pow(a, b); }},
      {"atan2", [](float a, float b) { return std::atan2(a, b); },
       [](double a, double b) { return std::atan2(a, b); }},
      {"maximum", nullptr, nullptr},
      {"minimum", nullptr, nullptr},
  };
  return kOps;
}

// The rule: a NaN result is the first NaN operand, quieted, or the default NaN when neither
// operand is NaN. A result that is not NaN (pow(1, NaN) = 1, maximum of numbers) is the
// operation's value, computed here only for non-NaN operands.
uint64_t expected(const FloatType& t, const BinaryOp& op, uint64_t a, uint64_t b) {
  if (op.f32 == nullptr) {  // maximum / minimum: NaN if either operand is
    if (isNan(t, a)) return a | t.quiet_bit;
    if (isNan(t, b)) return b | t.quiet_bit;
    return UINT64_MAX;  // not checked here (numerics_test pins the values)
  }
  if (t.bytes == 8) {
    double r = op.f64(std::bit_cast<double>(a), std::bit_cast<double>(b));
    if (!std::isnan(r)) return std::bit_cast<uint64_t>(r);
  } else {
    float r = op.f32(toF32(t, a), toF32(t, b));
    if (!std::isnan(r)) return fromF32(t, r);
  }
  if (isNan(t, a)) return a | t.quiet_bit;
  if (isNan(t, b)) return b | t.quiet_bit;
  return t.default_nan;
}

// The operand pairs: every ordered pair of distinct NaNs, each NaN with itself, NaN with every
// number in both orders, and the invalid operations on numbers.
std::vector<std::pair<uint64_t, uint64_t>> operandPairs(const FloatType& t) {
  std::vector<std::pair<uint64_t, uint64_t>> pairs;
  for (uint64_t x : t.nans) {
    for (uint64_t y : t.nans)
      pairs.emplace_back(x, y);
    for (uint64_t y : t.numbers) {
      pairs.emplace_back(x, y);
      pairs.emplace_back(y, x);
    }
  }
  for (uint64_t x : t.numbers) {
    for (uint64_t y : t.numbers)
      pairs.emplace_back(x, y);  // inf-inf, 0*inf, 0/0, fmod(x, 0), pow(-2, 1.5), ...
  }
  return pairs;
}

Literal rawLiteral(const FloatType& t, const std::vector<uint64_t>& raw,
                   std::vector<int64_t> dims) {
  Literal l(Shape(t.type, std::move(dims)));
  EXPECT_EQ(l.byteCount(), raw.size() * static_cast<size_t>(t.bytes));
  for (size_t i = 0; i < raw.size(); ++i)
    std::memcpy(l.bytes() + i * static_cast<size_t>(t.bytes), &raw[i],
                static_cast<size_t>(t.bytes));
  return l;
}

uint64_t rawAt(const FloatType& t, const Literal& l, size_t i) {
  uint64_t v = 0;
  std::memcpy(&v, l.bytes() + i * static_cast<size_t>(t.bytes), static_cast<size_t>(t.bytes));
  return v;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Evaluates `body` (parameters a, b of type T[n]) on the pairs laid out as pairs[(i * 7) % P]
// (every pair at many lane positions) and checks every element.
void checkArrays(const FloatType& t, const BinaryOp& op, int64_t n, const std::string& body,
                 const char* path) {
  auto pairs = operandPairs(t);
  std::vector<uint64_t> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
  for (size_t i = 0; i < a.size(); ++i) {
    const auto& p = pairs[(i * 7) % pairs.size()];
    a[i] = p.first;
    b[i] = p.second;
  }
  std::string s = std::string(t.name) + "[" + std::to_string(n) + "]";
  std::string text = "HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
                     " parameter(1)\n" + body + "\n}\n";
  for (size_t p = text.find("T["); p != std::string::npos; p = text.find("T[", p))
    text.replace(p, 1, t.name);
  for (size_t p = text.find("OP("); p != std::string::npos; p = text.find("OP(", p))
    text.replace(p, 2, op.name);
  for (size_t p = text.find("[N]"); p != std::string::npos; p = text.find("[N]", p))
    text.replace(p, 3, "[" + std::to_string(n) + "]");
  Literal r = eval(text, {rawLiteral(t, a, {n}), rawLiteral(t, b, {n})});
  int failures = 0;
  for (size_t i = 0; i < a.size() && failures < 8; ++i) {
    uint64_t want = expected(t, op, a[i], b[i]), got = rawAt(t, r, i);
    if (want == UINT64_MAX || want == got) continue;
    ++failures;
    ADD_FAILURE() << path << " " << t.name << " " << op.name << "(" << hex(a[i]) << ", "
                  << hex(b[i]) << ") at " << i << " of " << n << ": got " << hex(got) << ", want "
                  << hex(want);
  }
}

TEST(BinaryNan, OneElementIsTheFirstNanOperandQuieted) {
  for (const FloatType& t : floatTypes()) {
    for (const BinaryOp& op : binaryOps()) {
      for (auto [a, b] : operandPairs(t)) {
        std::string s = std::string(t.name) + "[]";
        Literal r = eval("HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
                             " parameter(1)\n  ROOT r = " + s + " " + op.name + "(a, b)\n}\n",
                         {rawLiteral(t, {a}, {}), rawLiteral(t, {b}, {})});
        uint64_t want = expected(t, op, a, b), got = rawAt(t, r, 0);
        if (want == UINT64_MAX) continue;
        EXPECT_EQ(hex(got), hex(want))
            << t.name << " " << op.name << "(" << hex(a) << ", " << hex(b) << ")";
      }
    }
  }
}

TEST(BinaryNan, VectorisedLoopsAndTheirTailsPickTheFirstNanOperand) {
  for (const FloatType& t : floatTypes()) {
    for (const BinaryOp& op : binaryOps()) {
      for (int64_t n : {5, 37, 1037, 4099})
        checkArrays(t, op, n, "  ROOT r = T[N] OP(a, b)", "vector");
    }
  }
}

TEST(BinaryNan, FusedChunkedRunsPickTheFirstNanOperand) {
  // Three elementwise steps over the same n > 64 elements run chunk by chunk (one fused step);
  // negating twice is exact, also on NaN.
  for (const FloatType& t : floatTypes()) {
    for (const BinaryOp& op : binaryOps()) {
      for (int64_t n : {67, 1037}) {
        checkArrays(t, op, n,
                    "  x = T[N] OP(a, b)\n  y = T[N] negate(x)\n  ROOT r = T[N] negate(y)",
                    "fused");
      }
    }
  }
}

// A reduce whose to_apply is `op(p0, p1)` (or `op(p1, p0)`) runs as a typed loop; the same
// reducer written so that it is not matched (an exact double negation after it) runs the
// computation per element. Both fold acc = to_apply(acc, x): a row [X, Y, numbers...] gives X
// (quieted) for op(acc, x) and Y for op(x, acc), or the init if it is NaN and comes first. Rows of
// 40 are rewritten into a reduce-window and a reduce (XLA's tree rule), each window and the final
// reduce starting from the init.
TEST(BinaryNan, TypedReduceLoopsAgreeWithTheReducerComputation) {
  for (const FloatType& t : floatTypes()) {
    for (const char* op : {"add", "multiply", "maximum", "minimum"}) {
      for (bool acc_first : {true, false}) {
        for (int64_t width : {3, 40}) {
          std::vector<uint64_t> raw, want_number, want_nan_init;
          uint64_t init_nan = t.nans[1];
          for (uint64_t x : t.nans) {
            for (uint64_t y : t.nans) {
              raw.push_back(x);
              raw.push_back(y);
              for (int64_t i = 2; i < width; ++i)
                raw.push_back(t.numbers[0]);
              want_number.push_back((acc_first ? x : y) | t.quiet_bit);
              // Rows of 40: the second window (numbers only) folds to the NaN init, and the
              // final reduce's last element is that partial.
              want_nan_init.push_back((acc_first || width > 32 ? init_nan : y) | t.quiet_bit);
            }
          }
          auto rows = static_cast<int64_t>(want_number.size());
          std::string T = t.name, call = std::string(op) + (acc_first ? "(x, y)" : "(y, x)");
          auto module = [&](bool plain) {
            std::string red =
                "red {\n  x = " + T + "[] parameter(0)\n  y = " + T + "[] parameter(1)\n";
            if (plain) {
              red += "  ROOT s = " + T + "[] " + call + "\n}\n";
            } else {
              red += "  s = " + T + "[] " + call + "\n  n = " + T +
                     "[] negate(s)\n  ROOT r = " + T + "[] negate(n)\n}\n";
            }
            return "HloModule m\n" + red + "ENTRY e {\n  a = " + T + "[" + std::to_string(rows) +
                   "," + std::to_string(width) + "] parameter(0)\n  z = " + T +
                   "[] parameter(1)\n  ROOT r = " + T + "[" + std::to_string(rows) +
                   "] reduce(a, z), dimensions={1}, to_apply=red\n}\n";
          };
          for (uint64_t init : {t.numbers[2], init_nan}) {
            std::vector<Literal> args;
            args.push_back(rawLiteral(t, raw, {rows, width}));
            args.push_back(rawLiteral(t, {init}, {}));
            Literal fast = eval(module(true), args), general = eval(module(false), args);
            const std::vector<uint64_t>& want = init == init_nan ? want_nan_init : want_number;
            for (int64_t i = 0; i < rows; ++i) {
              auto k = static_cast<size_t>(i);
              EXPECT_EQ(hex(rawAt(t, fast, k)), hex(want[k]))
                  << T << " typed reduce " << call << " width " << width << " row " << i << " init "
                  << hex(init);
              EXPECT_EQ(hex(rawAt(t, general, k)), hex(want[k]))
                  << T << " reduce " << call << " width " << width << " row " << i << " init "
                  << hex(init);
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tacit::hlo
