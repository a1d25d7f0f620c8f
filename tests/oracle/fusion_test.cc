// Fused elementwise runs of the evaluator's plans (PlanImpl::fuseElementwise), which the oracle's
// batched plans rely on: a run of elementwise steps over more than one chunk executes chunk by
// chunk, with its private temporaries in scratch and constants that repeat with the chunk's
// period stored once. Differential: the same computation on n elements (fused) and element by
// element (n = 1, never fused) must agree bit for bit on inputs with NaN payloads, signed zeros,
// infinities and subnormals.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "hlo/literal.h"
#include "hlo/parser.h"
#include "hlo_eval/evaluator.h"

namespace tacit::oracle {
namespace {

using hlo::Literal;
using hlo::PrimitiveType;

// f32 bit patterns: special values half the time, random bits otherwise.
std::vector<uint32_t> f32Bits(int64_t n, uint32_t seed) {
  const uint32_t special[] = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000,
                              0xffc00001, 0x7f800001, 0x7fa5a5a5, 0x00000001, 0x807fffff,
                              0x00800000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000,
                              0x33800000, 0x4b800000, 0x3effffff, 0x5f000000, 0xdf000000};
  std::mt19937 rng(seed);
  std::vector<uint32_t> out(static_cast<size_t>(n));
  for (uint32_t& v : out) {
    if (rng() % 2 == 0) {
      v = special[rng() % std::size(special)];
    } else {
      v = static_cast<uint32_t>(rng());
      if (rng() % 3 == 0) v &= 0x80ffffffu | (static_cast<uint32_t>(rng() % 8 + 120) << 23);
    }
  }
  return out;
}

Literal f32Literal(std::vector<int64_t> dims, const uint32_t* bits) {
  Literal l(hlo::Shape(PrimitiveType::kF32, std::move(dims)));
  std::memcpy(l.bytes(), bits, l.byteCount());
  return l;
}

std::string list(const std::vector<double>& v, size_t first, size_t count) {
  std::string s = "{";
  char buf[64];
  for (size_t i = 0; i < count; ++i) {
    std::snprintf(buf, sizeof(buf), "%s%.17g", i ? ", " : "", v[first + i]);
    s += buf;
  }
  return s + "}";
}

// Elementwise ops of every kind the fusion handles on n elements: binary (arithmetic, compare,
// bitwise), unary (negate, is-finite), converts (f32 <-> f16, f32 <-> f64, bitcasts), select with
// a per-element and with a scalar predicate, clamp with scalar bounds; constants that are not
// periodic, periodic with the chunk's period, and periodic but for their last element; results
// that are also operands of later ops.
std::string chainModule(int64_t n, size_t first, const std::vector<double>& c1,
                        const std::vector<double>& c2, const std::vector<double>& c3) {
  std::string N = std::to_string(n);
  auto f32 = [&](const char* t = "f32") { return std::string(t) + "[" + N + "]"; };
  std::string s = "HloModule chain\n\nENTRY %e {\n";
  s += "  %p0 = " + f32() + " parameter(0)\n";
  s += "  %p1 = " + f32() + " parameter(1)\n";
  s += "  %sp = pred[] parameter(2)\n";
  s += "  %c1 = " + f32() + " constant(" + list(c1, first, static_cast<size_t>(n)) + ")\n";
  s += "  %c2 = " + f32() + " constant(" + list(c2, first, static_cast<size_t>(n)) + ")\n";
  s += "  %c3 = " + f32("f64") + " constant(" + list(c3, first, static_cast<size_t>(n)) + ")\n";
  s += "  %lo = f32[] constant(-1000)\n";
  s += "  %hi = f32[] constant(1e30)\n";
  s += "  %m = " + f32() + " multiply(%p0, %c1)\n";
  s += "  %a = " + f32() + " add(%m, %p1)\n";
  s += "  %lt = " + f32("pred") + " compare(%a, %c2), direction=LT\n";
  s += "  %sel = " + f32() + " select(%lt, %a, %p0)\n";
  s += "  %ss = " + f32() + " select(%sp, %sel, %m)\n";
  s += "  %cl = " + f32() + " clamp(%lo, %ss, %hi)\n";
  s += "  %h = " + f32("f16") + " convert(%cl)\n";
  s += "  %back = " + f32() + " convert(%h)\n";
  s += "  %fin = " + f32("pred") + " is-finite(%a)\n";
  s += "  %d = " + f32() + " divide(%back, %p1)\n";
  s += "  %wide = " + f32("f64") + " convert(%d)\n";
  s += "  %w = " + f32("f64") + " multiply(%wide, %c3)\n";
  s += "  %bits = " + f32("s64") + " bitcast-convert(%w)\n";
  s += "  %x = " + f32("s64") + " xor(%bits, %bits)\n";
  s += "  %sum = " + f32("s64") + " add(%bits, %x)\n";
  s += "  %r = " + f32("f64") + " bitcast-convert(%sum)\n";
  s += "  %neg = " + f32("f64") + " negate(%r)\n";
  s += "  %narrow = " + f32() + " convert(%neg)\n";
  s += "  ROOT %t = (" + f32() + ", " + f32("pred") + ", " + f32() + ", " + f32("f64") +
       ") tuple(%narrow, %fin, %m, %w)\n";
  s += "}\n";
  return s;
}

Literal run(const std::string& text, std::vector<Literal> args) {
  auto m = hlo::parseModule(text, "chain.hlo");
  hlo::EvalPlan plan = hlo::EvalPlan::compile(*m->entry());
  return plan.run(args);
}

void expectSameBytes(const Literal& fused, const Literal& single, int64_t index,
                     const std::string& what) {
  size_t elem = single.byteCount();
  ASSERT_EQ(fused.byteCount() % elem, 0u);
  EXPECT_EQ(std::memcmp(fused.bytes() + static_cast<size_t>(index) * elem, single.bytes(), elem), 0)
      << what << " element " << index;
}

TEST(Fusion, ElementwiseRunsMatchElementByElementEvaluation) {
  for (int64_t n : {65, 200, 256}) {
    std::vector<double> c1, c2, c3;
    for (int64_t i = 0; i < n; ++i) {
      c1.push_back(static_cast<double>(i % 37) * 0.25 - 4);                 // not periodic
      c2.push_back(static_cast<double>(i % 64) * 0.5 - 16);                 // period 64
      c3.push_back(i == n - 1 ? 3.0 : static_cast<double>(i % 64) - 31.5);  // all but the last
    }
    std::vector<uint32_t> b0 = f32Bits(n, 1 + static_cast<uint32_t>(n)),
                          b1 = f32Bits(n, 2 + static_cast<uint32_t>(n));
    for (bool sp : {false, true}) {
      Literal pred(hlo::Shape(PrimitiveType::kPred, {}));
      pred.bytes()[0] = sp ? 1 : 0;
      Literal fused = run(chainModule(n, 0, c1, c2, c3),
                          {f32Literal({n}, b0.data()), f32Literal({n}, b1.data()), pred});
      ASSERT_TRUE(fused.isTuple());
      for (int64_t i = 0; i < n; ++i) {
        auto k = static_cast<size_t>(i);
        Literal single = run(chainModule(1, k, c1, c2, c3),
                             {f32Literal({1}, &b0[k]), f32Literal({1}, &b1[k]), pred});
        for (size_t o = 0; o < single.elements().size(); ++o)
          expectSameBytes(fused.elements()[o], single.elements()[o], i,
                          "n=" + std::to_string(n) + " output " + std::to_string(o));
      }
    }
  }
}

// The AVX-512 fused multiply-add model of isa/amx.taidl as the oracle batches it (a leading
// batch dimension, constants repeated per item): fused over 24 items it equals the unbatched
// computation per item, and its plan keeps chunk-sized temporaries and constants (it held
// 30 KiB of full-size ones unfused).
TEST(Fusion, BatchedFmaddModelMatchesEachItemAndIsSmall) {
  auto module = [](int64_t items) {
    std::string b = std::to_string(items);
    auto t = [&](const char* e) { return std::string(e) + "[" + b + ",16]"; };
    auto zeros = [&](int64_t v) {
      std::string s = "{";
      for (int64_t i = 0; i < items; ++i) {
        s += i ? ", {" : "{";
        for (int k = 0; k < 16; ++k)
          s += (k ? ", " : "") + std::to_string(v);
        s += "}";
      }
      return s + "}";
    };
    std::string s = "HloModule fma\n\nENTRY %e {\n";
    s += "  %In1 = " + t("f32") + " parameter(0)\n";
    s += "  %In2 = " + t("f32") + " parameter(1)\n";
    s += "  %In3 = " + t("f32") + " parameter(2)\n";
    s += "  %a = " + t("f64") + " convert(%In1)\n";
    s += "  %b = " + t("f64") + " convert(%In2)\n";
    s += "  %c = " + t("f64") + " convert(%In3)\n";
    s += "  %p = " + t("f64") + " multiply(%a, %b)\n";
    s += "  %s = " + t("f64") + " add(%p, %c)\n";
    s += "  %bv = " + t("f64") + " subtract(%s, %p)\n";
    s += "  %av = " + t("f64") + " subtract(%s, %bv)\n";
    s += "  %da = " + t("f64") + " subtract(%p, %av)\n";
    s += "  %db = " + t("f64") + " subtract(%c, %bv)\n";
    s += "  %err = " + t("f64") + " add(%da, %db)\n";
    s += "  %zero = " + t("f64") + " constant(" + zeros(0) + ")\n";
    s += "  %inexact = " + t("pred") + " compare(%err, %zero), direction=NE\n";
    s += "  %finite = " + t("pred") + " is-finite(%s)\n";
    s += "  %bits = " + t("s64") + " bitcast-convert(%s)\n";
    s += "  %one = " + t("s64") + " constant(" + zeros(1) + ")\n";
    s += "  %lsb = " + t("s64") + " and(%bits, %one)\n";
    s += "  %zero64 = " + t("s64") + " constant(" + zeros(0) + ")\n";
    s += "  %even = " + t("pred") + " compare(%lsb, %zero64), direction=EQ\n";
    s += "  %adjust0 = " + t("pred") + " and(%inexact, %finite)\n";
    s += "  %adjust = " + t("pred") + " and(%adjust0, %even)\n";
    s += "  %spos = " + t("pred") + " compare(%s, %zero), direction=GT\n";
    s += "  %epos = " + t("pred") + " compare(%err, %zero), direction=GT\n";
    s += "  %away = " + t("pred") + " compare(%spos, %epos), direction=EQ\n";
    s += "  %minus1 = " + t("s64") + " constant(" + zeros(-1) + ")\n";
    s += "  %step = " + t("s64") + " select(%away, %one, %minus1)\n";
    s += "  %moved = " + t("s64") + " add(%bits, %step)\n";
    s += "  %oddbits = " + t("s64") + " select(%adjust, %moved, %bits)\n";
    s += "  %odd = " + t("f64") + " bitcast-convert(%oddbits)\n";
    s += "  ROOT %Out0 = " + t("f32") + " convert(%odd)\n";
    return s + "}\n";
  };
  constexpr int64_t kItems = 24;
  std::vector<uint32_t> in[3];
  for (uint32_t k = 0; k < 3; ++k)
    in[k] = f32Bits(kItems * 16, 10 + k);
  auto batched = hlo::parseModule(module(kItems), "fma.hlo");
  hlo::EvalPlan plan = hlo::EvalPlan::compile(*batched->entry());
  EXPECT_LT(plan.workspaceBytes(), 10000u);
  Literal all = plan.run(std::vector<Literal>{f32Literal({kItems, 16}, in[0].data()),
                                              f32Literal({kItems, 16}, in[1].data()),
                                              f32Literal({kItems, 16}, in[2].data())});
  for (int64_t i = 0; i < kItems; ++i) {
    auto at = static_cast<size_t>(i * 16);
    Literal one = run(module(1), {f32Literal({1, 16}, &in[0][at]), f32Literal({1, 16}, &in[1][at]),
                                  f32Literal({1, 16}, &in[2][at])});
    expectSameBytes(all, one, i, "item");
  }
}

// Outputs written in place take no arena space; a run whose output overlaps an input (the
// oracle's unbatched read-modify-write instructions) gets a buffer for them on first need. Runs
// alternate between the two, on a fused plan and on an unfused one.
TEST(Fusion, OutputsInPlaceAndOverlappingInputsAlternate) {
  for (int64_t n : {16, 200}) {
    std::string N = std::to_string(n);
    auto m =
        hlo::parseModule("HloModule m\n\nENTRY %e {\n  %a = f32[" + N +
                             "] parameter(0)\n  %b = f32[" + N + "] parameter(1)\n  %s = f32[" + N +
                             "] add(%a, %b)\n  ROOT %p = f32[" + N + "] multiply(%s, %a)\n}\n",
                         "m.hlo");
    hlo::EvalPlan plan = hlo::EvalPlan::compile(*m->entry());
    std::vector<uint32_t> a = f32Bits(n, 40), b = f32Bits(n, 41);
    Literal la = f32Literal({n}, a.data()), lb = f32Literal({n}, b.data());
    Literal expected = plan.run(std::vector<Literal>{la, lb});
    for (int round = 0; round < 4; ++round) {
      Literal x = la;
      const void* in[] = {x.bytes(), lb.bytes()};
      Literal separate(la.shape());
      void* out[] = {round % 2 == 0 ? x.bytes() : separate.bytes()};  // in place, then not
      plan.run(in, out);
      const Literal& got = round % 2 == 0 ? x : separate;
      EXPECT_EQ(std::memcmp(got.bytes(), expected.bytes(), expected.byteCount()), 0)
          << "n=" << n << " round " << round;
    }
  }
}

}  // namespace
}  // namespace tacit::oracle
