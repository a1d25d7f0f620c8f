// Tiled compilation (backend/tiling.h): the driver — the schedule space, each tile kernel compiled
// once, the best loop nest under the cost model.
#include "backend/tiling.h"

#include <chrono>
#include <map>
#include <sstream>
#include <tuple>

#include "backend/emit.h"
#include "backend/tiling_internal.h"
#include "support/strings.h"

namespace tacit::backend {
namespace {

using tiling::OutputTile;

// Effort bounds of one tile kernel's compile for the schedules after the space's first: the
// failures each solve may meet, the orders and the candidates tried. A tile kernel is a few dozen
// calls that phase 2 places in a few hundred failures when it can: one it has not placed within
// these bounds is left to the other schedules. Counted, never timed, so that what is compiled
// does not depend on the machine's load; the first schedule is not bounded.
constexpr uint64_t kTileSolveFailures = 5000;
constexpr size_t kTileOrders = 8;
constexpr size_t kTileCandidates = 16;
using tiling::StepKernel;
using tiling::TileKind;

std::string stepName(TileStep s) {
  switch (s) {
    case TileStep::kWhole:
      return "tile";
    case TileStep::kFirst:
      return "first step of tile";
    case TileStep::kMiddle:
      return "middle steps of tile";
    case TileStep::kLast:
      return "last step of tile";
  }
  return "tile";
}

// How a step kernel is imported: its result a window of the kernel's (or its accumulators, on
// chip), its accumulator parameters on chip, the kernel's HBM below its scratch.
isel::ImportOptions importOf(TileStep step, const TileKind& kind, const std::vector<int64_t>& dims,
                             const std::vector<isel::Residence>& sums, size_t parameters,
                             int64_t io_bytes) {
  isel::ImportOptions o;
  o.reserved_hbm = io_bytes;
  const auto rank = static_cast<std::ptrdiff_t>(dims.size());
  std::vector<int64_t> first(kind.first.begin(), kind.first.begin() + rank);
  if (step == TileStep::kWhole || step == TileStep::kLast)
    o.windows = {isel::ResultWindow{dims, first}};
  else
    o.resident_results.assign(sums.begin(), sums.end());
  if (step == TileStep::kMiddle || step == TileStep::kLast) {
    o.resident_parameters.resize(parameters);
    o.resident_parameters.insert(o.resident_parameters.end(), sums.begin(), sums.end());
  }
  return o;
}

// The accumulators of a split contraction's output tile of `sizes`; a buffer that cannot hold
// the tile gets it as it is at its start (phase 1 then finds no program, a reason).
tiling::Accumulators accumulatorsOf(const taidl::Isa& isa, int32_t buffer, hlo::PrimitiveType sums,
                                    const std::vector<int64_t>& sizes) {
  if (buffer < 0) return {};
  if (auto a = tiling::accumulators(isa, buffer, sums, sizes)) return *a;
  const taidl::Buffer& b = isa.buffers[static_cast<size_t>(buffer)];
  return {{},
          {isel::Residence{buffer, std::vector<int64_t>(b.access.size(), 0), std::nullopt}},
          b.access.empty() ? 0 : b.access.back()};
}

}  // namespace

struct TiledCompiler::Impl {
  using Key = std::tuple<TileStep, std::vector<int64_t>, std::vector<int64_t>, int32_t>;
  struct Made {
    std::optional<StepKernel> kernel;
    std::string why_not;
  };
  Impl(const isel::Target& target, const hlo::HloModule& kernel, const CompileOptions& options)
      : target(target),
        kernel(kernel),
        options(options),
        layout(isel::hbmLayout(kernel, isel::alignedImport({}, target.needs().hbm_alignment))),
        contraction(tiling::contractionOf(target.needs(), kernel, options.reassociate)) {
    const hlo::Shape& result = kernel.entry()->root()->shape();
    if (result.isArray() && result.rank() > 0) dims = result.dims();
  }
  const isel::Target& target;
  const hlo::HloModule& kernel;
  const CompileOptions& options;
  const isel::ImportedKernel layout;
  const std::optional<tiling::Contraction> contraction;
  std::vector<int64_t> dims;
  std::map<Key, Made> compiled;  // each tile kernel once
  const Made& stepKernel(TileStep step, const TileKind& kind, int32_t accumulator, bool bounded,
                         Deadline deadline);
};

TiledCompiler::TiledCompiler(const isel::Target& target, const hlo::HloModule& kernel,
                             const CompileOptions& options)
    : impl_(std::make_unique<Impl>(target, kernel, options)) {}

TiledCompiler::~TiledCompiler() = default;

const std::vector<int64_t>& TiledCompiler::dims() const {
  return impl_->dims;
}

const std::optional<tiling::Contraction>& TiledCompiler::contraction() const {
  return impl_->contraction;
}

std::vector<int64_t> TiledCompiler::unitTile() const {
  return tiling::unitTile(impl_->target.needs(), impl_->kernel);
}

void TiledCompiler::check(const TileSchedule& schedule) const {
  if (impl_->dims.empty()) fail("a schedule needs a kernel with one array result");
  tiling::checkSchedule(impl_->target.isa(), schedule, impl_->dims, impl_->contraction);
}

// The step kernel `kind` of `step` in a schedule with `accumulator`, compiled once (memoised).
const TiledCompiler::Impl::Made& TiledCompiler::Impl::stepKernel(TileStep step,
                                                                 const TileKind& kind,
                                                                 int32_t accumulator, bool bounded,
                                                                 Deadline deadline) {
  const Key key{step, kind.sizes, kind.first, accumulator};
  auto it = compiled.find(key);
  if (it != compiled.end()) return it->second;
  const taidl::Isa& isa = target.isa();
  const std::string where = "the " + stepName(step) + " " + join(kind.sizes, "x") + " at (" +
                            join(kind.first, ", ") + "): ";
  const auto rank = static_cast<std::ptrdiff_t>(dims.size());
  std::vector<int64_t> sizes(kind.sizes.begin(), kind.sizes.begin() + rank);
  std::vector<int64_t> first(kind.first.begin(), kind.first.begin() + rank);
  const tiling::Accumulators sums = accumulatorsOf(
      isa, accumulator, contraction ? contraction->type : hlo::PrimitiveType::kInvalid, sizes);
  // The step kernel with its contraction block as one dot (chain 0) or as the chain of its
  // unit-deep dots (tile_kernel.h), compiled.
  auto attempt = [&](int64_t chain) {
    Made m;
    ContractionBlock block;
    if (kind.sizes.size() > dims.size())
      block = {kind.first.back(), kind.sizes.back(), sums.block, chain,
               options.reassociate || (contraction && contraction->exact_chain)};
    TileModuleOrReason module = buildTileModule(kernel, first, sizes, step, block);
    if (!module.tile) {
      m.why_not = where + module.reason;
      return m;
    }
    CompileOptions o = options;
    if (options.progress) {
      o.progress = [this, where](const std::string& status) { options.progress(where + status); };
    }
    o.alloc.repeated = true;  // a loop body: its constants and result region stay whole
    o.selector.import =
        importOf(step, kind, dims, sums.places, layout.parameters.size(), layout.io_bytes);
    if (bounded) {
      o.alloc.solver_fail_limit = kTileSolveFailures;
      o.alloc.max_orders = std::min(o.alloc.max_orders, kTileOrders);
      o.max_candidates = std::min(o.max_candidates, kTileCandidates);
    }
    try {
      m.kernel =
          StepKernel{step, kind, compileKernel(target, *module.tile->module, o, {}, deadline),
                     std::move(module.tile->windows), sums.pinned};
    } catch (const DiagnosticError& e) {
      m.why_not = where + e.diagnostic().message;
    }
    return m;
  };
  // A block of several unit depths is first one dot, which phase 1 splits; if that does not
  // compile, the chain (the first reason is kept when neither does). A float block stays one dot:
  // the program's sums are then exactly the blocked kernel's (CompileResult::computes).
  Made made = attempt(0);
  const int64_t unit = contraction ? contraction->unit_depth : 0;
  const bool wide = kind.sizes.size() > dims.size() && unit > 0 && kind.sizes.back() > unit &&
                    kind.sizes.back() % unit == 0 && hlo::isInteger(contraction->type);
  if (!made.kernel && wide) {
    Made chained = attempt(unit);
    if (chained.kernel) made = std::move(chained);
  }
  return compiled.emplace(key, std::move(made)).first->second;
}

TiledCompiler::Outcome TiledCompiler::compile(const TileSchedule& schedule, bool bounded,
                                              Deadline deadline,
                                              std::optional<ProgramCosts> to_beat) {
  const isel::Target& target = impl_->target;
  const hlo::HloModule& kernel = impl_->kernel;
  const isel::ImportedKernel& layout = impl_->layout;
  const std::vector<int64_t>& dims = impl_->dims;
  const std::optional<tiling::Contraction>& contraction = impl_->contraction;
  const taidl::Isa& isa = target.isa();
  const int32_t accumulator = tiling::accumulatorBuffer(isa, schedule);
  std::vector<OutputTile> tiles;
  std::vector<std::pair<TileStep, TileKind>> steps;  // every tile's, in loop-nest order
  std::vector<size_t> tile_of;                       // per step, its tile
  for (const TileKind& output : tiling::outputKinds(dims, schedule)) {
    tiles.push_back(OutputTile{output, {}});
    for (const auto& step :
         tiling::stepsOf(output, schedule, contraction ? contraction->extent : 0)) {
      steps.push_back(step);
      tile_of.push_back(tiles.size() - 1);
    }
  }
  // The step kernels, the most repeated first: under an additive cost model the program costs
  // each kernel's cost times its repetitions, so once those compiled cost more than `to_beat` no
  // kernel left can make the schedule better (costs are never negative), and it stops there.
  std::vector<size_t> by_repetitions(steps.size());
  for (size_t i = 0; i < steps.size(); ++i)
    by_repetitions[i] = i;
  std::stable_sort(by_repetitions.begin(), by_repetitions.end(), [&](size_t a, size_t b) {
    return steps[a].second.tiles() > steps[b].second.tiles();
  });
  int64_t so_far = 0;
  std::vector<const Impl::Made*> made_of(steps.size());
  for (size_t i : by_repetitions) {
    const Impl::Made& made =
        impl_->stepKernel(steps[i].first, steps[i].second, accumulator, bounded, deadline);
    if (!made.kernel) return {std::nullopt, made.why_not};
    made_of[i] = &made;
    const CostModel model = made.kernel->compiled.model;
    if (!to_beat || model == CostModel::kCycles) continue;
    so_far += made.kernel->compiled.costs.of(model) * steps[i].second.tiles();
    if (so_far > to_beat->of(model))
      return {std::nullopt, "its tile kernels compiled so far cost " + std::to_string(so_far) +
                                " (" + std::string(costModelName(model)) +
                                "), more than the best schedule's " +
                                std::to_string(to_beat->of(model))};
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    std::vector<StepKernel>& into = tiles[tile_of[i]].steps;
    into.push_back(*made_of[i]->kernel);
    into.back().kind = steps[i].second;
  }
  tiling::TiledProgram program(target, layout);
  if (std::string why = program.build(tiles, schedule, identifier(kernel.name())); !why.empty())
    return {std::nullopt, why};
  CompileResult r;
  r.model = tiles.front().steps.front().compiled.model;
  size_t kernels = 0;
  for (const OutputTile& t : tiles) {
    for (const StepKernel& k : t.steps) {
      r.costs.add(k.compiled.costs, k.kind.tiles());
      ++kernels;
    }
  }
  // Cycles are the whole loop nest's (tiles overlap or wait for each other): simulated.
  if (r.model == CostModel::kCycles) r.costs.cycles = programCycles(isa, program.program());
  r.program = program.take();
  oracle::inlineSingleIterationLoops(r.program);  // a buffered loop of one group of copies
  r.graph = tiles.front().steps.back().compiled.graph;
  r.allocation = tiles.front().steps.back().compiled.allocation;
  // The search and phase 1 of that tile kernel (a report's candidates and e-graph per iteration).
  r.stats.candidate_log = tiles.front().steps.back().compiled.stats.candidate_log;
  r.stats.saturation.per_iteration =
      tiles.front().steps.back().compiled.stats.saturation.per_iteration;
  r.schedule = schedule;
  // What an emitted schedule records: whether the program re-associates (an exact chain computes
  // the kernel itself, whatever the given schedule said).
  r.schedule->reassociate = false;
  if (schedule.contraction > 0 && !hlo::isInteger(contraction->type) && !contraction->exact_chain) {
    TileModuleOrReason blocked = blockedKernel(kernel, schedule.contraction);
    if (!blocked.tile) return {std::nullopt, blocked.reason};
    r.computes = std::move(blocked.tile->module);
    r.schedule->reassociate = true;
  }
  std::ostringstream text;
  text << "tiles " << join(schedule.tile, "x") << ", loops over dimensions "
       << join(schedule.order, ", ");
  if (schedule.contraction > 0)
    text << ", contraction in blocks of " << schedule.contraction << " accumulated in "
         << schedule.accumulator;
  if (schedule.buffers > 1) text << ", " << schedule.buffers << " buffers";
  text << "; " << kernels << " tile kernel" << (kernels == 1 ? "" : "s");
  r.stats.tiling = text.str();
  for (const OutputTile& t : tiles) {
    for (const StepKernel& k : t.steps) {
      const CompileStats& st = k.compiled.stats;
      r.stats.parts.push_back(PartStats{stepName(k.step) + " " + join(k.kind.sizes, "x") + " at (" +
                                            join(k.kind.first, ", ") + ")",
                                        static_cast<size_t>(k.kind.tiles()), st.saturation.nodes,
                                        st.saturation.iterations, st.candidates, st.total_seconds});
    }
  }
  return {std::move(r), ""};
}

void TiledCompiler::addWork(CompileStats& stats) const {
  for (const auto& [key, made] : impl_->compiled) {
    if (made.kernel) stats.addWork(made.kernel->compiled.stats);
  }
}

std::optional<CompileResult> compileTiled(const isel::Target& target, const hlo::HloModule& kernel,
                                          const CompileOptions& options, Deadline deadline) {
  const auto start = std::chrono::steady_clock::now();
  TiledCompiler tiled(target, kernel, options);
  if (tiled.dims().empty()) {
    if (options.schedule) fail("a schedule needs a kernel with one array result");
    return std::nullopt;
  }
  std::vector<TileSchedule> space;
  if (options.schedule) {
    tiled.check(*options.schedule);
    space.push_back(*options.schedule);
  } else {
    std::vector<int64_t> unit = tiled.unitTile();
    if (unit.empty() || tiling::tileCount(tiled.dims(), unit) <= options.max_whole_tiles)
      return std::nullopt;
    space = tiling::scheduleSpace(target.isa(), tiled.dims(), unit, tiled.contraction());
  }
  std::optional<CompileResult> best;
  std::string why_not;
  size_t tried = 0;
  for (const TileSchedule& schedule : space) {
    if (deadline.passed()) break;
    if (options.progress) {
      std::string s = schedule.json();
      s.pop_back();
      options.progress("tiling: schedule " + std::to_string(++tried) + " of " +
                       std::to_string(space.size()) + " " + s);
    }
    // The first schedule (a given one, or the space's first) is compiled without effort bounds.
    TiledCompiler::Outcome o =
        tiled.compile(schedule, &schedule != &space.front(), deadline,
                      best ? std::optional<ProgramCosts>(best->costs) : std::nullopt);
    if (!o.result) {
      why_not = o.why_not;
      continue;
    }
    if (best && !o.result->costs.betterThan(best->costs, o.result->model)) continue;
    best = std::move(o.result);
  }
  if (!best) {
    if (options.schedule)
      fail(kernel.sourceFile(), {}, "the schedule cannot be compiled: " + why_not);
    return std::nullopt;
  }
  // Statistics: the work of every tile kernel compiled (each once, whatever schedule it served);
  // the parts are the chosen schedule's.
  CompileStats& stats = best->stats;
  tiled.addWork(stats);
  stats.best_candidate = 1;
  stats.stop = "every schedule of the space was compiled";
  stats.total_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return best;
}

}  // namespace tacit::backend
