// tensorblob.h compiles as C++ (built as C++11 and as C++17) with -Wall -Wextra -pedantic
// -Werror, inside and outside a namespace, and its declarations are extern "C".
#include "tensorblob.h"
#include "tensorblob.h"  // include guard

namespace user {
inline tblob_status open_it(const char *p, tblob_model **m) { return tblob_model_open(p, nullptr, m, nullptr); }
}  // namespace user

int main() {
  tblob_diag diag = TBLOB_DIAG_INIT;
  tblob_open_options opts = TBLOB_OPEN_OPTIONS_INIT;
  tblob_open_options compact = TBLOB_OPEN_OPTIONS_COMPACT_INIT;
  tblob_allocator alloc = TBLOB_ALLOCATOR_INIT;
  tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
  tblob_scan_result result = TBLOB_SCAN_RESULT_INIT;
  static_assert(sizeof(tblob_dtype) >= 1, "enum");
  static_assert(TBLOB_OK == 0, "pinned");
  static_assert(noexcept(tblob_model_close(nullptr)), "entry points are noexcept");
  tblob_status (*fp)(const char *, const tblob_open_options *, tblob_model **, tblob_diag *) = &tblob_model_open;
  tblob_model *m = nullptr;
  const tblob_status s = user::open_it("/nonexistent/tensorblob/header-test", &m);
  (void)diag;
  (void)opts;
  (void)compact;
  (void)alloc;
  (void)info;
  (void)result;
  (void)fp;
  return (s == TBLOB_E_NOT_FOUND && m == nullptr && tblob_version() == TBLOB_VERSION_NUMBER) ? 0 : 1;
}
