// A minimal machine built on the oracle-facing API (walk.h, specialize.h), for the tests: it
// keeps every buffer as bytes, walks each instruction, specialises it per key (cached), checks
// the accesses, and runs each phase with hlo::EvalPlan. It is what src/oracle does, without
// programs, tracing or speed.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "hlo_eval/evaluator.h"
#include "taidl/specialize.h"
#include "taidl/walk.h"

namespace tacit::taidl::testing {

class MiniMachine {
 public:
  MiniMachine(const Isa& isa, int64_t hbm_bytes) : isa_(isa), hbm_(hbm_bytes) {
    regs = isa.initialRegisters();
    for (const Buffer& b : isa.buffers)
      memory.emplace_back(static_cast<size_t>(elements(b) * hlo::byteSize(b.dtype)), 0);
  }

  std::vector<std::vector<uint8_t>> memory;  // per buffer: its whole tensor, row-major
  std::vector<int64_t> regs;
  WalkResult last;
  int64_t total_cost = 0;
  size_t specialisations = 0;

  std::vector<int64_t> dims(const Buffer& b) const {
    std::vector<int64_t> d = b.access;
    if (b.is_hbm) d[0] = hbm_;
    d.insert(d.end(), b.unit.begin(), b.unit.end());
    return d;
  }

  void run(const std::string& name, std::vector<int64_t> attrs, const WalkOptions& options = {}) {
    int32_t macro = isa_.findMacro(name);
    if (macro >= 0) {
      for (const ExpandedCall& c : expandMacro(isa_, macro, attrs, options.site))
        runInstruction(c.instruction, c.attrs, options);
      return;
    }
    runInstruction(isa_.findInstruction(name), attrs, options);
  }

 private:
  int64_t elements(const Buffer& b) const {
    int64_t n = 1;
    for (int64_t d : dims(b))
      n *= d;
    return n;
  }

  // Copies the slice [starts, starts + shape) between the buffer tensor and a dense array.
  void copySlice(const Buffer& b, std::vector<uint8_t>& mem, const int64_t* starts,
                 const hlo::Shape& shape, uint8_t* dense, bool to_dense) const {
    std::vector<int64_t> d = dims(b);
    auto elem = static_cast<size_t>(hlo::byteSize(b.dtype));
    std::vector<int64_t> strides = hlo::rowMajorStrides(d);
    std::vector<int64_t> idx(d.size(), 0);
    int64_t count = shape.elementCount();
    for (int64_t n = 0; n < count; ++n) {
      int64_t off = 0;
      for (size_t k = 0; k < d.size(); ++k)
        off += (starts[k] + idx[k]) * strides[k];
      uint8_t* m = mem.data() + static_cast<size_t>(off) * elem;
      uint8_t* x = dense + static_cast<size_t>(n) * elem;
      if (to_dense)
        std::copy(m, m + elem, x);
      else
        std::copy(x, x + elem, m);
      for (size_t k = d.size(); k-- > 0;) {
        if (++idx[k] < shape.dim(static_cast<int64_t>(k))) break;
        idx[k] = 0;
      }
    }
  }

  void runInstruction(int32_t inst, const std::vector<int64_t>& attrs, const WalkOptions& options) {
    walk(isa_, inst, attrs, regs, options, last);
    total_cost += last.cost;
    auto& slot = cache_[{inst, last.key}];
    if (!slot) {
      slot = specialize(isa_, inst, last.key, options.site);
      ++specialisations;
    }
    const Specialization& spec = *slot;
    checkAccesses(isa_, spec, last, attrs, hbm_, options.site);
    std::vector<std::vector<uint8_t>> carried;
    for (const Phase& phase : spec.phases) {
      std::vector<std::vector<uint8_t>> inputs;
      for (uint32_t a : phase.reads) {
        const SliceAccess& acc = spec.accesses[a];
        const Buffer& b = isa_.buffers[static_cast<size_t>(acc.buffer)];
        inputs.emplace_back(static_cast<size_t>(acc.shape.byteSize()));
        copySlice(b, memory[static_cast<size_t>(acc.buffer)], &last.starts[acc.start_offset],
                  acc.shape, inputs.back().data(), true);
      }
      if (!phase.module) continue;
      for (auto& c : carried)
        inputs.push_back(std::move(c));
      hlo::EvalPlan plan = hlo::EvalPlan::compile(*phase.module->entry());
      std::vector<std::vector<uint8_t>> outputs;
      for (const hlo::Shape& s : plan.outputShapes())
        outputs.emplace_back(static_cast<size_t>(s.byteSize()));
      std::vector<const void*> in;
      for (auto& i : inputs)
        in.push_back(i.data());
      std::vector<void*> out;
      for (auto& o : outputs)
        out.push_back(o.data());
      plan.run(in, out);
      for (size_t w = 0; w < phase.writes.size(); ++w) {
        const SliceAccess& acc = spec.accesses[phase.writes[w]];
        const Buffer& b = isa_.buffers[static_cast<size_t>(acc.buffer)];
        copySlice(b, memory[static_cast<size_t>(acc.buffer)], &last.starts[acc.start_offset],
                  acc.shape, outputs[w].data(), false);
      }
      carried.assign(
          std::make_move_iterator(outputs.begin() + static_cast<int64_t>(phase.writes.size())),
          std::make_move_iterator(outputs.end()));
    }
  }

  const Isa& isa_;
  int64_t hbm_;
  struct KeyLess {
    bool operator()(const std::pair<int32_t, SpecKey>& a,
                    const std::pair<int32_t, SpecKey>& b) const {
      return a.first != b.first ? a.first < b.first : a.second.words < b.second.words;
    }
  };
  std::map<std::pair<int32_t, SpecKey>, std::unique_ptr<Specialization>, KeyLess> cache_;
};

}  // namespace tacit::taidl::testing
