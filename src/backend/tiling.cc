// Tiled compilation (backend/tiling.h): the schedule space, the tile kernels, and the loop nest
// that repeats their programs with affine HBM addresses.
#include "backend/tiling.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <sstream>

#include "alloc/call_info.h"
#include "backend/emit.h"
#include "backend/tile_kernel.h"
#include "support/strings.h"
#include "taidl/check.h"
#include "taidl/expr.h"

namespace tacit::backend {
namespace {

using oracle::Affine;

// One kind of tile: its sizes, the start of its first tile, and per result dimension whether the
// loop nest iterates it (`count` tiles of `sizes[d]`) or it sits at the ragged edge (one tile).
struct TileKind {
  std::vector<int64_t> sizes, first, count;
  std::vector<bool> looped;
  int64_t tiles() const {
    int64_t n = 1;
    for (int64_t c : count)
      n *= c;
    return n;
  }
};

// A tile kind's compiled program and the windows through which it reads the kernel's tensors.
struct CompiledKind {
  TileKind kind;
  CompileResult compiled;
  std::vector<WindowMap> windows;
};

// The HBM tensors of the kernel (and of every tile kernel: tile_kernel.h keeps its layout).
struct HbmTensor {
  int64_t offset = 0, bytes = 0;
  std::vector<int64_t> step;  // per result dimension: the window's byte shift from tile to tile
};

// The byte offset of the element at logical `index` of `s` in its layout: dimensions in
// minor-to-major order, and a tiling T(t_1..t_k) of the k most-minor ones (isel/kernel.h).
int64_t physicalOffset(const hlo::Shape& s, const std::vector<int64_t>& index) {
  std::vector<int64_t> m2m = s.minorToMajor();
  std::vector<int64_t> dims, at;  // major to minor
  for (auto it = m2m.rbegin(); it != m2m.rend(); ++it) {
    dims.push_back(s.dim(*it));
    at.push_back(index[static_cast<size_t>(*it)]);
  }
  if (s.layout() && !s.layout()->tiles.empty()) {
    const std::vector<int64_t>& tile = s.layout()->tiles[0].dims;
    const size_t k = tile.size(), n = dims.size();
    std::vector<int64_t> split_dims(dims.begin(), dims.end() - static_cast<std::ptrdiff_t>(k));
    std::vector<int64_t> split_at(at.begin(), at.end() - static_cast<std::ptrdiff_t>(k));
    for (size_t j = 0; j < k; ++j) {
      split_dims.push_back(dims[n - k + j] / tile[j]);
      split_at.push_back(at[n - k + j] / tile[j]);
    }
    for (size_t j = 0; j < k; ++j) {
      split_dims.push_back(tile[j]);
      split_at.push_back(at[n - k + j] % tile[j]);
    }
    dims = std::move(split_dims);
    at = std::move(split_at);
  }
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d)
    offset = offset * dims[d] + at[d];
  return offset * hlo::byteSize(s.elementType());
}

// The unit tile of the kernel's result: per dimension the largest extent of the ISA's units that
// compute it (its dots' rows and columns, else its elementwise operators'), at most the dimension;
// leading dimensions 1. Empty when the ISA says nothing about the result's last dimensions.
std::vector<int64_t> unitTile(const isel::IsaNeeds& needs, const hlo::HloModule& kernel) {
  const hlo::Shape& result = kernel.entry()->root()->shape();
  const int64_t rank = result.rank();
  if (rank == 0) return {};
  bool has_dot = false;
  for (const auto& inst : kernel.entry()->instructions())
    has_dot |= inst->opcode() == hlo::HloOpcode::kDot;
  std::set<int64_t> rows, cols;
  if (has_dot) {
    rows = needs.dot_rows;
    cols = needs.dot_cols;
  } else {
    for (const auto& [key, extents] : needs.elementwise) {
      rows.insert(extents.rows.begin(), extents.rows.end());
      cols.insert(extents.cols.begin(), extents.cols.end());
    }
  }
  auto largest = [](const std::set<int64_t>& s, int64_t at_most) -> int64_t {
    int64_t best = 0;
    for (int64_t v : s) {
      if (v <= at_most) best = std::max(best, v);
    }
    return best;
  };
  std::vector<int64_t> unit(static_cast<size_t>(rank), 1);
  unit.back() = largest(cols, result.dim(rank - 1));
  if (rank >= 2) unit[static_cast<size_t>(rank - 2)] = largest(rows, result.dim(rank - 2));
  if (unit.back() == 0 || (rank >= 2 && unit[static_cast<size_t>(rank - 2)] == 0)) return {};
  return unit;
}

int64_t tileCount(const std::vector<int64_t>& dims, const std::vector<int64_t>& tile) {
  int64_t n = 1;
  for (size_t d = 0; d < dims.size(); ++d)
    n *= (dims[d] + tile[d] - 1) / tile[d];
  return n;
}

// The default schedule space: per tiled dimension the unit tile and twice it (where the
// dimension holds it), the outer dimensions first.
std::vector<TileSchedule> scheduleSpace(const std::vector<int64_t>& dims,
                                        const std::vector<int64_t>& unit) {
  std::vector<std::vector<int64_t>> choices;
  for (size_t d = 0; d < dims.size(); ++d) {
    std::vector<int64_t> c{unit[d]};
    if (unit[d] > 1 && 2 * unit[d] <= dims[d]) c.push_back(2 * unit[d]);
    choices.push_back(std::move(c));
  }
  std::vector<int64_t> order(dims.size());
  for (size_t d = 0; d < dims.size(); ++d)
    order[d] = static_cast<int64_t>(d);
  std::vector<TileSchedule> out{TileSchedule{{}, order}};
  for (const std::vector<int64_t>& c : choices) {
    std::vector<TileSchedule> next;
    for (const TileSchedule& s : out) {
      for (int64_t t : c) {
        TileSchedule x = s;
        x.tile.push_back(t);
        next.push_back(std::move(x));
      }
    }
    out = std::move(next);
  }
  return out;
}

void checkSchedule(const TileSchedule& s, const std::vector<int64_t>& dims) {
  const std::string what = "the schedule (" + s.json().substr(0, s.json().size() - 1) + ")";
  if (s.tile.size() != dims.size() || s.order.size() != dims.size())
    fail(what + " needs one tile size and one loop per result dimension (" +
         std::to_string(dims.size()) + ")");
  std::vector<bool> seen(dims.size(), false);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (s.tile[d] < 1 || s.tile[d] > dims[d])
      fail(what + ": tile size " + std::to_string(s.tile[d]) + " of dimension " +
           std::to_string(d) + " is not in [1, " + std::to_string(dims[d]) + "]");
    int64_t o = s.order[d];
    if (o < 0 || o >= static_cast<int64_t>(dims.size()) || seen[static_cast<size_t>(o)])
      fail(what + ": the loop order is not a permutation of the result dimensions");
    seen[static_cast<size_t>(o)] = true;
  }
}

// The kinds of tile of a schedule: per dimension the full tiles (looped) and a ragged remainder.
std::vector<TileKind> kindsOf(const std::vector<int64_t>& dims, const TileSchedule& s) {
  std::vector<TileKind> kinds{TileKind{}};
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t full = dims[d] / s.tile[d], rest = dims[d] % s.tile[d];
    std::vector<TileKind> next;
    for (const TileKind& k : kinds) {
      if (full > 0) {
        TileKind x = k;
        x.sizes.push_back(s.tile[d]);
        x.first.push_back(0);
        x.count.push_back(full);
        x.looped.push_back(full > 1);
        next.push_back(std::move(x));
      }
      if (rest > 0) {
        TileKind x = k;
        x.sizes.push_back(rest);
        x.first.push_back(full * s.tile[d]);
        x.count.push_back(1);
        x.looped.push_back(false);
        next.push_back(std::move(x));
      }
    }
    kinds = std::move(next);
  }
  return kinds;
}

class TiledProgram {
 public:
  TiledProgram(const isel::Target& target, const hlo::HloModule& kernel,
               const isel::ImportedKernel& layout)
      : target_(target), kernel_(kernel), layout_(layout) {}

  // The loop nest over every kind's tiles, or a reason it cannot be built.
  std::string build(const std::vector<CompiledKind>& kinds, const TileSchedule& schedule) {
    int64_t local = 0;
    for (const CompiledKind& k : kinds)
      local += std::max<int64_t>(0, k.compiled.allocation.placement.hbm_bytes - layout_.io_bytes);
    program_.emplace(kinds.front().compiled.program.name, layout_.io_bytes + local);
    for (const oracle::Tensor& t : kinds.front().compiled.program.tensors) {
      if (t.kind == oracle::TensorKind::kInput) program_->addInput(t.name, t.addr, t.shape);
      if (t.kind == oracle::TensorKind::kOutput) program_->addOutput(t.name, t.addr, t.shape);
    }
    int64_t base = layout_.io_bytes;
    for (size_t i = 0; i < kinds.size(); ++i) {
      if (std::string why = emitKind(kinds[i], schedule, base, i); !why.empty()) return why;
      base +=
          std::max<int64_t>(0, kinds[i].compiled.allocation.placement.hbm_bytes - layout_.io_bytes);
    }
    return "";
  }

  oracle::Program take() { return std::move(*program_); }

 private:
  // One kind's program inside its loops; `base` is where its constants and HBM scratch go.
  std::string emitKind(const CompiledKind& compiled, const TileSchedule& schedule, int64_t base,
                       size_t index) {
    const CompileResult& c = compiled.compiled;
    const TileKind& k = compiled.kind;
    const int64_t shift = base - layout_.io_bytes;
    // The loop variable of each looped result dimension, in the schedule's order.
    std::vector<std::optional<uint32_t>> depth_of(k.sizes.size());
    uint32_t depth = 0;
    for (int64_t d : schedule.order) {
      if (k.looped[static_cast<size_t>(d)]) depth_of[static_cast<size_t>(d)] = depth++;
    }
    std::optional<std::vector<HbmTensor>> found = hbmTensors(compiled);
    if (!found) return "a window does not move by one byte shift per tile";
    const std::vector<HbmTensor>& tensors = *found;
    // The byte shift of a tensor's window from the kind's first tile to the loops' tile.
    auto moveOf = [&](const HbmTensor& t) {
      Affine delta;
      for (size_t d = 0; d < t.step.size(); ++d) {
        if (depth_of[d] && t.step[d] != 0) delta = delta + Affine::var(*depth_of[d], t.step[d]);
      }
      return delta;
    };
    for (const oracle::Tensor& t : c.program.tensors) {
      if (t.kind == oracle::TensorKind::kConst)
        program_->addConst("t" + std::to_string(index) + "_" + t.name, t.addr + shift, t.value);
    }
    std::vector<std::vector<Affine>> calls;
    for (int32_t n : c.allocation.order) {
      const isel::PiiNode& node = c.graph.nodes[static_cast<size_t>(n)];
      const std::vector<int64_t>& attrs = c.allocation.placement.attrs[static_cast<size_t>(n)];
      std::vector<std::optional<Affine>> change(attrs.size());
      alloc::CallInfo info = alloc::callInfo(target_.units(), node);
      auto require = [&](int32_t slot, const Affine& a) {
        std::optional<Affine>& x = change[static_cast<size_t>(slot)];
        if (x && !(*x == a)) return false;
        x = a;
        return true;
      };
      for (const std::vector<alloc::SliceInfo>* slices : {&info.inputs, &info.outputs}) {
        for (const alloc::SliceInfo& s : *slices) {
          const bool hbm = target_.isa().buffers[static_cast<size_t>(s.buffer)].is_hbm;
          for (const alloc::AffineStart& a : s.starts) {
            if (!hbm) {
              for (const auto& [slot, coeff] : a.terms) {
                if (!require(slot, Affine())) return "an on-chip address moves with an HBM one";
              }
              continue;
            }
            int64_t at = a.constant;
            for (const auto& [slot, coeff] : a.terms)
              at += coeff * attrs[static_cast<size_t>(slot)];
            Affine delta = shift;
            if (at < layout_.io_bytes) {
              auto t = std::find_if(tensors.begin(), tensors.end(), [&](const HbmTensor& x) {
                return at >= x.offset && at < x.offset + x.bytes;
              });
              if (t == tensors.end()) return "an HBM access outside the kernel's tensors";
              delta = moveOf(*t);
            }
            if (a.terms.empty()) {
              if (!delta.isConstant() || delta.constant != 0)
                return "an HBM address that no attribute sets";
              continue;
            }
            if (a.terms.size() != 1) return "an HBM address of several attributes";
            const auto [slot, coeff] = a.terms[0];
            Affine by = delta.constant % coeff == 0 ? Affine(delta.constant / coeff) : Affine();
            if (delta.constant % coeff != 0) return "an HBM shift the attribute cannot take";
            for (const Affine::Term& term : delta.terms) {
              if (term.coeff % coeff != 0) return "an HBM shift the attribute cannot take";
              by = by + Affine::var(term.depth, term.coeff / coeff);
            }
            if (!require(slot, by)) return "one attribute addresses two windows";
          }
        }
      }
      std::vector<Affine> moved(attrs.begin(), attrs.end());
      for (size_t i = 0; i < attrs.size(); ++i) {
        if (change[i]) moved[i] = moved[i] + *change[i];
      }
      calls.push_back(std::move(moved));
    }
    std::vector<int64_t> extents;
    for (int64_t d : schedule.order) {
      if (!k.looped[static_cast<size_t>(d)]) continue;
      program_->beginLoop("t" + std::to_string(d), 0, k.count[static_cast<size_t>(d)]);
      extents.push_back(k.count[static_cast<size_t>(d)]);
    }
    for (size_t i = 0; i < calls.size(); ++i) {
      const isel::PiiNode& node = c.graph.nodes[static_cast<size_t>(c.allocation.order[i])];
      const isel::Unit& u = target_.units().units[static_cast<size_t>(node.unit)];
      if (std::string why = checkRequires(u, calls[i], extents); !why.empty()) return why;
      program_->callUnit(target_.isa(), u.is_macro, u.index, calls[i]);
    }
    for (size_t i = 0; i < extents.size(); ++i)
      program_->endLoop();
    return "";
  }

  // Every HBM tensor with the shift of its window per tile step of each result dimension; nothing
  // if a window's bytes do not move by one shift per step (a layout tile the windows cut).
  std::optional<std::vector<HbmTensor>> hbmTensors(const CompiledKind& compiled) const {
    const TileKind& k = compiled.kind;
    std::vector<HbmTensor> out;
    // follows[e]: the result dimension that dimension e of the tensor's window moves with.
    auto add = [&](const hlo::Shape& shape, int64_t offset, int64_t bytes,
                   const std::vector<int64_t>& follows) {
      HbmTensor t{offset, bytes, std::vector<int64_t>(k.sizes.size(), 0)};
      auto at = [&](const std::vector<int64_t>& steps) {
        std::vector<int64_t> index(follows.size(), 0);
        for (size_t e = 0; e < follows.size(); ++e) {
          if (follows[e] < 0) continue;
          size_t d = static_cast<size_t>(follows[e]);
          index[e] = k.first[d] + steps[d] * k.sizes[d];
        }
        return physicalOffset(shape, index);
      };
      std::vector<int64_t> none(k.sizes.size(), 0), last(k.sizes.size(), 0);
      const int64_t origin = at(none);
      int64_t far = origin;
      for (size_t d = 0; d < k.sizes.size(); ++d) {
        if (!k.looped[d]) continue;
        std::vector<int64_t> one = none;
        one[d] = 1;
        t.step[d] = at(one) - origin;
        for (int64_t n = 2; n < k.count[d]; ++n) {
          one[d] = n;
          if (at(one) != origin + n * t.step[d]) return false;
        }
        last[d] = k.count[d] - 1;
        far += last[d] * t.step[d];
      }
      if (at(last) != far) return false;
      out.push_back(std::move(t));
      return true;
    };
    for (size_t p = 0; p < layout_.parameters.size(); ++p) {
      const isel::KernelParameter& param = layout_.parameters[p];
      std::vector<int64_t> follows(static_cast<size_t>(param.shape.rank()), -1);
      for (const WindowMap& w : compiled.windows) {
        if (w.parameter == static_cast<int64_t>(p)) follows = w.result_dim;
      }
      if (!add(param.shape, param.hbm_offset, param.bytes, follows)) return std::nullopt;
    }
    for (const isel::KernelResult& r : layout_.results) {
      std::vector<int64_t> follows(static_cast<size_t>(r.shape.rank()));
      for (size_t d = 0; d < follows.size(); ++d)
        follows[d] = static_cast<int64_t>(d);
      if (!add(r.shape, r.hbm_offset, r.bytes, follows)) return std::nullopt;
    }
    return out;
  }

  // The attribute requires of every instruction the call executes, at every tile of its loops
  // (the moved attributes are HBM addresses, which a require may bound or align).
  std::string checkRequires(const isel::Unit& u, const std::vector<Affine>& attrs,
                            const std::vector<int64_t>& extents) {
    std::vector<int64_t> loops(extents.size(), 0), values(attrs.size());
    const bool moves =
        std::any_of(attrs.begin(), attrs.end(), [](const Affine& a) { return !a.isConstant(); });
    for (;;) {
      for (size_t i = 0; i < attrs.size(); ++i) {
        if (!attrs[i].eval(loops, &values[i])) return "an HBM address overflows";
      }
      for (const auto& [unit, args] : expandCall(target_.isa(), u.is_macro, u.index, values)) {
        const taidl::Instruction& inst = target_.isa().instructions[static_cast<size_t>(unit)];
        auto& constraints = constraints_[unit];
        if (constraints.empty()) constraints = taidl::attributeConstraints(inst);
        for (const taidl::Expr& e : constraints) {
          int64_t holds = 0;
          try {
            holds = taidl::evalExpr(e, taidl::EvalEnv{args, {}, {}});
          } catch (const taidl::ExprError&) {
          }
          if (!holds) return "a moved call of `" + inst.name.text + "` violates a require";
        }
      }
      if (!moves) return "";
      size_t d = extents.size();
      while (d > 0 && ++loops[d - 1] == extents[d - 1])
        loops[--d] = 0;
      if (d == 0) return "";
    }
  }

  const isel::Target& target_;
  const hlo::HloModule& kernel_;
  const isel::ImportedKernel& layout_;
  std::optional<oracle::Program> program_;
  std::map<int32_t, std::vector<taidl::Expr>> constraints_;
};

}  // namespace

std::optional<CompileResult> compileTiled(const isel::Target& target, const hlo::HloModule& kernel,
                                          const CompileOptions& options, Deadline deadline) {
  const auto start = std::chrono::steady_clock::now();
  const hlo::Shape& result = kernel.entry()->root()->shape();
  if (!result.isArray() || result.rank() == 0) {
    if (options.schedule) fail("a schedule needs a kernel with one array result");
    return std::nullopt;
  }
  const std::vector<int64_t> dims = result.dims();
  std::vector<TileSchedule> space;
  if (options.schedule) {
    checkSchedule(*options.schedule, dims);
    space.push_back(*options.schedule);
  } else {
    std::vector<int64_t> unit = unitTile(target.needs(), kernel);
    if (unit.empty() || tileCount(dims, unit) <= options.max_whole_tiles) return std::nullopt;
    space = scheduleSpace(dims, unit);
  }
  const isel::ImportedKernel layout = isel::hbmLayout(kernel);
  std::map<std::pair<std::vector<int64_t>, std::vector<int64_t>>, std::optional<CompiledKind>>
      compiled;  // by (sizes, first)
  std::optional<CompileResult> best;
  std::string why_not;
  for (const TileSchedule& schedule : space) {
    if (deadline.passed()) break;
    std::vector<CompiledKind> kinds;
    for (const TileKind& kind : kindsOf(dims, schedule)) {
      auto key = std::make_pair(kind.sizes, kind.first);
      auto it = compiled.find(key);
      if (it == compiled.end()) {
        std::optional<CompiledKind> made;
        TileModuleOrReason tile = buildTileModule(kernel, kind.first, kind.sizes);
        const std::string where =
            "the tile " + join(kind.sizes, "x") + " at (" + join(kind.first, ", ") + "): ";
        if (tile.tile) {
          CompileOptions o = options;
          o.selector.import.windows = {isel::ResultWindow{dims, kind.first}};
          try {
            made = CompiledKind{kind, compileKernel(target, *tile.tile->module, o, {}, deadline),
                                std::move(tile.tile->windows)};
          } catch (const DiagnosticError& e) {
            why_not = where + e.diagnostic().message;
          }
        } else {
          why_not = where + tile.reason;
        }
        it = compiled.emplace(key, std::move(made)).first;
      }
      if (!it->second) break;
      kinds.push_back(*it->second);
      kinds.back().kind = kind;
    }
    if (kinds.size() != kindsOf(dims, schedule).size()) continue;
    TiledProgram program(target, kernel, layout);
    if (std::string why = program.build(kinds, schedule); !why.empty()) {
      why_not = why;
      continue;
    }
    CompileResult r;
    r.model = kinds.front().compiled.model;
    for (const CompiledKind& k : kinds)
      r.costs.add(k.compiled.costs, k.kind.tiles());
    if (best && !r.costs.betterThan(best->costs, r.model)) continue;
    r.program = program.take();
    r.program.name = identifier(kernel.name());
    r.graph = kinds.front().compiled.graph;
    r.allocation = kinds.front().compiled.allocation;
    r.schedule = schedule;
    std::ostringstream text;
    text << "tiles " << join(schedule.tile, "x") << ", loops over dimensions "
         << join(schedule.order, ", ") << "; " << kinds.size() << " tile kernel"
         << (kinds.size() == 1 ? "" : "s");
    r.stats.tiling = text.str();
    for (const CompiledKind& k : kinds) {
      const CompileStats& s = k.compiled.stats;
      r.stats.parts.push_back(
          PartStats{"tile " + join(k.kind.sizes, "x") + " at (" + join(k.kind.first, ", ") + ")",
                    static_cast<size_t>(k.kind.tiles()), s.saturation.nodes,
                    s.saturation.iterations, s.candidates, s.total_seconds});
    }
    best = std::move(r);
  }
  if (!best) {
    if (options.schedule)
      fail(kernel.sourceFile(), {}, "the schedule cannot be compiled: " + why_not);
    return std::nullopt;
  }
  // Statistics: every tile kernel compiled, once each.
  CompileStats& stats = best->stats;
  for (const auto& [key, k] : compiled) {
    if (!k) continue;
    const CompileStats& s = k->compiled.stats;
    // The e-graph of the largest tile kernel stands for phase 1 (the parts list each one).
    if (s.saturation.nodes >= stats.saturation.nodes) stats.saturation = s.saturation;
    stats.import_seconds += s.import_seconds;
    stats.saturate_seconds += s.saturate_seconds;
    stats.extract_seconds += s.extract_seconds;
    stats.alloc_seconds += s.alloc_seconds;
    stats.solver_seconds += s.solver_seconds;
    stats.candidates += s.candidates;
    stats.allocated += s.allocated;
    stats.infeasible += s.infeasible;
    stats.orders_tried += s.orders_tried;
    stats.rematerialised += s.rematerialised;
  }
  stats.best_candidate = 1;
  stats.stop = "every schedule of the space was compiled";
  stats.total_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return best;
}

}  // namespace tacit::backend
