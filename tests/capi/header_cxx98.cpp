// tensorblob.h compiles as C++98 (no noexcept there) with -Wall -Wextra -pedantic -Werror.
#include "tensorblob.h"

int main() {
  tblob_diag diag = TBLOB_DIAG_INIT;
  tblob_model *m = 0;
  const tblob_status s = tblob_model_open("/nonexistent/tensorblob/header-test", 0, &m, &diag);
  return (s == TBLOB_E_NOT_FOUND && m == 0) ? 0 : 1;
}
