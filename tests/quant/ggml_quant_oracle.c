/* The GGML quantization oracle: ggml's own quantize_<type> functions (what ggml_quantize_chunk
 * calls for each type; quantize_row_q8_K_ref for Q8_K, which ggml_quantize_chunk does not take),
 * linked with the llama-cpp-python sdist's ggml-quants.c built as build_ggml_oracle.sh says.
 * Test code, never part of the library.
 *
 * Reads requests from stdin until EOF, each little-endian:
 *   u32 ggml_type, u32 flags (bit 0: importance follows), u64 rows, u64 cols,
 *   rows*cols f32 values, then cols f32 importance weights when flagged;
 * and answers each on stdout with u64 n and n bytes (n = 0: a type this oracle does not run).
 * The stubs stand in for the few ggml.c functions ggml-quants.c calls. */
#define GGML_COMMON_DECL_C
#include "ggml-common.h"
#include "ggml-quants.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tinfo { int type; int64_t blck; size_t bytes; };
static const struct tinfo kTypes[] = {
  {GGML_TYPE_Q4_0, QK4_0, sizeof(block_q4_0)},   {GGML_TYPE_Q4_1, QK4_1, sizeof(block_q4_1)},
  {GGML_TYPE_Q5_0, QK5_0, sizeof(block_q5_0)},   {GGML_TYPE_Q5_1, QK5_1, sizeof(block_q5_1)},
  {GGML_TYPE_Q8_0, QK8_0, sizeof(block_q8_0)},   {GGML_TYPE_Q2_K, QK_K, sizeof(block_q2_K)},
  {GGML_TYPE_Q3_K, QK_K, sizeof(block_q3_K)},    {GGML_TYPE_Q4_K, QK_K, sizeof(block_q4_K)},
  {GGML_TYPE_Q5_K, QK_K, sizeof(block_q5_K)},    {GGML_TYPE_Q6_K, QK_K, sizeof(block_q6_K)},
  {GGML_TYPE_Q8_K, QK_K, sizeof(block_q8_K)},    {GGML_TYPE_IQ4_NL, QK4_NL, sizeof(block_iq4_nl)},
  {GGML_TYPE_IQ4_XS, QK_K, sizeof(block_iq4_xs)}, {GGML_TYPE_TQ1_0, QK_K, sizeof(block_tq1_0)},
  {GGML_TYPE_TQ2_0, QK_K, sizeof(block_tq2_0)},  {GGML_TYPE_MXFP4, QK_MXFP4, sizeof(block_mxfp4)},
};

static const struct tinfo *find(int type) {
  for (size_t i = 0; i < sizeof kTypes / sizeof kTypes[0]; ++i)
    if (kTypes[i].type == type) return &kTypes[i];
  return NULL;
}

/* ---- what ggml-quants.c needs from ggml.c ---- */
void ggml_abort(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "ggml_abort %s:%d: ", file, line);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  abort();
}
size_t ggml_row_size(enum ggml_type type, int64_t ne) {
  const struct tinfo *t = find((int)type);
  if (!t) abort();
  return t->bytes * (size_t)(ne / t->blck);
}
size_t ggml_type_size(enum ggml_type type) {
  const struct tinfo *t = find((int)type);
  if (!t) abort();
  return t->bytes;
}
const char *ggml_type_name(enum ggml_type type) { (void)type; return "?"; }

static int read_all(void *p, size_t n) { return fread(p, 1, n, stdin) == n; }

int main(void) {
  uint32_t head[2];
  uint64_t shape[2];
  while (read_all(head, 8)) {
    if (!read_all(shape, 16)) return 2;
    const uint64_t rows = shape[0], cols = shape[1];
    float *x = malloc((rows * cols + 1) * sizeof(float));
    float *w = (head[1] & 1) ? malloc((cols + 1) * sizeof(float)) : NULL;
    if (!x || ((head[1] & 1) && !w)) return 3;
    if (!read_all(x, rows * cols * 4)) return 2;
    if (w && !read_all(w, cols * 4)) return 2;
    const struct tinfo *t = find((int)head[0]);
    uint64_t n = 0;
    void *out = NULL;
    if (t && cols % (uint64_t)t->blck == 0) {
      n = rows * (cols / (uint64_t)t->blck) * t->bytes;
      out = calloc(n + 1, 1);
      const int64_t nr = (int64_t)rows, nc = (int64_t)cols;
      switch (head[0]) {
        case GGML_TYPE_Q4_0: quantize_q4_0(x, out, nr, nc, w); break;
        case GGML_TYPE_Q4_1: quantize_q4_1(x, out, nr, nc, w); break;
        case GGML_TYPE_Q5_0: quantize_q5_0(x, out, nr, nc, w); break;
        case GGML_TYPE_Q5_1: quantize_q5_1(x, out, nr, nc, w); break;
        case GGML_TYPE_Q8_0: quantize_q8_0(x, out, nr, nc, w); break;
        case GGML_TYPE_Q2_K: quantize_q2_K(x, out, nr, nc, w); break;
        case GGML_TYPE_Q3_K: quantize_q3_K(x, out, nr, nc, w); break;
        case GGML_TYPE_Q4_K: quantize_q4_K(x, out, nr, nc, w); break;
        case GGML_TYPE_Q5_K: quantize_q5_K(x, out, nr, nc, w); break;
        case GGML_TYPE_Q6_K: quantize_q6_K(x, out, nr, nc, w); break;
        case GGML_TYPE_Q8_K: quantize_row_q8_K_ref(x, out, nr * nc); break;
        case GGML_TYPE_IQ4_NL: quantize_iq4_nl(x, out, nr, nc, w); break;
        case GGML_TYPE_IQ4_XS: quantize_iq4_xs(x, out, nr, nc, w); break;
        case GGML_TYPE_TQ1_0: quantize_tq1_0(x, out, nr, nc, w); break;
        case GGML_TYPE_TQ2_0: quantize_tq2_0(x, out, nr, nc, w); break;
        case GGML_TYPE_MXFP4: quantize_mxfp4(x, out, nr, nc, w); break;
        default: n = 0; break;
      }
    }
    if (fwrite(&n, 8, 1, stdout) != 1 || (n && fwrite(out, 1, n, stdout) != n)) return 4;
    free(out);
    free(x);
    free(w);
  }
  return fflush(stdout) == 0 ? 0 : 4;
}
