// tblob_gguf_writer_*: what it writes opens through the library with the values it was given
// (every metadata type, string arrays, alignments 1/8/32/64, empty and rank-0 tensors), a path
// writer and a callback writer give the same bytes, every misuse has its status and changes
// nothing, nothing is left under the final name without finish, and its memory does not grow
// with the tensor data. (Bytes against gguf-py's GGUFWriter: writer_oracle.py.)
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tensorblob.h"

namespace {

std::string temp_dir() {
  const char *t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t ? t : "/tmp") + "/gguf_writer_XXXXXX";
  std::vector<char> b(tmpl.begin(), tmpl.end());
  b.push_back('\0');
  if (!::mkdtemp(b.data())) std::abort();
  return b.data();
}

std::string read_file(const std::string &p) {
  std::string s;
  if (FILE *f = std::fopen(p.c_str(), "rb")) {
    char buf[65536];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) s.append(buf, n);
    std::fclose(f);
  }
  return s;
}

bool exists(const std::string &p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

std::vector<std::string> dir_entries(const std::string &d) {
  std::vector<std::string> out;
  if (DIR *dd = ::opendir(d.c_str())) {
    while (dirent *e = ::readdir(dd))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) out.push_back(e->d_name);
    ::closedir(dd);
  }
  return out;
}

tblob_gguf_value scalar(uint32_t type, const void *p) { return tblob_gguf_value{type, 0, p, 0}; }
tblob_gguf_value str(const char *s) { return tblob_gguf_value{TBLOB_META_STRING, 0, s, std::strlen(s)}; }
tblob_gguf_value arr(uint32_t et, const void *p, uint64_t n) { return tblob_gguf_value{TBLOB_META_ARRAY, et, p, n}; }

// Deterministic bytes for tensor k.
std::string pattern(size_t n, unsigned k) {
  std::string s(n, '\0');
  uint32_t x = 0x9e3779b9u * (k + 1);
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    s[i] = static_cast<char>(x);
  }
  return s;
}

struct TensorCase {
  std::string name;
  std::vector<uint64_t> shape;  // outermost first
  uint32_t type;
  uint64_t bytes;               // what ggml's type table gives (hand-checked)
};

const std::vector<TensorCase> &tensor_cases() {
  static const std::vector<TensorCase> k = {
      {"f32", {3, 5}, 0, 60},         {"f16", {4, 8}, 1, 64},         {"empty", {0, 4}, 0, 0},
      {"q8_0", {2, 64}, 8, 2 * 2 * 34}, {"q4_k", {1, 256}, 12, 144}, {"rank0", {}, 0, 4},
      {"empty_q4_0", {0, 32}, 2, 0},  {"i8", {7}, 24, 7},             {"bf16", {1, 1, 2, 16}, 30, 64},
  };
  return k;
}

// The content every round trip writes: returns the status of the first failing call.
tblob_status write_content(tblob_gguf_writer *w, uint32_t alignment, size_t chunk, tblob_diag *d) {
  const uint8_t u8 = 200;
  const int8_t i8 = -100;
  const uint16_t u16 = 60000;
  const int16_t i16 = -30000;
  const uint32_t u32 = 4000000000u;
  const int32_t i32 = -2000000000;
  const float f32 = 0.1f;
  const uint8_t bt = 7;  // any non-zero byte is true; written as 1
  const uint64_t u64 = (uint64_t{1} << 63) + 5;
  const int64_t i64 = -(int64_t{1} << 62);
  const double f64 = 1e-300;
  const uint8_t au8[] = {0, 1, 255};
  const int8_t ai8[] = {-128, 0, 127};
  const uint16_t au16[] = {1, 65535};
  const int16_t ai16[] = {-32768, 32767};
  const uint32_t au32[] = {7, 0xFFFFFFFFu};
  const int32_t ai32[] = {-5, 5};
  const float af32[] = {0.5f, -1.25f};
  const uint8_t abool[] = {1, 0, 9};
  const uint64_t au64[] = {~uint64_t{0}};
  const int64_t ai64[] = {INT64_MIN, INT64_MAX};
  const double af64[] = {1.5, -2.0};
  const tblob_gguf_value strs[] = {str(""), str("a"), str("\xc3\xbcnicode"), str("tok")};
  const std::vector<std::pair<const char *, tblob_gguf_value>> kvs = {
      {"general.architecture", str("test")},
      {"t.u8", scalar(TBLOB_META_U8, &u8)},     {"t.i8", scalar(TBLOB_META_I8, &i8)},
      {"t.u16", scalar(TBLOB_META_U16, &u16)},  {"t.i16", scalar(TBLOB_META_I16, &i16)},
      {"t.u32", scalar(TBLOB_META_U32, &u32)},  {"t.i32", scalar(TBLOB_META_I32, &i32)},
      {"t.f32", scalar(TBLOB_META_F32, &f32)},  {"t.bool", scalar(TBLOB_META_BOOL, &bt)},
      {"t.str", str("h\xc3\xa9llo")},             {"t.empty", str("")},
      {"t.u64", scalar(TBLOB_META_U64, &u64)},  {"t.i64", scalar(TBLOB_META_I64, &i64)},
      {"t.f64", scalar(TBLOB_META_F64, &f64)},
      {"a.u8", arr(TBLOB_META_U8, au8, 3)},     {"a.i8", arr(TBLOB_META_I8, ai8, 3)},
      {"a.u16", arr(TBLOB_META_U16, au16, 2)},  {"a.i16", arr(TBLOB_META_I16, ai16, 2)},
      {"a.u32", arr(TBLOB_META_U32, au32, 2)},  {"a.i32", arr(TBLOB_META_I32, ai32, 2)},
      {"a.f32", arr(TBLOB_META_F32, af32, 2)},  {"a.bool", arr(TBLOB_META_BOOL, abool, 3)},
      {"a.str", arr(TBLOB_META_STRING, strs, 4)}, {"a.u64", arr(TBLOB_META_U64, au64, 1)},
      {"a.i64", arr(TBLOB_META_I64, ai64, 2)},  {"a.f64", arr(TBLOB_META_F64, af64, 2)},
      {"a.empty", arr(TBLOB_META_I32, nullptr, 0)},
  };
  tblob_status st;
  if (alignment) {
    const tblob_gguf_value a = scalar(TBLOB_META_U32, &alignment);
    if ((st = tblob_gguf_writer_add_value(w, "general.alignment", 17, &a, d)) != TBLOB_OK) return st;
  }
  for (const auto &kv : kvs)
    if ((st = tblob_gguf_writer_add_value(w, kv.first, std::strlen(kv.first), &kv.second, d)) != TBLOB_OK) return st;
  for (const TensorCase &t : tensor_cases()) {
    uint64_t bytes = 0;
    if ((st = tblob_gguf_writer_add_tensor(w, t.name.data(), t.name.size(), t.shape.data(),
                                           static_cast<uint32_t>(t.shape.size()), t.type, &bytes, d)) != TBLOB_OK)
      return st;
    if (bytes != t.bytes) return TBLOB_E_INVALID_ARGUMENT;
  }
  for (size_t i = 0; i < tensor_cases().size(); ++i) {
    const std::string data = pattern(tensor_cases()[i].bytes, static_cast<unsigned>(i));
    size_t at = 0;
    do {
      const size_t k = chunk && data.size() - at > chunk ? chunk : data.size() - at;
      if ((st = tblob_gguf_writer_write(w, i, data.data() + at, k, d)) != TBLOB_OK) return st;
      at += k;
    } while (at < data.size());
  }
  return TBLOB_OK;
}

struct GgufWriter : ::testing::Test {
  std::string dir = temp_dir();
  tblob_diag d = TBLOB_DIAG_INIT;
  std::string path(const char *n) const { return dir + "/" + n; }
  tblob_gguf_writer *open(const std::string &p, uint32_t flags = 0) {
    tblob_gguf_writer_options o = TBLOB_GGUF_WRITER_OPTIONS_INIT;
    o.flags = flags;
    tblob_gguf_writer *w = nullptr;
    EXPECT_EQ(tblob_gguf_writer_open(p.c_str(), &o, &w, &d), TBLOB_OK) << d.message;
    return w;
  }
};

void expect_typed(const tblob_model *m, const char *key, uint32_t type, uint64_t u, int64_t i, double f) {
  tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT;
  ASSERT_EQ(tblob_metadata_typed_find(m, key, std::strlen(key), &v, nullptr), TBLOB_OK) << key;
  EXPECT_EQ(v.value_type, type) << key;
  EXPECT_EQ(v.uint_value, u) << key;
  EXPECT_EQ(v.int_value, i) << key;
  EXPECT_EQ(v.float_value, f) << key;
}

TEST_F(GgufWriter, RoundTripThroughTheReader) {
  size_t files = 0;
  for (uint32_t alignment : {0u, 1u, 8u, 32u, 64u}) {
    SCOPED_TRACE("alignment " + std::to_string(alignment));
    const std::string p = path(("a" + std::to_string(alignment) + ".gguf").c_str());
    tblob_gguf_writer *w = open(p);
    ASSERT_EQ(write_content(w, alignment, 5, &d), TBLOB_OK) << d.message;
    uint64_t total = 0;
    ASSERT_EQ(tblob_gguf_writer_finish(w, &total, &d), TBLOB_OK) << d.message;
    tblob_gguf_writer_close(w);
    EXPECT_EQ(total, read_file(p).size());
    EXPECT_EQ(dir_entries(dir).size(), ++files);  // no temporary file left
    tblob_model *m = nullptr;
    ASSERT_EQ(tblob_model_open(p.c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
    const uint32_t align = alignment ? alignment : 32;
    ASSERT_EQ(tblob_model_tensor_count(m), tensor_cases().size());
    for (size_t i = 0; i < tensor_cases().size(); ++i) {
      const TensorCase &t = tensor_cases()[i];
      tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
      ASSERT_EQ(tblob_tensor_at(m, i, &ti, &d), TBLOB_OK);
      EXPECT_EQ(std::string(ti.name, ti.name_len), t.name);
      EXPECT_EQ(std::vector<uint64_t>(ti.shape, ti.shape + ti.rank), t.shape) << t.name;
      EXPECT_EQ(ti.data_length, t.bytes);
      EXPECT_EQ(ti.file_offset % align, 0u) << t.name;
      const void *data = nullptr;
      uint64_t len = 0;
      ASSERT_EQ(tblob_tensor_data(m, i, &data, &len, &d), TBLOB_OK);
      EXPECT_EQ(std::string(static_cast<const char *>(data), len), pattern(t.bytes, static_cast<unsigned>(i))) << t.name;
    }
    // Every key/value, in order, with its type and value.
    const char *keys[] = {"general.architecture", "t.u8", "t.i8", "t.u16", "t.i16", "t.u32", "t.i32", "t.f32",
                          "t.bool", "t.str", "t.empty", "t.u64", "t.i64", "t.f64", "a.u8", "a.i8", "a.u16",
                          "a.i16", "a.u32", "a.i32", "a.f32", "a.bool", "a.str", "a.u64", "a.i64", "a.f64",
                          "a.empty"};
    const uint64_t first = alignment ? 1 : 0;
    ASSERT_EQ(tblob_metadata_typed_count(m), first + 27);
    for (uint64_t k = 0; k < 27; ++k) {
      tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT;
      ASSERT_EQ(tblob_metadata_typed_at(m, first + k, &v, &d), TBLOB_OK);
      EXPECT_EQ(std::string(v.key, v.key_len), keys[k]);
    }
    if (alignment) expect_typed(m, "general.alignment", TBLOB_META_U32, alignment, 0, 0);
    expect_typed(m, "t.u8", TBLOB_META_U8, 200, 0, 0);
    expect_typed(m, "t.i8", TBLOB_META_I8, 0, -100, 0);
    expect_typed(m, "t.u16", TBLOB_META_U16, 60000, 0, 0);
    expect_typed(m, "t.i16", TBLOB_META_I16, 0, -30000, 0);
    expect_typed(m, "t.u32", TBLOB_META_U32, 4000000000u, 0, 0);
    expect_typed(m, "t.i32", TBLOB_META_I32, 0, -2000000000, 0);
    expect_typed(m, "t.f32", TBLOB_META_F32, 0, 0, static_cast<double>(0.1f));
    expect_typed(m, "t.bool", TBLOB_META_BOOL, 1, 0, 0);
    expect_typed(m, "t.u64", TBLOB_META_U64, (uint64_t{1} << 63) + 5, 0, 0);
    expect_typed(m, "t.i64", TBLOB_META_I64, 0, -(int64_t{1} << 62), 0);
    expect_typed(m, "t.f64", TBLOB_META_F64, 0, 0, 1e-300);
    const char *s = nullptr;
    size_t sn = 0;
    ASSERT_EQ(tblob_metadata_find(m, "t.str", 5, &s, &sn, &d), TBLOB_OK);
    EXPECT_EQ(std::string(s, sn), "h\xc3\xa9llo");
    ASSERT_EQ(tblob_metadata_find(m, "t.empty", 7, &s, &sn, &d), TBLOB_OK);
    EXPECT_EQ(sn, 0u);
    // Arrays, element by element.
    tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT;
    ASSERT_EQ(tblob_metadata_typed_find(m, "a.i64", 5, &v, &d), TBLOB_OK);
    int64_t i64s[2] = {0, 0};
    ASSERT_EQ(tblob_metadata_array_get(m, v.index, 0, 2, i64s, sizeof(i64s), &d), TBLOB_OK);
    EXPECT_EQ(i64s[0], INT64_MIN);
    EXPECT_EQ(i64s[1], INT64_MAX);
    ASSERT_EQ(tblob_metadata_typed_find(m, "a.bool", 6, &v, &d), TBLOB_OK);
    uint8_t bools[3] = {5, 5, 5};
    ASSERT_EQ(tblob_metadata_array_get(m, v.index, 0, 3, bools, 3, &d), TBLOB_OK);
    EXPECT_EQ(std::vector<int>(bools, bools + 3), (std::vector<int>{1, 0, 1}));
    ASSERT_EQ(tblob_metadata_typed_find(m, "a.f32", 5, &v, &d), TBLOB_OK);
    float f32s[2] = {0, 0};
    ASSERT_EQ(tblob_metadata_array_get(m, v.index, 0, 2, f32s, sizeof(f32s), &d), TBLOB_OK);
    EXPECT_EQ(f32s[0], 0.5f);
    EXPECT_EQ(f32s[1], -1.25f);
    ASSERT_EQ(tblob_metadata_typed_find(m, "a.u16", 5, &v, &d), TBLOB_OK);
    uint16_t u16s[2] = {0, 0};
    ASSERT_EQ(tblob_metadata_array_get(m, v.index, 0, 2, u16s, sizeof(u16s), &d), TBLOB_OK);
    EXPECT_EQ(u16s[1], 65535);
    ASSERT_EQ(tblob_metadata_typed_find(m, "a.empty", 7, &v, &d), TBLOB_OK);
    EXPECT_EQ(v.count, 0u);
    EXPECT_EQ(v.element_type, static_cast<uint32_t>(TBLOB_META_I32));
    ASSERT_EQ(tblob_metadata_typed_find(m, "a.str", 5, &v, &d), TBLOB_OK);
    std::vector<std::string> got;
    ASSERT_EQ(tblob_metadata_array_strings(
                  m, v.index, 0, UINT64_MAX, nullptr,
                  [](void *u, uint64_t, const char *p, size_t n) {
                    static_cast<std::vector<std::string> *>(u)->emplace_back(p, n);
                    return 0;
                  },
                  &got, &d),
              TBLOB_OK);
    EXPECT_EQ(got, (std::vector<std::string>{"", "a", "\xc3\xbcnicode", "tok"}));
    tblob_model_close(m);
  }
}

int append_sink(void *user, const void *p, size_t n) {
  static_cast<std::string *>(user)->append(static_cast<const char *>(p), n);
  return 0;
}

TEST_F(GgufWriter, CallbackWritesThePathWritersBytes) {
  const std::string p = path("p.gguf");
  tblob_gguf_writer *w = open(p);
  ASSERT_EQ(write_content(w, 64, 0, &d), TBLOB_OK) << d.message;
  ASSERT_EQ(tblob_gguf_writer_finish(w, nullptr, &d), TBLOB_OK) << d.message;
  tblob_gguf_writer_close(w);
  std::string out;
  ASSERT_EQ(tblob_gguf_writer_open_callback(append_sink, &out, nullptr, &w, &d), TBLOB_OK);
  ASSERT_EQ(write_content(w, 64, 3, &d), TBLOB_OK) << d.message;
  uint64_t total = 0;
  ASSERT_EQ(tblob_gguf_writer_finish(w, &total, &d), TBLOB_OK) << d.message;
  tblob_gguf_writer_close(w);
  EXPECT_EQ(out, read_file(p));
  EXPECT_EQ(total, out.size());
  EXPECT_EQ(out.size() % 64, 0u);  // the last tensor is padded too, as gguf-py pads it
}

TEST_F(GgufWriter, MisuseHasItsStatusAndChangesNothing) {
  const std::string p = path("m.gguf");
  tblob_gguf_writer *w = open(p);
  auto add = [&](const char *k, const tblob_gguf_value &v) {
    return tblob_gguf_writer_add_value(w, k, std::strlen(k), &v, &d);
  };
  const uint32_t three = 3, sixteen = 16;
  const uint64_t u64 = 16;
  EXPECT_EQ(add("general.alignment", scalar(TBLOB_META_U64, &u64)), TBLOB_E_GGUF_ALIGNMENT);
  EXPECT_EQ(add("general.alignment", scalar(TBLOB_META_U32, &three)), TBLOB_E_GGUF_ALIGNMENT);
  EXPECT_EQ(add("general.alignment", scalar(TBLOB_META_U32, &sixteen)), TBLOB_OK);
  EXPECT_EQ(add("general.alignment", scalar(TBLOB_META_U32, &sixteen)), TBLOB_E_GGUF_KEY);
  EXPECT_EQ(tblob_gguf_writer_add_value(w, "", 0, nullptr, &d), TBLOB_E_INVALID_ARGUMENT);
  const tblob_gguf_value s = str("x");
  EXPECT_EQ(tblob_gguf_writer_add_value(w, "", 0, &s, &d), TBLOB_E_GGUF_KEY);
  EXPECT_EQ(add("k", tblob_gguf_value{13, 0, &three, 0}), TBLOB_E_GGUF_VALUE_TYPE);
  EXPECT_EQ(add("k", arr(13, &three, 1)), TBLOB_E_GGUF_VALUE_TYPE);
  EXPECT_EQ(add("k", tblob_gguf_value{TBLOB_META_STRING, 0, "x", (uint64_t{1} << 30) + 1}), TBLOB_E_GGUF_STRING);
  EXPECT_EQ(add("k", arr(TBLOB_META_U8, "x", (uint64_t{1} << 30) + 1)), TBLOB_E_GGUF_ARRAY);
  const tblob_gguf_value inner[] = {arr(TBLOB_META_U8, "ab", 2)};
  EXPECT_EQ(add("k", arr(TBLOB_META_ARRAY, inner, 1)), TBLOB_E_GGUF_ARRAY);  // nested: ggml refuses them
  const tblob_gguf_value mixed[] = {str("a"), scalar(TBLOB_META_U8, &three)};
  EXPECT_EQ(add("k", arr(TBLOB_META_STRING, mixed, 2)), TBLOB_E_GGUF_VALUE_TYPE);
  EXPECT_EQ(add("k", s), TBLOB_OK);  // the refused calls left no trace of "k"
  const uint64_t shape2[] = {2, 64};
  auto tensor = [&](const char *n, std::vector<uint64_t> shape, uint32_t type) {
    return tblob_gguf_writer_add_tensor(w, n, std::strlen(n), shape.data(), static_cast<uint32_t>(shape.size()),
                                        type, nullptr, &d);
  };
  EXPECT_EQ(tensor(std::string(64, 'n').c_str(), {4}, 0), TBLOB_E_GGUF_NAME);
  EXPECT_EQ(tensor("t", {1, 1, 1, 1, 1}, 0), TBLOB_E_GGUF_DIMS);
  EXPECT_EQ(tensor("t", {uint64_t{1} << 63}, 0), TBLOB_E_GGUF_DIMS);
  EXPECT_EQ(tensor("t", {uint64_t{1} << 32, uint64_t{1} << 32}, 0), TBLOB_E_SHAPE_OVERFLOW);
  EXPECT_EQ(tensor("t", {32}, 4), TBLOB_E_GGUF_TYPE);   // Q4_2, removed
  EXPECT_EQ(tensor("t", {32}, 99), TBLOB_E_GGUF_TYPE);
  EXPECT_EQ(tensor("t", {2, 48}, 8), TBLOB_E_GGUF_ROW);  // Q8_0 rows are whole 32-element blocks
  EXPECT_EQ(tblob_gguf_writer_add_tensor(w, "a", 1, shape2, 2, 8, nullptr, &d), TBLOB_OK);
  EXPECT_EQ(tensor("a", {4}, 0), TBLOB_E_DUPLICATE_NAME);
  EXPECT_EQ(tensor("e", {0}, 0), TBLOB_OK);
  EXPECT_EQ(tensor("b", {4}, 0), TBLOB_OK);
  const std::string a = pattern(136, 1), b = pattern(16, 2);
  EXPECT_EQ(tblob_gguf_writer_write(w, 3, b.data(), 16, &d), TBLOB_E_RANGE);
  EXPECT_EQ(tblob_gguf_writer_write(w, 2, b.data(), 16, &d), TBLOB_E_GGUF_WRITE_ORDER);  // before "a"
  EXPECT_EQ(tblob_gguf_writer_write(w, 0, a.data(), 137, &d), TBLOB_E_GGUF_WRITE_SIZE);
  EXPECT_EQ(tblob_gguf_writer_finish(w, nullptr, &d), TBLOB_E_GGUF_WRITE_SIZE);  // "a" has none of its bytes
  EXPECT_EQ(d.tensor_index, 0);
  EXPECT_EQ(tblob_gguf_writer_write(w, 0, a.data(), 100, &d), TBLOB_OK);
  EXPECT_EQ(add("late", s), TBLOB_E_GGUF_WRITE_ORDER);
  EXPECT_EQ(tensor("late", {4}, 0), TBLOB_E_GGUF_WRITE_ORDER);
  EXPECT_EQ(tblob_gguf_writer_write(w, 2, b.data(), 16, &d), TBLOB_E_GGUF_WRITE_ORDER);  // "a" incomplete
  EXPECT_EQ(tblob_gguf_writer_write(w, 0, a.data() + 100, 37, &d), TBLOB_E_GGUF_WRITE_SIZE);
  EXPECT_EQ(tblob_gguf_writer_finish(w, nullptr, &d), TBLOB_E_GGUF_WRITE_SIZE);
  EXPECT_EQ(tblob_gguf_writer_write(w, 0, a.data() + 100, 36, &d), TBLOB_OK);
  EXPECT_EQ(tblob_gguf_writer_write(w, 0, a.data(), 1, &d), TBLOB_E_GGUF_WRITE_ORDER);  // complete already
  EXPECT_EQ(tblob_gguf_writer_write(w, 1, nullptr, 0, &d), TBLOB_OK);  // the empty tensor: nothing to write
  EXPECT_EQ(tblob_gguf_writer_write(w, 2, b.data(), 8, &d), TBLOB_OK);
  EXPECT_FALSE(exists(p));  // nothing under the final name before finish
  EXPECT_EQ(tblob_gguf_writer_write(w, 2, b.data() + 8, 8, &d), TBLOB_OK);
  EXPECT_EQ(tblob_gguf_writer_finish(w, nullptr, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_gguf_writer_finish(w, nullptr, &d), TBLOB_E_GGUF_WRITE_ORDER);
  EXPECT_EQ(tblob_gguf_writer_write(w, 2, b.data(), 1, &d), TBLOB_E_GGUF_WRITE_ORDER);
  tblob_gguf_writer_close(w);
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open(p.c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_metadata_typed_count(m), 2u);
  EXPECT_EQ(tblob_model_tensor_count(m), 3u);
  const void *data = nullptr;
  uint64_t len = 0;
  ASSERT_EQ(tblob_tensor_data(m, 0, &data, &len, &d), TBLOB_OK);
  EXPECT_EQ(std::string(static_cast<const char *>(data), len), a);
  ASSERT_EQ(tblob_tensor_data(m, 2, &data, &len, &d), TBLOB_OK);
  EXPECT_EQ(std::string(static_cast<const char *>(data), len), b);
  tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
  ASSERT_EQ(tblob_tensor_at(m, 2, &ti, &d), TBLOB_OK);
  EXPECT_EQ(ti.file_offset % 16, 0u);
  tblob_model_close(m);
}

TEST_F(GgufWriter, BadArgumentsAndOptions) {
  tblob_gguf_writer *w = reinterpret_cast<tblob_gguf_writer *>(1);
  EXPECT_EQ(tblob_gguf_writer_open(nullptr, nullptr, &w, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(w, nullptr);
  EXPECT_EQ(tblob_gguf_writer_open((dir + "/").c_str(), nullptr, &w, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_gguf_writer_open((dir + "/no/such/dir/x.gguf").c_str(), nullptr, &w, &d), TBLOB_E_IO);
  EXPECT_EQ(tblob_gguf_writer_open_callback(nullptr, nullptr, nullptr, &w, &d), TBLOB_E_INVALID_ARGUMENT);
  tblob_gguf_writer_options o = TBLOB_GGUF_WRITER_OPTIONS_INIT;
  o.version = 1;
  EXPECT_EQ(tblob_gguf_writer_open(path("v.gguf").c_str(), &o, &w, &d), TBLOB_E_INVALID_ARGUMENT);
  o.version = 0;
  o.flags = 2;
  EXPECT_EQ(tblob_gguf_writer_open(path("v.gguf").c_str(), &o, &w, &d), TBLOB_E_INVALID_ARGUMENT);
  o.flags = 0;
  o.struct_size = 4;
  EXPECT_EQ(tblob_gguf_writer_open(path("v.gguf").c_str(), &o, &w, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_TRUE(dir_entries(dir).empty());
  tblob_gguf_writer_options oi;
  EXPECT_EQ(tblob_gguf_writer_options_init(&oi, sizeof(oi)), TBLOB_OK);
  EXPECT_EQ(oi.struct_size, sizeof(oi));
  // Version 2 writes a v2 file the reader opens as such.
  oi.version = 2;
  std::string out;
  ASSERT_EQ(tblob_gguf_writer_open_callback(append_sink, &out, &oi, &w, &d), TBLOB_OK);
  ASSERT_EQ(tblob_gguf_writer_finish(w, nullptr, &d), TBLOB_OK);
  tblob_gguf_writer_close(w);
  ASSERT_EQ(out.size(), 32u);  // magic, version, two counts, padded to 32
  EXPECT_EQ(out.substr(0, 8), std::string("GGUF\x02\0\0\0", 8));
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open_memory(out.data(), out.size(), nullptr, &m, &d), TBLOB_OK) << d.message;
  tblob_model_close(m);
  tblob_gguf_writer_close(nullptr);
}

TEST_F(GgufWriter, NestedArraysOnlyWhenAskedAndTheReaderRefusesThem) {
  const std::string p = path("n.gguf");
  tblob_gguf_writer *w = open(p, TBLOB_GGUF_WRITE_NESTED_ARRAYS);
  const int32_t x[] = {1, 2};
  const tblob_gguf_value inner[] = {arr(TBLOB_META_I32, x, 2), arr(TBLOB_META_I32, x, 1)};
  const tblob_gguf_value v = arr(TBLOB_META_ARRAY, inner, 2);
  ASSERT_EQ(tblob_gguf_writer_add_value(w, "n", 1, &v, &d), TBLOB_OK) << d.message;
  // Nesting is bounded: 9 levels are refused.
  tblob_gguf_value lv[9];
  lv[0] = arr(TBLOB_META_I32, x, 1);
  for (int k = 1; k < 9; ++k) lv[k] = arr(TBLOB_META_ARRAY, &lv[k - 1], 1);
  EXPECT_EQ(tblob_gguf_writer_add_value(w, "deep", 4, &lv[8], &d), TBLOB_E_GGUF_ARRAY);
  EXPECT_EQ(tblob_gguf_writer_add_value(w, "ok", 2, &lv[7], &d), TBLOB_OK);
  ASSERT_EQ(tblob_gguf_writer_finish(w, nullptr, &d), TBLOB_OK);
  tblob_gguf_writer_close(w);
  // The bytes: key, type ARRAY, element type ARRAY, count 2, then each inner array.
  const std::string f = read_file(p);
  const std::string want = std::string("\x01\0\0\0\0\0\0\0n\x09\0\0\0\x09\0\0\0\x02\0\0\0\0\0\0\0", 25) +
                           std::string("\x05\0\0\0\x02\0\0\0\0\0\0\0\x01\0\0\0\x02\0\0\0", 20) +
                           std::string("\x05\0\0\0\x01\0\0\0\0\0\0\0\x01\0\0\0", 16);
  EXPECT_EQ(f.substr(24, want.size()), want);
  tblob_model *m = nullptr;
  EXPECT_EQ(tblob_model_open(p.c_str(), nullptr, &m, &d), TBLOB_E_GGUF_ARRAY);
}

TEST_F(GgufWriter, CloseWithoutFinishLeavesNothingAndKeepsTheOldFile) {
  const std::string p = path("keep.gguf");
  {
    FILE *f = std::fopen(p.c_str(), "wb");
    std::fputs("OLD", f);
    std::fclose(f);
  }
  for (int stop = 0; stop < 3; ++stop) {
    tblob_gguf_writer *w = open(p);
    const uint64_t shape[] = {8};
    ASSERT_EQ(tblob_gguf_writer_add_tensor(w, "t", 1, shape, 1, 0, nullptr, &d), TBLOB_OK);
    const std::string data = pattern(32, 0);
    if (stop >= 1) { ASSERT_EQ(tblob_gguf_writer_write(w, 0, data.data(), 16, &d), TBLOB_OK); }
    if (stop >= 2) { ASSERT_EQ(tblob_gguf_writer_write(w, 0, data.data() + 16, 16, &d), TBLOB_OK); }
    EXPECT_EQ(dir_entries(dir).size(), 2u);  // the old file and the temporary one
    tblob_gguf_writer_close(w);
    EXPECT_EQ(read_file(p), "OLD");
    EXPECT_EQ(dir_entries(dir), std::vector<std::string>{"keep.gguf"});
  }
}

TEST_F(GgufWriter, AFailingCallbackEndsTheWriter) {
  for (int fail_at = 1; fail_at <= 4; ++fail_at) {
    struct S {
      int calls = 0, fail_at = 0;
    } s;
    s.fail_at = fail_at;
    tblob_gguf_writer *w = nullptr;
    ASSERT_EQ(tblob_gguf_writer_open_callback(
                  [](void *u, const void *, size_t) {
                    S *t = static_cast<S *>(u);
                    return ++t->calls == t->fail_at ? 1 : 0;
                  },
                  &s, nullptr, &w, &d),
              TBLOB_OK);
    tblob_status st = write_content(w, 0, 0, &d);
    if (st == TBLOB_OK) st = tblob_gguf_writer_finish(w, nullptr, &d);
    EXPECT_EQ(st, TBLOB_E_CANCELLED) << fail_at;
    EXPECT_EQ(tblob_gguf_writer_finish(w, nullptr, &d), TBLOB_E_CANCELLED);
    const uint8_t one = 1;
    EXPECT_EQ(tblob_gguf_writer_write(w, 0, &one, 1, &d), TBLOB_E_CANCELLED);
    tblob_gguf_writer_close(w);
  }
}

// Peak bytes held through a counting allocator.
struct Counter {
  size_t now = 0, peak = 0;
};
void *count_alloc(void *o, size_t n) {
  Counter *c = static_cast<Counter *>(o);
  c->now += n;
  if (c->now > c->peak) c->peak = c->now;
  return std::malloc(n);
}
void count_free(void *o, void *p, size_t n) {
  static_cast<Counter *>(o)->now -= n;
  std::free(p);
}

size_t peak_for(uint64_t rows) {
  Counter c;
  tblob_allocator a = TBLOB_ALLOCATOR_INIT;
  a.alloc = count_alloc;
  a.free = count_free;
  a.opaque = &c;
  tblob_gguf_writer_options o = TBLOB_GGUF_WRITER_OPTIONS_INIT;
  o.allocator = &a;
  tblob_gguf_writer *w = nullptr;
  size_t sunk = 0;
  if (tblob_gguf_writer_open_callback(
          [](void *u, const void *, size_t n) {
            *static_cast<size_t *>(u) += n;
            return 0;
          },
          &sunk, &o, &w, nullptr) != TBLOB_OK)
    return 0;
  const std::vector<char> chunk(1 << 20, 1);
  for (int t = 0; t < 4; ++t) {
    const std::string name = "t" + std::to_string(t);
    const uint64_t shape[] = {rows, 1 << 18};
    if (tblob_gguf_writer_add_tensor(w, name.data(), name.size(), shape, 2, 0, nullptr, nullptr) != TBLOB_OK) return 0;
  }
  for (int t = 0; t < 4; ++t)
    for (uint64_t r = 0; r < rows; ++r)
      if (tblob_gguf_writer_write(w, t, chunk.data(), chunk.size(), nullptr) != TBLOB_OK) return 0;
  if (tblob_gguf_writer_finish(w, nullptr, nullptr) != TBLOB_OK) return 0;
  tblob_gguf_writer_close(w);
  return sunk == rows * 4 * (1u << 20) + 192 ? c.peak : 0;
}

TEST_F(GgufWriter, MemoryDoesNotGrowWithTheTensorData) {
  const size_t small = peak_for(1), large = peak_for(64);  // 4 MiB and 256 MiB of tensor data
  EXPECT_GT(small, 0u);
  EXPECT_EQ(small, large);
  EXPECT_LT(large, size_t{64} << 10);
  std::printf("writer peak heap: %zu bytes for 4 MiB and for 256 MiB of tensor data\n", large);
}

}  // namespace
