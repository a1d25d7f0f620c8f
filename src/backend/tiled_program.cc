// The loop nest of tiled compilation (backend/tiling.h): every output tile's kernels, their
// programs repeated with HBM addresses moved from tile to tile.
#include <algorithm>
#include <functional>

#include "alloc/call_info.h"
#include "backend/emit.h"
#include "backend/let_words.h"
#include "backend/tiling_internal.h"
#include "support/strings.h"
#include "taidl/check.h"
#include "taidl/expr.h"

namespace tacit::backend::tiling {
namespace {

using oracle::Affine;

int64_t localBytes(const StepKernel& k, const isel::ImportedKernel& layout) {
  return std::max<int64_t>(0, k.compiled.allocation.placement.hbm_bytes - layout.io_bytes);
}

}  // namespace

std::string TiledProgram::build(const std::vector<OutputTile>& tiles, const TileSchedule& schedule,
                                const std::string& name) {
  int64_t local = 0;
  for (const OutputTile& t : tiles) {
    for (const StepKernel& k : t.steps)
      local += localBytes(k, layout_);
  }
  accumulator_ = accumulatorBuffer(target_.isa(), schedule);
  program_.emplace(name, layout_.io_bytes + local);
  words_.emplace(target_.isa(), target_.units(), target_.needs().hbm_alignment);
  for (const oracle::Tensor& t : tiles.front().steps.back().compiled.program.tensors) {
    if (t.kind == oracle::TensorKind::kInput) program_->addInput(t.name, t.addr, t.shape);
    if (t.kind == oracle::TensorKind::kOutput) program_->addOutput(t.name, t.addr, t.shape);
  }
  const bool doubled = schedule.buffers > 1;
  int64_t base = layout_.io_bytes;
  size_t index = 0;
  for (const OutputTile& t : tiles) {
    // The output loops in the schedule's order, then (inside) a split contraction's.
    const size_t rank = t.kind.sizes.size();
    std::vector<int64_t> looped;
    for (int64_t d : schedule.order) {
      if (t.kind.looped(static_cast<size_t>(d))) looped.push_back(d);
    }
    // Multiple buffering unrolls the innermost loop around one kernel: a split contraction's, or
    // the innermost output loop of a tile computed by one kernel.
    const bool own_output_loop =
        doubled && t.steps.size() == 1 && !looped.empty() &&
        !(t.steps[0].kind.sizes.size() > rank && t.steps[0].kind.looped(rank));
    TileIndices index_of(rank + 1);
    std::vector<int64_t> extents;
    for (size_t i = 0; i + (own_output_loop ? 1 : 0) < looped.size(); ++i) {
      const auto d = static_cast<size_t>(looped[i]);
      index_of[d] = TileIndex{static_cast<uint32_t>(extents.size())};
      extents.push_back(t.kind.count[d]);
      program_->beginLoop("t" + std::to_string(d), 0, extents.back());
    }
    for (const StepKernel& k : t.steps) {
      std::string why;
      if (own_output_loop) {
        const auto d = static_cast<size_t>(looped.back());
        why = emitLoop(k, index_of, extents, d, t.kind.count[d], "t" + std::to_string(d),
                       schedule.buffers, base, index++);
      } else if (k.kind.sizes.size() > rank && k.kind.looped(rank)) {
        why = emitLoop(k, index_of, extents, rank, k.kind.count[rank], "k", schedule.buffers, base,
                       index++);
      } else {
        why = emitStep(k, index_of, extents, base, index++, {}, true);
      }
      if (!why.empty()) return why;
      base += localBytes(k, layout_);
    }
    for (size_t i = 0; i < extents.size(); ++i)
      program_->endLoop();
  }
  words_->finish(*program_);
  return "";
}

std::string TiledProgram::emitLoop(const StepKernel& k, TileIndices index_of,
                                   std::vector<int64_t> extents, size_t dim, int64_t n,
                                   const std::string& var, int64_t buffers, int64_t base,
                                   size_t index) {
  const int64_t copies = std::min(buffers, n);
  std::optional<OnChipShift> apart;
  if (copies > 1) {
    apart = onChipShift(k, copies);
    if (!apart)
      return std::to_string(copies) + " copies of the on-chip data of the tile kernel " +
             join(k.kind.sizes, "x") + " do not fit in its buffers (fewer \"buffers\")";
  }
  const auto depth = static_cast<uint32_t>(extents.size());
  if (!apart || apart->empty()) {  // one copy (nothing on chip moves: one is all there is)
    index_of[dim] = TileIndex{depth};
    extents.push_back(n);
    program_->beginLoop(var, 0, n);
    if (std::string why = emitStep(k, index_of, extents, base, index, {}, true); !why.empty())
      return why;
    program_->endLoop();
    return "";
  }
  // Copy c works on the data moved c times `apart`.
  auto shifted = [&](int64_t c) {
    OnChipShift out = *apart;
    for (auto& [buffer, by] : out)
      by *= c;
    return out;
  };
  // Groups of `copies` iterations, copy c on its own data; the remainder's tiles after them.
  extents.push_back(n / copies);
  program_->beginLoop(var, 0, n / copies);
  for (int64_t c = 0; c < copies; ++c) {
    index_of[dim] = TileIndex{depth, copies, c};
    if (std::string why = emitStep(k, index_of, extents, base, index, shifted(c), c == 0);
        !why.empty())
      return why;
  }
  program_->endLoop();
  extents.pop_back();
  for (int64_t c = 0; c < n % copies; ++c) {
    index_of[dim] = TileIndex{std::nullopt, 1, n / copies * copies + c};
    if (std::string why = emitStep(k, index_of, extents, base, index, shifted(c), false);
        !why.empty())
      return why;
  }
  return "";
}

// Per on-chip buffer the kernel addresses (not the accumulators, whose partial sums stay where
// they are), the extent of what it uses along the buffer's last access dimension: copies that
// far apart are disjoint. None if `copies` copies do not fit in the buffer.
std::optional<TiledProgram::OnChipShift> TiledProgram::onChipShift(const StepKernel& k,
                                                                   int64_t copies) const {
  const CompileResult& c = k.compiled;
  const taidl::Isa& isa = target_.isa();
  std::map<int32_t, std::pair<int64_t, int64_t>> used;  // buffer -> [lo, hi)
  for (int32_t n : c.allocation.order) {
    const isel::PiiNode& node = c.graph.nodes[static_cast<size_t>(n)];
    const std::vector<int64_t>& attrs = c.allocation.placement.attrs[static_cast<size_t>(n)];
    alloc::CallInfo info = alloc::callInfo(target_.units(), node);
    for (const std::vector<alloc::SliceInfo>* slices : {&info.inputs, &info.outputs}) {
      for (const alloc::SliceInfo& s : *slices) {
        const taidl::Buffer& b = isa.buffers[static_cast<size_t>(s.buffer)];
        if (b.is_hbm || s.starts.empty()) continue;
        const int64_t at = s.starts.back().at(attrs);
        // The accumulators' partial sums stay where they are; other data in their buffer (AMX's
        // A and B tiles beside the sums' registers) lies above them and may move.
        if (s.buffer == accumulator_ && at < k.pinned) continue;
        auto [it, fresh] = used.emplace(s.buffer, std::pair{at, at + s.extents.back()});
        if (!fresh) {
          it->second.first = std::min(it->second.first, at);
          it->second.second = std::max(it->second.second, at + s.extents.back());
        }
      }
    }
  }
  OnChipShift out;
  for (const auto& [buffer, range] : used) {
    const int64_t size = isa.buffers[static_cast<size_t>(buffer)].access.back();
    const int64_t extent = range.second - range.first;
    if (range.second + (copies - 1) * extent > size) return std::nullopt;
    out[buffer] = extent;
  }
  return out;
}

// One tile kernel's calls, its HBM addresses moved with the open loops (`index_of`: the tile of
// each loop dimension) and its on-chip data by `shift`; `base` is where its constants and HBM
// scratch go (its constants are added once, with `constants`).
std::string TiledProgram::emitStep(const StepKernel& k, const TileIndices& index_of,
                                   const std::vector<int64_t>& extents, int64_t base, size_t index,
                                   const OnChipShift& shift, bool constants) {
  const CompileResult& c = k.compiled;
  const int64_t local = base - layout_.io_bytes;
  std::optional<std::vector<HbmTensor>> found = hbmTensors(k);
  if (!found) return "a window does not move by one byte shift per tile";
  const std::vector<HbmTensor>& tensors = *found;
  // The byte shift of a tensor's window from the kind's first tile to the loops' tile.
  auto moveOf = [&](const HbmTensor& t) {
    Affine delta;
    for (size_t d = 0; d < t.step.size(); ++d) {
      if (!index_of[d] || t.step[d] == 0) continue;
      const TileIndex& i = *index_of[d];
      delta = delta + Affine(t.step[d] * i.offset);
      if (i.depth) delta = delta + Affine::var(*i.depth, t.step[d] * i.scale);
    }
    return delta;
  };
  for (const oracle::Tensor& t : c.program.tensors) {
    // A word table past the allocation's HBM is the tile program's own (let_words.h): the loop
    // nest loads its words from its own table.
    if (t.addr >= c.allocation.placement.hbm_bytes) continue;
    if (constants && t.kind == oracle::TensorKind::kConst)
      program_->addConst("t" + std::to_string(index) + "_" + t.name, t.addr + local, t.value);
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
        for (size_t dim = 0; dim < s.starts.size(); ++dim) {
          const alloc::AffineStart& a = s.starts[dim];
          if (!hbm) {
            // The second copy of double buffering moves along the last access dimension.
            auto moved = shift.find(s.buffer);
            int64_t by = moved != shift.end() && dim + 1 == s.starts.size() ? moved->second : 0;
            // The partial sums do not move.
            if (by != 0 && s.buffer == accumulator_ && a.at(attrs) < k.pinned) by = 0;
            if (by != 0 && a.terms.size() != 1) return "an on-chip address no one attribute sets";
            for (const auto& [slot, coeff] : a.terms) {
              if (by % coeff != 0) return "an on-chip shift the attribute cannot take";
              if (!require(slot, Affine(by / coeff)))
                return "an on-chip address moves with another one";
            }
            continue;
          }
          const int64_t at = a.at(attrs);
          Affine delta = local;
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
  for (size_t i = 0; i < calls.size(); ++i) {
    const isel::PiiNode& node = c.graph.nodes[static_cast<size_t>(c.allocation.order[i])];
    const isel::Unit& u = target_.units().units[static_cast<size_t>(node.unit)];
    if (std::string why = checkRequires(u, calls[i], extents); !why.empty()) return why;
    // A call that reads words loads them before it, in every iteration.
    if (std::string why = words_->call(*program_, u, node.case_index, calls[i]); !why.empty())
      return why;
  }
  return "";
}

std::optional<std::vector<TiledProgram::HbmTensor>> TiledProgram::hbmTensors(
    const StepKernel& step) const {
  const TileKind& k = step.kind;
  std::vector<HbmTensor> out;
  // follows[e]: the result dimension that dimension e of the tensor's window moves with.
  // per[e]: the window's start along e is the result's divided by it (a reshape's merged dims).
  auto add = [&](const hlo::Shape& shape, int64_t offset, int64_t bytes,
                 const std::vector<int64_t>& follows, const std::vector<int64_t>& per) {
    HbmTensor t{offset, bytes, std::vector<int64_t>(k.sizes.size(), 0)};
    bool exact = true;
    auto at = [&](const std::vector<int64_t>& steps) {
      std::vector<int64_t> index(follows.size(), 0);
      for (size_t e = 0; e < follows.size(); ++e) {
        if (follows[e] < 0) continue;
        size_t d = static_cast<size_t>(follows[e]);
        const int64_t by = e < per.size() ? per[e] : 1;
        index[e] = (k.first[d] + steps[d] * k.sizes[d]) / by;
        exact = exact && (k.first[d] + steps[d] * k.sizes[d]) % by == 0;
      }
      return isel::physicalOffset(shape, index);
    };
    std::vector<int64_t> none(k.sizes.size(), 0), last(k.sizes.size(), 0);
    const int64_t origin = at(none);
    int64_t far = origin;
    for (size_t d = 0; d < k.sizes.size(); ++d) {
      if (!k.looped(d)) continue;
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
    if (at(last) != far || !exact) return false;
    out.push_back(std::move(t));
    return true;
  };
  for (size_t p = 0; p < layout_.parameters.size(); ++p) {
    const isel::KernelParameter& param = layout_.parameters[p];
    std::vector<int64_t> follows(static_cast<size_t>(param.shape.rank()), -1), per;
    for (const WindowMap& w : step.windows) {
      if (w.parameter == static_cast<int64_t>(p)) follows = w.result_dim, per = w.per;
    }
    if (!add(param.shape, param.hbm_offset, param.bytes, follows, per)) return std::nullopt;
  }
  for (const isel::KernelResult& r : layout_.results) {
    std::vector<int64_t> follows(static_cast<size_t>(r.shape.rank()));
    for (size_t d = 0; d < follows.size(); ++d)
      follows[d] = static_cast<int64_t>(d);
    if (!add(r.shape, r.hbm_offset, r.bytes, follows, {})) return std::nullopt;
  }
  return out;
}

namespace {

// Whether node i of e is a linear function of attributes: integers, references, sums,
// differences, negations, and products with an attribute-free factor.
bool attributeFree(const taidl::Expr& e, int32_t i) {
  const taidl::ExprNode& n = e.node(i);
  if (n.op == taidl::ExprOp::kRef)
    return n.ref == taidl::RefKind::kParam || n.ref == taidl::RefKind::kConst;
  for (int32_t c : {n.a, n.b, n.c}) {
    if (c >= 0 && !attributeFree(e, c)) return false;
  }
  return true;
}

bool linear(const taidl::Expr& e, int32_t i) {
  const taidl::ExprNode& n = e.node(i);
  switch (n.op) {
    case taidl::ExprOp::kInt:
    case taidl::ExprOp::kRef:
      return true;
    case taidl::ExprOp::kNeg:
      return linear(e, n.a);
    case taidl::ExprOp::kAdd:
    case taidl::ExprOp::kSub:
      return linear(e, n.a) && linear(e, n.b);
    case taidl::ExprOp::kMul:
      return (attributeFree(e, n.a) && linear(e, n.b)) || (attributeFree(e, n.b) && linear(e, n.a));
    default:
      return attributeFree(e, i);
  }
}

// For an inequality between linear functions of the attributes: the sign its slack (lhs - rhs)
// must not have the wrong way, +1 when lhs - rhs must stay small (<, <=), -1 when large; 0 when the
// conjunct is not such an inequality.
int inequality(const taidl::Expr& e) {
  const taidl::ExprNode& r = e.root();
  int sense = 0;
  if (r.op == taidl::ExprOp::kLt || r.op == taidl::ExprOp::kLe) sense = 1;
  if (r.op == taidl::ExprOp::kGt || r.op == taidl::ExprOp::kGe) sense = -1;
  return sense != 0 && linear(e, r.a) && linear(e, r.b) ? sense : 0;
}

}  // namespace

// The attribute requires of every instruction the call executes, at every iteration of its loops
// (the moved attributes are HBM addresses, which a require may bound or align). An inequality
// between linear functions of an instruction's attributes, which are affine in the loop
// variables, holds everywhere iff it holds at the corner of the loops where its slack is least:
// one evaluation instead of one per iteration (a 1024^3 GEMM's middle step runs 254k times).
// Anything else — a macro's expansion, an alignment `%` — is evaluated at every iteration.
std::string TiledProgram::checkRequires(const isel::Unit& u, const std::vector<Affine>& attrs,
                                        const std::vector<int64_t>& extents) {
  const bool moves =
      std::any_of(attrs.begin(), attrs.end(), [](const Affine& a) { return !a.isConstant(); });
  std::vector<int64_t> values(attrs.size());
  auto at = [&](const std::vector<int64_t>& loops) {
    for (size_t i = 0; i < attrs.size(); ++i) {
      if (!attrs[i].eval(loops, &values[i])) return false;
    }
    return true;
  };
  auto holds = [](const taidl::Expr& e, const std::vector<int64_t>& args) {
    try {
      return taidl::evalExpr(e, taidl::EvalEnv{args, {}, {}}) != 0;
    } catch (const taidl::ExprError&) {
      return false;
    }
  };
  const taidl::Isa& isa = target_.isa();
  auto constraintsOf = [&](int32_t unit) -> const std::vector<taidl::Expr>& {
    auto& c = constraints_[unit];
    if (c.empty()) c = taidl::attributeConstraints(isa.instructions[static_cast<size_t>(unit)]);
    return c;
  };
  auto violated = [&](int32_t unit) {
    return "a moved call of `" + isa.instructions[static_cast<size_t>(unit)].name.text +
           "` violates a require";
  };
  // Every iteration (or the one, when nothing moves) of the conjuncts `which` selects.
  auto everywhere = [&](const std::function<bool(int32_t, const taidl::Expr&)>& which) {
    std::vector<int64_t> loops(extents.size(), 0);
    for (;;) {
      if (!at(loops)) return std::string("an HBM address overflows");
      for (const auto& [unit, args] : expandCall(isa, u.is_macro, u.index, values)) {
        for (const taidl::Expr& e : constraintsOf(unit)) {
          if (which(unit, e) && !holds(e, args)) return violated(unit);
        }
      }
      if (!moves) return std::string();
      size_t d = extents.size();
      while (d > 0 && ++loops[d - 1] == extents[d - 1])
        loops[--d] = 0;
      if (d == 0) return std::string();
    }
  };
  if (u.is_macro || !moves) return everywhere([](int32_t, const taidl::Expr&) { return true; });
  for (const taidl::Expr& e : constraintsOf(u.index)) {
    const int sense = inequality(e);
    if (sense == 0) continue;
    // The slack's change per loop step, then the corner that makes it worst.
    auto slack = [&](const std::vector<int64_t>& loops) -> std::optional<int64_t> {
      if (!at(loops)) return std::nullopt;
      try {
        taidl::EvalEnv env{values, {}, {}};
        return taidl::evalNode(e, e.root().a, env) - taidl::evalNode(e, e.root().b, env);
      } catch (const taidl::ExprError&) {
        return std::nullopt;
      }
    };
    std::vector<int64_t> origin(extents.size(), 0), worst(extents.size(), 0);
    const std::optional<int64_t> base = slack(origin);
    if (!base) return violated(u.index);
    for (size_t d = 0; d < extents.size(); ++d) {
      std::vector<int64_t> step = origin;
      step[d] = 1;
      const std::optional<int64_t> next = extents[d] > 1 ? slack(step) : base;
      if (!next) return violated(u.index);
      if ((*next - *base) * sense > 0) worst[d] = extents[d] - 1;
    }
    if (!at(worst) || !holds(e, values)) return violated(u.index);
  }
  const std::vector<taidl::Expr>& all = constraintsOf(u.index);
  if (std::all_of(all.begin(), all.end(), [](const taidl::Expr& e) { return inequality(e) != 0; }))
    return at(std::vector<int64_t>(extents.size(), 0)) ? "" : "an HBM address overflows";
  return everywhere([](int32_t, const taidl::Expr& e) { return inequality(e) == 0; });
}

}  // namespace tacit::backend::tiling
