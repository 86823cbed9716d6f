// The tblob_<struct>_init functions: the _INIT macros' defaults for callers that cannot expand
// a macro (bindings). One list, so a struct added to the header gets its function here.
#include <cstring>

#include "capi/capi_common.h"

namespace {

// Zeroes the caller's struct_size bytes (a newer header's struct may be larger), copies the
// defaults this library knows into the part both share, and records the caller's size.
template <typename T>
tblob_status init_struct(T *s, size_t struct_size, const T &defaults) {
  if (!s || struct_size < 8 || struct_size > UINT32_MAX) return TBLOB_E_INVALID_ARGUMENT;
  std::memset(static_cast<void *>(s), 0, struct_size);
  std::memcpy(static_cast<void *>(s), &defaults, struct_size < sizeof(T) ? struct_size : sizeof(T));
  s->struct_size = static_cast<uint32_t>(struct_size);
  return TBLOB_OK;
}

}  // namespace

// X(function, struct, initializer)
#define TBLOB_INIT_LIST(X)                                                              \
  X(tblob_diag_init, tblob_diag, TBLOB_DIAG_INIT)                                        \
  X(tblob_allocator_init, tblob_allocator, TBLOB_ALLOCATOR_INIT)                         \
  X(tblob_open_options_init, tblob_open_options, TBLOB_OPEN_OPTIONS_INIT)                \
  X(tblob_open_options_init_compact, tblob_open_options, TBLOB_OPEN_OPTIONS_COMPACT_INIT) \
  X(tblob_byte_source_init, tblob_byte_source, TBLOB_BYTE_SOURCE_INIT)                   \
  X(tblob_scan_result_init, tblob_scan_result, TBLOB_SCAN_RESULT_INIT)                   \
  X(tblob_tensor_info_init, tblob_tensor_info, TBLOB_TENSOR_INFO_INIT)                   \
  X(tblob_metadata_value_init, tblob_metadata_value, TBLOB_METADATA_VALUE_INIT)          \
  X(tblob_metadata_cursor_init, tblob_metadata_cursor, TBLOB_METADATA_CURSOR_INIT)       \
  X(tblob_quant_desc_init, tblob_quant_desc, TBLOB_QUANT_DESC_INIT)                      \
  X(tblob_quant_info_init, tblob_quant_info, TBLOB_QUANT_INFO_INIT)                      \
  X(tblob_dequant_options_init, tblob_dequant_options, TBLOB_DEQUANT_OPTIONS_INIT)       \
  X(tblob_dequant_job_init, tblob_dequant_job, TBLOB_DEQUANT_JOB_INIT)                   \
  X(tblob_quantize_options_init, tblob_quantize_options, TBLOB_QUANTIZE_OPTIONS_INIT)    \
  X(tblob_store_options_init, tblob_store_options, TBLOB_STORE_OPTIONS_INIT)             \
  X(tblob_layer_info_init, tblob_layer_info, TBLOB_LAYER_INFO_INIT)                      \
  X(tblob_store_open_options_init, tblob_store_open_options, TBLOB_STORE_OPEN_OPTIONS_INIT) \
  X(tblob_verify_options_init, tblob_verify_options, TBLOB_VERIFY_OPTIONS_INIT)          \
  X(tblob_verify_summary_init, tblob_verify_summary, TBLOB_VERIFY_SUMMARY_INIT)          \
  X(tblob_import_options_init, tblob_import_options, TBLOB_IMPORT_OPTIONS_INIT)          \
  X(tblob_import_result_init, tblob_import_result, TBLOB_IMPORT_RESULT_INIT)             \
  X(tblob_gc_options_init, tblob_gc_options, TBLOB_GC_OPTIONS_INIT)                      \
  X(tblob_gc_result_init, tblob_gc_result, TBLOB_GC_RESULT_INIT)                         \
  X(tblob_uqff_layer_info_init, tblob_uqff_layer_info, TBLOB_UQFF_LAYER_INFO_INIT)       \
  X(tblob_uqff_verify_result_init, tblob_uqff_verify_result, TBLOB_UQFF_VERIFY_RESULT_INIT) \
  X(tblob_slm1_open_options_init, tblob_slm1_open_options, TBLOB_SLM1_OPEN_OPTIONS_INIT) \
  X(tblob_slm1_header_info_init, tblob_slm1_header_info, TBLOB_SLM1_HEADER_INFO_INIT)    \
  X(tblob_slm1_tensor_info_init, tblob_slm1_tensor_info, TBLOB_SLM1_TENSOR_INFO_INIT)    \
  X(tblob_slm1_writer_options_init, tblob_slm1_writer_options, TBLOB_SLM1_WRITER_OPTIONS_INIT) \
  X(tblob_mlx_convert_options_init, tblob_mlx_convert_options, TBLOB_MLX_CONVERT_OPTIONS_INIT) \
  X(tblob_gguf_writer_options_init, tblob_gguf_writer_options, TBLOB_GGUF_WRITER_OPTIONS_INIT)

extern "C" {

#define TBLOB_DEFINE_INIT(fn, type, init)                                        \
  TBLOB_API tblob_status fn(type *s, size_t struct_size) noexcept {              \
    static const type kDefaults = init;                                          \
    return init_struct(s, struct_size, kDefaults);                               \
  }
TBLOB_INIT_LIST(TBLOB_DEFINE_INIT)
#undef TBLOB_DEFINE_INIT

}  // extern "C"
