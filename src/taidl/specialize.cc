#include "taidl/specialize.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "hlo/builder.h"
#include "support/strings.h"
#include "taidl/ops.h"

namespace tacit::taidl {
namespace {

struct TraceOp {
  enum class Kind : uint8_t { kRead, kOp, kConstant, kWrite };
  Kind kind = Kind::kOp;
  const Stmt* stmt = nullptr;
  uint32_t access = 0;  // kRead / kWrite
  int32_t value = -1;   // defined value (read/op/constant) or the value written
  std::vector<int32_t> operands;
  hlo::Shape shape;
  hlo::HloAttributes attrs;  // to_apply filled in when building
  std::optional<std::pair<hlo::HloOpcode, hlo::PrimitiveType>> reducer;
  std::optional<hlo::Literal> literal;
  uint32_t phase = 0;
};

class Tracer {
 public:
  Tracer(const Isa& isa, const Instruction& inst, const SpecKey& key, const CallSite& site)
      : isa_(isa), inst_(inst), key_(key), site_(site) {}

  void run(Specialization& spec) {
    if (key_.words.size() < static_cast<size_t>(inst_.num_alpha)) badKey();
    attrs_.assign(inst_.attrs.size(), 0);
    std::copy(key_.words.begin(), key_.words.begin() + inst_.num_alpha, attrs_.begin());
    pos_ = static_cast<size_t>(inst_.num_alpha);
    loops_.assign(inst_.loop_names.size(), 0);
    slots_.assign(inst_.value_names.size(), -1);
    block(inst_.body);
    for (const Stmt* w : inst_.writes)
      write(*w, slots_[static_cast<size_t>(w->value)]);
    if (pos_ != key_.words.size()) badKey();
    spec.accesses = std::move(accesses_);
    spec.start_count = starts_;
  }

  std::vector<TraceOp>& trace() { return trace_; }
  std::vector<hlo::Shape>& shapes() { return shapes_; }

 private:
  [[noreturn]] void badKey() const {
    fail("specialize: the key does not belong to instruction " + inst_.name.text +
         " (it must come from walk())");
  }

  int64_t word() {
    if (pos_ >= key_.words.size()) badKey();
    return key_.words[pos_++];
  }

  EvalEnv env() const { return EvalEnv{attrs_, {}, loops_}; }

  template <typename Fn>
  auto guarded(uint32_t offset, Fn&& fn) -> decltype(fn()) {
    try {
      return fn();
    } catch (const ExprError& e) {
      failAtCall(isa_, site_, e.offset, e.message + " in " + what());
    } catch (const DiagnosticError& e) {
      failAtCall(isa_, site_, offset, e.diagnostic().message + " in " + what());
    }
  }

  std::string what() const { return isa_.callText(inst_, attrs_) + " (computational attributes)"; }

  uint32_t addAccess(const Stmt& s, bool is_write, const hlo::Shape& shape) {
    const Buffer& b = isa_.buffers[static_cast<size_t>(s.buffer_index)];
    SliceAccess a;
    a.write = is_write;
    a.buffer = s.buffer_index;
    a.shape = shape;
    a.start_offset = static_cast<uint32_t>(starts_);
    a.spec_offset = s.offset;
    starts_ += static_cast<size_t>(b.rank());
    accesses_.push_back(std::move(a));
    return static_cast<uint32_t>(accesses_.size() - 1);
  }

  int32_t newValue(const Stmt& s, hlo::Shape shape) {
    shapes_.push_back(std::move(shape));
    auto id = static_cast<int32_t>(shapes_.size() - 1);
    slots_[static_cast<size_t>(s.value)] = id;
    return id;
  }

  void read(const Stmt& s) {
    hlo::Shape shape = guarded(s.offset, [&] { return evalType(s.type, env()); });
    TraceOp op;
    op.kind = TraceOp::Kind::kRead;
    op.stmt = &s;
    op.access = addAccess(s, false, shape);
    op.value = newValue(s, shape);
    trace_.push_back(std::move(op));
  }

  void write(const Stmt& s, int32_t value) {
    TraceOp op;
    op.kind = TraceOp::Kind::kWrite;
    op.stmt = &s;
    op.access = addAccess(s, true, shapes_[static_cast<size_t>(value)]);
    op.value = value;
    trace_.push_back(std::move(op));
  }

  void operation(const Stmt& s) {
    TraceOp op;
    op.stmt = &s;
    op.shape = guarded(s.offset, [&] { return evalType(s.type, env()); });
    if (s.kind == StmtKind::kConstant) {
      op.kind = TraceOp::Kind::kConstant;
      op.literal = guarded(s.offset, [&] { return evalLiteral(s.literal, op.shape, env()); });
    } else {
      op.kind = TraceOp::Kind::kOp;
      for (int32_t v : s.operand_values)
        op.operands.push_back(slots_[static_cast<size_t>(v)]);
      hlo::PrimitiveType rt = op.operands.size() > 1
                                  ? shapes_[static_cast<size_t>(op.operands[1])].elementType()
                                  : hlo::PrimitiveType::kInvalid;
      op.attrs = guarded(s.offset, [&] {
        return evalOpAttrs(s.hlo_opcode, s.attrs, env(), rt,
                           [&](hlo::HloOpcode r, hlo::PrimitiveType t) -> hlo::HloComputation* {
                             op.reducer = std::make_pair(r, t);
                             return nullptr;
                           });
      });
    }
    op.value = newValue(s, op.shape);
    trace_.push_back(std::move(op));
  }

  void block(const std::vector<Stmt>& body) {
    for (const Stmt& s : body) {
      if (++executed_ > kMaxStatementsExecuted)
        failAtCall(isa_, site_, s.offset,
                   what() + " executes more than " + std::to_string(kMaxStatementsExecuted) +
                       " statements");
      switch (s.kind) {
        case StmtKind::kReads:
        case StmtKind::kRead:
          read(s);
          break;
        case StmtKind::kWrite:
          write(s, slots_[static_cast<size_t>(s.value)]);
          break;
        case StmtKind::kOp:
        case StmtKind::kConstant:
          operation(s);
          break;
        case StmtKind::kIf:
          block(word() != 0 ? s.body : s.else_body);
          break;
        case StmtKind::kRepeat: {
          int64_t lo = word(), trips = word();
          for (int64_t i = 0; i < trips; ++i) {
            loops_[static_cast<size_t>(s.loop)] = lo + i;
            block(s.body);
          }
          break;
        }
        default:
          break;
      }
    }
  }

  const Isa& isa_;
  const Instruction& inst_;
  const SpecKey& key_;
  const CallSite& site_;
  size_t pos_ = 0;
  std::vector<int64_t> attrs_, loops_;
  std::vector<int32_t> slots_;  // value slot -> current value id
  std::vector<hlo::Shape> shapes_;
  std::vector<TraceOp> trace_;
  std::vector<SliceAccess> accesses_;
  size_t starts_ = 0;
  int64_t executed_ = 0;
};

// Assigns phases: a read of a buffer written earlier in the current phase starts a new phase.
uint32_t assignPhases(std::vector<TraceOp>& trace, const std::vector<SliceAccess>& accesses) {
  uint32_t phase = 0;
  std::set<int32_t> written;
  for (TraceOp& op : trace) {
    int32_t buffer =
        accesses.empty() || (op.kind != TraceOp::Kind::kRead && op.kind != TraceOp::Kind::kWrite)
            ? -1
            : accesses[op.access].buffer;
    if (op.kind == TraceOp::Kind::kRead && written.count(buffer)) {
      ++phase;
      written.clear();
    }
    op.phase = phase;
    if (op.kind == TraceOp::Kind::kWrite) written.insert(buffer);
  }
  return phase + 1;
}

}  // namespace

std::unique_ptr<Specialization> specialize(const Isa& isa, int32_t instruction, const SpecKey& key,
                                           const CallSite& site) {
  const Instruction& inst = isa.instructions[static_cast<size_t>(instruction)];
  auto spec = std::make_unique<Specialization>();
  spec->instruction = instruction;
  spec->key = key;
  Tracer tracer(isa, inst, key, site);
  tracer.run(*spec);
  std::vector<TraceOp>& trace = tracer.trace();
  uint32_t phases = assignPhases(trace, spec->accesses);

  // Value lifetimes across phases.
  size_t n = tracer.shapes().size();
  std::vector<uint32_t> def_phase(n, 0), last_use(n, 0);
  for (const TraceOp& op : trace) {
    if (op.kind != TraceOp::Kind::kWrite) def_phase[static_cast<size_t>(op.value)] = op.phase;
    auto use = [&](int32_t v) {
      last_use[static_cast<size_t>(v)] = std::max(last_use[static_cast<size_t>(v)], op.phase);
    };
    for (int32_t v : op.operands)
      use(v);
    if (op.kind == TraceOp::Kind::kWrite) use(op.value);
  }
  auto carried = [&](uint32_t boundary) {  // values crossing from phase `boundary` to the next
    std::vector<int32_t> out;
    for (size_t v = 0; v < n; ++v) {
      if (def_phase[v] <= boundary && last_use[v] > boundary)
        out.push_back(static_cast<int32_t>(v));
    }
    return out;
  };

  std::vector<int32_t> carry_in;
  for (uint32_t p = 0; p < phases; ++p) {
    Phase phase;
    std::vector<int32_t> carry_out = p + 1 < phases ? carried(p) : std::vector<int32_t>{};
    std::string name = inst.name.text + (phases > 1 ? "_phase" + std::to_string(p) : "");
    auto module = std::make_unique<hlo::HloModule>(name);
    hlo::HloBuilder b(name);
    std::map<int32_t, hlo::HloInstruction*> values;
    std::map<std::pair<hlo::HloOpcode, hlo::PrimitiveType>, hlo::HloComputation*> reducers;
    std::vector<hlo::HloInstruction*> outputs;
    for (TraceOp& op : trace) {
      if (op.phase != p || op.kind != TraceOp::Kind::kRead) continue;
      SliceAccess& a = spec->accesses[op.access];
      a.phase = p;
      a.index = static_cast<uint32_t>(phase.reads.size());
      phase.reads.push_back(op.access);
      values[op.value] = b.parameter(a.index, a.shape);
    }
    for (size_t i = 0; i < carry_in.size(); ++i) {
      int32_t v = carry_in[i];
      values[v] = b.parameter(static_cast<int64_t>(phase.reads.size() + i),
                              tracer.shapes()[static_cast<size_t>(v)]);
    }
    phase.carried_in = static_cast<uint32_t>(carry_in.size());
    for (TraceOp& op : trace) {
      if (op.phase != p) continue;
      const Stmt& s = *op.stmt;
      auto build = [&]() -> hlo::HloInstruction* {
        if (op.kind == TraceOp::Kind::kConstant) return b.constant(*op.literal);
        std::vector<hlo::HloInstruction*> operands;
        for (int32_t v : op.operands)
          operands.push_back(values.at(v));
        if (op.reducer) {
          auto& r = reducers[*op.reducer];
          if (!r) r = hlo::addScalarReducer(*module, op.reducer->first, op.reducer->second);
          op.attrs.called.assign(1, hlo::CalledComputations{"to_apply", {r}, false});
        }
        return b.add(s.hlo_opcode, operands, op.attrs, op.shape);
      };
      if (op.kind == TraceOp::Kind::kOp || op.kind == TraceOp::Kind::kConstant) {
        try {
          values[op.value] = build();
        } catch (const DiagnosticError& e) {
          failAtCall(
              isa, site, s.offset,
              e.diagnostic().message + " in " +
                  isa.callText(inst, std::vector<int64_t>(key.words.begin(),
                                                          key.words.begin() + inst.num_alpha)));
        }
      } else if (op.kind == TraceOp::Kind::kWrite) {
        SliceAccess& a = spec->accesses[op.access];
        a.phase = p;
        a.index = static_cast<uint32_t>(phase.writes.size());
        phase.writes.push_back(op.access);
        outputs.push_back(values.at(op.value));
      }
    }
    for (int32_t v : carry_out)
      outputs.push_back(values.at(v));
    phase.carried_out = static_cast<uint32_t>(carry_out.size());
    if (!outputs.empty()) {
      b.tuple(outputs, "outputs");
      b.addTo(*module, true);
      phase.module = std::move(module);
    }
    spec->phases.push_back(std::move(phase));
    carry_in = std::move(carry_out);
  }
  return spec;
}

void checkAccesses(const Isa& isa, const Specialization& spec, const WalkResult& walk,
                   std::span<const int64_t> attrs, int64_t hbm_bytes, const CallSite& site) {
  const Instruction& inst = isa.instructions[static_cast<size_t>(spec.instruction)];
  if (walk.starts.size() != spec.start_count)
    fail("checkAccesses: the walk does not belong to this specialisation");
  for (const SliceAccess& a : spec.accesses) {
    const Buffer& b = isa.buffers[static_cast<size_t>(a.buffer)];
    std::vector<int64_t> dims = b.access;
    if (b.is_hbm) dims[0] = hbm_bytes;
    dims.insert(dims.end(), b.unit.begin(), b.unit.end());
    for (size_t k = 0; k < dims.size(); ++k) {
      int64_t start = walk.starts[a.start_offset + k];
      int64_t extent = a.shape.dim(static_cast<int64_t>(k));
      int64_t end = 0;
      if (start >= 0 && !__builtin_add_overflow(start, extent, &end) && end <= dims[k]) continue;
      std::vector<int64_t> starts(
          walk.starts.begin() + a.start_offset,
          walk.starts.begin() + a.start_offset + static_cast<int64_t>(dims.size()));
      failAtCall(isa, site, a.spec_offset,
                 isa.callText(inst, attrs) + ": the " + (a.write ? "write to " : "read of ") +
                     b.name.text + "[" + join(starts, ", ") + "] of " + a.shape.shortStr() +
                     " exceeds " + b.name.text + " (" + hlo::Shape(b.dtype, dims).shortStr() +
                     ") in dimension " + std::to_string(k));
    }
  }
}

}  // namespace tacit::taidl
