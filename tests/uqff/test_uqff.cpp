// UQFF sets written by the test writer (uqff_writer.h, following reference/uqff.md): version
// rules, shard discovery, straddling layers, every family's decoder on hand-made values,
// stacked experts, the verify report, and the bad inputs of reliability.md section 6.4.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tensorblob.h"
#include "expert_rows.h"
#include "uqff_writer.h"

using uqt::Shard;
using uqt::TempDir;

namespace {

// One Q8_0 block: d = 0.5, qs = 0..31 (minus 16).
std::string q8_0_block(float d = 0.5f, int base = -16) {
  std::string b(34, '\0');
  uint32_t u;
  std::memcpy(&u, &d, 4);
  // f32 -> f16 for simple values (exact: d is a power of two times a small integer)
  const uint32_t e = ((u >> 23) & 0xFF) - 127 + 15, m = (u >> 13) & 0x3FF;
  const uint16_t h = static_cast<uint16_t>(((u >> 16) & 0x8000) | (e << 10) | m);
  b[0] = static_cast<char>(h & 0xFF);
  b[1] = static_cast<char>(h >> 8);
  for (int j = 0; j < 32; ++j) b[2 + j] = static_cast<char>(base + j);
  return b;
}

struct Opened {
  tblob_model *m = nullptr;
  tblob_status s = TBLOB_OK;
  tblob_diag d = TBLOB_DIAG_INIT;
  explicit Opened(const std::string &p) { s = tblob_model_open(p.c_str(), nullptr, &m, &d); }
  Opened(const std::vector<std::string> &ps) {
    std::vector<const char *> v;
    for (const auto &p : ps) v.push_back(p.c_str());
    s = tblob_uqff_open(v.data(), v.size(), nullptr, &m, &d);
  }
  ~Opened() { tblob_model_close(m); }
  uint64_t find(const std::string &n) const {
    uint64_t i = UINT64_MAX;
    tblob_tensor_find(m, n.data(), n.size(), &i, nullptr);
    return i;
  }
  std::vector<uint32_t> deq(const std::string &n, uint64_t expert = 0, uint64_t rb = 0, uint64_t re = UINT64_MAX,
                            tblob_status want = TBLOB_OK) const {
    uint64_t bytes = 0;
    tblob_diag dd = TBLOB_DIAG_INIT;
    const uint64_t i = find(n);
    uint64_t first = rb, end = re;
    to_rows(m, i, expert, &first, &end);
    tblob_status st = tblob_tensor_dequant_size(m, i, TBLOB_DTYPE_F32, first, end, &bytes, &dd);
    std::vector<uint32_t> out(bytes / 4 + 1);
    if (st == TBLOB_OK)
      st = tblob_tensor_dequantize(m, i, TBLOB_DTYPE_F32, first, end, out.data(), bytes, &dd);
    EXPECT_EQ(st, want) << n << ": " << dd.message;
    out.resize(bytes / 4);
    return out;
  }
};

uint32_t fbits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// ---- opening, discovery, straddling ---------------------------------------------------------

// Two shards of one set: s0 holds the version and the layer's format/dtype/shape entries,
// s1 its two q8_0 blocks (rows of 32).
void straddling_shards(Shard *s0, Shard *s1) {
  s0->version().producer();
  s0->u8("a.weight.format", 0).u32("a.weight.dtype", 8).add("a.weight.shape", "U32", {2}, uqt::u32vec({2, 32}));
  s1->producer().add("a.weight", "U8", {68}, q8_0_block() + q8_0_block(0.25f, 0));
}

TEST(Uqff, StraddlingLayerAcrossShardsOpensFromAnyShard) {
  TempDir t;
  Shard s0, s1;
  straddling_shards(&s0, &s1);
  ASSERT_TRUE(t.write("q8_0-0.uqff", s0));
  ASSERT_TRUE(t.write("q8_0-1.uqff", s1));
  for (const std::string &p : {t.path, t.file("q8_0-0.uqff"), t.file("q8_0-1.uqff")}) {
    Opened o(p);
    ASSERT_EQ(o.s, TBLOB_OK) << p << ": " << o.d.message;
    EXPECT_EQ(tblob_model_file_count(o.m), 2u);
    const uint64_t i = o.find("a.weight");
    ASSERT_NE(i, UINT64_MAX);
    tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(o.m, i, &ti, nullptr), TBLOB_OK);
    EXPECT_EQ(ti.rank, 2u);
    EXPECT_EQ(ti.shape[0], 2u);
    EXPECT_EQ(ti.shape[1], 32u);
    EXPECT_EQ(ti.dtype, static_cast<uint32_t>(TBLOB_DTYPE_U8));
    EXPECT_EQ(ti.data_length, 68u);
    EXPECT_EQ(ti.file_index, 1u);
    tblob_uqff_layer_info li = TBLOB_UQFF_LAYER_INFO_INIT;
    ASSERT_EQ(tblob_uqff_layer_info_at(o.m, i, &li, nullptr), TBLOB_OK);
    EXPECT_EQ(li.family, static_cast<uint32_t>(TBLOB_UQFF_GGUF));
    EXPECT_STREQ(li.label, "q8_0");
    EXPECT_EQ(li.shard_span, 2u);
    const auto y = o.deq("a.weight", 0, 1, 2);  // second row only
    ASSERT_EQ(y.size(), 32u);
    for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], fbits(0.25f * j)) << j;
  }
  // Only shard 1, under a non-indexed name (used as is): no version tag.
  TempDir u;
  ASSERT_TRUE(u.write("only.uqff", s1));
  Opened o(std::vector<std::string>{u.file("only.uqff")});
  EXPECT_EQ(o.s, TBLOB_E_UQFF_NO_VERSION) << o.d.message;
}

// tblob_model_open parses the shard it is given once and keeps that scan when the shard is
// the first of its set; the model must be the one a fresh open of the set gives.
TEST(Uqff, OpenFromFirstShardEqualsOpenOfTheSet) {
  TempDir t;
  Shard s0, s1;
  straddling_shards(&s0, &s1);
  ASSERT_TRUE(t.write("q8_0-0.uqff", s0));
  ASSERT_TRUE(t.write("q8_0-1.uqff", s1));
  Opened set(std::vector<std::string>{t.file("q8_0-0.uqff"), t.file("q8_0-1.uqff")});
  ASSERT_EQ(set.s, TBLOB_OK) << set.d.message;
  for (const std::string &p : {t.file("q8_0-0.uqff"), t.file("q8_0-1.uqff")}) {
    Opened o(p);
    ASSERT_EQ(o.s, TBLOB_OK) << p << ": " << o.d.message;
    ASSERT_EQ(tblob_model_file_count(o.m), tblob_model_file_count(set.m));
    for (uint32_t f = 0; f < tblob_model_file_count(o.m); ++f) {
      const char *a = nullptr, *b = nullptr;
      size_t an = 0, bn = 0;
      ASSERT_EQ(tblob_model_file_path(o.m, f, &a, &an, nullptr), TBLOB_OK);
      ASSERT_EQ(tblob_model_file_path(set.m, f, &b, &bn, nullptr), TBLOB_OK);
      EXPECT_EQ(std::string(a, an), std::string(b, bn)) << p;
    }
    ASSERT_EQ(tblob_model_tensor_count(o.m), tblob_model_tensor_count(set.m));
    for (uint64_t i = 0; i < tblob_model_tensor_count(o.m); ++i) {
      tblob_tensor_info x = TBLOB_TENSOR_INFO_INIT, y = TBLOB_TENSOR_INFO_INIT;
      ASSERT_EQ(tblob_tensor_at(o.m, i, &x, nullptr), TBLOB_OK);
      ASSERT_EQ(tblob_tensor_at(set.m, i, &y, nullptr), TBLOB_OK);
      EXPECT_EQ(std::string(x.name, x.name_len), std::string(y.name, y.name_len)) << p;
      EXPECT_EQ(x.file_index, y.file_index) << p;
      EXPECT_EQ(x.data_offset, y.data_offset) << p;
      EXPECT_EQ(x.data_length, y.data_length) << p;
    }
  }
}

TEST(Uqff, MissingShards) {
  Shard s0, s1, s2;
  s0.version();
  s0.u8("a.weight.format", 0).u32("a.weight.dtype", 8).add("a.weight.shape", "U32", {2}, uqt::u32vec({1, 32}));
  s1.add("a.weight", "U8", {34}, q8_0_block());
  s2.u8("b.weight.format", 1).add("b.weight", "F32", {1, 1}, uqt::f32s(1.0f));
  {  // a gap: -0 and -2 exist, -1 does not
    TempDir t;
    t.write("x-0.uqff", s0);
    t.write("x-2.uqff", s2);
    for (const std::string &p : {t.path, t.file("x-0.uqff"), t.file("x-2.uqff")}) {
      Opened o(p);
      EXPECT_EQ(o.s, TBLOB_E_UQFF_SHARD_MISSING) << p << ": " << o.d.message;
      EXPECT_NE(std::strstr(o.d.message, "x-1.uqff"), nullptr) << o.d.message;
    }
  }
  // A shard index far past the set is a missing shard at any size, never read as a lone file.
  for (const char *name : {"x-1000000.uqff", "x-100000000000000000000.uqff", "x-18446744073709551616.uqff"}) {
    TempDir t;
    t.write(name, s2);
    Opened o(t.file(name));
    EXPECT_EQ(o.s, TBLOB_E_UQFF_SHARD_MISSING) << name << ": " << o.d.message;
    EXPECT_NE(std::strstr(o.d.message, "x-0.uqff"), nullptr) << o.d.message;
  }
  {  // the layer straddles into a shard that is not there (no report): its entries are incomplete
    TempDir t;
    t.write("x-0.uqff", s0);
    Opened o(t.path);
    EXPECT_EQ(o.s, TBLOB_E_UQFF_ENTRIES) << o.d.message;
    EXPECT_NE(std::strstr(o.d.message, "lacks .weight"), nullptr) << o.d.message;
    EXPECT_NE(std::strstr(o.d.message, "shard"), nullptr) << o.d.message;
  }
  {  // the report lists a shard that is missing
    TempDir t;
    t.write("x-0.uqff", s0);
    t.write("uqff_report.json", std::string("{\"schema\":1,\"outputs\":[{\"quant\":\"q8_0\",\"shards\":[\"x-0.uqff\",\"x-1.uqff\"]}]}"));
    Opened o(t.path);
    EXPECT_EQ(o.s, TBLOB_E_UQFF_SHARD_MISSING) << o.d.message;
    Opened p(t.file("x-0.uqff"));
    EXPECT_EQ(p.s, TBLOB_E_UQFF_SHARD_MISSING) << p.d.message;
  }
  {  // a report that lists one shard twice (in two outputs): refused, naming it
    TempDir t;
    t.write("x-0.uqff", s0);
    t.write("x-1.uqff", s1);
    t.write("uqff_report.json",
            std::string("{\"outputs\":[{\"shards\":[\"x-0.uqff\",\"x-1.uqff\"]},{\"shards\":[\"x-1.uqff\"]}]}"));
    Opened o(t.path);
    EXPECT_EQ(o.s, TBLOB_E_UQFF_REPORT) << o.d.message;
    EXPECT_NE(std::strstr(o.d.message, "lists shard x-1.uqff twice"), nullptr) << o.d.message;
  }
  {  // a broken report
    TempDir t;
    t.write("x-0.uqff", s0);
    t.write("x-1.uqff", s1);
    t.write("uqff_report.json", std::string("{\"outputs\":[{\"shards\":[\"../x-0.uqff\"]}]}"));
    Opened o(t.path);
    EXPECT_EQ(o.s, TBLOB_E_UQFF_REPORT) << o.d.message;
  }
  {  // an empty directory is not UQFF
    TempDir t;
    const char *p[1] = {t.path.c_str()};
    tblob_model *m = nullptr;
    EXPECT_EQ(tblob_uqff_open(p, 1, nullptr, &m, nullptr), TBLOB_E_UQFF_SHARD_SET);
    EXPECT_EQ(detect(t.path), 0);
  }
}

// ---- version rules --------------------------------------------------------------------------

tblob_status open_one(const Shard &s, std::string *msg = nullptr, const Shard *s1 = nullptr) {
  TempDir t;
  t.write("v-0.uqff", s);
  if (s1) t.write("v-1.uqff", *s1);
  Opened o(t.path);
  if (msg) *msg = o.d.message;
  return o.s;
}

Shard layer_shard() {
  Shard s;
  s.u8("a.weight.format", 1).add("a.weight", "F32", {1, 2}, uqt::f32s(1.0f) + uqt::f32s(-2.0f));
  return s;
}

TEST(Uqff, VersionRules) {
  std::string msg;
  {
    Shard s = layer_shard();
    s.version(1, 2, 0);
    EXPECT_EQ(open_one(s), TBLOB_OK);
  }
  for (uint32_t minor : {0u, 1u}) {  // older minors of major 1 are read; patch is ignored
    Shard s = layer_shard();
    s.version(1, minor, 77);
    EXPECT_EQ(open_one(s), TBLOB_OK) << minor;
  }
  {
    Shard s = layer_shard();
    s.version(1, 3, 0);
    EXPECT_EQ(open_one(s, &msg), TBLOB_E_UQFF_VERSION_NEWER);
    EXPECT_NE(msg.find("upgrade"), std::string::npos) << msg;
  }
  {
    Shard s = layer_shard();
    s.version(2, 0, 0);
    EXPECT_EQ(open_one(s, &msg), TBLOB_E_UQFF_VERSION_MAJOR);
    EXPECT_NE(msg.find("regenerate"), std::string::npos) << msg;
  }
  {
    Shard s = layer_shard();
    s.version(0, 2, 0);
    EXPECT_EQ(open_one(s), TBLOB_E_UQFF_VERSION_MAJOR);
  }
  {  // missing, even though __metadata__ says 1.2.0
    Shard s = layer_shard();
    s.producer();
    EXPECT_EQ(open_one(s, &msg), TBLOB_E_UQFF_NO_VERSION);
    EXPECT_NE(msg.find("1.2.0"), std::string::npos) << msg;
  }
  {  // minor missing
    Shard s = layer_shard();
    s.u32("uqff.version.major", 1).u32("uqff.version.patch", 0);
    EXPECT_EQ(open_one(s), TBLOB_E_UQFF_NO_VERSION);
  }
  {  // 1-element 1-D is not a scalar
    Shard s = layer_shard();
    s.add("uqff.version.major", "U32", {1}, uqt::u32s(1)).u32("uqff.version.minor", 2).u32("uqff.version.patch", 0);
    EXPECT_EQ(open_one(s), TBLOB_E_UQFF_SCALAR);
  }
  {  // wrong dtype
    Shard s = layer_shard();
    s.add("uqff.version.major", "U8", {}, uqt::u8s(1)).u32("uqff.version.minor", 2).u32("uqff.version.patch", 0);
    EXPECT_EQ(open_one(s), TBLOB_E_UQFF_SCALAR);
  }
  {  // equal copies in two shards are fine; different ones conflict
    Shard a = layer_shard(), b, c;
    a.version(1, 2, 0);
    b.version(1, 2, 0);
    EXPECT_EQ(open_one(a, nullptr, &b), TBLOB_OK);
    c.version(1, 1, 0);
    EXPECT_EQ(open_one(a, &msg, &c), TBLOB_E_UQFF_VERSION_CONFLICT);
    EXPECT_NE(msg.find("minor"), std::string::npos) << msg;
  }
  {  // the 0.x layout
    Shard s;
    s.add("0", "U8", {4}, "abcd").add("1", "U8", {4}, "efgh");
    EXPECT_EQ(open_one(s, &msg), TBLOB_E_UQFF_PRE_1_0);
  }
}

// ---- structure ------------------------------------------------------------------------------

TEST(Uqff, StructuralProblems) {
  std::string msg;
  auto with = [](const std::function<void(Shard &)> &f) {
    Shard s;
    s.version();
    f(s);
    return s;
  };
  // unknown tag
  EXPECT_EQ(open_one(with([](Shard &s) { s.u8("a.weight.format", 7).add("a.weight", "U8", {1}, "x"); }), &msg),
            TBLOB_E_UQFF_FORMAT_TAG);
  // the format as a 1-element vector
  EXPECT_EQ(open_one(with([](Shard &s) { s.add("a.weight.format", "U8", {1}, uqt::u8s(1)).add("a.weight", "F32", {1, 1}, uqt::f32s(1)); })),
            TBLOB_E_UQFF_SCALAR);
  // truncated / overlong GGML blocks
  EXPECT_EQ(open_one(with([](Shard &s) { s.ggml("a", 8, {2, 32}, q8_0_block() + q8_0_block().substr(1)); }), &msg),
            TBLOB_E_UQFF_LAYER_SIZE);
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  EXPECT_EQ(open_one(with([](Shard &s) { s.ggml("a", 8, {1, 32}, q8_0_block() + "x"); })), TBLOB_E_UQFF_LAYER_SIZE);
  // last dim not a multiple of the block
  EXPECT_EQ(open_one(with([](Shard &s) { s.ggml("a", 8, {2, 16}, q8_0_block()); })), TBLOB_E_UQFF_LAYER_SIZE);
  // unknown ggml type id (4 and 5 were removed from ggml)
  EXPECT_EQ(open_one(with([](Shard &s) { s.ggml("a", 4, {1, 32}, std::string(20, '\0')); })), TBLOB_E_UQFF_GGML_TYPE);
  // types the GGML table decodes (for GGUF) but mistral.rs never writes: IQ4_NL, MXFP4
  EXPECT_EQ(open_one(with([](Shard &s) { s.ggml("a", 20, {1, 32}, std::string(18, '\0')); })), TBLOB_E_UQFF_GGML_TYPE);
  EXPECT_EQ(open_one(with([](Shard &s) { s.ggml("a", 39, {1, 32}, std::string(17, '\0')); })), TBLOB_E_UQFF_GGML_TYPE);
  // shape product overflow
  EXPECT_EQ(open_one(with([](Shard &s) { s.ggml("a", 0, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, ""); })),
            TBLOB_E_SHAPE_OVERFLOW);
  // declares AFQ, has GGML's entries
  EXPECT_EQ(open_one(with([](Shard &s) {
              s.ggml("a", 8, {1, 32}, q8_0_block());
              for (auto &e : s.entries)
                if (e.name == "a.weight.format") e.bytes = uqt::u8s(4);
            }), &msg),
            TBLOB_E_UQFF_MISMATCH);
  EXPECT_NE(msg.find("afq"), std::string::npos) << msg;
  // a GGML layer without its shape
  EXPECT_EQ(open_one(with([](Shard &s) {
              s.u8("a.weight.format", 0).u32("a.weight.dtype", 8).add("a.weight", "U8", {34}, q8_0_block());
            }), &msg),
            TBLOB_E_UQFF_ENTRIES);
  EXPECT_NE(msg.find(".weight.shape"), std::string::npos) << msg;
  // a stray entry and an unknown field
  EXPECT_EQ(open_one(with([](Shard &s) { s.add("model.norm", "F32", {1}, uqt::f32s(1)); })), TBLOB_E_UQFF_UNRECOGNIZED);
  EXPECT_EQ(open_one(with([](Shard &s) {
              s.u8("a.weight.format", 1).add("a.weight", "F32", {1, 1}, uqt::f32s(1)).u8("a.weight.bogus", 1);
            })),
            TBLOB_E_UQFF_UNRECOGNIZED);
  // no format, structure of exactly one family
  EXPECT_EQ(open_one(with([](Shard &s) { s.add("a.weight", "U8", {2, 16}, std::string(32, 'x')).add("a.weight.scales", "U8", {2, 1}, "xx"); }), &msg),
            TBLOB_E_UQFF_ENTRIES);
  EXPECT_NE(msg.find("mxfp4"), std::string::npos) << msg;
  // a bias with no layer
  EXPECT_EQ(open_one(with([](Shard &s) { s.add("a.bias", "F32", {1}, uqt::f32s(1)); })), TBLOB_E_UQFF_UNRECOGNIZED);
  // HQQ stacked experts
  EXPECT_EQ(open_one(with([](Shard &s) {
              s.u8("a.weight.format", 2).add("a.weight", "U8", {4, 2}, std::string(8, '\0'));
              s.add("a.weight.scales", "F32", {1, 2}, std::string(8, '\0')).add("a.weight.zeros", "F32", {1, 2}, std::string(8, '\0'));
              s.add("a.weight.shape", "U32", {3}, uqt::u32vec({2, 2, 2})).u8("a.weight.bits", 8).u32("a.weight.group_size", 4);
              s.u8("a.weight.axis", 0).u32("a.weight.optimization_steps", 0).u8("a.weight.round_zeros", 0).u8("a.weight.channel_wise", 1);
            })),
            TBLOB_E_UQFF_STACK);
  // AFQ with a group size AFQ does not have
  EXPECT_EQ(open_one(with([](Shard &s) {
              s.u8("a.weight.format", 4).u8("a.weight.bits", 4).u8("a.weight.group_size", 16);
              s.add("a.weight", "U32", {1, 2}, std::string(8, '\0'));
              s.add("a.weight.scales", "F32", {1, 1}, uqt::f32s(1)).add("a.weight.biases", "F32", {1, 1}, uqt::f32s(0));
            })),
            TBLOB_E_UQFF_PARAM);
  // a key in two shards
  {
    Shard a, b;
    a.version().u8("a.weight.format", 1).add("a.weight", "F32", {1, 1}, uqt::f32s(1));
    b.add("a.weight", "F32", {1, 1}, uqt::f32s(2));
    EXPECT_EQ(open_one(a, &msg, &b), TBLOB_E_UQFF_DUPLICATE_KEY);
  }
  // a key in a shard and in residual.safetensors
  {
    TempDir t;
    Shard a, r;
    a.version().u8("a.weight.format", 1).add("a.weight", "F32", {1, 1}, uqt::f32s(1));
    r.add("a.weight", "F32", {1, 1}, uqt::f32s(2));
    t.write("x-0.uqff", a);
    t.write("residual.safetensors", r);
    Opened o(t.path);
    EXPECT_EQ(o.s, TBLOB_E_UQFF_DUPLICATE_KEY) << o.d.message;
  }
  // a shard that is not valid safetensors
  {
    TempDir t;
    Shard a = with([](Shard &s) { s.ggml("a", 8, {1, 32}, q8_0_block()); });
    std::string bytes = a.bytes();
    t.write("x-0.uqff", bytes.substr(0, bytes.size() - 5));
    Opened o(t.path);
    EXPECT_EQ(o.s, TBLOB_E_TRUNCATED) << o.d.message;
  }
}

// ---- family decoders on hand-made values ----------------------------------------------------

TEST(Uqff, FamilyDecoders) {
  TempDir t;
  Shard s;
  s.version().producer();
  // MXFP4 [2, 32]: row 0 scale 127 (x1), byte 0x21 -> elements 0.5 (low nibble 1), 1.0 (high 2);
  // row 1: first block scale 0 (-> 0.0), then code 0 with scale 255 -> 0 * inf = NaN.
  {
    std::string w(32, '\0'), sc;
    w[0] = 0x21;
    w[1] = static_cast<char>(0xF7);  // elements 2: 6.0 (7), 3: -6.0 (0xF)
    w[16] = 0x11;                    // row 1, elements 0/1: code 1 with scale 0 -> 0.0
    sc = std::string(1, '\x7F') + std::string(1, '\0');
    s.u8("mx.weight.format", 6).add("mx.weight", "U8", {2, 16}, w).add("mx.weight.scales", "U8", {2, 1}, sc);
    std::string w2(16, '\0');
    s.u8("mx2.weight.format", 6).add("mx2.weight", "U8", {1, 16}, w2).add("mx2.weight.scales", "U8", {1, 1}, "\xFF");
  }
  // FP8: codes 0x38 (1.0), 0xB8 (-1.0), 0x7F (NaN), 0x01 (2^-9), scale 2.0
  {
    s.u8("f8.weight.format", 3).add("f8.weight", "F8_E4M3", {1, 4}, std::string("\x38\xB8\x7F\x01", 4));
    s.add("f8.weight.dequant_w_scale", "F32", {}, uqt::f32s(2.0f)).add("f8.weight.dequant_x_scale", "F32", {}, uqt::f32s(2.0f));
    s.add("f8.weight.quant_scale", "F32", {}, uqt::f32s(0.5f)).u32("f8.weight.dtype", 9);
  }
  // F8Q8 [3, 20]: 60 values, 2 blocks (padded); block 0 d = 0x38 (1.0 -> 1/448), block 1 d = 0x40 (2.0)
  {
    std::string b0(33, '\0'), b1(33, '\0');
    b0[0] = 0x38;
    b1[0] = 0x40;
    for (int j = 0; j < 32; ++j) {
      b0[1 + j] = static_cast<char>(j - 16);
      b1[1 + j] = static_cast<char>(j < 28 ? 100 - j : 0);
    }
    s.u8("fq.weight.format", 5).add("fq.weight", "U8", {66}, b0 + b1).u32("fq.weight.num_blocks", 2);
    s.add("fq.weight.shape", "U32", {2}, uqt::u32vec({3, 20}));
  }
  // HQQ 4-bit: shape [2, 4] (8 values), group 4 -> W = 2; packed [2, 2]; row r<2 high nibble
  {
    // q values in [G=4, W=2] order: q[r][c]
    const int q[4][2] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
    std::string packed(4, '\0');
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) packed[r * 2 + c] = static_cast<char>((q[r][c] << 4) | q[r + 2][c]);
    s.u8("hq.weight.format", 2).add("hq.weight", "U8", {2, 2}, packed);
    s.add("hq.weight.scales", "F32", {1, 2}, uqt::f32s(0.5f) + uqt::f32s(2.0f));
    s.add("hq.weight.zeros", "F32", {1, 2}, uqt::f32s(1.0f) + uqt::f32s(3.0f));
    s.add("hq.weight.shape", "U32", {2}, uqt::u32vec({2, 4})).u8("hq.weight.bits", 4).u32("hq.weight.group_size", 4);
    s.u8("hq.weight.axis", 0).u32("hq.weight.optimization_steps", 10).u8("hq.weight.round_zeros", 0).u8("hq.weight.channel_wise", 1);
  }
  // AFQ 4-bit, group 32, [1, 32]: codes j%16, scale 0.5, bias -1; a bias vector too
  {
    std::string w(16, '\0');
    for (int j = 0; j < 32; ++j) w[j / 2] = static_cast<char>(w[j / 2] | ((j % 16) << ((j % 2) * 4)));
    s.u8("af.weight.format", 4).u8("af.weight.bits", 4).u8("af.weight.group_size", 32).add("af.weight", "U32", {1, 4}, w);
    s.add("af.weight.scales", "F32", {1, 1}, uqt::f32s(0.5f)).add("af.weight.biases", "F32", {1, 1}, uqt::f32s(-1.0f));
    s.add("af.bias", "F32", {1}, uqt::f32s(3.0f));
  }
  // GGML stacked experts [2, 2, 32] Q8_0: expert e row r has d = 0.5 * (1 + 2e + r)
  {
    std::string blocks;
    for (int e = 0; e < 2; ++e)
      for (int r = 0; r < 2; ++r) blocks += q8_0_block(0.5f * static_cast<float>(1 + 2 * e + r));
    s.ggml("ex.experts.gate_proj", 8, {2, 2, 32}, blocks);
  }
  // Unquant BF16
  s.u8("uq.weight.format", 1).add("uq.weight", "BF16", {1, 2}, std::string("\x80\x3F\x00\xC0", 4));
  t.write("f-0.uqff", s);
  Shard r;
  r.add("model.norm.weight", "F16", {2}, std::string("\x00\x3C\x00\xC0", 4));
  t.write("residual.safetensors", r);

  Opened o(t.path);
  ASSERT_EQ(o.s, TBLOB_OK) << o.d.message;
  const uint32_t kNaN = 0x7FC00000u, kInf = 0x7F800000u;
  {
    const auto y = o.deq("mx.weight");
    ASSERT_EQ(y.size(), 64u);
    EXPECT_EQ(y[0], fbits(0.5f));
    EXPECT_EQ(y[1], fbits(1.0f));
    EXPECT_EQ(y[2], fbits(6.0f));
    EXPECT_EQ(y[3], fbits(-6.0f));
    EXPECT_EQ(y[32], fbits(0.0f));  // scale byte 0 means 0.0 (not 2^-127)
    const auto z = o.deq("mx2.weight");
    EXPECT_EQ(z[0], kNaN);  // 0 * inf
  }
  {
    const auto y = o.deq("f8.weight");
    EXPECT_EQ(y[0], fbits(2.0f));
    EXPECT_EQ(y[1], fbits(-2.0f));
    EXPECT_EQ(y[2], kNaN);  // OCP: 0x7F is NaN
    EXPECT_EQ(y[3], fbits(std::ldexp(1.0f, -8)));
  }
  {
    const auto y = o.deq("fq.weight", 0, 1, 3);  // rows 1-2: elements 20..59, across the block edge
    ASSERT_EQ(y.size(), 40u);
    const float d0 = 1.0f / 448.0f, d1 = 2.0f / 448.0f;
    EXPECT_EQ(y[0], fbits(static_cast<float>(20 - 16) * d0));
    EXPECT_EQ(y[11], fbits(static_cast<float>(31 - 16) * d0));
    EXPECT_EQ(y[12], fbits(100.0f * d1));
    EXPECT_EQ(y[39], fbits(static_cast<float>(100 - 27) * d1));
  }
  {
    const auto y = o.deq("hq.weight");
    // flattened e: c = e % 2, r = e / 2: value (q[r][c] - z[c]) * s[c]
    const int q[4][2] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
    const float sc[2] = {0.5f, 2.0f}, zz[2] = {1.0f, 3.0f};
    for (int e = 0; e < 8; ++e) EXPECT_EQ(y[e], fbits((q[e / 2][e % 2] - zz[e % 2]) * sc[e % 2])) << e;
  }
  {
    const auto y = o.deq("af.weight");
    for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], fbits(0.5f * (j % 16) - 1.0f)) << j;
    tblob_uqff_layer_info li = TBLOB_UQFF_LAYER_INFO_INIT;
    ASSERT_EQ(tblob_uqff_layer_info_at(o.m, o.find("af.weight"), &li, nullptr), TBLOB_OK);
    EXPECT_EQ(li.has_bias, 1u);
    EXPECT_STREQ(li.label, "afq4");
    const auto b = o.deq("af.bias");
    EXPECT_EQ(b[0], fbits(3.0f));
  }
  {
    tblob_uqff_layer_info li = TBLOB_UQFF_LAYER_INFO_INIT;
    ASSERT_EQ(tblob_uqff_layer_info_at(o.m, o.find("ex.experts.gate_proj.weight"), &li, nullptr), TBLOB_OK);
    EXPECT_EQ(li.experts, 2u);
    EXPECT_EQ(li.rows, 2u);
    EXPECT_EQ(li.cols, 32u);
    const auto y1 = o.deq("ex.experts.gate_proj.weight", 1);  // expert 1: rows d = 1.5, 2.0
    ASSERT_EQ(y1.size(), 64u);
    EXPECT_EQ(y1[1], fbits(1.5f * (1 - 16)));
    EXPECT_EQ(y1[33], fbits(2.0f * (1 - 16)));
    const auto all = o.deq("ex.experts.gate_proj.weight", UINT64_MAX);  // the folded [4, 32] view
    ASSERT_EQ(all.size(), 128u);
    EXPECT_EQ(std::memcmp(all.data() + 64, y1.data(), 256), 0);
    o.deq("ex.experts.gate_proj.weight", 2, 0, UINT64_MAX, TBLOB_E_RANGE);
    o.deq("af.weight", 1, 0, UINT64_MAX, TBLOB_E_RANGE);  // not a stack: expert must be 0
    o.deq("af.weight", 0, 0, 2, TBLOB_E_RANGE);
  }
  {
    const auto y = o.deq("uq.weight");
    EXPECT_EQ(y[0], fbits(1.0f));
    EXPECT_EQ(y[1], fbits(-2.0f));
    const auto n = o.deq("model.norm.weight");
    EXPECT_EQ(n[0], fbits(1.0f));
    EXPECT_EQ(n[1], fbits(-2.0f));
  }
  // f16 / bf16 outputs and a small buffer.
  {
    uint16_t h[64];
    const uint64_t i = o.find("mx.weight");
    EXPECT_EQ(tblob_tensor_dequantize(o.m, i, TBLOB_DTYPE_BF16, 0, TBLOB_ALL_ROWS, h, sizeof(h), nullptr),
              TBLOB_OK);
    EXPECT_EQ(h[0], 0x3F00);
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_tensor_dequantize(o.m, i, TBLOB_DTYPE_BF16, 0, TBLOB_ALL_ROWS, h, 127, &d),
              TBLOB_E_BUFFER_TOO_SMALL);
    EXPECT_NE(std::strstr(d.message, "mx.weight"), nullptr) << d.message;
    uint16_t same[2];
    EXPECT_EQ(tblob_tensor_dequantize(o.m, o.find("model.norm.weight"), TBLOB_DTYPE_F16, 0, TBLOB_ALL_ROWS,
                                      same, 4, nullptr),
              TBLOB_OK);
    EXPECT_EQ(same[0], 0x3C00);  // same dtype: stored bits
  }
  (void)kInf;
}

// ---- the verify report ----------------------------------------------------------------------

TEST(Uqff, VerifyReportsEveryProblem) {
  TempDir t;
  Shard s0, s1;
  s0.version().producer();
  s0.ggml("good", 8, {1, 32}, q8_0_block());
  s0.ggml("short", 8, {2, 32}, q8_0_block());              // truncated
  s0.u8("tag.weight.format", 9).add("tag.weight", "U8", {1}, "x");  // unknown tag
  s1.add("stray", "F32", {1}, uqt::f32s(1));                // no producer metadata: warning
  t.write("r-0.uqff", s0);
  t.write("r-1.uqff", s1);
  t.write("config.json", std::string("{\"model_type\":\"llama\",\"num_hidden_layers\":1,\"tie_word_embeddings\":true}"));
  struct Seen {
    int layers = 0, shards = 0, sets = 0, errors = 0, warnings = 0;
    std::vector<std::string> names;
  } seen;
  auto fn = [](void *u, const tblob_uqff_report_entry *e) -> int {
    Seen &s = *static_cast<Seen *>(u);
    if (e->kind == TBLOB_UQFF_ENTRY_LAYER) ++s.layers, s.names.emplace_back(e->name, e->name_len);
    if (e->kind == TBLOB_UQFF_ENTRY_SHARD) ++s.shards;
    if (e->kind == TBLOB_UQFF_ENTRY_SET) ++s.sets;
    for (uint32_t i = 0; i < e->problem_count; ++i)
      (e->problems[i].severity == TBLOB_UQFF_ERROR ? s.errors : s.warnings)++;
    return 0;
  };
  const char *p[1] = {t.path.c_str()};
  tblob_uqff_verify_result r = TBLOB_UQFF_VERIFY_RESULT_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  const tblob_status st = tblob_uqff_verify(p, 1, nullptr, fn, &seen, &r, &d);
  EXPECT_NE(st, TBLOB_OK);
  EXPECT_EQ(seen.shards, 2);
  EXPECT_EQ(seen.sets, 1);
  EXPECT_EQ(seen.layers, 4);  // good, short, tag, stray
  EXPECT_EQ(seen.errors, 3);
  EXPECT_EQ(r.errors, 3u);
  EXPECT_GE(r.warnings, 2u);  // producer of r-1, llama tensors missing
  EXPECT_EQ(r.version_minor, 2u);
  // Open fails on the first of them.
  Opened o(t.path);
  EXPECT_NE(o.s, TBLOB_OK);
  // A callback that stops.
  auto stop = [](void *, const tblob_uqff_report_entry *) -> int { return 1; };
  EXPECT_EQ(tblob_uqff_verify(p, 1, nullptr, stop, nullptr, nullptr, nullptr), TBLOB_E_CANCELLED);
  EXPECT_EQ(detect(t.path), 1);
  EXPECT_EQ(detect(t.file("r-0.uqff")), 1);
  EXPECT_EQ(detect(t.file("config.json")), 0);
}

TEST(Uqff, ArgumentChecks) {
  EXPECT_EQ(tblob_uqff_open(nullptr, 0, nullptr, nullptr, nullptr), TBLOB_E_INVALID_ARGUMENT);
  tblob_uqff_layer_info li = TBLOB_UQFF_LAYER_INFO_INIT;
  EXPECT_EQ(tblob_uqff_layer_info_at(nullptr, 0, &li, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_STREQ(tblob_status_name(TBLOB_E_UQFF_NO_VERSION), "TBLOB_E_UQFF_NO_VERSION");
  for (int s = -162; s <= -140; ++s) EXPECT_STRNE(tblob_status_name(static_cast<tblob_status>(s)), "TBLOB_E_UNKNOWN_STATUS") << s;
}

}  // namespace
