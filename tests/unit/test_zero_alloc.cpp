// tblob_st_scan performs zero allocations. This binary interposes malloc, calloc, realloc,
// free, the aligned allocators and every global operator new/delete, and counts calls while
// a flag is set. The library is linked as a shared object, so its calls reach these
// definitions through the dynamic linker exactly as any other process's would.
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "st_builder.h"
#include "tensorblob.h"

extern "C" {
void *__libc_malloc(size_t);
void *__libc_calloc(size_t, size_t);
void *__libc_realloc(void *, size_t);
void *__libc_memalign(size_t, size_t);
void __libc_free(void *);
}

namespace {

// Whether this build has a feature ("format:gguf"), as the library lists it: a test skips only
// for a part that is really compiled out, never for a failure that looks like one.
bool built_with(const char *feature) {
  for (const char *const *f = tblob_features(nullptr); *f; ++f)
    if (std::strcmp(*f, feature) == 0) return true;
  return false;
}
std::atomic<bool> g_counting{false};
std::atomic<size_t> g_allocs{0};
std::atomic<size_t> g_frees{0};

inline void note_alloc() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
}
inline void note_free(void *p) {
  if (p && g_counting.load(std::memory_order_relaxed)) g_frees.fetch_add(1, std::memory_order_relaxed);
}

struct Counting {
  Counting() {
    g_allocs = 0;
    g_frees = 0;
    g_counting = true;
  }
  ~Counting() { g_counting = false; }
  Counting(const Counting &) = delete;
  Counting &operator=(const Counting &) = delete;
};
}  // namespace

extern "C" {
void *malloc(size_t n) {
  note_alloc();
  return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
  note_alloc();
  return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
  note_alloc();
  return __libc_realloc(p, n);
}
void free(void *p) {
  note_free(p);
  __libc_free(p);
}
void *memalign(size_t al, size_t n) {
  note_alloc();
  return __libc_memalign(al, n);
}
void *aligned_alloc(size_t al, size_t n) {
  note_alloc();
  return __libc_memalign(al, n);
}
int posix_memalign(void **out, size_t al, size_t n) {
  note_alloc();
  void *p = __libc_memalign(al, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void *valloc(size_t n) {
  note_alloc();
  return __libc_memalign(4096, n);
}
}

void *operator new(size_t n) {
  note_alloc();
  void *p = __libc_malloc(n ? n : 1);
  if (!p) std::abort();
  return p;
}
void *operator new[](size_t n) { return operator new(n); }
void *operator new(size_t n, const std::nothrow_t &) noexcept {
  note_alloc();
  return __libc_malloc(n ? n : 1);
}
void *operator new[](size_t n, const std::nothrow_t &) noexcept { return operator new(n, std::nothrow); }
void *operator new(size_t n, std::align_val_t al) {
  note_alloc();
  void *p = __libc_memalign(static_cast<size_t>(al), n ? n : 1);
  if (!p) std::abort();
  return p;
}
void *operator new[](size_t n, std::align_val_t al) { return operator new(n, al); }
void *operator new(size_t n, std::align_val_t al, const std::nothrow_t &) noexcept {
  note_alloc();
  return __libc_memalign(static_cast<size_t>(al), n ? n : 1);
}
void *operator new[](size_t n, std::align_val_t al, const std::nothrow_t &) noexcept {
  return operator new(n, al, std::nothrow);
}
void operator delete(void *p) noexcept {
  note_free(p);
  __libc_free(p);
}
void operator delete[](void *p) noexcept { operator delete(p); }
void operator delete(void *p, size_t) noexcept { operator delete(p); }
void operator delete[](void *p, size_t) noexcept { operator delete(p); }
void operator delete(void *p, const std::nothrow_t &) noexcept { operator delete(p); }
void operator delete[](void *p, const std::nothrow_t &) noexcept { operator delete(p); }
void operator delete(void *p, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void *p, std::align_val_t) noexcept { operator delete(p); }
void operator delete(void *p, size_t, std::align_val_t) noexcept { operator delete(p); }
void operator delete[](void *p, size_t, std::align_val_t) noexcept { operator delete(p); }
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { operator delete(p); }
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { operator delete(p); }

using namespace stb;

namespace {

const size_t kTensors = 20000;

// 20,000 tensors: escaped and raw UTF-8 names, every dtype, zero-size tensors, unknown
// fields, metadata before, among and after the tensors... (only one __metadata__, placed
// in the middle), whitespace.
std::string big_file(const std::string &tail_member = std::string(), size_t extra_data = 0) {
  std::string h = "{";
  uint64_t at = 0;
  const auto &dt = dtype_table();
  for (size_t i = 0; i < kTensors; ++i) {
    if (i == kTensors / 2)
      h += "\"__metadata__\":{\"format\":\"pt\",\"k\\u00e9y\":\"v\\n\",\"emoji\":\"\\ud83d\\ude00\"}, ";
    std::string name = "model.layers." + std::to_string(i / 10) + ".w" + std::to_string(i % 10);
    if (i % 7 == 0) name += "\\u00e9\\ud83d\\ude00";
    if (i % 11 == 0) name += "\xE4\xB8\xAD";
    if (i % 13 == 0) name += "\\\"q\\\\";
    const auto &d = dt[i % dt.size()];
    const uint64_t dim0 = i % 17 == 0 ? 0 : static_cast<uint64_t>(1 + i % 3);
    const uint64_t dim1 = i % 17 == 0 ? 3 : 4;
    const uint64_t bytes = dim0 * dim1 * d.second / 8;
    const std::string shape = "[" + std::to_string(dim0) + "," + std::to_string(dim1) + "]";
    h += "\"" + name + "\": {\"dtype\":\"" + d.first + "\", \"shape\":" + shape +
         (i % 19 == 0 ? ",\"extra\":[1,{\"a\":null},-2.5e3]" : "") + ",\"data_offsets\":[" + std::to_string(at) + "," +
         std::to_string(at + bytes) + "]}";
    at += bytes;
    h += (i + 1 < kTensors || !tail_member.empty()) ? ",\n" : "";
  }
  h += tail_member + "}";
  return file(pad8(h), Z(static_cast<size_t>(at + extra_data)));
}

struct CbState {
  size_t tensors = 0, metadata = 0;
  uint64_t name_bytes = 0;
  char buf[4096];
};

int count_cb(void *user, const tblob_scan_event *e) {
  CbState *s = static_cast<CbState *>(user);
  if (e->kind == TBLOB_SCAN_TENSOR)
    ++s->tensors;
  else
    ++s->metadata;
  size_t n = 0;
  if (tblob_json_unescape(e->name, e->name_len, s->buf, sizeof(s->buf), &n, nullptr) == TBLOB_OK) s->name_bytes += n;
  return 0;
}

}  // namespace

TEST(ZeroAlloc, interposition_is_active) {
  // The counters see the library's allocations (otherwise a zero below would prove nothing).
  const std::string f = file(H({T("t", "U8", {1}, 0, 1)}), "x");
  tblob_model *m = nullptr;
  size_t allocs;
  {
    Counting c;
    tblob_model_open_memory(f.data(), f.size(), nullptr, &m, nullptr);
    tblob_model_close(m);
    allocs = g_allocs;
  }
  EXPECT_GT(allocs, 0u);
  EXPECT_EQ(g_frees.load(), allocs);
  {
    Counting c;
    volatile void *p = std::malloc(10);
    std::free(const_cast<void *>(p));
    std::string *s = new std::string(100, 'x');
    delete s;
    allocs = g_allocs;
  }
  EXPECT_GE(allocs, 2u);
}

TEST(ZeroAlloc, scan_20000_tensors) {
  const std::string f = big_file();
  const uint8_t *buf = reinterpret_cast<const uint8_t *>(f.data());
  tblob_scan_result r = TBLOB_SCAN_RESULT_INIT;
  ASSERT_EQ(tblob_st_scan(buf, f.size(), nullptr, nullptr, nullptr, nullptr, 0, &r, nullptr), TBLOB_OK);
  ASSERT_EQ(r.tensor_count, kTensors);
  ASSERT_EQ(r.metadata_count, 3u);
  std::vector<unsigned char> scratch(tblob_st_scan_scratch_bytes(r.tensor_count, r.metadata_count));
  CbState cb;
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  tblob_status s1, s2, s3, s4, s5;
  tblob_scan_result r2 = TBLOB_SCAN_RESULT_INIT, r3 = TBLOB_SCAN_RESULT_INIT;
  size_t allocs;
  {
    Counting c;
    s1 = tblob_st_scan(buf, f.size(), nullptr, nullptr, nullptr, nullptr, 0, nullptr, nullptr);
    s2 = tblob_st_scan(buf, f.size(), &o, nullptr, nullptr, scratch.data(), scratch.size(), &r2, &d);
    s3 = tblob_st_scan(buf, f.size(), &o, count_cb, &cb, scratch.data(), scratch.size(), &r3, &d);
    s4 = tblob_st_scan(buf, f.size(), nullptr, count_cb, &cb, nullptr, 0, nullptr, &d);
    o = TBLOB_OPEN_OPTIONS_COMPACT_INIT;
    s5 = tblob_st_scan(buf, f.size(), &o, count_cb, &cb, scratch.data(), scratch.size(), nullptr, &d);
    allocs = g_allocs;
  }
  EXPECT_EQ(allocs, 0u) << "tblob_st_scan allocated";
  EXPECT_EQ(s1, TBLOB_OK);
  EXPECT_EQ(s2, TBLOB_OK);
  EXPECT_EQ(s3, TBLOB_OK);
  EXPECT_EQ(s4, TBLOB_OK);
  EXPECT_EQ(s5, TBLOB_OK);
  EXPECT_EQ(r2.whole_table_checked, 1u);
  EXPECT_EQ(r3.tensor_count, kTensors);
  EXPECT_EQ(cb.tensors, 3 * kTensors);
  EXPECT_EQ(cb.metadata, 3 * 3u);
  EXPECT_GT(cb.name_bytes, 0u);
}

TEST(ZeroAlloc, scan_errors_20000_tensors) {
  // Failing scans format their diagnostics without allocating either.
  struct Case {
    std::string bytes;
    tblob_status want;
  };
  std::vector<Case> cases;
  cases.push_back({big_file("\"model.layers.0.w1\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]}"),
                   TBLOB_E_DUPLICATE_NAME});
  cases.push_back({big_file("\"late\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}"), TBLOB_E_OFFSETS});
  cases.push_back({big_file("\"late\":{\"dtype\":\"XX\",\"shape\":[0],\"data_offsets\":[0,0]}"), TBLOB_E_DTYPE});
  cases.push_back({big_file("\"late\":{\"dtype\":\"U8\",\"shape\":[1.0],\"data_offsets\":[0,0]}"), TBLOB_E_SHAPE});
  cases.push_back({big_file("\"late\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[0,0]},"), TBLOB_E_JSON});
  cases.push_back({big_file("\"late\xFF\":{}"), TBLOB_E_UTF8});
  cases.push_back({big_file(std::string(), 3), TBLOB_E_TRAILING_BYTES});
  cases.push_back({big_file("\"z\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,0]}"), TBLOB_E_TENSOR_SIZE});
  std::string trunc = big_file();
  trunc.resize(trunc.size() - 1);
  cases.push_back({trunc, TBLOB_E_TRUNCATED});
  std::vector<unsigned char> scratch(tblob_st_scan_scratch_bytes(kTensors + 2, 3));
  for (const Case &c : cases) {
    const uint8_t *buf = reinterpret_cast<const uint8_t *>(c.bytes.data());
    tblob_diag d1 = TBLOB_DIAG_INIT, d2 = TBLOB_DIAG_INIT;
    CbState cb;
    tblob_status s1, s2, s3;
    size_t allocs;
    {
      Counting cnt;
      s1 = tblob_st_scan(buf, c.bytes.size(), nullptr, count_cb, &cb, scratch.data(), scratch.size(), nullptr, &d1);
      s2 = tblob_st_scan(buf, c.bytes.size(), nullptr, nullptr, nullptr, nullptr, 0, nullptr, &d2);
      s3 = tblob_st_scan(buf, c.bytes.size(), nullptr, nullptr, nullptr, scratch.data(), 64, nullptr, &d2);
      allocs = g_allocs;
    }
    EXPECT_EQ(allocs, 0u) << tblob_status_name(c.want);
    EXPECT_EQ(s1, c.want) << d1.message;
    EXPECT_EQ(d1.status, c.want);
    EXPECT_GT(std::strlen(d1.message), 0u);
    EXPECT_NE(s2, TBLOB_E_OUT_OF_MEMORY);
    EXPECT_NE(s3, TBLOB_OK);  // an error or scratch too small
  }
}

TEST(ZeroAlloc, queries_allocate_nothing) {
  const std::string f = big_file();
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, &m, nullptr), TBLOB_OK);
  std::vector<std::string> names;
  for (uint64_t i = 0; i < tblob_model_tensor_count(m); ++i) {
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(m, i, &info, nullptr), TBLOB_OK);
    names.emplace_back(info.name, info.name_len);
  }
  size_t allocs, found = 0;
  {
    Counting c;
    for (uint64_t i = 0; i < names.size(); ++i) {
      tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
      uint64_t idx;
      const void *d;
      uint64_t n;
      tblob_diag dg = TBLOB_DIAG_INIT;
      if (tblob_tensor_find(m, names[i].data(), names[i].size(), &idx, &dg) == TBLOB_OK && idx == i &&
          tblob_tensor_at(m, idx, &info, &dg) == TBLOB_OK && tblob_tensor_data(m, idx, &d, &n, &dg) == TBLOB_OK)
        ++found;
      tblob_tensor_find(m, "missing", 7, &idx, &dg);
    }
    const char *v;
    size_t vl;
    tblob_metadata_find(m, "format", 6, &v, &vl, nullptr);
    allocs = g_allocs;
  }
  EXPECT_EQ(allocs, 0u);
  EXPECT_EQ(found, names.size());
  tblob_model_close(m);
}

namespace {
void *hook_alloc(void *opaque, size_t n) {
  ++*static_cast<size_t *>(opaque);
  return __libc_memalign(16, n);
}
void hook_free(void *, void *p, size_t) { __libc_free(p); }
}  // namespace

TEST(ZeroAlloc, open_with_a_hook_uses_only_the_hook) {
  // With an allocator hook, opening never reaches libc malloc or operator new.
  const std::string f = big_file();
  size_t hooked = 0;
  tblob_allocator a = TBLOB_ALLOCATOR_INIT;
  a.alloc = hook_alloc;
  a.free = hook_free;
  a.opaque = &hooked;
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  o.allocator = &a;
  tblob_model *m = nullptr;
  tblob_status s;
  size_t allocs;
  {
    Counting c;
    s = tblob_model_open_memory(f.data(), f.size(), &o, &m, nullptr);
    tblob_model_close(m);
    allocs = g_allocs;
  }
  EXPECT_EQ(s, TBLOB_OK);
  EXPECT_EQ(allocs, 0u);
  EXPECT_GT(hooked, 0u);
}

// The typed metadata calls read GGUF key/values and arrays where they lie: none allocates,
// however long the array (a 20,000-token vocabulary here).
namespace {
void gput32(std::string &s, uint32_t v) { for (int k = 0; k < 4; ++k) s += static_cast<char>(v >> (8 * k)); }
void gput64(std::string &s, uint64_t v) { for (int k = 0; k < 8; ++k) s += static_cast<char>(v >> (8 * k)); }
void gstr(std::string &s, const std::string &v) { gput64(s, v.size()); s += v; }
int count_strings(void *user, uint64_t, const char *, size_t len) {
  *static_cast<size_t *>(user) += len;
  return 0;
}
}  // namespace

TEST(ZeroAlloc, typed_metadata_walk) {
  constexpr uint64_t kTokens = 20000;
  std::string g = "GGUF";  // GGUF v3: 0 tensors, 3 key/values (docs/gguf.md)
  gput32(g, 3);
  gput64(g, 0);
  gput64(g, 3);
  gstr(g, "general.architecture");
  gput32(g, 8);
  gstr(g, "llama");
  gstr(g, "tokenizer.ggml.tokens");
  gput32(g, 9);
  gput32(g, 8);
  gput64(g, kTokens);
  size_t want_bytes = 0;
  for (uint64_t i = 0; i < kTokens; ++i) {
    const std::string t = "tok" + std::to_string(i);
    want_bytes += t.size();
    gstr(g, t);
  }
  gstr(g, "tokenizer.ggml.token_type");
  gput32(g, 9);
  gput32(g, 5);
  gput64(g, kTokens);
  for (uint64_t i = 0; i < kTokens; ++i) gput32(g, static_cast<uint32_t>(i % 5));
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  const tblob_status st = tblob_model_open_memory(g.data(), g.size(), nullptr, &m, &d);
  if (!built_with("format:gguf")) GTEST_SKIP() << "built without gguf";
  ASSERT_EQ(st, TBLOB_OK) << d.message;
  std::vector<int32_t> types(kTokens);
  tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT, tok = TBLOB_METADATA_VALUE_INIT;
  tblob_metadata_cursor cur = TBLOB_METADATA_CURSOR_INIT;
  size_t walked = 0, one_by_one = 0, allocs;
  uint64_t n;
  tblob_status s1, s2, s3, s4, s5 = TBLOB_OK;
  // A GGUF model's metadata table (rows and key index) is made by the first metadata call
  // (docs/api.md, "Memory a model uses"); after it, nothing allocates.
  ASSERT_EQ(tblob_metadata_count(m), 1u);
  {
    Counting c;
    n = tblob_metadata_typed_count(m);
    s1 = tblob_metadata_typed_find(m, "tokenizer.ggml.tokens", 21, &tok, &d);
    s2 = tblob_metadata_typed_at(m, 2, &v, &d);
    s3 = tblob_metadata_array_strings(m, tok.index, 0, UINT64_MAX, nullptr, count_strings, &walked, &d);
    s4 = tblob_metadata_array_get(m, v.index, 0, UINT64_MAX, types.data(), types.size() * 4, &d);
    for (uint64_t i = 0; i < kTokens && s5 == TBLOB_OK; ++i) {
      const char *s;
      size_t len;
      s5 = tblob_metadata_array_string(m, tok.index, i, &cur, &s, &len, &d);
      one_by_one += len;
    }
    allocs = g_allocs;
  }
  EXPECT_EQ(allocs, 0u) << "the typed metadata calls allocated";
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(s1, TBLOB_OK);
  EXPECT_EQ(s2, TBLOB_OK);
  EXPECT_EQ(s3, TBLOB_OK);
  EXPECT_EQ(s4, TBLOB_OK);
  EXPECT_EQ(s5, TBLOB_OK);
  EXPECT_EQ(walked, want_bytes);
  EXPECT_EQ(one_by_one, want_bytes);
  EXPECT_EQ(types[kTokens - 1], static_cast<int32_t>((kTokens - 1) % 5));
  tblob_model_close(m);
}
