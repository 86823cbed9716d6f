/* Every entry point links in every build; a part compiled out answers
 * TBLOB_E_FEATURE_DISABLED with a message, sets out-pointers to NULL, and its "nothing"
 * functions are harmless. Built parts must not answer that. HAVE_OLLAMA / HAVE_UQFF /
 * HAVE_SLM1 (0 or 1) come from meson. Plain C99. */
#include <stdio.h>
#include <string.h>

#define TBLOB_EXPERIMENTAL_API
#include "tensorblob.h"

static int failures = 0;

static void expect(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "FAIL: %s\n", what);
    ++failures;
  }
}

static void check(int built, tblob_status s, const tblob_diag *d, const char *what) {
  if (built) {
    expect(s != TBLOB_E_FEATURE_DISABLED, what);
  } else {
    expect(s == TBLOB_E_FEATURE_DISABLED, what);
    expect(d == NULL || strstr(d->message, "this build of tensorblob has no") != NULL, what);
  }
}

int main(void) {
  tblob_diag d = TBLOB_DIAG_INIT;
  const char *missing = "/nonexistent/tensorblob-feature-test";

  tblob_store *store = (tblob_store *)&d; /* must come back NULL */
  check(HAVE_OLLAMA, tblob_store_open(missing, NULL, &store, &d), &d, "tblob_store_open");
  expect(store == NULL, "tblob_store_open leaves *out NULL");
  tblob_store_close(NULL);
  check(HAVE_OLLAMA, tblob_ollama_digest_check("sha256:00", 9, 0, NULL), NULL, "tblob_ollama_digest_check");
  tblob_verifier *v = NULL;
  check(HAVE_OLLAMA, tblob_verifier_open("sha256:x", 8, 1, &v, &d), &d, "tblob_verifier_open");
  tblob_verifier_close(v);

  tblob_model *m = (tblob_model *)&d;
  check(HAVE_UQFF, tblob_uqff_open(&missing, 1, NULL, &m, &d), &d, "tblob_uqff_open");
  expect(m == NULL, "tblob_uqff_open leaves *out NULL");
  {
    int is_uqff = 1;
    check(HAVE_UQFF, tblob_uqff_detect(missing, &is_uqff, &d), &d, "tblob_uqff_detect");
    expect(is_uqff == 0, "tblob_uqff_detect: not UQFF");
  }

  m = (tblob_model *)&d;
  check(HAVE_SLM1, tblob_slm1_open_path(missing, NULL, NULL, &m, &d), &d, "tblob_slm1_open_path");
  expect(m == NULL, "tblob_slm1_open_path leaves *out NULL");
  tblob_slm1_writer_free(NULL);

  /* Always built: GGML blocks and FNV-1a. */
  {
    unsigned char block[34] = {0};
    float out[32];
    expect(tblob_ggml_dequantize(8, block, sizeof(block), 32, TBLOB_DTYPE_F32, out, sizeof(out), &d) == TBLOB_OK,
           "tblob_ggml_dequantize (q8_0) in every build");
    expect(tblob_ggml_kernel_name() != NULL, "tblob_ggml_kernel_name");
    /* FNV-1a 64 of "a" (the standard test vector). */
    expect(tblob_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cull, "tblob_fnv1a64(\"a\")");
  }
  if (failures) return 1;
  printf("features: ollama %d, uqff %d, slm1 %d: entry points answer as built\n", HAVE_OLLAMA, HAVE_UQFF, HAVE_SLM1);
  return 0;
}
