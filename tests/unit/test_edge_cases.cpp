// Edge cases of the public API: limits and the compact preset, the allocator hook
// (counting, and failing the Nth allocation), lookups, metadata, tblob_json_unescape,
// tensor data, sharded checkpoints, argument checking.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "st_harness.h"

using namespace stb;
using namespace sth;

namespace {

tblob_open_options defaults() {
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  return o;
}

std::string one_shape(const std::string &shape) {
  return "{\"t\":{\"dtype\":\"U8\",\"shape\":" + shape + ",\"data_offsets\":[0,1]}}";
}

std::string nested(const std::string &open, const std::string &close, size_t k) {
  std::string s;
  for (size_t i = 0; i < k; ++i) s += open;
  for (size_t i = 0; i < k; ++i) s += close;
  return s;
}

// A file with every kind of content: escaped and raw UTF-8 names, metadata, zero-size
// tensors, several dtypes.
std::string rich_file(int extra = 40) {
  std::vector<Spec> specs;
  auto add = [&](const std::string &name, const std::string &dtype, std::vector<uint64_t> shape) {
    Spec s;
    s.name = name;
    s.dtype = dtype;
    s.shape = std::move(shape);
    uint64_t el = 1;
    for (uint64_t d : s.shape) el *= d;
    s.data.assign(static_cast<size_t>(el * dtype_bits(dtype) / 8), static_cast<char>('A' + specs.size() % 26));
    specs.push_back(s);
  };
  add("model.embed_tokens.weight", "BF16", {16, 4});
  add("caf\\u00e9", "F32", {3});
  add("\\ud83d\\ude00.bias", "F16", {2, 2});
  add("zero", "F32", {0, 5});
  add("fp4", "F4", {4, 2});
  add("quote\\\"back\\\\slash", "U8", {5});
  add("\xE4\xB8\xAD\xE6\x96\x87", "I64", {1});
  for (int i = 0; i < extra; ++i) add("layers." + std::to_string(i) + ".w", i % 2 ? "F32" : "BF16", {2, 3});
  return write_like_reference(&specs, {{"format", "pt"}, {"note", "line\\nbreak"}, {"k\\u00e9y", "v"}});
}

// ------------------------------------------------------------------------------------------
// Allocators.
struct CountingAllocator {
  size_t calls = 0;        // alloc calls
  size_t fail_at = 0;      // 1-based call to fail; 0: never
  bool fail_after = false; // fail every call from fail_at on
  size_t failed = 0;
  size_t frees = 0;
  size_t bad_frees = 0;    // unknown pointer or size mismatch
  size_t misaligned = 0;
  std::map<void *, size_t> live;
  size_t peak_bytes = 0, live_bytes = 0;
};

void *ca_alloc(void *opaque, size_t n) {
  CountingAllocator *c = static_cast<CountingAllocator *>(opaque);
  ++c->calls;
  if (c->fail_at && (c->calls == c->fail_at || (c->fail_after && c->calls > c->fail_at))) {
    ++c->failed;
    return nullptr;
  }
  void *p = std::aligned_alloc(16, (n + 15) & ~size_t{15});
  if (!p) return nullptr;
  c->live[p] = n;
  c->live_bytes += n;
  if (c->live_bytes > c->peak_bytes) c->peak_bytes = c->live_bytes;
  return p;
}

void ca_free(void *opaque, void *p, size_t n) {
  CountingAllocator *c = static_cast<CountingAllocator *>(opaque);
  ++c->frees;
  auto it = c->live.find(p);
  if (it == c->live.end() || it->second != n) {
    ++c->bad_frees;
    if (it == c->live.end()) return;  // never free what we did not hand out
  }
  c->live_bytes -= it->second;
  c->live.erase(it);
  std::free(p);
}

tblob_allocator hook_for(CountingAllocator *c) {
  tblob_allocator a = TBLOB_ALLOCATOR_INIT;
  a.alloc = ca_alloc;
  a.free = ca_free;
  a.opaque = c;
  return a;
}

// Opens through `open` with an allocator that fails the Nth call, for every N until the
// open succeeds; every failure must be TBLOB_E_OUT_OF_MEMORY with nothing leaked.
template <class Open>
void fail_each_allocation(Open open, const char *what) {
  SCOPED_TRACE(what);
  CountingAllocator ok;
  tblob_allocator ah = hook_for(&ok);
  tblob_model *m = nullptr;
  ASSERT_EQ(open(&ah, &m), TBLOB_OK);
  const size_t k = ok.calls;
  ASSERT_GT(k, 0u);
  const uint64_t count = tblob_model_tensor_count(m);
  tblob_model_close(m);
  EXPECT_TRUE(ok.live.empty());
  EXPECT_EQ(ok.bad_frees, 0u);
  for (int after = 0; after < 2; ++after) {
    for (size_t n = 1; n <= k; ++n) {
      CountingAllocator c;
      c.fail_at = n;
      c.fail_after = after != 0;
      tblob_allocator h = hook_for(&c);
      tblob_model *mm = reinterpret_cast<tblob_model *>(&c);
      const tblob_status s = open(&h, &mm);
      EXPECT_EQ(s, TBLOB_E_OUT_OF_MEMORY) << "failing allocation " << n << " of " << k << " gave "
                                           << tblob_status_name(s);
      if (s == TBLOB_OK) {
        tblob_model_close(mm);
      } else {
        EXPECT_EQ(mm, nullptr) << "allocation " << n;
      }
      EXPECT_EQ(c.failed, after ? c.calls - n + 1 : 1u) << "allocation " << n;
      EXPECT_TRUE(c.live.empty()) << "leak after failing allocation " << n << ": " << c.live.size() << " blocks";
      EXPECT_EQ(c.bad_frees, 0u) << "allocation " << n;
    }
  }
  // One more than needed: success, same table.
  CountingAllocator c;
  c.fail_at = k + 1;
  tblob_allocator h = hook_for(&c);
  ASSERT_EQ(open(&h, &m), TBLOB_OK);
  EXPECT_EQ(tblob_model_tensor_count(m), count);
  tblob_model_close(m);
  EXPECT_TRUE(c.live.empty());
}

// ------------------------------------------------------------------------------------------
// Sharded checkpoints.
struct Shards {
  std::string dir;
  std::vector<std::string> files;        // shard file names
  std::vector<std::string> file_bytes;
  std::map<std::string, std::pair<int, std::string>> tensors;  // decoded name -> (shard, bytes)
};

std::string index_json(const std::vector<std::pair<std::string, std::string>> &weight_map,
                       const std::string &metadata = "{\"total_size\": 1234}") {
  std::string s = "{\n  \"metadata\": " + metadata + ",\n  \"weight_map\": {\n";
  for (size_t i = 0; i < weight_map.size(); ++i)
    s += "    \"" + weight_map[i].first + "\": \"" + weight_map[i].second + "\"" + (i + 1 < weight_map.size() ? ",\n" : "\n");
  return s + "  }\n}\n";
}

const char *kShard[3] = {"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                         "model-00003-of-00003.safetensors"};

// Three shards: (raw JSON name, decoded name, dtype, shape) per shard.
struct ShardTensor {
  std::string raw, decoded, dtype;
  std::vector<uint64_t> shape;
};

std::vector<std::vector<ShardTensor>> default_layout() {
  return {
      {{"embed", "embed", "F32", {2, 2}}, {"caf\\u00e9", "caf\xC3\xA9", "U8", {3}}, {"z0", "z0", "F16", {0}}},
      {{"layer.0.w", "layer.0.w", "BF16", {2, 3}}, {"layer.0.b", "layer.0.b", "I64", {1}}},
      {{"head", "head", "F4", {4, 2}}, {"norm", "norm", "F64", {2}}},
  };
}

Shards make_shards(TempDir &t, const std::string &name, const std::vector<std::vector<ShardTensor>> &layout,
                   const std::vector<std::pair<std::string, std::string>> &weight_map_override = {},
                   bool write_index = true, const std::string &metadata = "{\"total_size\": 1234}") {
  Shards s;
  s.dir = t.mkdir(name);
  std::vector<std::pair<std::string, std::string>> wm;
  for (size_t i = 0; i < layout.size(); ++i) {
    std::vector<Spec> specs;
    for (const ShardTensor &st : layout[i]) {
      Spec sp;
      sp.name = st.raw;
      sp.dtype = st.dtype;
      sp.shape = st.shape;
      uint64_t el = 1;
      for (uint64_t d : st.shape) el *= d;
      sp.data = std::string(static_cast<size_t>(el * dtype_bits(st.dtype) / 8), static_cast<char>('a' + i));
      for (size_t k = 0; k < sp.data.size(); ++k) sp.data[k] = static_cast<char>(sp.data[k] + k % 7);
      specs.push_back(sp);
      s.tensors[st.decoded] = {static_cast<int>(i), sp.data};
      wm.push_back({st.raw, kShard[i]});
    }
    std::vector<std::pair<std::string, std::string>> meta;
    if (i == 0) meta = {{"format", "pt"}, {"first", "1"}};
    if (i == 1) meta = {{"format", "tf"}, {"second", "2"}};
    const std::string bytes_ = write_like_reference(&specs, meta);
    t.write(name + "/" + kShard[i], bytes_);
    s.files.push_back(kShard[i]);
    s.file_bytes.push_back(bytes_);
  }
  if (!weight_map_override.empty()) wm = weight_map_override;
  if (write_index) t.write(name + "/model.safetensors.index.json", index_json(wm, metadata));
  return s;
}

tblob_status open_status(const std::string &path, tblob_diag *d = nullptr, const tblob_open_options *o = nullptr) {
  tblob_model *m = nullptr;
  tblob_status s = tblob_model_open(path.c_str(), o, &m, d);
  if (s == TBLOB_OK) {
    EXPECT_NE(m, nullptr);
  } else {
    EXPECT_EQ(m, nullptr);
  }
  tblob_model_close(m);
  return s;
}

}  // namespace

// ==========================================================================================
// Limits
// ==========================================================================================

TEST(Limits, defaults_match_the_reference) {
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  EXPECT_EQ(o.struct_size, sizeof(tblob_open_options));
  EXPECT_EQ(o.max_header_bytes, 100000000u);
  EXPECT_EQ(o.max_json_depth, 128u);
  EXPECT_EQ(o.max_tensors, UINT64_MAX);
  EXPECT_EQ(o.max_name_bytes, UINT64_MAX);
  EXPECT_EQ(o.max_rank, UINT32_MAX);
  EXPECT_EQ(o.mode, static_cast<uint32_t>(TBLOB_OPEN_MAP));
  EXPECT_EQ(o.allocator, nullptr);
  // Explicit defaults and NULL options behave the same on a reference file.
  const std::string f = file(H({T("test", "I32", {2, 2}, 0, 16)}), Z(16));
  CHECK_ST(f, ok(), &o);
}

TEST(Limits, header_bytes) {
  const std::string h = H({T("test", "I32", {2, 2}, 0, 16)});
  const std::string f = file(h, Z(16));
  tblob_open_options o = defaults();
  o.max_header_bytes = 60;
  CHECK_ST(f, ok(), &o);
  o.max_header_bytes = 59;
  CHECK_ST(f, err(TBLOB_E_LIMIT_HEADER_BYTES), &o);
  o.max_header_bytes = 0;
  CHECK_ST(f, err(TBLOB_E_LIMIT_HEADER_BYTES), &o);
  CHECK_ST(file("{}"), err(TBLOB_E_LIMIT_HEADER_BYTES), &o);
  // Checked at step 2: before the buffer length.
  o.max_header_bytes = 10;
  CHECK_ST(file_n(1000, "{}"), err(TBLOB_E_LIMIT_HEADER_BYTES), &o);
  // The format cap comes first and cannot be raised.
  o.max_header_bytes = UINT64_MAX;
  CHECK_ST(file_n(100000001, "{}"), err(TBLOB_E_HEADER_TOO_LARGE), &o);
  o.max_header_bytes = 50;
  CHECK_ST(file_n(100000001, "{}"), err(TBLOB_E_HEADER_TOO_LARGE), &o);
}

TEST(Limits, tensors) {
  const std::string f = file(H({M({{"a", "b"}, {"c", "d"}}), T("x", "U8", {1}, 0, 1), T("y", "U8", {1}, 1, 2),
                                T("z", "U8", {1}, 2, 3)}),
                             "xyz");
  tblob_open_options o = defaults();
  o.max_tensors = 3;  // metadata entries do not count
  CHECK_ST(f, ok(), &o);
  o.max_tensors = 2;
  CHECK_ST(f, err(TBLOB_E_LIMIT_TENSORS), &o);
  o.max_tensors = 0;
  CHECK_ST(f, err(TBLOB_E_LIMIT_TENSORS), &o);
  CHECK_ST(file("{\"__metadata__\":{\"a\":\"b\"}}"), ok(), &o);
}

TEST(Limits, rank) {
  const std::string f = file(H({T("s", "U8", {}, 0, 1), T("t", "U8", {1, 2, 3}, 1, 7)}), Z(7));
  tblob_open_options o = defaults();
  o.max_rank = 3;
  CHECK_ST(f, ok(), &o);
  o.max_rank = 2;
  CHECK_ST(f, err(TBLOB_E_LIMIT_RANK), &o);
  o.max_rank = 0;
  CHECK_ST(f, err(TBLOB_E_LIMIT_RANK), &o);
  CHECK_ST(file(H({T("s", "U8", {}, 0, 1)}), Z(1)), ok(), &o);
}

TEST(Limits, name_bytes) {
  tblob_open_options o = defaults();
  o.max_name_bytes = 3;
  CHECK_ST(file(H({T("abc", "U8", {1}, 0, 1)}), Z(1)), ok(), &o);
  CHECK_ST(file(H({T("abcd", "U8", {1}, 0, 1)}), Z(1)), err(TBLOB_E_LIMIT_NAME_BYTES), &o);
  // Counted after unescaping: 8 raw bytes, 3 decoded.
  CHECK_ST(file(H({T("\\u0061bc", "U8", {1}, 0, 1)}), Z(1)), ok(), &o);
  // ... and in UTF-8 bytes: U+00E9 U+00E9 is 4 bytes.
  CHECK_ST(file(H({T("\\u00e9\\u00e9", "U8", {1}, 0, 1)}), Z(1)), err(TBLOB_E_LIMIT_NAME_BYTES), &o);
  o.max_name_bytes = 0;
  CHECK_ST(file(H({T("", "U8", {1}, 0, 1)}), Z(1)), ok(), &o);
  CHECK_ST(file(H({T("a", "U8", {1}, 0, 1)}), Z(1)), err(TBLOB_E_LIMIT_NAME_BYTES), &o);
}

TEST(Limits, name_bytes_metadata_keys) {
  // Metadata keys count, metadata values do not; the reserved key "__metadata__" itself is
  // neither a tensor name nor a metadata key and must not be held against the limit.
  tblob_open_options o = defaults();
  o.max_name_bytes = 4;
  CHECK_ST(file("{\"__metadata__\":{\"abcd\":\"a long value\"}}"), ok(), &o);
  CHECK_ST(file("{\"__metadata__\":{\"abcde\":\"v\"}}"), err(TBLOB_E_LIMIT_NAME_BYTES), &o);
  CHECK_ST(file("{\"__metadata__\":null," + T("t", "U8", {1}, 0, 1) + "}", "x"), ok(), &o);
}

TEST(Limits, json_depth) {
  const std::string tensor = file(H({T("t", "U8", {1}, 0, 1)}), Z(1));  // 3 levels (shape)
  const std::string meta = file("{\"__metadata__\":{\"a\":\"b\"}}");     // 2 levels
  const std::string empty = file("{}");                                   // 1 level
  tblob_open_options o = defaults();
  o.max_json_depth = 4;  // at most 3 open containers
  CHECK_ST(tensor, ok(), &o);
  CHECK_ST(file("{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":[]}}", Z(1)), ok(), &o);
  CHECK_ST(file("{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":[[]]}}", Z(1)),
        err(TBLOB_E_LIMIT_JSON_DEPTH), &o);
  CHECK_ST(file("{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":{\"a\":{}}}}", Z(1)),
        err(TBLOB_E_LIMIT_JSON_DEPTH), &o);
  CHECK_ST(file(one_shape("[[1]]"), Z(1)), err(TBLOB_E_LIMIT_JSON_DEPTH), &o);
  o.max_json_depth = 3;
  CHECK_ST(meta, ok(), &o);
  CHECK_ST(tensor, err(TBLOB_E_LIMIT_JSON_DEPTH), &o);
  o.max_json_depth = 2;
  CHECK_ST(empty, ok(), &o);
  CHECK_ST(meta, err(TBLOB_E_LIMIT_JSON_DEPTH), &o);
  o.max_json_depth = 1;
  CHECK_ST(empty, err(TBLOB_E_LIMIT_JSON_DEPTH), &o);
  o.max_json_depth = 0;
  CHECK_ST(empty, err(TBLOB_E_LIMIT_JSON_DEPTH), &o);
  // A limit above the default raises it (serde's 128 is only the default).
  o.max_json_depth = 300;
  CHECK_ST(file("{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":" + nested("[", "]", 200) + "}}", Z(1)),
        ok(), &o);
  CHECK_ST(file("{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":" + nested("[", "]", 297) + "}}", Z(1)),
        ok(), &o);
  CHECK_ST(file("{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":" + nested("[", "]", 298) + "}}", Z(1)),
        err(TBLOB_E_LIMIT_JSON_DEPTH), &o);
  // Huge limits are safe.
  o.max_json_depth = UINT32_MAX;
  CHECK_ST(file(nested("[", "]", 100000)), err(TBLOB_E_LIMIT_JSON_DEPTH), &o);
}

TEST(Limits, compact_preset) {
  tblob_open_options c = TBLOB_OPEN_OPTIONS_COMPACT_INIT;
  EXPECT_EQ(c.struct_size, sizeof(tblob_open_options));
  EXPECT_EQ(c.max_header_bytes, 16777216u);
  EXPECT_EQ(c.max_tensors, 65536u);
  EXPECT_EQ(c.max_name_bytes, 1024u);
  EXPECT_EQ(c.max_rank, 8u);
  EXPECT_EQ(c.max_json_depth, 32u);
  EXPECT_EQ(c.max_files, 256u);
  // Typical files pass.
  CHECK_ST(file(H({M({{"format", "pt"}}), T("model.w", "F16", {8, 8, 2}, 0, 256)}), Z(256)), ok(), &c);
  CHECK_ST(rich_file(), ok(), &c);
  // Each limit.
  CHECK_ST(file_n(16777217, "{}"), err(TBLOB_E_LIMIT_HEADER_BYTES), &c);
  CHECK_ST(file(H({T("t", "U8", std::vector<uint64_t>(8, 1), 0, 1)}), Z(1)), ok(), &c);
  CHECK_ST(file(H({T("t", "U8", std::vector<uint64_t>(9, 1), 0, 1)}), Z(1)), err(TBLOB_E_LIMIT_RANK), &c);
  CHECK_ST(file(H({T(std::string(1024, 'n'), "U8", {1}, 0, 1)}), Z(1)), ok(), &c);
  CHECK_ST(file(H({T(std::string(1025, 'n'), "U8", {1}, 0, 1)}), Z(1)), err(TBLOB_E_LIMIT_NAME_BYTES), &c);
  CHECK_ST(file("{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":" + nested("[", "]", 29) + "}}", Z(1)),
        ok(), &c);
  CHECK_ST(file("{\"t\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1],\"x\":" + nested("[", "]", 30) + "}}", Z(1)),
        err(TBLOB_E_LIMIT_JSON_DEPTH), &c);
  // 65,536 tensors pass, 65,537 do not (all zero-size, so the data region is empty).
  std::string h = "{";
  for (int i = 0; i < 65537; ++i) {
    if (i == 65536) {
      const std::string at_limit = h.substr(0, h.size() - 1) + "}";
      Expect e = ok();
      e.files = false;
      CHECK_ST(file(at_limit), e, &c);
    }
    h += T("t" + std::to_string(i), "U8", {0}, 0, 0) + ",";
  }
  h.back() = '}';
  Expect e = err(TBLOB_E_LIMIT_TENSORS);
  e.files = false;
  CHECK_ST(file(h), e, &c);
  // The rich file through the default options has the same table.
  CHECK_ST(rich_file(), ok());
}

TEST(Limits, older_smaller_options_struct) {
  // A caller built against a header with fewer fields: the rest keep their defaults.
  tblob_open_options o = TBLOB_OPEN_OPTIONS_INIT;
  o.max_rank = 1;  // beyond struct_size: ignored
  o.struct_size = static_cast<uint32_t>(offsetof(tblob_open_options, max_tensors));
  const std::string f = file(H({T("t", "U8", {1, 1}, 0, 1)}), Z(1));
  CHECK_ST(f, ok(), &o);
  o.struct_size = 4;  // not even a mode
  tblob_model *m = nullptr;
  EXPECT_EQ(tblob_model_open_memory(f.data(), f.size(), &o, &m, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(tblob_st_scan(reinterpret_cast<const uint8_t *>(f.data()), f.size(), &o, nullptr, nullptr, nullptr, 0,
                          nullptr, nullptr),
            TBLOB_E_INVALID_ARGUMENT);
  o.struct_size = 0;
  EXPECT_EQ(tblob_model_open("/nonexistent", &o, &m, nullptr), TBLOB_E_INVALID_ARGUMENT);
  // An invalid mode.
  tblob_open_options bad = TBLOB_OPEN_OPTIONS_INIT;
  bad.mode = 7;
  EXPECT_EQ(tblob_model_open_memory(f.data(), f.size(), &bad, &m, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_model_open(tmp().write("mode.safetensors", f).c_str(), &bad, &m, nullptr), TBLOB_E_INVALID_ARGUMENT);
}

// ==========================================================================================
// Allocator hook
// ==========================================================================================

TEST(Allocator, counting_allocator_sees_every_block) {
  const std::string f = rich_file();
  CountingAllocator c;
  tblob_allocator h = hook_for(&c);
  tblob_open_options o = defaults();
  o.allocator = &h;
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), &o, &m, nullptr), TBLOB_OK);
  EXPECT_GT(c.calls, 0u);
  EXPECT_FALSE(c.live.empty());
  // Queries allocate nothing.
  const size_t before = c.calls;
  for (uint64_t i = 0; i < tblob_model_tensor_count(m); ++i) {
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(m, i, &info, nullptr), TBLOB_OK);
    uint64_t idx;
    ASSERT_EQ(tblob_tensor_find(m, info.name, info.name_len, &idx, nullptr), TBLOB_OK);
    const void *d;
    uint64_t n;
    ASSERT_EQ(tblob_tensor_data(m, i, &d, &n, nullptr), TBLOB_OK);
  }
  EXPECT_EQ(c.calls, before);
  tblob_model_close(m);
  EXPECT_TRUE(c.live.empty());
  EXPECT_EQ(c.bad_frees, 0u);
  EXPECT_EQ(c.frees, c.calls);
  // The read mode's copy of the file also comes from the hook.
  const std::string path = tmp().write("rich.safetensors", f);
  CountingAllocator r;
  tblob_allocator hr = hook_for(&r);
  o.allocator = &hr;
  o.mode = TBLOB_OPEN_READ;
  ASSERT_EQ(tblob_model_open(path.c_str(), &o, &m, nullptr), TBLOB_OK);
  EXPECT_GE(r.peak_bytes, f.size());
  tblob_model_close(m);
  EXPECT_TRUE(r.live.empty());
  EXPECT_EQ(r.bad_frees, 0u);
}

TEST(Allocator, failing_nth_allocation_memory) {
  const std::string f = rich_file(300);
  fail_each_allocation(
      [&](const tblob_allocator *a, tblob_model **m) {
        tblob_open_options o = defaults();
        o.allocator = a;
        return tblob_model_open_memory(f.data(), f.size(), &o, m, nullptr);
      },
      "open_memory");
}

TEST(Allocator, failing_nth_allocation_paths) {
  const std::string path = tmp().write("rich300.safetensors", rich_file(300));
  for (uint32_t mode : {static_cast<uint32_t>(TBLOB_OPEN_MAP), static_cast<uint32_t>(TBLOB_OPEN_READ)}) {
    fail_each_allocation(
        [&](const tblob_allocator *a, tblob_model **m) {
          tblob_open_options o = defaults();
          o.allocator = a;
          o.mode = mode;
          tblob_diag d = TBLOB_DIAG_INIT;
          tblob_status s = tblob_model_open(path.c_str(), &o, m, &d);
          if (s != TBLOB_OK) {
            EXPECT_EQ(d.status, s);
            EXPECT_GT(std::strlen(d.message), 0u);
          }
          return s;
        },
        mode == TBLOB_OPEN_MAP ? "open_path(map)" : "open_path(read)");
  }
}

TEST(Allocator, failing_nth_allocation_sharded) {
  TempDir t;
  Shards s = make_shards(t, "ckpt", default_layout());
  for (const std::string &p : {s.dir, s.dir + "/model.safetensors.index.json"}) {
    for (uint32_t mode : {static_cast<uint32_t>(TBLOB_OPEN_MAP), static_cast<uint32_t>(TBLOB_OPEN_READ)}) {
      fail_each_allocation(
          [&](const tblob_allocator *a, tblob_model **m) {
            tblob_open_options o = defaults();
            o.allocator = a;
            o.mode = mode;
            return tblob_model_open(p.c_str(), &o, m, nullptr);
          },
          p.c_str());
    }
  }
}

TEST(Allocator, errors_free_everything) {
  // Failing opens (not OOM) release what they took.
  CountingAllocator c;
  tblob_allocator h = hook_for(&c);
  tblob_open_options o = defaults();
  o.allocator = &h;
  tblob_model *m = nullptr;
  for (const std::string &f :
       {file(H({T("a", "U8", {1}, 0, 1), T("a", "U8", {1}, 1, 2)}), "xy"), file(H({T("a", "U8", {2}, 0, 2)}), "x"),
        file("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}"), file(H({T("a", "U8", {1}, 0, 1)}) + "x", "x"),
        rich_file() + "trailing"}) {
    EXPECT_NE(tblob_model_open_memory(f.data(), f.size(), &o, &m, nullptr), TBLOB_OK);
    EXPECT_EQ(m, nullptr);
    EXPECT_TRUE(c.live.empty());
  }
  EXPECT_EQ(c.bad_frees, 0u);
  EXPECT_GT(c.calls, 0u);
}

// ==========================================================================================
// Lookups, metadata, data
// ==========================================================================================

TEST(Lookup, find_every_tensor_and_missing_names) {
  std::vector<std::string> members;
  std::vector<std::string> names;
  std::mt19937 rng(5);
  for (int i = 0; i < 2000; ++i) {
    std::string n = "blk." + std::to_string(i) + (i % 3 ? ".attn_q.weight" : ".ffn_down.weight");
    names.push_back(n);
    members.push_back(T(n, "U8", {1}, static_cast<uint64_t>(i), static_cast<uint64_t>(i + 1)));
  }
  // Names that are prefixes of each other, and with embedded NUL.
  const std::vector<std::pair<std::string, std::string>> special = {
      {"", ""}, {"a", "a"}, {"ab", "ab"}, {"abc", "abc"}, {"a\\u0000b", std::string("a\0b", 3)}, {"a\\u0000", std::string("a\0", 2)}};
  for (size_t i = 0; i < special.size(); ++i)
    members.push_back(T(special[i].first, "U8", {1}, 2000 + i, 2001 + i));
  const std::string f = file(H(members), Z(2000 + special.size()));
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, &m, nullptr), TBLOB_OK);
  ASSERT_EQ(tblob_model_tensor_count(m), 2000 + special.size());
  for (size_t i = 0; i < names.size(); ++i) {
    uint64_t idx = UINT64_MAX;
    ASSERT_EQ(tblob_tensor_find(m, names[i].data(), names[i].size(), &idx, nullptr), TBLOB_OK) << names[i];
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(m, idx, &info, nullptr), TBLOB_OK);
    EXPECT_EQ(std::string(info.name, info.name_len), names[i]);
    EXPECT_EQ(info.data_offset, i);
  }
  for (size_t i = 0; i < special.size(); ++i) {
    uint64_t idx = UINT64_MAX;
    ASSERT_EQ(tblob_tensor_find(m, special[i].second.data(), special[i].second.size(), &idx, nullptr), TBLOB_OK) << i;
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(m, idx, &info, nullptr), TBLOB_OK);
    EXPECT_EQ(std::string(info.name, info.name_len), special[i].second);
  }
  // NULL with length 0 is the empty name.
  uint64_t idx = UINT64_MAX;
  EXPECT_EQ(tblob_tensor_find(m, nullptr, 0, &idx, nullptr), TBLOB_OK);
  for (const std::string &miss :
       {std::string("blk.0"), std::string("blk.0.attn_q.weight"), std::string("BLK.1.attn_q.weight"),
        std::string("blk.1.attn_q.weight "), std::string("blk.1.attn_q.weight\0", 20), std::string("abcd"),
        std::string("a\0", 2) + "c", std::string("a\\u0000b"), std::string("b"), std::string(5000, 'x')}) {
    tblob_diag d = TBLOB_DIAG_INIT;
    idx = 12345;
    EXPECT_EQ(tblob_tensor_find(m, miss.data(), miss.size(), &idx, &d), TBLOB_E_NOT_FOUND) << miss;
    EXPECT_EQ(idx, 12345u);
    EXPECT_EQ(d.status, TBLOB_E_NOT_FOUND);
    EXPECT_GT(std::strlen(d.message), 0u);
  }
  tblob_model_close(m);
}

TEST(Lookup, threads_share_a_handle) {
  const std::string f = rich_file(500);
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, &m, nullptr), TBLOB_OK);
  std::atomic<int> bad{0};
  std::vector<std::thread> th;
  for (int t = 0; t < 4; ++t) {
    th.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        for (uint64_t i = static_cast<uint64_t>(t); i < tblob_model_tensor_count(m); i += 1) {
          tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
          uint64_t idx;
          if (tblob_tensor_at(m, i, &info, nullptr) != TBLOB_OK ||
              tblob_tensor_find(m, info.name, info.name_len, &idx, nullptr) != TBLOB_OK || idx != i)
            ++bad;
        }
      }
    });
  }
  for (auto &x : th) x.join();
  EXPECT_EQ(bad.load(), 0);
  tblob_model_close(m);
}

TEST(Lookup, metadata_find_and_at) {
  const std::string f = file(H({M({{"format", "pt"}, {"k\\u00e9y", "v\\u00e9"}, {"empty", ""}, {"nl", "a\\nb"}}),
                                T("t", "U8", {1}, 0, 1)}),
                             "x");
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, &m, nullptr), TBLOB_OK);
  ASSERT_EQ(tblob_metadata_count(m), 4u);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"format", "pt"}, {"k\xC3\xA9y", "v\xC3\xA9"}, {"empty", ""}, {"nl", "a\nb"}};
  for (size_t i = 0; i < want.size(); ++i) {
    const char *k, *v;
    size_t kl, vl;
    ASSERT_EQ(tblob_metadata_at(m, i, &k, &kl, &v, &vl, nullptr), TBLOB_OK);
    EXPECT_EQ(std::string(k, kl), want[i].first);
    EXPECT_EQ(std::string(v, vl), want[i].second);
    ASSERT_EQ(tblob_metadata_find(m, want[i].first.data(), want[i].first.size(), &v, &vl, nullptr), TBLOB_OK);
    EXPECT_EQ(std::string(v, vl), want[i].second);
  }
  const char *k, *v;
  size_t kl, vl;
  EXPECT_EQ(tblob_metadata_at(m, 4, &k, &kl, &v, &vl, nullptr), TBLOB_E_RANGE);
  EXPECT_EQ(tblob_metadata_find(m, "k\\u00e9y", 8, &v, &vl, nullptr), TBLOB_E_NOT_FOUND);  // decoded keys only
  EXPECT_EQ(tblob_metadata_find(m, "t", 1, &v, &vl, nullptr), TBLOB_E_NOT_FOUND);            // a tensor, not a key
  EXPECT_EQ(tblob_metadata_find(m, "", 0, &v, &vl, nullptr), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(tblob_metadata_find(m, nullptr, 0, &v, &vl, nullptr), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(tblob_metadata_find(m, "forma", 5, &v, &vl, nullptr), TBLOB_E_NOT_FOUND);
  tblob_model_close(m);
  // No metadata at all.
  const std::string g = file(H({T("t", "U8", {1}, 0, 1)}), "x");
  ASSERT_EQ(tblob_model_open_memory(g.data(), g.size(), nullptr, &m, nullptr), TBLOB_OK);
  EXPECT_EQ(tblob_metadata_count(m), 0u);
  EXPECT_EQ(tblob_metadata_find(m, "format", 6, &v, &vl, nullptr), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(tblob_metadata_at(m, 0, &k, &kl, &v, &vl, nullptr), TBLOB_E_RANGE);
  tblob_model_close(m);
}

TEST(Lookup, tensor_data_bytes) {
  std::vector<Spec> specs;
  for (int i = 0; i < 30; ++i) {
    Spec s;
    s.name = "t" + std::to_string(i);
    s.dtype = i % 3 == 0 ? "F32" : (i % 3 == 1 ? "U8" : "BF16");
    s.shape = {static_cast<uint64_t>(i % 5), 3};
    const uint64_t el = s.shape[0] * 3;
    for (uint64_t b = 0; b < el * dtype_bits(s.dtype) / 8; ++b) s.data += static_cast<char>((i * 31 + b * 7) & 0xFF);
    specs.push_back(s);
  }
  const std::string f = write_like_reference(&specs);
  uint64_t n;
  std::memcpy(&n, f.data(), 8);
  const std::string path = tmp().write("data.safetensors", f);
  for (int mode = 0; mode < 3; ++mode) {
    tblob_model *m = nullptr;
    tblob_open_options o = defaults();
    if (mode == 0) {
      ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, &m, nullptr), TBLOB_OK);
    } else {
      o.mode = mode == 1 ? TBLOB_OPEN_MAP : TBLOB_OPEN_READ;
      ASSERT_EQ(tblob_model_open(path.c_str(), &o, &m, nullptr), TBLOB_OK);
    }
    const void *base = nullptr;
    for (const Spec &s : specs) {
      uint64_t idx;
      ASSERT_EQ(tblob_tensor_find(m, s.name.data(), s.name.size(), &idx, nullptr), TBLOB_OK);
      const void *d = nullptr;
      uint64_t len = 99;
      ASSERT_EQ(tblob_tensor_data(m, idx, &d, &len, nullptr), TBLOB_OK);
      ASSERT_EQ(len, s.data.size()) << s.name;
      if (len) {
        EXPECT_EQ(std::string(static_cast<const char *>(d), len), s.data) << s.name;
      }
      tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
      ASSERT_EQ(tblob_tensor_at(m, idx, &info, nullptr), TBLOB_OK);
      EXPECT_EQ(info.file_offset, 8 + n + s.begin);
      // One contiguous mapping: pointers differ by the offsets.
      if (!base && d) base = static_cast<const char *>(d) - info.file_offset;
      if (d) {
        EXPECT_EQ(static_cast<const char *>(d), static_cast<const char *>(base) + info.file_offset);
      }
      if (mode == 0) {
        EXPECT_EQ(static_cast<const char *>(d), f.data() + info.file_offset);
      }
    }
    const void *d;
    uint64_t len;
    tblob_diag dg = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_tensor_data(m, specs.size(), &d, &len, &dg), TBLOB_E_RANGE);
    EXPECT_EQ(dg.status, TBLOB_E_RANGE);
    EXPECT_EQ(tblob_tensor_data(m, UINT64_MAX, &d, &len, nullptr), TBLOB_E_RANGE);
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    EXPECT_EQ(tblob_tensor_at(m, specs.size(), &info, nullptr), TBLOB_E_RANGE);
    tblob_model_close(m);
  }
}

TEST(Lookup, read_mode_owns_its_bytes) {
  const std::string f = file(H({T("t", "U8", {4}, 0, 4)}), "abcd");
  const std::string path = tmp().write("owned.safetensors", f);
  tblob_open_options o = defaults();
  o.mode = TBLOB_OPEN_READ;
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open(path.c_str(), &o, &m, nullptr), TBLOB_OK);
  // Replace and shrink the file: the handle keeps its copy.
  tmp().write("owned.safetensors", "xx");
  const void *d;
  uint64_t n;
  ASSERT_EQ(tblob_tensor_data(m, 0, &d, &n, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(static_cast<const char *>(d), n), "abcd");
  tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
  ASSERT_EQ(tblob_tensor_at(m, 0, &info, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(info.name, info.name_len), "t");
  tblob_model_close(m);
}

// ==========================================================================================
// tblob_json_unescape
// ==========================================================================================

namespace {
tblob_status unesc(const std::string &src, std::string *out) {
  char buf[256];
  size_t n = 0;
  tblob_status s = tblob_json_unescape(src.data(), src.size(), buf, sizeof(buf), &n, nullptr);
  if (s == TBLOB_OK) out->assign(buf, n);
  return s;
}
}  // namespace

TEST(Unescape, valid) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", ""},
      {"plain", "plain"},
      {"\\\"\\\\\\/\\b\\f\\n\\r\\t", "\"\\/\b\f\n\r\t"},
      {"\\u0041\\u00e9\\u00E9", "A\xC3\xA9\xC3\xA9"},
      {"\\u0000", std::string(1, '\0')},
      {"\\u007f\\u0080\\u07ff\\u0800\\uffff", "\x7F\xC2\x80\xDF\xBF\xE0\xA0\x80\xEF\xBF\xBF"},
      {"\\ud83d\\ude00", "\xF0\x9F\x98\x80"},
      {"\\uD800\\uDC00", "\xF0\x90\x80\x80"},
      {"\\udbff\\udfff", "\xF4\x8F\xBF\xBF"},
      {"a\\ud83d\\ude00b\\n", "a\xF0\x9F\x98\x80" "b\n"},
      {"\xE4\xB8\xAD", "\xE4\xB8\xAD"},
      {"\\u2028\\u2029", "\xE2\x80\xA8\xE2\x80\xA9"},
  };
  for (const auto &c : cases) {
    std::string out;
    EXPECT_EQ(unesc(c.first, &out), TBLOB_OK) << c.first;
    EXPECT_EQ(out, c.second) << c.first;
  }
}

TEST(Unescape, invalid) {
  for (const std::string &src :
       {std::string("\\ud800"), std::string("\\udc00"), std::string("\\ud800\\u0041"), std::string("\\ud800\\ud800"),
        std::string("\\ud800x"), std::string("\\ud83d\\"), std::string("\\udfff\\ud800"), std::string("\\x"),
        std::string("\\"), std::string("a\\"), std::string("\\u12"), std::string("\\u12G4"), std::string("\\U0041"),
        std::string("\""), std::string("a\"b"), std::string("\x01"), std::string("a\nb"), std::string("\t"),
        std::string("\0", 1)}) {
    std::string out;
    EXPECT_EQ(unesc(src, &out), TBLOB_E_JSON) << testing::PrintToString(src);
  }
}

TEST(Unescape, buffer_too_small) {
  const std::string src = "ab\\u00e9\\ud83d\\ude00";  // 2 + 2 + 4 = 8 bytes decoded
  size_t n = 0;
  EXPECT_EQ(tblob_json_unescape(src.data(), src.size(), nullptr, 0, &n, nullptr), TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(n, 8u);
  char buf[16];
  std::memset(buf, '#', sizeof(buf));
  n = 0;
  EXPECT_EQ(tblob_json_unescape(src.data(), src.size(), buf, 7, &n, nullptr), TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(buf[7], '#') << "wrote past dst_capacity";
  EXPECT_EQ(tblob_json_unescape(src.data(), src.size(), buf, 8, &n, nullptr), TBLOB_OK);
  EXPECT_EQ(n, 8u);
  EXPECT_EQ(std::string(buf, 8), "ab\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(buf[8], '#');
  // Empty input, no buffer.
  EXPECT_EQ(tblob_json_unescape("", 0, nullptr, 0, &n, nullptr), TBLOB_OK);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(tblob_json_unescape(nullptr, 0, nullptr, 0, &n, nullptr), TBLOB_OK);
  // Bad arguments.
  EXPECT_EQ(tblob_json_unescape(nullptr, 3, buf, 8, &n, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_json_unescape(src.data(), src.size(), buf, 8, nullptr, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_json_unescape(src.data(), src.size(), nullptr, 8, &n, nullptr), TBLOB_E_INVALID_ARGUMENT);
}

// ==========================================================================================
// The scanner API
// ==========================================================================================

// Scratch holds tensor records from its start and metadata records from its end, filled in
// one pass: both whole-table checks work at the exact size, at any alignment, and for
// metadata keys before, between and after the tensors.
TEST(Scan, scratch_from_both_ends) {
  struct Case {
    std::string header;
    tblob_status want;
  } cases[] = {
      {H({M({{"k", "1"}, {"j", "2"}, {"k", "3"}}), T("a", "U8", {2}, 0, 2), T("b", "U8", {4}, 2, 6)}), TBLOB_E_METADATA},
      {H({T("a", "U8", {2}, 0, 2), M({{"x", "1"}, {"y", "2"}, {"z", "3"}}), T("b", "U8", {4}, 2, 6)}), TBLOB_OK},
      {H({T("a", "U8", {2}, 0, 2), T("a", "U8", {4}, 2, 6), M({{"x", "1"}, {"y", "2"}})}), TBLOB_E_DUPLICATE_NAME},
      {H({T("a", "U8", {2}, 0, 2), T("b", "U8", {4}, 2, 6), M({{"\u0078", "1"}, {"x", "2"}})}), TBLOB_E_METADATA},
  };
  for (const Case &c : cases) {
    const std::string f = file(c.header, Z(6));
    const uint8_t *buf = reinterpret_cast<const uint8_t *>(f.data());
    tblob_scan_result r = TBLOB_SCAN_RESULT_INIT;
    ASSERT_EQ(tblob_st_scan(buf, f.size(), nullptr, nullptr, nullptr, nullptr, 0, &r, nullptr), TBLOB_OK) << c.header;
    const size_t need = tblob_st_scan_scratch_bytes(r.tensor_count, r.metadata_count);
    std::vector<unsigned char> scratch(need + 16, 0xAB);
    for (size_t shift : {0, 1, 5, 7}) {
      tblob_diag d = TBLOB_DIAG_INIT;
      EXPECT_EQ(tblob_st_scan(buf, f.size(), nullptr, nullptr, nullptr, scratch.data() + shift, need, &r, &d), c.want)
          << c.header << " shift " << shift << ": " << d.message;
      EXPECT_EQ(tblob_st_scan(buf, f.size(), nullptr, nullptr, nullptr, scratch.data() + shift, need - 1, &r, nullptr),
                TBLOB_E_BUFFER_TOO_SMALL);
    }
    // The open path agrees.
    tblob_model *m = nullptr;
    EXPECT_EQ(tblob_model_open_memory(buf, f.size(), nullptr, &m, nullptr), c.want) << c.header;
    tblob_model_close(m);
  }
}

TEST(Scan, events_results_and_cancel) {
  const std::string f = file(H({T("a", "U8", {2}, 0, 2), M({{"k", "v"}}), T("b\\n", "F32", {1}, 2, 6)}), Z(6));
  const uint8_t *buf = reinterpret_cast<const uint8_t *>(f.data());
  // Offsets of the keys.
  ScanCollector c;
  tblob_scan_result r = TBLOB_SCAN_RESULT_INIT;
  std::vector<uint64_t> offsets;
  auto cb = [](void *u, const tblob_scan_event *e) -> int {
    static_cast<std::vector<uint64_t> *>(u)->push_back(e->header_offset);
    return 0;
  };
  ASSERT_EQ(tblob_st_scan(buf, f.size(), nullptr, cb, &offsets, nullptr, 0, &r, nullptr), TBLOB_OK);
  ASSERT_EQ(offsets.size(), 3u);
  for (uint64_t off : offsets) EXPECT_EQ(f[off], '"');
  EXPECT_EQ(f.substr(offsets[0], 3), "\"a\"");
  EXPECT_EQ(f.substr(offsets[1], 3), "\"k\"");  // a metadata entry's key
  EXPECT_EQ(f.substr(offsets[2], 5), "\"b\\n\"");
  EXPECT_EQ(r.tensor_count, 2u);
  EXPECT_EQ(r.metadata_count, 1u);
  EXPECT_EQ(r.header_bytes, f.size() - 8 - 6);
  EXPECT_EQ(r.data_offset, f.size() - 6);
  EXPECT_EQ(r.data_bytes, 6u);
  EXPECT_EQ(r.whole_table_checked, 0u);
  // Cancel at each event.
  for (int stop = 1; stop <= 3; ++stop) {
    ScanCollector cc;
    cc.stop_after = stop;
    EXPECT_EQ(tblob_st_scan(buf, f.size(), nullptr, collect_event, &cc, nullptr, 0, nullptr, nullptr), TBLOB_E_CANCELLED);
    EXPECT_EQ(cc.events, stop);
  }
  // Scratch: exact size works, one byte less is too small, unaligned works.
  const size_t need = tblob_st_scan_scratch_bytes(2, 1);
  std::vector<unsigned char> scratch(need + 16);
  for (size_t shift : {0, 1, 3, 7}) {
    r = TBLOB_SCAN_RESULT_INIT;
    EXPECT_EQ(tblob_st_scan(buf, f.size(), nullptr, nullptr, nullptr, scratch.data() + shift, need, &r, nullptr), TBLOB_OK);
    EXPECT_EQ(r.whole_table_checked, 1u);
  }
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_st_scan(buf, f.size(), nullptr, nullptr, nullptr, scratch.data(), need - 1, &r, &d),
            TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_GT(std::strlen(d.message), 0u);
  EXPECT_EQ(tblob_st_scan(buf, f.size(), nullptr, nullptr, nullptr, scratch.data(), 16, &r, nullptr),
            TBLOB_E_BUFFER_TOO_SMALL);
  // Header errors come before the scratch size.
  const std::string bad = file("{,}");
  EXPECT_EQ(tblob_st_scan(reinterpret_cast<const uint8_t *>(bad.data()), bad.size(), nullptr, nullptr, nullptr,
                          scratch.data(), 16, nullptr, nullptr),
            TBLOB_E_JSON);
  // Saturation.
  EXPECT_EQ(tblob_st_scan_scratch_bytes(UINT64_MAX, 0), SIZE_MAX);
  EXPECT_EQ(tblob_st_scan_scratch_bytes(0, UINT64_MAX), SIZE_MAX);
  EXPECT_GE(tblob_st_scan_scratch_bytes(0, 0), 1u);
  EXPECT_LT(tblob_st_scan_scratch_bytes(1000, 10), 1000u * 256);
  // The empty header with scratch for nothing.
  const std::string e = file("{}");
  std::vector<unsigned char> s0(tblob_st_scan_scratch_bytes(0, 0));
  r = TBLOB_SCAN_RESULT_INIT;
  EXPECT_EQ(tblob_st_scan(reinterpret_cast<const uint8_t *>(e.data()), e.size(), nullptr, nullptr, nullptr, s0.data(),
                          s0.size(), &r, nullptr),
            TBLOB_OK);
  EXPECT_EQ(r.whole_table_checked, 1u);
}

TEST(Scan, cancel_fills_the_diag) {
  // Every failing call fills the caller's diag with the status it returns.
  const std::string f = file(H({T("a", "U8", {2}, 0, 2), M({{"k", "v"}}), T("b", "F32", {1}, 2, 6)}), Z(6));
  for (int stop = 1; stop <= 3; ++stop) {
    ScanCollector cc;
    cc.stop_after = stop;
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_st_scan(reinterpret_cast<const uint8_t *>(f.data()), f.size(), nullptr, collect_event, &cc, nullptr,
                            0, nullptr, &d),
              TBLOB_E_CANCELLED);
    EXPECT_EQ(d.status, TBLOB_E_CANCELLED) << "stop after " << stop;
    EXPECT_GT(std::strlen(d.message), 0u) << "stop after " << stop;
  }
}

TEST(Scan, large_rank_event_shape_json) {
  std::vector<uint64_t> dims(100, 1);
  dims[50] = 3;
  const std::string f = file(H({T("t", "U8", dims, 0, 3)}), "abc");
  struct Seen {
    uint32_t rank = 0;
    const uint64_t *shape = reinterpret_cast<const uint64_t *>(1);
    std::string json;
  } seen;
  auto cb = [](void *u, const tblob_scan_event *e) -> int {
    Seen *s = static_cast<Seen *>(u);
    s->rank = e->rank;
    s->shape = e->shape;
    s->json.assign(e->shape_json, e->shape_json_len);
    return 0;
  };
  ASSERT_EQ(tblob_st_scan(reinterpret_cast<const uint8_t *>(f.data()), f.size(), nullptr, cb, &seen, nullptr, 0,
                          nullptr, nullptr),
            TBLOB_OK);
  EXPECT_EQ(seen.rank, 100u);
  EXPECT_EQ(seen.shape, nullptr);
  EXPECT_EQ(seen.json, shape_text(dims));
  // The model holds all 100 dimensions.
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, &m, nullptr), TBLOB_OK);
  tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
  ASSERT_EQ(tblob_tensor_at(m, 0, &info, nullptr), TBLOB_OK);
  EXPECT_EQ(std::vector<uint64_t>(info.shape, info.shape + info.rank), dims);
  EXPECT_EQ(info.element_count, 3u);
  tblob_model_close(m);
}

// ==========================================================================================
// Sharded checkpoints
// ==========================================================================================

TEST(Sharded, open_directory_and_index) {
  TempDir t;
  Shards s = make_shards(t, "ckpt", default_layout());
  for (const std::string &p : {s.dir, s.dir + "/", s.dir + "/model.safetensors.index.json"}) {
    for (uint32_t mode : {static_cast<uint32_t>(TBLOB_OPEN_MAP), static_cast<uint32_t>(TBLOB_OPEN_READ)}) {
      SCOPED_TRACE(p);
      tblob_open_options o = defaults();
      o.mode = mode;
      tblob_model *m = nullptr;
      tblob_diag d = TBLOB_DIAG_INIT;
      ASSERT_EQ(tblob_model_open(p.c_str(), &o, &m, &d), TBLOB_OK) << d.message;
      EXPECT_EQ(tblob_model_format(m), static_cast<uint32_t>(TBLOB_FORMAT_SAFETENSORS_SHARDED));
      EXPECT_STREQ(tblob_format_name(tblob_model_format(m)), "safetensors-sharded");
      ASSERT_EQ(tblob_model_file_count(m), 3u);
      for (uint32_t i = 0; i < 3; ++i) {
        const char *fp;
        size_t fl;
        ASSERT_EQ(tblob_model_file_path(m, i, &fp, &fl, nullptr), TBLOB_OK);
        const std::string path(fp, fl);
        EXPECT_EQ(path.substr(path.rfind('/') + 1), kShard[i]);
        struct stat a, b;
        ASSERT_EQ(::stat(path.c_str(), &a), 0) << path;
        ASSERT_EQ(::stat((s.dir + "/" + kShard[i]).c_str(), &b), 0);
        EXPECT_EQ(a.st_ino, b.st_ino);
      }
      const char *fp;
      size_t fl;
      EXPECT_EQ(tblob_model_file_path(m, 3, &fp, &fl, nullptr), TBLOB_E_RANGE);
      ASSERT_EQ(tblob_model_tensor_count(m), s.tensors.size());
      uint32_t prev_file = 0;
      for (uint64_t i = 0; i < tblob_model_tensor_count(m); ++i) {
        tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
        ASSERT_EQ(tblob_tensor_at(m, i, &info, nullptr), TBLOB_OK);
        const std::string name(info.name, info.name_len);
        ASSERT_TRUE(s.tensors.count(name)) << name;
        const auto &want = s.tensors[name];
        EXPECT_EQ(info.file_index, static_cast<uint32_t>(want.first)) << name;
        EXPECT_GE(info.file_index, prev_file) << "table is file by file";
        prev_file = info.file_index;
        uint64_t n;
        std::memcpy(&n, s.file_bytes[info.file_index].data(), 8);
        EXPECT_EQ(info.file_offset, 8 + n + info.data_offset);
        const void *dp;
        uint64_t dl;
        ASSERT_EQ(tblob_tensor_data(m, i, &dp, &dl, nullptr), TBLOB_OK);
        EXPECT_EQ(std::string(static_cast<const char *>(dp), dl), want.second) << name;
        EXPECT_EQ(std::string(static_cast<const char *>(dp), dl),
                  s.file_bytes[info.file_index].substr(static_cast<size_t>(info.file_offset), dl));
        uint64_t idx;
        ASSERT_EQ(tblob_tensor_find(m, name.data(), name.size(), &idx, nullptr), TBLOB_OK);
        EXPECT_EQ(idx, i);
      }
      // Metadata: the union, first shard winning.
      const char *v;
      size_t vl;
      ASSERT_EQ(tblob_metadata_find(m, "format", 6, &v, &vl, nullptr), TBLOB_OK);
      EXPECT_EQ(std::string(v, vl), "pt");
      ASSERT_EQ(tblob_metadata_find(m, "first", 5, &v, &vl, nullptr), TBLOB_OK);
      ASSERT_EQ(tblob_metadata_find(m, "second", 6, &v, &vl, nullptr), TBLOB_OK);
      EXPECT_EQ(std::string(v, vl), "2");
      EXPECT_EQ(tblob_metadata_count(m), 3u);
      EXPECT_EQ(tblob_metadata_find(m, "total_size", 10, &v, &vl, nullptr), TBLOB_E_NOT_FOUND);
      tblob_model_close(m);
    }
  }
}

TEST(Sharded, index_with_large_metadata_opens_by_its_path) {
  // transformers writes the index with sort_keys=True: "metadata" comes before
  // "weight_map". A metadata object of a few KB must not hide the index from detection.
  TempDir t;
  std::string meta = "{\"total_size\": 1234";
  for (int i = 0; i < 200; ++i) meta += ", \"key_" + std::to_string(i) + "\": \"some descriptive value\"";
  meta += "}";
  Shards s = make_shards(t, "ckpt", default_layout(), {}, true, meta);
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_status(s.dir, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(open_status(s.dir + "/model.safetensors.index.json", &d), TBLOB_OK) << d.message;
}

TEST(Sharded, errors) {
  TempDir t;
  const auto layout = default_layout();
  std::vector<std::pair<std::string, std::string>> wm;
  for (size_t i = 0; i < layout.size(); ++i)
    for (const ShardTensor &st : layout[i]) wm.push_back({st.raw, kShard[i]});
  int counter = 0;
  auto expect_status = [&](const std::vector<std::pair<std::string, std::string>> &w, tblob_status want,
                           const std::vector<std::vector<ShardTensor>> &lay, const char *what) {
    SCOPED_TRACE(what);
    Shards s = make_shards(t, "c" + std::to_string(counter++), lay, w);
    for (const std::string &p : {s.dir, s.dir + "/model.safetensors.index.json"}) {
      tblob_diag d = TBLOB_DIAG_INIT;
      EXPECT_EQ(open_status(p, &d), want) << p << ": " << tblob_status_name(d.status) << " " << d.message;
      EXPECT_EQ(d.status, want);
      EXPECT_GT(std::strlen(d.message), 0u);
    }
  };
  // weight_map names a tensor no shard holds.
  auto w = wm;
  w.push_back({"ghost", kShard[1]});
  expect_status(w, TBLOB_E_SHARD_INDEX, layout, "missing tensor");
  // A tensor in the wrong shard.
  w = wm;
  w[0].second = kShard[2];
  expect_status(w, TBLOB_E_SHARD_INDEX, layout, "wrong shard");
  // A tensor the index does not list.
  w = wm;
  w.erase(w.begin() + 3);
  expect_status(w, TBLOB_E_SHARD_INDEX, layout, "unlisted tensor");
  // A tensor listed twice.
  w = wm;
  w.push_back(wm[2]);
  expect_status(w, TBLOB_E_SHARD_INDEX, layout, "listed twice");
  // Shard names that leave the directory or are not plain names.
  for (const char *bad : {"../x", "../model-00001-of-00003.safetensors", "sub/x.safetensors", "/etc/passwd", "..", ".",
                          "", "a\\\\b", "x\\u0000y", "..\\u002fx"}) {
    w = wm;
    w.back().second = bad;
    expect_status(w, TBLOB_E_SHARD_INDEX, layout, bad);
  }
  // The same tensor name in two shards.
  auto dup = layout;
  dup[2].push_back({"embed", "embed", "U8", {1}});
  w = wm;
  expect_status(w, TBLOB_E_DUPLICATE_NAME, dup, "duplicate across shards");
  auto dup2 = layout;
  dup2[1].push_back({"caf\xC3\xA9", "caf\xC3\xA9", "U8", {1}});  // raw vs escaped in shard 0
  expect_status(w, TBLOB_E_DUPLICATE_NAME, dup2, "duplicate across shards after unescaping");
  // A shard file that is missing.
  w = wm;
  w.push_back({"late", "model-00004-of-00003.safetensors"});
  expect_status(w, TBLOB_E_NOT_FOUND, layout, "missing shard file");
}

TEST(Sharded, invalid_shard_or_index) {
  TempDir t;
  Shards s = make_shards(t, "bad", default_layout());
  // A truncated shard reports its own error.
  std::string b = s.file_bytes[1];
  t.write("bad/" + std::string(kShard[1]), b.substr(0, b.size() - 1));
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_status(s.dir, &d), TBLOB_E_TRUNCATED) << d.message;
  t.write("bad/" + std::string(kShard[1]), b + "x");
  EXPECT_EQ(open_status(s.dir, &d), TBLOB_E_TRAILING_BYTES) << d.message;
  t.write("bad/" + std::string(kShard[1]), b);
  EXPECT_EQ(open_status(s.dir, &d), TBLOB_OK) << d.message;
  // Broken index JSON; no weight_map; a non-string value.
  const std::string idx = "bad/model.safetensors.index.json";
  for (const std::string &j : {std::string("{\"weight_map\": {\"embed\": \"x\",}}"), std::string("{\"weight_map\": "),
                               std::string("{\"weight_map\": {\"embed\": 1}}"), std::string("{\"weight_map\": []}"),
                               std::string("{\"metadata\": {}}"), std::string("[\"weight_map\"]"), std::string("{}"),
                               std::string("{\"weight_map\": {}, \"weight_map\": {}}")}) {
    t.write(idx, j);
    EXPECT_EQ(open_status(s.dir, &d), TBLOB_E_SHARD_INDEX) << j << " " << d.message;
  }
  // A directory without an index, and paths that do not exist.
  const std::string empty = t.mkdir("empty");
  EXPECT_EQ(open_status(empty, &d), TBLOB_E_UNKNOWN_FORMAT);
  EXPECT_GT(std::strlen(d.message), 0u);
  EXPECT_EQ(open_status(t.sub("nope"), &d), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(open_status(t.sub("nope/model.safetensors.index.json"), &d), TBLOB_E_NOT_FOUND);
}

TEST(Sharded, long_and_escaped_names) {
  // Tensor names longer than the index walker's stack buffer, escaped differently in the
  // shard header and in the index.
  TempDir t;
  const std::string longname(5000, 'L');
  auto layout = default_layout();
  layout[1].push_back({longname, longname, "U8", {2}});
  layout[2].push_back({"\\u00e9" + longname, "\xC3\xA9" + longname, "U8", {1}});
  std::vector<std::pair<std::string, std::string>> wm;
  for (size_t i = 0; i < layout.size(); ++i)
    for (const ShardTensor &st : layout[i]) wm.push_back({st.raw, kShard[i]});
  wm[wm.size() - 1].first = "\xC3\xA9" + longname;  // raw UTF-8 in the index
  wm[1].first = "caf\xC3\xA9";                       // raw in the index, escaped in the shard
  Shards s = make_shards(t, "long", layout, wm);
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open(s.dir.c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
  uint64_t idx;
  EXPECT_EQ(tblob_tensor_find(m, longname.data(), longname.size(), &idx, nullptr), TBLOB_OK);
  const std::string e = "\xC3\xA9" + longname;
  EXPECT_EQ(tblob_tensor_find(m, e.data(), e.size(), &idx, nullptr), TBLOB_OK);
  tblob_model_close(m);
  // The long name listed under the wrong shard is still caught.
  wm[5].second = kShard[0];  // longname, held by shard 2
  Shards s2 = make_shards(t, "long2", layout, wm);
  EXPECT_EQ(open_status(s2.dir, &d), TBLOB_E_SHARD_INDEX) << d.message;
}

TEST(Sharded, limit_files) {
  TempDir t;
  Shards s = make_shards(t, "ckpt", default_layout());
  tblob_open_options o = defaults();
  o.max_files = 3;
  EXPECT_EQ(open_status(s.dir, nullptr, &o), TBLOB_OK);
  o.max_files = 2;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_status(s.dir, &d, &o), TBLOB_E_LIMIT_FILES);
  EXPECT_GT(std::strlen(d.message), 0u);
  // Tensor and rank limits apply across shards.
  o = defaults();
  o.max_tensors = 7;
  EXPECT_EQ(open_status(s.dir, nullptr, &o), TBLOB_OK);
  o.max_tensors = 6;
  EXPECT_EQ(open_status(s.dir, nullptr, &o), TBLOB_E_LIMIT_TENSORS);
  o = defaults();
  o.max_rank = 1;
  EXPECT_EQ(open_status(s.dir, nullptr, &o), TBLOB_E_LIMIT_RANK);
}

TEST(Sharded, bundled_example) {
  // examples/sharded: two shards written by the Python package.
  const char *src = std::getenv("TBLOB_EXAMPLES");
  if (!src) GTEST_SKIP() << "TBLOB_EXAMPLES not set";
  const std::string dir = std::string(src) + "/sharded";
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open(dir.c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_file_count(m), 2u);
  EXPECT_GT(tblob_model_tensor_count(m), 0u);
  uint64_t idx;
  EXPECT_EQ(tblob_tensor_find(m, "lm_head.weight", 14, &idx, nullptr), TBLOB_OK);
  tblob_model_close(m);
}

// ==========================================================================================
// Arguments, versions, names
// ==========================================================================================

TEST(Api, close_null_and_null_arguments) {
  tblob_model_close(nullptr);
  EXPECT_EQ(tblob_model_tensor_count(nullptr), 0u);
  EXPECT_EQ(tblob_model_file_count(nullptr), 0u);
  EXPECT_EQ(tblob_metadata_count(nullptr), 0u);
  EXPECT_EQ(tblob_model_format(nullptr), static_cast<uint32_t>(TBLOB_FORMAT_UNKNOWN));
  const std::string f = file(H({M({{"k", "v"}}), T("t", "U8", {1}, 0, 1)}), "x");
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_model_open(nullptr, nullptr, &m, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(d.status, TBLOB_E_INVALID_ARGUMENT);
  EXPECT_GT(std::strlen(d.message), 0u);
  EXPECT_EQ(tblob_model_open("x", nullptr, nullptr, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_model_open_memory(nullptr, 5, nullptr, &m, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, nullptr, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_st_scan(nullptr, 5, nullptr, nullptr, nullptr, nullptr, 0, nullptr, nullptr), TBLOB_E_INVALID_ARGUMENT);
  ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, &m, nullptr), TBLOB_OK);
  tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
  uint64_t idx;
  const void *dp;
  uint64_t dl;
  const char *k, *v;
  size_t kl, vl;
  EXPECT_EQ(tblob_tensor_at(nullptr, 0, &info, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensor_at(m, 0, nullptr, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(d.status, TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensor_find(nullptr, "t", 1, &idx, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensor_find(m, nullptr, 1, &idx, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensor_find(m, "t", 1, nullptr, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensor_data(nullptr, 0, &dp, &dl, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensor_data(m, 0, nullptr, &dl, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensor_data(m, 0, &dp, nullptr, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_metadata_at(nullptr, 0, &k, &kl, &v, &vl, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_metadata_at(m, 0, nullptr, &kl, &v, &vl, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_metadata_at(m, 0, &k, &kl, &v, nullptr, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_metadata_find(nullptr, "k", 1, &v, &vl, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_metadata_find(m, nullptr, 1, &v, &vl, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_metadata_find(m, "k", 1, nullptr, &vl, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_model_file_path(nullptr, 0, &k, &kl, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_model_file_path(m, 0, nullptr, &kl, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_model_file_path(m, 0, &k, &kl, nullptr), TBLOB_OK);
  EXPECT_EQ(kl, 0u);  // a memory buffer has no path
  uint32_t dt;
  EXPECT_EQ(tblob_dtype_from_name(nullptr, 2, &dt, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_dtype_from_name("U8", 2, nullptr, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_dtype_from_name("U8", 1, &dt, nullptr), TBLOB_E_DTYPE);
  // Everything still works after the bad calls.
  EXPECT_EQ(tblob_tensor_find(m, "t", 1, &idx, nullptr), TBLOB_OK);
  tblob_model_close(m);
}

TEST(Api, bad_struct_sizes) {
  const std::string f = file(H({T("t", "U8", {1}, 0, 1)}), "x");
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, &m, nullptr), TBLOB_OK);
  tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
  info.struct_size = 8;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_tensor_at(m, 0, &info, &d), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(d.status, TBLOB_E_INVALID_ARGUMENT);
  info.struct_size = 0;
  EXPECT_EQ(tblob_tensor_at(m, 0, &info, nullptr), TBLOB_E_INVALID_ARGUMENT);
  // A larger (newer) struct is fine.
  struct {
    tblob_tensor_info info;
    uint64_t extra[4];
  } bigger;
  std::memset(&bigger, 0, sizeof(bigger));
  bigger.info.struct_size = sizeof(bigger);
  EXPECT_EQ(tblob_tensor_at(m, 0, &bigger.info, nullptr), TBLOB_OK);
  EXPECT_EQ(bigger.info.name_len, 1u);
  // A diag with a bad struct_size is a caller error, and is not written.
  tblob_diag small = TBLOB_DIAG_INIT;
  small.struct_size = 4;
  std::strcpy(small.message, "untouched");
  small.status = static_cast<tblob_status>(77);
  uint64_t idx;
  EXPECT_EQ(tblob_tensor_find(m, "zz", 2, &idx, &small), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_STREQ(small.message, "untouched");
  EXPECT_EQ(small.status, 77);
  tblob_model *m2 = nullptr;
  EXPECT_EQ(tblob_model_open_memory("short", 5, nullptr, &m2, &small), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(m2, nullptr);
  EXPECT_STREQ(small.message, "untouched");
  tblob_model_close(m);
  // A scan result with a bad struct_size.
  tblob_scan_result r = TBLOB_SCAN_RESULT_INIT;
  r.struct_size = 4;
  EXPECT_EQ(tblob_st_scan(reinterpret_cast<const uint8_t *>(f.data()), f.size(), nullptr, nullptr, nullptr, nullptr, 0,
                          &r, nullptr),
            TBLOB_E_INVALID_ARGUMENT);
  // A diag is reset by a successful call.
  d = TBLOB_DIAG_INIT;
  d.status = TBLOB_E_JSON;
  std::strcpy(d.message, "old");
  ASSERT_EQ(tblob_model_open_memory(f.data(), f.size(), nullptr, &m, &d), TBLOB_OK);
  EXPECT_EQ(d.status, TBLOB_OK);
  tblob_model_close(m);
}

TEST(Api, versions_and_names) {
  EXPECT_EQ(tblob_version(), static_cast<uint32_t>(TBLOB_VERSION_NUMBER));
  EXPECT_EQ(std::string(tblob_version_string()), std::to_string(TBLOB_VERSION_MAJOR) + "." +
                                                     std::to_string(TBLOB_VERSION_MINOR) + "." +
                                                     std::to_string(TBLOB_VERSION_PATCH));
  EXPECT_STREQ(tblob_format_name(TBLOB_FORMAT_SAFETENSORS), "safetensors");
  EXPECT_STREQ(tblob_format_name(TBLOB_FORMAT_SAFETENSORS_SHARDED), "safetensors-sharded");
  EXPECT_EQ(tblob_format_name(0), nullptr);
  EXPECT_EQ(tblob_format_name(999), nullptr);
  const std::vector<std::pair<tblob_status, const char *>> st = {
      {TBLOB_OK, "TBLOB_OK"},
      {TBLOB_E_INVALID_ARGUMENT, "TBLOB_E_INVALID_ARGUMENT"},
      {TBLOB_E_OUT_OF_MEMORY, "TBLOB_E_OUT_OF_MEMORY"},
      {TBLOB_E_IO, "TBLOB_E_IO"},
      {TBLOB_E_NOT_FOUND, "TBLOB_E_NOT_FOUND"},
      {TBLOB_E_UNKNOWN_FORMAT, "TBLOB_E_UNKNOWN_FORMAT"},
      {TBLOB_E_BUFFER_TOO_SMALL, "TBLOB_E_BUFFER_TOO_SMALL"},
      {TBLOB_E_CANCELLED, "TBLOB_E_CANCELLED"},
      {TBLOB_E_RANGE, "TBLOB_E_RANGE"},
      {TBLOB_E_HEADER_TOO_SMALL, "TBLOB_E_HEADER_TOO_SMALL"},
      {TBLOB_E_HEADER_TOO_LARGE, "TBLOB_E_HEADER_TOO_LARGE"},
      {TBLOB_E_HEADER_LENGTH, "TBLOB_E_HEADER_LENGTH"},
      {TBLOB_E_UTF8, "TBLOB_E_UTF8"},
      {TBLOB_E_JSON, "TBLOB_E_JSON"},
      {TBLOB_E_SCHEMA, "TBLOB_E_SCHEMA"},
      {TBLOB_E_DTYPE, "TBLOB_E_DTYPE"},
      {TBLOB_E_SHAPE, "TBLOB_E_SHAPE"},
      {TBLOB_E_SHAPE_OVERFLOW, "TBLOB_E_SHAPE_OVERFLOW"},
      {TBLOB_E_MISALIGNED, "TBLOB_E_MISALIGNED"},
      {TBLOB_E_TENSOR_SIZE, "TBLOB_E_TENSOR_SIZE"},
      {TBLOB_E_OFFSETS, "TBLOB_E_OFFSETS"},
      {TBLOB_E_TRAILING_BYTES, "TBLOB_E_TRAILING_BYTES"},
      {TBLOB_E_TRUNCATED, "TBLOB_E_TRUNCATED"},
      {TBLOB_E_DUPLICATE_NAME, "TBLOB_E_DUPLICATE_NAME"},
      {TBLOB_E_METADATA, "TBLOB_E_METADATA"},
      {TBLOB_E_SHARD_INDEX, "TBLOB_E_SHARD_INDEX"},
      {TBLOB_E_LIMIT_HEADER_BYTES, "TBLOB_E_LIMIT_HEADER_BYTES"},
      {TBLOB_E_LIMIT_TENSORS, "TBLOB_E_LIMIT_TENSORS"},
      {TBLOB_E_LIMIT_RANK, "TBLOB_E_LIMIT_RANK"},
      {TBLOB_E_LIMIT_NAME_BYTES, "TBLOB_E_LIMIT_NAME_BYTES"},
      {TBLOB_E_LIMIT_JSON_DEPTH, "TBLOB_E_LIMIT_JSON_DEPTH"},
      {TBLOB_E_LIMIT_FILES, "TBLOB_E_LIMIT_FILES"},
  };
  for (const auto &p : st) {
    EXPECT_STREQ(tblob_status_name(p.first), p.second);
    ASSERT_NE(tblob_status_message(p.first), nullptr);
    EXPECT_GT(std::strlen(tblob_status_message(p.first)), 0u);
  }
  EXPECT_STREQ(tblob_status_name(static_cast<tblob_status>(12345)), "TBLOB_E_UNKNOWN_STATUS");
  EXPECT_STREQ(tblob_status_name(static_cast<tblob_status>(-19)), "TBLOB_E_UNKNOWN_STATUS");
  EXPECT_NE(tblob_status_message(static_cast<tblob_status>(12345)), nullptr);
}

// A name holding a NUL appears whole in a message, escaped by the one rule of
// lib/core/name_text.h, not cut at the NUL (which would end the C string).
TEST(Messages, NameWithNulIsEscapedWhole) {
  const std::string json = "{\"a\\u0000b\\\\c\\td\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}";
  std::string buf(8, '\0');
  for (int i = 0; i < 8; ++i) buf[static_cast<size_t>(i)] = static_cast<char>(json.size() >> (8 * i));
  buf += json;
  buf.append(4, '\0');
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *m = nullptr;
  EXPECT_EQ(tblob_model_open_memory(buf.data(), buf.size(), nullptr, &m, &d), TBLOB_E_TENSOR_SIZE);
  EXPECT_NE(std::strstr(d.message, "tensor \"a\\0b\\\\c\\td\""), nullptr) << d.message;
}
