// What a model tensor decodes as: its quantization descriptor resolved from the table (the
// row's dtype, its quantized-companion record, or the format's own description), with the
// bytes where they lie. Every dequantization and quant-info call starts here.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "dequant/quant_desc.h"
#include "table/model.h"

namespace tblob {

struct TensorView {
  QuantDesc q;
  const QuantRecord *rec = nullptr;  // the record it belongs to (weight or companion)
  bool logical = false;              // it is the record's packed weight
  bool own_scheme = false;           // quantized by its container (SLM1 q8_0/q4_0), no record
  Status status = TBLOB_OK;          // resolution / dtype status before validation
  const char *note = nullptr;
  const uint64_t *shape = nullptr;   // logical shape
  uint32_t rank = 0;
};

// Resolves tensor `index` (< m->tensors.size()) into *v; returns v->status. A byte source's
// bytes not in memory are null pointers with their lengths (tensor_dequantize reads them).
Status view_of(const tblob_model *m, uint64_t index, TensorView *v);

// The record tensor i belongs to (as weight or companion), or nullptr.
const QuantRecord *record_of(const tblob_model *m, size_t i);

// For checks only: q with a stand-in for each pointer a byte source left null (its bytes are
// read when decoding); never dereferenced.
QuantDesc sized(const QuantDesc &q);

// True when a file of m is a caller's byte source (bytes are read on demand).
bool is_source_model(const tblob_model *m);

// The logical view tblob_tensor_info reports: the shape and element count a dequantization
// produces, the scheme, and whether the row is a quantized tensor or a companion.
struct TensorLogical {
  const uint64_t *shape = nullptr;
  uint32_t rank = 0;
  uint32_t scheme = 0;
  uint64_t elements = 0;
  bool quantized = false;
  bool companion = false;
};
void tensor_logical(const tblob_model *m, size_t index, TensorLogical *out);

}  // namespace tblob
