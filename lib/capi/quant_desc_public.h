// The public tblob_quant_desc to and from the internal QuantDesc (field for field), shared by
// the dequantization and quantization entry points.
#pragma once
#include "core/struct_size.h"
#include "dequant/quant_desc.h"
#include "tensorblob.h"

namespace tblob {
namespace capi {

// False for NULL or a struct_size short of the first version's fields.
inline bool desc_from_public(const tblob_quant_desc *p, QuantDesc *q) {
  if (!p || !TBLOB_COVERS(p, global_scale_bytes)) return false;
  q->scheme = static_cast<QuantScheme>(p->scheme);
  q->bits = p->bits;
  q->group_size = p->group_size;
  q->scale_dtype = p->scale_dtype;
  q->bias_dtype = p->bias_dtype;
  q->special = p->special;
  q->global_scale_mode = static_cast<GlobalScaleMode>(p->global_scale_mode);
  q->rows = p->rows;
  q->cols = p->cols;
  q->data = static_cast<const uint8_t *>(p->data);
  q->data_bytes = p->data_bytes;
  q->scales = static_cast<const uint8_t *>(p->scales);
  q->scales_bytes = p->scales_bytes;
  q->biases = static_cast<const uint8_t *>(p->biases);
  q->biases_bytes = p->biases_bytes;
  q->global_scale = static_cast<const uint8_t *>(p->global_scale);
  q->global_scale_bytes = p->global_scale_bytes;
  return true;
}

}  // namespace capi
}  // namespace tblob
