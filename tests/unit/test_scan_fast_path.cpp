// The scanner reads members spelled the way every writer emits them through a loop of its own
// when 256 bytes follow the member's name (lib/json/st_scan_loop.h, fast_members); anything
// else, and every member near the end of a header, takes the general path. Small test headers
// never reach that loop, so these are long: canonical members before and after one under test,
// whose bytes (and the separator after it) are mutated one at a time. Each result is checked
// against an independent reading: simdjson's DOM says whether the header is JSON and what it
// holds, and the per-tensor sizes are computed here from the dtype widths. Every test runs once
// for each build of the loop: the baseline one and, on hosts that run it, the AVX2 + BMI2 one.
#include <simdjson.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "json/st_scanner.h"
#include "st_builder.h"
#include "tensorblob.h"

namespace {

const std::map<std::string, uint64_t> kBytes = {{"BF16", 2}, {"F16", 2}, {"F32", 4}, {"F64", 8},
                                                {"I8", 1},   {"U8", 1},  {"I64", 8}, {"BOOL", 1}};

struct Tensor {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  uint64_t begin = 0, end = 0;
  bool operator==(const Tensor &o) const {
    return name == o.name && dtype == o.dtype && shape == o.shape && begin == o.begin && end == o.end;
  }
};

std::string entry(const std::string &name, const std::string &dtype, const std::vector<uint64_t> &shape,
                  uint64_t b, uint64_t e) {
  std::string s = "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "],\"data_offsets\":[" + std::to_string(b) + "," + std::to_string(e) + "]}";
}

struct Scan {
  tblob_status status;
  int64_t tensor_index;
  std::vector<Tensor> tensors;
};

int collect(void *user, const tblob_scan_event *e) {
  auto *out = static_cast<std::vector<Tensor> *>(user);
  if (e->kind != TBLOB_SCAN_TENSOR) return 0;
  Tensor t;
  t.name.assign(e->name, e->name_len);
  if (e->name_has_escapes) {
    std::string decoded(e->name_len, '\0');  // decoding only shrinks
    size_t n = 0;
    if (tblob_json_unescape(e->name, e->name_len, &decoded[0], decoded.size(), &n, nullptr) == TBLOB_OK)
      t.name = decoded.substr(0, n);
  }
  t.dtype = tblob_dtype_name(e->dtype);
  if (e->shape) t.shape.assign(e->shape, e->shape + e->rank);
  t.begin = e->data_begin;
  t.end = e->data_end;
  out->push_back(t);
  return 0;
}

Scan scan(const std::string &file) {
  Scan s;
  tblob_diag d = TBLOB_DIAG_INIT;
  s.status = tblob_st_scan(reinterpret_cast<const uint8_t *>(file.data()), file.size(), nullptr, collect,
                           &s.tensors, nullptr, 0, nullptr, &d);
  s.tensor_index = d.tensor_index;
  return s;
}

// What the header must scan to, read with simdjson. kSkip: a dtype this test has no width for,
// or a number simdjson cannot read.
enum class Want { kJsonError, kSchemaError, kEntry, kLength, kOk, kSkip };
struct Expect {
  Want want = Want::kOk;
  tblob_status status = TBLOB_OK;
  int64_t tensor = -1;
  std::vector<Tensor> tensors;
};

bool u64_array(simdjson::dom::element el, std::vector<uint64_t> *out) {
  simdjson::dom::array a;
  if (el.get_array().get(a)) return false;
  for (simdjson::dom::element v : a) {
    uint64_t x;
    if (v.get_uint64().get(x)) return false;
    out->push_back(x);
  }
  return true;
}

Expect expect(const std::string &header, uint64_t data_bytes) {
  Expect x;
  static simdjson::dom::parser parser;  // one parser: its buffers are reused
  simdjson::dom::element root;
  const simdjson::error_code err = parser.parse(simdjson::padded_string(header)).get(root);
  if (err == simdjson::NUMBER_ERROR) {
    // A number simdjson cannot hold (9160e25544): the readers differ on what that is.
    x.want = Want::kSkip;
    return x;
  }
  if (err) {
    x.want = Want::kJsonError;
    return x;
  }
  // simdjson reads -0 as the integer 0; the reference (serde_json) reads it as the float -0.0,
  // not a u64. One mutation cannot put '[' or ',' and '-' both into a name, so these are numbers.
  if (header.find("[-0") != std::string::npos || header.find(",-0") != std::string::npos) {
    x.want = Want::kSchemaError;
    return x;
  }
  simdjson::dom::object obj;
  if (root.get_object().get(obj)) {
    x.want = Want::kSchemaError;
    return x;
  }
  bool schema = false;
  for (auto member : obj) {
    Tensor t;
    t.name = std::string(member.key);
    simdjson::dom::object fields;
    if (member.value.get_object().get(fields)) {
      schema = true;
      continue;
    }
    int have_dtype = 0, have_shape = 0, have_offsets = 0;
    for (auto f : fields) {
      if (f.key == "dtype") {
        ++have_dtype;
        std::string_view d;
        if (f.value.get_string().get(d)) schema = true;
        t.dtype = std::string(d);
      } else if (f.key == "shape") {
        ++have_shape;
        if (!u64_array(f.value, &t.shape)) schema = true;
      } else if (f.key == "data_offsets") {
        ++have_offsets;
        std::vector<uint64_t> o;
        if (!u64_array(f.value, &o) || o.size() != 2) {
          schema = true;
        } else {
          t.begin = o[0];
          t.end = o[1];
        }
      }
    }
    if (have_dtype != 1 || have_shape != 1 || have_offsets != 1) schema = true;
    x.tensors.push_back(t);
  }
  if (schema) {
    x.want = Want::kSchemaError;
    return x;
  }
  uint64_t max_end = 0;
  for (size_t i = 0; i < x.tensors.size(); ++i) {
    const Tensor &t = x.tensors[i];
    const auto w = kBytes.find(t.dtype);
    if (w == kBytes.end()) {
      x.want = Want::kSkip;
      return x;
    }
    if (t.end > max_end) max_end = t.end;
    if (x.want != Want::kOk) continue;  // the first failing entry in header order is reported
    // The reference's order: the element count, then the bit count, each checked for overflow.
    bool overflow = false;
    uint64_t elements = 1;
    for (uint64_t d : t.shape) {
      if (d != 0 && elements > UINT64_MAX / d) {
        overflow = true;
        break;
      }
      elements *= d;
    }
    const uint64_t bits = w->second * 8;
    if (!overflow && elements > UINT64_MAX / bits) overflow = true;
    const uint64_t bytes = overflow ? 0 : elements * w->second;
    tblob_status s = TBLOB_OK;
    if (t.end < t.begin) s = TBLOB_E_OFFSETS;
    else if (overflow) s = TBLOB_E_SHAPE_OVERFLOW;
    else if (t.end - t.begin != bytes) s = TBLOB_E_TENSOR_SIZE;
    if (s != TBLOB_OK) {
      x.want = Want::kEntry;
      x.status = s;
      x.tensor = static_cast<int64_t>(i);
    }
  }
  if (x.want == Want::kOk && max_end != data_bytes) {
    x.want = Want::kLength;
    x.status = max_end > data_bytes ? TBLOB_E_TRUNCATED : TBLOB_E_TRAILING_BYTES;
  }
  return x;
}

struct Built {
  std::string header;
  size_t target_begin, target_end;  // the member under test and the separator after it
  uint64_t data_bytes;
};

Built build(std::mt19937_64 &rng, const std::string &target_dtype, const std::vector<uint64_t> &target_shape) {
  static const char *kDtypes[] = {"BF16", "F32", "F16", "I8", "F64"};
  Built b;
  uint64_t off = 0;
  std::string h = "{";
  const int before = static_cast<int>(rng() % 4), after = 8 + static_cast<int>(rng() % 4);
  auto add = [&](const std::string &name, const std::string &dtype, const std::vector<uint64_t> &shape) {
    uint64_t n = kBytes.at(dtype);
    for (uint64_t d : shape) n *= d;
    if (h.size() > 1) h += ",";
    h += entry(name, dtype, shape, off, off + n);
    off += n;
  };
  for (int i = 0; i < before; ++i)
    add("model.layers." + std::to_string(i) + ".mlp.up_proj.weight", kDtypes[rng() % 5], {4, 1 + rng() % 300});
  b.target_begin = h.size() + (h.size() > 1 ? 1 : 0);
  add("model.layers.7.self_attn.q_proj.weight", target_dtype, target_shape);
  b.target_end = h.size() + 1;  // and the ',' after it
  for (int i = 0; i < after; ++i)
    add("model.layers." + std::to_string(10 + i) + ".post_attention_layernorm.weight", kDtypes[rng() % 5],
        {1 + rng() % 1000});
  b.header = h + "}";
  b.data_bytes = off;
  return b;
}

void check(const std::string &header, uint64_t data_bytes, const std::string &what, int *skipped) {
  const std::string file = stb::file(header, std::string(data_bytes, '\0'));
  const Scan s = scan(file);
  const Expect x = expect(header, data_bytes);
  switch (x.want) {
    case Want::kSkip:
      ++*skipped;
      return;
    case Want::kJsonError:
      EXPECT_TRUE(s.status == TBLOB_E_JSON || s.status == TBLOB_E_UTF8) << what << " status " << s.status;
      return;
    case Want::kSchemaError:
      EXPECT_TRUE(s.status == TBLOB_E_SCHEMA || s.status == TBLOB_E_DTYPE || s.status == TBLOB_E_SHAPE)
          << what << " status " << s.status;
      return;
    case Want::kEntry:
      EXPECT_EQ(s.status, x.status) << what;
      EXPECT_EQ(s.tensor_index, x.tensor) << what;
      return;
    case Want::kLength:
    case Want::kOk:
      EXPECT_EQ(s.status, x.status) << what;
      ASSERT_EQ(s.tensors.size(), x.tensors.size()) << what;
      for (size_t i = 0; i < s.tensors.size(); ++i) EXPECT_TRUE(s.tensors[i] == x.tensors[i]) << what << " tensor " << i;
      return;
  }
}

// The targets: common and rarer dtypes, empty shapes, ranks around the loop's limit of 8 and
// the 16-byte shape window, numbers of 15 to 17 digits (beside a 0, so the data stays small),
// long shapes of several such numbers.
struct Target {
  const char *dtype;
  std::vector<uint64_t> shape;
};
const std::vector<Target> kTargets = {
    {"BF16", {64, 64}},
    {"F32", {4096}},
    {"F16", {}},
    {"I8", {0, 7}},
    {"U8", {3, 1, 4, 1, 5, 9, 2, 6}},
    {"BOOL", {3, 1, 4, 1, 5, 9, 2, 6, 5}},
    {"I64", {1, 2, 1, 2, 1, 2, 1, 2, 1, 10}},
    {"F64", {123456789012345ull, 0}},
    {"U8", {0, 1234567890123456ull}},
    {"U8", {12345678901234567ull, 0}},
    {"BF16", {1, 100000000, 0}},
    {"F32", {12345678, 0}},
    // Long members: 49 and 31 bytes of shape text, 15- and 13-digit dims read word by word.
    {"F64", {0, 123456789012345ull, 123456789012345ull, 123456789012345ull}},
    {"I8", {0, 1234567890123ull, 123456789012ull}},
};

// The parameter: whether the AVX2 + BMI2 build of the loop may run.
class ScanFastPath : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    tblob::st_scan_allow_avx2(GetParam());
    if (GetParam() && !tblob::st_scan_uses_avx2()) GTEST_SKIP() << "this host does not run AVX2 + BMI2";
    ASSERT_EQ(tblob::st_scan_uses_avx2(), GetParam());
  }
  void TearDown() override { tblob::st_scan_allow_avx2(true); }
};

TEST_P(ScanFastPath, CanonicalMembersScanExactly) {
  std::mt19937_64 rng(7);
  int skipped = 0;
  for (const Target &t : kTargets) {
    const Built b = build(rng, t.dtype, t.shape);
    check(b.header, b.data_bytes, std::string("unmutated ") + t.dtype, &skipped);
  }
  EXPECT_EQ(skipped, 0);
}

// Every byte of the member under test replaced, removed, or preceded by one of the bytes that
// change its meaning.
TEST_P(ScanFastPath, MutatedMembersAgreeWithTheDom) {
  static const char kBytesIn[] = {'"', '\\', ' ', '\n', ',', ']', '[', '}', '{', ':', '0', '1', '9', '-', '.', 'e',
                                  'a', static_cast<char>(0x80), static_cast<char>(0x1F)};
  std::mt19937_64 rng(20261125);
  int skipped = 0, cases = 0;
  for (const Target &t : kTargets) {
    const Built b = build(rng, t.dtype, t.shape);
    for (size_t at = b.target_begin; at <= b.target_end; ++at) {
      for (char c : kBytesIn) {
        std::string replaced = b.header;
        replaced[at] = c;
        check(replaced, b.data_bytes, "replace byte " + std::to_string(at) + " of " + t.dtype, &skipped);
        std::string inserted = b.header;
        inserted.insert(at, 1, c);
        check(inserted, b.data_bytes, "insert at byte " + std::to_string(at) + " of " + t.dtype, &skipped);
        cases += 2;
      }
      std::string removed = b.header;
      removed.erase(at, 1);
      check(removed, b.data_bytes, "remove byte " + std::to_string(at) + " of " + t.dtype, &skipped);
      ++cases;
      if (::testing::Test::HasFailure()) return;
    }
  }
  // Skipped: dtype names this test has no width for (mutations of the dtype's own bytes) and
  // numbers with an exponent out of range (an 'e' between digits).
  EXPECT_LT(skipped, cases / 10);
}

// The fast loop keeps the results of recent shapes by the bytes that spell them, and takes a
// begin offset spelled like the previous end without converting it. Here shapes recur across
// more shapes than it keeps (so they are evicted and collide), the first tensors are empty
// (ends of "0", the spelling a leading zero extends), and one member whose shape appeared
// before is mutated byte by byte: every tensor's dims and offsets must still be what simdjson
// reads.
TEST_P(ScanFastPath, RecurringShapesAndOffsetsAgreeWithTheDom) {
  static const char kBytesIn[] = {'"', ',', ']', '[', '}', ' ', '0', '1', '2', '4', '9', '-', '.', 'e'};
  std::vector<std::vector<uint64_t>> shapes = {{0, 5}, {0}, {}};
  for (uint64_t i = 0; i < 95; ++i) shapes.push_back({1 + i % 5, 2 + i, 4});  // more than the memo's 64 slots
  shapes.push_back({3, 1, 4, 1, 5, 9, 2, 6});
  shapes.push_back({1234, 10});
  // Equal in their first eight bytes after '[', different after them.
  shapes.push_back({0, 1234567, 1});
  shapes.push_back({0, 1234567, 2});
  uint64_t off = 0;
  std::string h = "{";
  size_t target_begin = 0, target_end = 0;
  const size_t members = 3 * shapes.size();
  for (size_t i = 0; i < members; ++i) {
    // The first three members are empty tensors; the rest cycle through the shapes.
    const std::vector<uint64_t> &shape = i < 3 ? shapes[i] : shapes[3 + (i * 7) % (shapes.size() - 3)];
    const char *dtype = i % 3 ? "BF16" : "F32";
    uint64_t n = kBytes.at(dtype);
    for (uint64_t d : shape) n *= d;
    if (i) h += ",";
    if (i == 2 * shapes.size()) target_begin = h.size();
    h += entry("model.layers." + std::to_string(i) + ".mlp.down_proj.weight", dtype, shape, off, off + n);
    if (i == 2 * shapes.size()) target_end = h.size() + 1;
    off += n;
    if (i == 2 * shapes.size()) break;
  }
  // The mutated member is the last one built so far; more members follow it unchanged.
  for (size_t i = 2 * shapes.size() + 1; i < members; ++i) {
    const std::vector<uint64_t> &shape = shapes[3 + (i * 7) % (shapes.size() - 3)];
    uint64_t n = kBytes.at("BF16");
    for (uint64_t d : shape) n *= d;
    h += "," + entry("model.layers." + std::to_string(i) + ".mlp.down_proj.weight", "BF16", shape, off, off + n);
    off += n;
  }
  h += "}";
  int skipped = 0, cases = 0;
  check(h, off, "unmutated", &skipped);
  ASSERT_EQ(skipped, 0);
  for (size_t at = target_begin; at <= target_end; ++at) {
    for (char c : kBytesIn) {
      std::string replaced = h;
      replaced[at] = c;
      check(replaced, off, "replace byte " + std::to_string(at), &skipped);
      std::string inserted = h;
      inserted.insert(at, 1, c);
      check(inserted, off, "insert at byte " + std::to_string(at), &skipped);
      cases += 2;
    }
    std::string removed = h;
    removed.erase(at, 1);
    check(removed, off, "remove byte " + std::to_string(at), &skipped);
    ++cases;
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_LT(skipped, cases / 10);
}

INSTANTIATE_TEST_SUITE_P(Builds, ScanFastPath, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &i) { return i.param ? "Avx2" : "Baseline"; });

}  // namespace
