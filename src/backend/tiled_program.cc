// The loop nest of tiled compilation (backend/tiling.h): every output tile's kernels, their
// programs repeated with HBM addresses moved from tile to tile.
#include <algorithm>

#include "alloc/call_info.h"
#include "backend/emit.h"
#include "backend/tiling_internal.h"
#include "taidl/check.h"
#include "taidl/expr.h"

namespace tacit::backend::tiling {
namespace {

using oracle::Affine;

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
  program_.emplace(name, layout_.io_bytes + local);
  for (const oracle::Tensor& t : tiles.front().steps.back().compiled.program.tensors) {
    if (t.kind == oracle::TensorKind::kInput) program_->addInput(t.name, t.addr, t.shape);
    if (t.kind == oracle::TensorKind::kOutput) program_->addOutput(t.name, t.addr, t.shape);
  }
  int64_t base = layout_.io_bytes;
  size_t index = 0;
  for (const OutputTile& t : tiles) {
    // The output loops in the schedule's order, then (inside) a split contraction's.
    const size_t rank = t.kind.sizes.size();
    std::vector<std::optional<uint32_t>> depth_of(rank + 1);
    std::vector<int64_t> extents;
    for (int64_t d : schedule.order) {
      if (!t.kind.looped(static_cast<size_t>(d))) continue;
      depth_of[static_cast<size_t>(d)] = static_cast<uint32_t>(extents.size());
      extents.push_back(t.kind.count[static_cast<size_t>(d)]);
      program_->beginLoop("t" + std::to_string(d), 0, extents.back());
    }
    for (const StepKernel& k : t.steps) {
      std::vector<std::optional<uint32_t>> depths = depth_of;
      std::vector<int64_t> inner = extents;
      const bool looped = k.kind.sizes.size() > rank && k.kind.looped(rank);
      if (looped) {
        depths[rank] = static_cast<uint32_t>(inner.size());
        inner.push_back(k.kind.count[rank]);
        program_->beginLoop("k", 0, inner.back());
      }
      if (std::string why = emitStep(k, depths, inner, base, index++); !why.empty()) return why;
      if (looped) program_->endLoop();
      base += localBytes(k, layout_);
    }
    for (size_t i = 0; i < extents.size(); ++i)
      program_->endLoop();
  }
  return "";
}

// One tile kernel's calls, its HBM addresses moved with the open loops (`depth_of`: the loop
// variable of each loop dimension); `base` is where its constants and HBM scratch go.
std::string TiledProgram::emitStep(const StepKernel& k,
                                   const std::vector<std::optional<uint32_t>>& depth_of,
                                   const std::vector<int64_t>& extents, int64_t base,
                                   size_t index) {
  const CompileResult& c = k.compiled;
  const int64_t shift = base - layout_.io_bytes;
  std::optional<std::vector<HbmTensor>> found = hbmTensors(k);
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
  for (size_t i = 0; i < calls.size(); ++i) {
    const isel::PiiNode& node = c.graph.nodes[static_cast<size_t>(c.allocation.order[i])];
    const isel::Unit& u = target_.units().units[static_cast<size_t>(node.unit)];
    if (std::string why = checkRequires(u, calls[i], extents); !why.empty()) return why;
    program_->callUnit(target_.isa(), u.is_macro, u.index, calls[i]);
  }
  return "";
}

std::optional<std::vector<TiledProgram::HbmTensor>> TiledProgram::hbmTensors(
    const StepKernel& step) const {
  const TileKind& k = step.kind;
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
    if (at(last) != far) return false;
    out.push_back(std::move(t));
    return true;
  };
  for (size_t p = 0; p < layout_.parameters.size(); ++p) {
    const isel::KernelParameter& param = layout_.parameters[p];
    std::vector<int64_t> follows(static_cast<size_t>(param.shape.rank()), -1);
    for (const WindowMap& w : step.windows) {
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

std::string TiledProgram::checkRequires(const isel::Unit& u, const std::vector<Affine>& attrs,
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

}  // namespace tacit::backend::tiling
