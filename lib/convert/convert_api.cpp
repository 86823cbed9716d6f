// The extern "C" entry of the MLX conversion job: argument checks only. Jobs are written on
// the public API, above lib/capi, so their entries live with them (tests/check_include_graph.py).
#include "capi/capi_common.h"
#include "convert/mlx_convert.h"

extern "C" {

TBLOB_API tblob_status tblob_mlx_convert(const char *src, const char *out_dir,
                                         const tblob_mlx_convert_options *options,
                                         tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!src || !out_dir) return tblob::capi::bad_arg(d, "src and out_dir are required");
  tblob_mlx_convert_options o = TBLOB_MLX_CONVERT_OPTIONS_INIT;
  if (options) {
    if (!TBLOB_COVERS(options, threads))
      return tblob::capi::bad_arg(d, "options->struct_size is too small (use TBLOB_MLX_CONVERT_OPTIONS_INIT)");
    o = *options;
  }
  return tblob::convert::mlx_convert(src, out_dir, o, d);
}

}  // extern "C"
