// Descriptor statuses explained (quant_explain.h).
#include "dequant/quant_explain.h"

#include <cstdio>

#include "core/checked.h"
#include "core/dtype.h"
#include "dequant/dequant.h"

namespace tblob {
namespace {

const char *sname(uint32_t s) { return quant_scheme_text(s); }
const char *dtname(uint32_t dt) { return dtype_label(dt); }

bool is_block(const QuantDesc &q) { return q.scheme == QuantScheme::kBlockFp8; }

uint32_t scale_bytes_of(uint32_t dt) { return dtype_size(dt); }

}  // namespace

const char *quant_scheme_text(uint32_t scheme) {
  if (scheme == 0) return "none";
  const char *n = quant_scheme_label(scheme);
  return n ? n : "unknown";
}

const char *dtype_label(uint32_t dtype) {
  if (dtype == 0) return "none";
  const DtypeInfo *i = dtype_info(dtype);
  return i ? i->name : "invalid";
}

const char *quant_field_prefix(QuantField f) {
  static const char *const kField[] = {"", "data: ", "scales: ", "biases: ", "global_scale: "};
  return kField[static_cast<int>(f)];
}

// Explains a descriptor status in one sentence (no tensor name). Returns the field.
QuantField quant_explain(Status s, const QuantDesc &q, uint32_t out_dtype, uint64_t rb, uint64_t re,
              size_t dst_bytes, char *buf, size_t cap) {
  const uint32_t sv = static_cast<uint32_t>(q.scheme);
  const unsigned long long rows = q.rows, cols = q.cols;
  const uint32_t bits = quant_element_bits(q);
  switch (s) {
    case TBLOB_E_QUANT_SCHEME:
      std::snprintf(buf, cap,
                    "scheme %s (%u) with bits %u, special 0x%x, global-scale mode %u is not a valid "
                    "combination",
                    sname(sv), sv, q.bits, q.special, static_cast<unsigned>(q.global_scale_mode));
      return QuantField::kNone;
    case TBLOB_E_QUANT_GROUP_SIZE: {
      const uint32_t fixed = q.scheme == QuantScheme::kNvfp4 ? 16u
                             : (q.scheme == QuantScheme::kMxfp4 || q.scheme == QuantScheme::kMxfp8) ? 32u
                                                                                                   : 0u;
      const bool grouped = q.scheme == QuantScheme::kMlxAffine || fixed || is_block(q) ||
                           sv == TBLOB_QUANT_SLM1_Q8_0 || sv == TBLOB_QUANT_SLM1_Q4_0;
      if (sv == TBLOB_QUANT_SLM1_Q8_0 && q.group_size != q.cols)
        std::snprintf(buf, cap, "group size %u, but %s has one scale per row: the group size is the row length %llu",
                      q.group_size, sname(sv), cols);
      else if (sv == TBLOB_QUANT_SLM1_Q4_0 && q.group_size % 2 != 0)
        std::snprintf(buf, cap, "block size %u is odd; %s blocks are an even number of 4-bit codes",
                      q.group_size, sname(sv));
      else if (!grouped)
        std::snprintf(buf, cap, "group size %u given for %s, which has no groups (use 0)",
                      q.group_size, sname(sv));
      else if (q.group_size == 0)
        std::snprintf(buf, cap, "group size is 0");
      else if (fixed && q.group_size != fixed)
        std::snprintf(buf, cap, "group size %u, but %s groups are %u elements", q.group_size,
                      sname(sv), fixed);
      else
        std::snprintf(buf, cap, "group size %u does not divide the row length %llu", q.group_size, cols);
      return QuantField::kScale;
    }
    case TBLOB_E_QUANT_PACKING:
      if (q.group_size)
        std::snprintf(buf, cap, "a row of %llu %u-bit codes is %llu bits, not whole 32-bit words",
                      cols, bits, cols * bits);
      else
        std::snprintf(buf, cap, "%llu x %llu %u-bit elements do not fill whole bytes", rows, cols, bits);
      return QuantField::kData;
    case TBLOB_E_QUANT_DATA_SIZE: {
      uint64_t e = 0, b = 0;
      const bool ok = checked_mul(q.rows, q.cols, &e) && checked_mul(e, bits, &b);
      std::snprintf(buf, cap, "packed data is %llu bytes, but %llu x %llu %u-bit codes need %llu",
                    static_cast<unsigned long long>(q.data_bytes), rows, cols, bits,
                    static_cast<unsigned long long>(ok ? b / 8 : 0));
      return QuantField::kData;
    }
    case TBLOB_E_QUANT_SCALE_DTYPE: {
      const char *allowed = "none (plain types have no scales)";
      if (q.scheme == QuantScheme::kMlxAffine || is_block(q)) allowed = "F32, F16 or BF16";
      if (q.scheme == QuantScheme::kMxfp4 || q.scheme == QuantScheme::kMxfp8) allowed = "F8_E8M0";
      if (q.scheme == QuantScheme::kNvfp4) allowed = "F8_E4M3";
      if (sv == TBLOB_QUANT_SLM1_Q8_0 || sv == TBLOB_QUANT_SLM1_Q4_0) allowed = "F32";
      std::snprintf(buf, cap, "scale dtype %s is not allowed for %s (allowed: %s)",
                    dtname(q.scale_dtype), sname(sv), allowed);
      return QuantField::kScale;
    }
    case TBLOB_E_QUANT_SCALE_SIZE: {
      const uint64_t n = quant_scale_count(q);
      const uint32_t sb = scale_bytes_of(q.scale_dtype);
      std::snprintf(buf, cap, "scales are %llu bytes, but %llu scales of %u bytes need %llu",
                    static_cast<unsigned long long>(q.scales_bytes),
                    static_cast<unsigned long long>(n), sb,
                    static_cast<unsigned long long>(n * sb));
      return QuantField::kScale;
    }
    case TBLOB_E_QUANT_BIAS_DTYPE:
      if (q.scheme == QuantScheme::kMlxAffine)
        std::snprintf(buf, cap, "bias dtype %s differs from the scale dtype %s (affine needs both)",
                      dtname(q.bias_dtype), dtname(q.scale_dtype));
      else
        std::snprintf(buf, cap, "%s has no bias, but one is given (dtype %s, %llu bytes)", sname(sv),
                      dtname(q.bias_dtype), static_cast<unsigned long long>(q.biases_bytes));
      return QuantField::kBias;
    case TBLOB_E_QUANT_BIAS_SIZE: {
      const uint64_t n = quant_scale_count(q);
      const uint32_t bb = scale_bytes_of(q.bias_dtype);
      std::snprintf(buf, cap, "biases are %llu bytes, but %llu biases of %u bytes need %llu",
                    static_cast<unsigned long long>(q.biases_bytes),
                    static_cast<unsigned long long>(n), bb,
                    static_cast<unsigned long long>(n * bb));
      return QuantField::kBias;
    }
    case TBLOB_E_QUANT_GLOBAL_SCALE:
      std::snprintf(buf, cap,
                    "global scale (mode %u, %llu bytes) needs the nvfp4 scheme, a mode, and exactly one F32",
                    static_cast<unsigned>(q.global_scale_mode),
                    static_cast<unsigned long long>(q.global_scale_bytes));
      return QuantField::kGlobal;
    case TBLOB_E_DEQUANT_OUT_DTYPE:
      std::snprintf(buf, cap, "output dtype %s (%u) is not F32, F16 or BF16", dtname(out_dtype), out_dtype);
      return QuantField::kNone;
    case TBLOB_E_RANGE:
      std::snprintf(buf, cap, "rows [%llu, %llu) are not a range inside the %llu rows",
                    static_cast<unsigned long long>(rb), static_cast<unsigned long long>(re), rows);
      return QuantField::kNone;
    case TBLOB_E_BUFFER_TOO_SMALL: {
      uint64_t need = 0;
      dequant_output_bytes(q, out_dtype, rb, re, &need);
      std::snprintf(buf, cap, "rows [%llu, %llu) as %s need %llu bytes; the buffer holds %llu",
                    static_cast<unsigned long long>(rb), static_cast<unsigned long long>(re),
                    dtname(out_dtype), static_cast<unsigned long long>(need),
                    static_cast<unsigned long long>(dst_bytes));
      return QuantField::kNone;
    }
    case TBLOB_E_SHAPE_OVERFLOW:
      std::snprintf(buf, cap, "%llu x %llu elements overflow 64-bit sizes", rows, cols);
      return QuantField::kNone;
    case TBLOB_E_INVALID_ARGUMENT:
      std::snprintf(buf, cap, "a data/scale/bias/global-scale or output pointer is NULL with a non-zero length");
      return QuantField::kNone;
    default:
      std::snprintf(buf, cap, "%s", status_message(s));
      return QuantField::kNone;
  }
}

}  // namespace tblob
