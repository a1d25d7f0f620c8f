// The compiler backend against the per-operation library sequence (ACT paper §8: fused kernels vs
// a library of one kernel per operation).
//
// For each kernel: the compiled program's instruction count, spec cost, bytes moved between
// buffers (backend::measure: HBM <-> scratchpads and scratchpad <-> accumulator) and bytes moved
// between HBM and the on-chip buffers (`hbm`, the data movement of the ACT evaluation and of the
// "movement" change below), beside the same
// quantities summed over the "library sequence": the kernel cut at every value of its interface
// element types (the element types of its parameters and results, i.e. where a library call
// would take its operands from HBM and store its result), each piece compiled as its own kernel.
// A piece that does not compile on its own is fused with its producers (its input cuts removed),
// or, if only parameters feed it, into its consumers, until it does, so the library sequence is
// the finest one the ISA can run. Compile time is the
// median of N runs of backend::compile (single-threaded), wall clock and thread CPU time.
// `cycles` is the timing model's (docs/timing.md) for the program, and for the library sequence
// the sum over its pieces (each a kernel run to completion before the next); `cyc x` their ratio.
// After the table, for ISAs whose memory latency is a parameter (MEM_LATENCY), the cycle gains of
// the nine compositions at each latency of --latencies (default 25,50,100,200,400): the
// latency is not published, so the comparison is shown across its plausible range.
//
// Usage: bench_backend [--runs N] [--latencies L1,L2,...] [--write-chain PATH]
//                     [--kernel ISA.taidl KERNEL.hlo]... [FILTER]
//        bench_backend --sizes [--runs N]   (tiled compilation against problem size: sizes.cc)
//   FILTER: substring of the row name; --write-chain writes the generated ~100-node Gemmini kernel;
//   --kernel times that kernel instead of the built-in rows (repeatable; no library sequence).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend/compiler.h"
#include "backend/verify.h"
#include "common/gemm_hlo.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo/verifier.h"
#include "oracle/program.h"
#include "sizes.h"
#include "support/diagnostic.h"
#include "support/large_pages.h"  // huge pages for the allocator (see there)
#include "support/source.h"
#include "support/strings.h"
#include "taidl/isa.h"

namespace {

using namespace tacit;

// Which reading of the ACT evaluation's nine compositions a row belongs to: every operation
// saturating to int8 (the library's semantics), sums accumulated in int32 and saturated once (the
// reading the paper's fused numbers match), or both (compositions without an int32 sum between
// operations are the same function either way).
enum Reading { kNone = 0, kPerOperation = 1, kAccumulated = 2, kBoth = 3 };

struct Row {
  std::string name;
  std::string isa;   // isa/<isa>.taidl
  std::string text;  // HLO
  int reading = kNone;
  // The HLO whose cut pieces are the library sequence, when it is not `text`: an accumulated
  // composition is compared with the per-operation library calls in the paper's best order (which
  // compute a different function where an intermediate leaves the int8 range — the paper's
  // comparison).
  std::string library_text;
};

// Geomean of spec-cost gains, their maximum and the mean change of HBM <-> on-chip bytes over a set
// of rows.
struct Summary {
  double log_gain = 0, max_gain = 0, reduction = 0, log_cycles = 0, max_cycles = 0;
  int n = 0;
  void add(double gain, double red, double cycle_gain) {
    log_gain += std::log(gain), reduction += red, max_gain = std::max(max_gain, gain), ++n;
    log_cycles += std::log(cycle_gain), max_cycles = std::max(max_cycles, cycle_gain);
  }
  double cycleGain() const { return std::exp(log_cycles / n); }
  void print(const char* what) const {
    if (n == 0) return;
    std::printf(
        "over %s (%d): geomean spec-cost gain %.2fx (max %.2fx), cycle gain %.2fx (max %.2fx), "
        "mean HBM data-movement change %.1f%%\n",
        what, n, std::exp(log_gain / n), max_gain, cycleGain(), max_cycles, -100 * reduction / n);
  }
};

std::string path(const std::string& rel) {
  return std::string(TACIT_SOURCE_DIR) + "/" + rel;
}

// A chain/tree of Gemmini library operations (int8 add, matmul, mac, each saturating to int8) on
// 16x16 tiles: a reduction tree over 16 inputs (15 operations, two matmuls for every add), then
// a mac with two of the inputs again: 100 HLO instructions.
std::string chainKernel() {
  std::string body;
  int next = 0;
  auto op = [&](const std::string& shape, const std::string& expr) {
    std::string n = "v" + std::to_string(next++);
    body += "  " + n + " = " + shape + " " + expr + "\n";
    return n;
  };
  const std::string t8 = "s8[16,16]", t32 = "s32[16,16]";
  std::vector<std::string> level;
  std::string params;
  for (int i = 0; i < 16; ++i) {
    params += "  p" + std::to_string(i) + " = " + t8 + " parameter(" + std::to_string(i) + ")\n";
    level.push_back("p" + std::to_string(i));
  }
  body += "  lo = s32[] constant(-128)\n  hi = s32[] constant(127)\n";
  auto sat = [&](const std::string& x) {
    return op(t8, "convert(" + op(t32, "clamp(lo, " + x + ", hi)") + ")");
  };
  auto widen = [&](const std::string& x) { return op(t32, "convert(" + x + ")"); };
  auto dot = [&](const std::string& a, const std::string& b) {
    return op(t32, "dot(" + widen(a) + ", " + widen(b) +
                       "), lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  };
  int k = 0;
  while (level.size() > 1) {
    std::vector<std::string> up;
    for (size_t i = 0; i + 1 < level.size(); i += 2, ++k) {
      const std::string &a = level[i], &b = level[i + 1];
      up.push_back(k % 3 == 1 ? sat(op(t32, "add(" + widen(a) + ", " + widen(b) + ")"))
                              : sat(dot(a, b)));
    }
    level = up;
  }
  // A final mac with two of the inputs again: sat8(x·p0 + p1).
  std::string x = sat(op(t32, "add(" + dot(level[0], "p0") + ", " + widen("p1") + ")"));
  std::string text =
      "// A 100-instruction Gemmini kernel: a tree of int8 matmuls and adds over 16 16x16 tiles,\n"
      "// then a mac (library semantics: every operation saturates to int8).\n"
      "// Written by bench_backend --write-chain.\n"
      "HloModule chain100\n\nENTRY main {\n" +
      params + body;
  // The last instruction is the root.
  size_t last = text.rfind("\n  v");
  text.insert(last + 3, "ROOT ");
  return text + "}\n";
}

std::vector<Row> rows() {
  std::vector<Row> out;
  out.push_back(
      {"qkv attention", "qkv", readFile(path("examples/attention/attention.hlo")), kNone, ""});
  // The composite kernels of the ACT evaluation (A+B+C ... AxBxCxD), whose gains the paper
  // reports; the first four sum in int32 when accumulated (examples/gemmini/accumulated).
  const std::set<std::string> accumulated = {"add3", "add4", "mm_add_mm", "mac_add"};
  const std::set<std::string> compositions = {
      "add3", "add4", "mm_add_mm", "mac_add", "mm3", "mm3_add_a", "mm3_add_d", "mm4_a", "mm4_d"};
  auto gemmini = [&](const std::string& k) {
    return readFile(path("examples/gemmini/" + k + ".hlo"));
  };
  for (const char* k : {"add", "matmul", "mac", "add3", "add4", "mm_add_mm", "mac_add", "mm3",
                        "mm3_add_a", "mm3_add_d", "mm4_a", "mm4_d"}) {
    int reading = !compositions.count(k) ? kNone : accumulated.count(k) ? kPerOperation : kBoth;
    out.push_back({std::string("gemmini ") + k, "gemmini", gemmini(k), reading, ""});
  }
  // Their library sequence is the per-operation kernel's, in the paper's best call order: AxB+AxC
  // is mm then mac(A, C, AxB) (7 tiles moved), not two mm and an add (9).
  for (const std::string& k : accumulated) {
    std::string library = k == "mm_add_mm" ? gemmini("accumulated/mm_add_mm_library") : gemmini(k);
    out.push_back(
        {"gemmini " + k + " acc", "gemmini", gemmini("accumulated/" + k), kAccumulated, library});
  }
  for (const char* k : {"k1_u8s8_gemm_32x32x64", "k2_u8s8_gemm_16x32x64", "k3_f32_outer_14x32",
                        "k4_f32_outer_8x48", "k5_int8_gemm_requantize"}) {
    out.push_back({std::string("amx ") + std::string(k).substr(0, 2), "amx",
                   readFile(path(std::string("examples/amx/") + k + ".hlo")), kNone, ""});
  }
  out.push_back({"gemmini chain100", "gemmini", chainKernel(), kNone, ""});
  // Quantised layers at 256^3, tiled (docs/backend.md, "Tiled compilation"): the epilogue runs on
  // each tile while it is on chip, where the library stores and reloads every intermediate.
  out.push_back(
      {"gemmini layer 256^3", "gemmini", bench::gemminiLayerHlo(256, 256, 256), kNone, ""});
  out.push_back({"amx layer 256^3", "amx", bench::amxLayerHlo(256, 256, 256), kNone, ""});
  return out;
}

struct Costs {
  int64_t instructions = 0, spec = 0, bytes = 0, hbm = 0;
};

// The programs of a kernel or of a library sequence; their cycles at a given latency are the sum
// of each program's, run one after the other.
using Programs = std::vector<std::shared_ptr<const oracle::Program>>;
int64_t cyclesOf(const taidl::Isa& isa, const Programs& programs) {
  int64_t sum = 0;
  for (const auto& p : programs)
    sum += backend::programCycles(isa, *p);
  return sum;
}

struct Compiled {
  std::optional<Costs> costs;
  std::shared_ptr<const oracle::Program> program;
  std::string error;  // the diagnostic's first line when it did not compile
  bool verified = false;
};

std::string firstLine(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

// `model`: the compile's cost model (default: the spec's).
Compiled compileText(const taidl::Isa& isa, const std::string& text, bool verify,
                     std::optional<backend::CostModel> model = std::nullopt) {
  Compiled c;
  try {
    auto m = hlo::parseModule(text, "kernel.hlo");
    hlo::verifyModule(*m);
    backend::CompileOptions options;
    options.cost = model;
    backend::CompileResult r = backend::compile(isa, *m, options);
    c.costs = Costs{r.costs.instructions, r.costs.spec, r.costs.bytes, r.costs.hbm_bytes};
    c.program = std::make_shared<const oracle::Program>(r.program);
    if (verify) c.verified = backend::verify(isa, *m, r.program, {.sets = 1, .seed = 3}).ok;
  } catch (const std::exception& e) {
    c.error = firstLine(e.what());
  }
  return c;
}

// The library sequence: the kernel cut into separately compiled pieces.
struct Library {
  std::optional<Costs> costs;
  Programs programs;
  int pieces = 0;
  std::string error;
};

Library librarySequence(const taidl::Isa& isa, const hlo::HloModule& m,
                        std::optional<backend::CostModel> model = std::nullopt) {
  const hlo::HloComputation& entry = *m.entry();
  std::set<hlo::PrimitiveType> interface;
  for (const hlo::HloInstruction* p : entry.parameters())
    interface.insert(p->shape().elementType());
  const hlo::HloInstruction* root = entry.root();
  std::vector<const hlo::HloInstruction*> outputs;
  if (root->opcode() == hlo::HloOpcode::kTuple) {
    for (const hlo::HloInstruction* o : root->operands())
      outputs.push_back(o);
  } else {
    outputs.push_back(root);
  }
  for (const hlo::HloInstruction* o : outputs)
    interface.insert(o->shape().elementType());

  // Cuts: values a library call would store to HBM.
  std::set<const hlo::HloInstruction*> cuts;
  for (const auto& inst : entry.instructions()) {
    auto op = inst->opcode();
    if (op == hlo::HloOpcode::kParameter || op == hlo::HloOpcode::kConstant ||
        op == hlo::HloOpcode::kTuple || inst->shape().isTuple()) {
      continue;
    }
    if (interface.count(inst->shape().elementType())) cuts.insert(inst.get());
  }
  for (const hlo::HloInstruction* o : outputs) {
    if (o->opcode() != hlo::HloOpcode::kParameter) cuts.insert(o);
  }
  auto isInput = [&](const hlo::HloInstruction* i) {
    return i->opcode() == hlo::HloOpcode::kParameter || cuts.count(i);
  };
  std::string header;
  for (const auto& c : m.computations()) {
    if (c.get() != &entry) header += hlo::printComputation(*c) + "\n\n";
  }
  std::map<std::string, Compiled> cache;
  for (;;) {
    // The pieces: one per cut value that the outputs need.
    std::vector<const hlo::HloInstruction*> needed;
    std::set<const hlo::HloInstruction*> seen;
    std::vector<const hlo::HloInstruction*> stack(outputs.begin(), outputs.end());
    while (!stack.empty()) {
      const hlo::HloInstruction* i = stack.back();
      stack.pop_back();
      if (!seen.insert(i).second) continue;
      if (cuts.count(i)) needed.push_back(i);
      for (const hlo::HloInstruction* o : i->operands())
        stack.push_back(o);
    }
    Library lib;
    bool changed = false;
    for (const hlo::HloInstruction* piece_root : needed) {
      // The piece: everything between piece_root and its inputs.
      std::set<const hlo::HloInstruction*> inside, inputs;
      std::vector<const hlo::HloInstruction*> todo{piece_root};
      while (!todo.empty()) {
        const hlo::HloInstruction* i = todo.back();
        todo.pop_back();
        if (!inside.insert(i).second) continue;
        for (const hlo::HloInstruction* o : i->operands()) {
          if (isInput(o)) {
            inputs.insert(o);
          } else {
            todo.push_back(o);
          }
        }
      }
      std::string text = "HloModule piece\n\n" + header + "ENTRY main {\n";
      int64_t n = 0;
      for (const auto& inst : entry.instructions()) {
        if (inputs.count(inst.get())) {
          text += "  " + hlo::sigilName(inst->name()) + " = " + inst->shape().str() +
                  " parameter(" + std::to_string(n++) + ")\n";
        }
      }
      for (const auto& inst : entry.instructions()) {
        if (!inside.count(inst.get())) continue;
        std::string line = hlo::printInstruction(*inst);
        if (line.rfind("ROOT ", 0) == 0) line = line.substr(5);
        text += std::string(inst.get() == piece_root ? "  ROOT " : "  ") + line + "\n";
      }
      text += "}\n";
      auto it = cache.find(text);
      if (it == cache.end()) it = cache.emplace(text, compileText(isa, text, false, model)).first;
      const Compiled& c = it->second;
      if (!c.costs) {
        // Fuse the piece with its producers; a piece fed only by parameters (AMX K3's reshape of
        // a row vector) is fused into its consumers instead, unless it is a kernel output.
        for (const hlo::HloInstruction* in : inputs) {
          if (in->opcode() != hlo::HloOpcode::kParameter && cuts.erase(in)) changed = true;
        }
        const bool is_output =
            std::find(outputs.begin(), outputs.end(), piece_root) != outputs.end();
        if (!changed && !is_output) changed = cuts.erase(piece_root) > 0;
        if (!changed) {
          // No library sequence at all: a partial sum would read as a (false) comparison.
          return Library{std::nullopt,
                         {},
                         0,
                         "piece '" + piece_root->name() + "' does not compile: " + c.error};
        }
        break;
      }
      ++lib.pieces;
      lib.programs.push_back(c.program);
      Costs sum = lib.costs.value_or(Costs{});
      sum.instructions += c.costs->instructions;
      sum.spec += c.costs->spec;
      sum.bytes += c.costs->bytes;
      sum.hbm += c.costs->hbm;
      lib.costs = sum;
    }
    if (!changed) return lib;
  }
}

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Median wall-clock and thread-CPU milliseconds of `runs` compiles (the CPU time is what an
// unloaded machine would show; the bench machine is shared).
std::pair<double, double> medianCompileMs(const taidl::Isa& isa, const hlo::HloModule& m,
                                          int runs) {
  std::vector<double> wall, cpu;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    double cpu0 = threadCpuMs();
    backend::CompileResult r = backend::compile(isa, m);
    cpu.push_back(threadCpuMs() - cpu0);
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return {median(wall), median(cpu)};
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 10;
  std::string filter;
  std::vector<Row> own;
  bool sizes = false;
  std::vector<int64_t> latencies = {25, 50, 100, 200, 400};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--latencies") == 0 && i + 1 < argc) {
      latencies.clear();
      for (std::string_view l : split(argv[++i], ','))
        latencies.push_back(std::atoll(std::string(l).c_str()));
    } else if (std::strcmp(argv[i], "--sizes") == 0) {
      sizes = true;
    } else if (std::strcmp(argv[i], "--write-chain") == 0 && i + 1 < argc) {
      std::ofstream(argv[++i]) << chainKernel();
      return 0;
    } else if (std::strcmp(argv[i], "--kernel") == 0 && i + 2 < argc) {
      std::string isa = argv[++i], file = argv[++i];
      own.push_back({file, isa, readFile(file), kNone, ""});
    } else {
      filter = argv[i];
    }
  }
  if (sizes) return sizeSweep(TACIT_SOURCE_DIR, runs);
  std::map<std::string, taidl::Isa> isas;
  std::printf(
      "%-21s %5s | %6s %8s %8s %7s %7s | %6s %8s %8s %7s %7s %6s | %7s %7s %7s | %9s %9s  %s\n",
      "kernel", "nodes", "instr", "spec", "bytes", "hbm", "cycles", "lib.in", "lib.spec",
      "lib.byte", "lib.hbm", "lib.cyc", "pieces", "spec x", "cyc x", "hbm", "wall", "cpu",
      "verify");
  // The compositions' programs, for the latency sweep.
  struct Swept {
    const taidl::Isa* isa;
    int reading;
    Programs fused, library;
  };
  std::vector<Swept> swept;
  Summary multi_piece, per_operation, accumulated, all;
  std::vector<std::string> notes;
  for (const Row& row : own.empty() ? rows() : own) {
    if (!filter.empty() && row.name.find(filter) == std::string::npos) continue;
    if (!isas.count(row.isa))
      isas.emplace(row.isa,
                   taidl::loadIsaFile(own.empty() ? path("isa/" + row.isa + ".taidl") : row.isa));
    const taidl::Isa& isa = isas.at(row.isa);
    auto m = hlo::parseModule(row.text, row.name);
    int64_t nodes = m->entry()->instructionCount();
    Compiled fused = compileText(isa, row.text, true);
    if (!fused.costs) {
      std::printf("%-21s %5lld | %s\n", row.name.c_str(), static_cast<long long>(nodes),
                  ("does not compile: " + fused.error).c_str());
      continue;
    }
    Library lib = librarySequence(
        isa, row.library_text.empty() ? *m : *hlo::parseModule(row.library_text, row.name));
    auto [wall_ms, cpu_ms] = medianCompileMs(isa, *m, runs);
    const Costs& f = *fused.costs;
    int64_t f_cycles = cyclesOf(isa, {fused.program});
    std::printf("%-21s %5lld | %6lld %8lld %8lld %7lld %7lld | ", row.name.c_str(),
                static_cast<long long>(nodes), static_cast<long long>(f.instructions),
                static_cast<long long>(f.spec), static_cast<long long>(f.bytes),
                static_cast<long long>(f.hbm), static_cast<long long>(f_cycles));
    if (lib.costs) {
      const Costs& l = *lib.costs;
      int64_t l_cycles = cyclesOf(isa, lib.programs);
      double gain = static_cast<double>(l.spec) / static_cast<double>(f.spec);
      double cycle_gain = static_cast<double>(l_cycles) / static_cast<double>(f_cycles);
      double red = 1.0 - static_cast<double>(f.hbm) / static_cast<double>(l.hbm);
      std::printf("%6lld %8lld %8lld %7lld %7lld %6d | %6.2fx %6.2fx %6.1f%% | ",
                  static_cast<long long>(l.instructions), static_cast<long long>(l.spec),
                  static_cast<long long>(l.bytes), static_cast<long long>(l.hbm),
                  static_cast<long long>(l_cycles), lib.pieces, gain, cycle_gain, -100 * red);
      all.add(gain, red, cycle_gain);
      if (lib.pieces > 1) multi_piece.add(gain, red, cycle_gain);
      if (row.reading & kPerOperation) per_operation.add(gain, red, cycle_gain);
      if (row.reading & kAccumulated) accumulated.add(gain, red, cycle_gain);
      if (row.reading != kNone) swept.push_back({&isa, row.reading, {fused.program}, lib.programs});
    } else {
      std::printf("%6s %8s %8s %7s %7s %6s | %7s %7s %7s | ", "-", "-", "-", "-", "-", "-", "-",
                  "-", "-");
      notes.push_back(row.name + ": no library sequence: " + lib.error);
    }
    std::printf("%6.1f ms %6.1f ms  %s\n", wall_ms, cpu_ms, fused.verified ? "ok" : "MISMATCH");
    std::fflush(stdout);
  }
  std::printf("\n");
  multi_piece.print("the kernels with more than one library piece");
  per_operation.print(
      "the 9 compositions of the ACT evaluation, every operation saturating (paper: 1.48x, max "
      "1.77x, -40%)");
  accumulated.print(
      "the 9 compositions, sums accumulated in int32 (`acc` rows; the library sequence "
      "saturates every operation)");
  all.print("all compiled kernels");
  // The sweep: the compositions' cycle gains at each memory latency (the programs are the same;
  // only the timing parameter changes).
  if (!swept.empty() && swept.front().isa->findParam("MEM_LATENCY") >= 0 && !latencies.empty()) {
    std::printf(
        "\ncycle gains of the 9 compositions against MEM_LATENCY (geomean, max):\n"
        "%8s | %-21s | %-21s\n",
        "latency", "every op saturating", "accumulated in int32");
    for (int64_t latency : latencies) {
      taidl::Isa at = taidl::loadIsaFile(path("isa/gemmini.taidl"), {{"MEM_LATENCY", latency}});
      Summary per_op, acc;
      for (const Swept& w : swept) {
        if (w.isa->name != at.name) continue;
        double g = static_cast<double>(cyclesOf(at, w.library)) /
                   static_cast<double>(cyclesOf(at, w.fused));
        if (w.reading & kPerOperation) per_op.add(1, 0, g);
        if (w.reading & kAccumulated) acc.add(1, 0, g);
      }
      std::printf("%8lld | %9.2fx (%.2fx)    | %9.2fx (%.2fx)\n", static_cast<long long>(latency),
                  per_op.cycleGain(), per_op.max_cycles, acc.cycleGain(), acc.max_cycles);
    }
  }
  // Both sides ranked by the timing model instead of the spec cost (`--cost cycles`): what the
  // fusion gains when each program is the fastest the compiler finds, not the cheapest.
  Summary cyc_per_op, cyc_acc;
  for (const Row& row : own.empty() ? rows() : own) {
    if (row.reading == kNone || (!filter.empty() && row.name.find(filter) == std::string::npos))
      continue;
    const taidl::Isa& isa = isas.at(row.isa);
    Compiled fused = compileText(isa, row.text, false, backend::CostModel::kCycles);
    auto m = hlo::parseModule(row.library_text.empty() ? row.text : row.library_text, row.name);
    Library lib = librarySequence(isa, *m, backend::CostModel::kCycles);
    if (!fused.costs || !lib.costs) continue;
    const double g = static_cast<double>(cyclesOf(isa, lib.programs)) /
                     static_cast<double>(cyclesOf(isa, {fused.program}));
    if (row.reading & kPerOperation) cyc_per_op.add(1, 0, g);
    if (row.reading & kAccumulated) cyc_acc.add(1, 0, g);
  }
  if (cyc_per_op.n + cyc_acc.n > 0)
    std::printf(
        "\nboth sides compiled with --cost cycles: cycle gain %.2fx (max %.2fx) every op "
        "saturating, %.2fx (max %.2fx) accumulated in int32\n",
        cyc_per_op.cycleGain(), cyc_per_op.max_cycles, cyc_acc.cycleGain(), cyc_acc.max_cycles);
  for (const std::string& n : notes)
    std::printf("note: %s\n", n.c_str());
  return 0;
}
