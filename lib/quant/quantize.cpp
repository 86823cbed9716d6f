// Sizes, the quantizer's own parameter rules, and the row loop shared out over threads.
#include "quant/quantize.h"

#include "core/checked.h"
#include "core/parallel.h"
#include "dequant/scalar/block_fp8.h"

namespace tblob {
namespace quant {

namespace {

uint32_t elem_size(uint32_t dt) {
  switch (dt) {
    case TBLOB_DTYPE_F32: return 4;
    case TBLOB_DTYPE_F16:
    case TBLOB_DTYPE_BF16: return 2;
    case TBLOB_DTYPE_F8_E8M0:
    case TBLOB_DTYPE_F8_E4M3: return 1;
    default: return 0;
  }
}

// A non-null address for length checks of a descriptor that has no buffers yet.
const uint8_t kDummy = 0;

}  // namespace

Status sizes(QuantDesc *d) {
  QuantDesc c = *d;
  uint64_t elems, total_bits;
  if (!checked_mul(c.rows, c.cols, &elems) || !checked_mul(elems, quant_element_bits(c), &total_bits))
    return TBLOB_E_SHAPE_OVERFLOW;
  c.data_bytes = total_bits / 8;
  const uint64_t count = quant_scale_count(c);
  if (!checked_mul(count, elem_size(c.scale_dtype), &c.scales_bytes)) return TBLOB_E_SHAPE_OVERFLOW;
  c.biases_bytes = 0;
  if (c.scheme == QuantScheme::kMlxAffine && !checked_mul(count, elem_size(c.bias_dtype), &c.biases_bytes))
    return TBLOB_E_SHAPE_OVERFLOW;
  c.global_scale_bytes = c.global_scale_mode != GlobalScaleMode::kNone ? 4 : 0;
  c.data = c.data_bytes ? &kDummy : nullptr;
  c.scales = c.scales_bytes ? &kDummy : nullptr;
  c.biases = c.biases_bytes ? &kDummy : nullptr;
  c.global_scale = c.global_scale_bytes ? &kDummy : nullptr;
  const Status s = validate_desc(c);
  if (s != TBLOB_OK) return s;
  d->data_bytes = c.data_bytes;
  d->scales_bytes = c.scales_bytes;
  d->biases_bytes = c.biases_bytes;
  d->global_scale_bytes = c.global_scale_bytes;
  return TBLOB_OK;
}

Status check_quantizable(const QuantDesc &d, const char **why) {
  switch (d.scheme) {
    case QuantScheme::kMlxAffine:
      if (d.bits < 2) {
        *why = "affine quantizes to 2, 3, 4, 5, 6 or 8 bits (mx.quantize's widths)";
        return TBLOB_E_QUANT_SCHEME;
      }
      if (d.group_size != 32 && d.group_size != 64 && d.group_size != 128) {
        *why = "affine quantizes with group size 32, 64 or 128 (mx.quantize's sizes)";
        return TBLOB_E_QUANT_GROUP_SIZE;
      }
      return TBLOB_OK;
    case QuantScheme::kMxfp4:
    case QuantScheme::kMxfp8:
    case QuantScheme::kBlockFp8:
    case QuantScheme::kSlm1Q8:
    case QuantScheme::kSlm1Q4:
      return TBLOB_OK;
    case QuantScheme::kNvfp4:
      if (d.global_scale_mode == GlobalScaleMode::kMultiplier) {
        *why = "nvfp4 quantizes with no global scale or MLX's (TBLOB_GLOBAL_SCALE_MLX_AMAX), not a multiplier";
        return TBLOB_E_UNSUPPORTED;
      }
      if (d.global_scale_mode == GlobalScaleMode::kMlxAmax) {
        const float g = dq::f32_from_bits(load_le32(d.global_scale));
        if (!(g > 0.0f) || !finite(2688.0f / g)) {
          *why = "the global scale must be positive and 2688 / global finite (MLX's: the tensor's amax)";
          return TBLOB_E_QUANT_GLOBAL_SCALE;
        }
      }
      return TBLOB_OK;
    default:
      *why = "no quantizer for this scheme (plain element types are conversions)";
      return TBLOB_E_UNSUPPORTED;
  }
}

namespace {

using RowsFn = void (*)(const QuantDesc &, const Source &, uint64_t, uint64_t, ValueError *);

struct Shared {
  const QuantDesc *d;
  const Source *src;
  RowsFn fn;
  uint64_t units, piece;
  uint64_t next;  // atomic
  ValueError errs[256];
};

void worker(void *ctx, uint32_t w) {
  Shared &sh = *static_cast<Shared *>(ctx);
  for (;;) {
    const uint64_t id = __atomic_fetch_add(&sh.next, 1, __ATOMIC_RELAXED);
    const uint64_t b = id * sh.piece;
    if (id >= (sh.units + sh.piece - 1) / sh.piece) return;
    const uint64_t e = sh.units - b < sh.piece ? sh.units : b + sh.piece;
    sh.fn(*sh.d, *sh.src, b, e, &sh.errs[w]);
  }
}

}  // namespace

Status quantize(const QuantDesc &d, const Source &src, uint32_t threads, ValueError *err) {
  Shared sh;
  sh.d = &d;
  sh.src = &src;
  sh.next = 0;
  sh.units = d.rows;
  switch (d.scheme) {
    case QuantScheme::kMlxAffine: sh.fn = affine_rows; break;
    case QuantScheme::kMxfp4:
    case QuantScheme::kMxfp8: sh.fn = mxfp_rows; break;
    case QuantScheme::kNvfp4: sh.fn = nvfp4_rows; break;
    case QuantScheme::kBlockFp8:
      sh.fn = block_fp8_rows;
      sh.units = (d.rows + d.group_size - 1) / d.group_size;
      break;
    default: sh.fn = slm1_rows; break;
  }
  if (sh.units == 0 || d.cols == 0) return TBLOB_OK;
  if (threads == 0) threads = online_cores();
  if (threads > 256) threads = 256;
  // Pieces of at least ~256 KiB of input so threads pay; four per thread for balance.
  uint64_t unit_elems = d.cols;
  if (d.scheme == QuantScheme::kBlockFp8 && !checked_mul(d.cols, d.group_size, &unit_elems))
    unit_elems = UINT64_MAX;  // a block row past 2^64 values: one unit per piece
  uint64_t piece = sh.units / (static_cast<uint64_t>(threads) * 4);
  const uint64_t min_piece = (uint64_t{1} << 16) / unit_elems + 1;
  if (piece < min_piece) piece = min_piece;
  sh.piece = piece;
  const uint64_t pieces = (sh.units + piece - 1) / piece;
  if (threads > pieces) threads = static_cast<uint32_t>(pieces);
  const uint32_t ran = run_workers(threads, worker, &sh);
  (void)ran;  // workers that could not start left their slot empty
  for (uint32_t w = 0; w < threads; ++w) err->keep(sh.errs[w]);
  if (!err->set()) return TBLOB_OK;
  return err->nonfinite() ? TBLOB_E_QUANT_NONFINITE : TBLOB_E_QUANT_VALUE;
}

}  // namespace quant
}  // namespace tblob
