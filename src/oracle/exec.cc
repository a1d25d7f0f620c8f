#include "oracle/exec.h"

#include <algorithm>
#include <cstring>
#include <set>

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
  int64_t idx[taidl::kMaxRank] = {};
  for (int64_t r = 0; r < a.runs; ++r) {
    int64_t off = 0;
    for (size_t k = 0; k < a.outer; ++k)
      off += idx[k] * a.stride[k];
    uint8_t* m = mem + off * a.elem;
    uint8_t* d = dense + static_cast<size_t>(r) * run;
    if (to_dense)
      std::memcpy(d, m, run);
    else
      std::memcpy(m, d, run);
    for (size_t k = a.outer; k-- > 0;) {
      if (++idx[k] < a.extent[k]) break;
      idx[k] = 0;
    }
  }
}

}  // namespace

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
    pp.plan = std::make_unique<hlo::EvalPlan>(hlo::EvalPlan::compile(*p.module->entry()));
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
  return e;
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

void Executor::execute(Entry& e, taidl::WalkResult& w, std::span<const int64_t> attrs,
                       const taidl::CallSite& site, bool clamp, State& state) {
  checkBounds(e, w, attrs, site, clamp, state.hbm_bytes);
  const int64_t* starts = w.starts.data();
  auto address = [&](const AccessPlan& a) {
    return state.buffers[static_cast<size_t>(a.buffer)].data() +
           baseOffset(a, starts + a.start_offset);
  };
  PhasePlan* prev = nullptr;
  for (PhasePlan& p : e.phases) {
    for (size_t i = 0; i < p.reads.size(); ++i) {
      const AccessPlan& a = e.accesses[p.reads[i]];
      uint8_t* mem = address(a);
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
      uint8_t* mem = address(a);
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
        copyRuns(a, address(a), p.stage_out[i].data(), false);
    }
  }
}

}  // namespace tacit::oracle::detail
