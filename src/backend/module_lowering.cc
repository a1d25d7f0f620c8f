#include "backend/module_lowering.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backend/convolution_gemm.h"
#include "hlo/builder.h"

namespace tacit::backend {

using hlo::HloBuilder;
using hlo::HloInstruction;
using hlo::HloOpcode;

bool isLowerableConvolution(const HloInstruction& conv, const ModuleLowering& options) {
  if (conv.opcode() != HloOpcode::kConvolution || conv.operandCount() != 2) return false;
  const hlo::HloAttributes& a = conv.attrs();
  if (!a.conv_dims || a.batch_group_count.value_or(1) != 1) return false;
  const hlo::Shape& in = conv.operand(0)->shape();
  const hlo::Shape& k = conv.operand(1)->shape();
  const hlo::Shape& out = conv.shape();
  if (!in.isArray() || !k.isArray() || !out.isArray()) return false;
  if (in.isDynamic() || k.isDynamic() || out.isDynamic()) return false;
  if (in.elementType() != k.elementType()) return false;
  // An empty tensor has nothing to multiply; the evaluator's convolution handles it as it is.
  if (in.elementCount() == 0 || k.elementCount() == 0 || out.elementCount() == 0) return false;
  const size_t spatial = a.conv_dims->input_spatial.size();
  if (a.window ? a.window->size() != spatial : spatial != 0) return false;
  // The im2col matrix: a row per output position (batch and spatial), a column per tap and
  // input feature.
  double im2col = static_cast<double>(hlo::byteSize(in.elementType())) *
                  static_cast<double>(in.dim(a.conv_dims->input_feature)) *
                  static_cast<double>(out.elementCount()) /
                  static_cast<double>(out.dim(a.conv_dims->output_feature));
  for (const hlo::WindowDim& w : a.window.value_or(std::vector<hlo::WindowDim>{}))
    im2col *= static_cast<double>(w.size);
  return im2col <= options.max_im2col_bytes;
}

namespace {

// A value of the old entry not yet built in the new one: its parts side by side in the last
// dimension, with `tail` applied, are its value.
struct Deferred {
  std::vector<HloInstruction*> parts;
  std::vector<int64_t> columns;  // each part's columns that are the value's, not padding
  std::vector<LayoutStep> tail;
};

bool isMovableElementwise(const HloInstruction& op) {
  switch (hlo::opcodeCategory(op.opcode())) {
    case hlo::OpcodeCategory::kUnary:
    case hlo::OpcodeCategory::kTranscendental:
    case hlo::OpcodeCategory::kBinary:
    case hlo::OpcodeCategory::kComparison:
    case hlo::OpcodeCategory::kTernary:
      return op.shape().isArray();
    case hlo::OpcodeCategory::kConversion:
      return op.opcode() == HloOpcode::kConvert || op.opcode() == HloOpcode::kReducePrecision;
    default:
      return false;
  }
}

// Whether `c` or a computation it calls holds a reduce. Such a fusion is not inlined: a reduce
// inside a fusion sums its elements in order, the same reduce outside one as XLA's tree rewrite
// does (docs/numerics.md, "reduce and reduce-window"), so inlining it would change its floats.
bool reducesIn(const hlo::HloComputation& c) {
  for (const auto& inst : c.instructions()) {
    if (inst->opcode() == HloOpcode::kReduce) return true;
    for (const hlo::CalledComputations& called : inst->attrs().called) {
      for (const hlo::HloComputation* callee : called.computations)
        if (callee && callee != &c && reducesIn(*callee)) return true;
    }
  }
  return false;
}

// The entry rebuilt with its convolutions rewritten. A convolution's GEMM result keeps its GEMM
// shape through the elementwise operations that follow it (an epilogue: bias, clamp, convert),
// and the layout steps to the convolution's shape come after them: elementwise operations
// commute with reshapes and transposes, and an ISA computes a GEMM with its epilogue, not a GEMM
// whose result is reshaped between the two (Gemmini saturates its sums as it moves them out).
class EntryRebuild {
 public:
  EntryRebuild(const hlo::HloComputation& entry, const ModuleLowering& options)
      : entry_(entry), options_(options), b_(entry.name()), rewrite_(b_, used_, options) {
    for (const auto& inst : entry.instructions()) {
      used_.insert(inst->name());
      name_[inst.get()] = inst->name();
      loc_[inst.get()] = inst->loc();
    }
  }

  std::unique_ptr<hlo::HloComputation> run() {
    for (const auto& inst : entry_.instructions())
      add(*inst);
    for (const auto& inst : entry_.instructions()) {
      for (HloInstruction* p : inst->controlPredecessors())
        value(inst.get())->controlPredecessors().push_back(value(p));
    }
    return b_.build(value(entry_.root()));
  }
  std::unordered_set<const HloInstruction*> gemms;
  // The data movement around them: im2col, the kernel's matrix, the steps to the result's shape.
  std::unordered_set<const HloInstruction*> layout;
  int64_t lowered = 0, kept = 0, fusions = 0;  // convolutions rewritten and kept, fusions inlined

 private:
  // A fusion's computation inlined where the fusion was: its parameters are the fusion's
  // operands, its instructions are named `fusion.instruction` and sit at the fusion's place, its
  // root is the fusion's value. Nested fusions are inlined too.
  void inlineFusion(const HloInstruction& fusion, const hlo::HloComputation& fused) {
    ++fusions;
    for (const auto& inner : fused.instructions()) {
      loc_[inner.get()] = loc_[&fusion];
      if (inner->opcode() == HloOpcode::kParameter) {
        alias(inner.get(), fusion.operand(inner->parameterNumber()));
        continue;
      }
      name_[inner.get()] = rewrite_.fresh(name_[&fusion] + "." + inner->name());
      add(*inner);
    }
    alias(&fusion, fused.root());
  }
  // `to` stands for what `from` was built as (deferred or not).
  void alias(const HloInstruction* to, const HloInstruction* from) {
    auto d = deferred_.find(from);
    if (d != deferred_.end()) {
      deferred_[to] = d->second;
    } else {
      to_new_[to] = to_new_.at(from);
    }
  }

  void add(const HloInstruction& inst) {
    const hlo::HloComputation* fused =
        inst.opcode() == HloOpcode::kFusion ? inst.called("calls") : nullptr;
    if (fused && options_.inline_fusions && fused->parameterCount() == inst.operandCount() &&
        !reducesIn(*fused)) {
      inlineFusion(inst, *fused);
      return;
    }
    const bool lowerable = isLowerableConvolution(inst, options_);
    if (inst.opcode() == HloOpcode::kConvolution) ++(lowerable ? lowered : kept);
    if (lowerable) {
      const size_t before = b_.computation().instructions().size();
      Lowered l =
          rewrite_.lower(inst, name_[&inst], value(inst.operand(0)), value(inst.operand(1)));
      const std::unordered_set<const HloInstruction*> parts(l.parts.begin(), l.parts.end());
      const auto& made = b_.computation().instructions();
      for (size_t i = before; i < made.size(); ++i) {
        if (!parts.count(made[i].get()) && made[i]->opcode() != HloOpcode::kConvert)
          layout.insert(made[i].get());
      }
      for (HloInstruction* part : l.parts) {
        gemms.insert(part);
        part->setLoc(loc_[&inst]);
      }
      if (l.tail.empty() && l.parts.size() == 1) {
        to_new_[&inst] = l.parts[0];
      } else {
        deferred_[&inst] = {std::move(l.parts), std::move(l.columns), std::move(l.tail)};
      }
      return;
    }
    if (moved(inst)) return;
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* o : inst.operands())
      operands.push_back(value(o));
    HloInstruction* now = b_.clone(inst, std::move(operands), name_[&inst]);
    now->setLoc(loc_[&inst]);
    to_new_[&inst] = now;
  }

  // `inst` computed on a deferred operand's GEMM-shaped parts, itself deferred: when it is
  // elementwise, one operand is deferred and each other one is a scalar or a broadcast the GEMM
  // shape can express (of a scalar; of a vector along the last dimension, when the layout steps
  // only reshape and keep that dimension; each part takes its columns of the vector).
  bool moved(const HloInstruction& inst) {
    if (!isMovableElementwise(inst)) return false;
    const Deferred* from = nullptr;
    for (const HloInstruction* o : inst.operands()) {
      auto it = deferred_.find(o);
      if (it == deferred_.end()) continue;
      if (from) return false;
      from = &it->second;
    }
    if (!from) return false;
    const int64_t width =  // of the parts side by side, padding aside
        std::accumulate(from->columns.begin(), from->columns.end(), int64_t{0});
    const bool last_kept =
        std::none_of(from->tail.begin(), from->tail.end(),
                     [](const LayoutStep& s) { return s.kind == LayoutStep::kTranspose; }) &&
        inst.shape().rank() > 0 && inst.shape().dims().back() == width;
    for (const HloInstruction* o : inst.operands()) {
      if (deferred_.count(o) || o->shape().rank() == 0) continue;
      if (o->opcode() != HloOpcode::kBroadcast) return false;
      const std::vector<int64_t>& d = o->attrs().dimensions.value_or(std::vector<int64_t>{});
      const bool scalar = d.empty() && o->operand(0)->shape().rank() == 0;
      const bool along_last = d.size() == 1 && d[0] == o->shape().rank() - 1 && last_kept;
      if (!scalar && !along_last) return false;
    }
    Deferred now{{}, from->columns, from->tail};
    int64_t column = 0;
    for (size_t j = 0; j < from->parts.size(); ++j) {
      HloInstruction* part = from->parts[j];
      const std::vector<int64_t>& dims = part->shape().dims();
      const int64_t columns = from->columns[j];
      const std::string suffix = from->parts.size() > 1 ? ".part" + std::to_string(j) : ".flat";
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* o : inst.operands()) {
        auto it = deferred_.find(o);
        if (it != deferred_.end()) {
          operands.push_back(it->second.parts[j]);
        } else if (o->shape().rank() == 0) {
          operands.push_back(value(o));
        } else if (!o->attrs().dimensions || o->attrs().dimensions->empty()) {
          operands.push_back(
              b_.broadcast(value(o->operand(0)), dims, {}, rewrite_.fresh(o->name() + suffix)));
        } else {
          HloInstruction* v = value(o->operand(0));
          if (from->parts.size() > 1) {
            v = b_.slice(v, {column}, {column + columns}, {}, rewrite_.fresh(o->name() + suffix));
            layout.insert(v);  // the part's columns of the vector: data movement
          }
          if (dims.back() > columns) {  // the padded columns take zeros (their results are cut)
            v = rewrite_.paddedAt(v, 0, dims.back() - columns, o->name() + suffix);
            layout.insert(v);
          }
          operands.push_back(b_.broadcast(v, dims, {static_cast<int64_t>(dims.size()) - 1},
                                          rewrite_.fresh(o->name() + suffix)));
        }
      }
      HloInstruction* p = b_.add(inst.opcode(), std::move(operands), inst.attrs(),
                                 hlo::Shape(inst.shape().elementType(), dims),
                                 rewrite_.fresh(name_[&inst] + suffix));
      p->setLoc(loc_[&inst]);
      now.parts.push_back(p);
      column += columns;
    }
    deferred_[&inst] = std::move(now);
    return true;
  }

  // The new value of `old`, its parts joined and its layout steps applied now if it was deferred
  // (the last step takes its name).
  HloInstruction* value(const HloInstruction* old) {
    auto it = to_new_.find(old);
    if (it != to_new_.end()) return it->second;
    const Deferred& d = deferred_.at(old);
    auto name = [&](bool last) {
      return last ? name_[old] : rewrite_.fresh(name_[old] + ".layout");
    };
    HloInstruction* v = d.parts[0];
    if (d.parts.size() > 1) {
      v = b_.concatenate(d.parts, v->shape().rank() - 1, name(d.tail.empty()));
      layout.insert(v);
    }
    for (size_t i = 0; i < d.tail.size(); ++i) {
      const LayoutStep& step = d.tail[i];
      const std::string n = name(i + 1 == d.tail.size());
      switch (step.kind) {
        case LayoutStep::kReshape:
          v = b_.reshape(v, step.dims, n);
          break;
        case LayoutStep::kTranspose:
          v = b_.transpose(v, step.dims, n);
          break;
        case LayoutStep::kSlice:
          v = b_.slice(v, std::vector<int64_t>(step.dims.size(), 0), step.dims, {}, n);
          break;
      }
      layout.insert(v);
    }
    v->setLoc(loc_[old]);
    return to_new_[old] = v;
  }

  const hlo::HloComputation& entry_;
  const ModuleLowering& options_;
  std::unordered_set<std::string> used_;
  HloBuilder b_;
  ConvolutionRewrite rewrite_;
  // Each instruction's name and source position in the rebuilt entry: an entry instruction's
  // own, an inlined one's `fusion.name` and its fusion's position.
  std::unordered_map<const HloInstruction*, std::string> name_;
  std::unordered_map<const HloInstruction*, SourceLoc> loc_;
  std::unordered_map<const HloInstruction*, HloInstruction*> to_new_;
  std::unordered_map<const HloInstruction*, Deferred> deferred_;
};

// The instructions `root` depends on (operands and control predecessors), and the parameters.
std::unordered_set<const HloInstruction*> live(const hlo::HloComputation& c,
                                               const HloInstruction* root) {
  std::unordered_set<const HloInstruction*> seen;
  std::vector<const HloInstruction*> stack{root};
  for (const HloInstruction* p : c.parameters())
    if (p) stack.push_back(p);
  while (!stack.empty()) {
    const HloInstruction* i = stack.back();
    stack.pop_back();
    if (!seen.insert(i).second) continue;
    for (const HloInstruction* o : i->operands())
      stack.push_back(o);
    for (const HloInstruction* p : i->controlPredecessors())
      stack.push_back(p);
  }
  return seen;
}

}  // namespace

LoweredModule lowerModule(const hlo::HloModule& module, const ModuleLowering& options) {
  LoweredModule result;
  const hlo::HloComputation* entry = module.entry();
  if (!entry) return result;
  bool changes = false;
  for (const auto& inst : entry->instructions()) {
    const hlo::HloComputation* fused =
        inst->opcode() == HloOpcode::kFusion ? inst->called("calls") : nullptr;
    changes = changes || isLowerableConvolution(*inst, options) ||
              (options.inline_fusions && fused && !reducesIn(*fused));
    result.kept +=
        inst->opcode() == HloOpcode::kConvolution && !isLowerableConvolution(*inst, options);
  }
  if (!changes) return result;

  // A copy of the module whose entry is rebuilt: its other computations (reducers, fusions) are
  // the copy's own, so the rebuilt instructions may call them.
  std::unique_ptr<hlo::HloModule> copy = hlo::cloneModule(module);
  hlo::HloComputation* old_entry = copy->entry();
  const std::string entry_name = old_entry->name();
  std::string retired = entry_name + ".before_lowering";
  for (int i = 1; copy->findComputation(retired); ++i)
    retired = entry_name + ".before_lowering." + std::to_string(i);

  EntryRebuild rebuild(*old_entry, options);
  std::unique_ptr<hlo::HloComputation> built = rebuild.run();
  old_entry->setName(retired);
  result.lowered = rebuild.lowered;
  result.kept = rebuild.kept;
  result.fusions = rebuild.fusions;

  // Without what the rewrite left unused (a broadcast now made in the GEMM's shape); what the
  // module itself never used stays.
  const std::unordered_set<const HloInstruction*> used = live(*built, built->root());
  const std::unordered_set<const HloInstruction*> used_before = live(*old_entry, old_entry->root());
  std::unordered_set<std::string> unused_before;
  for (const auto& inst : old_entry->instructions())
    if (!used_before.count(inst.get())) unused_before.insert(inst->name());
  HloBuilder b(entry_name);
  std::unordered_map<const HloInstruction*, HloInstruction*> kept;
  for (const auto& inst : built->instructions()) {
    if (!used.count(inst.get()) && !unused_before.count(inst->name())) continue;
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* o : inst->operands())
      operands.push_back(kept.at(o));
    kept[inst.get()] = b.clone(*inst, std::move(operands));
  }
  for (const auto& [from, to] : kept) {
    for (HloInstruction* p : from->controlPredecessors())
      to->controlPredecessors().push_back(kept.at(p));
  }
  // A dead convolution's GEMM and data movement went with it.
  auto carry = [&](const std::unordered_set<const HloInstruction*>& from,
                   std::unordered_set<const HloInstruction*>& to) {
    for (const HloInstruction* i : from) {
      auto it = kept.find(i);
      if (it != kept.end()) to.insert(it->second);
    }
  };
  carry(rebuild.gemms, result.gemms);
  carry(rebuild.layout, result.layout);
  hlo::HloComputation* now = b.addTo(*copy, /*entry=*/true, kept.at(built->root()));
  now->setExecutionThread(old_entry->executionThread());
  now->setLoc(old_entry->loc());
  result.module = std::move(copy);
  return result;
}

}  // namespace tacit::backend
