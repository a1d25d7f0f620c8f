// The planned executor behind oracle::Machine (internal): one Entry per (instruction, key) holds
// the specialisation, one compiled hlo::EvalPlan per phase, how each slice is addressed in the
// machine's buffers, and preallocated staging for slices that cannot be used in place.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "hlo/literal.h"
#include "hlo_eval/evaluator.h"
#include "oracle/memory.h"
#include "taidl/specialize.h"
#include "taidl/walk.h"

namespace tacit::oracle::detail {

// How one slice of a specialisation lies in its buffer.
struct AccessPlan {
  int32_t buffer = -1;
  uint32_t start_offset = 0;    // its starts in WalkResult::starts
  std::vector<int64_t> dims;    // the buffer tensor's dimensions (HBM: filled in at run time)
  std::vector<int64_t> extent;  // the slice's extent per dimension
  std::vector<int64_t> stride;  // element strides of the buffer (HBM: {1})
  int64_t elem = 1;             // bytes per element
  int64_t bytes = 0;            // bytes of the slice
  // The slice is `runs` pieces of `run_bytes` contiguous bytes; the first `outer` dimensions
  // enumerate the pieces. contiguous == (runs == 1).
  size_t outer = 0;
  int64_t runs = 1;
  int64_t run_bytes = 0;
  bool contiguous() const { return runs == 1; }
  int64_t span_bytes = 0;  // from the first to past the last byte of the slice
};

// Calls f(r, offset) for each of the slice's contiguous runs in order: r counts them, offset is
// the run's first element relative to the slice's first (in elements; a.elem bytes each).
template <typename F>
void forEachRun(const AccessPlan& a, F&& f) {
  int64_t idx[taidl::kMaxRank] = {};
  for (int64_t r = 0; r < a.runs; ++r) {
    int64_t off = 0;
    for (size_t k = 0; k < a.outer; ++k)
      off += idx[k] * a.stride[k];
    f(r, off);
    for (size_t k = a.outer; k-- > 0;) {
      if (++idx[k] < a.extent[k]) break;
      idx[k] = 0;
    }
  }
}

struct PhasePlan {
  std::unique_ptr<hlo::EvalPlan> plan;  // null for a phase without outputs
  std::vector<uint32_t> reads, writes;  // access indices
  std::vector<hlo::AlignedBytes> stage_in, stage_out, carried;
  std::vector<const void*> in;
  std::vector<void*> out;
  bool writes_share_buffer = false;  // then every write is staged and stored in order
};

// Batched execution of an elementwise specialisation (one phase, every slice contiguous, the
// computation elementwise: parameters, constants, elementwise ops, convert, bitcast-convert,
// reshape). Executions of the entry are queued with their inputs copied at queue time and run
// together by one plan whose shapes carry a leading batch dimension (built per power-of-two batch
// size on first use). Every element is computed by the same per-element functions as in the
// unbatched plan, so results are bit-identical.
struct BatchPlan {
  static constexpr int kMax = 32;                 // executions per batch
  static constexpr int64_t kMaxItemBytes = 1024;  // bytes read + written per execution
  // Plans per batch size: 2, 4 and multiples of 8 up to kMax (sizeFor), so that a batch runs
  // at most 7 idle items (sgemm's batches of 24 are exact), with their modules. A plan never run
  // is dropped when a larger one is compiled (the size-2 plan compiled to check the entry, when
  // every batch is larger); it is compiled again if a batch of its size comes.
  std::unique_ptr<hlo::HloModule> modules[kMax + 1];
  std::unique_ptr<hlo::EvalPlan> plans[kMax + 1];
  bool used[kMax + 1] = {};
  static int sizeFor(int n);  // the plan size for n >= 2 queued items
  // Staging: `capacity` items per read and write, in the executor's queue memory (one entry is
  // queued at a time, so all entries share it); placed when a batch starts (Executor::place).
  int capacity = 0;  // a plan size (sizeFor(capacity) == capacity), so sizeFor(n) <= capacity
                     // for every n <= capacity
  // Each read / write, in one record (what a queued execution touches: one cache line).
  struct Slice {
    uint8_t* stage = nullptr;  // its staging
    size_t bytes = 0;          // per item
    uint32_t access = 0;
    int32_t buffer = -1;
  };
  std::vector<Slice> in, out;
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  std::vector<uint8_t*> dst;  // per queued item and write: where the result goes
};

struct Entry {
  int32_t instruction = -1;
  bool batch_checked = false;
  std::unique_ptr<BatchPlan> batch;  // null: executed one at a time
  std::unique_ptr<taidl::Specialization> spec;
  std::vector<AccessPlan> accesses;
  // Per access, what the dispatch reads (compact: one cache line for a few accesses).
  struct Touch {
    int32_t buffer = -1;
    bool write = false;
    int64_t span_bytes = 0;
  };
  std::vector<Touch> touches;
  // The non-empty writes, for marking what an execution writes (ZeroedMemory::wrote).
  struct Written {
    uint32_t access = 0;
    int32_t buffer = -1;
    int64_t span_bytes = 0;
  };
  std::vector<Written> written;
  std::vector<PhasePlan> phases;
  // A specialisation that only moves bytes (every output byte is a fixed input byte whatever the
  // values: reshape, bitcast-convert, broadcast, slice, ...) copies them directly instead of
  // running its plan. Each record is `count` pieces of `bytes` bytes, from read access `read` at
  // in_off + i * in_step to write access `write` at out_off + i * out_step (byte offsets within
  // the slices). Empty: the plan runs.
  struct Move {
    uint32_t write = 0, read = 0;
    uint32_t out_off = 0, in_off = 0;
    uint32_t bytes = 0, count = 1;
    int32_t out_step = 0, in_step = 0;
  };
  std::vector<Move> moves;
  bool moves_may_overlap = false;  // a written buffer is also read: checked per execution
  // A specialisation whose plan is one native elementwise kernel over contiguous slices
  // (hlo::DirectKernel) calls it on the buffers themselves: no staging, no batching. The bases
  // are filled per execution.
  std::optional<hlo::DirectKernel> direct;
  std::vector<uint8_t*> direct_bases;
  // The bases that are slices (the others are constants, filled once).
  struct DirectSlice {
    uint32_t base = 0, access = 0;
    int32_t buffer = -1;
  };
  std::vector<DirectSlice> direct_slices;
  // The (write, read) access pairs in one buffer, which may overlap, with their sizes.
  struct DirectPair {
    uint32_t write = 0, read = 0;
    int64_t write_bytes = 0, read_bytes = 0;
  };
  std::vector<DirectPair> direct_pairs;
  struct Flow {
    int32_t src = -1;  // -1: nothing read
    int32_t dst = -1;
    int64_t bytes = 0;
  };
  std::vector<Flow> flows;  // for Stats::moved
  int64_t executions = 0;   // since the machine's reset (Stats' byte counters derive from it)
};

// Copies the pieces of move `m` from the slice at `src` to the slice at `dst`.
void copyPieces(uint8_t* dst, const uint8_t* src, const Entry::Move& m);

struct CacheKey {
  int32_t instruction = -1;
  taidl::SpecKey key;
  friend bool operator==(const CacheKey&, const CacheKey&) = default;
};
struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const {
    return taidl::SpecKeyHash{}(k.key) * 31 + static_cast<size_t>(k.instruction);
  }
};

// The machine state the executor reads and writes.
struct State {
  std::vector<ZeroedMemory> buffers;  // [0] = HBM
  std::vector<int64_t> regs;
  int64_t hbm_bytes = 0;
};

class Executor {
 public:
  // native: specialisations' elementwise runs compiled to native code, and single-kernel ones
  // called in place (RunOptions::native).
  Executor(const taidl::Isa& isa, bool native) : isa_(isa) { eval_.native_elementwise = native; }

  // The entry for `key` (built and compiled on the first use).
  Entry& entry(int32_t instruction, const taidl::SpecKey& key, const taidl::CallSite& site);
  size_t entries() const { return cache_.size(); }
  // Bytes the compiled entries keep: plans' arenas and workspaces, staging, batch buffers.
  size_t planBytes() const;
  template <typename F>
  void forEachEntry(F&& f) {
    for (auto& [key, e] : cache_)
      f(*e);
  }

  // Runs the data part of one execution whose walk is `w` (starts may be clamped in place).
  // Batchable executions may be queued (inputs captured now); the queue runs before anything
  // that reads or writes what a queued execution writes, and at flush().
  void execute(Entry& e, taidl::WalkResult& w, std::span<const int64_t> attrs,
               const taidl::CallSite& site, bool clamp, State& state);
  // The first half of execute: checks the slices' bounds (clamping if asked) and returns each
  // access's byte offset in its buffer (offsets(); valid until the next call).
  const int64_t* place(Entry& e, taidl::WalkResult& w, std::span<const int64_t> attrs,
                       const taidl::CallSite& site, bool clamp, int64_t hbm_bytes);
  // The same for an execution given the byte offset of each access in its buffer (`offsets`,
  // e.g. offsets(); read during the call only), each already known to lie inside its buffer.
  // `disjoint`: the caller proved that no access of this execution overlaps a queued write (the
  // conflict test is skipped).
  // direct_safe: the call is proven to pass directSafe (CompiledSite::direct_safe).
  void executePlaced(Entry& e, State& state, const int64_t* offsets, bool disjoint = false,
                     bool direct_safe = false);
  // Executions queued now, and queue runs so far: a caller that saw the queue empty, or saw it run
  // since, knows that everything queued was queued after that.
  int queued() const { return queued_; }
  uint64_t flushes() const { return flushes_; }
  int64_t* offsets(size_t accesses) {
    if (offsets_.size() < accesses) offsets_.resize(accesses);
    return offsets_.data();
  }
  // Runs the queued executions (a no-op if none).
  void flush(State& state);
  // Drops the queued executions (after an error, or when the machine is reset).
  void discard();
  // Off: every execution runs at once (the tests compare both ways).
  void setBatching(bool on) { batching_ = on; }
  // Whether every execution of `e` runs at once and in place while nothing is queued, so that
  // executePlaced neither queues nor tests anything (direct loop nests, direct_nest.h): a native
  // kernel whose in-place safety is proven (`direct_safe`: CompiledSite::direct_safe), or byte
  // moves between distinct buffers of an entry that never batches.
  bool runsAtOnce(const Entry& e, bool direct_safe) const {
    if (e.direct) return direct_safe;
    return !e.moves.empty() && !e.moves_may_overlap &&
           (!batching_ || (e.batch_checked && !e.batch));
  }

 private:
  std::unique_ptr<Entry> build(int32_t instruction, const taidl::SpecKey& key,
                               const taidl::CallSite& site);
  void checkBounds(Entry& e, taidl::WalkResult& w, std::span<const int64_t> attrs,
                   const taidl::CallSite& site, bool clamp, int64_t hbm);

  // Each uses off_: the byte offset of every access of the execution in its buffer.
  void runNow(Entry& e, State& state);
  void prepareMoves(Entry& e);
  void prepareDirect(Entry& e);
  bool runDirect(Entry& e, State& state, bool proven_safe = false);
  bool directSafe(const Entry& e) const;
  bool movesOverlap(const Entry& e) const;
  void runMoves(const Entry& e, State& state);
  void prepareBatch(Entry& e);
  bool batchPlan(const Entry& e, BatchPlan& batch, int size);  // compiles plans[size]
  // Points the batch's staging into queue_mem_ for `capacity` items, keeping the first `keep`
  // items of its reads.
  void place(BatchPlan& b, int capacity, int keep);
  bool conflicts(const Entry& e) const;
  void enqueue(Entry& e, State& state);

  const taidl::Isa& isa_;
  bool batching_ = true;
  hlo::EvalOptions eval_;  // for every plan compiled
  // The queue: `queued_` executions of `queue_entry_`; dirty_[b] marks the 64-byte blocks of
  // buffer b written by them (dirty_words_ lists the words to clear).
  std::vector<int64_t> offsets_;
  const int64_t* off_ = nullptr;  // the offsets of the execution being dispatched
  hlo::AlignedBytes queue_mem_;   // the queued entry's batch staging
  Entry* queue_entry_ = nullptr;
  int queued_ = 0;
  uint64_t flushes_ = 0;  // times a non-empty queue was run or dropped
  struct Dirty {
    int64_t lo = INT64_MAX, hi = INT64_MIN;  // the span of the queued writes
    std::vector<uint64_t> map;
  };
  std::vector<Dirty> dirty_;  // per buffer
  std::vector<std::pair<int32_t, size_t>> dirty_words_;
  std::unordered_map<CacheKey, std::unique_ptr<Entry>, CacheKeyHash> cache_;
};

}  // namespace tacit::oracle::detail
