/* The public API used from plain C99.
 *
 *   test_c_api MODEL.safetensors [SHARDED_DIR]
 *
 * MODEL is examples/tiny-llama/model.safetensors (21 tensors, {"format": "pt"}); SHARDED_DIR
 * is examples/sharded. Prints nothing on success; exits non-zero on the first failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorblob.h"

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                                \
    }                                                                          \
  } while (0)

#define CHECK_OK(call)                                                                       \
  do {                                                                                       \
    tblob_status s_ = (call);                                                                \
    if (s_ != TBLOB_OK) {                                                                    \
      fprintf(stderr, "%s:%d: %s returned %s\n", __FILE__, __LINE__, #call, tblob_status_name(s_)); \
      return 1;                                                                              \
    }                                                                                        \
  } while (0)

static int names_equal(const char *p, size_t n, const char *lit) {
  return n == strlen(lit) && memcmp(p, lit, n) == 0;
}

/* Lists every tensor and checks what each one says about itself. */
static int check_model(const tblob_model *m, uint64_t want_count) {
  uint64_t i, count = tblob_model_tensor_count(m);
  tblob_tensor_info all[64];
  tblob_diag bulk_diag = TBLOB_DIAG_INIT;
  CHECK(count == want_count && count <= 64);
  /* The whole table in one call; past the end is TBLOB_E_RANGE; a short element size is refused. */
  memset(all, 0xA5, sizeof(all));
  CHECK_OK(tblob_tensors_at(m, 0, count, all, sizeof(all[0]), &bulk_diag));
  CHECK(tblob_tensors_at(m, 1, count, all, sizeof(all[0]), &bulk_diag) == TBLOB_E_RANGE);
  CHECK(bulk_diag.status == TBLOB_E_RANGE && strstr(bulk_diag.message, "out of range") != NULL);
  CHECK(tblob_tensors_at(m, 0, 1, all, 8, NULL) == TBLOB_E_INVALID_ARGUMENT);
  CHECK_OK(tblob_tensors_at(m, count, 0, NULL, sizeof(all[0]), NULL));
  for (i = 0; i < count; ++i) {
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    tblob_diag diag = TBLOB_DIAG_INIT;
    uint64_t found = UINT64_MAX, elements = 1, need = 0;
    const void *data = NULL;
    uint64_t len = 0;
    uint32_t r, dtype = 0;
    const char *dname;
    CHECK_OK(tblob_tensor_at(m, i, &info, &diag));
    CHECK(memcmp(&all[i], &info, sizeof(info)) == 0); /* the bulk call gives the same bytes */
    CHECK(info.name != NULL && info.name_len > 0);
    dname = tblob_dtype_name(info.dtype);
    CHECK(dname != NULL);
    CHECK_OK(tblob_dtype_from_name(dname, strlen(dname), &dtype, NULL));
    CHECK(dtype == info.dtype);
    for (r = 0; r < info.rank; ++r) elements *= info.shape[r];
    CHECK(elements == info.element_count);
    CHECK(elements * tblob_dtype_bits(info.dtype) / 8 == info.data_length);
    CHECK_OK(tblob_tensor_find(m, info.name, info.name_len, &found, &diag));
    CHECK(found == i);
    CHECK_OK(tblob_tensor_data(m, i, &data, &len, &diag));
    CHECK(len == info.data_length);
    CHECK(data != NULL || len == 0);
    CHECK(info.file_index < tblob_model_file_count(m));
    /* Float tensors dequantize to f32: 4 bytes per element, the whole tensor or one row. */
    if (info.dtype == TBLOB_DTYPE_F16 || info.dtype == TBLOB_DTYPE_F32 || info.dtype == TBLOB_DTYPE_BF16) {
      CHECK_OK(tblob_tensor_dequant_size(m, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &need, &diag));
      CHECK(need == elements * 4);
      if (info.rank >= 2) {
        CHECK_OK(tblob_tensor_dequant_size(m, i, TBLOB_DTYPE_BF16, 1, 2, &need, &diag));
        CHECK(need == info.shape[info.rank - 1] * 2);
      }
    } else if (info.dtype == TBLOB_DTYPE_I64 || info.dtype == TBLOB_DTYPE_I32) {
      CHECK(tblob_tensor_dequant_size(m, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &need, &diag) ==
            TBLOB_E_NOT_DEQUANTIZABLE);
    }
  }
  return 0;
}

static int scan_count(void *user, const tblob_scan_event *ev) {
  size_t *counts = (size_t *)user;
  counts[ev->kind == TBLOB_SCAN_TENSOR ? 0 : 1] += 1;
  return 0;
}

static int test_single(const char *path) {
  uint32_t modes[2];
  int k;
  modes[0] = TBLOB_OPEN_MAP;
  modes[1] = TBLOB_OPEN_READ;
  for (k = 0; k < 2; ++k) {
    tblob_open_options opts = TBLOB_OPEN_OPTIONS_INIT;
    tblob_diag diag = TBLOB_DIAG_INIT;
    tblob_model *m = NULL;
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    uint64_t idx = 0;
    const void *data;
    uint64_t len;
    size_t vlen, plen;
    const char *value, *fpath;
    float norm[8];
    int j;
    opts.mode = modes[k];
    CHECK_OK(tblob_model_open(path, &opts, &m, &diag));
    CHECK(diag.status == TBLOB_OK);
    CHECK(tblob_model_format(m) == TBLOB_FORMAT_SAFETENSORS);
    CHECK(strcmp(tblob_format_name(tblob_model_format(m)), "safetensors") == 0);
    CHECK(tblob_model_file_count(m) == 1);
    CHECK_OK(tblob_model_file_path(m, 0, &fpath, &plen, NULL));
    CHECK(plen == strlen(path) && memcmp(fpath, path, plen) == 0 && fpath[plen] == '\0');
    CHECK(tblob_model_file_path(m, 1, &fpath, &plen, &diag) == TBLOB_E_RANGE);
    CHECK(diag.status == TBLOB_E_RANGE);
    if (check_model(m, 21)) return 1;

    CHECK_OK(tblob_tensor_find(m, "model.embed_tokens.weight", 25, &idx, &diag));
    CHECK_OK(tblob_tensor_at(m, idx, &info, &diag));
    CHECK(info.dtype == TBLOB_DTYPE_F16 && info.rank == 2 && info.shape[0] == 32 && info.shape[1] == 8);
    CHECK(names_equal(info.name, info.name_len, "model.embed_tokens.weight"));
    CHECK_OK(tblob_tensor_find(m, "lm_head.weight", 14, &idx, &diag));
    CHECK_OK(tblob_tensor_at(m, idx, &info, &diag));
    CHECK(info.dtype == TBLOB_DTYPE_BF16 && info.rank == 2 && info.data_length == 32 * 8 * 2);
    /* Norm weights are F32 ones. */
    CHECK_OK(tblob_tensor_find(m, "model.norm.weight", 17, &idx, &diag));
    CHECK_OK(tblob_tensor_at(m, idx, &info, &diag));
    CHECK(info.dtype == TBLOB_DTYPE_F32 && info.rank == 1 && info.shape[0] == 8);
    CHECK_OK(tblob_tensor_data(m, idx, &data, &len, &diag));
    CHECK(len == sizeof(norm));
    memcpy(norm, data, sizeof(norm));
    for (j = 0; j < 8; ++j) CHECK(norm[j] == 1.0f);

    CHECK(tblob_metadata_count(m) == 1);
    CHECK_OK(tblob_metadata_find(m, "format", 6, &value, &vlen, NULL));
    CHECK(vlen == 2 && memcmp(value, "pt", 2) == 0);
    CHECK(tblob_metadata_find(m, "nope", 4, &value, &vlen, &diag) == TBLOB_E_NOT_FOUND);
    CHECK(diag.status == TBLOB_E_NOT_FOUND && strstr(diag.message, "\"nope\"") != NULL);

    CHECK(tblob_tensor_find(m, "model.nope", 10, &idx, &diag) == TBLOB_E_NOT_FOUND);
    CHECK(diag.status == TBLOB_E_NOT_FOUND && diag.message[0] != '\0');
    CHECK(tblob_tensor_at(m, 21, &info, &diag) == TBLOB_E_RANGE);
    tblob_model_close(m);
  }
  return 0;
}

static int test_scan(const char *path) {
  FILE *f = fopen(path, "rb");
  uint8_t *buf;
  long size;
  size_t counts[2] = {0, 0};
  tblob_scan_result res = TBLOB_SCAN_RESULT_INIT;
  tblob_diag diag = TBLOB_DIAG_INIT;
  void *scratch;
  size_t need;
  tblob_model *m = NULL;
  CHECK(f != NULL);
  CHECK(fseek(f, 0, SEEK_END) == 0);
  size = ftell(f);
  CHECK(size > 8);
  rewind(f);
  buf = (uint8_t *)malloc((size_t)size);
  CHECK(buf != NULL);
  CHECK(fread(buf, 1, (size_t)size, f) == (size_t)size);
  fclose(f);

  CHECK_OK(tblob_st_scan(buf, (size_t)size, NULL, scan_count, counts, NULL, 0, &res, &diag));
  CHECK(counts[0] == 21 && counts[1] == 1);
  CHECK(res.tensor_count == 21 && res.metadata_count == 1 && res.whole_table_checked == 0);
  need = tblob_st_scan_scratch_bytes(res.tensor_count, res.metadata_count);
  scratch = malloc(need);
  CHECK(scratch != NULL);
  CHECK_OK(tblob_st_scan(buf, (size_t)size, NULL, NULL, NULL, scratch, need, &res, &diag));
  CHECK(res.whole_table_checked == 1);
  CHECK(res.data_offset + res.data_bytes == (uint64_t)size);
  free(scratch);

  /* The same bytes as a borrowed buffer. */
  CHECK_OK(tblob_model_open_memory(buf, (size_t)size, NULL, &m, &diag));
  if (check_model(m, 21)) return 1;
  tblob_model_close(m);

  /* A truncated copy is refused with a diagnostic. */
  m = NULL;
  CHECK(tblob_model_open_memory(buf, (size_t)size - 1, NULL, &m, &diag) == TBLOB_E_TRUNCATED);
  CHECK(m == NULL && diag.status == TBLOB_E_TRUNCATED && diag.message[0] != '\0');
  CHECK(strcmp(tblob_status_name(diag.status), "TBLOB_E_TRUNCATED") == 0);
  free(buf);
  return 0;
}

static int test_misc(void) {
  char out[16];
  size_t n = 0;
  tblob_model *m = NULL;
  tblob_diag diag = TBLOB_DIAG_INIT;
  tblob_open_options compact = TBLOB_OPEN_OPTIONS_COMPACT_INIT;
  CHECK(tblob_version() == TBLOB_VERSION_NUMBER);
  CHECK(tblob_version_string() != NULL && tblob_version_string()[0] != '\0');
  CHECK(compact.max_rank == 8);
  CHECK_OK(tblob_json_unescape("a\\u00e9\\n", 9, out, sizeof(out), &n, NULL));
  CHECK(n == 4 && memcmp(out, "a\xc3\xa9\n", 4) == 0);
  CHECK(tblob_json_unescape("\\ud800", 6, out, sizeof(out), &n, NULL) == TBLOB_E_JSON);
  CHECK(tblob_model_open("/nonexistent/tensorblob/c-test", NULL, &m, &diag) == TBLOB_E_NOT_FOUND);
  CHECK(m == NULL && diag.message[0] != '\0');
  tblob_model_close(NULL);
  return 0;
}

static int test_sharded(const char *dir) {
  tblob_model *m = NULL;
  tblob_diag diag = TBLOB_DIAG_INIT;
  uint64_t idx;
  CHECK_OK(tblob_model_open(dir, NULL, &m, &diag));
  CHECK(tblob_model_format(m) == TBLOB_FORMAT_SAFETENSORS_SHARDED);
  CHECK(tblob_model_file_count(m) == 2);
  if (check_model(m, 21)) return 1;
  CHECK_OK(tblob_tensor_find(m, "lm_head.weight", 14, &idx, &diag));
  tblob_model_close(m);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.safetensors [SHARDED_DIR]\n", argv[0]);
    return 2;
  }
  if (test_single(argv[1])) return 1;
  if (test_scan(argv[1])) return 1;
  if (test_misc()) return 1;
  if (argc > 2 && test_sharded(argv[2])) return 1;
  return 0;
}
