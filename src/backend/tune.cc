// The schedule tuner (backend/tune.h, docs/tuning.md): the space, the loop nests built once each,
// and the searches that spend timing-model simulations on them.
#include "backend/tune.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "backend/tiling.h"
#include "backend/tiling_internal.h"
#include "hlo/dtype.h"
#include "support/strings.h"
#include "timing/probe.h"
#include "timing/timing.h"

namespace tacit::backend {
namespace {

// Successive halving: the fractions of the instruction stream each rung simulates, and the share
// of a rung's schedules the next one keeps.
// Rung 0 is the probe (timing/probe.h: the loop nest cut to two and three iterations per loop,
// extrapolated), then prefixes of the instruction stream, then the whole.
constexpr double kProbe = 0;
constexpr double kRungs[] = {kProbe, 1.0 / 16, 1.0 / 4, 1.0};
constexpr size_t kKeep = 4;  // one in four go on

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Instructions a program executes when its loop bounds are constants (a tiled program's are);
// a macro call counts the calls it expands to.
int64_t executed(const taidl::Isa& isa, const std::vector<oracle::Stmt>& body) {
  int64_t n = 0;
  for (const oracle::Stmt& s : body) {
    if (s.kind == oracle::StmtKind::kCall) {
      n += s.is_macro ? static_cast<int64_t>(isa.macros[static_cast<size_t>(s.unit)].calls.size())
                      : 1;
    } else if (s.kind == oracle::StmtKind::kLoop) {
      n += std::max<int64_t>(0, s.hi.constant - s.lo.constant) * executed(isa, s.body);
    }
  }
  return n;
}

struct Candidate {
  TileSchedule schedule;
  CompileResult result;
  int64_t instructions = 0;
  int64_t estimate = 0;  // cycles, from the last rung it was simulated in
};

std::string scheduleText(const TileSchedule& s) {
  std::string j = s.json();
  return j.substr(0, j.size() - 1);
}

std::string fractionText(double f) {
  if (f == kProbe) return "the probe";
  return f >= 1 ? "all" : "1/" + std::to_string(static_cast<int64_t>(std::lround(1 / f)));
}

}  // namespace

std::string TuneEvaluation::json() const {
  std::string s = schedule.json();
  s.pop_back();
  nlohmann::json j = {
      {"rung", rung}, {"fraction", fraction}, {"cycles", cycles}, {"instructions", instructions}};
  std::string rest = j.dump();
  return "{\"schedule\": " + s + ", " + rest.substr(1) + "\n";
}

TuneEvaluation TuneEvaluation::parse(const std::string& text, const std::string& file,
                                     uint32_t line) {
  auto bad = [&](const std::string& why) -> TuneEvaluation {
    fail(file, {line, 1}, "not a tuning log line: " + why,
         "each line is one evaluation as `tacit tune --log` writes it");
  };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    return bad(e.what());
  }
  if (!j.is_object() || !j.contains("schedule") || !j["schedule"].is_object())
    return bad("no \"schedule\" object");
  TuneEvaluation e;
  e.schedule = TileSchedule::parse(j["schedule"].dump(), file);
  for (const char* k : {"rung", "fraction"}) {
    // (rung 0 is the probe; a probe that could not run simulated a fraction 0)
    if (!j.contains(k) || !j[k].is_number() || !(j[k].get<double>() >= 0) || j[k].get<double>() > 1)
      return bad(std::string("\"") + k + "\" is a fraction in [0, 1]");
  }
  for (const char* k : {"cycles", "instructions"}) {
    if (!j.contains(k) || !j[k].is_number_integer() ||
        (j[k].is_number_unsigned() && j[k].get<uint64_t>() > INT64_MAX) || j[k].get<int64_t>() < 0)
      return bad(std::string("\"") + k + "\" is a count (a non-negative integer)");
  }
  e.rung = j["rung"].get<double>();
  e.fraction = j["fraction"].get<double>();
  e.cycles = j["cycles"].get<int64_t>();
  e.instructions = j["instructions"].get<int64_t>();
  return e;
}

std::vector<TileSchedule> tuningSpace(const isel::Target& target, const hlo::HloModule& kernel,
                                      bool reassociate) {
  const hlo::Shape& result = kernel.entry()->root()->shape();
  if (!result.isArray() || result.rank() == 0) return {};
  const std::vector<int64_t> dims = result.dims();
  const std::vector<int64_t> unit = tiling::unitTile(target.needs(), kernel);
  if (unit.empty()) return {};
  const std::optional<tiling::Contraction> contraction =
      tiling::contractionOf(target.needs(), kernel, reassociate);
  const taidl::Isa& isa = target.isa();
  // Tiles: 1, 2 and 4 unit tiles per dimension (at most the dimension).
  std::vector<std::vector<int64_t>> tiles{{}};
  for (size_t d = 0; d < dims.size(); ++d) {
    std::vector<std::vector<int64_t>> next;
    for (const std::vector<int64_t>& t : tiles) {
      int64_t last = 0;
      for (int64_t f : {1, 2, 4}) {
        const int64_t size = std::min(unit[d] * f, dims[d]);
        if (size == last) continue;
        last = size;
        std::vector<int64_t> x = t;
        x.push_back(size);
        next.push_back(std::move(x));
      }
    }
    tiles = std::move(next);
  }
  std::vector<int64_t> order(dims.size());
  for (size_t d = 0; d < dims.size(); ++d)
    order[d] = static_cast<int64_t>(d);
  std::vector<std::vector<int64_t>> orders;
  do {
    orders.push_back(order);
  } while (std::next_permutation(order.begin(), order.end()));
  std::vector<TileSchedule> out;
  for (const std::vector<int64_t>& tile : tiles) {
    for (const std::vector<int64_t>& o : orders) {
      TileSchedule s{tile, o, 0, ""};
      std::vector<TileSchedule> variants;
      const int64_t depth = contraction ? contraction->unit_depth : 0;
      if (!contraction || depth == 0 || contraction->extent <= 4 * depth) variants.push_back(s);
      if (contraction && depth > 0 && contraction->splits) {
        for (int64_t f : {1, 2, 4}) {
          const int64_t block = depth * f;
          if (contraction->extent % block != 0 || contraction->extent / block < 2) continue;
          for (size_t b = 0; b < isa.buffers.size(); ++b) {
            if (!tiling::holdsEveryTile(isa, static_cast<int32_t>(b), *contraction, dims, s))
              continue;
            TileSchedule x = s;
            x.contraction = block;
            x.accumulator = isa.buffers[b].name.text;
            // A float sum split in blocks: the program computes the blocked kernel (not an exact
            // chain, one product per step: docs/numerics.md, "dot").
            x.reassociate = !hlo::isInteger(contraction->type) && !contraction->exact_chain;
            variants.push_back(std::move(x));
          }
        }
      }
      for (const TileSchedule& v : variants) {
        for (int64_t copies : {1, 2, 3, 4, 6, 8}) {
          TileSchedule x = v;
          x.buffers = copies;
          out.push_back(std::move(x));
        }
      }
    }
  }
  return out;
}

struct Tuner::Impl {
  Impl(const isel::Target& target, const hlo::HloModule& kernel, const CompileOptions& options)
      : target(target), kernel(kernel), tiled(target, kernel, options) {}
  const isel::Target& target;
  const hlo::HloModule& kernel;
  TiledCompiler tiled;
  std::vector<Candidate> candidates;  // in the space's order
  size_t space = 0;
  double build_seconds = 0;
};

Tuner::Tuner(const isel::Target& target, const hlo::HloModule& kernel,
             const CompileOptions& options, std::optional<std::vector<TileSchedule>> given)
    : impl_(std::make_unique<Impl>(target, kernel, options)) {
  std::vector<TileSchedule> space =
      given ? std::move(*given) : tuningSpace(target, kernel, options.reassociate);
  impl_->space = space.size();
  if (space.empty())
    fail(kernel.sourceFile(), {},
         "the kernel has no schedule space: tuning needs a kernel of one dot whose result is one "
         "array (what tiled compilation handles)");
  Clock::time_point t = Clock::now();
  std::string why_not;
  for (const TileSchedule& s : space) {
    try {
      impl_->tiled.check(s);
    } catch (const DiagnosticError& e) {
      why_not = e.diagnostic().message;
      continue;
    }
    TiledCompiler::Outcome o =
        impl_->tiled.compile(s, !impl_->candidates.empty(), Deadline::after(options.time_limit));
    if (!o.result) {
      why_not = o.why_not;
      continue;
    }
    const int64_t n = executed(target.isa(), o.result->program.body);
    impl_->candidates.push_back(Candidate{s, std::move(*o.result), n, 0});
  }
  impl_->build_seconds = since(t);
  if (impl_->candidates.empty())
    fail(kernel.sourceFile(), {}, "no schedule of the space compiles; the last: " + why_not);
}

Tuner::~Tuner() = default;

size_t Tuner::space() const {
  return impl_->space;
}
size_t Tuner::built() const {
  return impl_->candidates.size();
}
double Tuner::buildSeconds() const {
  return impl_->build_seconds;
}

void Tuner::forEachProgram(
    const std::function<void(const TileSchedule&, const oracle::Program&)>& f) const {
  for (const Candidate& c : impl_->candidates)
    f(c.schedule, c.result.program);
}

TuneResult Tuner::search(const TuneOptions& tune) {
  TuneResult out;
  out.space = impl_->space;
  out.built = impl_->candidates.size();
  out.build_seconds = impl_->build_seconds;
  std::vector<Candidate>& candidates = impl_->candidates;
  auto log = [&](const std::string& line) {
    if (tune.log) tune.log(line);
  };
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.1f s", out.build_seconds);
  log(std::to_string(out.space) + " schedules, " + std::to_string(out.built) + " built in " +
      seconds);
  Clock::time_point t;
  // Simulations of a rung, in parallel; each job writes its own slot.
  const taidl::Isa& isa = impl_->target.isa();
  std::map<std::pair<std::string, double>, const TuneEvaluation*> known;
  for (const TuneEvaluation& e : tune.known)
    known[{e.schedule.json(), e.rung}] = &e;
  // Candidates already simulated to their end in this search: their cycles are exact, and a later
  // rung would simulate the same program again (a short program's prefix is all of it).
  std::vector<bool> exact(candidates.size(), false);
  auto simulate = [&](std::vector<size_t> which, double fraction) {
    t = Clock::now();
    std::vector<int64_t> simulated(which.size());
    std::vector<bool> reused(which.size(), false), carried(which.size(), false);
    for (size_t i = 0; i < which.size(); ++i) {
      Candidate& c = candidates[which[i]];
      if (exact[which[i]]) {
        carried[i] = reused[i] = true;
        continue;
      }
      auto k = known.find({c.schedule.json(), fraction});
      if (k == known.end()) continue;
      c.estimate = k->second->cycles;
      simulated[i] = k->second->instructions;
      reused[i] = true;
    }
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t i = next++; i < which.size(); i = next++) {
        if (reused[i]) continue;
        Candidate& c = candidates[which[i]];
        const oracle::Program& p = c.result.program;
        if (fraction == kProbe && c.instructions <= tune.min_prefix) {
          // A program no longer than the shortest prefix: every prefix rung would simulate all
          // of it, and the probe (two cuts of its loops) may cost more than it. Simulated whole.
          const timing::Report r = timing::simulate(isa, p, timing::zeroInputs(p));
          simulated[i] = r.instructions;
          c.estimate = r.cycles;
          exact[which[i]] = true;
          continue;
        }
        if (fraction == kProbe) {
          const timing::Probe r = timing::probe(isa, p);
          simulated[i] = r.instructions;
          c.estimate = r.ran ? r.estimate : INT64_MAX;  // a cut that does not run goes last
          continue;
        }
        const int64_t want =
            fraction >= 1
                ? c.instructions
                : std::max(tune.min_prefix, static_cast<int64_t>(std::ceil(
                                                static_cast<double>(c.instructions) * fraction)));
        timing::Report r = want >= c.instructions
                               ? timing::simulate(isa, p, timing::zeroInputs(p))
                               : timing::simulatePrefix(isa, p, timing::zeroInputs(p), want);
        simulated[i] = r.instructions;
        if (r.instructions >= c.instructions) exact[which[i]] = true;
        c.estimate = r.instructions >= c.instructions
                         ? r.cycles
                         : static_cast<int64_t>(std::llround(static_cast<double>(r.cycles) *
                                                             static_cast<double>(c.instructions) /
                                                             static_cast<double>(r.instructions)));
      }
    };
    const size_t threads = std::max<size_t>(
        1, std::min<size_t>(which.size(), tune.threads > 0
                                              ? static_cast<size_t>(tune.threads)
                                              : std::max(1u, std::thread::hardware_concurrency())));
    std::vector<std::thread> pool;
    for (size_t k = 1; k < threads; ++k)
      pool.emplace_back(work);
    work();
    for (std::thread& th : pool)
      th.join();
    out.simulate_seconds += since(t);
    for (size_t i = 0; i < which.size(); ++i) {
      if (carried[i]) continue;  // exact from an earlier rung: nothing run, nothing to log
      const Candidate& c = candidates[which[i]];
      const double share = static_cast<double>(simulated[i]) /
                           static_cast<double>(std::max<int64_t>(1, c.instructions));
      if (reused[i]) {
        ++out.reused;
      } else {
        out.full_evaluations += share;
        ++out.simulations;
      }
      out.evaluations.push_back(
          TuneEvaluation{c.schedule, fraction, share, c.estimate, simulated[i]});
      if (tune.evaluated) tune.evaluated(out.evaluations.back());
    }
    // Best first; ties by the (seeded) order of the space.
    std::stable_sort(which.begin(), which.end(), [&](size_t a, size_t b) {
      return candidates[a].estimate < candidates[b].estimate;
    });
    const Candidate& best = candidates[which.front()];
    log("  " + std::to_string(which.size()) + " simulated " +
        (fraction == kProbe ? "by the probe"
                            : "at " + fractionText(fraction) + " of their instructions") +
        ": best " + std::to_string(best.estimate) + " cycles" +
        (fraction < 1 ? " (extrapolated)" : "") + " " + scheduleText(best.schedule));
    return which;
  };

  // The seed orders the candidates: the ties, and the single-fidelity search's draw.
  std::vector<size_t> all(candidates.size());
  for (size_t i = 0; i < all.size(); ++i)
    all[i] = i;
  std::mt19937_64 rng(tune.seed);
  std::shuffle(all.begin(), all.end(), rng);
  std::vector<size_t> ranked;
  switch (tune.method) {
    case TuneMethod::kExhaustive:
      ranked = simulate(all, 1);
      break;
    case TuneMethod::kMultiFidelity: {
      std::vector<size_t> alive = all;
      for (double f : kRungs) {
        alive = simulate(alive, f);
        if (f >= 1) break;
        alive.resize(std::max<size_t>(1, (alive.size() + kKeep - 1) / kKeep));
      }
      ranked = alive;
      break;
    }
    case TuneMethod::kSingleFidelity: {
      double budget = tune.budget;
      if (budget <= 0) {  // what successive halving spends on this many schedules
        size_t alive = all.size();
        for (double f : kRungs) {
          // The probe's cost is not known before it runs: counted as a 1/64 prefix, about what
          // it simulates in a tiled GEMM (docs/tuning.md).
          budget += static_cast<double>(alive) * (f == kProbe ? 1.0 / 64 : f);
          alive = std::max<size_t>(1, (alive + kKeep - 1) / kKeep);
        }
      }
      const size_t n = std::min(all.size(), static_cast<size_t>(std::ceil(budget)));
      ranked = simulate(
          std::vector<size_t>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n)), 1);
      break;
    }
  }
  const Candidate& best = candidates[ranked.front()];
  out.best = best.result;
  out.best.costs.cycles = best.estimate;
  out.best.model = CostModel::kCycles;
  impl_->tiled.addWork(out.best.stats);
  return out;
}

TuneResult tune(const isel::Target& target, const hlo::HloModule& kernel,
                const CompileOptions& options, const TuneOptions& tune) {
  return Tuner(target, kernel, options).search(tune);
}

}  // namespace tacit::backend
