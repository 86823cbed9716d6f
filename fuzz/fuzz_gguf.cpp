// fuzz_gguf: tblob_model_open_memory on GGUF input (docs/gguf.md) and the model API on the
// table it builds. Input format: fuzz_common.h (file + 3-byte trailer); the variant bits:
//   0  dequantize every tensor to f32          1  ... to bf16, and once into a buffer one byte short
//   2  f32 with the active kernel set and with the scalar set: bit-identical
//   3  also tblob_model_open (TBLOB_OPEN_READ) on the same bytes in a temp file: same status
// Per input:
//   1. open with the failing allocator: an injected failure comes back as
//      TBLOB_E_OUT_OF_MEMORY and nothing else may; no leaks, allocations within the budget;
//      a failed open leaves *out NULL and a diag whose offset lies inside the buffer;
//   2. on success: format GGUF, one file; every row has a name of at most 63 bytes found by
//      tblob_tensor_find at its own index, rank <= 4 and the limits, element_count the product
//      of its shape, a view at file_offset inside the caller's buffer, no two views
//      overlapping; every metadata
//      key is found at its own index; out-of-range indexes give TBLOB_E_RANGE;
//   3. dequantize per the variant: TBLOB_OK, TBLOB_E_NOT_DEQUANTIZABLE or TBLOB_E_UNSUPPORTED,
//      nothing else, the same status as tblob_tensor_dequant_size, whose byte count is the
//      output's; a short buffer is TBLOB_E_BUFFER_TOO_SMALL with nothing written.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "fuzz_common.h"
#include "tensorblob.h"

namespace {

constexpr uint64_t kMaxOutElems = uint64_t{1} << 20;  // 4 MiB of f32: under -malloc_limit_mb

struct View {
  uint64_t begin, end;
};

void dequant_all(const tblob_model *m, uint8_t variant) {
  const uint64_t n = tblob_model_tensor_count(m);
  for (uint64_t i = 0; i < n; ++i) {
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    FUZZ_ASSERT(tblob_tensor_at(m, i, &info, nullptr) == TBLOB_OK);
    if (info.element_count > kMaxOutElems) continue;
    const uint32_t out = variant == 1 ? TBLOB_DTYPE_BF16 : TBLOB_DTYPE_F32;
    const size_t es = out == TBLOB_DTYPE_F32 ? 4 : 2;
    const size_t bytes = static_cast<size_t>(info.element_count) * es;
    std::vector<uint8_t> a(bytes + 1, 0xA5);
    tblob_diag d = TBLOB_DIAG_INIT;
    uint64_t need = UINT64_MAX;
    const tblob_status sz = tblob_tensor_dequant_size(m, i, out, 0, TBLOB_ALL_ROWS, &need, nullptr);
    const tblob_status s = tblob_tensor_dequantize(m, i, out, 0, TBLOB_ALL_ROWS, a.data(), bytes, &d);
    FUZZ_ASSERT_MSG(sz == s, "dequant_size says %s, dequantize %s", tblob_status_name(sz), tblob_status_name(s));
    if (s == TBLOB_OK) FUZZ_ASSERT(need == bytes);
    FUZZ_ASSERT_MSG(s == TBLOB_OK || s == TBLOB_E_NOT_DEQUANTIZABLE || s == TBLOB_E_UNSUPPORTED,
                    "tensor %llu: %s (%s)", static_cast<unsigned long long>(i), tblob_status_name(s), d.message);
    fuzz::check_diag(d, s);
    FUZZ_ASSERT_MSG(a[bytes] == 0xA5, "dequantize wrote past the buffer");
    if (s != TBLOB_OK) continue;
    if (variant == 1 && bytes > 0) {
      std::vector<uint8_t> b(bytes, 0x5A);
      FUZZ_ASSERT(tblob_tensor_dequantize(m, i, out, 0, TBLOB_ALL_ROWS, b.data(), bytes - 1, &d) ==
                  TBLOB_E_BUFFER_TOO_SMALL);
      for (uint8_t c : b) FUZZ_ASSERT_MSG(c == 0x5A, "a refused dequantize wrote into the buffer");
    }
    if (variant == 2 && std::strcmp(tblob_kernel_active(), "scalar") != 0) {
      std::vector<uint8_t> b(bytes + 1, 0xA5);
      FUZZ_ASSERT(tblob_kernel_set("scalar", nullptr) == TBLOB_OK);
      const tblob_status t = tblob_tensor_dequantize(m, i, out, 0, TBLOB_ALL_ROWS, b.data(), bytes, nullptr);
      FUZZ_ASSERT(tblob_kernel_set("auto", nullptr) == TBLOB_OK);
      FUZZ_ASSERT(t == TBLOB_OK);
      FUZZ_ASSERT_MSG(std::memcmp(a.data(), b.data(), bytes) == 0, "tensor %llu: %s and scalar kernels differ",
                      static_cast<unsigned long long>(i), tblob_kernel_active());
    }
  }
}

// The typed table: one entry per key/value, arrays walked whole (strings with a cursor, one by
// one) and read back in chunks, each element inside the input.
int typed_string(void *user, uint64_t, const char *s, size_t len) {
  fuzz::consume(fuzz::touch(s, len));
  ++*static_cast<uint64_t *>(user);
  return 0;
}
void typed_all(const tblob_model *m) {
  const uint64_t n = tblob_metadata_typed_count(m);
  FUZZ_ASSERT(n >= tblob_metadata_count(m));
  for (uint64_t i = 0; i < n; ++i) {
    tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT, f = TBLOB_METADATA_VALUE_INIT;
    FUZZ_ASSERT(tblob_metadata_typed_at(m, i, &v, nullptr) == TBLOB_OK && v.index == i);
    FUZZ_ASSERT(tblob_metadata_typed_find(m, v.key, v.key_len, &f, nullptr) == TBLOB_OK && f.index <= i);
    fuzz::consume(fuzz::touch(v.data, static_cast<size_t>(v.data_bytes)));
    if (v.value_type != TBLOB_META_ARRAY) continue;
    if (v.element_type == TBLOB_META_STRING) {
      uint64_t seen = 0;
      FUZZ_ASSERT(tblob_metadata_array_strings(m, i, 0, UINT64_MAX, nullptr, typed_string, &seen, nullptr) == TBLOB_OK);
      FUZZ_ASSERT(seen == v.count);
      tblob_metadata_cursor c = TBLOB_METADATA_CURSOR_INIT;
      for (uint64_t e = 0; e < v.count && e < 4096; ++e) {
        const char *s;
        size_t len;
        FUZZ_ASSERT(tblob_metadata_array_string(m, i, e, &c, &s, &len, nullptr) == TBLOB_OK);
      }
    } else {
      unsigned char buf[512];
      const uint64_t each = v.count ? v.data_bytes / v.count : 1;
      for (uint64_t e = 0; e < v.count; e += sizeof(buf) / each) {
        const uint64_t k = v.count - e < sizeof(buf) / each ? v.count - e : sizeof(buf) / each;
        FUZZ_ASSERT(tblob_metadata_array_get(m, i, e, k, buf, sizeof(buf), nullptr) == TBLOB_OK);
      }
    }
    FUZZ_ASSERT(tblob_metadata_array_get(m, i, v.count + 1, 0, nullptr, 0, nullptr) != TBLOB_OK);
  }
}

void walk(const tblob_model *m, const uint8_t *file, size_t len, const tblob_open_options &o, uint8_t variant) {
  FUZZ_ASSERT(tblob_model_format(m) == TBLOB_FORMAT_GGUF);
  FUZZ_ASSERT(tblob_model_file_count(m) == 1);
  const uint64_t n = tblob_model_tensor_count(m);
  FUZZ_ASSERT(n <= o.max_tensors);
  std::vector<View> views;
  for (uint64_t i = 0; i < n; ++i) {
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    FUZZ_ASSERT(tblob_tensor_at(m, i, &info, nullptr) == TBLOB_OK);
    FUZZ_ASSERT(info.name_len <= 63 && info.name_len <= o.max_name_bytes);
    FUZZ_ASSERT(info.rank <= 4 && info.rank <= o.max_rank);
    // The product of the non-zero dimensions fits (docs/gguf.md); a zero one empties the tensor.
    uint64_t e = 1;
    bool zero = false;
    for (uint32_t k = 0; k < info.rank; ++k) {
      zero |= info.shape[k] == 0;
      if (info.shape[k]) FUZZ_ASSERT(!__builtin_mul_overflow(e, info.shape[k], &e));
    }
    FUZZ_ASSERT_MSG(info.element_count == (zero ? 0 : e), "element_count %llu",
                    static_cast<unsigned long long>(info.element_count));
    uint64_t found = UINT64_MAX;
    FUZZ_ASSERT(tblob_tensor_find(m, info.name, info.name_len, &found, nullptr) == TBLOB_OK && found == i);
    const void *data = nullptr;
    uint64_t dl = 0;
    FUZZ_ASSERT(tblob_tensor_data(m, i, &data, &dl, nullptr) == TBLOB_OK);
    FUZZ_ASSERT(dl == info.data_length);
    FUZZ_ASSERT(info.file_offset <= len && dl <= len - info.file_offset);
    FUZZ_ASSERT(info.file_offset >= info.data_offset);
    if (dl) FUZZ_ASSERT(static_cast<const uint8_t *>(data) == file + info.file_offset);
    fuzz::consume(fuzz::touch(data, dl));
    if (dl) views.push_back(View{info.file_offset, info.file_offset + dl});
  }
  std::sort(views.begin(), views.end(), [](const View &a, const View &b) { return a.begin < b.begin; });
  for (size_t k = 1; k < views.size(); ++k)
    FUZZ_ASSERT_MSG(views[k].begin >= views[k - 1].end, "two tensor views overlap");
  tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
  FUZZ_ASSERT(tblob_tensor_at(m, n, &info, nullptr) == TBLOB_E_RANGE);
  const uint64_t mc = tblob_metadata_count(m);
  for (uint64_t i = 0; i < mc; ++i) {
    const char *k, *v;
    size_t kn, vn;
    FUZZ_ASSERT(tblob_metadata_at(m, i, &k, &kn, &v, &vn, nullptr) == TBLOB_OK);
    FUZZ_ASSERT(kn > 0 && kn <= o.max_name_bytes);
    fuzz::consume(fuzz::touch(v, vn));
    const char *v2;
    size_t vn2;
    FUZZ_ASSERT(tblob_metadata_find(m, k, kn, &v2, &vn2, nullptr) == TBLOB_OK && v2 == v && vn2 == vn);
  }
  const char *k, *v;
  size_t kn, vn;
  FUZZ_ASSERT(tblob_metadata_at(m, mc, &k, &kn, &v, &vn, nullptr) == TBLOB_E_RANGE);
  typed_all(m);
  dequant_all(m, variant);
}

struct TempFile {
  std::string path;
  TempFile(const uint8_t *p, size_t n) {
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    path = std::string(dir) + "/fuzz_gguf_XXXXXX";
    const int fd = mkstemp(&path[0]);
    FUZZ_ASSERT(fd >= 0);
    size_t off = 0;
    while (off < n) {
      const ssize_t w = write(fd, p + off, n - off);
      FUZZ_ASSERT(w > 0);
      off += static_cast<size_t>(w);
    }
    close(fd);
  }
  ~TempFile() { unlink(path.c_str()); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fuzz::Params p = fuzz::split_input(data, size);
  const fuzz::ExactCopy file(p.file, p.file_len);
  tblob_open_options opts = fuzz::make_options(p);
  tblob_status sm;
  {
    fuzz::FailingAllocator fa(p.fail_at, file.len);
    opts.allocator = fa.hook();
    tblob_model *m = reinterpret_cast<tblob_model *>(&opts);  // must be reset to NULL
    tblob_diag d = TBLOB_DIAG_INIT;
    sm = tblob_model_open_memory(file.ptr, file.len, &opts, &m, &d);
    FUZZ_ASSERT_MSG(fuzz::is_known_status(sm), "unknown status %d", sm);
    fuzz::check_diag(d, sm, file.len);
    if (fa.failed())
      FUZZ_ASSERT_MSG(sm == TBLOB_E_OUT_OF_MEMORY, "allocation %u failed but open returned %s", p.fail_at,
                      tblob_status_name(sm));
    else
      FUZZ_ASSERT_MSG(sm != TBLOB_E_OUT_OF_MEMORY, "TBLOB_E_OUT_OF_MEMORY without a failed allocation");
    const bool gguf = file.len >= 4 && std::memcmp(file.ptr, "GGUF", 4) == 0;
    if (sm == TBLOB_OK) {
      FUZZ_ASSERT(m != nullptr);
      // A GGUF model makes its metadata table on the first metadata call, through the same
      // allocator: an injected failure there is TBLOB_E_OUT_OF_MEMORY from every metadata
      // call (count 0), and the walk, which expects the table, is skipped.
      const uint64_t mc = tblob_metadata_count(m);
      if (fa.failed()) {
        FUZZ_ASSERT(mc == 0);
        const char *k, *v;
        size_t kn, vn;
        FUZZ_ASSERT(tblob_metadata_at(m, 0, &k, &kn, &v, &vn, nullptr) == TBLOB_E_OUT_OF_MEMORY);
        FUZZ_ASSERT(tblob_metadata_find(m, "k", 1, &v, &vn, nullptr) == TBLOB_E_OUT_OF_MEMORY);
      } else if (gguf) {
        walk(m, file.ptr, file.len, opts, p.variant);
      }
      tblob_model_close(m);
    } else {
      FUZZ_ASSERT_MSG(m == nullptr, "failed open left *out set");
    }
    fa.expect_empty("after tblob_model_open_memory/tblob_model_close");
    opts.allocator = nullptr;
    if (p.variant == 3 && gguf && !fa.failed()) {
      const TempFile tmp(file.ptr, file.len);
      opts.mode = TBLOB_OPEN_READ;
      tblob_model *mp = nullptr;
      const tblob_status sp = tblob_model_open(tmp.path.c_str(), &opts, &mp, nullptr);
      FUZZ_ASSERT_MSG(sp == sm, "memory says %s, the file says %s", tblob_status_name(sm), tblob_status_name(sp));
      tblob_model_close(mp);
    }
  }
  return 0;
}
