// Native elementwise runs (src/hlo_eval/evaluator_native.cc) against the interpreted runs: random
// elementwise programs over every type and operation the code generator handles (and some it
// does not, which must leave their runs interpreted), on inputs full of NaNs with payloads,
// infinities, signed zeros, subnormals and extreme integers; the outputs must be identical bit
// for bit. Also the AMX spec's single-rounding fused multiply-add, the run the oracle batches.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "eval_test_util.h"
#include "hlo/parser.h"
#include "hlo_eval/evaluator.h"
#include "support/simd.h"

namespace tacit::hlo {
namespace {

// Native runs are compiled at the avx2 and avx512 SIMD levels (support/simd.h; TACIT_SIMD may
// cap the level: the suite runs at each, tests/hlo_eval/CMakeLists.txt).
bool nativeLevel() {
  return simd::level() >= simd::Level::kAvx2;
}

struct Var {
  std::string name, type;
};

const std::vector<std::string> kTypes = {"f64", "f32", "s64", "s32", "u64", "u32", "pred"};

bool isFloatName(const std::string& t) {
  return t == "f64" || t == "f32";
}
int widthOf(const std::string& t) {
  return t == "pred" ? 1 : (t.back() == '4' ? 8 : 4);
}

// A random program of elementwise operations over n elements; `fallback` adds one operation the
// code generator does not compile, somewhere in the program.
class ProgramGenerator {
 public:
  ProgramGenerator(std::mt19937_64& rng, int64_t n) : rng_(rng), n_(n) {}

  std::string generate(int ops, bool fallback) {
    for (size_t i = 0; i < kTypes.size(); ++i)
      add(kTypes[i], "parameter(" + std::to_string(i) + ")");
    if (pick(2) == 0) {  // a broadcast constant (a step of its own: it splits the run)
      std::string c = fresh();
      body_ += "  " + c + " = f64[] constant(-0.75)\n";
      add("f64", "broadcast(" + c + "), dimensions={}");
    }
    // Array constants: uniform ones (embedded in the code), and ones of period 64 or none.
    for (int c = static_cast<int>(pick(4)); c > 0; --c)
      constant(kTypes[pick(kTypes.size())]);
    int unsupported_at = fallback ? static_cast<int>(pick(static_cast<uint64_t>(ops))) : -1;
    for (int k = 0; k < ops; ++k) {
      if (k == unsupported_at) {
        Var x = anyOf("f64");
        add("f64", "negate(" + x.name + ")");
        continue;
      }
      step();
    }
    std::string root = "  ROOT out = (";
    std::string operands;
    std::vector<Var> outs = {vars_.back(), vars_[pick(vars_.size())], vars_[pick(vars_.size())]};
    for (size_t i = 0; i < outs.size(); ++i) {
      root += (i ? ", " : "") + shape(outs[i].type);
      operands += (i ? ", " : "") + outs[i].name;
    }
    return "HloModule native\n\nENTRY main {\n" + body_ + root + ") tuple(" + operands + ")\n}\n";
  }

 private:
  uint64_t pick(uint64_t n) { return rng_() % n; }
  std::string fresh() { return "v" + std::to_string(next_++); }
  std::string shape(const std::string& t) const { return t + "[" + std::to_string(n_) + "]"; }
  void add(const std::string& type, const std::string& expr) {
    Var v{fresh(), type};
    body_ += "  " + v.name + " = " + shape(type) + " " + expr + "\n";
    vars_.push_back(v);
  }
  Var anyOf(const std::string& type) {
    std::vector<Var> of;
    for (const Var& v : vars_)
      if (v.type == type) of.push_back(v);
    return of[pick(of.size())];
  }

  void constant(const std::string& type) {
    static const std::vector<std::string> kValues = {"0", "1", "-1", "3", "-7", "100"};
    static const std::vector<std::string> kFloats = {"0",    "-0",  "1.5",    "-2.25",  "inf",
                                                     "-inf", "nan", "1e-310", "3.4e38", "0.1"};
    static const std::vector<std::string> kUnsigned = {"0", "1", "3", "100", "4294967295"};
    const auto& values = type == "pred"      ? std::vector<std::string>{"true", "false"}
                         : isFloatName(type) ? kFloats
                         : type[0] == 'u'    ? kUnsigned
                                             : kValues;
    int kind = static_cast<int>(pick(3));  // uniform, period 64, arbitrary
    std::string first = values[pick(values.size())], text = "{";
    for (int64_t i = 0; i < n_; ++i) {
      const std::string& v = kind == 0   ? first
                             : kind == 1 ? values[static_cast<size_t>(i % 64) % values.size()]
                                         : values[pick(values.size())];
      text += (i ? ", " : "") + v;
    }
    add(type, "constant(" + text + "})");
  }

  void step() {
    static const std::vector<std::string> kDirs = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    const std::string& t = kTypes[pick(kTypes.size())];
    Var a = anyOf(t), b = anyOf(t);
    std::string ab = a.name + ", " + b.name;
    if (t == "pred") {
      switch (pick(5)) {
        case 0: {
          static const std::vector<std::string> kOps = {"and", "or", "xor"};
          add(t, kOps[pick(kOps.size())] + "(" + ab + ")");
          return;
        }
        case 1:
          add(t, "not(" + a.name + ")");
          return;
        case 2:
          add(t, "compare(" + ab + "), direction=" + (pick(2) ? "EQ" : "NE"));
          return;
        default: {
          const std::string& u = kTypes[pick(kTypes.size() - 1)];  // not pred
          add(u, "select(" + a.name + ", " + anyOf(u).name + ", " + anyOf(u).name + ")");
          return;
        }
      }
    }
    bool fl = isFloatName(t);
    switch (pick(4)) {
      case 0:
      case 1: {
        static const std::vector<std::string> kFloatOps = {"add", "subtract", "multiply", "divide"};
        static const std::vector<std::string> kIntOps = {"add", "subtract", "multiply", "and",
                                                         "or",  "xor",      "maximum",  "minimum"};
        const auto& ops = fl ? kFloatOps : kIntOps;
        add(t, ops[pick(ops.size())] + "(" + ab + ")");
        return;
      }
      case 2:
        if (fl && pick(3) == 0) {
          add("pred", "is-finite(" + a.name + ")");
        } else {
          add("pred", "compare(" + ab + "), direction=" + kDirs[pick(kDirs.size())]);
        }
        return;
      default:
        convert(a);
    }
  }

  // A convert the generator compiles, or a bitcast-convert between equal widths.
  void convert(const Var& a) {
    static const std::vector<std::pair<std::string, std::string>> kConverts = {
        {"f32", "f64"}, {"f64", "f32"}, {"s32", "f64"}, {"s32", "f32"}, {"s64", "f64"},
        {"s32", "s64"}, {"s32", "u64"}, {"u32", "s64"}, {"u32", "u64"}, {"s64", "s32"},
        {"u64", "u32"}, {"s64", "u32"}, {"s32", "u32"}, {"u64", "s64"}};
    std::vector<std::string> to;
    for (const auto& [from, into] : kConverts)
      if (from == a.type) to.push_back(into);
    if (!to.empty() && pick(3) != 0) {
      add(to[pick(to.size())], "convert(" + a.name + ")");
      return;
    }
    std::vector<std::string> same;
    for (const std::string& u : kTypes)
      if (u != a.type && u != "pred" && widthOf(u) == widthOf(a.type)) same.push_back(u);
    add(same[pick(same.size())], "bitcast-convert(" + a.name + ")");
  }

  std::mt19937_64& rng_;
  int64_t n_;
  int next_ = 0;
  std::vector<Var> vars_;
  std::string body_;
};

// Bits that exercise every rule: NaNs of both signs with payloads (quiet and signalling),
// infinities, signed zeros, subnormals, the largest finite values, exact integers, and random
// bits.
template <typename F, typename U>
F specialFloat(std::mt19937_64& rng) {
  constexpr int kBits = sizeof(U) * 8;
  constexpr int kMantissa = kBits == 64 ? 52 : 23;
  const U sign = U(1) << (kBits - 1);
  const U exponent = static_cast<U>(~U(0) >> 1) & ~static_cast<U>((U(1) << kMantissa) - 1);
  U payload = static_cast<U>(rng()) & static_cast<U>((U(1) << kMantissa) - 1);
  U s = (rng() & 1) ? sign : U(0);
  switch (rng() % 10) {
    case 0:
      return std::bit_cast<F>(static_cast<U>(s | exponent | (payload | 1)));  // NaN
    case 1:
      return std::bit_cast<F>(static_cast<U>(s | exponent));  // infinity
    case 2:
      return std::bit_cast<F>(s);  // signed zero
    case 3:
      return std::bit_cast<F>(static_cast<U>(s | (payload | 1)));  // subnormal
    case 4:
      return std::bit_cast<F>(static_cast<U>(s | (exponent - (U(1) << kMantissa)) | payload));
    case 5:
      return static_cast<F>(static_cast<int>(rng() % 200) - 100);
    case 6:
      return std::bit_cast<F>(static_cast<U>(rng()));
    default:
      return static_cast<F>(std::uniform_real_distribution<double>(-1e3, 1e3)(rng));
  }
}

template <typename I>
I specialInt(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0:
      return std::numeric_limits<I>::min() + static_cast<I>(rng() % 3);
    case 1:
      return std::numeric_limits<I>::max() - static_cast<I>(rng() % 3);
    case 2:
      return static_cast<I>(static_cast<int>(rng() % 20) - 10);
    default:
      return static_cast<I>(rng());
  }
}

std::vector<uint8_t> randomArray(const Shape& shape, std::mt19937_64& rng) {
  auto n = static_cast<size_t>(shape.elementCount());
  std::vector<uint8_t> bytes(static_cast<size_t>(shape.byteSize()));
  auto fill = [&](auto value_of) {
    using E = decltype(value_of());
    for (size_t i = 0; i < n; ++i) {
      E v = value_of();
      std::memcpy(bytes.data() + i * sizeof(E), &v, sizeof(E));
    }
  };
  switch (shape.elementType()) {
    case PrimitiveType::kF64:
      fill([&] { return specialFloat<double, uint64_t>(rng); });
      break;
    case PrimitiveType::kF32:
      fill([&] { return specialFloat<float, uint32_t>(rng); });
      break;
    case PrimitiveType::kS64:
      fill([&] { return specialInt<int64_t>(rng); });
      break;
    case PrimitiveType::kU64:
      fill([&] { return specialInt<uint64_t>(rng); });
      break;
    case PrimitiveType::kS32:
      fill([&] { return specialInt<int32_t>(rng); });
      break;
    case PrimitiveType::kU32:
      fill([&] { return specialInt<uint32_t>(rng); });
      break;
    case PrimitiveType::kPred:
      fill([&] { return static_cast<uint8_t>(rng() & 1); });
      break;
    default:
      ADD_FAILURE() << "no generator for " << shape.shortStr();
  }
  return bytes;
}

// Runs `text` with and without native runs on the same inputs; returns the native plan's count
// of native runs.
size_t expectNativeMatchesInterpreted(const std::string& text, std::mt19937_64& rng) {
  auto module = parseModule(text, "native.hlo");
  EvalOptions interpreted_options;
  interpreted_options.native_elementwise = false;
  EvalPlan native = EvalPlan::compile(*module->entry());
  EvalPlan interpreted = EvalPlan::compile(*module->entry(), interpreted_options);
  EXPECT_EQ(interpreted.nativeRunCount(), 0u);
  std::vector<std::vector<uint8_t>> inputs;
  std::vector<const void*> input_ptrs;
  for (const Shape& s : native.inputShapes()) {
    inputs.push_back(randomArray(s, rng));
    input_ptrs.push_back(inputs.back().data());
  }
  auto want = testing::runPlan(interpreted, input_ptrs);
  auto got = testing::runPlan(native, input_ptrs);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    if (got[i] == want[i]) continue;
    size_t at = 0;
    while (at < got[i].size() && got[i][at] == want[i][at])
      ++at;
    ADD_FAILURE() << "output " << i << " (" << native.outputShapes()[i].shortStr()
                  << ") differs first at byte " << at << "\n"
                  << text;
  }
  return native.nativeRunCount();
}

TEST(NativeElementwise, RandomProgramsMatchTheInterpreter) {
  std::mt19937_64 rng(20261202);
  const std::vector<int64_t> sizes = {72, 100, 128, 256, 384, 1000};
  int native_programs = 0, programs = 400;
  for (int p = 0; p < programs; ++p) {
    int64_t n = sizes[rng() % sizes.size()];
    bool fallback = rng() % 4 == 0;
    ProgramGenerator gen(rng, n);
    std::string text = gen.generate(4 + static_cast<int>(rng() % 28), fallback);
    size_t runs = expectNativeMatchesInterpreted(text, rng);
    if (n % 8 != 0) {
      EXPECT_EQ(runs, 0u) << text;
    }
    native_programs += runs > 0 ? 1 : 0;
    if (HasFailure()) return;
  }
  // Without AVX-512 nothing is compiled, and the comparison above is of the interpreter with
  // itself.
  if (!nativeLevel()) GTEST_SKIP() << "below the avx2 SIMD level: native runs are never compiled";
  EXPECT_GT(native_programs, programs / 2);
}

// More uniform 64-bit operands than AVX2 hoists, each added to a value that stays live: the
// run is generated again with fewer hoisted operands until its values fit the registers
// (RegisterBudget), and a scalar loaded at its use shares one register between its halves,
// which the result must not take before the second half is read. Natively run, identical.
TEST(NativeElementwise, ManyUniformWideOperandsFitTheRegisters) {
  std::mt19937_64 rng(11);
  // xx is computed in the run and stays live to the end, so a scalar's register is the lowest
  // free one when each y's result is allocated.
  std::string text =
      "HloModule uniforms\n\nENTRY main {\n  x = f64[16] parameter(0)\n"
      "  xx = f64[16] multiply(x, x)\n";
  std::string sum = "xx";
  for (int k = 1; k <= 12; ++k) {
    std::string c = "c" + std::to_string(k), v = std::to_string(k) + ".25", all = "{" + v;
    for (int i = 1; i < 16; ++i)
      all += ", " + v;
    text += "  " + c + " = f64[16] constant(" + all + "})\n";
    text += "  y" + std::to_string(k) + " = f64[16] " + (k % 2 ? "add" : "multiply") + "(xx, " + c +
            ")\n";
    std::string next = "sum" + std::to_string(k);
    text += "  " + next + " = f64[16] subtract(" + sum + ", y" + std::to_string(k) + ")\n";
    sum = next;
  }
  text += "  ROOT out = f64[16] add(" + sum + ", xx)\n}\n";
  for (int i = 0; i < 20; ++i) {
    size_t runs = expectNativeMatchesInterpreted(text, rng);
    if (nativeLevel()) {
      EXPECT_EQ(runs, 1u);
    }
  }
}

// The AMX spec's mm512_fmadd (one rounding, built from f64 operations) on `rows` x 16 lanes: 1
// as the oracle calls it in place (two groups of eight, straight-line), 2 (the most groups
// straight-line), 24 (batched: a loop).
std::string fmaddModule(int rows) {
  const std::string kText = R"(HloModule fmadd

ENTRY main {
  In1 = f32[24,16] parameter(0)
  In2 = f32[24,16] parameter(1)
  In3 = f32[24,16] parameter(2)
  a = f64[24,16] convert(In1)
  b = f64[24,16] convert(In2)
  c = f64[24,16] convert(In3)
  p = f64[24,16] multiply(a, b)
  s = f64[24,16] add(p, c)
  bv = f64[24,16] subtract(s, p)
  av = f64[24,16] subtract(s, bv)
  da = f64[24,16] subtract(p, av)
  db = f64[24,16] subtract(c, bv)
  err = f64[24,16] add(da, db)
  zero = f64[24,16] constant(ZERO)
  inexact = pred[24,16] compare(err, zero), direction=NE
  finite = pred[24,16] is-finite(s)
  bits = s64[24,16] bitcast-convert(s)
  one = s64[24,16] constant(ONE)
  lsb = s64[24,16] and(bits, one)
  zero64 = s64[24,16] constant(ZERO)
  even = pred[24,16] compare(lsb, zero64), direction=EQ
  adjust0 = pred[24,16] and(inexact, finite)
  adjust = pred[24,16] and(adjust0, even)
  spos = pred[24,16] compare(s, zero), direction=GT
  epos = pred[24,16] compare(err, zero), direction=GT
  away = pred[24,16] compare(spos, epos), direction=EQ
  minus1 = s64[24,16] constant(MINUS1)
  step = s64[24,16] select(away, one, minus1)
  moved = s64[24,16] add(bits, step)
  oddbits = s64[24,16] select(adjust, moved, bits)
  odd = f64[24,16] bitcast-convert(oddbits)
  ROOT out = f32[24,16] convert(odd)
}
)";
  // The spec's constants are arrays (no broadcast step splits the run).
  auto filled = [&](const std::string& v) {
    std::string row = "{" + v, all = "{";
    for (int i = 1; i < 16; ++i)
      row += ", " + v;
    row += "}";
    for (int r = 0; r < rows; ++r)
      all += (r ? ", " : "") + row;
    return all + "}";
  };
  std::string text = kText;
  for (const auto& [name, value] :
       {std::pair{"ZERO", "0"}, std::pair{"ONE", "1"}, std::pair{"MINUS1", "-1"}}) {
    for (size_t at; (at = text.find(name)) != std::string::npos;)
      text.replace(at, std::strlen(name), filled(value));
  }
  std::string shape = std::to_string(rows) + ",16";
  for (size_t at = 0; (at = text.find("24,16", at)) != std::string::npos; at += shape.size())
    text.replace(at, 5, shape);
  return text;
}

TEST(NativeElementwise, TheSingleRoundingFusedMultiplyAddRunsNatively) {
  std::mt19937_64 rng(7);
  for (int rows : {1, 2, 24}) {
    std::string text = fmaddModule(rows);
    for (int i = 0; i < 20; ++i) {
      size_t runs = expectNativeMatchesInterpreted(text, rng);
      if (nativeLevel()) {
        EXPECT_EQ(runs, 1u) << rows << " rows";
      }
    }
    // And against the hardware's fma, on finite inputs.
    auto module = parseModule(text, "fmadd.hlo");
    EvalPlan plan = EvalPlan::compile(*module->entry());
    if (nativeLevel()) {
      EXPECT_TRUE(plan.directKernel().has_value()) << rows << " rows";
    }
    auto n = static_cast<size_t>(rows) * 16;
    std::vector<float> x(n), y(n), z(n), out(n);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    for (size_t i = 0; i < n; ++i) {
      x[i] = dist(rng);
      y[i] = dist(rng);
      z[i] = dist(rng);
    }
    std::vector<const void*> in = {x.data(), y.data(), z.data()};
    std::vector<void*> result = {out.data()};
    plan.run(in, result);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(std::bit_cast<uint32_t>(out[i]),
                std::bit_cast<uint32_t>(std::fma(x[i], y[i], z[i])))
          << rows << " rows, element " << i;
    }
  }
}

}  // namespace
}  // namespace tacit::hlo
