/* tensorblob.h compiles as C99 with -Wall -Wextra -pedantic -Werror, and every macro and
 * type a C caller uses is well-formed there. */
#include "tensorblob.h"

int main(void) {
  tblob_diag diag = TBLOB_DIAG_INIT;
  tblob_open_options opts = TBLOB_OPEN_OPTIONS_INIT;
  tblob_open_options compact = TBLOB_OPEN_OPTIONS_COMPACT_INIT;
  tblob_allocator alloc = TBLOB_ALLOCATOR_INIT;
  tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
  tblob_scan_result result = TBLOB_SCAN_RESULT_INIT;
  tblob_scan_event event;
  tblob_scan_fn fn = 0;
  tblob_model *model = 0;
  tblob_status status = TBLOB_OK;
  tblob_dtype dtype = TBLOB_DTYPE_F32;
  tblob_format format = TBLOB_FORMAT_SAFETENSORS;
  tblob_open_mode mode = TBLOB_OPEN_READ;
  tblob_scan_event_kind kind = TBLOB_SCAN_TENSOR;
  event.struct_size = (uint32_t)sizeof(event);
  (void)fn;
  (void)model;
  (void)alloc;
  (void)result;
  (void)info;
  (void)compact;
  (void)kind;
  (void)mode;
  (void)format;
  (void)dtype;
  (void)status;
  (void)opts;
  (void)diag;
  return TBLOB_VERSION_NUMBER == tblob_version() ? 0 : 1;
}
