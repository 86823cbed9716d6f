// The job behind tblob_mlx_convert (lib/capi/convert_api.cpp): a safetensors model to an MLX
// directory, quantized with lib/quant (docs/quantize.md, "Converting to MLX").
#pragma once
#include "core/status.h"
#include "tensorblob.h"

namespace tblob {
namespace convert {

Status mlx_convert(const char *src, const char *out_dir, const tblob_mlx_convert_options &options, const Diag &d);

}  // namespace convert
}  // namespace tblob
