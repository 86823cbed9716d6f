#include "dequant/dequant.h"

#include "core/checked.h"
#include "core/dtype.h"
#include "dequant/scalar/block_fp8.h"
#include "dequant/dispatch.h"

namespace tblob {
namespace {

// Staging buffer for non-temporal output: small enough for L1 and for any thread's stack.
// 4 KiB measured best of 2/4/8/16 KiB with bench_fill_ratio (avx2 and avx512 alike): decode
// and the stores of the previous piece overlap more when the pieces are short.
constexpr uint64_t kStageBytes = 4096;

uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b != 0) {
    const uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// A validated descriptor's scale/bias encoding: F32, F16, BF16, F8_E8M0 or F8_E4M3.
uint64_t scale_elem_bytes(uint32_t dtype) { return dtype_size(dtype); }

// Writes rows [rb, re) through the staging buffer and the streaming copy. A piece of a long
// row is handed to the kernel as a descriptor of its own (one row of whole groups and whole
// 32-bit words), which is valid by construction, so kernels need no extra entry point.
// Returns false (nothing written) when the shape cannot be cut into staging-sized pieces;
// the caller then stores directly.
bool stream_rows(const QuantDesc &d, DequantRowsFn fn, uint64_t esize, uint64_t rb, uint64_t re,
                 uint8_t *dst, StreamCopyFn copy) {
  alignas(64) uint8_t stage[kStageBytes];
  const uint64_t stage_elems = kStageBytes / esize;
  const uint64_t bits = quant_element_bits(d);
  const uint64_t cols = d.cols;
  // Rows no longer than the stage: as many whole rows per piece as fit.
  auto whole_rows = [&]() {
    const uint64_t per = stage_elems / cols;
    for (uint64_t r = rb; r < re;) {
      const uint64_t n = per < re - r ? per : re - r;
      fn(d, r, r + n, stage);
      copy(dst, stage, static_cast<size_t>(n * cols * esize));
      dst += n * cols * esize;
      r += n;
    }
  };
  if (d.scheme == QuantScheme::kSlm1Q8) {
    // One scale per row (group_size == cols): a piece of a row is a row of its own with the
    // same scale, so long rows are cut anywhere and short ones go several to a piece.
    if (cols <= stage_elems) {
      whole_rows();
      return true;
    }
    for (uint64_t r = rb; r < re; ++r) {
      for (uint64_t c0 = 0; c0 < cols; c0 += stage_elems) {
        const uint64_t c = stage_elems < cols - c0 ? stage_elems : cols - c0;
        QuantDesc s = d;
        s.rows = 1;
        s.cols = c;
        s.group_size = static_cast<uint32_t>(c);
        s.data = d.data + r * cols + c0;
        s.data_bytes = c;
        s.scales = d.scales + 4 * r;
        s.scales_bytes = 4;
        fn(s, 0, 1, stage);
        copy(dst, stage, static_cast<size_t>(c * esize));
        dst += c * esize;
      }
    }
    return true;
  }
  if (d.group_size != 0) {
    const uint64_t gsize = d.group_size;
    if (gsize > stage_elems) return false;
    const uint64_t word_codes = 32 / gcd_u64(bits, 32);  // codes per whole number of words
    const uint64_t unit = gsize / gcd_u64(gsize, word_codes) * word_codes;  // lcm
    if (unit > stage_elems) return false;
    if (cols <= stage_elems) {
      whole_rows();
      return true;
    }
    const uint64_t chunk = stage_elems / unit * unit;
    const uint64_t ngroups = cols / gsize;
    const uint64_t ssize = scale_elem_bytes(d.scale_dtype);
    const uint64_t bsize = d.biases != nullptr ? scale_elem_bytes(d.bias_dtype) : 0;
    for (uint64_t r = rb; r < re; ++r) {
      for (uint64_t c0 = 0; c0 < cols; c0 += chunk) {
        const uint64_t c = chunk < cols - c0 ? chunk : cols - c0;
        const uint64_t g0 = r * ngroups + c0 / gsize;
        QuantDesc s = d;
        s.rows = 1;
        s.cols = c;
        s.data = d.data + (r * cols * bits) / 8 + (c0 * bits) / 8;
        s.data_bytes = c * bits / 8;
        s.scales = d.scales + g0 * ssize;
        s.scales_bytes = (c / gsize) * ssize;
        if (d.biases != nullptr) {
          s.biases = d.biases + g0 * bsize;
          s.biases_bytes = (c / gsize) * bsize;
        }
        fn(s, 0, 1, stage);
        copy(dst, stage, static_cast<size_t>(c * esize));
        dst += c * esize;
      }
    }
    return true;
  }
  // Plain schemes: one flat element range. F4 packs two codes per byte, so pieces start on
  // even elements and hold an even count.
  const uint64_t e0 = rb * cols, e1 = re * cols;
  if (bits == 4 && ((e0 | e1) & 1u) != 0) return false;
  for (uint64_t e = e0; e < e1;) {
    const uint64_t c = stage_elems < e1 - e ? stage_elems : e1 - e;
    QuantDesc s = d;
    s.rows = 1;
    s.cols = c;
    s.data = d.data + e * bits / 8;
    s.data_bytes = c * bits / 8;
    fn(s, 0, 1, stage);
    copy(dst, stage, static_cast<size_t>(c * esize));
    dst += c * esize;
    e += c;
  }
  return true;
}

}  // namespace

Status dequant_output_bytes(const QuantDesc &d, uint32_t out_dtype, uint64_t row_begin,
                            uint64_t row_end, uint64_t *out_bytes) {
  const Status st = validate_desc(d);
  if (st != TBLOB_OK) return st;
  const uint32_t esize = dequant_out_size(out_dtype);
  if (esize == 0) return kStatusDequantOutDtype;
  if (row_begin > row_end || row_end > d.rows) return TBLOB_E_RANGE;
  uint64_t elems, bytes;
  if (!checked_mul(row_end - row_begin, d.cols, &elems) || !checked_mul(elems, esize, &bytes)) {
    return TBLOB_E_SHAPE_OVERFLOW;
  }
  *out_bytes = bytes;
  return TBLOB_OK;
}

Status dequantize_rows_with(const KernelTable &kernels, const QuantDesc &d,
                            uint32_t out_dtype, uint64_t row_begin, uint64_t row_end,
                            void *dst, size_t dst_bytes) {
  uint64_t need = 0;
  const Status st = dequant_output_bytes(d, out_dtype, row_begin, row_end, &need);
  if (st != TBLOB_OK) return st;
  if (need > static_cast<uint64_t>(dst_bytes)) return TBLOB_E_BUFFER_TOO_SMALL;
  if (need == 0) return TBLOB_OK;
  if (dst == nullptr) return TBLOB_E_INVALID_ARGUMENT;
  const DequantRowsFn fn =
      kernels.rows[static_cast<uint32_t>(d.scheme)][dequant_out_slot(out_dtype)];
  if (fn == nullptr) return TBLOB_E_UNSUPPORTED;
  if (stream_output(need)) {
    // Aligned destination: the set's kernel writes it with streaming stores itself, so the
    // decode overlaps the drain of the stores (no staging copy, no load + store per vector).
    const DequantNtFn nt = kernels.nt[static_cast<uint32_t>(d.scheme)][dequant_out_slot(out_dtype)];
    if (nt != nullptr && (reinterpret_cast<uintptr_t>(dst) & (kNtAlign - 1)) == 0 &&
        nt(d, row_begin, row_end, dst)) {
      stream_fence();
      return TBLOB_OK;
    }
    const StreamCopyFn copy = stream_copy_for(kernels);
    if (copy != nullptr && stream_rows(d, fn, dequant_out_size(out_dtype), row_begin, row_end,
                                       static_cast<uint8_t *>(dst), copy)) {
      stream_fence();
      return TBLOB_OK;
    }
  }
  fn(d, row_begin, row_end, dst);
  return TBLOB_OK;
}

Status dequantize_rows(const QuantDesc &d, uint32_t out_dtype, uint64_t row_begin,
                       uint64_t row_end, void *dst, size_t dst_bytes) {
  // Blocks span rows: decoded by their own loop, not row by row through the kernel table.
  if (d.scheme == QuantScheme::kBlockFp8)
    return dequantize_block_fp8(d, out_dtype, row_begin, row_end, dst, dst_bytes);
  const KernelTable *kernels = active_kernel_table();
  if (kernels == nullptr) return kStatusKernelUnavailable;
  return dequantize_rows_with(*kernels, d, out_dtype, row_begin, row_end, dst, dst_bytes);
}

}  // namespace tblob
