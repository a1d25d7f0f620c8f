// Soundness of every IR->IR rule (issue 7, acceptance 4): each rule's example kernels are imported,
// the rule alone is applied, and every term of the result class -- the original and each rewritten
// form -- is evaluated with the HLO evaluator on random inputs and must equal the kernel bit for
// bit. A rule that does not fire on its own examples fails too (the test could not fail otherwise).
#include "isel/rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>

#include "egraph/enumerate.h"
#include "egraph/runner.h"
#include "hlo/parser.h"
#include "hlo_eval/random_literal.h"
#include "isel/value_range.h"
#include "term_eval.h"

namespace tacit::isel {
namespace {

struct Fixture {
  IrLanguage ir;
  egraph::EGraph g{ir.language()};
  ShapeAnalysis& shapes = g.addAnalysis<ShapeAnalysis>(ir);
  ConstAnalysis& consts = g.addAnalysis<ConstAnalysis>(ir);
  IrBuilder b{g, ir, shapes};
};

struct Outcome {
  size_t terms = 0, rewritten = 0;
  size_t loops = 0;  // new unary e-nodes in their operand's own class (x = f(x)), each checked
};

// Float inputs that random [-1, 1) values never reach: NaN (both signs, a payload), ±0, ±inf,
// subnormals, the bounds of the integer types and the halves around them (rounding ties), values
// past the bounds; otherwise a quarter-grid value in [-300, 300] (ties included).
hlo::Literal specialLiteral(const hlo::Shape& shape, uint64_t seed) {
  hlo::Literal lit = hlo::randomLiteral(shape, seed);
  hlo::PrimitiveType t = shape.elementType();
  if (!hlo::isFloat(t)) return lit;
  static const double kTable[] = {std::numeric_limits<double>::quiet_NaN(),
                                  -std::numeric_limits<double>::quiet_NaN(),
                                  0.0,
                                  -0.0,
                                  std::numeric_limits<double>::infinity(),
                                  -std::numeric_limits<double>::infinity(),
                                  1e-40,
                                  -1e-40,
                                  0.5,
                                  -0.5,
                                  -1,
                                  1.5,
                                  2.5,
                                  126.5,
                                  127,
                                  127.5,
                                  128,
                                  -128,
                                  -128.5,
                                  -129,
                                  254.5,
                                  255,
                                  255.5,
                                  256,
                                  65535,
                                  65535.5,
                                  65536,
                                  2147483648.0,
                                  -2147483648.0,
                                  3e9,
                                  -3e9,
                                  1e30};
  uint64_t state = seed * 0x9e3779b97f4a7c15ULL + 1;
  auto next = [&] {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dULL;
  };
  constexpr size_t kTableSize = sizeof(kTable) / sizeof(kTable[0]);
  for (int64_t i = 0, n = shape.elementCount(); i < n; ++i) {
    uint64_t r = next();
    double v = (r & 1) ? kTable[(r >> 1) % kTableSize]
                       : static_cast<double>(static_cast<int64_t>((r >> 1) % 2401) - 1200) / 4;
    lit.setDouble(i, v);
  }
  return lit;
}

// Checks every term (up to a budget) of the kernel's result class after applying `rule`, on random
// inputs (`special`: specialLiteral's).
Outcome checkExample(const IrRule& rule, const std::string& text, uint64_t seed,
                     bool special = false) {
  auto module = hlo::parseModule(text, rule.name() + ".hlo");
  Fixture f;
  ImportedKernel k = importKernel(*module, f.b);
  f.g.rebuild();
  size_t nodes_before = f.g.nodeCount();
  std::vector<hlo::Literal> logical, bytes;
  for (const KernelParameter& p : k.parameters) {
    logical.push_back(special ? specialLiteral(p.shape, seed++)
                              : hlo::randomLiteral(p.shape, seed++));
    bytes.push_back(testing::hbmBytes(logical.back(), p.shape));
  }
  hlo::Literal expected = hlo::evaluate(*module, logical);

  std::vector<egraph::Rewrite> rewrites = rule.rewrites(f.b, rule.exampleNeeds());
  egraph::Runner(f.g, {.max_nodes = 20000, .max_iterations = 3}).run(rewrites);
  f.g.rebuild();

  Outcome out;
  egraph::EnumOptions enum_options;
  enum_options.max_size = 48;
  enum_options.max_steps = 2'000'000;
  egraph::Enumerator en(f.g, k.results.at(0).value_class, enum_options);
  egraph::Term t;
  while (out.terms < 300 && en.next(t)) {
    ++out.terms;
    bool uses_new = false;
    for (const egraph::TermNode& n : t.nodes())
      uses_new |= n.enode.index() >= nodes_before;
    out.rewritten += uses_new;
    hlo::Literal got = testing::evaluateTerm(f.ir, t, bytes);
    EXPECT_TRUE(got.bitwiseEqual(expected))
        << rule.name() << ": term " << t.str(f.ir.lang(), 2000) << "\ndiffers from\n"
        << text;
  }
  // A rule may add x = f(x) (round-integral): no finite term of a class uses such a node, so each
  // is checked on its own: f applied to the class's terms must give those terms' values.
  for (uint32_t id = static_cast<uint32_t>(nodes_before); id < f.g.nodeIdCount(); ++id) {
    NodeId n(id);
    if (!f.g.alive(n)) continue;
    egraph::ENode e = f.g.node(n);
    if (e.arity() != 1 || !f.g.same(e.child(0), f.g.classOf(n))) continue;
    ++out.loops;
    egraph::Enumerator operand(f.g, e.child(0), enum_options);
    egraph::Term x;
    for (size_t i = 0; i < 50 && operand.next(x); ++i) {
      hlo::Literal want = testing::evaluateTerm(f.ir, x, bytes);
      uint32_t kids[] = {x.root()};
      x.add(e.op(), e.attr(), kids);
      EXPECT_TRUE(testing::evaluateTerm(f.ir, x, bytes).bitwiseEqual(want))
          << rule.name() << ": " << x.str(f.ir.lang(), 2000) << " is not its operand in\n"
          << text;
    }
  }
  return out;
}

TEST(IrRules, EveryRuleIsSoundOnItsExamples) {
  ASSERT_FALSE(ruleLibrary().empty());
  for (const auto& rule : ruleLibrary()) {
    std::vector<std::string> examples = rule->examples();
    EXPECT_FALSE(examples.empty()) << rule->name() << " has no example";
    for (size_t i = 0; i < examples.size(); ++i) {
      for (uint64_t seed : {1u, 2u, 3u, 4u, 5u, 8u}) {
        // Seeds 4, 5 and 8: NaN, ±0, ±inf, bounds and ties (specialLiteral). Seed 8 gives
        // dot-rank-one's first example a product of two NaNs of opposite signs (lhs col[1] =
        // b[1,0] = -NaN, rhs row[14] = a[14] = +NaN): the dot's product takes the lhs NaN, and
        // so must multiply(broadcast(col), broadcast(row)).
        bool special = seed > 3;
        Outcome o = checkExample(*rule, examples[i], seed * 100, special);
        EXPECT_GT(o.rewritten + o.loops, 0u) << rule->name() << " example " << i << " never fired";
        std::printf("%-28s example %zu seed %llu: %zu terms, %zu rewritten, %zu x = f(x)\n",
                    rule->name().c_str(), i, static_cast<unsigned long long>(seed), o.terms,
                    o.rewritten, o.loops);
      }
    }
  }
}

const IrRule& ruleNamed(const std::string& name) {
  for (const auto& r : ruleLibrary()) {
    if (r->name() == name) return *r;
  }
  throw std::logic_error("no rule " + name);
}

// convert-guarded-s32 is exact only for operands in the target's range (or NaN): it must not fire
// on a float -> u8 convert whose operand is unbounded or bounded too loosely, and there the two
// sides do differ.
TEST(IrRules, GuardedConvertNeedsAnOperandInTheTargetRange) {
  const IrRule& rule = ruleNamed("convert-guarded-s32");
  auto kernel = [](const std::string& body, const std::string& to) {
    return "HloModule e\nENTRY m {\n  a = f32[4,16] parameter(0)\n" + body + "  ROOT q = " + to +
           "[4,16] convert(x)\n}";
  };
  const std::string clamp =
      "  lo = f32[] constant(LO)\n  hi = f32[] constant(HI)\n"
      "  x = f32[4,16] clamp(lo, a, hi)\n";
  auto bounded = [&](const std::string& lo, const std::string& hi) {
    std::string b = clamp;
    b.replace(b.find("LO"), 2, lo);
    b.replace(b.find("HI"), 2, hi);
    return b;
  };
  const std::vector<std::pair<std::string, std::string>> unbounded = {
      {"  x = f32[4,16] round-nearest-even(a)\n", "u8"},  // no bound at all
      {bounded("-1", "255"), "u8"},                       // below u8
      {bounded("0", "256"), "u8"},                        // above u8
      {bounded("-129", "127"), "s8"},                     // below s8
      {bounded("0", "65535"), "s8"},                      // far above s8
      {bounded("0", "255"), "s32"},                       // not narrower than 32 bits
  };
  for (const auto& [body, to] : unbounded) {
    for (uint64_t seed : {7u, 8u}) {
      Outcome o = checkExample(rule, kernel(body, to), seed, /*special=*/true);
      EXPECT_EQ(o.rewritten, 0u) << "fired on\n" << kernel(body, to);
    }
  }
  // round-integral: a value that is not known to be integral is not its own rounding.
  for (const char* hi : {"255", "255.5"}) {  // bounded, but no rounding proves it integral
    Outcome o = checkExample(ruleNamed("round-integral"), kernel(bounded("0", hi), "u8"), 9, true);
    EXPECT_EQ(o.rewritten + o.loops, 0u) << hi;
  }
  // The same bounded kernels with the bounds of the type fire.
  EXPECT_GT(checkExample(rule, kernel(bounded("0", "255"), "u8"), 9, true).rewritten, 0u);
  EXPECT_GT(checkExample(rule, kernel(bounded("-128", "127"), "s8"), 9, true).rewritten, 0u);

  // Without the precondition the identity is false: 300 -> 255 (saturated) against 44 (the low
  // byte of 300), -5 -> 0 against 251.
  auto both = hlo::parseModule(R"(HloModule both
ENTRY m {
  x = f32[2] parameter(0)
  lhs = u8[2] convert(x)
  lo = f32[] constant(-2147483648)
  los = f32[2] broadcast(lo), dimensions={}
  hi = f32[] constant(2147483648)
  his = f32[2] broadcast(hi), dimensions={}
  ge = pred[2] compare(x, los), direction=GE
  lt = pred[2] compare(x, his), direction=LT
  ok = pred[2] and(ge, lt)
  i = s32[2] convert(x)
  k = s32[] constant(-2147483648)
  ks = s32[2] broadcast(k), dimensions={}
  s = s32[2] select(ok, i, ks)
  rhs = u8[2] convert(s)
  ROOT t = (u8[2], u8[2]) tuple(lhs, rhs)
})",
                               "both.hlo");
  hlo::Literal x(hlo::Shape(hlo::PrimitiveType::kF32, {2}));
  x.setDouble(0, 300);
  x.setDouble(1, -5);
  std::vector<hlo::Literal> args;
  args.push_back(std::move(x));
  hlo::Literal out = hlo::evaluate(*both, args);
  EXPECT_EQ(out.elements()[0].getInt64(0), 255);
  EXPECT_EQ(out.elements()[1].getInt64(0), 44);
  EXPECT_EQ(out.elements()[0].getInt64(1), 0);
  EXPECT_EQ(out.elements()[1].getInt64(1), 251);
}

// What value_range.h proves for each operator it understands, and nothing for the others.
TEST(ValueRanges, BoundsFromClampsRoundingsConvertsAndExtremes) {
  auto module = hlo::parseModule(R"(HloModule r
ENTRY m {
  x = f32[8] parameter(0)
  i = s8[8] parameter(1)
  lo = f32[] constant(-3)
  hi = f32[] constant(7.5)
  c = f32[8] clamp(lo, x, hi)
  r = f32[8] round-nearest-even(c)
  f = f32[8] convert(i)
  m = f32[8] maximum(f, r)
  q = u8[8] convert(r)
  y = f32[8] add(x, x)
  ROOT t = (f32[8], f32[8], f32[8], f32[8], u8[8], f32[8]) tuple(c, r, f, m, q, y)
})",
                                 "ranges.hlo");
  Fixture f;
  ImportedKernel k = importKernel(*module, f.b);
  f.g.rebuild();
  auto range = [&](size_t result) {
    return valueRange(f.g, f.ir, f.shapes, k.results.at(result).value_class);
  };
  struct Want {
    double lo, hi;
    bool nan, integral;
  };
  const double inf = std::numeric_limits<double>::infinity();
  const Want want[] = {{-3, 7.5, true, false},  // clamp: the constant bounds; NaN passes through
                       {-3, 8, true, true},  // round-nearest-even: integral, bounds rounded outward
                       {-128, 127, false, true},   // s8 -> f32: the type's range, exact
                       {-3, 127, true, true},      // maximum: the larger bounds; NaN from r
                       {0, 8, false, true},        // f32 -> u8: truncated, saturated at 0; NaN -> 0
                       {-inf, inf, true, false}};  // add: not understood
  for (size_t i = 0; i < std::size(want); ++i) {
    ValueRange r = range(i);
    EXPECT_EQ(r.lo, want[i].lo) << i;
    EXPECT_EQ(r.hi, want[i].hi) << i;
    EXPECT_EQ(r.nan, want[i].nan) << i;
    EXPECT_EQ(r.integral, want[i].integral) << i;
  }
  // And the evaluated values lie in them, on special-value inputs.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<hlo::Literal> args;
    for (const KernelParameter& p : k.parameters)
      args.push_back(specialLiteral(p.shape, seed * 10 + args.size()));
    hlo::Literal out = hlo::evaluate(*module, args);
    for (size_t i = 0; i < std::size(want); ++i) {
      ValueRange r = range(i);
      const hlo::Literal& v = out.elements()[i];
      for (int64_t e = 0; e < v.shape().elementCount(); ++e) {
        double d = v.getDouble(e);
        if (std::isnan(d)) {
          EXPECT_TRUE(r.nan) << i;
          continue;
        }
        EXPECT_TRUE(d >= r.lo && d <= r.hi) << i << ": " << d;
        if (r.integral && std::isfinite(d)) {
          EXPECT_EQ(d, std::nearbyint(d)) << i;
        }
      }
    }
  }
}

// The memo answers like a fresh query within one index generation, and a class asked for again
// after the e-graph's next rebuild sees what was added since.
TEST(ValueRanges, MemoLastsOneIndexGeneration) {
  auto module = hlo::parseModule(R"(HloModule r
ENTRY m {
  x = f32[8] parameter(0)
  lo = f32[] constant(-3)
  hi = f32[] constant(7.5)
  c = f32[8] clamp(lo, x, hi)
  r = f32[8] round-nearest-even(c)
  y = f32[8] add(x, x)
  ROOT t = (f32[8], f32[8]) tuple(r, y)
})",
                                 "memo.hlo");
  Fixture f;
  ImportedKernel k = importKernel(*module, f.b);
  f.g.rebuild();
  ClassId r = k.results.at(0).value_class, y = k.results.at(1).value_class;
  ValueRange fresh = valueRange(f.g, f.ir, f.shapes, r);
  ValueRange memo = f.b.valueRange(r);
  EXPECT_EQ(memo.lo, fresh.lo);
  EXPECT_EQ(memo.hi, fresh.hi);
  EXPECT_EQ(memo.integral, fresh.integral);
  EXPECT_TRUE(std::isinf(f.b.valueRange(y).hi));
  // y is also a clamp of itself: a fact the memo learns only in the next generation.
  auto scalar = [&](double v) {
    hlo::Literal l(hlo::Shape(hlo::PrimitiveType::kF32, {}));
    l.setDouble(0, v);
    return f.b.constant(std::move(l));
  };
  OpDesc clamp;
  clamp.opcode = hlo::HloOpcode::kClamp;
  ClassId clamped = f.b.add(std::move(clamp), std::vector<ClassId>{scalar(-1), y, scalar(1)});
  f.g.unite(clamped, y);
  EXPECT_TRUE(std::isinf(f.b.valueRange(y).hi));  // the same generation: remembered
  f.g.rebuild();
  EXPECT_EQ(f.b.valueRange(y).hi, 1.0);
  EXPECT_EQ(f.b.valueRange(y).lo, -1.0);
}

TEST(IrRules, SelectionIsTheClosureOfTheIsaOperators) {
  EXPECT_TRUE(selectRules({}).empty());  // an ISA that uses nothing needs no rule
  for (hlo::HloOpcode op : {hlo::HloOpcode::kDot, hlo::HloOpcode::kAdd, hlo::HloOpcode::kConvert,
                            hlo::HloOpcode::kConcatenate}) {
    IsaNeeds needs;
    needs.ops = {op};
    std::vector<const IrRule*> chosen = selectRules(needs);
    // The closure: the used operators are the ISA's plus the left sides of the chosen rules; a
    // rule is chosen exactly when it creates a used operator.
    std::set<hlo::HloOpcode> used = needs.ops;
    for (const IrRule* r : chosen) {
      for (hlo::HloOpcode l : r->lhsOps())
        used.insert(l);
    }
    for (const auto& r : ruleLibrary()) {
      bool creates_used = false;
      for (hlo::HloOpcode c : r->rhsOps())
        creates_used |= used.count(c) != 0;
      bool is_chosen = std::find(chosen.begin(), chosen.end(), r.get()) != chosen.end();
      EXPECT_EQ(is_chosen, creates_used) << r->name() << " for " << hlo::opcodeName(op);
    }
  }
}

}  // namespace
}  // namespace tacit::isel
