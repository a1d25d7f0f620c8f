// `tacit tune`: multi-fidelity search of a kernel's tiling schedules under the timing model
// (docs/tuning.md).
//
// The space is the tiled compile's (backend/tiling.h), wider: tiles of 1, 2 and 4 unit tiles per
// dimension, every loop order, the contraction whole or split in blocks of 1, 2 and 4 unit depths
// with each buffer that can carry it, and 1, 2, 3, 4, 6 or 8 buffers. Every schedule's loop nest
// is built (its tile kernels compiled once, shared); the search then spends timing-model
// simulations, the expensive evaluations, by successive halving over fidelities: every schedule
// estimated by the probe (timing/probe.h: its loop nest cut to two and three iterations per loop,
// extrapolated), then the surviving ones simulated on a prefix of their instruction stream (1/16,
// then 1/4 of it, cycles extrapolated to the whole), the best quarter promoted each time, the
// last rung simulated in full. Deterministic for a seed (the order of the space and the ties), and
// the simulations of one rung run in parallel.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/compiler.h"

namespace tacit::backend {

enum class TuneMethod {
  kMultiFidelity,   // successive halving over prefix simulations (the default)
  kSingleFidelity,  // full simulations of schedules drawn at random, as many as the budget allows
  kExhaustive,      // every schedule simulated in full (the reference)
};

struct TuneEvaluation {
  TileSchedule schedule;
  double rung = 1;           // the fraction of the instruction stream asked for (0: the probe)
  double fraction = 1;       // of the instruction stream simulated
  int64_t cycles = 0;        // extrapolated from the prefix when fraction < 1
  int64_t instructions = 0;  // simulated
  // One JSON object on one line (a resumable log's line), and back; parse throws a
  // DiagnosticError at `file`:`line` for anything else.
  std::string json() const;
  static TuneEvaluation parse(const std::string& text, const std::string& file, uint32_t line);
};

struct TuneOptions {
  TuneMethod method = TuneMethod::kMultiFidelity;
  uint64_t seed = 1;
  // The single-fidelity search's budget in full simulations (0: what the multi-fidelity search
  // spends on the same space, rounded up).
  double budget = 0;
  int threads = 0;  // simulations in parallel (0: the machine's cores)
  // A prefix is never shorter than this many instructions: the pipeline's fill and the first
  // iterations' misses would dominate a shorter one.
  int64_t min_prefix = 2048;
  // The search's progress, a line per rung.
  std::function<void(const std::string& line)> log = nullptr;
  // Called once per simulation, in a deterministic order, when its rung ends (a resumable log).
  std::function<void(const TuneEvaluation&)> evaluated = nullptr;
  // Simulations of an earlier search over the same space (its log): one it holds — the same
  // schedule at the same rung — is taken from it, not run again. How a search resumes.
  std::vector<TuneEvaluation> known = {};
};

struct TuneResult {
  CompileResult best;           // its costs.cycles measured in full
  size_t space = 0;             // schedules in the space
  size_t built = 0;             // of them, with a loop nest
  double full_evaluations = 0;  // simulated instructions / the best program's, summed: the cost
  size_t simulations = 0;       // simulations run (any fidelity)
  size_t reused = 0;            // simulations taken from TuneOptions::known
  std::vector<TuneEvaluation> evaluations;  // in order
  double build_seconds = 0, simulate_seconds = 0;
};

// The tuning space of `kernel` (empty when it is not a kernel tiled compiles can handle: a result
// of one array, a kernel of one dot). A float contraction is split only with `reassociate`
// (CompileOptions::reassociate, docs/numerics.md); those schedules are marked so.
std::vector<TileSchedule> tuningSpace(const isel::Target& target, const hlo::HloModule& kernel,
                                      bool reassociate = false);

// The loop nests of a space, built once (the expensive part: the tile kernels' compiles), and
// the searches over them (the simulations).
class Tuner {
 public:
  // Builds every schedule of `space` (default: tuningSpace, re-associating float contractions with
  // options.reassociate) that compiles. A DiagnosticError if
  // none does. `options` must outlive the Tuner.
  Tuner(const isel::Target& target, const hlo::HloModule& kernel, const CompileOptions& options,
        std::optional<std::vector<TileSchedule>> space = std::nullopt);
  ~Tuner();
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;

  size_t space() const;
  size_t built() const;
  double buildSeconds() const;
  // One search; the result's best program is a copy (searches may follow).
  TuneResult search(const TuneOptions& tune);
  // Every built schedule and its program, in the space's order (a learned model's data).
  void forEachProgram(
      const std::function<void(const TileSchedule&, const oracle::Program&)>& f) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Tuner(target, kernel, options).search(tune).
TuneResult tune(const isel::Target& target, const hlo::HloModule& kernel,
                const CompileOptions& options, const TuneOptions& tune);

}  // namespace tacit::backend
