/* Byte sources (tblob_model_open_source) over an in-memory read function that counts every
 * byte it hands out, checked against the same files opened by tblob_model_open (mapped).
 *
 *   test_source BIG.safetensors BIG_HEADER_BYTES EXAMPLES_DIR TESTS_DATA_DIR
 *
 * BIG is a 20,000-tensor file written by the Python safetensors package; BIG_HEADER_BYTES is
 * 8 + N, its header length (the driver, tests/source/run_source_tests.py, reads N). Prints one
 * line per check group; exits non-zero on the first failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tensorblob.h"

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

#define CHECK_OK(call)                                                                               \
  do {                                                                                               \
    tblob_status s_ = (call);                                                                        \
    if (s_ != TBLOB_OK) {                                                                            \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call, tblob_status_name(s_), \
              diag.message);                                                                         \
      return 1;                                                                                      \
    }                                                                                                \
  } while (0)

#define CHECK_STATUS(call, want)                                                                     \
  do {                                                                                               \
    tblob_status s_ = (call);                                                                        \
    if (s_ != (want)) {                                                                              \
      fprintf(stderr, "%s:%d: %s returned %s, want %s (%s)\n", __FILE__, __LINE__, #call,           \
              tblob_status_name(s_), tblob_status_name(want), diag.message);                         \
      return 1;                                                                                      \
    }                                                                                                \
  } while (0)

/* ---- an in-memory source ---------------------------------------------------------------- */

enum lie {
  HONEST,
  SHORT,    /* from call `nth` on: one byte fewer than asked */
  OVER,     /* from call `nth` on: one more than asked (nothing extra written) */
  CHANGED,  /* from call `nth` on: TBLOB_E_SOURCE_CHANGED */
  ZERO,     /* from call `nth` on: 0 bytes, forever */
  NEGATIVE  /* from call `nth` on: -12345, not a status */
};

typedef struct counters {
  uint64_t bytes; /* handed out by every source sharing these counters */
  uint64_t calls;
  int closes;
  int opens; /* sources created (the first + siblings) */
} counters;

typedef struct mem_src {
  uint8_t *buf;
  uint64_t len;
  char dir[512];
  enum lie lie;
  uint64_t nth;
  uint64_t my_calls;
  uint64_t my_bytes;
  counters *c;
} mem_src;

static uint8_t *slurp(const char *path, uint64_t *len) {
  FILE *f = fopen(path, "rb");
  long n;
  uint8_t *b;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  b = (uint8_t *)malloc(n ? (size_t)n : 1);
  if (b && n && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = (uint64_t)n;
  return b;
}

static int64_t mem_read(void *user, uint64_t offset, void *dst, size_t len) {
  mem_src *s = (mem_src *)user;
  uint64_t avail;
  size_t n;
  ++s->my_calls;
  ++s->c->calls;
  if (s->lie != HONEST && s->my_calls >= s->nth) {
    switch (s->lie) {
      case SHORT: break;
      case OVER: return (int64_t)len + 1;
      case CHANGED: return TBLOB_E_SOURCE_CHANGED;
      case ZERO: return 0;
      case NEGATIVE: return -12345;
      default: break;
    }
  }
  avail = offset < s->len ? s->len - offset : 0;
  n = len < avail ? len : (size_t)avail;
  if (s->lie == SHORT && s->my_calls >= s->nth && n > 0) --n;
  memcpy(dst, s->buf + offset, n);
  s->c->bytes += n;
  s->my_bytes += n;
  return (int64_t)n;
}

static void mem_close(void *user) {
  mem_src *s = (mem_src *)user;
  ++s->c->closes;
  free(s->buf);
  free(s);
}

static mem_src *mem_new(const char *path, counters *c) {
  mem_src *s = (mem_src *)calloc(1, sizeof(mem_src));
  const char *slash;
  size_t dl;
  if (!s) return NULL;
  s->buf = slurp(path, &s->len);
  if (!s->buf) {
    free(s);
    return NULL;
  }
  slash = strrchr(path, '/');
  dl = slash ? (size_t)(slash - path) : 0;
  if (dl >= sizeof(s->dir)) dl = 0;
  memcpy(s->dir, path, dl);
  s->dir[dl] = '\0';
  s->c = c;
  ++c->opens;
  return s;
}

static tblob_status mem_sibling(void *user, const char *name, size_t name_len, tblob_byte_source *out);

static void mem_fill(mem_src *s, tblob_byte_source *bs, int size_known, const char *name) {
  bs->size = size_known ? s->len : TBLOB_SOURCE_SIZE_UNKNOWN;
  bs->read = mem_read;
  bs->open_sibling = mem_sibling;
  bs->close = mem_close;
  bs->user = s;
  bs->name = name;
}

static tblob_status mem_sibling(void *user, const char *name, size_t name_len, tblob_byte_source *out) {
  mem_src *p = (mem_src *)user;
  char path[1200];
  mem_src *s;
  if (name_len > 600) return TBLOB_E_NOT_FOUND;
  snprintf(path, sizeof(path), "%s/%.*s", p->dir[0] ? p->dir : ".", (int)name_len, name);
  if (access(path, R_OK) != 0) return TBLOB_E_NOT_FOUND;
  s = mem_new(path, p->c);
  if (!s) return TBLOB_E_IO;
  s->lie = p->lie; /* siblings lie the same way, counted on their own */
  s->nth = p->nth;
  mem_fill(s, out, 1, NULL);
  return TBLOB_OK;
}

/* Opens path through a counting source. Returns the status; *src is left pointing at the
 * source (owned by the model or already closed). */
static tblob_status open_counted_opts(const char *path, int size_known, enum lie lie, uint64_t nth, counters *c,
                                      const tblob_open_options *o, tblob_model **m, tblob_diag *diag,
                                      mem_src **src) {
  tblob_byte_source bs;
  mem_src *s = mem_new(path, c);
  if (!s) return TBLOB_E_IO;
  s->lie = lie;
  s->nth = nth;
  tblob_byte_source_init(&bs, sizeof(bs));
  mem_fill(s, &bs, size_known, path);
  if (src) *src = s;
  return tblob_model_open_source(&bs, o, m, diag);
}

static tblob_status open_counted(const char *path, int size_known, enum lie lie, uint64_t nth, counters *c,
                                 tblob_model **m, tblob_diag *diag, mem_src **src) {
  return open_counted_opts(path, size_known, lie, nth, c, NULL, m, diag, src);
}

/* ---- comparisons with the mapped open ---------------------------------------------------- */

static int same_table(const tblob_model *a, const tblob_model *b) {
  uint64_t i, n = tblob_model_tensor_count(a);
  tblob_diag diag = TBLOB_DIAG_INIT;
  CHECK(n == tblob_model_tensor_count(b));
  CHECK(tblob_model_format(a) == tblob_model_format(b));
  CHECK(tblob_metadata_count(a) == tblob_metadata_count(b));
  for (i = 0; i < n; ++i) {
    tblob_tensor_info x = TBLOB_TENSOR_INFO_INIT, y = TBLOB_TENSOR_INFO_INIT;
    uint32_t k;
    CHECK_OK(tblob_tensor_at(a, i, &x, &diag));
    CHECK_OK(tblob_tensor_at(b, i, &y, &diag));
    CHECK(x.name_len == y.name_len && memcmp(x.name, y.name, x.name_len) == 0);
    CHECK(x.dtype == y.dtype && x.rank == y.rank && x.file_index == y.file_index);
    CHECK(x.data_offset == y.data_offset && x.data_length == y.data_length && x.file_offset == y.file_offset);
    CHECK(x.quant_scheme == y.quant_scheme && x.quant_flags == y.quant_flags && x.logical_rank == y.logical_rank);
    for (k = 0; k < x.rank; ++k) CHECK(x.shape[k] == y.shape[k]);
  }
  return 0;
}

/* Every tensor's bytes through tblob_tensor_read equal the mapped view; tblob_tensor_data on
 * the source model is TBLOB_E_NOT_MAPPED. */
static int same_bytes(const tblob_model *src, const tblob_model *mapped) {
  uint64_t i, n = tblob_model_tensor_count(src);
  tblob_diag diag = TBLOB_DIAG_INIT;
  for (i = 0; i < n; ++i) {
    const void *view = NULL;
    uint64_t len = 0;
    uint8_t *got;
    CHECK_OK(tblob_tensor_data(mapped, i, &view, &len, &diag));
    got = (uint8_t *)malloc(len ? (size_t)len : 1);
    CHECK(got != NULL);
    CHECK_OK(tblob_tensor_read(src, i, 0, got, (size_t)len, &diag));
    CHECK(len == 0 || memcmp(got, view, (size_t)len) == 0);
    free(got);
    {
      const void *v2;
      uint64_t l2;
      CHECK_STATUS(tblob_tensor_data(src, i, &v2, &l2, &diag), TBLOB_E_NOT_MAPPED);
    }
  }
  return 0;
}

/* Every dequantizable tensor gives the same floats (same status otherwise). */
static int same_dequant(const tblob_model *src, const tblob_model *mapped, int *count) {
  uint64_t i, n = tblob_model_tensor_count(src);
  tblob_diag diag = TBLOB_DIAG_INIT;
  for (i = 0; i < n; ++i) {
    uint64_t bytes_a = 0, bytes_b = 0;
    tblob_status sa = tblob_tensor_dequant_size(src, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &bytes_a, NULL);
    tblob_status sb = tblob_tensor_dequant_size(mapped, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &bytes_b, NULL);
    float *a, *b;
    CHECK(sa == sb && bytes_a == bytes_b);
    if (sa != TBLOB_OK || bytes_a > (64u << 20)) continue;
    a = (float *)malloc(bytes_a ? (size_t)bytes_a : 4);
    b = (float *)malloc(bytes_a ? (size_t)bytes_a : 4);
    CHECK(a && b);
    CHECK_OK(tblob_tensor_dequantize(mapped, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, b, (size_t)bytes_b, &diag));
    CHECK_OK(tblob_tensor_dequantize(src, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, a, (size_t)bytes_a, &diag));
    CHECK(memcmp(a, b, (size_t)bytes_a) == 0);
    ++*count;
    free(a);
    free(b);
  }
  return 0;
}

static uint64_t src_len(const char *path) {
  uint64_t n = 0;
  uint8_t *b = slurp(path, &n);
  free(b);
  return n;
}

/* Dequantizing rows [1, 2) of a plain 2-D tensor reads that row's bytes only. */
static int test_rows(const char *path) {
  counters c = {0, 0, 0, 0};
  tblob_model *src = NULL;
  tblob_diag diag = TBLOB_DIAG_INIT;
  uint64_t i, n, done = 0;
  CHECK_OK(open_counted(path, 1, HONEST, 0, &c, &src, &diag, NULL));
  n = tblob_model_tensor_count(src);
  for (i = 0; i < n && !done; ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    float row[4096];
    uint64_t before, need = 0;
    CHECK_OK(tblob_tensor_at(src, i, &t, &diag));
    if (t.rank != 2 || t.shape[0] < 2 || t.quant_flags || t.shape[1] > 4096) continue;
    if (tblob_tensor_dequant_size(src, i, TBLOB_DTYPE_F32, 1, 2, &need, NULL) != TBLOB_OK) continue;
    before = c.bytes;
    CHECK_OK(tblob_tensor_dequantize(src, i, TBLOB_DTYPE_F32, 1, 2, row, sizeof(row), &diag));
    CHECK(c.bytes - before == t.data_length / t.shape[0]);
    printf("rows: tensor %.*s, row 1 of %llu: %llu bytes read\n", (int)t.name_len, t.name,
           (unsigned long long)t.shape[0], (unsigned long long)(c.bytes - before));
    ++done;
  }
  CHECK(done == 1);
  tblob_model_close(src);
  return 0;
}

/* Opens path both ways and compares table, bytes and dequantized values. */
static int compare_file(const char *path, uint32_t want_format, uint64_t *read_at_open) {
  counters c = {0, 0, 0, 0};
  tblob_model *src = NULL, *mapped = NULL;
  tblob_diag diag = TBLOB_DIAG_INIT;
  int deq = 0;
  CHECK_OK(tblob_model_open(path, NULL, &mapped, &diag));
  CHECK_OK(open_counted(path, 1, HONEST, 0, &c, &src, &diag, NULL));
  CHECK(tblob_model_format(src) == want_format);
  if (read_at_open) *read_at_open = c.bytes;
  if (same_table(src, mapped)) return 1;
  if (same_bytes(src, mapped)) return 1;
  if (same_dequant(src, mapped, &deq)) return 1;
  printf("%s: %llu tensors alike, %d dequantized alike, %llu of %llu bytes read at open\n", path,
         (unsigned long long)tblob_model_tensor_count(src), deq, (unsigned long long)*(read_at_open ? read_at_open : &c.bytes),
         (unsigned long long)src_len(path));
  tblob_model_close(src);
  tblob_model_close(mapped);
  CHECK(c.closes == c.opens);
  return 0;
}

/* ---- the groups ----------------------------------------------------------------------------- */

#if HAVE_SLM1
static uint64_t le(const uint8_t *p, int n) {
  uint64_t v = 0;
  while (n-- > 0) v = v << 8 | p[n];
  return v;
}

/* SLM1 through a source: with the checksum skipped, open reads [0, tensor_data_offset) (header,
 * tokenizer, directory) and, with the scale check on, each scale array; with the checksum, the
 * whole file. The expected counts come from the file's own fields (docs/slm1.md sections 3-6:
 * tensor_data_offset is u64 at byte 92, tensor_count u32 at 88, directory at byte 80; an entry
 * holds dims at +16 (4 x u32), rank u32 at +12, scale_offset u64 at +48, block_size u32 at +56;
 * a scale array is rows x cols / block_size f32, rows the product of all dims but the last). */
static int test_slm1_partial(const char *path, uint64_t hand_data_offset, uint64_t hand_scales) {
  static const uint32_t flag_sets[3] = {TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM | TBLOB_OPEN_FLAG_SLM1_NO_SCALE_CHECK,
                                        TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM, 0u};
  uint64_t len = 0, data_offset, dir, count, i, scales = 0;
  uint8_t *f = slurp(path, &len);
  int k;
  CHECK(f && len >= 108);
  data_offset = le(f + 92, 8);
  dir = le(f + 80, 8);
  count = le(f + 88, 4);
  CHECK(data_offset == dir + 64 * count && data_offset < len);
  for (i = 0; i < count; ++i) {
    const uint8_t *e = f + dir + 64 * i;
    uint64_t rank = le(e + 12, 4), rows = 1, cols, d;
    if (le(e + 48, 8) == 0) continue; /* f32: no scale array */
    for (d = 0; d + 1 < rank; ++d) rows *= le(e + 16 + 4 * d, 4);
    cols = le(e + 16 + 4 * (rank - 1), 4);
    scales += rows * (cols / le(e + 56, 4)) * 4;
  }
  free(f);
  CHECK(scales > 0); /* the fixture has quantized tensors, or the middle case proves nothing */
  CHECK(data_offset == hand_data_offset && scales == hand_scales);
  for (k = 0; k < 3; ++k) {
    const uint64_t want[3] = {data_offset, data_offset + scales, len};
    tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
    counters c = {0, 0, 0, 0};
    tblob_model *src = NULL, *mapped = NULL;
    tblob_diag diag = TBLOB_DIAG_INIT;
    uint64_t at_open;
    int deq = 0;
    o.flags = flag_sets[k];
    CHECK_OK(tblob_model_open(path, &o, &mapped, &diag));
    CHECK_OK(open_counted_opts(path, 1, HONEST, 0, &c, &o, &src, &diag, NULL));
    at_open = c.bytes;
    CHECK(at_open == want[k]);
    if (same_table(src, mapped)) return 1;
    if (same_bytes(src, mapped)) return 1;
    if (same_dequant(src, mapped, &deq)) return 1;
    CHECK(deq > 0);
    printf("%s flags 0x%x: %llu of %llu bytes read at open (tensor_data_offset %llu, scale arrays %llu)\n", path,
           (unsigned)o.flags, (unsigned long long)at_open, (unsigned long long)len,
           (unsigned long long)data_offset, (unsigned long long)scales);
    tblob_model_close(src);
    tblob_model_close(mapped);
    CHECK(c.closes == c.opens);
  }
  return 0;
}
#endif

static int test_big(const char *path, uint64_t header_bytes) {
  counters c = {0, 0, 0, 0};
  tblob_model *src = NULL, *mapped = NULL;
  tblob_diag diag = TBLOB_DIAG_INIT;
  tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
  uint64_t before, idx;
  const void *view;
  uint64_t vlen;
  uint8_t buf[4096];
  CHECK_OK(tblob_model_open(path, NULL, &mapped, &diag));
  CHECK_OK(open_counted(path, 1, HONEST, 0, &c, &src, &diag, NULL));
  /* Listing read exactly the 8-byte length and the header. */
  CHECK(c.bytes == header_bytes);
  CHECK(tblob_model_tensor_count(src) == 20000);
  if (same_table(src, mapped)) return 1;
  CHECK(c.bytes == header_bytes); /* listing reads nothing more */
  /* One tensor read adds exactly its bytes. */
  CHECK_OK(tblob_tensor_find(src, "t.12345", 7, &idx, &diag));
  CHECK_OK(tblob_tensor_at(src, idx, &info, &diag));
  CHECK(info.data_length > 0 && info.data_length <= sizeof(buf));
  before = c.bytes;
  CHECK_OK(tblob_tensor_read(src, idx, 0, buf, (size_t)info.data_length, &diag));
  CHECK(c.bytes - before == info.data_length);
  CHECK_OK(tblob_tensor_data(mapped, idx, &view, &vlen, &diag));
  CHECK(vlen == info.data_length && memcmp(view, buf, (size_t)vlen) == 0);
  /* A part of it: exactly those bytes; past the end: TBLOB_E_RANGE with nothing read. */
  before = c.bytes;
  CHECK_OK(tblob_tensor_read(src, idx, 4, buf, 8, &diag));
  CHECK(c.bytes - before == 8 && memcmp(buf, (const uint8_t *)view + 4, 8) == 0);
  CHECK_STATUS(tblob_tensor_read(src, idx, info.data_length - 3, buf, 4, &diag), TBLOB_E_RANGE);
  CHECK(c.bytes - before == 8);
  CHECK_STATUS(tblob_tensor_data(src, idx, &view, &vlen, &diag), TBLOB_E_NOT_MAPPED);
  /* Dequantizing one plain f32 tensor reads its bytes, no more. */
  {
    float out[1024];
    uint64_t need = 0;
    before = c.bytes;
    CHECK_OK(tblob_tensor_dequant_size(src, idx, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &need, &diag));
    CHECK(need <= sizeof(out));
    CHECK_OK(tblob_tensor_dequantize(src, idx, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, out, sizeof(out), &diag));
    CHECK(c.bytes - before == info.data_length);
    CHECK(memcmp(out, buf, 0) == 0);
  }
  tblob_model_close(src);
  CHECK(c.closes == 1);
  /* Size unknown: the header, then the last tensor's last byte. */
  c.bytes = 0;
  c.closes = 0;
  CHECK_OK(open_counted(path, 0, HONEST, 0, &c, &src, &diag, NULL));
  CHECK(c.bytes == header_bytes + 1);
  if (same_table(src, mapped)) return 1;
  tblob_model_close(src);
  CHECK(c.closes == 1);
  tblob_model_close(mapped);
  printf("big: 20000 tensors listed reading %llu bytes (8 + header); one tensor read %llu bytes\n",
         (unsigned long long)header_bytes, (unsigned long long)info.data_length);
  return 0;
}

/* Each quantized tensor dequantizes reading its packed bytes and its companions, nothing else
 * from the file (config.json, a sibling, is counted apart). */
static int test_quantized(const char *path) {
  counters c = {0, 0, 0, 0};
  tblob_model *src = NULL, *mapped = NULL;
  tblob_diag diag = TBLOB_DIAG_INIT;
  mem_src *main_src = NULL;
  uint64_t i, n, done = 0, rows_read = 0;
  CHECK_OK(tblob_model_open(path, NULL, &mapped, &diag));
  CHECK_OK(open_counted(path, 1, HONEST, 0, &c, &src, &diag, &main_src));
  if (same_table(src, mapped)) return 1;
  n = tblob_model_tensor_count(src);
  for (i = 0; i < n; ++i) {
    tblob_quant_info q = TBLOB_QUANT_INFO_INIT;
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    uint64_t want, before, bytes = 0, comp[3];
    int k;
    float *a, *b;
    CHECK_OK(tblob_tensor_quant_info(src, i, &q, &diag));
    if (!(q.flags & TBLOB_TENSOR_QUANTIZED) || q.status != TBLOB_OK) continue;
    CHECK_OK(tblob_tensor_at(src, i, &t, &diag));
    want = t.data_length;
    comp[0] = (uint64_t)q.scale_index;
    comp[1] = (uint64_t)q.bias_index;
    comp[2] = (uint64_t)q.global_scale_index;
    for (k = 0; k < 3; ++k)
      if ((int64_t)comp[k] >= 0) {
        tblob_tensor_info ct = TBLOB_TENSOR_INFO_INIT;
        CHECK_OK(tblob_tensor_at(src, comp[k], &ct, &diag));
        want += ct.data_length;
      }
    CHECK_OK(tblob_tensor_dequant_size(src, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &bytes, &diag));
    a = (float *)malloc((size_t)bytes);
    b = (float *)malloc((size_t)bytes);
    CHECK(a && b);
    before = main_src->my_bytes;
    CHECK_OK(tblob_tensor_dequantize(src, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, a, (size_t)bytes, &diag));
    CHECK(main_src->my_bytes - before == want);
    CHECK_OK(tblob_tensor_dequantize(mapped, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, b, (size_t)bytes, &diag));
    CHECK(memcmp(a, b, (size_t)bytes) == 0);
    /* Row 1 alone: schemes whose groups run along a row read that row's share of the codes,
     * scales and biases (and the whole global scale); block FP8 reads everything again. */
    if (q.rows >= 2) {
      const int per_row = q.scheme == TBLOB_QUANT_MLX_AFFINE || q.scheme == TBLOB_QUANT_MXFP4 ||
                          q.scheme == TBLOB_QUANT_MXFP8 || q.scheme == TBLOB_QUANT_NVFP4;
      uint64_t row_want = t.data_length / q.rows, row_bytes = 0;
      for (k = 0; k < 3; ++k)
        if ((int64_t)comp[k] >= 0) {
          tblob_tensor_info ct = TBLOB_TENSOR_INFO_INIT;
          CHECK_OK(tblob_tensor_at(src, comp[k], &ct, &diag));
          row_want += k == 2 ? ct.data_length : ct.data_length / q.rows;
        }
      if (!per_row) row_want = want;
      CHECK_OK(tblob_tensor_dequant_size(src, i, TBLOB_DTYPE_F32, 1, 2, &row_bytes, &diag));
      before = main_src->my_bytes;
      CHECK_OK(tblob_tensor_dequantize(src, i, TBLOB_DTYPE_F32, 1, 2, a, (size_t)row_bytes, &diag));
      CHECK(main_src->my_bytes - before == row_want);
      CHECK(memcmp(a, (const uint8_t *)b + row_bytes, (size_t)row_bytes) == 0);
      rows_read += per_row;
    }
    free(a);
    free(b);
    ++done;
  }
  CHECK(done > 0);
  tblob_model_close(src);
  tblob_model_close(mapped);
  CHECK(c.closes == c.opens);
  printf("quantized: %s: %llu quantized tensors, each read as packed bytes + companions only; %llu of them row "
         "1 alone reading that row's share\n",
         path, (unsigned long long)done, (unsigned long long)rows_read);
  return 0;
}

static uint64_t header_len_of(const char *path) {
  uint8_t h[8];
  uint64_t n = 0;
  int k;
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  if (fread(h, 1, 8, f) != 8) n = 0;
  else
    for (k = 7; k >= 0; --k) n = n * 256 + h[k];
  fclose(f);
  return 8 + n;
}

static int test_sharded(const char *examples) {
  char index[1024], s1[1024], s2[1024];
  counters c = {0, 0, 0, 0};
  tblob_model *src = NULL, *mapped = NULL;
  tblob_diag diag = TBLOB_DIAG_INIT;
  uint64_t index_len = 0, want;
  uint8_t *ib;
  snprintf(index, sizeof(index), "%s/sharded/model.safetensors.index.json", examples);
  snprintf(s1, sizeof(s1), "%s/sharded/model-00001-of-00002.safetensors", examples);
  snprintf(s2, sizeof(s2), "%s/sharded/model-00002-of-00002.safetensors", examples);
  ib = slurp(index, &index_len);
  CHECK(ib != NULL);
  free(ib);
  want = index_len + header_len_of(s1) + header_len_of(s2);
  CHECK_OK(tblob_model_open(index, NULL, &mapped, &diag));
  CHECK_OK(open_counted(index, 1, HONEST, 0, &c, &src, &diag, NULL));
  CHECK(tblob_model_format(src) == TBLOB_FORMAT_SAFETENSORS_SHARDED);
  CHECK(tblob_model_file_count(src) == 2);
  CHECK(c.bytes == want);
  CHECK(c.opens == 3);
  if (same_table(src, mapped)) return 1;
  if (same_bytes(src, mapped)) return 1;
  tblob_model_close(src);
  CHECK(c.closes == 3);
  /* Size unknown: the index is read to its end (one short read tells it), each shard's header
   * and its last byte. */
  memset(&c, 0, sizeof(c));
  CHECK_OK(open_counted(index, 0, HONEST, 0, &c, &src, &diag, NULL));
  CHECK(c.bytes == want); /* shards are opened with their size known; the index ends at a short read */
  tblob_model_close(src);
  CHECK(c.closes == 3);
  /* A shard that is not there: TBLOB_E_NOT_FOUND, everything opened closed. */
  {
    tblob_byte_source bs;
    mem_src *s = mem_new(index, &c);
    memset(&c, 0, sizeof(c));
    c.opens = 1;
    CHECK(s != NULL);
    strcpy(s->dir, "/nonexistent");
    tblob_byte_source_init(&bs, sizeof(bs));
    mem_fill(s, &bs, 1, index);
    CHECK_STATUS(tblob_model_open_source(&bs, NULL, &src, &diag), TBLOB_E_NOT_FOUND);
    CHECK(src == NULL && c.closes == 1);
  }
  tblob_model_close(mapped);
  printf("sharded: index + 2 shard headers = %llu bytes read\n", (unsigned long long)want);
  return 0;
}

/* Lying sources: each gets its status, never a hang, and close is called exactly once. */
static int test_lies(const char *path) {
  static const struct {
    enum lie lie;
    tblob_status want;
    const char *what;
  } cases[] = {
      {SHORT, TBLOB_E_SOURCE_SHORT_READ, "short read"},
      {OVER, TBLOB_E_SOURCE_OVERREAD, "overread"},
      {CHANGED, TBLOB_E_SOURCE_CHANGED, "changed"},
      {ZERO, TBLOB_E_SOURCE_SHORT_READ, "0 bytes forever"},
      {NEGATIVE, TBLOB_E_IO, "unknown negative"},
  };
  size_t k;
  tblob_diag diag = TBLOB_DIAG_INIT;
  for (k = 0; k < sizeof(cases) / sizeof(cases[0]); ++k) {
    uint64_t nth;
    /* At open (call 1: the length, call 2: the header) and after it (call 3: a tensor read). */
    for (nth = 1; nth <= 3; ++nth) {
      counters c = {0, 0, 0, 0};
      tblob_model *m = NULL;
      tblob_status s = open_counted(path, 1, cases[k].lie, nth, &c, &m, &diag, NULL);
      if (nth <= 2) {
        if (s != cases[k].want) {
          fprintf(stderr, "%s at call %llu: %s, want %s\n", cases[k].what, (unsigned long long)nth,
                  tblob_status_name(s), tblob_status_name(cases[k].want));
          return 1;
        }
        CHECK(m == NULL);
        CHECK(strstr(diag.message, path) != NULL); /* the message names the source */
      } else {
        uint8_t b[64];
        CHECK_OK(s);
        CHECK_STATUS(tblob_tensor_read(m, 0, 0, b, 4, &diag), cases[k].want);
        CHECK(strstr(diag.message, "offset") != NULL);
        tblob_model_close(m);
      }
      CHECK(c.closes == 1);
      CHECK(c.calls <= nth); /* one call per read: nothing retried, nothing looped */
    }
  }
  /* Invalid arguments still close the source once. */
  {
    counters c = {0, 0, 0, 0};
    tblob_byte_source bs;
    tblob_open_options bad = TBLOB_OPEN_OPTIONS_INIT;
    tblob_model *m = NULL;
    mem_src *s = mem_new(path, &c);
    CHECK(s != NULL);
    bad.struct_size = 4;
    tblob_byte_source_init(&bs, sizeof(bs));
    mem_fill(s, &bs, 1, path);
    CHECK_STATUS(tblob_model_open_source(&bs, &bad, &m, &diag), TBLOB_E_INVALID_ARGUMENT);
    CHECK(c.closes == 1);
    s = mem_new(path, &c);
    mem_fill(s, &bs, 1, path);
    CHECK_STATUS(tblob_model_open_source(&bs, NULL, NULL, &diag), TBLOB_E_INVALID_ARGUMENT);
    CHECK(c.closes == 2);
    s = mem_new(path, &c);
    mem_fill(s, &bs, 1, path);
    bs.read = NULL;
    CHECK_STATUS(tblob_model_open_source(&bs, NULL, &m, &diag), TBLOB_E_INVALID_ARGUMENT);
    CHECK(c.closes == 3);
    s = mem_new(path, &c);
    mem_fill(s, &bs, 1, path);
    bs.flags = 1;
    CHECK_STATUS(tblob_model_open_source(&bs, NULL, &m, &diag), TBLOB_E_INVALID_ARGUMENT);
    CHECK(c.closes == 4);
  }
  /* A declared size shorter than the header says: TBLOB_E_HEADER_LENGTH, the header unread. */
  {
    counters c = {0, 0, 0, 0};
    tblob_byte_source bs;
    tblob_model *m = NULL;
    mem_src *s = mem_new(path, &c);
    CHECK(s != NULL);
    tblob_byte_source_init(&bs, sizeof(bs));
    mem_fill(s, &bs, 1, path);
    bs.size = 100;
    CHECK_STATUS(tblob_model_open_source(&bs, NULL, &m, &diag), TBLOB_E_HEADER_LENGTH);
    CHECK(c.bytes == 8 && c.closes == 1);
  }
  printf("lies: short, overread, changed, zero-forever, unknown negative each reported; close once\n");
  return 0;
}

#if HAVE_GGUF
/* A GGUF file with 1 MiB after its tensors: the open reads the first 64 KiB prefix only (the
 * header fits it), and the table is tblob_model_open_memory's of the same bytes. */
static int test_gguf_prefix(const char *path) {
  counters c = {0, 0, 0, 0};
  tblob_byte_source bs;
  tblob_model *src = NULL, *mem = NULL;
  tblob_diag diag = TBLOB_DIAG_INIT;
  mem_src *s = mem_new(path, &c);
  const uint64_t pad = 1u << 20;
  uint8_t *big;
  CHECK(s != NULL);
  big = (uint8_t *)calloc(1, (size_t)(s->len + pad));
  CHECK(big != NULL);
  memcpy(big, s->buf, (size_t)s->len);
  free(s->buf);
  s->buf = big;
  s->len += pad;
  CHECK_OK(tblob_model_open_memory(big, (size_t)s->len, NULL, &mem, &diag));
  tblob_byte_source_init(&bs, sizeof(bs));
  mem_fill(s, &bs, 1, path);
  CHECK_OK(tblob_model_open_source(&bs, NULL, &src, &diag));
  printf("gguf: %s + 1 MiB: %llu of %llu bytes read at open\n", path, (unsigned long long)c.bytes,
         (unsigned long long)s->len);
  CHECK(c.bytes == 65536);
  if (same_table(src, mem)) return 1;
  if (same_bytes(src, mem)) return 1;
  tblob_model_close(mem); /* first: it borrows the bytes the source frees at its close */
  tblob_model_close(src);
  CHECK(c.closes == 1);
  return 0;
}
#endif

#if HAVE_UQFF
/* A UQFF shard: the same table and values as tblob_uqff_open_memory of the same bytes (one
 * shard, no siblings). Listing reads the safetensors header (8 + JSON, header_bytes) and the
 * small side entries (format, shape, bits, group size, scalars: small_bytes), nothing of the
 * packed weights; dequantizing every row once then reads each remaining byte once. */
static int test_uqff(const char *path, uint64_t header_bytes, uint64_t small_bytes) {
  counters c = {0, 0, 0, 0};
  tblob_model *src = NULL, *mem = NULL;
  tblob_diag diag = TBLOB_DIAG_INIT;
  uint64_t len = 0;
  uint8_t *bytes = slurp(path, &len);
  const void *bufs[1];
  size_t lens[1];
  int deq = 0;
  CHECK(bytes != NULL);
  bufs[0] = bytes;
  lens[0] = (size_t)len;
  CHECK_OK(tblob_uqff_open_memory(bufs, lens, 1, NULL, &mem, &diag));
  CHECK_OK(open_counted(path, 1, HONEST, 0, &c, &src, &diag, NULL));
  CHECK(tblob_model_format(src) == TBLOB_FORMAT_UQFF);
  CHECK(c.bytes == header_bytes + small_bytes);
  if (same_table(src, mem)) return 1;
  CHECK(c.bytes == header_bytes + small_bytes); /* listing reads nothing more */
  if (same_dequant(src, mem, &deq)) return 1;
  CHECK(deq == (int)tblob_model_tensor_count(src));
  CHECK(c.bytes == len); /* each row's parts once: every byte of the shard read once in all */
  if (same_bytes(src, mem)) return 1;
  printf("%s: %llu tensors alike, %d dequantized alike, %llu of %llu bytes read at open\n", path,
         (unsigned long long)tblob_model_tensor_count(src), deq, (unsigned long long)(header_bytes + small_bytes),
         (unsigned long long)len);
  tblob_model_close(src);
  CHECK(c.closes == 1);
  /* Size unknown: also the last tensor's last byte. */
  c.bytes = 0;
  c.closes = 0;
  CHECK_OK(open_counted(path, 0, HONEST, 0, &c, &src, &diag, NULL));
  CHECK(c.bytes == header_bytes + small_bytes + 1);
  if (same_table(src, mem)) return 1;
  tblob_model_close(src);
  CHECK(c.closes == 1);
  tblob_model_close(mem);
  free(bytes);
  return 0;
}
#endif

#if HAVE_SLM1
/* tiny_btok.slm with one byte pattern changed, opened without the checksum through a source and
 * mapped. A negative scale (attn.q.weight's second scale, bytes 0x1c4-0x1c7 = -1.0f) is found
 * through the source after reading the header/directory (384) and that first scale array (8);
 * padding after a payload (byte 0x188) is not read through a source, so only the mapped open
 * refuses it (docs/slm1.md section 10). */
static int test_slm1_damaged(const char *path) {
  static const uint8_t minus_one[4] = {0x00, 0x00, 0x80, 0xbf};
  uint64_t len = 0;
  uint8_t *good = slurp(path, &len);
  int k;
  CHECK(good != NULL && len == 656);
  for (k = 0; k < 3; ++k) {
    char tmp[] = "/tmp/tblob_slm1_damagedXXXXXX";
    int fd = mkstemp(tmp);
    uint8_t *bad = (uint8_t *)malloc((size_t)len);
    tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
    tblob_diag diag = TBLOB_DIAG_INIT;
    counters c = {0, 0, 0, 0};
    tblob_model *m = NULL;
    tblob_status want_src, want_map;
    uint64_t want_bytes;
    CHECK(fd >= 0 && bad != NULL);
    memcpy(bad, good, (size_t)len);
    o.flags = TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM;
    if (k < 2) {
      memcpy(bad + 0x1c4, minus_one, 4);
      if (k == 1) o.flags |= TBLOB_OPEN_FLAG_SLM1_NO_SCALE_CHECK;
      want_src = want_map = k == 0 ? TBLOB_E_SLM1_SCALE : TBLOB_OK;
      want_bytes = k == 0 ? 384 + 8 : 384;
    } else {
      bad[0x188] = 1;
      want_src = TBLOB_OK;
      want_map = TBLOB_E_SLM1_PADDING;
      want_bytes = 384 + 24;
    }
    CHECK(write(fd, bad, (size_t)len) == (ssize_t)len);
    close(fd);
    CHECK_STATUS(open_counted_opts(tmp, 1, HONEST, 0, &c, &o, &m, &diag, NULL), want_src);
    CHECK(c.bytes == want_bytes);
    if (want_src == TBLOB_E_SLM1_SCALE) CHECK(diag.offset == 0x1c4 && diag.tensor_index == 0);
    tblob_model_close(m);
    m = NULL;
    CHECK(c.closes == c.opens);
    CHECK_STATUS(tblob_model_open(tmp, &o, &m, &diag), want_map);
    if (want_map == TBLOB_E_SLM1_SCALE) CHECK(diag.offset == 0x1c4);
    if (want_map == TBLOB_E_SLM1_PADDING) CHECK(diag.offset == 0x188);
    tblob_model_close(m);
    unlink(tmp);
    free(bad);
    printf("%s damaged (case %d): source %s after %llu bytes, mapped %s\n", path, k, tblob_status_name(want_src),
           (unsigned long long)c.bytes, tblob_status_name(want_map));
  }
  free(good);
  return 0;
}
#endif

/* TBLOB_OPEN_READ copies the file: a copy truncated to nothing after the open still reads. */
static int test_read_mode(const char *path) {
  char tmp[] = "/tmp/tblob_read_modeXXXXXX";
  int fd = mkstemp(tmp);
  uint64_t len = 0, i, n;
  uint8_t *bytes = slurp(path, &len);
  tblob_model *m = NULL, *orig = NULL;
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  tblob_diag diag = TBLOB_DIAG_INIT;
  CHECK(fd >= 0 && bytes != NULL);
  CHECK(write(fd, bytes, (size_t)len) == (ssize_t)len);
  o.mode = TBLOB_OPEN_READ;
  CHECK_OK(tblob_model_open(tmp, &o, &m, &diag));
  CHECK(ftruncate(fd, 0) == 0); /* another process truncates it */
  close(fd);
  unlink(tmp);
  CHECK_OK(tblob_model_open(path, NULL, &orig, &diag));
  n = tblob_model_tensor_count(m);
  CHECK(n > 0);
  for (i = 0; i < n; ++i) {
    const void *a, *b;
    uint64_t la, lb;
    CHECK_OK(tblob_tensor_data(m, i, &a, &la, &diag));
    CHECK_OK(tblob_tensor_data(orig, i, &b, &lb, &diag));
    CHECK(la == lb && memcmp(a, b, (size_t)la) == 0);
    if (la >= 4) { /* tblob_tensor_read works on a READ model too */
      uint8_t tail[4];
      CHECK_OK(tblob_tensor_read(m, i, la - 4, tail, 4, &diag));
      CHECK(memcmp(tail, (const uint8_t *)b + la - 4, 4) == 0);
    }
  }
  tblob_model_close(m);
  tblob_model_close(orig);
  free(bytes);
  printf("read mode: %llu tensors read whole after the file was truncated to 0 bytes\n", (unsigned long long)n);
  return 0;
}

int main(int argc, char **argv) {
  char p[1024];
  uint64_t at_open = 0;
  if (argc < 5) {
    fprintf(stderr, "usage: %s BIG.safetensors BIG_HEADER_BYTES EXAMPLES_DIR TESTS_DATA_DIR\n", argv[0]);
    return 2;
  }
  if (test_big(argv[1], strtoull(argv[2], NULL, 10))) return 1;
  snprintf(p, sizeof(p), "%s/tiny-llama/model.safetensors", argv[3]);
  if (test_lies(p)) return 1;
  if (test_read_mode(p)) return 1;
  if (compare_file(p, TBLOB_FORMAT_SAFETENSORS, &at_open)) return 1;
  CHECK(at_open == header_len_of(p));
  if (test_rows(p)) return 1;
  if (test_sharded(argv[3])) return 1;
  snprintf(p, sizeof(p), "%s/companions/ollama_per_tensor.safetensors", argv[4]);
  if (test_quantized(p)) return 1;
  snprintf(p, sizeof(p), "%s/companions/mlx_community/model.safetensors", argv[4]);
  if (test_quantized(p)) return 1;
  snprintf(p, sizeof(p), "%s/companions/mlx_community_mxfp4/model.safetensors", argv[4]);
  if (test_quantized(p)) return 1;
  snprintf(p, sizeof(p), "%s/companions/hf_fp8/model.safetensors", argv[4]);
  if (test_quantized(p)) return 1;
#if HAVE_GGUF
  {
    static const char *gguf[] = {"good_v3.gguf", "quant_types.gguf", "small_v2.gguf", "align64.gguf"};
    size_t k;
    for (k = 0; k < sizeof(gguf) / sizeof(gguf[0]); ++k) {
      snprintf(p, sizeof(p), "%s/gguf/%s", argv[4], gguf[k]);
      if (compare_file(p, TBLOB_FORMAT_GGUF, NULL)) return 1;
    }
  }
  snprintf(p, sizeof(p), "%s/gguf/good_v3.gguf", argv[4]);
  if (test_gguf_prefix(p)) return 1;
#endif
#if HAVE_SLM1
  snprintf(p, sizeof(p), "%s/slm1/tiny_btok.slm", argv[4]);
  if (compare_file(p, TBLOB_FORMAT_SLM1, NULL)) return 1;
  /* docs/slm1.md 13.1: data at 0x180 = 384 (directory 0xc0 + 3 x 64); scales 2 + 4 f32 = 24 */
  if (test_slm1_partial(p, 384, 24)) return 1;
  if (test_slm1_damaged(p)) return 1;
  snprintf(p, sizeof(p), "%s/slm1/tiny_bpe1.slm", argv[4]);
  if (compare_file(p, TBLOB_FORMAT_SLM1, NULL)) return 1;
#endif
#if HAVE_UQFF
  /* header_bytes = 8 + the JSON length; small = the sum of the entries of at most 64 bytes,
   * both from the header's data_offsets as the Python safetensors package reads them. */
  snprintf(p, sizeof(p), "%s/uqff/real/dense/afq4/afq4-0.uqff", argv[4]);
  if (test_uqff(p, 5352, 37)) return 1; /* 28 entries of 1 or 4 bytes; 88,064 bytes are not read */
  snprintf(p, sizeof(p), "%s/uqff/real/dense/fp8/fp8-0.uqff", argv[4]);
  if (test_uqff(p, 5736, 165)) return 1; /* 48 entries, the dequant_w/dequant_x/quant_scale scalars among them */
  snprintf(p, sizeof(p), "%s/uqff/real/dense/hqq4/hqq4-0.uqff", argv[4]);
  if (test_uqff(p, 10360, 201)) return 1; /* 75 entries */
  snprintf(p, sizeof(p), "%s/uqff/real/dense/q4k/q4k-0.uqff", argv[4]);
  if (test_uqff(p, 3776, 129)) return 1; /* 30 entries */
  snprintf(p, sizeof(p), "%s/uqff/real/moe/afq4/afq4-0.uqff", argv[4]);
  if (test_uqff(p, 5576, 37)) return 1; /* stacked experts; 28 entries */
#endif
  printf("ok\n");
  return 0;
}
