// One sentence for each status a quantization descriptor can fail with (the numbers that
// disagree, no tensor name), and the input it is about, so the model API can name the
// companion tensor. Shared by tblob_quant_dequantize and the model tensors' diagnostics.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "dequant/quant_desc.h"

namespace tblob {

// Which input a status is about (for the model API's offsets and names).
enum class QuantField { kNone, kData, kScale, kBias, kGlobal };

// Writes the explanation of s for q into buf (NUL-terminated, cut at cap); rb/re, out_dtype
// and dst_bytes are the call's arguments. Returns the field.
QuantField quant_explain(Status s, const QuantDesc &q, uint32_t out_dtype, uint64_t rb, uint64_t re,
                         size_t dst_bytes, char *buf, size_t cap);

// "" or "data: ", "scales: ", "biases: ", "global_scale: ".
const char *quant_field_prefix(QuantField f);

// A scheme's name, "none" for 0, "unknown" for a number that is none (for messages).
const char *quant_scheme_text(uint32_t scheme);
// A dtype's name, "none" for 0, "invalid" for a number that is none.
const char *dtype_label(uint32_t dtype);

}  // namespace tblob
