// The typed metadata API on GGUF files written by the gguf package, against what its
// GGUFReader reports (tests/data/gguf/*.typed, from gen_typed_metadata.py): every value type,
// arrays of every element type, and a 150,000-token vocabulary that is walked in place.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tensorblob.h"

namespace {

std::string slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string hex(const char *p, size_t n) {
  if (n == 0) return "-";
  std::string s;
  char b[3];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(b, sizeof(b), "%02x", static_cast<unsigned char>(p[i]));
    s += b;
  }
  return s;
}

// What gen_typed_metadata.py wrote for one key/value: "kv KEY TYPE VALUE" or
// "arr KEY ELEMTYPE COUNT" with its "el INDEX VALUE" lines.
struct Expected {
  bool array = false;
  std::string key;
  uint32_t type = 0;
  std::string value;
  uint64_t count = 0;
  std::vector<std::pair<uint64_t, std::string>> elements;
};
struct Typed {
  std::string sha256;
  uint64_t bytes = 0, kvs = 0;
  std::vector<Expected> entries;
};

Typed read_typed(const std::string &path) {
  Typed t;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "file") {
      ls >> t.sha256 >> t.bytes >> t.kvs;
    } else if (tag == "kv") {
      Expected e;
      ls >> e.key >> e.type >> e.value;
      t.entries.push_back(e);
    } else if (tag == "arr") {
      Expected e;
      e.array = true;
      ls >> e.key >> e.type >> e.count;
      t.entries.push_back(e);
    } else if (tag == "el") {
      uint64_t i;
      std::string v;
      ls >> i >> v;
      t.entries.back().elements.emplace_back(i, v);
    }
  }
  return t;
}

// A scalar or numeric element as the .typed files write it, from its value in host order.
std::string text_of(uint32_t type, const unsigned char *p) {
  char b[40];
  switch (type) {
    case TBLOB_META_U8: std::snprintf(b, sizeof(b), "%u", p[0]); break;
    case TBLOB_META_I8: std::snprintf(b, sizeof(b), "%d", static_cast<int8_t>(p[0])); break;
    case TBLOB_META_BOOL: std::snprintf(b, sizeof(b), "%u", p[0]); break;
    case TBLOB_META_U16: { uint16_t v; std::memcpy(&v, p, 2); std::snprintf(b, sizeof(b), "%u", v); break; }
    case TBLOB_META_I16: { int16_t v; std::memcpy(&v, p, 2); std::snprintf(b, sizeof(b), "%d", v); break; }
    case TBLOB_META_U32: { uint32_t v; std::memcpy(&v, p, 4); std::snprintf(b, sizeof(b), "%" PRIu32, v); break; }
    case TBLOB_META_I32: { int32_t v; std::memcpy(&v, p, 4); std::snprintf(b, sizeof(b), "%" PRId32, v); break; }
    case TBLOB_META_F32: { uint32_t v; std::memcpy(&v, p, 4); std::snprintf(b, sizeof(b), "%08" PRIx32, v); break; }
    case TBLOB_META_U64: { uint64_t v; std::memcpy(&v, p, 8); std::snprintf(b, sizeof(b), "%" PRIu64, v); break; }
    case TBLOB_META_I64: { int64_t v; std::memcpy(&v, p, 8); std::snprintf(b, sizeof(b), "%" PRId64, v); break; }
    case TBLOB_META_F64: { uint64_t v; std::memcpy(&v, p, 8); std::snprintf(b, sizeof(b), "%016" PRIx64, v); break; }
    default: return "?";
  }
  return b;
}

size_t elem_size(uint32_t t) {
  switch (t) {
    case TBLOB_META_U8: case TBLOB_META_I8: case TBLOB_META_BOOL: return 1;
    case TBLOB_META_U16: case TBLOB_META_I16: return 2;
    case TBLOB_META_U32: case TBLOB_META_I32: case TBLOB_META_F32: return 4;
    default: return 8;
  }
}

// The scalar of a typed value, from the field of its kind, as the .typed files write it.
std::string scalar_text(const tblob_metadata_value &v) {
  unsigned char b[8] = {0};
  switch (v.value_type) {
    case TBLOB_META_STRING: return hex(v.string, v.string_len);
    case TBLOB_META_U8: case TBLOB_META_BOOL: b[0] = static_cast<unsigned char>(v.uint_value); break;
    case TBLOB_META_U16: { const uint16_t x = static_cast<uint16_t>(v.uint_value); std::memcpy(b, &x, 2); break; }
    case TBLOB_META_U32: { const uint32_t x = static_cast<uint32_t>(v.uint_value); std::memcpy(b, &x, 4); break; }
    case TBLOB_META_U64: std::memcpy(b, &v.uint_value, 8); break;
    case TBLOB_META_I8: { const int8_t x = static_cast<int8_t>(v.int_value); std::memcpy(b, &x, 1); break; }
    case TBLOB_META_I16: { const int16_t x = static_cast<int16_t>(v.int_value); std::memcpy(b, &x, 2); break; }
    case TBLOB_META_I32: { const int32_t x = static_cast<int32_t>(v.int_value); std::memcpy(b, &x, 4); break; }
    case TBLOB_META_I64: std::memcpy(b, &v.int_value, 8); break;
    case TBLOB_META_F32: { const float x = static_cast<float>(v.float_value); std::memcpy(b, &x, 4); break; }
    case TBLOB_META_F64: std::memcpy(b, &v.float_value, 8); break;
    default: return "?";
  }
  return text_of(v.value_type, b);
}

struct Strings {
  std::vector<std::pair<uint64_t, std::string>> got;
};
int collect(void *user, uint64_t element, const char *s, size_t len) {
  static_cast<Strings *>(user)->got.emplace_back(element, std::string(s, len));
  return 0;
}

// Checks every key/value of m (a model of `t`'s file, typed index offset `prefix`) against t.
void check_against(const tblob_model *m, const Typed &t, uint64_t prefix) {
  ASSERT_EQ(tblob_metadata_typed_count(m), prefix + t.entries.size());
  tblob_diag d = TBLOB_DIAG_INIT;
  for (size_t k = 0; k < t.entries.size(); ++k) {
    const Expected &e = t.entries[k];
    SCOPED_TRACE(e.key);
    tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT, f = TBLOB_METADATA_VALUE_INIT;
    ASSERT_EQ(tblob_metadata_typed_at(m, prefix + k, &v, &d), TBLOB_OK) << d.message;
    ASSERT_EQ(tblob_metadata_typed_find(m, e.key.data(), e.key.size(), &f, &d), TBLOB_OK) << d.message;
    EXPECT_EQ(f.index, prefix + k);
    EXPECT_EQ(std::string(v.key, v.key_len), e.key);
    if (!e.array) {
      EXPECT_EQ(v.value_type, e.type);
      EXPECT_EQ(v.count, 1u);
      EXPECT_EQ(scalar_text(v), e.value);
      // The text beside it is what tblob_metadata_find answers.
      const char *s;
      size_t n;
      ASSERT_EQ(tblob_metadata_find(m, e.key.data(), e.key.size(), &s, &n, nullptr), TBLOB_OK);
      EXPECT_EQ(std::string(v.string, v.string_len), std::string(s, n));
      continue;
    }
    ASSERT_EQ(v.value_type, static_cast<uint32_t>(TBLOB_META_ARRAY));
    EXPECT_EQ(v.element_type, e.type);
    ASSERT_EQ(v.count, e.count);
    EXPECT_EQ(v.string, nullptr);
    if (e.type == TBLOB_META_STRING) {
      // In order with one cursor, each element alone, then all in one walk.
      tblob_metadata_cursor c = TBLOB_METADATA_CURSOR_INIT;
      for (const auto &el : e.elements) {
        const char *s = nullptr;
        size_t n = 0;
        ASSERT_EQ(tblob_metadata_array_string(m, prefix + k, el.first, &c, &s, &n, &d), TBLOB_OK) << d.message;
        EXPECT_EQ(hex(s, n), el.second) << "element " << el.first;
        ASSERT_EQ(tblob_metadata_array_string(m, prefix + k, el.first, nullptr, &s, &n, &d), TBLOB_OK) << d.message;
        EXPECT_EQ(hex(s, n), el.second) << "element " << el.first;
      }
      Strings all;
      ASSERT_EQ(tblob_metadata_array_strings(m, prefix + k, 0, UINT64_MAX, nullptr, collect, &all, &d), TBLOB_OK);
      ASSERT_EQ(all.got.size(), e.count);
      for (const auto &el : e.elements) EXPECT_EQ(hex(all.got[el.first].second.data(), all.got[el.first].second.size()), el.second);
      unsigned char b[8];
      EXPECT_EQ(tblob_metadata_array_get(m, prefix + k, 0, 1, b, sizeof(b), &d), TBLOB_E_INVALID_ARGUMENT);
    } else {
      const size_t es = elem_size(e.type);
      for (const auto &el : e.elements) {
        unsigned char b[8] = {0};
        ASSERT_EQ(tblob_metadata_array_get(m, prefix + k, el.first, 1, b, es, &d), TBLOB_OK) << d.message;
        EXPECT_EQ(text_of(e.type, b), el.second) << "element " << el.first;
      }
      if (e.count <= 64) {  // the whole array in one call
        std::vector<unsigned char> all(e.count * es);
        ASSERT_EQ(tblob_metadata_array_get(m, prefix + k, 0, UINT64_MAX, all.data(), all.size(), &d), TBLOB_OK);
        for (const auto &el : e.elements) EXPECT_EQ(text_of(e.type, all.data() + el.first * es), el.second);
        if (!all.empty()) {
          EXPECT_EQ(tblob_metadata_array_get(m, prefix + k, 0, UINT64_MAX, all.data(), all.size() - 1, &d),
                    TBLOB_E_BUFFER_TOO_SMALL);
        }
      }
      Strings none;
      EXPECT_EQ(tblob_metadata_array_strings(m, prefix + k, 0, 1, nullptr, collect, &none, &d), TBLOB_E_INVALID_ARGUMENT);
    }
    unsigned char b[8];
    EXPECT_EQ(tblob_metadata_array_get(m, prefix + k, e.count, 1, b, sizeof(b), &d),
              e.type == TBLOB_META_STRING ? TBLOB_E_INVALID_ARGUMENT : TBLOB_E_RANGE);
  }
}

TEST(GgufTyped, EveryTypeAsGgufPyReadsIt) {
  const std::string dir = TBLOB_GGUF_DATA_DIR;
  const Typed t = read_typed(dir + "/arrays.typed");
  ASSERT_EQ(t.entries.size(), t.kvs);
  ASSERT_GT(t.entries.size(), 20u);
  const std::string bytes = slurp(dir + "/arrays.gguf");
  ASSERT_EQ(bytes.size(), t.bytes);
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open((dir + "/arrays.gguf").c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
  check_against(m, t, 0);
  // Scalars only in the string table, arrays only in the typed one.
  uint64_t scalars = 0;
  for (const Expected &e : t.entries) scalars += !e.array;
  EXPECT_EQ(tblob_metadata_count(m), scalars);
  tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT;
  EXPECT_EQ(tblob_metadata_typed_find(m, "a.nope", 6, &v, &d), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(tblob_metadata_typed_at(m, t.entries.size(), &v, &d), TBLOB_E_RANGE);
  v.struct_size = 16;
  EXPECT_EQ(tblob_metadata_typed_at(m, 0, &v, &d), TBLOB_E_INVALID_ARGUMENT);
  // A scalar is not an array.
  EXPECT_EQ(tblob_metadata_array_get(m, 2, 0, 1, &v, 8, &d), TBLOB_E_INVALID_ARGUMENT);
  tblob_model_close(m);
}

TEST(GgufTyped, OtherFormatsListTheirStringPairs) {
  // A safetensors-style model has only strings: the typed table is its metadata table.
  const std::string dir = TBLOB_GGUF_DATA_DIR;
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  const std::string st = dir + "/../../../examples/tiny-llama/model.safetensors";
  ASSERT_EQ(tblob_model_open(st.c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
  ASSERT_EQ(tblob_metadata_typed_count(m), tblob_metadata_count(m));
  ASSERT_GT(tblob_metadata_count(m), 0u);
  for (uint64_t i = 0; i < tblob_metadata_count(m); ++i) {
    const char *k, *s;
    size_t kn, sn;
    ASSERT_EQ(tblob_metadata_at(m, i, &k, &kn, &s, &sn, nullptr), TBLOB_OK);
    tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT;
    ASSERT_EQ(tblob_metadata_typed_at(m, i, &v, &d), TBLOB_OK);
    EXPECT_EQ(v.value_type, static_cast<uint32_t>(TBLOB_META_STRING));
    EXPECT_EQ(std::string(v.key, v.key_len), std::string(k, kn));
    EXPECT_EQ(std::string(v.string, v.string_len), std::string(s, sn));
    ASSERT_EQ(tblob_metadata_typed_find(m, k, kn, &v, &d), TBLOB_OK);
    EXPECT_EQ(v.index, i);
  }
  unsigned char b[8];
  EXPECT_EQ(tblob_metadata_array_get(m, 0, 0, 1, b, 8, &d), TBLOB_E_INVALID_ARGUMENT);
  tblob_model_close(m);
}

// ---- the 150,000-token vocabulary -----------------------------------------------------------
// token() of gen_typed_metadata.py.
std::string token_of(uint64_t i) {
  char b[32];
  if (i % 1000 == 999) return "";
  if (i % 3 == 0) std::snprintf(b, sizeof(b), "\xe2\x96\x81w%llu", static_cast<unsigned long long>(i));
  else if (i % 3 == 1) std::snprintf(b, sizeof(b), "t%llu", static_cast<unsigned long long>(i));
  else std::snprintf(b, sizeof(b), "<0x%02X>", static_cast<unsigned>(i % 256));
  return b;
}

void put32(std::string &s, uint32_t v) { for (int k = 0; k < 4; ++k) s += static_cast<char>(v >> (8 * k)); }
void put64(std::string &s, uint64_t v) { for (int k = 0; k < 8; ++k) s += static_cast<char>(v >> (8 * k)); }
void put_str(std::string &s, const std::string &v) { put64(s, v.size()); s += v; }
void key(std::string &s, const char *k, uint32_t type) { put_str(s, k); put32(s, type); }
void pad32(std::string &s) { while (s.size() % 32) s += '\0'; }

// The file write_tokens() of gen_typed_metadata.py writes, for n tokens, byte for byte (the
// SHA-256 check below holds it to that for n = 150,000).
std::string tokens_gguf(uint64_t n) {
  std::string s = "GGUF";
  put32(s, 3);
  put64(s, 1);
  put64(s, 6);
  key(s, "general.architecture", TBLOB_META_STRING);
  put_str(s, "llama");
  key(s, "tokenizer.ggml.model", TBLOB_META_STRING);
  put_str(s, "gpt2");
  key(s, "tokenizer.ggml.tokens", TBLOB_META_ARRAY);
  put32(s, TBLOB_META_STRING);
  put64(s, n);
  for (uint64_t i = 0; i < n; ++i) put_str(s, token_of(i));
  key(s, "tokenizer.ggml.scores", TBLOB_META_ARRAY);
  put32(s, TBLOB_META_F32);
  put64(s, n);
  for (uint64_t i = 0; i < n; ++i) {
    const float f = -0.25f * static_cast<float>(i);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    put32(s, b);
  }
  key(s, "tokenizer.ggml.token_type", TBLOB_META_ARRAY);
  put32(s, TBLOB_META_I32);
  put64(s, n);
  for (uint64_t i = 0; i < n; ++i) put32(s, static_cast<uint32_t>(i % 6));
  key(s, "tokenizer.ggml.bos_token_id", TBLOB_META_U32);
  put32(s, 1);
  put_str(s, "w");  // tensor info: name, n_dims, ne, type F32, offset
  put32(s, 1);
  put64(s, 4);
  put32(s, 0);
  put64(s, 0);
  pad32(s);
  for (int i = 0; i < 4; ++i) {
    const float f = static_cast<float>(i);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    put32(s, b);
  }
  pad32(s);
  return s;
}

struct Counting {
  uint64_t bytes = 0, calls = 0;
};
void *count_alloc(void *opaque, size_t n) {
  Counting *c = static_cast<Counting *>(opaque);
  c->bytes += n;
  ++c->calls;
  return std::malloc(n);
}
void count_free(void *, void *p, size_t) { std::free(p); }

// Opens buf with a counting allocator; returns the bytes it allocated.
uint64_t open_counted(const std::string &buf, tblob_model **m) {
  static Counting c;
  c = Counting();
  tblob_allocator a = TBLOB_ALLOCATOR_INIT;
  a.alloc = count_alloc;
  a.free = count_free;
  a.opaque = &c;
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  o.allocator = &a;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_model_open_memory(buf.data(), buf.size(), &o, m, &d), TBLOB_OK) << d.message;
  return c.bytes;
}

TEST(GgufTyped, A150kTokenVocabularyIsWalkedInPlace) {
  const Typed t = read_typed(std::string(TBLOB_GGUF_DATA_DIR) + "/tokens150k.typed");
  ASSERT_EQ(t.entries.size(), 6u);
  const std::string big = tokens_gguf(150000);
  ASSERT_EQ(big.size(), t.bytes);
  // The same bytes gguf-py wrote and read: its SHA-256 is in the .typed file.
  const std::string digest = "sha256:" + t.sha256;
  tblob_verifier *v = nullptr;
  if (tblob_verifier_open(digest.data(), digest.size(), big.size(), &v, nullptr) == TBLOB_OK) {
    ASSERT_EQ(tblob_verifier_update(v, big.data(), big.size(), nullptr), TBLOB_OK);
    EXPECT_EQ(tblob_verifier_final(v, nullptr, 0, nullptr), TBLOB_OK) << "tokens_gguf() differs from gguf-py's file";
    tblob_verifier_close(v);
  }
  tblob_model *m = nullptr, *small = nullptr;
  const uint64_t big_bytes = open_counted(big, &m);
  ASSERT_NE(m, nullptr);
  const uint64_t small_bytes = open_counted(tokens_gguf(1500), &small);
  ASSERT_NE(small, nullptr);
  // 100 times the tokens, the same memory: nothing is allocated per element (the arrays
  // alone are 3.4 MB here).
  EXPECT_EQ(big_bytes, small_bytes) << "open allocated " << big_bytes << " bytes for 150,000 tokens, " << small_bytes
                                    << " for 1,500";
  check_against(m, t, 0);

  // A walk from the start, in chunks with one cursor, and backwards: the same strings.
  tblob_metadata_value tok = TBLOB_METADATA_VALUE_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_metadata_typed_find(m, "tokenizer.ggml.tokens", 21, &tok, &d), TBLOB_OK);
  Strings all;
  ASSERT_EQ(tblob_metadata_array_strings(m, tok.index, 0, UINT64_MAX, nullptr, collect, &all, &d), TBLOB_OK);
  ASSERT_EQ(all.got.size(), 150000u);
  for (uint64_t i = 0; i < 150000; ++i) {
    ASSERT_EQ(all.got[i].first, i);
    ASSERT_EQ(all.got[i].second, token_of(i)) << i;
  }
  tblob_metadata_cursor c = TBLOB_METADATA_CURSOR_INIT;
  Strings chunks;
  for (uint64_t first = 0; first < 150000; first += 7001) {
    const uint64_t n = 150000 - first < 7001 ? 150000 - first : 7001;
    ASSERT_EQ(tblob_metadata_array_strings(m, tok.index, first, n, &c, collect, &chunks, &d), TBLOB_OK) << d.message;
    EXPECT_EQ(c.element, first + n);
  }
  ASSERT_EQ(chunks.got.size(), 150000u);
  EXPECT_EQ(chunks.got[149999].second, token_of(149999));
  const char *s;
  size_t n;
  ASSERT_EQ(tblob_metadata_array_string(m, tok.index, 123456, &c, &s, &n, &d), TBLOB_OK);  // behind the cursor
  EXPECT_EQ(std::string(s, n), token_of(123456));
  // A cursor of another array, or altered, is not followed.
  c.position += 3;
  ASSERT_EQ(tblob_metadata_array_string(m, tok.index, 140000, &c, &s, &n, &d), TBLOB_OK);
  EXPECT_EQ(std::string(s, n), token_of(140000));
  c.array = tok.index - 1;
  ASSERT_EQ(tblob_metadata_array_string(m, tok.index, 140001, &c, &s, &n, &d), TBLOB_OK);
  EXPECT_EQ(std::string(s, n), token_of(140001));
  EXPECT_EQ(tblob_metadata_array_string(m, tok.index, 150000, &c, &s, &n, &d), TBLOB_E_RANGE);
  EXPECT_EQ(tblob_metadata_array_strings(m, tok.index, 149999, 2, &c, collect, &all, &d), TBLOB_E_RANGE);
  // The callback can stop the walk.
  struct Stop {
    static int at3(void *, uint64_t e, const char *, size_t) { return e == 3; }
  };
  EXPECT_EQ(tblob_metadata_array_strings(m, tok.index, 0, 10, nullptr, Stop::at3, nullptr, &d), TBLOB_E_CANCELLED);
  // Scores and token types: whole-array reads.
  tblob_metadata_value sc = TBLOB_METADATA_VALUE_INIT;
  ASSERT_EQ(tblob_metadata_typed_find(m, "tokenizer.ggml.scores", 21, &sc, &d), TBLOB_OK);
  std::vector<float> scores(150000);
  ASSERT_EQ(tblob_metadata_array_get(m, sc.index, 0, UINT64_MAX, scores.data(), scores.size() * 4, &d), TBLOB_OK);
  for (uint64_t i = 0; i < 150000; ++i) ASSERT_EQ(scores[i], -0.25f * static_cast<float>(i)) << i;
  tblob_model_close(small);
  tblob_model_close(m);
}

}  // namespace
