#include "oracle/exec.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "hlo/parser.h"
#include "hlo/printer.h"
#include "hlo_eval/evaluator_plan.h"
#include "support/diagnostic.h"

namespace tacit::oracle::detail {
namespace {

// Slices used in place must be aligned for any element type a plan may view them as.
constexpr uintptr_t kDirectAlign = 16;

bool aligned(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & (kDirectAlign - 1)) == 0;
}

AccessPlan planAccess(const taidl::Isa& isa, const taidl::SliceAccess& s) {
  const taidl::Buffer& b = isa.buffers[static_cast<size_t>(s.buffer)];
  AccessPlan a;
  a.buffer = s.buffer;
  a.start_offset = s.start_offset;
  a.dims = b.access;
  a.dims.insert(a.dims.end(), b.unit.begin(), b.unit.end());
  a.extent = s.shape.dims();
  a.elem = hlo::byteSize(b.dtype);
  a.bytes = s.shape.byteSize();
  a.stride.assign(a.dims.size(), 1);
  for (size_t k = a.dims.size(); k-- > 1;)
    a.stride[k - 1] = a.stride[k] * (b.is_hbm ? 1 : a.dims[k]);
  // Merge trailing dimensions that the slice covers whole into one contiguous run.
  size_t k = a.dims.size();
  int64_t run = 1;
  while (k > 0) {
    --k;
    run *= a.extent[k];
    if (b.is_hbm || a.extent[k] != a.dims[k]) break;
  }
  a.outer = k;
  a.run_bytes = run * a.elem;
  a.runs = 1;
  for (size_t d = 0; d < a.outer; ++d)
    a.runs *= a.extent[d];
  if (a.runs == 0) a.runs = 1, a.run_bytes = 0;  // an empty slice
  int64_t span = 1;
  for (size_t d = 0; d < a.dims.size(); ++d)
    span += (a.extent[d] - 1) * a.stride[d];
  a.span_bytes = a.bytes > 0 ? span * a.elem : 0;
  return a;
}

// Byte offset of the slice's first element.
int64_t baseOffset(const AccessPlan& a, const int64_t* starts) {
  int64_t off = 0;
  for (size_t k = 0; k < a.dims.size(); ++k)
    off += starts[k] * a.stride[k];
  return off * a.elem;
}

// Copies between the slice in memory (`mem` = its first element) and a dense buffer.
void copyRuns(const AccessPlan& a, uint8_t* mem, uint8_t* dense, bool to_dense) {
  auto run = static_cast<size_t>(a.run_bytes);
  if (a.outer == 0) {
    if (to_dense)
      std::memcpy(dense, mem, run);
    else
      std::memcpy(mem, dense, run);
    return;
  }
  forEachRun(a, [&](int64_t r, int64_t off) {
    uint8_t* m = mem + off * a.elem;
    uint8_t* d = dense + static_cast<size_t>(r) * run;
    if (to_dense)
      std::memcpy(d, m, run);
    else
      std::memcpy(m, d, run);
  });
}

// memcpy with the sizes of vector registers inlined (queued slices are mostly one register).
inline void copyBytes(uint8_t* dst, const uint8_t* src, size_t n) {
  switch (n) {
    case 64:
      std::memcpy(dst, src, 64);
      return;
    case 32:
      std::memcpy(dst, src, 32);
      return;
    case 16:
      std::memcpy(dst, src, 16);
      return;
    default:
      std::memcpy(dst, src, n);
  }
}

// Batched execution (BatchPlan): which computations qualify, and their batched copies.

// Bytes per bit of the queue's dirty maps.
constexpr int64_t kDirtyBlock = 64;

bool plainArray(const hlo::Shape& s) {
  return s.isArray() && s.hasDefaultLayout() && !s.isDynamic();
}

// Every instruction computes element i of its result from element i of its operands (in the
// row-major order of a leading dimension), so a leading batch dimension computes independent
// executions side by side.
bool elementwiseOnly(const hlo::HloModule& m) {
  if (m.computations().size() != 1 || m.entry() == nullptr) return false;
  using O = hlo::HloOpcode;
  bool computes = false;  // a plain copy gains nothing from batching (it copies three times)
  for (const auto& inst : m.entry()->instructions()) {
    O op = inst->opcode();
    if (op == O::kTuple) {
      if (!inst->isRoot()) return false;
      for (const hlo::HloInstruction* x : inst->operands()) {
        if (!plainArray(x->shape())) return false;
      }
      continue;
    }
    if (!plainArray(inst->shape())) return false;
    bool ok = op == O::kParameter || op == O::kConstant || op == O::kConvert ||
              op == O::kBitcastConvert || op == O::kReshape ||
              (hlo::detail::isElementwiseOpcode(op) && op != O::kClamp);
    if (!ok || !inst->controlPredecessors().empty()) return false;
    computes =
        computes || op == O::kConstant || op == O::kConvert || hlo::detail::isElementwiseOpcode(op);
    for (const hlo::HloInstruction* x : inst->operands()) {
      // select with a scalar predicate broadcasts it: not elementwise in the batch dimension.
      if (!plainArray(x->shape()) || x->shape().rank() != inst->shape().rank()) {
        if (op != O::kReshape && op != O::kBitcastConvert) return false;
      }
    }
  }
  return computes;
}

hlo::Shape withBatch(const hlo::Shape& s, int64_t b) {
  std::vector<int64_t> dims{b};
  dims.insert(dims.end(), s.dims().begin(), s.dims().end());
  return hlo::Shape(s.elementType(), std::move(dims));
}

// A copy of `m` with a leading dimension `b` on every array (constants repeated b times).
std::unique_ptr<hlo::HloModule> batchedModule(const hlo::HloModule& m, int64_t b) {
  std::unique_ptr<hlo::HloModule> c = hlo::parseModule(hlo::printModule(m), m.sourceFile());
  c->setEntryLayout(std::nullopt);
  for (const auto& inst : c->entry()->instructions()) {
    hlo::Shape& s = inst->mutableShape();
    if (s.isTuple()) {
      for (hlo::Shape& t : s.tupleShapes())
        t = withBatch(t, b);
      continue;
    }
    s = withBatch(s, b);
    if (inst->opcode() == hlo::HloOpcode::kConstant && inst->literal()) {
      const hlo::Literal& one = *inst->literal();
      hlo::Literal many(s);
      for (int64_t i = 0; i < b; ++i)
        std::memcpy(many.bytes() + static_cast<size_t>(i) * one.byteCount(), one.bytes(),
                    one.byteCount());
      inst->setLiteral(std::move(many));
    }
  }
  return c;
}

// Byte moves (Entry::moves): which computations qualify, and the map of their bytes.

bool hasPred(const hlo::Shape& s) {
  if (s.isTuple()) {
    for (const hlo::Shape& t : s.tupleShapes()) {
      if (hasPred(t)) return true;
    }
    return false;
  }
  return s.elementType() == hlo::PrimitiveType::kPred;
}

// Every instruction copies bytes to places fixed by the shapes alone. (No pred: its inputs must
// hold 0 or 1, and the map is found by running the plan on arbitrary bytes.)
bool movesOnly(const hlo::HloModule& m) {
  if (m.computations().size() != 1 || m.entry() == nullptr) return false;
  using O = hlo::HloOpcode;
  for (const auto& inst : m.entry()->instructions()) {
    O op = inst->opcode();
    bool ok = op == O::kParameter || op == O::kReshape || op == O::kBitcastConvert ||
              op == O::kBitcast || op == O::kBroadcast || op == O::kTranspose || op == O::kCopy ||
              op == O::kSlice || op == O::kConcatenate || op == O::kTuple ||
              op == O::kGetTupleElement || op == O::kReverse;
    if (!ok || !inst->controlPredecessors().empty() || hasPred(inst->shape())) return false;
  }
  return true;
}

// The plan's outputs (concatenated) for inputs whose byte at concatenated index g is tag(g).
template <typename Tag>
std::vector<uint8_t> runTagged(hlo::EvalPlan& plan, const std::vector<int64_t>& in_bytes,
                               const std::vector<int64_t>& out_bytes, const Tag& tag) {
  std::vector<hlo::AlignedBytes> in, out;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  size_t g = 0;
  for (int64_t n : in_bytes) {
    hlo::AlignedBytes& b = in.emplace_back(static_cast<size_t>(n));
    for (size_t i = 0; i < b.size(); ++i)
      b.data()[i] = tag(g++);
    in_ptrs.push_back(b.data());
  }
  for (int64_t n : out_bytes)
    out_ptrs.push_back(out.emplace_back(static_cast<size_t>(n)).data());
  plan.run(in_ptrs, out_ptrs);
  std::vector<uint8_t> all;
  for (const hlo::AlignedBytes& b : out)
    all.insert(all.end(), b.data(), b.data() + b.size());
  return all;
}

// Where each output byte (concatenated) comes from (concatenated input index); empty if the plan
// does not behave as a fixed byte map on three checks beyond the two runs that read it off.
std::vector<uint32_t> byteMap(hlo::EvalPlan& plan, const std::vector<int64_t>& in_bytes,
                              const std::vector<int64_t>& out_bytes) {
  size_t total = 0;
  for (int64_t n : in_bytes)
    total += static_cast<size_t>(n);
  if (total == 0 || total > 0xffff) return {};
  std::vector<uint8_t> lo = runTagged(plan, in_bytes, out_bytes, [](size_t g) { return g; });
  std::vector<uint8_t> hi = runTagged(plan, in_bytes, out_bytes, [](size_t g) { return g >> 8; });
  std::vector<uint32_t> map(lo.size());
  for (size_t j = 0; j < lo.size(); ++j) {
    map[j] = lo[j] | uint32_t{hi[j]} << 8;
    if (map[j] >= total) return {};
  }
  for (uint32_t salt : {0x5bu, 0xc6u, 0x21u}) {
    auto tag = [salt](size_t g) { return static_cast<uint8_t>((g * 0x9e3779b1u >> 11) ^ salt); };
    std::vector<uint8_t> v = runTagged(plan, in_bytes, out_bytes, tag);
    for (size_t j = 0; j < v.size(); ++j) {
      if (v[j] != tag(map[j])) return {};
    }
  }
  return map;
}

// Pieces of consecutive bytes, then pieces of equal size at equal steps, as Entry::Move records.
std::vector<Entry::Move> movesOf(const std::vector<uint32_t>& map,
                                 const std::vector<uint32_t>& reads,
                                 const std::vector<int64_t>& in_bytes,
                                 const std::vector<uint32_t>& writes,
                                 const std::vector<int64_t>& out_bytes) {
  std::vector<Entry::Move> pieces;
  size_t j = 0;
  for (size_t w = 0; w < writes.size(); ++w) {
    for (int64_t o = 0; o < out_bytes[w]; ++o, ++j) {
      size_t r = 0;
      int64_t in_off = map[j];
      while (in_off >= in_bytes[r])
        in_off -= in_bytes[r++];
      auto at = static_cast<uint32_t>(in_off);
      if (o > 0 && pieces.back().in_off + pieces.back().bytes == at &&
          pieces.back().read == reads[r]) {
        ++pieces.back().bytes;
        continue;
      }
      pieces.push_back({writes[w], reads[r], static_cast<uint32_t>(o), at, 1, 1, 0, 0});
    }
  }
  std::vector<Entry::Move> moves;
  for (const Entry::Move& m : pieces) {
    if (!moves.empty()) {
      Entry::Move& run = moves.back();
      int64_t out_step = int64_t{m.out_off} - run.out_off, in_step = int64_t{m.in_off} - run.in_off;
      bool same = run.write == m.write && run.read == m.read && run.bytes == m.bytes;
      if (same && run.count == 1 && out_step >= m.bytes && std::abs(in_step) < (1 << 16)) {
        run.out_step = static_cast<int32_t>(out_step);
        run.in_step = static_cast<int32_t>(in_step);
        ++run.count;
        continue;
      }
      uint32_t next = run.count;
      if (same && m.out_off == run.out_off + next * static_cast<uint32_t>(run.out_step) &&
          int64_t{m.in_off} == run.in_off + int64_t{next} * run.in_step) {
        ++run.count;
        continue;
      }
    }
    moves.push_back(m);
  }
  return moves;
}

// `count` copies of the piece at src to dst, dst + bytes, ... (a broadcast: one load). A
// register's worth is one store: a wide load of it soon after (a queued execution capturing its
// input) is then forwarded from the store instead of waiting for many narrow stores to retire.
template <typename T>
void fill(uint8_t* dst, const uint8_t* src, uint32_t count) {
  T v;
  std::memcpy(&v, src, sizeof(T));
  if (count * sizeof(T) == 64) {
    using Vector [[gnu::vector_size(64)]] = T;
    Vector all = Vector{} + v;
    std::memcpy(dst, &all, 64);
    return;
  }
  for (uint32_t i = 0; i < count; ++i)
    std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
}

}  // namespace

void copyPieces(uint8_t* dst, const uint8_t* src, const Entry::Move& m) {
  if (m.count == 1) return copyBytes(dst, src, m.bytes);
  if (m.in_step == 0 && m.out_step == static_cast<int32_t>(m.bytes)) {
    switch (m.bytes) {
      case 1:
        return fill<uint8_t>(dst, src, m.count);
      case 2:
        return fill<uint16_t>(dst, src, m.count);
      case 4:
        return fill<uint32_t>(dst, src, m.count);
      case 8:
        return fill<uint64_t>(dst, src, m.count);
      default:
        break;
    }
  }
  for (uint32_t i = 0; i < m.count; ++i)
    std::memcpy(dst + int64_t{i} * m.out_step, src + int64_t{i} * m.in_step, m.bytes);
}

int BatchPlan::sizeFor(int n) {
  if (n <= 2) return 2;
  if (n <= 4) return 4;
  return (n + 7) / 8 * 8;
}

bool Executor::batchPlan(const Entry& e, BatchPlan& batch, int size) {
  const PhasePlan& p = e.phases[0];
  int64_t b = size;
  try {
    std::unique_ptr<hlo::HloModule> m = batchedModule(*e.spec->phases[0].module, b);
    auto plan = std::make_unique<hlo::EvalPlan>(hlo::EvalPlan::compile(*m->entry(), eval_));
    // The batched plan must take and give exactly b slices per read and write.
    const auto& ins = plan->inputShapes();
    const auto& outs = plan->outputShapes();
    if (ins.size() != p.reads.size() || outs.size() != p.writes.size()) return false;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (ins[i].byteSize() != b * e.accesses[p.reads[i]].bytes) return false;
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      if (outs[i].byteSize() != b * e.accesses[p.writes[i]].bytes) return false;
    }
    batch.modules[size] = std::move(m);
    batch.plans[size] = std::move(plan);
    for (int smaller = 2; smaller < size; ++smaller) {
      if (batch.plans[smaller] && !batch.used[smaller]) {
        batch.plans[smaller].reset();
        batch.modules[smaller].reset();
      }
    }
    return true;
  } catch (const DiagnosticError&) {
    return false;
  }
}

void Executor::prepareBatch(Entry& e) {
  e.batch_checked = true;
  // A native kernel called in place is cheaper than queueing (capturing the inputs, copying
  // the results back).
  if (e.phases.size() != 1 || e.direct) return;
  const PhasePlan& p = e.phases[0];
  const taidl::Phase& sp = e.spec->phases[0];
  if (!p.plan || !sp.module || sp.carried_in != 0 || sp.carried_out != 0 || !p.carried.empty() ||
      p.writes_share_buffer || p.writes.empty())
    return;
  int64_t item = 0;
  for (const AccessPlan& a : e.accesses) {
    if (!a.contiguous() || a.bytes <= 0) return;
    item += a.bytes;
  }
  if (item > BatchPlan::kMaxItemBytes || !elementwiseOnly(*sp.module)) return;
  auto batch = std::make_unique<BatchPlan>();
  // The smallest batch is compiled now (and must fit); larger ones when first needed (every batch
  // size has the same instructions, only a longer leading dimension).
  if (!batchPlan(e, *batch, 2)) return;
  auto slice = [&](uint32_t access) {
    const AccessPlan& a = e.accesses[access];
    return BatchPlan::Slice{nullptr, static_cast<size_t>(a.bytes), access, a.buffer};
  };
  for (uint32_t r : p.reads)
    batch->in.push_back(slice(r));
  for (uint32_t w : p.writes)
    batch->out.push_back(slice(w));
  batch->in_ptrs.resize(p.reads.size());
  batch->out_ptrs.resize(p.writes.size());
  batch->dst.resize(static_cast<size_t>(BatchPlan::kMax) * p.writes.size());
  batch->capacity = 2;
  e.batch = std::move(batch);
}

void Executor::place(BatchPlan& b, int capacity, int keep) {
  auto cap = static_cast<size_t>(capacity);
  size_t need = 0;
  for (const BatchPlan::Slice& r : b.in)
    need += (cap * r.bytes + 63) / 64 * 64;
  for (const BatchPlan::Slice& w : b.out)
    need += (cap * w.bytes + 63) / 64 * 64;
  // Queued items are copied to their new places (fresh memory: the layout moves).
  hlo::AlignedBytes fresh;
  if (keep > 0 || queue_mem_.size() < need) {
    fresh = hlo::AlignedBytes(std::max(need, queue_mem_.size()));
    std::memset(fresh.data(), 0, fresh.size());
  }
  uint8_t* at = fresh.size() > 0 ? fresh.data() : queue_mem_.data();
  for (size_t r = 0; r < b.in.size(); ++r) {
    size_t bytes = b.in[r].bytes;
    if (keep > 0) std::memcpy(at, b.in[r].stage, static_cast<size_t>(keep) * bytes);
    b.in[r].stage = at;
    b.in_ptrs[r] = at;
    at += (cap * bytes + 63) / 64 * 64;
  }
  for (size_t w = 0; w < b.out.size(); ++w) {
    b.out[w].stage = at;
    b.out_ptrs[w] = at;
    at += (cap * b.out[w].bytes + 63) / 64 * 64;
  }
  if (fresh.size() > 0) queue_mem_ = std::move(fresh);
  b.capacity = capacity;
}

std::unique_ptr<Entry> Executor::build(int32_t instruction, const taidl::SpecKey& key,
                                       const taidl::CallSite& site) {
  auto e = std::make_unique<Entry>();
  e->instruction = instruction;
  e->spec = taidl::specialize(isa_, instruction, key, site);
  for (const taidl::SliceAccess& s : e->spec->accesses)
    e->accesses.push_back(planAccess(isa_, s));
  const taidl::Phase* prev = nullptr;
  for (const taidl::Phase& p : e->spec->phases) {
    PhasePlan& pp = e->phases.emplace_back();
    pp.reads = p.reads;
    pp.writes = p.writes;
    for (uint32_t r : p.reads) {
      const AccessPlan& a = e->accesses[r];
      pp.stage_in.emplace_back(static_cast<size_t>(a.contiguous() ? 0 : a.bytes));
    }
    pp.in.resize(p.reads.size() + (prev ? prev->carried_out : 0));
    prev = &p;
    if (!p.module) continue;
    pp.plan = std::make_unique<hlo::EvalPlan>(hlo::EvalPlan::compile(*p.module->entry(), eval_));
    std::set<int32_t> written;
    for (uint32_t w : p.writes) {
      const AccessPlan& a = e->accesses[w];
      if (!written.insert(a.buffer).second) pp.writes_share_buffer = true;
    }
    for (uint32_t w : p.writes) {
      const AccessPlan& a = e->accesses[w];
      bool staged = !a.contiguous() || pp.writes_share_buffer;
      pp.stage_out.emplace_back(static_cast<size_t>(staged ? a.bytes : 0));
    }
    const auto& shapes = pp.plan->outputShapes();
    for (size_t k = p.writes.size(); k < shapes.size(); ++k)
      pp.carried.emplace_back(static_cast<size_t>(shapes[k].byteSize()));
    pp.out.resize(shapes.size());
  }
  // Data flow for the stats: each write counts once per distinct other buffer read.
  std::set<int32_t> sources;
  for (size_t i = 0; i < e->accesses.size(); ++i) {
    if (!e->spec->accesses[i].write) sources.insert(e->accesses[i].buffer);
  }
  for (size_t i = 0; i < e->accesses.size(); ++i) {
    if (!e->spec->accesses[i].write) continue;
    const AccessPlan& a = e->accesses[i];
    std::set<int32_t> from = sources;
    if (from.size() > 1) from.erase(a.buffer);
    if (from.empty()) from.insert(-1);
    for (int32_t s : from)
      e->flows.push_back({s, a.buffer, a.bytes});
  }
  for (size_t i = 0; i < e->accesses.size(); ++i) {
    const AccessPlan& a = e->accesses[i];
    bool write = e->spec->accesses[i].write;
    e->touches.push_back({a.buffer, write, a.span_bytes});
    if (write && a.span_bytes > 0)
      e->written.push_back({static_cast<uint32_t>(i), a.buffer, a.span_bytes});
  }
  prepareMoves(*e);
  if (e->moves.empty() && eval_.native_elementwise) prepareDirect(*e);
  return e;
}

size_t Executor::planBytes() const {
  size_t n = 0;
  auto sum = [&](const std::vector<hlo::AlignedBytes>& v) {
    for (const hlo::AlignedBytes& b : v)
      n += b.size();
  };
  for (const auto& [key, e] : cache_) {
    for (const PhasePlan& p : e->phases) {
      if (p.plan) n += p.plan->workspaceBytes();
      sum(p.stage_in);
      sum(p.stage_out);
      sum(p.carried);
    }
    if (!e->batch) continue;
    for (const auto& plan : e->batch->plans)
      n += plan ? plan->workspaceBytes() : 0;
  }
  return n + queue_mem_.size();
}

Entry& Executor::entry(int32_t instruction, const taidl::SpecKey& key,
                       const taidl::CallSite& site) {
  CacheKey k{instruction, key};
  auto it = cache_.find(k);
  if (it != cache_.end()) return *it->second;
  std::unique_ptr<Entry> e = build(instruction, key, site);
  Entry& ref = *e;
  cache_.emplace(std::move(k), std::move(e));
  return ref;
}

void Executor::checkBounds(Entry& e, taidl::WalkResult& w, std::span<const int64_t> attrs,
                           const taidl::CallSite& site, bool clamp, int64_t hbm) {
  for (AccessPlan& a : e.accesses) {
    int64_t* starts = w.starts.data() + a.start_offset;
    for (size_t k = 0; k < a.dims.size(); ++k) {
      int64_t dim = a.buffer == 0 ? hbm : a.dims[k];
      int64_t s = starts[k];
      if (s >= 0 && s <= dim - a.extent[k]) continue;
      if (clamp && a.extent[k] <= dim) {
        starts[k] = std::clamp<int64_t>(s, 0, dim - a.extent[k]);
        continue;
      }
      // The taidl check names the instruction, its attributes, the slice and the bounds.
      taidl::checkAccesses(isa_, *e.spec, w, attrs, hbm, site);
      fail(site.file, site.loc, "slice out of range");  // not reached: checkAccesses throws
    }
  }
}

const int64_t* Executor::place(Entry& e, taidl::WalkResult& w, std::span<const int64_t> attrs,
                               const taidl::CallSite& site, bool clamp, int64_t hbm_bytes) {
  checkBounds(e, w, attrs, site, clamp, hbm_bytes);
  const int64_t* starts = w.starts.data();
  int64_t* off = offsets(e.accesses.size());
  for (size_t i = 0; i < e.accesses.size(); ++i)
    off[i] = baseOffset(e.accesses[i], starts + e.accesses[i].start_offset);
  return off;
}

void Executor::execute(Entry& e, taidl::WalkResult& w, std::span<const int64_t> attrs,
                       const taidl::CallSite& site, bool clamp, State& state) {
  executePlaced(e, state, place(e, w, attrs, site, clamp, state.hbm_bytes));
}

void Executor::executePlaced(Entry& e, State& state, const int64_t* offsets, bool disjoint,
                             bool direct_safe) {
  off_ = offsets;
  for (const Entry::Written& w : e.written) {
    int64_t at = off_[w.access];
    state.buffers[static_cast<size_t>(w.buffer)].wrote(static_cast<size_t>(at),
                                                       static_cast<size_t>(at + w.span_bytes));
  }
  // A native kernel with nothing queued: called at once (runDirect declines an overlap).
  if (e.direct && queued_ == 0 && runDirect(e, state, direct_safe)) return;
  if (batching_ && !e.batch_checked) prepareBatch(e);
  bool batched = batching_ && e.batch != nullptr;
  // One entry's executions per batch; any execution waits for queued writes it touches (what
  // it overwrites that a queued one reads was captured at queue time).
  if (queued_ > 0 && ((batched && queue_entry_ != &e) || (!disjoint && conflicts(e)))) flush(state);
  if (batched) {
    enqueue(e, state);
    return;
  }
  runNow(e, state);
}

// True if an access of `e` touches a block written by a queued execution.
bool Executor::conflicts(const Entry& e) const {
  for (size_t i = 0; i < e.touches.size(); ++i) {
    const Entry::Touch& t = e.touches[i];
    const Dirty& d = dirty_[static_cast<size_t>(t.buffer)];
    int64_t lo = off_[i];
    // Outside every queued write (nothing queued for the buffer: lo = INT64_MAX), or empty.
    if (lo + t.span_bytes <= d.lo || lo >= d.hi || t.span_bytes == 0) continue;
    int64_t last = (lo + t.span_bytes - 1) / kDirtyBlock;
    for (int64_t blk = lo / kDirtyBlock; blk <= last; ++blk) {
      if (d.map[static_cast<size_t>(blk >> 6)] >> (blk & 63) & 1) return true;
    }
  }
  return false;
}

void Executor::enqueue(Entry& e, State& state) {
  BatchPlan& b = *e.batch;
  queue_entry_ = &e;
  // The staging grows with the batches used, to the next plan size (sgemm's 24 hold 24 items).
  if (queued_ == 0)
    place(b, b.capacity, 0);
  else if (queued_ == b.capacity)
    place(b, BatchPlan::sizeFor(b.capacity + 1), queued_);
  auto i = static_cast<size_t>(queued_);
  for (const BatchPlan::Slice& r : b.in) {
    const uint8_t* mem = state.buffers[static_cast<size_t>(r.buffer)].data() + off_[r.access];
    copyBytes(r.stage + i * r.bytes, mem, r.bytes);
  }
  if (dirty_.size() != state.buffers.size()) dirty_.resize(state.buffers.size());
  size_t nw = b.out.size();
  for (size_t w = 0; w < nw; ++w) {
    const BatchPlan::Slice& o = b.out[w];
    auto buf = static_cast<size_t>(o.buffer);
    int64_t lo = off_[o.access], hi = lo + static_cast<int64_t>(o.bytes);
    b.dst[i * nw + w] = state.buffers[buf].data() + lo;
    Dirty& d = dirty_[buf];
    d.lo = std::min(d.lo, lo);
    d.hi = std::max(d.hi, hi);
    if (d.map.empty()) {
      size_t blocks = (state.buffers[buf].size() + kDirtyBlock - 1) / kDirtyBlock;
      d.map.assign((blocks + 63) / 64 + 1, 0);
    }
    for (int64_t blk = lo / kDirtyBlock; blk <= (hi - 1) / kDirtyBlock; ++blk) {
      auto word = static_cast<size_t>(blk >> 6);
      if (d.map[word] == 0) dirty_words_.emplace_back(o.buffer, word);
      d.map[word] |= uint64_t{1} << (blk & 63);
    }
  }
  if (++queued_ == BatchPlan::kMax) flush(state);
}

void Executor::flush(State& state) {
  (void)state;
  if (queued_ == 0) return;
  Entry& e = *queue_entry_;
  BatchPlan& b = *e.batch;
  PhasePlan& p = e.phases[0];
  auto n = static_cast<size_t>(queued_);
  queued_ = 0;
  queue_entry_ = nullptr;
  ++flushes_;
  for (const auto& [buf, word] : dirty_words_) {
    Dirty& d = dirty_[static_cast<size_t>(buf)];
    d.map[word] = 0;
    d.lo = INT64_MAX;
    d.hi = INT64_MIN;
  }
  dirty_words_.clear();
  hlo::EvalPlan* plan = p.plan.get();
  if (n > 1) {
    int size = BatchPlan::sizeFor(static_cast<int>(n));
    if (!b.plans[size] && !batchPlan(e, b, size)) {
      fail("oracle: internal error: no batched plan for " + std::to_string(size) + " executions");
    }
    plan = b.plans[size].get();
    b.used[size] = true;
    // The idle items are computed too: zeros (the staging may hold another entry's items).
    for (const BatchPlan::Slice& r : b.in)
      std::memset(r.stage + n * r.bytes, 0, (static_cast<size_t>(size) - n) * r.bytes);
  }
  plan->run(b.in_ptrs, b.out_ptrs);
  size_t nw = b.out.size();
  for (size_t i = 0; i < n; ++i) {
    for (size_t w = 0; w < nw; ++w)
      copyBytes(b.dst[i * nw + w], b.out[w].stage + i * b.out[w].bytes, b.out[w].bytes);
  }
}

void Executor::discard() {
  flushes_ += queued_ > 0 ? 1 : 0;
  queued_ = 0;
  queue_entry_ = nullptr;
  dirty_.clear();  // the buffers may change size (HBM)
  dirty_words_.clear();
}

// Entry::moves for a one-phase specialisation of contiguous slices that only moves bytes.
void Executor::prepareMoves(Entry& e) {
  if (e.phases.size() != 1 || !e.phases[0].plan || !e.phases[0].carried.empty() ||
      e.phases[0].writes_share_buffer || !movesOnly(*e.spec->phases[0].module))
    return;
  const PhasePlan& p = e.phases[0];
  std::vector<int64_t> in_bytes, out_bytes;
  for (uint32_t r : p.reads)
    in_bytes.push_back(e.accesses[r].bytes);
  for (uint32_t w : p.writes)
    out_bytes.push_back(e.accesses[w].bytes);
  for (const AccessPlan& a : e.accesses) {
    if (!a.contiguous() || a.bytes > 0xffff) return;
  }
  std::vector<uint32_t> map;
  try {
    map = byteMap(*p.plan, in_bytes, out_bytes);
  } catch (const DiagnosticError&) {
    return;
  }
  if (map.empty()) return;
  std::vector<Entry::Move> moves = movesOf(map, p.reads, in_bytes, p.writes, out_bytes);
  // Beyond a few records (a transpose of small pieces) the plan's copy kernels are faster.
  if (moves.size() > 4) return;
  e.moves = std::move(moves);
  for (uint32_t w : p.writes) {
    for (uint32_t r : p.reads)
      e.moves_may_overlap |= e.accesses[w].buffer == e.accesses[r].buffer;
  }
}

// True if a written slice overlaps a read one at this execution (the plan then stages).
bool Executor::movesOverlap(const Entry& e) const {
  const PhasePlan& p = e.phases[0];
  for (uint32_t w : p.writes) {
    for (uint32_t r : p.reads) {
      const AccessPlan &a = e.accesses[w], &b = e.accesses[r];
      if (a.buffer == b.buffer && off_[w] < off_[r] + b.bytes && off_[r] < off_[w] + a.bytes)
        return true;
    }
  }
  return false;
}

void Executor::runMoves(const Entry& e, State& state) {
  for (const Entry::Move& m : e.moves) {
    uint8_t* dst = state.buffers[static_cast<size_t>(e.accesses[m.write].buffer)].data() +
                   off_[m.write] + m.out_off;
    const uint8_t* src = state.buffers[static_cast<size_t>(e.accesses[m.read].buffer)].data() +
                         off_[m.read] + m.in_off;
    copyPieces(dst, src, m);
  }
}

void Executor::runNow(Entry& e, State& state) {
  if (!e.moves.empty() && !(e.moves_may_overlap && movesOverlap(e))) return runMoves(e, state);
  if (e.direct && runDirect(e, state)) return;
  auto address = [&](uint32_t access) {
    return state.buffers[static_cast<size_t>(e.accesses[access].buffer)].data() + off_[access];
  };
  PhasePlan* prev = nullptr;
  for (PhasePlan& p : e.phases) {
    for (size_t i = 0; i < p.reads.size(); ++i) {
      const AccessPlan& a = e.accesses[p.reads[i]];
      uint8_t* mem = address(p.reads[i]);
      if (a.contiguous() && aligned(mem)) {
        p.in[i] = mem;
        continue;
      }
      if (p.stage_in[i].size() < static_cast<size_t>(a.bytes))
        p.stage_in[i] = hlo::AlignedBytes(static_cast<size_t>(a.bytes));
      copyRuns(a, mem, p.stage_in[i].data(), true);
      p.in[i] = p.stage_in[i].data();
    }
    if (prev != nullptr) {
      for (size_t k = 0; k < prev->carried.size(); ++k)
        p.in[p.reads.size() + k] = prev->carried[k].data();
    }
    prev = &p;
    if (!p.plan) continue;
    for (size_t i = 0; i < p.writes.size(); ++i) {
      const AccessPlan& a = e.accesses[p.writes[i]];
      uint8_t* mem = address(p.writes[i]);
      bool direct = a.contiguous() && aligned(mem) && !p.writes_share_buffer;
      if (!direct && p.stage_out[i].size() < static_cast<size_t>(a.bytes))
        p.stage_out[i] = hlo::AlignedBytes(static_cast<size_t>(a.bytes));
      p.out[i] = direct ? static_cast<void*>(mem) : p.stage_out[i].data();
    }
    for (size_t k = 0; k < p.carried.size(); ++k)
      p.out[p.writes.size() + k] = p.carried[k].data();
    p.plan->run(p.in, p.out);
    for (size_t i = 0; i < p.writes.size(); ++i) {
      const AccessPlan& a = e.accesses[p.writes[i]];
      if (p.out[i] == p.stage_out[i].data() && a.bytes > 0)
        copyRuns(a, address(p.writes[i]), p.stage_out[i].data(), false);
    }
  }
}

// Entry::direct for a one-phase specialisation of contiguous slices whose plan is one native
// kernel (the batchable elementwise instructions on a machine with AVX-512).
void Executor::prepareDirect(Entry& e) {
  if (e.phases.size() != 1 || !e.phases[0].plan || !e.phases[0].carried.empty() ||
      e.phases[0].writes_share_buffer)
    return;
  for (const AccessPlan& a : e.accesses) {
    if (!a.contiguous()) return;
  }
  e.direct = e.phases[0].plan->directKernel();
  if (!e.direct) return;
  const PhasePlan& p = e.phases[0];
  for (size_t a = 0; a < e.direct->args.size(); ++a) {
    const hlo::DirectKernel::Arg& arg = e.direct->args[a];
    auto index = static_cast<size_t>(arg.index);
    e.direct_bases.push_back(arg.fixed);  // null but for constants
    uint32_t access = 0;
    switch (arg.kind) {
      case hlo::DirectKernel::Arg::Kind::kInput:
        access = p.reads[index];
        break;
      case hlo::DirectKernel::Arg::Kind::kOutput:
        access = p.writes[index];
        break;
      case hlo::DirectKernel::Arg::Kind::kFixed:
        continue;
    }
    e.direct_slices.push_back({static_cast<uint32_t>(a), access, e.accesses[access].buffer});
  }
  for (uint32_t w : p.writes) {
    for (uint32_t r : p.reads) {
      if (e.accesses[w].buffer == e.accesses[r].buffer)
        e.direct_pairs.push_back({w, r, e.accesses[w].bytes, e.accesses[r].bytes});
    }
  }
}

// Whether each written slice of the execution at off_ is exactly a read one (and the kernel
// loads before it stores) or apart from it (what directSafeAlways proves for every execution).
bool Executor::directSafe(const Entry& e) const {
  for (const Entry::DirectPair& d : e.direct_pairs) {
    int64_t lo = off_[d.write], rlo = off_[d.read];
    if (lo + d.write_bytes <= rlo || rlo + d.read_bytes <= lo) continue;
    if (lo != rlo || d.read_bytes != d.write_bytes || !e.direct->loads_before_stores) return false;
  }
  return true;
}

// Calls the entry's native kernel on the slices in place; false (nothing done) when a written
// slice overlaps a read one other than exactly, or exactly but the kernel may store an element
// before loading it: then the plan runs with its outputs staged.
bool Executor::runDirect(Entry& e, State& state, bool proven_safe) {
  if (!proven_safe && !directSafe(e)) return false;
  const hlo::DirectKernel& k = *e.direct;
  for (const Entry::DirectSlice& d : e.direct_slices)
    e.direct_bases[d.base] = state.buffers[static_cast<size_t>(d.buffer)].data() + off_[d.access];
  k.fn(e.direct_bases.data(), k.n);
  return true;
}

}  // namespace tacit::oracle::detail
