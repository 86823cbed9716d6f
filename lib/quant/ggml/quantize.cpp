// The checked GGML quantization driver: every argument checked before anything is written,
// then rows shared out in pieces (in row order, from one atomic counter) to the threads of one
// call. Each row is quantized alone by the type's row function, so the bytes do not depend on
// the thread count. F16/BF16 input (and F32 input that is not 4-byte aligned) is widened one
// row at a time into a per-thread f32 row: the only memory the call allocates.
#include <atomic>
#include <cstring>

#include "core/allocator.h"
#include "core/endian.h"
#include "core/parallel.h"
#include "dequant/convert.h"
#include "dequant/ggml/ggml.h"
#include "quant/ggml/quant_ggml.h"

namespace tblob {
namespace ggml {

namespace {

constexpr uint64_t kPieceInputBytes = 64 * 1024;  // input bytes per piece (at least one row)
constexpr uint32_t kMaxThreads = 256;
constexpr uint64_t kNoRow = ~uint64_t{0};

inline bool finite_bits(uint32_t u) { return (u & 0x7F800000u) != 0x7F800000u; }

// Index of the first NaN or Inf among n floats, or n. Runs of 64 are tested without an early
// exit, a loop the compiler vectorizes (the per-value exit kept it scalar, which cost the
// fast types a third of their speed); the index is then found in the first run that has one.
uint64_t first_nonfinite(const float *x, uint64_t n) {
  uint64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    uint32_t bad = 0;
    for (int k = 0; k < 64; ++k) {
      uint32_t u;
      std::memcpy(&u, x + i + k, 4);
      bad |= static_cast<uint32_t>(!finite_bits(u));
    }
    if (bad) break;
  }
  for (; i < n; ++i) {
    uint32_t u;
    std::memcpy(&u, x + i, 4);
    if (!finite_bits(u)) return i;
  }
  return n;
}

struct Job {
  RowQuantizeFn fn;
  uint32_t src_dtype;
  const uint8_t *src;
  uint64_t cols;
  uint64_t rows;
  uint64_t src_row_bytes;
  uint64_t dst_row_bytes;
  uint8_t *dst;
  const float *importance;
  bool direct;  // F32 input read in place
  uint64_t rows_per_piece;
  uint64_t pieces;
  float *scratch[kMaxThreads];
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> bad_row{kNoRow};
};

// The f32 view of row r: the input itself, or the row widened into scratch.
const float *row_f32(const Job &j, uint64_t r, float *scratch) {
  const uint8_t *p = j.src + r * j.src_row_bytes;
  if (j.direct) return reinterpret_cast<const float *>(p);
  switch (j.src_dtype) {
    case TBLOB_DTYPE_F16:
      for (uint64_t i = 0; i < j.cols; ++i) scratch[i] = dq::f32_from_bits(dq::f16_to_f32(load_le16(p + 2 * i)));
      break;
    case TBLOB_DTYPE_BF16:
      for (uint64_t i = 0; i < j.cols; ++i) scratch[i] = dq::f32_from_bits(dq::bf16_to_f32(load_le16(p + 2 * i)));
      break;
    default:  // F32, not 4-byte aligned
      std::memcpy(scratch, p, j.cols * 4);
      break;
  }
  return scratch;
}

void lower_bad_row(std::atomic<uint64_t> &bad, uint64_t r) {
  uint64_t cur = bad.load(std::memory_order_relaxed);
  while (r < cur && !bad.compare_exchange_weak(cur, r, std::memory_order_relaxed)) {
  }
}

void worker(void *ctx, uint32_t w) {
  Job &j = *static_cast<Job *>(ctx);
  for (;;) {
    const uint64_t p = j.next.fetch_add(1, std::memory_order_relaxed);
    if (p >= j.pieces) return;
    const uint64_t begin = p * j.rows_per_piece;
    // Pieces are taken in order: once a row before this piece is known bad, nothing past it
    // matters (the lowest bad row is the one reported).
    if (begin > j.bad_row.load(std::memory_order_relaxed)) return;
    const uint64_t end = begin + j.rows_per_piece < j.rows ? begin + j.rows_per_piece : j.rows;
    for (uint64_t r = begin; r < end; ++r) {
      const float *x = row_f32(j, r, j.scratch[w]);
      if (first_nonfinite(x, j.cols) != j.cols) {
        lower_bad_row(j.bad_row, r);
        break;
      }
      j.fn(x, j.dst + r * j.dst_row_bytes, static_cast<int64_t>(j.cols), j.importance);
    }
  }
}

bool mul_overflows(uint64_t a, uint64_t b, uint64_t *out) { return __builtin_mul_overflow(a, b, out); }

}  // namespace

#if !TBLOB_QUANT_AVX2
RowQuantizeFn avx2_row_quantizer(uint32_t) { return nullptr; }
#endif

Status row_size(uint32_t ggml_type, uint64_t cols, uint64_t *bytes, const Diag &diag) {
  const TypeInfo *t = type_info(ggml_type);
  if (!t) return diag.fail(TBLOB_E_UNSUPPORTED, TBLOB_NO_OFFSET, -1, "ggml type %u is not one this library knows", ggml_type);
  if (cols % t->block_elems != 0)
    return diag.fail(TBLOB_E_QUANT_GROUP_SIZE, TBLOB_NO_OFFSET, -1,
                     "%llu columns is not a multiple of %s's block of %u values",
                     static_cast<unsigned long long>(cols), t->name, t->block_elems);
  if (mul_overflows(cols / t->block_elems, t->block_bytes, bytes))
    return diag.fail(TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, -1, "row size of %llu %s values overflows 64 bits",
                     static_cast<unsigned long long>(cols), t->name);
  return TBLOB_OK;
}

Status quantize(uint32_t ggml_type, uint32_t src_dtype, const void *src, uint64_t src_bytes,
                uint64_t rows, uint64_t cols, const float *importance, void *dst, uint64_t dst_bytes,
                uint32_t threads, const Diag &diag) {
  const TypeInfo *t = type_info(ggml_type);
  const RowQuantizer *q = row_quantizer(ggml_type);
  if (!t || !q)
    return diag.fail(TBLOB_E_UNSUPPORTED, TBLOB_NO_OFFSET, -1, "ggml type %u (%s) has no quantizer", ggml_type,
                     t ? t->name : "unknown");
  uint64_t esize;
  switch (src_dtype) {
    case TBLOB_DTYPE_F32: esize = 4; break;
    case TBLOB_DTYPE_F16: case TBLOB_DTYPE_BF16: esize = 2; break;
    default:
      return diag.fail(TBLOB_E_DTYPE, TBLOB_NO_OFFSET, -1, "source dtype %u is not F32, F16 or BF16", src_dtype);
  }
  uint64_t dst_row;
  Status s = row_size(ggml_type, cols, &dst_row, diag);
  if (s != TBLOB_OK) return s;
  uint64_t src_row, need_src, need_dst, elems;
  if (mul_overflows(cols, esize, &src_row) || mul_overflows(rows, src_row, &need_src) ||
      mul_overflows(rows, dst_row, &need_dst) || mul_overflows(rows, cols, &elems) || need_src > SIZE_MAX ||
      need_dst > SIZE_MAX || cols > SIZE_MAX / 4)
    return diag.fail(TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, -1, "%llu x %llu values overflow the address space",
                     static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols));
  if (!src && src_bytes) return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: src is NULL");
  if (src_bytes != need_src)
    return diag.fail(TBLOB_E_QUANT_DATA_SIZE, TBLOB_NO_OFFSET, -1,
                     "source holds %llu bytes; %llu x %llu values need %llu",
                     static_cast<unsigned long long>(src_bytes), static_cast<unsigned long long>(rows),
                     static_cast<unsigned long long>(cols), static_cast<unsigned long long>(need_src));
  if (!dst && dst_bytes) return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: dst is NULL");
  if (dst_bytes < need_dst)
    return diag.fail(TBLOB_E_BUFFER_TOO_SMALL, TBLOB_NO_OFFSET, -1, "destination holds %llu bytes; %s needs %llu",
                     static_cast<unsigned long long>(dst_bytes), t->name, static_cast<unsigned long long>(need_dst));
  if (importance) {
    for (uint64_t c = 0; c < cols; ++c) {
      uint32_t u;
      std::memcpy(&u, importance + c, 4);
      if (!finite_bits(u) || u > 0x80000000u)  // NaN/Inf, or below -0
        return diag.fail(TBLOB_E_QUANT_IMPORTANCE, TBLOB_NO_OFFSET, -1,
                         "importance weight of column %llu is negative or not finite", static_cast<unsigned long long>(c));
    }
  }
  if (rows == 0 || cols == 0) return TBLOB_OK;

  Job j;
  // The kernel set in use picks the SIMD variant where there is one (same bytes).
  RowQuantizeFn simd = std::strcmp(active_kernels().name, "avx2") == 0 ? avx2_row_quantizer(ggml_type) : nullptr;
  j.fn = simd ? simd : q->fn;
  j.src_dtype = src_dtype;
  j.src = static_cast<const uint8_t *>(src);
  j.cols = cols;
  j.rows = rows;
  j.src_row_bytes = src_row;
  j.dst_row_bytes = dst_row;
  j.dst = static_cast<uint8_t *>(dst);
  j.importance = importance;
  j.direct = src_dtype == TBLOB_DTYPE_F32 && reinterpret_cast<uintptr_t>(src) % alignof(float) == 0;
  j.rows_per_piece = src_row >= kPieceInputBytes ? 1 : kPieceInputBytes / src_row;
  j.pieces = (rows + j.rows_per_piece - 1) / j.rows_per_piece;
  uint32_t n = threads ? threads : online_cores();
  if (n > kMaxThreads) n = kMaxThreads;
  if (n > j.pieces) n = static_cast<uint32_t>(j.pieces);
  const Allocator alloc;
  Status st = TBLOB_OK;
  for (uint32_t w = 0; w < n; ++w) {
    j.scratch[w] = nullptr;
    if (!j.direct && st == TBLOB_OK) {
      j.scratch[w] = static_cast<float *>(alloc.alloc(cols * 4));
      if (!j.scratch[w]) st = TBLOB_E_OUT_OF_MEMORY;
    }
  }
  if (st == TBLOB_OK) run_workers(n, worker, &j);
  if (!j.direct)
    for (uint32_t w = 0; w < n; ++w)
      if (j.scratch[w]) alloc.free(j.scratch[w], cols * 4);
  if (st != TBLOB_OK)
    return diag.fail(st, TBLOB_NO_OFFSET, -1, "out of memory for a %llu-byte row buffer",
                     static_cast<unsigned long long>(cols * 4));
  const uint64_t bad = j.bad_row.load();
  if (bad != kNoRow) {
    // Find the column again (the row is small next to the work already done).
    uint64_t col = 0;
    const uint8_t *p = j.src + bad * src_row;
    for (; col < cols; ++col) {
      uint32_t u;
      if (esize == 4)
        std::memcpy(&u, p + col * 4, 4);
      else if (src_dtype == TBLOB_DTYPE_F16)
        u = dq::f16_to_f32(load_le16(p + col * 2));
      else
        u = static_cast<uint32_t>(load_le16(p + col * 2)) << 16;
      if (!finite_bits(u)) break;
    }
    return diag.fail(TBLOB_E_QUANT_NONFINITE, bad * src_row + col * esize, -1,
                     "input value at row %llu, column %llu is NaN or infinite (ggml's blocks for it are undefined)",
                     static_cast<unsigned long long>(bad), static_cast<unsigned long long>(col));
  }
  return TBLOB_OK;
}

}  // namespace ggml
}  // namespace tblob
