/* docs/gguf.md, "Writing GGUF": writes a two-part split set with the streaming writer, one F32
 * tensor per part, then opens it from its second part and dequantizes both tensors. */
#define TBLOB_EXPERIMENTAL_API
#include <stdio.h>
#include <string.h>
#include <tensorblob.h>

static int write_part(const char *path, uint16_t no, const char *name, const float *values) {
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_gguf_writer *w = NULL;
  const uint16_t count = 2;
  const int32_t total = 2;
  const uint64_t shape[1] = {4};
  const tblob_gguf_value arch = {TBLOB_META_STRING, 0, "llama", 5};
  const tblob_gguf_value split_no = {TBLOB_META_U16, 0, &no, 0};
  const tblob_gguf_value split_count = {TBLOB_META_U16, 0, &count, 0};
  const tblob_gguf_value split_total = {TBLOB_META_I32, 0, &total, 0};
  if (tblob_gguf_writer_open(path, NULL, &w, &d) != TBLOB_OK ||
      (no == 0 && tblob_gguf_writer_add_value(w, "general.architecture", 20, &arch, &d) != TBLOB_OK) ||
      tblob_gguf_writer_add_value(w, "split.no", 8, &split_no, &d) != TBLOB_OK ||
      tblob_gguf_writer_add_value(w, "split.count", 11, &split_count, &d) != TBLOB_OK ||
      tblob_gguf_writer_add_value(w, "split.tensors.count", 19, &split_total, &d) != TBLOB_OK ||
      tblob_gguf_writer_add_tensor(w, name, strlen(name), shape, 1, 0 /* F32 */, NULL, &d) != TBLOB_OK ||
      tblob_gguf_writer_write(w, 0, values, 2 * sizeof(float), &d) != TBLOB_OK || /* in two pieces */
      tblob_gguf_writer_write(w, 0, values + 2, 2 * sizeof(float), &d) != TBLOB_OK ||
      tblob_gguf_writer_finish(w, NULL, &d) != TBLOB_OK) {
    fprintf(stderr, "%s: %s\n", path, d.message);
    tblob_gguf_writer_close(w); /* nothing is left under path */
    return 1;
  }
  tblob_gguf_writer_close(w);
  return 0;
}

int main(void) {
  const float a[4] = {1, 2, 3, 4}, b[4] = {-1, -2, -3, -4};
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *m = NULL;
  float out[4];
  uint64_t i;
  if (write_part("model-00001-of-00002.gguf", 0, "a", a) || write_part("model-00002-of-00002.gguf", 1, "b", b))
    return 1;
  if (tblob_model_open("model-00002-of-00002.gguf", NULL, &m, &d) != TBLOB_OK) {
    fprintf(stderr, "%s\n", d.message);
    return 1;
  }
  for (i = 0; i < tblob_model_tensor_count(m); ++i) {
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    if (tblob_tensor_at(m, i, &info, &d) != TBLOB_OK ||
        tblob_tensor_dequantize(m, i, TBLOB_DTYPE_F32, 0, 1, out, sizeof(out), &d) != TBLOB_OK)
      return 1;
    printf("%.*s (file %u): %g %g %g %g\n", (int)info.name_len, info.name, info.file_index, out[0], out[1], out[2],
           out[3]);
    if (memcmp(out, i == 0 ? a : b, sizeof(out)) != 0) return 1;
  }
  tblob_model_close(m);
  return 0;
}
