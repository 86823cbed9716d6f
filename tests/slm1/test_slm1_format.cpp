// docs/slm1.md as executable vectors: FNV-1a and checksum tables (section 14), the golden
// files (section 13) read through the public API, the hand-computed encodings and dequantized
// values, the tensor-table conventions and lookup.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "formats/slm1/format.h"
#include "hash/fnv1a.h"
#include "slm1_test_util.h"

using namespace slm1test;

namespace {

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(Slm1Fnv, PublishedAndDocVectors) {
  struct V {
    std::string in;
    uint64_t h;
  };
  const V vs[] = {
      {"", 0xcbf29ce484222325ull},
      {"a", 0xaf63dc4c8601ec8cull},
      {"foobar", 0x85944171f73967e8ull},
      {"norm.weight", 0xe45e883176c5ce0full},
      {"model.embed_tokens.weight", 0xa88fd795d5c6d156ull},
      {"blk.0.attn_q.weight", 0xb2d88a5454e26c3bull},
      {"caf\xc3\xa9", 0x48e8823acfa40d89ull},        // NFC
      {"cafe\xcc\x81", 0x14ecc3ece0723bb7ull},       // NFD: different bytes, different hash
      {"attn.q.weight", 0x5f9d2aa84fd82093ull},
      {"ffn.up.weight", 0xd0f255c0760da0a2ull},
  };
  for (const V &v : vs) {
    EXPECT_EQ(tblob_fnv1a64(v.in.data(), v.in.size()), v.h) << v.in;
    EXPECT_EQ(tblob::fnv1a64(v.in.data(), v.in.size()), v.h) << v.in;
    EXPECT_EQ(ref_fnv1a64(v.in), v.h) << v.in;
  }
  EXPECT_EQ(tblob_fnv1a64(nullptr, 5), 0xcbf29ce484222325ull);  // NULL: no bytes
}

TEST(Slm1Checksum, DocVectors) {
  std::vector<uint8_t> zeros(108, 0);
  EXPECT_EQ(tblob::slm1::checksum(zeros.data(), zeros.size()), 0x64a8dc4b2a88e0faull);
  std::vector<uint8_t> ramp(256);
  for (int i = 0; i < 256; ++i) ramp[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(tblob::slm1::checksum(ramp.data(), ramp.size()), 0xfb3b03aafe63ad2dull);
  for (int i = 100; i < 108; ++i) ramp[i] = 0xff;  // masked field
  EXPECT_EQ(tblob::slm1::checksum(ramp.data(), ramp.size()), 0xfb3b03aafe63ad2dull);
  const Bytes btok = read_file(data_path("tiny_btok.slm"));
  const Bytes bpe1 = read_file(data_path("tiny_bpe1.slm"));
  ASSERT_EQ(btok.size(), 656u);
  ASSERT_EQ(bpe1.size(), 336u);
  EXPECT_EQ(tblob::slm1::checksum(btok.data(), btok.size()), 0xb4877eb3afd36437ull);
  EXPECT_EQ(tblob::slm1::checksum(bpe1.data(), bpe1.size()), 0xd7c539d35b1b2fd3ull);
  // The streaming form gives the same value whatever the chunking.
  for (size_t chunk : {1u, 3u, 7u, 64u, 101u, 4096u}) {
    tblob::slm1::ChecksumStream s;
    for (size_t off = 0; off < btok.size(); off += chunk)
      s.update(btok.data() + off, std::min(chunk, btok.size() - off));
    EXPECT_EQ(s.value(), 0xb4877eb3afd36437ull) << chunk;
  }
  // And the independent implementation agrees on random data.
  std::vector<uint8_t> r(1000);
  uint32_t x = 12345;
  for (auto &b : r) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 16);
  EXPECT_EQ(tblob::slm1::checksum(r.data(), r.size()), ref_checksum(r.data(), r.size()));
}

TEST(Slm1Golden, TinyBtokHeaderAndTable) {
  const Bytes b = read_file(data_path("tiny_btok.slm"));
  Opened o;
  open_bytes(b, &o);
  ASSERT_EQ(o.status, TBLOB_OK) << o.message();
  EXPECT_EQ(tblob_model_format(o.m), static_cast<uint32_t>(TBLOB_FORMAT_SLM1));
  ASSERT_EQ(tblob_model_tensor_count(o.m), 3u);
  tblob_slm1_header_info h = TBLOB_SLM1_HEADER_INFO_INIT;
  ASSERT_EQ(tblob_slm1_header(o.m, &h, nullptr), TBLOB_OK);
  EXPECT_EQ(h.version, 1u);
  EXPECT_EQ(h.header_length, 108u);
  EXPECT_EQ(h.model_type, 1u);
  EXPECT_EQ(h.vocab_size, 260u);
  EXPECT_EQ(h.special_token_count, 4u);
  EXPECT_EQ(h.hidden_size, 4u);
  EXPECT_EQ(h.layer_count, 1u);
  EXPECT_EQ(h.head_count, 2u);
  EXPECT_EQ(h.kv_head_count, 2u);
  EXPECT_EQ(h.head_dim, 2u);
  EXPECT_EQ(h.ffn_size, 8u);
  EXPECT_EQ(h.max_context, 16u);
  EXPECT_EQ(h.rope_theta, 10000.0f);
  EXPECT_EQ(h.rms_norm_epsilon, 1e-5f);
  EXPECT_EQ(h.tokenizer_kind, static_cast<uint32_t>(TBLOB_SLM1_TOKENIZER_BTOK));
  EXPECT_EQ(h.tokenizer_offset, 0x6cu);
  EXPECT_EQ(h.tokenizer_length, 28u);
  EXPECT_EQ(h.tensor_directory_offset, 0xc0u);
  EXPECT_EQ(h.tensor_data_offset, 0x180u);
  EXPECT_EQ(h.checksum, 0xb4877eb3afd36437ull);
  EXPECT_EQ(h.checksum_verified, 1u);
  EXPECT_EQ(h.directory_sorted, 1u);
  EXPECT_EQ(0, std::memcmp(h.tokenizer, "BTOK", 4));

  // Entry 0 as read in 13.1.
  tblob_slm1_tensor_info t = TBLOB_SLM1_TENSOR_INFO_INIT;
  ASSERT_EQ(tblob_slm1_tensor_at(o.m, 0, &t, nullptr), TBLOB_OK);
  EXPECT_EQ(t.name_hash, 0x5f9d2aa84fd82093ull);
  EXPECT_EQ(t.dtype, static_cast<uint32_t>(TBLOB_SLM1_Q8_0));
  EXPECT_EQ(t.rank, 2u);
  EXPECT_EQ(t.dims[0], 2u);
  EXPECT_EQ(t.dims[1], 4u);
  EXPECT_EQ(t.dims[2], 0u);
  EXPECT_EQ(t.byte_offset, 0x180u);
  EXPECT_EQ(t.byte_length, 8u);
  EXPECT_EQ(t.scale_offset, 0x1c0u);
  EXPECT_EQ(t.scale_length, 8u);
  EXPECT_EQ(t.block_size, 4u);
  EXPECT_EQ(t.rows, 2u);
  EXPECT_EQ(t.cols, 4u);
  EXPECT_EQ(t.entry_offset, 0xc0u);
  EXPECT_EQ(t.name_listed, 0u);
  EXPECT_EQ(static_cast<const uint8_t *>(t.payload), b.data() + 0x180);
  EXPECT_EQ(static_cast<const uint8_t *>(t.scales), b.data() + 0x1c0);

  // Generic table: synthetic names, stored dtype and shape, data region offsets.
  const char *names[3] = {"fnv1a:5f9d2aa84fd82093", "fnv1a:d0f255c0760da0a2", "fnv1a:e45e883176c5ce0f"};
  const uint32_t dtypes[3] = {TBLOB_DTYPE_I8, TBLOB_DTYPE_U8, TBLOB_DTYPE_F32};
  const uint64_t last_dim[3] = {4, 4, 4};  // q4_0 [2, 8] is stored as U8 [2, 4]
  const uint64_t offs[3] = {0x180, 0x200, 0x280};
  for (uint64_t i = 0; i < 3; ++i) {
    tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(o.m, i, &ti, nullptr), TBLOB_OK);
    EXPECT_EQ(std::string(ti.name, ti.name_len), names[i]);
    EXPECT_EQ(ti.dtype, dtypes[i]);
    EXPECT_EQ(ti.shape[ti.rank - 1], last_dim[i]);
    EXPECT_EQ(ti.file_offset, offs[i]);
    EXPECT_EQ(ti.data_offset, offs[i] - 0x180);
    uint64_t elements = 1;
    for (uint32_t k = 0; k < ti.rank; ++k) elements *= ti.shape[k];
    EXPECT_EQ(elements, ti.element_count);
    EXPECT_EQ(elements * tblob_dtype_bits(ti.dtype) / 8, ti.data_length);  // dtype x shape = bytes
    const void *data;
    uint64_t len;
    ASSERT_EQ(tblob_tensor_data(o.m, i, &data, &len, nullptr), TBLOB_OK);
    EXPECT_EQ(static_cast<const uint8_t *>(data), b.data() + offs[i]);
  }
  // Metadata mirrors the header.
  const char *v;
  size_t vl;
  ASSERT_EQ(tblob_metadata_find(o.m, "hidden_size", 11, &v, &vl, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(v, vl), "4");
  ASSERT_EQ(tblob_metadata_find(o.m, "rms_norm_epsilon", 16, &v, &vl, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(v, vl), "1e-05");
  ASSERT_EQ(tblob_metadata_find(o.m, "checksum", 8, &v, &vl, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(v, vl), "b4877eb3afd36437");
  ASSERT_EQ(tblob_metadata_find(o.m, "tokenizer", 9, &v, &vl, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(v, vl), "BTOK");
}

TEST(Slm1Golden, HandComputedEncodings) {
  const Bytes b = read_file(data_path("tiny_btok.slm"));
  Opened o;
  open_bytes(b, &o);
  ASSERT_EQ(o.status, TBLOB_OK) << o.message();
  // attn.q.weight: codes 7f 02 fc 00 / 20 c0 5f 81, scales 1.0 and 0x3d010204.
  const uint8_t q8[8] = {0x7f, 0x02, 0xfc, 0x00, 0x20, 0xc0, 0x5f, 0x81};
  EXPECT_EQ(0, std::memcmp(b.data() + 0x180, q8, 8));
  EXPECT_EQ(get_u32(b, 0x1c0), 0x3f800000u);
  EXPECT_EQ(get_u32(b, 0x1c4), 0x3d010204u);
  // ffn.up.weight: 47 0e 32 75 00 00 39 20, scales 1.0, 0x3f124925, 1.0, 0x3e124925.
  const uint8_t q4[8] = {0x47, 0x0e, 0x32, 0x75, 0x00, 0x00, 0x39, 0x20};
  EXPECT_EQ(0, std::memcmp(b.data() + 0x200, q4, 8));
  EXPECT_EQ(get_u32(b, 0x240), 0x3f800000u);
  EXPECT_EQ(get_u32(b, 0x244), 0x3f124925u);
  EXPECT_EQ(get_u32(b, 0x248), 0x3f800000u);
  EXPECT_EQ(get_u32(b, 0x24c), 0x3e124925u);

  // Dequantized: q x scale, one f32 multiply.
  const float s1 = from_bits(0x3d010204u);
  const std::vector<float> want_q8 = {127, 2, -4, 0, 32 * s1, -64 * s1, 95 * s1, -127 * s1};
  EXPECT_EQ(dequant_all(o.m, 0), want_q8);
  const float doc_q8[8] = {127, 2, -4, 0, 1.007874f, -2.015748f, 2.992126f, -4};
  const std::vector<float> got_q8 = dequant_all(o.m, 0);
  for (int k = 0; k < 8; ++k) EXPECT_NEAR(got_q8[k], doc_q8[k], 1e-6) << k;
  const float b1 = from_bits(0x3f124925u), b3 = from_bits(0x3e124925u);
  const std::vector<float> want_q4 = {7, 4, -2, 0, 2 * b1, 3 * b1, 5 * b1, 7 * b1,
                                      0, 0, 0, 0, -7 * b3, 3 * b3, 0 * b3, 2 * b3};
  EXPECT_EQ(dequant_all(o.m, 1), want_q4);
  const float doc_q4[16] = {7, 4, -2, 0, 1.142857f, 1.714286f, 2.857143f, 4,
                            0, 0, 0, 0, -1, 0.428571f, 0, 0.285714f};
  const std::vector<float> got_q4 = dequant_all(o.m, 1);
  for (int k = 0; k < 16; ++k) EXPECT_NEAR(got_q4[k], doc_q4[k], 1e-6) << k;
  EXPECT_EQ(dequant_all(o.m, 2), (std::vector<float>{1, 0.5f, -2, 0.25f}));
}

TEST(Slm1Golden, TinyBpe1) {
  const Bytes b = read_file(data_path("tiny_bpe1.slm"));
  Opened o;
  open_bytes(b, &o);
  ASSERT_EQ(o.status, TBLOB_OK) << o.message();
  tblob_slm1_header_info h = TBLOB_SLM1_HEADER_INFO_INIT;
  ASSERT_EQ(tblob_slm1_header(o.m, &h, nullptr), TBLOB_OK);
  EXPECT_EQ(h.tokenizer_kind, static_cast<uint32_t>(TBLOB_SLM1_TOKENIZER_BPE1));
  EXPECT_EQ(h.vocab_size, 262u);
  EXPECT_EQ(h.tokenizer_length, 89u);
  EXPECT_EQ(h.tensor_directory_offset, 0x100u);
  EXPECT_EQ(h.tensor_data_offset, 0x140u);
  EXPECT_EQ(h.checksum, 0xd7c539d35b1b2fd3ull);
  uint64_t idx = 99;
  ASSERT_EQ(tblob_tensor_find(o.m, "norm.weight", 11, &idx, nullptr), TBLOB_OK);
  EXPECT_EQ(idx, 0u);
}

TEST(Slm1Golden, OpenPathDetectsMagic) {
  for (const char *f : {"tiny_btok.slm", "tiny_bpe1.slm"}) {
    tblob_model *m = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    ASSERT_EQ(tblob_model_open(data_path(f).c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
    EXPECT_EQ(tblob_model_format(m), static_cast<uint32_t>(TBLOB_FORMAT_SLM1));
    uint64_t idx;
    EXPECT_EQ(tblob_tensor_find(m, "norm.weight", 11, &idx, nullptr), TBLOB_OK);
    tblob_model_close(m);
    // Read mode too, and the SLM1-only entry point.
    tblob_open_options opts = TBLOB_OPEN_OPTIONS_INIT;
    opts.mode = TBLOB_OPEN_READ;
    ASSERT_EQ(tblob_slm1_open_path(data_path(f).c_str(), &opts, nullptr, &m, &d), TBLOB_OK) << d.message;
    tblob_model_close(m);
  }
  // A safetensors file is not SLM1 for the SLM1-only entry point.
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  const std::string st = std::string(SLM1_DATA_DIR) + "/../../../examples/tiny-llama/model.safetensors";
  EXPECT_EQ(tblob_slm1_open_path(st.c_str(), nullptr, nullptr, &m, &d), TBLOB_E_UNKNOWN_FORMAT);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(tblob_slm1_open_path("/nonexistent/x.slm", nullptr, nullptr, &m, &d), TBLOB_E_NOT_FOUND);
}

TEST(Slm1Lookup, FindByNameAndHash) {
  const Bytes b = read_file(data_path("tiny_btok.slm"));
  Opened o;
  open_bytes(b, &o);
  ASSERT_EQ(o.status, TBLOB_OK);
  const char *names[3] = {"attn.q.weight", "ffn.up.weight", "norm.weight"};
  for (uint64_t i = 0; i < 3; ++i) {
    uint64_t idx = 99;
    ASSERT_EQ(tblob_tensor_find(o.m, names[i], std::strlen(names[i]), &idx, nullptr), TBLOB_OK) << names[i];
    EXPECT_EQ(idx, i);
    idx = 99;
    ASSERT_EQ(tblob_slm1_find_hash(o.m, ref_fnv1a64(names[i], std::strlen(names[i])), &idx, nullptr), TBLOB_OK);
    EXPECT_EQ(idx, i);
  }
  uint64_t idx;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_tensor_find(o.m, "nope", 4, &idx, &d), TBLOB_E_NOT_FOUND);
  EXPECT_NE(std::string(d.message).find("nope"), std::string::npos);
  EXPECT_NE(std::string(d.message).find("hash"), std::string::npos);
  // The synthetic label is a label, not a name.
  EXPECT_EQ(tblob_tensor_find(o.m, "fnv1a:e45e883176c5ce0f", 22, &idx, nullptr), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(tblob_slm1_find_hash(o.m, 1, &idx, nullptr), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(tblob_tensor_find(o.m, "", 0, &idx, nullptr), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(tblob_tensor_find(o.m, nullptr, 0, &idx, nullptr), TBLOB_E_NOT_FOUND);
}

TEST(Slm1Lookup, RequiredNamesBecomeTableNames) {
  const Bytes b = read_file(data_path("tiny_btok.slm"));
  const std::vector<std::string> names = {"norm.weight", "attn.q.weight", "norm.weight", "missing.weight"};
  Opened o;
  open_bytes(b, &o, 0, &names);
  ASSERT_EQ(o.status, TBLOB_OK) << o.message();
  tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
  ASSERT_EQ(tblob_tensor_at(o.m, 0, &t, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(t.name, t.name_len), "attn.q.weight");
  ASSERT_EQ(tblob_tensor_at(o.m, 1, &t, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(t.name, t.name_len), "fnv1a:d0f255c0760da0a2");  // not listed
  ASSERT_EQ(tblob_tensor_at(o.m, 2, &t, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(t.name, t.name_len), "norm.weight");
  tblob_slm1_tensor_info s = TBLOB_SLM1_TENSOR_INFO_INIT;
  ASSERT_EQ(tblob_slm1_tensor_at(o.m, 2, &s, nullptr), TBLOB_OK);
  EXPECT_EQ(s.name_listed, 1u);
  uint64_t idx;
  EXPECT_EQ(tblob_tensor_find(o.m, "missing.weight", 14, &idx, nullptr), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(tblob_tensor_find(o.m, "ffn.up.weight", 13, &idx, nullptr), TBLOB_OK);  // unlisted still found
}

TEST(Slm1Lookup, UnsortedDirectoryUsesIndex) {
  Bytes b = read_file(data_path("tiny_btok.slm"));
  // Swap entries 0 and 2: the regions stay valid (the reader accepts any entry order).
  const uint64_t e0 = entry_at(b, 0), e2 = entry_at(b, 2);
  std::vector<uint8_t> tmp(b.begin() + e0, b.begin() + e0 + 64);
  std::copy(b.begin() + e2, b.begin() + e2 + 64, b.begin() + e0);
  std::copy(tmp.begin(), tmp.end(), b.begin() + e2);
  refresh_checksum(b);
  Opened o;
  open_bytes(b, &o);
  ASSERT_EQ(o.status, TBLOB_OK) << o.message();
  tblob_slm1_header_info h = TBLOB_SLM1_HEADER_INFO_INIT;
  ASSERT_EQ(tblob_slm1_header(o.m, &h, nullptr), TBLOB_OK);
  EXPECT_EQ(h.directory_sorted, 0u);
  uint64_t idx;
  ASSERT_EQ(tblob_tensor_find(o.m, "norm.weight", 11, &idx, nullptr), TBLOB_OK);
  EXPECT_EQ(idx, 0u);
  ASSERT_EQ(tblob_tensor_find(o.m, "attn.q.weight", 13, &idx, nullptr), TBLOB_OK);
  EXPECT_EQ(idx, 2u);
  ASSERT_EQ(tblob_tensor_find(o.m, "ffn.up.weight", 13, &idx, nullptr), TBLOB_OK);
  EXPECT_EQ(idx, 1u);
  EXPECT_EQ(tblob_tensor_find(o.m, "x", 1, &idx, nullptr), TBLOB_E_NOT_FOUND);
  EXPECT_EQ(dequant_all(o.m, 2)[0], 127.0f);
}

TEST(Slm1Api, ArgumentChecks) {
  const Bytes b = read_file(data_path("tiny_btok.slm"));
  Opened o;
  open_bytes(b, &o);
  ASSERT_EQ(o.status, TBLOB_OK);
  tblob_slm1_tensor_info t = TBLOB_SLM1_TENSOR_INFO_INIT;
  EXPECT_EQ(tblob_slm1_tensor_at(o.m, 3, &t, nullptr), TBLOB_E_RANGE);
  EXPECT_EQ(tblob_slm1_tensor_at(nullptr, 0, &t, nullptr), TBLOB_E_INVALID_ARGUMENT);
  t.struct_size = 8;
  EXPECT_EQ(tblob_slm1_tensor_at(o.m, 0, &t, nullptr), TBLOB_E_INVALID_ARGUMENT);
  tblob_slm1_header_info h = TBLOB_SLM1_HEADER_INFO_INIT;
  h.struct_size = 8;
  EXPECT_EQ(tblob_slm1_header(o.m, &h, nullptr), TBLOB_E_INVALID_ARGUMENT);
  // Not an SLM1 model.
  tblob_model *st = nullptr;
  const std::string path = std::string(SLM1_DATA_DIR) + "/../../../examples/tiny-llama/model.safetensors";
  ASSERT_EQ(tblob_model_open(path.c_str(), nullptr, &st, nullptr), TBLOB_OK);
  h = TBLOB_SLM1_HEADER_INFO_INIT;
  EXPECT_EQ(tblob_slm1_header(st, &h, nullptr), TBLOB_E_INVALID_ARGUMENT);
  uint64_t idx;
  EXPECT_EQ(tblob_slm1_find_hash(st, 0, &idx, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_tensor_find(st, "model.norm.weight", 17, &idx, nullptr), TBLOB_OK);  // generic path intact
  tblob_model_close(st);
  // Bad SLM1 options.
  tblob_slm1_open_options so = TBLOB_SLM1_OPEN_OPTIONS_INIT;
  so.reserved = 1;
  tblob_model *m = nullptr;
  EXPECT_EQ(tblob_slm1_open_memory(b.data(), b.size(), nullptr, &so, &m, nullptr), TBLOB_E_INVALID_ARGUMENT);
  so = TBLOB_SLM1_OPEN_OPTIONS_INIT;
  so.required_name_count = 1;  // arrays missing
  EXPECT_EQ(tblob_slm1_open_memory(b.data(), b.size(), nullptr, &so, &m, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(tblob_slm1_open_memory(nullptr, 5, nullptr, nullptr, &m, nullptr), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_STREQ(tblob_status_name(TBLOB_E_SLM1_CHECKSUM), "TBLOB_E_SLM1_CHECKSUM");
  for (int s = -177; s <= -170; ++s) EXPECT_STRNE(tblob_status_name(static_cast<tblob_status>(s)), "TBLOB_E_UNKNOWN_STATUS") << s;
}

TEST(Slm1Dequant, RowRangesAndBufferChecks) {
  const Bytes b = read_file(data_path("tiny_btok.slm"));
  Opened o;
  open_bytes(b, &o);
  ASSERT_EQ(o.status, TBLOB_OK);
  tblob::Slm1View v;
  ASSERT_EQ(tblob::slm1_view(o.m, 1, &v), TBLOB_OK);
  const std::vector<float> all = dequant_all(o.m, 1);
  float row[8];
  ASSERT_EQ(tblob::slm1_dequant_rows(v, 1, 2, row, 8), TBLOB_OK);
  EXPECT_EQ(0, std::memcmp(row, all.data() + 8, sizeof(row)));
  EXPECT_EQ(tblob::slm1_dequant_rows(v, 0, 2, row, 8), TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(tblob::slm1_dequant_rows(v, 2, 1, row, 8), TBLOB_E_RANGE);
  EXPECT_EQ(tblob::slm1_dequant_rows(v, 0, 3, row, 8), TBLOB_E_RANGE);
  EXPECT_EQ(tblob::slm1_dequant_rows(v, 1, 1, nullptr, 0), TBLOB_OK);  // empty range
  EXPECT_EQ(tblob::slm1_dequant_rows(v, 0, 1, nullptr, 8), TBLOB_E_INVALID_ARGUMENT);
  tblob::Slm1View bad = v;
  bad.scale_bytes -= 4;  // short scale array
  EXPECT_EQ(tblob::slm1_dequant_rows(bad, 0, 1, row, 8), TBLOB_E_INVALID_ARGUMENT);
  bad = v;
  bad.block_size = 3;
  EXPECT_EQ(tblob::slm1_dequant_rows(bad, 0, 1, row, 8), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob::slm1_view(o.m, 3, &v), TBLOB_E_RANGE);
  // -128 (q8_0) and -8 (q4_0) decode though the writer never produces them.
  Bytes c = b;
  c[0x180] = 0x80;
  c[0x200] = 0x88;
  refresh_checksum(c);
  Opened o2;
  open_bytes(c, &o2);
  ASSERT_EQ(o2.status, TBLOB_OK) << o2.message();
  EXPECT_EQ(dequant_all(o2.m, 0)[0], -128.0f);
  EXPECT_EQ(dequant_all(o2.m, 1)[0], -8.0f);
  EXPECT_EQ(dequant_all(o2.m, 1)[1], -8.0f);
}

TEST(Slm1Dequant, MisalignedBufferWorks) {
  const Bytes b = read_file(data_path("tiny_btok.slm"));
  std::vector<uint8_t> shifted(b.size() + 3);
  std::memcpy(shifted.data() + 3, b.data(), b.size());
  tblob_model *m = nullptr;
  ASSERT_EQ(tblob_slm1_open_memory(shifted.data() + 3, b.size(), nullptr, nullptr, &m, nullptr), TBLOB_OK);
  EXPECT_EQ(dequant_all(m, 0)[5], -64 * from_bits(0x3d010204u));
  EXPECT_EQ(dequant_all(m, 2), (std::vector<float>{1, 0.5f, -2, 0.25f}));
  tblob_model_close(m);
}

}  // namespace
