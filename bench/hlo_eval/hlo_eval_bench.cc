// The reference evaluator's speed: compiled plans (EvalPlan::run on preallocated buffers, the
// way the oracle calls it) for the kernels the oracle runs most, and the f32 GEMM against
// single-threaded OpenBLAS sgemm. The f32 dot keeps tacit's exact semantics (sequential
// accumulation in contracting order, no FMA); OpenBLAS is free to use FMA and any order.
// After the benchmarks, prints the tacit/OpenBLAS time ratio for the 512^3 f32 dot.
// --simd generic|avx2|avx512 caps the SIMD level (support/simd.h), as TACIT_SIMD does; the
// benchmark context names the level in use.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include "hlo/npy_literal.h"
#include "hlo/parser.h"
#include "hlo_eval/evaluator.h"
#include "hlo_eval/random_literal.h"
#include "support/simd.h"
#include "support/source.h"

extern "C" void openblas_set_num_threads(int);

namespace {

using tacit::hlo::EvalPlan;
using tacit::hlo::Literal;

// A compiled plan with random inputs and preallocated outputs.
struct Fixture {
  std::unique_ptr<tacit::hlo::HloModule> module;
  std::optional<EvalPlan> plan;
  std::vector<Literal> inputs, outputs;
  std::vector<const void*> in;
  std::vector<void*> out;

  explicit Fixture(const std::string& text, std::vector<Literal> given = {}) {
    module = tacit::hlo::parseModule(text, "bench.hlo");
    plan.emplace(EvalPlan::compile(*module->entry()));
    for (size_t i = 0; i < plan->inputShapes().size(); ++i) {
      inputs.push_back(i < given.size() ? std::move(given[i])
                                        : tacit::hlo::randomLiteral(plan->inputShapes()[i], i + 1));
      in.push_back(inputs.back().bytes());
    }
    for (const auto& s : plan->outputShapes()) {
      outputs.emplace_back(s);
      out.push_back(outputs.back().bytes());
    }
  }
  void run() { plan->run(in, out); }
};

std::string dotText(const char* in_type, const char* out_type, int m, int k, int n) {
  char buf[512];
  std::snprintf(
      buf, sizeof(buf),
      "HloModule dot\nENTRY e {\n  a = %s[%d,%d] parameter(0)\n  b = %s[%d,%d] parameter(1)\n"
      "  ROOT d = %s[%d,%d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
      in_type, m, k, in_type, k, n, out_type, m, n);
  return buf;
}

void setFlops(benchmark::State& state, double flops) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

void BM_DotF32_512_Tacit(benchmark::State& state) {
  Fixture f(dotText("f32", "f32", 512, 512, 512));
  for (auto _ : state)
    f.run();
  setFlops(state, 2.0 * 512 * 512 * 512);
}

void BM_DotF32_512_OpenBlas(benchmark::State& state) {
  openblas_set_num_threads(1);
  Fixture f(dotText("f32", "f32", 512, 512, 512));
  const float* a = reinterpret_cast<const float*>(f.inputs[0].bytes());
  const float* b = reinterpret_cast<const float*>(f.inputs[1].bytes());
  float* c = reinterpret_cast<float*>(f.outputs[0].bytes());
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 512, 512, 512, 1.0f, a, 512, b, 512,
                0.0f, c, 512);
  }
  setFlops(state, 2.0 * 512 * 512 * 512);
}

void BM_DotS8xS8toS32_256(benchmark::State& state) {
  Fixture f(dotText("s8", "s32", 256, 256, 256));
  for (auto _ : state)
    f.run();
  setFlops(state, 2.0 * 256 * 256 * 256);
}

void BM_DotBf16toF32_256(benchmark::State& state) {
  Fixture f(dotText("bf16", "f32", 256, 256, 256));
  for (auto _ : state)
    f.run();
  setFlops(state, 2.0 * 256 * 256 * 256);
}

void BM_AttentionExample(benchmark::State& state) {
  std::string dir = std::string(TACIT_SOURCE_DIR) + "/examples/attention/";
  tacit::hlo::Shape s(tacit::hlo::PrimitiveType::kBF16, {64, 64});
  std::vector<Literal> qkv;
  for (const char* name : {"q", "k", "v"}) {
    qkv.push_back(tacit::hlo::readNpyLiteral(dir + name + ".npy", s, name));
  }
  Fixture f(tacit::readFile(dir + "attention.hlo"), std::move(qkv));
  for (auto _ : state)
    f.run();
}

// An activation-style chain over 1M f32 and bf16 elements: ((x * y + z) -> exp -> max(., 0)).
void elementwiseChain(benchmark::State& state, const std::string& t) {
  std::string text = R"(HloModule chain
ENTRY e {
  x = T[1024,1024] parameter(0)
  y = T[1024,1024] parameter(1)
  z = T[1024,1024] parameter(2)
  m = T[1024,1024] multiply(x, y)
  a = T[1024,1024] add(m, z)
  e = T[1024,1024] exponential(a)
  zero = T[] constant(0)
  zb = T[1024,1024] broadcast(zero), dimensions={}
  ROOT r = T[1024,1024] maximum(e, zb)
})";
  for (size_t p = text.find("T["); p != std::string::npos; p = text.find("T[", p))
    text.replace(p, 1, t);
  Fixture f(text);
  for (auto _ : state)
    f.run();
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 1024 * 1024);
}
void BM_ElementwiseChainF32(benchmark::State& state) {
  elementwiseChain(state, "f32");
}
void BM_ElementwiseChainBf16(benchmark::State& state) {
  elementwiseChain(state, "bf16");
}

void BM_Conv2D_3x3_NHWC(benchmark::State& state) {
  Fixture f(R"(HloModule conv
ENTRY e {
  x = f32[1,56,56,64] parameter(0)
  k = f32[3,3,64,64] parameter(1)
  ROOT c = f32[1,56,56,64] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  for (auto _ : state)
    f.run();
  setFlops(state, 2.0 * 56 * 56 * 64 * 64 * 9);
}

void BM_ReduceRowsF32(benchmark::State& state) {
  Fixture f(R"(HloModule reduce
add { a = f32[] parameter(0)
 b = f32[] parameter(1)
 ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[1024,1024] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1024] reduce(x, z), dimensions={1}, to_apply=add
})");
  for (auto _ : state)
    f.run();
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 1024 * 1024);
}

void BM_Transpose2D(benchmark::State& state) {
  Fixture f(R"(HloModule t
ENTRY e {
  x = f32[2048,2048] parameter(0)
  ROOT t = f32[2048,2048] transpose(x), dimensions={1,0}
})");
  for (auto _ : state)
    f.run();
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2048 * 2048 * 4 * 2);
}

// Per-run overhead of a compiled plan: one scalar add, and one QKV-style instruction (bf16[64,64]
// gemm with f32 accumulation).
void BM_PlanOverheadScalarAdd(benchmark::State& state) {
  Fixture f(
      "HloModule m\nENTRY e {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = "
      "s32[] add(a, b)\n}\n");
  for (auto _ : state)
    f.run();
}
void BM_QkvGemmInstruction(benchmark::State& state) {
  Fixture f(dotText("bf16", "bf16", 64, 64, 64));
  for (auto _ : state)
    f.run();
}

BENCHMARK(BM_DotF32_512_Tacit)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_DotF32_512_OpenBlas)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_DotS8xS8toS32_256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DotBf16toF32_256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AttentionExample)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ElementwiseChainF32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ElementwiseChainBf16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Conv2D_3x3_NHWC)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReduceRowsF32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Transpose2D)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_PlanOverheadScalarAdd)->Unit(benchmark::kNanosecond);
BENCHMARK(BM_QkvGemmInstruction)->Unit(benchmark::kMicrosecond);

// Console output plus the real and CPU time of every run, for the ratio line.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      times_[r.benchmark_name()] = {r.GetAdjustedRealTime(), r.GetAdjustedCPUTime()};
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, std::pair<double, double>> times_;  // real, CPU
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) != "--simd") continue;
    std::optional<tacit::simd::Level> level =
        i + 1 < argc ? tacit::simd::parseLevel(argv[i + 1]) : std::nullopt;
    if (!level) {
      std::fprintf(stderr, "bench_hlo_eval: --simd expects generic, avx2 or avx512\n");
      return 2;
    }
    tacit::simd::setLevel(*level);
    ++i;
  }
  benchmark::AddCustomContext("simd", tacit::simd::describe());
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  auto tacit_it = reporter.times_.find("BM_DotF32_512_Tacit/min_time:1.000");
  auto blas_it = reporter.times_.find("BM_DotF32_512_OpenBlas/min_time:1.000");
  if (tacit_it != reporter.times_.end() && blas_it != reporter.times_.end()) {
    std::printf(
        "f32 512x512x512 dot: tacit / OpenBLAS sgemm (1 thread) = %.2f (real time), %.2f (CPU "
        "time)\n",
        tacit_it->second.first / blas_it->second.first,
        tacit_it->second.second / blas_it->second.second);
  }
  benchmark::Shutdown();
  return 0;
}
