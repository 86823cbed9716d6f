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
  /* tblob_features: exactly the formats and kernel sets meson configured, in order. */
  {
    char want[512], got[512];
    size_t n = 99, i;
    const char *const *f = tblob_features(&n);
    snprintf(want, sizeof(want), "format:safetensors format:safetensors-sharded%s%s%s%s %s",
             HAVE_OLLAMA ? " format:ollama" : "", HAVE_UQFF ? " format:uqff" : "",
             HAVE_SLM1 ? " format:slm1" : "", HAVE_GGUF ? " format:gguf" : "", KERNELS);
    got[0] = '\0';
    for (i = 0; f != NULL && f[i] != NULL; ++i) {
      if (i) strncat(got, " ", sizeof(got) - strlen(got) - 1);
      strncat(got, f[i], sizeof(got) - strlen(got) - 1);
    }
    expect(f != NULL && i == n && tblob_features(NULL) == f, "tblob_features: count and the same static array");
    if (strcmp(got, want) != 0) fprintf(stderr, "tblob_features: \"%s\", want \"%s\"\n", got, want);
    expect(strcmp(got, want) == 0, "tblob_features lists the build");
  }
  /* tblob_status_family: one status per family, as the header's comments place them. */
  expect(tblob_status_family(TBLOB_OK) == TBLOB_FAMILY_OK, "family of TBLOB_OK");
  expect(tblob_status_family(TBLOB_E_RANGE) == TBLOB_FAMILY_ARGUMENT, "family of TBLOB_E_RANGE");
  expect(tblob_status_family(TBLOB_E_OUT_OF_MEMORY) == TBLOB_FAMILY_MEMORY, "family of TBLOB_E_OUT_OF_MEMORY");
  expect(tblob_status_family(TBLOB_E_SOURCE_CHANGED) == TBLOB_FAMILY_IO, "family of TBLOB_E_SOURCE_CHANGED");
  expect(tblob_status_family(TBLOB_E_OLLAMA_MODEL_NOT_FOUND) == TBLOB_FAMILY_NOT_FOUND, "family of ..._MODEL_NOT_FOUND");
  expect(tblob_status_family(TBLOB_E_GGUF_OVERLAP) == TBLOB_FAMILY_FORMAT, "family of TBLOB_E_GGUF_OVERLAP");
  expect(tblob_status_family(TBLOB_E_OLLAMA_LIMIT_CONFIG) == TBLOB_FAMILY_LIMIT, "family of ..._LIMIT_CONFIG");
  expect(tblob_status_family(TBLOB_E_OLLAMA_BLOB_SIZE) == TBLOB_FAMILY_DIGEST, "family of ..._BLOB_SIZE");
  expect(tblob_status_family(TBLOB_E_QUANT_BIAS_SIZE) == TBLOB_FAMILY_DEQUANT, "family of TBLOB_E_QUANT_BIAS_SIZE");
  expect(tblob_status_family(TBLOB_E_FEATURE_DISABLED) == TBLOB_FAMILY_UNSUPPORTED, "family of ..._FEATURE_DISABLED");
  expect(tblob_status_family(TBLOB_E_CANCELLED) == TBLOB_FAMILY_CANCELLED, "family of TBLOB_E_CANCELLED");
  expect(tblob_status_family((tblob_status)-255) == TBLOB_FAMILY_UNKNOWN, "family of an unknown number");
  expect(strcmp(tblob_family_name(TBLOB_FAMILY_NOT_FOUND), "not-found") == 0, "tblob_family_name");
  expect(tblob_family_name(TBLOB_FAMILY_COUNT_) == NULL, "tblob_family_name past the enum");
  {
    int s, listed = 0;
    for (s = 0; s >= -256; --s) {
      const int known = strcmp(tblob_status_name((tblob_status)s), "TBLOB_E_UNKNOWN_STATUS") != 0;
      const uint32_t fam = tblob_status_family((tblob_status)s);
      listed += known;
      if (known != (fam != TBLOB_FAMILY_UNKNOWN)) {
        fprintf(stderr, "status %d: name %s, family %u\n", s, tblob_status_name((tblob_status)s), fam);
        expect(0, "every status has a family, no other number does");
      }
    }
    expect(listed > 100, "statuses found");
  }
  if (failures) return 1;
  printf("features: ollama %d, uqff %d, slm1 %d: entry points answer as built\n", HAVE_OLLAMA, HAVE_UQFF, HAVE_SLM1);
  return 0;
}
