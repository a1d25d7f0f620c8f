// The compiled form (EvalPlan): repeated runs on caller buffers, in-place outputs, tuple
// flattening, no allocation per run, buffer reuse, and the error contract.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "eval_test_util.h"
#include "hlo_eval/random_literal.h"

// Counts heap allocations while `g_counting` is set (to prove that run() does not allocate).
namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0};
}  // namespace

// The replacements allocate with malloc and free with free (every form, so that sanitizers see
// matching pairs); GCC cannot see that they match.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  if (g_counting) ++g_allocations;
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new(size_t size) {
  if (void* p = operator new(size, std::nothrow)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) {
  return operator new(size);
}
void* operator new[](size_t size, const std::nothrow_t& tag) noexcept {
  return operator new(size, tag);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p, size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop

namespace tacit::hlo {
namespace {

using testing::lit;
using testing::parseText;

const char* kChain = R"(HloModule chain
add { a = f32[] parameter(0)
 b = f32[] parameter(1)
 ROOT s = f32[] add(a, b) }
mx { a = f32[] parameter(0)
 b = f32[] parameter(1)
 ROOT s = f32[] maximum(a, b) }
ENTRY e {
  x = f32[64,48] parameter(0)
  w = bf16[48,32] parameter(1)
  xb = bf16[64,48] convert(x)
  d = f32[64,32] dot(xb, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[32,64] transpose(d), dimensions={1,0}
  e = f32[32,64] exponential(t)
  z = f32[] constant(0)
  s = f32[32] reduce(e, z), dimensions={1}, to_apply=add
  k = f32[3,3,48,4] constant({...})
  i = f32[1,8,8,48] reshape(x)
  c = f32[1,8,8,4] convolution(i, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  n = f32[] constant(-inf)
  m = f32[1,4,4,4] reduce-window(c, n), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=mx
  ROOT r = (f32[32], f32[1,4,4,4]) tuple(s, m)
})";

// kChain with its elided constant replaced by data.
std::unique_ptr<HloModule> chainModule() {
  auto m = parseText(kChain);
  HloInstruction* k = m->entry()->findInstruction("k");
  k->setLiteral(randomLiteral(k->shape(), 3));
  return m;
}

TEST(EvalPlan, RepeatedRunsOnCallerBuffersMatchEvaluate) {
  auto m = chainModule();
  EvalPlan plan = EvalPlan::compile(*m->entry());
  ASSERT_EQ(plan.inputShapes().size(), 2u);
  ASSERT_EQ(plan.outputShapes().size(), 2u);
  Literal s(plan.outputShapes()[0]), r(plan.outputShapes()[1]);
  for (uint64_t seed = 0; seed < 5; ++seed) {
    Literal x = randomLiteral(plan.inputShapes()[0], seed),
            w = randomLiteral(plan.inputShapes()[1], seed + 100);
    const void* in[] = {x.bytes(), w.bytes()};
    void* out[] = {s.bytes(), r.bytes()};
    plan.run(in, out);
    Literal expected = evaluate(*m, std::vector<Literal>{x, w});
    EXPECT_LITERAL(s, expected.elements()[0]);
    EXPECT_LITERAL(r, expected.elements()[1]);
  }
}

TEST(EvalPlan, RunDoesNotAllocate) {
  auto m = chainModule();
  EvalPlan plan = EvalPlan::compile(*m->entry());
  Literal x = randomLiteral(plan.inputShapes()[0], 1), w = randomLiteral(plan.inputShapes()[1], 2);
  Literal s(plan.outputShapes()[0]), r(plan.outputShapes()[1]);
  const void* in[] = {x.bytes(), w.bytes()};
  void* out[] = {s.bytes(), r.bytes()};
  plan.run(in, out);  // warm-up
  g_allocations = 0;
  g_counting = true;
  for (int i = 0; i < 3; ++i)
    plan.run(in, out);
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0);
}

TEST(EvalPlan, ControlFlowRunsDoNotAllocate) {
  auto m = parseText(R"(HloModule loop
cond { s = (s32[], f32[8]) parameter(0)
 i = s32[] get-tuple-element(s), index=0
 n = s32[] constant(5)
 ROOT c = pred[] compare(i, n), direction=LT }
body { s = (s32[], f32[8]) parameter(0)
 i = s32[] get-tuple-element(s), index=0
 v = f32[8] get-tuple-element(s), index=1
 one = s32[] constant(1)
 j = s32[] add(i, one)
 w = f32[8] add(v, v)
 ROOT t = (s32[], f32[8]) tuple(j, w) }
less { a = f32[] parameter(0)
 b = f32[] parameter(1)
 ROOT c = pred[] compare(a, b), direction=GT }
ENTRY e {
  v = f32[8] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[8]) tuple(z, v)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  r = f32[8] get-tuple-element(w), index=1
  ROOT s = f32[8] sort(r), dimensions={0}, to_apply=less
})");
  EvalPlan plan = EvalPlan::compile(*m->entry());
  Literal v = lit("f32[8]", "{1, 5, 2, 8, 3, 7, 4, 6}"), out(plan.resultShape());
  const void* in[] = {v.bytes()};
  void* outs[] = {out.bytes()};
  plan.run(in, outs);
  g_allocations = 0;
  g_counting = true;
  plan.run(in, outs);
  g_counting = false;
  EXPECT_EQ(g_allocations.load(), 0);
  EXPECT_LITERAL(out, lit("f32[8]", "{256, 224, 192, 160, 128, 96, 64, 32}"));
}

TEST(EvalPlan, OutputsMayOverlapInputs) {
  auto m = parseText(R"(HloModule m
ENTRY e {
  p = f32[4,4] parameter(0)
  ROOT t = f32[4,4] transpose(p), dimensions={1,0}
})");
  EvalPlan plan = EvalPlan::compile(*m->entry());
  Literal x = randomLiteral(Shape(PrimitiveType::kF32, {4, 4}), 5);
  Literal expected = evaluate(*m, std::vector<Literal>{x});
  const void* in[] = {x.bytes()};
  void* out[] = {x.bytes()};  // in place
  plan.run(in, out);
  EXPECT_LITERAL(x, expected);
}

TEST(EvalPlan, TupleParametersAndResultsAreFlattened) {
  auto m = parseText(R"(HloModule m
ENTRY e {
  p = (f32[2], (s32[], pred[3])) parameter(0)
  a = f32[2] get-tuple-element(p), index=0
  q = (s32[], pred[3]) get-tuple-element(p), index=1
  b = pred[3] get-tuple-element(q), index=1
  aa = (f32[2], f32[2]) tuple(a, a)
  ROOT r = (pred[3], (f32[2], f32[2])) tuple(b, aa)
})");
  EvalPlan plan = EvalPlan::compile(*m->entry());
  ASSERT_EQ(plan.inputShapes().size(), 3u);
  ASSERT_EQ(plan.outputShapes().size(), 3u);
  EXPECT_EQ(plan.outputShapes()[0].shortStr(), "pred[3]");
  Literal arg = Literal::tuple(
      {lit("f32[2]", "{1, 2}"), Literal::tuple({lit("s32[]", "3"), lit("pred[3]", "{1, 0, 1}")})});
  Literal r = plan.run(std::vector<Literal>{arg});
  EXPECT_LITERAL(r.elements()[0], lit("pred[3]", "{1, 0, 1}"));
  EXPECT_LITERAL(r.elements()[1].elements()[1], lit("f32[2]", "{1, 2}"));
}

TEST(EvalPlan, IntermediateBuffersAreReused) {
  // Ten elementwise ops on a 1 MiB tensor: at most three temporaries are live at once.
  std::string text = "HloModule m\nENTRY e {\nx0 = f32[512,512] parameter(0)\n";
  for (int i = 1; i <= 10; ++i) {
    text += "x" + std::to_string(i) + " = f32[512,512] negate(x" + std::to_string(i - 1) + ")\n";
  }
  text += "ROOT r = f32[512,512] add(x10, x9)\n}\n";
  auto m = parseText(text);
  EvalPlan plan = EvalPlan::compile(*m->entry());
  EXPECT_LE(plan.workspaceBytes(), size_t{4} << 20);
  Literal x = randomLiteral(Shape(PrimitiveType::kF32, {512, 512}), 1);
  Literal r = plan.run(std::vector<Literal>{x});
  // x10 = x0 and x9 = -x0, so every element is x0 + (-x0) = 0.
  for (int64_t i = 0; i < r.elementCount(); ++i)
    ASSERT_EQ(r.getDouble(i), 0.0);
}

// ---- errors ------------------------------------------------------------------------------------

Diagnostic errorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const DiagnosticError& e) {
    return e.diagnostic();
  }
  ADD_FAILURE() << "expected a DiagnosticError";
  return {};
}

TEST(EvalPlanErrors, UnsupportedOpIsReportedAtTheInstruction) {
  auto m = parseText(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] cosh(p)
})");
  Diagnostic d = errorOf([&] { checkEvaluable(*m); });
  EXPECT_EQ(d.file, "t.hlo");
  EXPECT_EQ(d.loc.line, 4u);
  EXPECT_EQ(d.loc.col, 8u);
  EXPECT_NE(d.message.find("unsupported op 'cosh'"), std::string::npos) << d.str();
}

TEST(EvalPlanErrors, UnsupportedTypeAndDeadInstructions) {
  auto m = parseText(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  dead = f32[4] cosh(p)
  ROOT c = c64[4] convert(p)
})");
  Diagnostic d = errorOf([&] { checkEvaluable(*m); });
  EXPECT_EQ(d.loc.line, 5u);  // the dead cosh is never evaluated, so never reported
  EXPECT_NE(d.message.find("unsupported element type c64"), std::string::npos) << d.str();
}

TEST(EvalPlanErrors, AttributesWithSemanticsAreNeverIgnored) {
  auto m = parseText(R"(HloModule m
ENTRY e {
  a = f32[2,2] parameter(0)
  ROOT d = f32[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}, algorithm=dot_bf16_bf16_f32_x3
})");
  Diagnostic d = errorOf([&] { checkEvaluable(*m); });
  EXPECT_NE(d.message.find("unsupported algorithm=dot_bf16_bf16_f32_x3"), std::string::npos)
      << d.str();
  // A raw attribute the evaluator does not know (set programmatically) is rejected too.
  auto m2 = parseText(
      "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n");
  m2->entry()->root()->attrs().raw.push_back({"mystery", "1", {}});
  Diagnostic d2 = errorOf([&] { checkEvaluable(*m2); });
  EXPECT_NE(d2.message.find("unsupported attribute 'mystery'"), std::string::npos) << d2.str();
  // So is a typed attribute on an opcode that gives it no meaning.
  auto m4 = parseText(
      "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n");
  m4->entry()->root()->attrs().dimensions = std::vector<int64_t>{0};
  Diagnostic d4 = errorOf([&] { checkEvaluable(*m4); });
  EXPECT_NE(d4.message.find("unsupported attribute 'dimensions' for this opcode"),
            std::string::npos)
      << d4.str();
  // Neutral attributes are accepted.
  auto m3 = parseText(R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0), sharding={replicated}
  ROOT n = f32[2] negate(a), metadata={op_name="x"}, backend_config={"k":1}
})");
  checkEvaluable(*m3);
}

TEST(EvalPlanErrors, ElidedConstantsAreNotEvaluable) {
  auto m = parseText(kChain);
  Diagnostic d = errorOf([&] { checkEvaluable(*m); });
  EXPECT_NE(d.message.find("elided"), std::string::npos) << d.str();
}

TEST(EvalPlanErrors, WhileLoopsHaveAnIterationCap) {
  auto m = parseText(R"(HloModule m
cond { s = s32[] parameter(0)
 ROOT t = pred[] constant(true) }
body { s = s32[] parameter(0)
 one = s32[] constant(1)
 ROOT n = s32[] add(s, one) }
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
})");
  EvalOptions options;
  options.max_while_iterations = 1000;
  EvalPlan plan = EvalPlan::compile(*m->entry(), options);
  Diagnostic d = errorOf([&] { plan.run(std::vector<Literal>{}); });
  EXPECT_EQ(d.loc.line, 9u);
  EXPECT_NE(d.message.find("did not finish within 1000 iterations"), std::string::npos) << d.str();
}

TEST(EvalPlanErrors, StrictDynamicIndicesReportTheBounds) {
  auto m = parseText(R"(HloModule m
ENTRY e {
  p = s32[5] parameter(0)
  i = s32[] parameter(1)
  ROOT d = s32[3] dynamic-slice(p, i), dynamic_slice_sizes={3}
})");
  EvalOptions options;
  options.dynamic_index_mode = DynamicIndexMode::kError;
  Literal v = lit("s32[5]", "{0, 1, 2, 3, 4}");
  EXPECT_LITERAL(evaluate(*m, std::vector<Literal>{v, lit("s32[]", "2")}, options),
                 lit("s32[3]", "{2, 3, 4}"));
  Diagnostic d = errorOf([&] {
    evaluate(*m, std::vector<Literal>{v, lit("s32[]", "3")}, options);
  });
  EXPECT_EQ(d.loc.line, 5u);
  EXPECT_NE(d.message.find(
                "start indices {3} with sizes {3} reach outside the operand of dimensions {5}"),
            std::string::npos)
      << d.str();
}

TEST(EvalPlanErrors, ArgumentMismatchesAreDiagnosed) {
  auto m = parseText(
      "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n");
  EvalPlan plan = EvalPlan::compile(*m->entry());
  Diagnostic d = errorOf([&] { plan.run(std::vector<Literal>{lit("f32[3]", "{1, 2, 3}")}); });
  EXPECT_NE(d.message.find("argument 0 has shape f32[3], expected f32[2]"), std::string::npos)
      << d.str();
  Diagnostic d2 = errorOf([&] { plan.run(std::vector<Literal>{}); });
  EXPECT_NE(d2.message.find("takes 1 argument"), std::string::npos) << d2.str();
  Diagnostic d3 =
      errorOf([&] { plan.run(std::span<const void* const>(), std::span<void* const>()); });
  EXPECT_NE(d3.message.find("expects 1 input and 1 output buffers"), std::string::npos) << d3.str();
}

}  // namespace
}  // namespace tacit::hlo
