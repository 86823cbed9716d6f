#include "dequant/quant_desc.h"

#include "core/checked.h"
#include "core/dtype.h"
#include "dequant/scalar/block_fp8.h"

namespace tblob {
namespace {

bool is_slm1(QuantScheme s) { return s == QuantScheme::kSlm1Q8 || s == QuantScheme::kSlm1Q4; }

bool is_grouped(QuantScheme s) {
  return s == QuantScheme::kMlxAffine || s == QuantScheme::kMxfp4 ||
         s == QuantScheme::kMxfp8 || s == QuantScheme::kNvfp4 || is_slm1(s);
}

// The fixed element width of every scheme but affine; 0 for affine / invalid.
uint32_t implied_bits(QuantScheme s) {
  switch (s) {
    case QuantScheme::kMxfp4:
    case QuantScheme::kNvfp4:
    case QuantScheme::kF4E2M1:
    case QuantScheme::kSlm1Q4:
      return 4;
    case QuantScheme::kSlm1Q8:
    case QuantScheme::kBlockFp8:
    case QuantScheme::kMxfp8:
    case QuantScheme::kF8E4M3:
    case QuantScheme::kF8E5M2:
    case QuantScheme::kF8E8M0:
    case QuantScheme::kF8E4M3Fnuz:
    case QuantScheme::kF8E5M2Fnuz:
      return 8;
    case QuantScheme::kF16:
    case QuantScheme::kBF16:
      return 16;
    case QuantScheme::kF32:
      return 32;
    default:
      return 0;
  }
}

uint32_t scale_size(uint32_t dtype) {
  switch (dtype) {
    case TBLOB_DTYPE_F32:
      return 4;
    case TBLOB_DTYPE_F16:
    case TBLOB_DTYPE_BF16:
      return 2;
    case TBLOB_DTYPE_F8_E8M0:
    case TBLOB_DTYPE_F8_E4M3:
      return 1;
    default:
      return 0;
  }
}

bool scale_dtype_allowed(QuantScheme s, uint32_t dt) {
  switch (s) {
    case QuantScheme::kMlxAffine:
      return dt == TBLOB_DTYPE_F32 || dt == TBLOB_DTYPE_F16 || dt == TBLOB_DTYPE_BF16;
    case QuantScheme::kMxfp4:
    case QuantScheme::kMxfp8:
      return dt == TBLOB_DTYPE_F8_E8M0;
    case QuantScheme::kNvfp4:
      return dt == TBLOB_DTYPE_F8_E4M3;
    case QuantScheme::kSlm1Q8:
    case QuantScheme::kSlm1Q4:
      return dt == TBLOB_DTYPE_F32;
    default:
      return dt == TBLOB_DTYPE_INVALID;
  }
}

// A (pointer, length) pair: the pointer must be set when the length is not zero.
bool ptr_ok(const uint8_t *p, uint64_t n) { return n == 0 || p != nullptr; }

}  // namespace

uint32_t quant_element_bits(const QuantDesc &d) {
  return d.scheme == QuantScheme::kMlxAffine ? d.bits : implied_bits(d.scheme);
}

uint32_t dequant_out_size(uint32_t out_dtype) {
  const bool output = out_dtype == TBLOB_DTYPE_F32 || out_dtype == TBLOB_DTYPE_F16 || out_dtype == TBLOB_DTYPE_BF16;
  return output ? dtype_size(out_dtype) : 0;
}

#define TBLOB_QUANT_SCHEME(id, number, internal, name)                                          \
  static_assert(TBLOB_QUANT_##id == (number), #id " has another number in tensorblob.h");      \
  static_assert(static_cast<uint32_t>(QuantScheme::internal) == (number), #internal " differs");
#include "dequant/quant_scheme_list.def"
#undef TBLOB_QUANT_SCHEME

const char *quant_scheme_label(uint32_t s) {
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"  // a scheme missing from the list fails the build
  switch (static_cast<QuantScheme>(s)) {
#define TBLOB_QUANT_SCHEME(id, number, internal, name) \
  case QuantScheme::internal: return name;
#include "dequant/quant_scheme_list.def"
#undef TBLOB_QUANT_SCHEME
    case QuantScheme::kInvalid: return nullptr;
  }
#pragma GCC diagnostic pop
  return nullptr;
}

const char *quant_scheme_name(QuantScheme s) {
  if (s == QuantScheme::kInvalid) return "none";
  return quant_scheme_label(static_cast<uint32_t>(s));
}

uint64_t quant_scale_count(const QuantDesc &d) {
  if (d.scheme == QuantScheme::kBlockFp8) return block_fp8_scale_count(d);
  if (d.group_size == 0) return 0;
  uint64_t n;
  return checked_mul(d.rows, d.cols / d.group_size, &n) ? n : 0;
}

Status validate_desc(const QuantDesc &d) {
  // Square blocks of a 2-D layout: their own rules.
  if (d.scheme == QuantScheme::kBlockFp8) return validate_block_fp8(d);
  // 1. Scheme, bit width and flags.
  const uint32_t sv = static_cast<uint32_t>(d.scheme);
  if (sv == 0 || sv >= kQuantSchemeCount) return kStatusQuantScheme;
  if (d.scheme == QuantScheme::kMlxAffine) {
    if (d.bits < 1 || d.bits > 8 || d.bits == 7) return kStatusQuantScheme;
  } else if (d.bits != 0 && d.bits != implied_bits(d.scheme)) {
    return kStatusQuantScheme;
  }
  if ((d.special & ~kSpecAll) != 0) return kStatusQuantScheme;
  const uint32_t gm = static_cast<uint32_t>(d.global_scale_mode);
  if (gm > static_cast<uint32_t>(GlobalScaleMode::kMlxAmax)) return kStatusQuantScheme;

  const uint32_t bits = quant_element_bits(d);
  uint64_t elems, total_bits;
  if (!checked_mul(d.rows, d.cols, &elems) || !checked_mul(elems, bits, &total_bits)) {
    return TBLOB_E_SHAPE_OVERFLOW;
  }

  // 2. Group size.
  const bool grouped = is_grouped(d.scheme);
  if (grouped) {
    if (d.group_size == 0) return kStatusQuantGroupSize;
    if (d.scheme == QuantScheme::kMxfp4 || d.scheme == QuantScheme::kMxfp8) {
      if (d.group_size != 32) return kStatusQuantGroupSize;
    } else if (d.scheme == QuantScheme::kNvfp4) {
      if (d.group_size != 16) return kStatusQuantGroupSize;
    } else if (d.scheme == QuantScheme::kSlm1Q8) {
      if (d.group_size != d.cols) return kStatusQuantGroupSize;  // one scale per row
    } else if (d.scheme == QuantScheme::kSlm1Q4) {
      if (d.group_size % 2 != 0) return kStatusQuantGroupSize;  // blocks start on bytes
    }
    if (d.cols % d.group_size != 0) return kStatusQuantGroupSize;
  } else if (d.group_size != 0) {
    return kStatusQuantGroupSize;
  }

  // 3. Packing. MLX rows are whole uint32 words; F4 needs an even element count; SLM1 rows
  // are whole bytes (q4_0: an even block divides cols, so this always holds after step 2).
  uint64_t row_bits;
  if (!checked_mul(d.cols, bits, &row_bits)) return TBLOB_E_SHAPE_OVERFLOW;
  if (is_slm1(d.scheme)) {
    if (row_bits % 8 != 0) return kStatusQuantPacking;
  } else if (grouped) {
    if (row_bits % 32 != 0) return kStatusQuantPacking;
  } else if (total_bits % 8 != 0) {
    return kStatusQuantPacking;
  }

  // 4. Scale / bias encodings.
  if (!scale_dtype_allowed(d.scheme, d.scale_dtype)) return kStatusQuantScaleDtype;
  if (d.scheme == QuantScheme::kMlxAffine) {
    if (d.bias_dtype != d.scale_dtype) return kStatusQuantBiasDtype;
  } else if (d.bias_dtype != TBLOB_DTYPE_INVALID) {
    return kStatusQuantBiasDtype;
  }

  // 5. Global scale.
  if (d.global_scale_mode != GlobalScaleMode::kNone) {
    if (d.scheme != QuantScheme::kNvfp4) return kStatusQuantGlobalScale;
    if (d.global_scale_bytes != 4 || d.global_scale == nullptr) return kStatusQuantGlobalScale;
  } else if (d.global_scale != nullptr || d.global_scale_bytes != 0) {
    return kStatusQuantGlobalScale;
  }

  // 6. Exact byte lengths.
  if (d.data_bytes != total_bits / 8) return kStatusQuantDataSize;
  uint64_t groups = 0, scale_bytes = 0, bias_bytes = 0;
  if (grouped) {
    if (!checked_mul(d.rows, d.cols / d.group_size, &groups) ||
        !checked_mul(groups, scale_size(d.scale_dtype), &scale_bytes)) {
      return TBLOB_E_SHAPE_OVERFLOW;
    }
    if (d.scheme == QuantScheme::kMlxAffine &&
        !checked_mul(groups, scale_size(d.bias_dtype), &bias_bytes)) {
      return TBLOB_E_SHAPE_OVERFLOW;
    }
  }
  if (d.scales_bytes != scale_bytes) return kStatusQuantScaleSize;
  if (d.biases_bytes != bias_bytes) return kStatusQuantBiasSize;
  // A scheme without scales must not carry a dangling scale/bias pointer either.
  if (!grouped && d.scales != nullptr) return kStatusQuantScaleDtype;
  if (d.scheme != QuantScheme::kMlxAffine && d.biases != nullptr) return kStatusQuantBiasDtype;

  // 7. Pointers.
  if (!ptr_ok(d.data, d.data_bytes) || !ptr_ok(d.scales, d.scales_bytes) ||
      !ptr_ok(d.biases, d.biases_bytes)) {
    return TBLOB_E_INVALID_ARGUMENT;
  }
  return TBLOB_OK;
}

}  // namespace tblob
