// GCC 12 at -O2 vectorizes only loops its "very cheap" cost model accepts; these loops are the
// evaluator's hot paths. Vectorizing never changes results here: floating-point loops keep their
// order (no -ffast-math, no contraction) and integer sums are modular.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include "hlo_eval/kernels/copy.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "support/simd.h"

namespace tacit::hlo::kernels {
namespace {

constexpr int64_t kTile = 16;  // transpose tile edge: 16x16 elements of <= 8 bytes stay in L1
constexpr int kMaxRank = 64;

template <typename E>
void innerCopy(const E* src, E* dst, int64_t n, int64_t ss, int64_t ds) {
  if (ss == 1 && ds == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(E));
  } else if (ss == 0 && ds == 1) {
    std::fill(dst, dst + n, *src);
  } else if (ds == 1) {
    for (int64_t i = 0; i < n; ++i)
      dst[i] = src[i * ss];
  } else {
    for (int64_t i = 0; i < n; ++i)
      dst[i * ds] = src[i * ss];
  }
}

// Copies a (rows x cols) block where the source is contiguous along rows and the destination
// along cols: the classic transpose, done tile by tile.
template <typename E>
void tiledTranspose(const E* src, E* dst, int64_t rows, int64_t cols, int64_t src_col_stride,
                    int64_t dst_row_stride) {
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r) {
        const E* s = src + r;
        E* d = dst + r * dst_row_stride;
        for (int64_t c = c0; c < c1; ++c)
          d[c] = s[c * src_col_stride];
      }
    }
  }
}

// Odometer over every dimension except `skip_a` and `skip_b` (-1: none), calling body(src, dst)
// with the pointers of each combination.
template <typename E, typename Body>
void forOuter(const std::vector<int64_t>& dims, const std::vector<int64_t>& ss,
              const std::vector<int64_t>& ds, int skip_a, int skip_b, const E* src, E* dst,
              Body&& body) {
  int64_t idx[kMaxRank];  // only the first n are used: zeroing all 64 cost a rep stos per copy
  int outer[kMaxRank];
  int n = 0;
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    if (d != skip_a && d != skip_b) outer[n++] = d;
  }
  std::fill_n(idx, n, int64_t{0});
  while (true) {
    body(src, dst);
    int k = n - 1;
    for (; k >= 0; --k) {
      int d = outer[k];
      src += ss[static_cast<size_t>(d)];
      dst += ds[static_cast<size_t>(d)];
      if (++idx[k] < dims[static_cast<size_t>(d)]) break;
      src -= ss[static_cast<size_t>(d)] * dims[static_cast<size_t>(d)];
      dst -= ds[static_cast<size_t>(d)] * dims[static_cast<size_t>(d)];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

template <typename E>
void runTyped(const std::vector<int64_t>& dims, const std::vector<int64_t>& ss,
              const std::vector<int64_t>& ds, int tile_dim, const E* src, E* dst) {
  int r = static_cast<int>(dims.size());
  if (r == 0) {
    *dst = *src;
    return;
  }
  int in = r - 1;
  int64_t n = dims[static_cast<size_t>(in)];
  int64_t s_in = ss[static_cast<size_t>(in)], d_in = ds[static_cast<size_t>(in)];
  if (tile_dim >= 0) {
    auto t = static_cast<size_t>(tile_dim);
    forOuter(dims, ss, ds, tile_dim, in, src, dst,
             [&](const E* s, E* d) { tiledTranspose(s, d, dims[t], n, s_in, ds[t]); });
    return;
  }
  forOuter(dims, ss, ds, in, -1, src, dst,
           [&](const E* s, E* d) { innerCopy(s, d, n, s_in, d_in); });
}

}  // namespace

CopyNest::CopyNest(int elem_size, std::span<const int64_t> dims,
                   std::span<const int64_t> src_strides, std::span<const int64_t> dst_strides)
    : elem_size_(elem_size) {
  count_ = 1;
  for (int64_t d : dims)
    count_ *= d;
  if (count_ == 0) return;
  // Drop unit dimensions and merge a dimension into its inner neighbour when both sides are
  // contiguous across the boundary.
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!dims_.empty() && src_.back() == src_strides[i] * dims[i] &&
        dst_.back() == dst_strides[i] * dims[i]) {
      dims_.back() *= dims[i];
      src_.back() = src_strides[i];
      dst_.back() = dst_strides[i];
      continue;
    }
    dims_.push_back(dims[i]);
    src_.push_back(src_strides[i]);
    dst_.push_back(dst_strides[i]);
  }
  if (dims_.size() > static_cast<size_t>(kMaxRank)) dims_.clear();  // callers validate rank first
  if (elem_size_ <= 8 && findBlock()) return;
  // Tile when the destination is contiguous along the inner dimension but the source is not,
  // and some outer dimension is contiguous in the source.
  int r = static_cast<int>(dims_.size());
  if (r >= 2 && dst_.back() == 1 && src_.back() != 1 && dims_.back() >= 8) {
    for (int d = r - 2; d >= 0; --d) {
      if (src_[static_cast<size_t>(d)] == 1 && dims_[static_cast<size_t>(d)] >= 8) {
        tile_dim_ = d;
        break;
      }
    }
  }
}

bool CopyNest::findBlock() {
  int r = static_cast<int>(dims_.size());
  if (r < 2 || (src_.back() == 1 && dst_.back() == 1)) return false;  // already contiguous runs
  // The largest inner block of at most 64 bytes that both sides read as one contiguous block.
  int64_t n = 1;
  int best = -1;
  for (int k = r - 1; k >= 0; --k) {
    n *= dims_[static_cast<size_t>(k)];
    if (n * elem_size_ > 64) break;
    std::vector<int64_t> s_off, d_off;
    std::vector<int64_t> idx(static_cast<size_t>(r - k), 0);
    for (int64_t e = 0; e < n; ++e) {
      int64_t so = 0, dof = 0;
      for (int d = k; d < r; ++d) {
        so += idx[static_cast<size_t>(d - k)] * src_[static_cast<size_t>(d)];
        dof += idx[static_cast<size_t>(d - k)] * dst_[static_cast<size_t>(d)];
      }
      s_off.push_back(so);
      d_off.push_back(dof);
      for (int d = r - 1; d >= k; --d) {
        if (++idx[static_cast<size_t>(d - k)] < dims_[static_cast<size_t>(d)]) break;
        idx[static_cast<size_t>(d - k)] = 0;
      }
    }
    // Both sides must cover [0, n) exactly once (no broadcast, no reversal, no gaps).
    std::vector<int64_t> perm(static_cast<size_t>(n), -1);
    std::vector<bool> read(static_cast<size_t>(n), false);
    bool ok = true;
    for (int64_t e = 0; e < n && ok; ++e) {
      int64_t so = s_off[static_cast<size_t>(e)], dof = d_off[static_cast<size_t>(e)];
      ok = so >= 0 && so < n && dof >= 0 && dof < n && perm[static_cast<size_t>(dof)] < 0 &&
           !read[static_cast<size_t>(so)];
      if (ok) perm[static_cast<size_t>(dof)] = so, read[static_cast<size_t>(so)] = true;
    }
    if (!ok) continue;  // a larger block may still be one
    best = k;
    block_perm_.clear();
    for (int64_t e = 0; e < n; ++e) {
      for (int b = 0; b < elem_size_; ++b)
        block_perm_.push_back(static_cast<uint8_t>(perm[static_cast<size_t>(e)] * elem_size_ + b));
    }
    block_bytes_ = static_cast<int>(n * elem_size_);
  }
  // Worth it only for blocks that a strided loop would copy element by element.
  if (best < 0 || block_bytes_ < 16) {
    block_perm_.clear();
    return false;
  }
  block_dim_ = best;
  for (int d = 0; d < block_dim_; ++d) {
    block_outer_.push_back(dims_[static_cast<size_t>(d)]);
    block_ss_.push_back(src_[static_cast<size_t>(d)] * elem_size_);
    block_ds_.push_back(dst_[static_cast<size_t>(d)] * elem_size_);
  }
  return true;
}

// ---- Byte-permuted blocks (runBlocks), one variant per SIMD level (support/simd.h) ----------
// Every variant writes destination byte i of each block from source byte perm[i]; they differ in
// how many instructions that takes. Each reads and writes exactly the block's bytes.
namespace {

void permuteBlocksGeneric(const std::vector<int64_t>& dims, const std::vector<int64_t>& ss,
                          const std::vector<int64_t>& ds, const uint8_t* perm, int bytes,
                          const uint8_t* src, uint8_t* dst) {
  auto n = static_cast<size_t>(bytes);
  forOuter(dims, ss, ds, -1, -1, src, dst, [&](const uint8_t* s, uint8_t* d) {
    uint8_t tmp[64];
    for (size_t i = 0; i < n; ++i)
      tmp[i] = s[perm[i]];
    std::memcpy(d, tmp, n);
  });
}

#if defined(__x86_64__)
#define TACIT_AVX512_PERMUTE __attribute__((target("avx512f,avx512bw,avx512vbmi")))
#define TACIT_AVX2_PERMUTE __attribute__((target("avx2")))

// One vpermb over the block (masked to its bytes).
TACIT_AVX512_PERMUTE __attribute__((flatten)) void permuteBlocksAvx512(
    const std::vector<int64_t>& dims, const std::vector<int64_t>& ss,
    const std::vector<int64_t>& ds, const uint8_t* perm, int bytes, const uint8_t* src,
    uint8_t* dst) {
  __mmask64 mask = bytes == 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1;
  alignas(64) uint8_t table[64] = {};
  std::memcpy(table, perm, static_cast<size_t>(bytes));
  __m512i p = _mm512_load_si512(table);
  forOuter(dims, ss, ds, -1, -1, src, dst, [&](const uint8_t* s, uint8_t* d) TACIT_AVX512_PERMUTE {
    __m512i v = _mm512_maskz_loadu_epi8(mask, s);
    // (the masked form: GCC 12 warns about the unmasked intrinsic's internal placeholder)
    _mm512_mask_storeu_epi8(d, mask, _mm512_maskz_permutexvar_epi8(mask, p, v));
  });
}

// AVX2 shuffles bytes only within 16-byte lanes: each 32-byte half of the block is the OR of one
// vpshufb per source lane (the lane broadcast to both halves), each masked to the bytes that come
// from that lane.
TACIT_AVX2_PERMUTE __attribute__((flatten)) void permuteBlocksAvx2(const std::vector<int64_t>& dims,
                                                                   const std::vector<int64_t>& ss,
                                                                   const std::vector<int64_t>& ds,
                                                                   const uint8_t* perm, int bytes,
                                                                   const uint8_t* src,
                                                                   uint8_t* dst) {
  const int lanes = (bytes + 15) / 16, halves = (bytes + 31) / 32;
  alignas(32) uint8_t control[2][32] = {}, select[2][4][32] = {};
  for (int i = 0; i < bytes; ++i) {
    control[i / 32][i % 32] = perm[i] & 15;
    select[i / 32][perm[i] >> 4][i % 32] = 0xFF;
  }
  __m256i ctrl[2], sel[2][4];
  for (int h = 0; h < 2; ++h) {
    ctrl[h] = _mm256_load_si256(reinterpret_cast<const __m256i*>(control[h]));
    for (int l = 0; l < 4; ++l)
      sel[h][l] = _mm256_load_si256(reinterpret_cast<const __m256i*>(select[h][l]));
  }
  const auto n = static_cast<size_t>(bytes);
  forOuter(dims, ss, ds, -1, -1, src, dst, [&](const uint8_t* s, uint8_t* d) TACIT_AVX2_PERMUTE {
    alignas(32) uint8_t in[64], out[64];
    const uint8_t* from = s;
    if (bytes != 64) {
      std::memcpy(in, s, n);  // never read past the block
      from = in;
    }
    __m256i source[4];
    for (int l = 0; l < lanes; ++l) {
      source[l] = _mm256_broadcastsi128_si256(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + 16 * l)));
    }
    uint8_t* to = bytes == 64 ? d : out;
    for (int h = 0; h < halves; ++h) {
      __m256i v = _mm256_setzero_si256();
      for (int l = 0; l < lanes; ++l)
        v = _mm256_or_si256(v,
                            _mm256_and_si256(sel[h][l], _mm256_shuffle_epi8(source[l], ctrl[h])));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + 32 * h), v);
    }
    if (bytes != 64) std::memcpy(d, out, n);
  });
}
#endif

}  // namespace

void CopyNest::runBlocks(const uint8_t* src, uint8_t* dst) const {
  const uint8_t* perm = block_perm_.data();
#if defined(__x86_64__)
  switch (simd::level()) {
    case simd::Level::kAvx512:
      permuteBlocksAvx512(block_outer_, block_ss_, block_ds_, perm, block_bytes_, src, dst);
      return;
    case simd::Level::kAvx2:
      permuteBlocksAvx2(block_outer_, block_ss_, block_ds_, perm, block_bytes_, src, dst);
      return;
    case simd::Level::kGeneric:
      break;
  }
#endif
  permuteBlocksGeneric(block_outer_, block_ss_, block_ds_, perm, block_bytes_, src, dst);
}

void CopyNest::run(const void* src, void* dst) const {
  if (count_ == 0) return;
  if (block_dim_ >= 0) {
    runBlocks(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst));
    return;
  }
  switch (elem_size_) {
    case 1:
      runTyped(dims_, src_, dst_, tile_dim_, static_cast<const uint8_t*>(src),
               static_cast<uint8_t*>(dst));
      return;
    case 2:
      runTyped(dims_, src_, dst_, tile_dim_, static_cast<const uint16_t*>(src),
               static_cast<uint16_t*>(dst));
      return;
    case 4:
      runTyped(dims_, src_, dst_, tile_dim_, static_cast<const uint32_t*>(src),
               static_cast<uint32_t*>(dst));
      return;
    case 8:
      runTyped(dims_, src_, dst_, tile_dim_, static_cast<const uint64_t*>(src),
               static_cast<uint64_t*>(dst));
      return;
    default:
      break;
  }
  // Unusual element sizes: copy each element as bytes (no evaluable type takes this path).
  std::vector<int64_t> dims = dims_;
  dims.push_back(elem_size_);
  std::vector<int64_t> ss, ds;
  for (int64_t s : src_)
    ss.push_back(s * elem_size_);
  for (int64_t d : dst_)
    ds.push_back(d * elem_size_);
  ss.push_back(1);
  ds.push_back(1);
  runTyped(dims, ss, ds, -1, static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst));
}

void fillElements(void* dst, int64_t count, int elem_size, const void* value) {
  if (count <= 0) return;
  auto fill = [&](auto tag) {
    using E = decltype(tag);
    E v;
    std::memcpy(&v, value, sizeof(E));
    std::fill(static_cast<E*>(dst), static_cast<E*>(dst) + count, v);
  };
  switch (elem_size) {
    case 1:
      fill(uint8_t{});
      return;
    case 2:
      fill(uint16_t{});
      return;
    case 4:
      fill(uint32_t{});
      return;
    case 8:
      fill(uint64_t{});
      return;
    default:
      for (int64_t i = 0; i < count; ++i) {
        std::memcpy(static_cast<uint8_t*>(dst) + i * elem_size, value,
                    static_cast<size_t>(elem_size));
      }
  }
}

}  // namespace tacit::hlo::kernels
