// fuzz_open_memory: tblob_model_open_memory and the whole model API on the table it builds, and
// (trailer variant 3) the same bytes through a temporary file with tblob_model_open in
// TBLOB_OPEN_READ mode. Input format: fuzz_common.h (file + 3-byte trailer).
//
// Per input:
//   1. open with the failing allocator (fails the Nth allocation, checks sizes and leaks);
//      an injected failure must come back as TBLOB_E_OUT_OF_MEMORY, and nothing else may;
//   2. on success walk every tensor (tblob_tensor_at, tblob_tensor_find, tblob_tensor_data,
//      tblob_tensor_quant_info) and all metadata, checking the table: rows tile the data region in
//      offset order, sizes match dtype x shape, every view lies inside the buffer, lookups
//      find their rows, logical shapes and companion indexes are readable and in range;
//   3. differential: tblob_st_scan with scratch (same limits) must give the same status,
//      the same counts and the same tensors (decoded names, dtypes, shapes, offsets);
//   4. variant 3: the same through tblob_model_open (TBLOB_OPEN_READ): same status and same
//      table when the bytes are plainly one safetensors file (open_path detects other
//      containers by content); otherwise the generic checks only.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "tensorblob.h"

namespace {

uint64_t fnv(const void *p, size_t n, uint64_t h = 1469598103934665603ull) {
  const uint8_t *b = static_cast<const uint8_t *>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

uint64_t mix64(uint64_t h, uint64_t v) { return fnv(&v, sizeof(v), h); }

// Order-independent digest of one tensor row: decoded name, dtype, shape, data range.
uint64_t row_hash(const char *name, size_t name_len, uint32_t dtype, const uint64_t *shape,
                  uint32_t rank, uint64_t begin, uint64_t end) {
  uint64_t h = fnv(name, name_len);
  h = mix64(h, name_len);
  h = mix64(h, dtype);
  h = mix64(h, rank);
  for (uint32_t i = 0; i < rank; ++i) h = mix64(h, shape[i]);
  h = mix64(h, begin);
  h = mix64(h, end);
  // Finalise so that XOR-summing rows does not cancel structure.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h;
}

// ---- the scanner's view, for the differential check ----------------------------------

struct ScanView {
  uint64_t tensors = 0, metadata = 0;
  uint64_t rows = 0;  // XOR of row_hash
  std::string scratch_name;
};

int scan_cb(void *user, const tblob_scan_event *e) {
  ScanView &v = *static_cast<ScanView *>(user);
  if (e->kind != TBLOB_SCAN_TENSOR) {
    ++v.metadata;
    return 0;
  }
  ++v.tensors;
  size_t n = 0;
  tblob_json_unescape(e->name, e->name_len, nullptr, 0, &n, nullptr);
  v.scratch_name.resize(n);
  size_t got = 0;
  const tblob_status s =
      tblob_json_unescape(e->name, e->name_len, n ? &v.scratch_name[0] : nullptr, n, &got, nullptr);
  FUZZ_ASSERT(s == TBLOB_OK && got == n);
  uint64_t dims_buf[1] = {0};
  const uint64_t *dims = e->shape;
  std::string parsed;
  if (e->rank > 0 && !dims) {
    // Rank above the inline capacity: parse the shape text.
    parsed.assign(e->shape_json, e->shape_json_len);
    uint64_t *d = static_cast<uint64_t *>(std::malloc(sizeof(uint64_t) * e->rank));
    FUZZ_ASSERT(d != nullptr);
    const char *p = parsed.c_str() + 1, *end = parsed.c_str() + parsed.size();
    for (uint32_t i = 0; i < e->rank; ++i) {
      while (p < end && (*p < '0' || *p > '9')) ++p;
      uint64_t x = 0;
      while (p < end && *p >= '0' && *p <= '9') x = x * 10 + static_cast<uint64_t>(*p++ - '0');
      d[i] = x;
    }
    v.rows ^= row_hash(v.scratch_name.data(), n, e->dtype, d, e->rank, e->data_begin, e->data_end);
    std::free(d);
    return 0;
  }
  v.rows ^= row_hash(v.scratch_name.data(), n, e->dtype, dims ? dims : dims_buf, e->rank,
                     e->data_begin, e->data_end);
  return 0;
}

tblob_status scan_with_scratch(const uint8_t *buf, size_t len, const tblob_open_options &opts,
                               ScanView *view) {
  tblob_scan_result r = TBLOB_SCAN_RESULT_INIT;
  tblob_status s = tblob_st_scan(buf, len, &opts, nullptr, nullptr, nullptr, 0, &r, nullptr);
  const size_t need = tblob_st_scan_scratch_bytes(r.tensor_count, r.metadata_count);
  FUZZ_ASSERT(need != SIZE_MAX);
  void *scratch = std::malloc(need);
  FUZZ_ASSERT(scratch != nullptr);
  s = tblob_st_scan(buf, len, &opts, scan_cb, view, scratch, need, &r, nullptr);
  std::free(scratch);
  return s;
}

// ---- walking a model -------------------------------------------------------------------

struct Walk {
  uint64_t tensors = 0, metadata = 0;
  uint64_t rows = 0;
};

// `file` is the input; `in_place` when the model borrows that very buffer.
Walk walk_model(const tblob_model *m, const uint8_t *file, size_t len, bool in_place,
                const tblob_open_options &opts) {
  Walk w;
  FUZZ_ASSERT(tblob_model_format(m) == TBLOB_FORMAT_SAFETENSORS);
  FUZZ_ASSERT(tblob_model_file_count(m) == 1);
  const char *path = nullptr;
  size_t path_len = 0;
  FUZZ_ASSERT(tblob_model_file_path(m, 0, &path, &path_len, nullptr) == TBLOB_OK && path != nullptr);
  if (in_place) FUZZ_ASSERT(path_len == 0);
  fuzz::consume(fuzz::touch(path, path_len));
  FUZZ_ASSERT(tblob_model_file_path(m, 1, &path, &path_len, nullptr) == TBLOB_E_RANGE);

  FUZZ_ASSERT(len >= 8);
  uint64_t n_hdr = 0;
  for (int i = 7; i >= 0; --i) n_hdr = (n_hdr << 8) | file[i];
  FUZZ_ASSERT(n_hdr <= len - 8);
  const uint64_t data_offset = 8 + n_hdr;
  const uint64_t data_bytes = len - data_offset;

  const uint64_t count = tblob_model_tensor_count(m);
  w.tensors = count;
  FUZZ_ASSERT(n_hdr <= opts.max_header_bytes);
  FUZZ_ASSERT_MSG(count <= opts.max_tensors, "%llu tensors passed max_tensors %llu",
                  static_cast<unsigned long long>(count),
                  static_cast<unsigned long long>(opts.max_tensors));
  uint64_t cursor = 0;
  for (uint64_t i = 0; i < count; ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    tblob_diag d = TBLOB_DIAG_INIT;
    tblob_status s = tblob_tensor_at(m, i, &t, &d);
    FUZZ_ASSERT_MSG(s == TBLOB_OK, "tblob_tensor_at(%llu): %s", static_cast<unsigned long long>(i),
                    tblob_status_name(s));
    const uint32_t bits = tblob_dtype_bits(t.dtype);
    FUZZ_ASSERT_MSG(tblob_dtype_name(t.dtype) != nullptr && bits != 0, "row %llu dtype %u",
                    static_cast<unsigned long long>(i), t.dtype);
    FUZZ_ASSERT(t.name != nullptr || t.name_len == 0);
    fuzz::consume(fuzz::touch(t.name, t.name_len));
    FUZZ_ASSERT(t.rank == 0 || t.shape != nullptr);
    FUZZ_ASSERT_MSG(t.rank <= opts.max_rank, "rank %u passed max_rank %u", t.rank, opts.max_rank);
    FUZZ_ASSERT_MSG(t.name_len <= opts.max_name_bytes, "a %zu-byte name passed max_name_bytes %llu",
                    t.name_len, static_cast<unsigned long long>(opts.max_name_bytes));
    uint64_t elements = 1;
    for (uint32_t k = 0; k < t.rank; ++k) {
      FUZZ_ASSERT_MSG(!__builtin_mul_overflow(elements, t.shape[k], &elements),
                      "row %llu: element count overflows", static_cast<unsigned long long>(i));
    }
    FUZZ_ASSERT_MSG(elements == t.element_count, "row %llu: element_count %llu, shape gives %llu",
                    static_cast<unsigned long long>(i), static_cast<unsigned long long>(t.element_count),
                    static_cast<unsigned long long>(elements));
    uint64_t total_bits = 0;
    FUZZ_ASSERT_MSG(!__builtin_mul_overflow(elements, uint64_t{bits}, &total_bits),
                    "row %llu: bit count overflows", static_cast<unsigned long long>(i));
    FUZZ_ASSERT(total_bits % 8 == 0);
    FUZZ_ASSERT_MSG(total_bits / 8 == t.data_length, "row %llu: %llu bytes for %llu x %u bits",
                    static_cast<unsigned long long>(i), static_cast<unsigned long long>(t.data_length),
                    static_cast<unsigned long long>(elements), bits);
    FUZZ_ASSERT_MSG(t.data_offset == cursor, "row %llu starts at %llu, previous ended at %llu",
                    static_cast<unsigned long long>(i), static_cast<unsigned long long>(t.data_offset),
                    static_cast<unsigned long long>(cursor));
    cursor += t.data_length;
    FUZZ_ASSERT(cursor <= data_bytes);
    FUZZ_ASSERT(t.file_index == 0);
    FUZZ_ASSERT(t.file_offset == data_offset + t.data_offset);

    uint64_t idx = UINT64_MAX;
    s = tblob_tensor_find(m, t.name, t.name_len, &idx, &d);
    FUZZ_ASSERT_MSG(s == TBLOB_OK && idx == i, "tblob_tensor_find(row %llu) -> %s, %llu",
                    static_cast<unsigned long long>(i), tblob_status_name(s),
                    static_cast<unsigned long long>(idx));

    const void *data = nullptr;
    uint64_t dlen = 0;
    s = tblob_tensor_data(m, i, &data, &dlen, &d);
    FUZZ_ASSERT_MSG(s == TBLOB_OK, "tblob_tensor_data(%llu): %s", static_cast<unsigned long long>(i),
                    tblob_status_name(s));
    FUZZ_ASSERT(dlen == t.data_length);
    FUZZ_ASSERT(data != nullptr || dlen == 0);
    if (dlen) {
      if (in_place)
        FUZZ_ASSERT_MSG(data == file + t.file_offset, "row %llu view is not at its file offset",
                        static_cast<unsigned long long>(i));
      else
        FUZZ_ASSERT_MSG(std::memcmp(data, file + t.file_offset, dlen) == 0,
                        "row %llu bytes differ from the file", static_cast<unsigned long long>(i));
      fuzz::consume(fuzz::touch(data, dlen));
    }
    // The logical view (companions resolved at open, the quantization descriptor): every
    // pointer readable, every index in range.
    FUZZ_ASSERT(t.logical_rank == 0 || t.logical_shape != nullptr);
    if (t.logical_rank) fuzz::consume(fuzz::touch(t.logical_shape, sizeof(uint64_t) * t.logical_rank));
    if (!(t.quant_flags & TBLOB_TENSOR_QUANTIZED)) {
      FUZZ_ASSERT_MSG(t.logical_rank == t.rank && t.logical_elements == t.element_count,
                      "row %llu: not quantized, but the logical shape differs",
                      static_cast<unsigned long long>(i));
    }
    tblob_quant_info q = TBLOB_QUANT_INFO_INIT;
    s = tblob_tensor_quant_info(m, i, &q, &d);
    FUZZ_ASSERT_MSG(s == TBLOB_OK, "tblob_tensor_quant_info(%llu): %s", static_cast<unsigned long long>(i),
                    tblob_status_name(s));
    FUZZ_ASSERT(fuzz::is_known_status(q.status));
    FUZZ_ASSERT(q.rank == 0 || q.shape != nullptr);
    if (q.rank) fuzz::consume(fuzz::touch(q.shape, sizeof(uint64_t) * q.rank));
    const int64_t idx_of[4] = {q.weight_index, q.scale_index, q.bias_index, q.global_scale_index};
    for (int64_t k : idx_of)
      FUZZ_ASSERT_MSG(k >= -1 && k < static_cast<int64_t>(count), "row %llu: companion index %lld",
                      static_cast<unsigned long long>(i), static_cast<long long>(k));
    w.rows ^= row_hash(t.name, t.name_len, t.dtype, t.shape, t.rank, t.data_offset,
                       t.data_offset + t.data_length);
  }
  FUZZ_ASSERT_MSG(cursor == data_bytes, "rows cover %llu of %llu data bytes",
                  static_cast<unsigned long long>(cursor), static_cast<unsigned long long>(data_bytes));
  {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    FUZZ_ASSERT(tblob_tensor_at(m, count, &t, nullptr) == TBLOB_E_RANGE);
    const void *data;
    uint64_t dlen;
    FUZZ_ASSERT(tblob_tensor_data(m, count, &data, &dlen, nullptr) == TBLOB_E_RANGE);
    // 0xFF never occurs in UTF-8, so no tensor has this name.
    uint64_t idx;
    FUZZ_ASSERT(tblob_tensor_find(m, "\xff", 1, &idx, nullptr) == TBLOB_E_NOT_FOUND);
  }

  const uint64_t nm = tblob_metadata_count(m);
  w.metadata = nm;
  for (uint64_t i = 0; i < nm; ++i) {
    const char *k = nullptr, *v = nullptr;
    size_t kl = 0, vl = 0;
    FUZZ_ASSERT(tblob_metadata_at(m, i, &k, &kl, &v, &vl, nullptr) == TBLOB_OK);
    FUZZ_ASSERT((k || !kl) && (v || !vl));
    FUZZ_ASSERT_MSG(kl <= opts.max_name_bytes, "a %zu-byte metadata key passed max_name_bytes %llu",
                    kl, static_cast<unsigned long long>(opts.max_name_bytes));
    fuzz::consume(fuzz::touch(k, kl) ^ fuzz::touch(v, vl));
    const char *v2 = nullptr;
    size_t vl2 = 0;
    FUZZ_ASSERT_MSG(tblob_metadata_find(m, k, kl, &v2, &vl2, nullptr) == TBLOB_OK && v2 == v && vl2 == vl,
                    "metadata key %llu not found by tblob_metadata_find",
                    static_cast<unsigned long long>(i));
  }
  const char *k, *v;
  size_t kl, vl;
  FUZZ_ASSERT(tblob_metadata_at(m, nm, &k, &kl, &v, &vl, nullptr) == TBLOB_E_RANGE);
  return w;
}

// ---- the temporary file for tblob_model_open -------------------------------------------
// A fresh private directory per use (in /dev/shm when possible), removed right after, so a
// process killed by libFuzzer (merge, crash, timeout) leaves at most one behind. Shard
// names in an index-like input resolve inside it, where only input.safetensors exists.

class TempFile {
 public:
  TempFile(const uint8_t *p, size_t n) {
    const char *bases[] = {"/dev/shm", std::getenv("TMPDIR"), "/tmp"};
    for (const char *base : bases) {
      if (!base || !*base) continue;
      std::string tmpl = std::string(base) + "/tblob-fuzz-XXXXXX";
      if (::mkdtemp(&tmpl[0])) {
        dir_ = tmpl;
        break;
      }
    }
    FUZZ_ASSERT_MSG(!dir_.empty(), "cannot create a temporary directory");
    path_ = dir_ + "/input.safetensors";
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FUZZ_ASSERT(fd >= 0);
    size_t done = 0;
    while (done < n) {
      const ssize_t w = ::write(fd, p + done, n - done);
      FUZZ_ASSERT(w > 0);
      done += static_cast<size_t>(w);
    }
    ::close(fd);
  }
  ~TempFile() {
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  const char *path() const { return path_.c_str(); }

 private:
  std::string dir_, path_;
};

bool contains(const uint8_t *p, size_t n, const char *lit) {
  const size_t k = std::strlen(lit);
  for (size_t i = 0; i + k <= n; ++i)
    if (std::memcmp(p + i, lit, k) == 0) return true;
  return false;
}

// A JSON object (after whitespace) mentioning `key` in its first 4 KiB.
bool json_object_with(const uint8_t *p, size_t n, const char *key) {
  if (n > 4096) n = 4096;
  size_t i = 0;
  while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) ++i;
  return i < n && p[i] == '{' && contains(p + i, n - i, key);
}

// tblob_model_open detects the container by content (lib/formats/open.cpp: Ollama manifests,
// UQFF shards, SLM1, shard indexes, ...), so its status is compared with tblob_model_open_memory's
// only for bytes that are plainly one safetensors file to every detector: a header length
// that fits, a header that opens a JSON object, and neither an Ollama manifest key nor the
// UQFF entry names. Anything else still gets every other check.
bool plainly_safetensors(const uint8_t *p, size_t n) {
  if (n < 10) return false;
  uint64_t h = 0;
  for (int i = 7; i >= 0; --i) h = (h << 8) | p[i];
  if (h < 2 || h > n - 8 || h > TBLOB_SAFETENSORS_MAX_HEADER) return false;
  size_t i = 8;
  while (i < 8 + h && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) ++i;
  if (i >= 8 + h || p[i] != '{') return false;
  if (json_object_with(p, n, "\"schemaVersion\"")) return false;
  const size_t hl = static_cast<size_t>(h);
  return !contains(p + 8, hl, "\"uqff.version.") && !contains(p + 8, hl, ".weight.format\"");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fuzz::Params p = fuzz::split_input(data, size);
  const fuzz::ExactCopy file(p.file, p.file_len);
  tblob_open_options opts = fuzz::make_options(p);

  // 1-2. Memory.
  const bool gguf = file.len >= 4 && std::memcmp(file.ptr, "GGUF", 4) == 0;
  tblob_status sm;
  Walk wm;
  bool mem_failed;
  {
    fuzz::FailingAllocator fa(p.fail_at, file.len);
    opts.allocator = fa.hook();
    tblob_model *m = reinterpret_cast<tblob_model *>(&opts);  // must be reset to NULL
    tblob_diag d = TBLOB_DIAG_INIT;
    sm = tblob_model_open_memory(file.ptr, file.len, &opts, &m, &d);
    FUZZ_ASSERT_MSG(fuzz::is_known_status(sm), "unknown status %d", sm);
    fuzz::check_diag(d, sm, file.len);
    mem_failed = fa.failed();
    if (mem_failed)
      FUZZ_ASSERT_MSG(sm == TBLOB_E_OUT_OF_MEMORY, "allocation %u failed but open returned %s",
                      p.fail_at, tblob_status_name(sm));
    else
      FUZZ_ASSERT_MSG(sm != TBLOB_E_OUT_OF_MEMORY, "TBLOB_E_OUT_OF_MEMORY without a failed allocation");
    if (sm == TBLOB_OK) {
      FUZZ_ASSERT(m != nullptr);
      if (!gguf) wm = walk_model(m, file.ptr, file.len, true, opts);  // GGUF: fuzz_gguf walks it
      tblob_model_close(m);
    } else {
      FUZZ_ASSERT_MSG(m == nullptr, "failed open left *out set");
    }
    fa.expect_empty("after tblob_model_open_memory/tblob_model_close");
    opts.allocator = nullptr;
  }

  // 3. The scanner agrees (on safetensors input: the GGUF magic opens the GGUF reader, and a
  // build without GGUF or SLM1 names their magic TBLOB_E_FEATURE_DISABLED).
  if (!mem_failed && !gguf && sm != TBLOB_E_FEATURE_DISABLED) {
    ScanView v;
    const tblob_status ss = scan_with_scratch(file.ptr, file.len, opts, &v);
    FUZZ_ASSERT_MSG(ss == sm, "tblob_model_open_memory says %s, tblob_st_scan with scratch says %s",
                    tblob_status_name(sm), tblob_status_name(ss));
    if (sm == TBLOB_OK) {
      FUZZ_ASSERT(v.tensors == wm.tensors && v.metadata == wm.metadata);
      FUZZ_ASSERT_MSG(v.rows == wm.rows, "the table differs from the scanner's events");
    }
  }

  // 4. The same bytes through a file, read mode.
  if (p.variant == 3) {
    const TempFile tmp(file.ptr, file.len);
    fuzz::FailingAllocator fa(p.fail_at, file.len);
    opts.allocator = fa.hook();
    opts.mode = TBLOB_OPEN_READ;
    tblob_model *m = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    const tblob_status sp = tblob_model_open(tmp.path(), &opts, &m, &d);
    FUZZ_ASSERT_MSG(fuzz::is_known_status(sp), "unknown status %d", sp);
    const bool other = !plainly_safetensors(file.ptr, file.len);
    fuzz::check_diag(d, sp, other ? SIZE_MAX : file.len);
    if (fa.failed())
      FUZZ_ASSERT_MSG(sp == TBLOB_E_OUT_OF_MEMORY, "allocation %u failed but open_path returned %s",
                      p.fail_at, tblob_status_name(sp));
    else
      FUZZ_ASSERT_MSG(sp != TBLOB_E_OUT_OF_MEMORY, "TBLOB_E_OUT_OF_MEMORY without a failed allocation");
    if (!fa.failed() && !mem_failed && !other)
      FUZZ_ASSERT_MSG(sp == sm, "tblob_model_open_memory says %s, tblob_model_open (read) says %s",
                      tblob_status_name(sm), tblob_status_name(sp));
    if (sp == TBLOB_OK) {
      FUZZ_ASSERT(m != nullptr);
      if (!other) {
        const Walk wp = walk_model(m, file.ptr, file.len, false, opts);
        if (!mem_failed) FUZZ_ASSERT(wp.rows == wm.rows && wp.metadata == wm.metadata);
      } else {
        // Another container (its shards or blobs resolved): walk what is there.
        const uint64_t n = tblob_model_tensor_count(m);
        for (uint64_t i = 0; i < n; ++i) {
          tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
          FUZZ_ASSERT(tblob_tensor_at(m, i, &t, nullptr) == TBLOB_OK);
          const void *dp;
          uint64_t dl;
          FUZZ_ASSERT(tblob_tensor_data(m, i, &dp, &dl, nullptr) == TBLOB_OK);
          fuzz::consume(fuzz::touch(dp, dl) ^ fuzz::touch(t.name, t.name_len));
        }
      }
      tblob_model_close(m);
    } else {
      FUZZ_ASSERT_MSG(m == nullptr, "failed open_path left *out set");
    }
    fa.expect_empty("after tblob_model_open/tblob_model_close");
  }
  return 0;
}
