// The SLM1 writer: byte-for-byte golden files, round trips writer -> reader for every dtype,
// rank and block size (codes and scales compared with an independent quantizer written from
// docs/slm1.md section 8), encoded input, config.json, atomic finish, and every refusal.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "slm1_test_util.h"

using namespace slm1test;

namespace {

// ---- independent reference (docs/slm1.md section 8), not sharing code with lib/ ----------

struct RefEncoded {
  std::vector<uint8_t> payload, scales;
};

float ref_scale(float amax, float qmax) {
  volatile float s = amax / qmax;  // one f32 division
  return s == 0.0f ? 1.0f : s;
}

int ref_code(float x, float s, int qmax) {
  volatile float q = x / s;
  float r = std::nearbyint(q);  // default mode: ties to even
  int i = static_cast<int>(r);
  return i > qmax ? qmax : (i < -qmax ? -qmax : i);
}

void push_f32(std::vector<uint8_t> &v, float f) {
  uint8_t b[4];
  std::memcpy(b, &f, 4);
  v.insert(v.end(), b, b + 4);
}

RefEncoded ref_encode(const std::vector<float> &x, uint64_t rows, uint64_t cols, uint32_t dtype, uint32_t block) {
  RefEncoded e;
  if (dtype == TBLOB_SLM1_F32) {
    for (float f : x) push_f32(e.payload, f);
    return e;
  }
  const uint64_t g = dtype == TBLOB_SLM1_Q8_0 ? cols : block;
  const float qmax = dtype == TBLOB_SLM1_Q8_0 ? 127.0f : 7.0f;
  std::vector<int> codes;
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t b0 = 0; b0 < cols; b0 += g) {
      float amax = 0;
      for (uint64_t c = b0; c < b0 + g; ++c) amax = std::max(amax, std::fabs(x[r * cols + c]));
      const float s = ref_scale(amax, qmax);
      push_f32(e.scales, s);
      for (uint64_t c = b0; c < b0 + g; ++c) codes.push_back(ref_code(x[r * cols + c], s, static_cast<int>(qmax)));
    }
  }
  if (dtype == TBLOB_SLM1_Q8_0) {
    for (int q : codes) e.payload.push_back(static_cast<uint8_t>(q & 0xff));
  } else {
    for (size_t k = 0; k < codes.size(); k += 2)
      e.payload.push_back(static_cast<uint8_t>((codes[k] & 0xf) | ((codes[k + 1] & 0xf) << 4)));
  }
  return e;
}

std::vector<float> ref_decode(const RefEncoded &e, uint64_t rows, uint64_t cols, uint32_t dtype, uint32_t block) {
  std::vector<float> out(rows * cols);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < cols; ++c) {
      const uint64_t k = r * cols + c;
      if (dtype == TBLOB_SLM1_F32) {
        std::memcpy(&out[k], e.payload.data() + 4 * k, 4);
        continue;
      }
      int q;
      uint64_t si;
      if (dtype == TBLOB_SLM1_Q8_0) {
        q = static_cast<int8_t>(e.payload[k]);
        si = r;
      } else {
        const int nib = (e.payload[k / 2] >> ((k % 2) * 4)) & 0xf;
        q = nib >= 8 ? nib - 16 : nib;
        si = r * (cols / block) + c / block;
      }
      float s;
      std::memcpy(&s, e.scales.data() + 4 * si, 4);
      volatile float v = static_cast<float>(q) * s;
      out[k] = v;
    }
  }
  return out;
}

uint32_t g_rng = 0x12345678u;
float rnd() {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 17;
  g_rng ^= g_rng << 5;
  return static_cast<float>(static_cast<int32_t>(g_rng)) / 2147483648.0f;
}

std::vector<float> make_values(uint64_t n, int flavour) {
  std::vector<float> v(n);
  for (uint64_t k = 0; k < n; ++k) {
    switch (flavour) {
      case 0: v[k] = rnd() * 3.0f; break;                       // ordinary
      case 1: v[k] = (k % 5 == 0) ? 0.0f : rnd() * 1e-3f; break; // small, with zeros
      case 2: v[k] = rnd() * 3e38f; break;                      // near the f32 limit
      case 3: v[k] = 0.0f; break;                               // all zero: scale 1.0
      case 4: v[k] = (k % 2 ? 1e-45f : -1e-45f); break;         // amax/QMAX underflows
      default: v[k] = std::round(rnd() * 20.0f) / 2.0f; break;  // many exact ties
    }
  }
  return v;
}

// ---- golden files ------------------------------------------------------------------------

TEST(Slm1Writer, GoldenBtokByteForByte) {
  // Added in a different order from the file's (the writer sorts by hash).
  Writer w;
  ASSERT_EQ(w.status, TBLOB_OK) << w.diag.message;
  ASSERT_EQ(w.add("norm.weight", {4}, {1, 0.5f, -2, 0.25f}, TBLOB_SLM1_F32), TBLOB_OK);
  ASSERT_EQ(w.add("ffn.up.weight", {2, 8}, {7, 3.5f, -2.5f, 0.5f, 1, 2, 3, 4, 0, 0, 0, 0, -1, 0.5f, 0, 0.25f},
                  TBLOB_SLM1_Q4_0, 4), TBLOB_OK);
  ASSERT_EQ(w.add("attn.q.weight", {2, 4}, {127, 2.5f, -3.5f, -0.5f, 1, -2, 3, -4}, TBLOB_SLM1_Q8_0), TBLOB_OK);
  tblob_status s;
  const Bytes out = w.emit(&s);
  ASSERT_EQ(s, TBLOB_OK) << w.diag.message;
  EXPECT_EQ(out, read_file(data_path("tiny_btok.slm")));
}

TEST(Slm1Writer, GoldenBpe1ByteForByte) {
  const Bytes golden = read_file(data_path("tiny_bpe1.slm"));
  ASSERT_EQ(golden.size(), 336u);
  tblob_slm1_writer_options o = golden_options();
  o.tokenizer = golden.data() + 0x6c;
  o.tokenizer_length = 89;
  Writer w(o);
  ASSERT_EQ(w.status, TBLOB_OK) << w.diag.message;
  ASSERT_EQ(w.add("norm.weight", {4}, {1, 0.5f, -2, 0.25f}, TBLOB_SLM1_F32), TBLOB_OK);
  EXPECT_EQ(w.emit(), golden);
}

TEST(Slm1Writer, FinishWritesAtomically) {
  char dir[] = "/tmp/slm1-writer-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/out.slm";
  {  // an old file is replaced whole
    FILE *f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("old contents", f);
    std::fclose(f);
  }
  tblob_slm1_writer_options o = golden_options();
  tblob_slm1_writer *w = nullptr;
  ASSERT_EQ(tblob_slm1_writer_new(&o, &w, nullptr), TBLOB_OK);
  const std::vector<float> norm = {1, 0.5f, -2, 0.25f}, q = {127, 2.5f, -3.5f, -0.5f, 1, -2, 3, -4};
  const std::vector<float> up = {7, 3.5f, -2.5f, 0.5f, 1, 2, 3, 4, 0, 0, 0, 0, -1, 0.5f, 0, 0.25f};
  const uint64_t s1[1] = {4}, s2[2] = {2, 4}, s3[2] = {2, 8};
  ASSERT_EQ(tblob_slm1_writer_add_f32(w, "norm.weight", 11, s1, 1, norm.data(), 4, TBLOB_SLM1_F32, 0, nullptr), TBLOB_OK);
  ASSERT_EQ(tblob_slm1_writer_add_f32(w, "attn.q.weight", 13, s2, 2, q.data(), 8, TBLOB_SLM1_Q8_0, 0, nullptr), TBLOB_OK);
  ASSERT_EQ(tblob_slm1_writer_add_f32(w, "ffn.up.weight", 13, s3, 2, up.data(), 16, TBLOB_SLM1_Q4_0, 4, nullptr), TBLOB_OK);
  tblob_diag d = TBLOB_DIAG_INIT;
  // A directory that does not exist: TBLOB_E_IO, nothing created.
  EXPECT_EQ(tblob_slm1_writer_finish(w, (std::string(dir) + "/no/such/dir/x.slm").c_str(), &d), TBLOB_E_IO);
  ASSERT_EQ(tblob_slm1_writer_finish(w, path.c_str(), &d), TBLOB_OK) << d.message;
  EXPECT_EQ(read_file(path), read_file(data_path("tiny_btok.slm")));
  // Finished: no more tensors, no second finish.
  EXPECT_EQ(tblob_slm1_writer_add_f32(w, "x", 1, s1, 1, norm.data(), 4, TBLOB_SLM1_F32, 0, nullptr),
            TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(tblob_slm1_writer_finish(w, path.c_str(), nullptr), TBLOB_E_INVALID_ARGUMENT);
  tblob_slm1_writer_free(w);
  tblob_slm1_writer_free(nullptr);
  // No temporary file is left beside it.
  const std::string listing = std::string("ls -A ") + dir + " | wc -l";
  FILE *p = popen(listing.c_str(), "r");
  ASSERT_NE(p, nullptr);
  int count = -1;
  ASSERT_EQ(std::fscanf(p, "%d", &count), 1);
  pclose(p);
  EXPECT_EQ(count, 1);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  unlink(path.c_str());
  rmdir(dir);
}

// ---- round trips --------------------------------------------------------------------------

struct Case {
  uint32_t dtype;
  std::vector<uint64_t> shape;
  uint32_t block;  // q4_0 block; 0 otherwise
};

void round_trip(const std::vector<Case> &cases, int flavour) {
  Writer w;
  ASSERT_EQ(w.status, TBLOB_OK);
  std::vector<std::string> names;
  std::vector<std::vector<float>> values;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case &c = cases[i];
    uint64_t n = 1;
    for (uint64_t d : c.shape) n *= d;
    names.push_back("t" + std::to_string(i) + ".d" + std::to_string(c.dtype) + ".r" +
                    std::to_string(c.shape.size()) + ".b" + std::to_string(c.block));
    values.push_back(make_values(n, flavour));
    ASSERT_EQ(w.add(names.back(), c.shape, values.back(), c.dtype, c.block), TBLOB_OK)
        << names.back() << ": " << w.diag.message;
  }
  tblob_status s;
  const Bytes file = w.emit(&s);
  ASSERT_EQ(s, TBLOB_OK) << w.diag.message;
  Opened o;
  open_bytes(file, &o, 0, &names);
  ASSERT_EQ(o.status, TBLOB_OK) << o.message();
  ASSERT_EQ(tblob_model_tensor_count(o.m), cases.size());
  tblob_slm1_header_info h = TBLOB_SLM1_HEADER_INFO_INIT;
  ASSERT_EQ(tblob_slm1_header(o.m, &h, nullptr), TBLOB_OK);
  EXPECT_EQ(h.directory_sorted, 1u);
  EXPECT_EQ(h.checksum_verified, 1u);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case &c = cases[i];
    SCOPED_TRACE(names[i]);
    uint64_t idx;
    ASSERT_EQ(tblob_tensor_find(o.m, names[i].data(), names[i].size(), &idx, nullptr), TBLOB_OK);
    tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(o.m, idx, &ti, nullptr), TBLOB_OK);
    EXPECT_EQ(std::string(ti.name, ti.name_len), names[i]);
    tblob_slm1_tensor_info t = TBLOB_SLM1_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_slm1_tensor_at(o.m, idx, &t, nullptr), TBLOB_OK);
    EXPECT_EQ(t.dtype, c.dtype);
    ASSERT_EQ(t.rank, c.shape.size());
    for (size_t k = 0; k < 4; ++k) EXPECT_EQ(t.dims[k], k < c.shape.size() ? c.shape[k] : 0u);
    EXPECT_EQ(t.byte_offset % 64, 0u);
    EXPECT_EQ(t.scale_offset % 64, 0u);
    const uint64_t cols = c.shape.back(), rows = values[i].size() / cols;
    EXPECT_EQ(t.rows, rows);
    EXPECT_EQ(t.cols, cols);
    const uint32_t block = c.dtype == TBLOB_SLM1_Q4_0 ? c.block : static_cast<uint32_t>(cols);
    EXPECT_EQ(t.block_size, c.dtype == TBLOB_SLM1_F32 ? 0u : block);
    const RefEncoded ref = ref_encode(values[i], rows, cols, c.dtype, block);
    ASSERT_EQ(t.byte_length, ref.payload.size());
    EXPECT_EQ(0, std::memcmp(t.payload, ref.payload.data(), ref.payload.size())) << "codes differ";
    ASSERT_EQ(t.scale_length, ref.scales.size());
    if (!ref.scales.empty()) {
      EXPECT_EQ(0, std::memcmp(t.scales, ref.scales.data(), ref.scales.size())) << "scales differ";
    }
    const std::vector<float> got = dequant_all(o.m, idx);
    const std::vector<float> want = ref_decode(ref, rows, cols, c.dtype, block);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), 4 * got.size())) << "dequantized values differ";
    if (c.dtype == TBLOB_SLM1_F32) {
      EXPECT_EQ(got, values[i]);
    }
    // Quantization error is at most half a step (plus the f32 rounding of the quotient).
    for (uint64_t k = 0; k < got.size(); ++k) {
      const uint64_t r = k / cols, col = k % cols;
      float s = 0;
      if (c.dtype != TBLOB_SLM1_F32)
        std::memcpy(&s, ref.scales.data() + 4 * (c.dtype == TBLOB_SLM1_Q8_0 ? r : r * (cols / block) + col / block), 4);
      const double tol = c.dtype == TBLOB_SLM1_F32 ? 0.0 : 0.5001 * static_cast<double>(s) + 1e-45;
      ASSERT_LE(std::fabs(static_cast<double>(got[k]) - values[i][k]), tol) << "element " << k;
    }
  }
  // The same tensors re-added as encoded bytes give the same file.
  Writer w2;
  for (size_t i = 0; i < cases.size(); ++i) {
    uint64_t idx;
    ASSERT_EQ(tblob_tensor_find(o.m, names[i].data(), names[i].size(), &idx, nullptr), TBLOB_OK);
    tblob_slm1_tensor_info t = TBLOB_SLM1_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_slm1_tensor_at(o.m, idx, &t, nullptr), TBLOB_OK);
    ASSERT_EQ(tblob_slm1_writer_add_encoded(w2.w, names[i].data(), names[i].size(), cases[i].shape.data(),
                                            t.rank, t.dtype, t.block_size, t.payload, t.byte_length, t.scales,
                                            t.scale_length, &w2.diag), TBLOB_OK) << w2.diag.message;
  }
  EXPECT_EQ(w2.emit(), file);
}

TEST(Slm1Writer, RoundTripEveryDtypeRankAndBlock) {
  std::vector<Case> cases;
  const std::vector<std::vector<uint64_t>> shapes_q8 = {{7}, {3, 5}, {2, 3, 6}, {2, 1, 3, 4}, {1, 1}, {1, 1, 1, 1}};
  for (const auto &s : shapes_q8) {
    cases.push_back({TBLOB_SLM1_F32, s, 0});
    cases.push_back({TBLOB_SLM1_Q8_0, s, 0});
  }
  for (uint32_t b : {2u, 4u, 6u, 8u, 16u, 32u, 64u}) {
    cases.push_back({TBLOB_SLM1_Q4_0, {b * 3}, b});
    cases.push_back({TBLOB_SLM1_Q4_0, {3, b * 2}, b});
    cases.push_back({TBLOB_SLM1_Q4_0, {2, 3, b}, b});
    cases.push_back({TBLOB_SLM1_Q4_0, {2, 1, 3, b * 2}, b});
  }
  for (int flavour = 0; flavour < 6; ++flavour) {
    SCOPED_TRACE(flavour);
    round_trip(cases, flavour);
  }
}

TEST(Slm1Writer, DefaultBlockSizes) {
  Writer w;
  std::vector<float> v(2 * 64, 1.0f);
  ASSERT_EQ(w.add("a", {2, 64}, v, TBLOB_SLM1_Q4_0, 0), TBLOB_OK);  // 0: 32
  ASSERT_EQ(w.add("b", {2, 64}, v, TBLOB_SLM1_Q8_0, 0), TBLOB_OK);  // 0: cols
  ASSERT_EQ(w.add("c", {2, 64}, v, TBLOB_SLM1_Q8_0, 64), TBLOB_OK); // explicit cols
  const Bytes f = w.emit();
  Opened o;
  open_bytes(f, &o);
  ASSERT_EQ(o.status, TBLOB_OK) << o.message();
  for (const char *n : {"a", "b", "c"}) {
    uint64_t idx;
    ASSERT_EQ(tblob_tensor_find(o.m, n, 1, &idx, nullptr), TBLOB_OK);
    tblob_slm1_tensor_info t = TBLOB_SLM1_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_slm1_tensor_at(o.m, idx, &t, nullptr), TBLOB_OK);
    EXPECT_EQ(t.block_size, n[0] == 'a' ? 32u : 64u) << n;
  }
}

TEST(Slm1Writer, EmptyFile) {
  Writer w;
  const Bytes f = w.emit();
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.size(), get_u64(f, 92));  // ends at tensor_data_offset
  Opened o;
  open_bytes(f, &o);
  ASSERT_EQ(o.status, TBLOB_OK) << o.message();
  EXPECT_EQ(tblob_model_tensor_count(o.m), 0u);
  uint64_t idx;
  EXPECT_EQ(tblob_tensor_find(o.m, "x", 1, &idx, nullptr), TBLOB_E_NOT_FOUND);
}

TEST(Slm1Writer, HeaderOptions) {
  tblob_slm1_writer_options o = golden_options();
  o.kv_head_count = 0;  // default: head_count
  o.head_dim = 0;       // default: hidden / heads
  o.flags = 1;          // tied output
  o.model_type = 7;     // stored, not checked
  Writer w(o);
  ASSERT_EQ(w.status, TBLOB_OK) << w.diag.message;
  Opened m;
  open_bytes(w.emit(), &m);
  ASSERT_EQ(m.status, TBLOB_OK) << m.message();
  tblob_slm1_header_info h = TBLOB_SLM1_HEADER_INFO_INIT;
  ASSERT_EQ(tblob_slm1_header(m.m, &h, nullptr), TBLOB_OK);
  EXPECT_EQ(h.kv_head_count, 2u);
  EXPECT_EQ(h.head_dim, 2u);
  EXPECT_EQ(h.flags, 1u);
  EXPECT_EQ(h.model_type, 7u);

  struct Bad {
    void (*set)(tblob_slm1_writer_options *);
    const char *field;
  };
  const Bad bad[] = {
      {[](tblob_slm1_writer_options *p) { p->hidden_size = 0; }, "hidden_size"},
      {[](tblob_slm1_writer_options *p) { p->layer_count = 0; }, "layer_count"},
      {[](tblob_slm1_writer_options *p) { p->head_count = 0; }, "head_count"},
      {[](tblob_slm1_writer_options *p) { p->kv_head_count = 3; }, "kv_head_count"},
      {[](tblob_slm1_writer_options *p) { p->head_dim = 3; }, "head_dim"},
      {[](tblob_slm1_writer_options *p) { p->ffn_size = 0; }, "ffn_size"},
      {[](tblob_slm1_writer_options *p) { p->max_context = 0; }, "max_context"},
      {[](tblob_slm1_writer_options *p) { p->rope_theta = -1.0f; }, "rope_theta"},
      {[](tblob_slm1_writer_options *p) { p->rms_norm_epsilon = NAN; }, "rms_norm_epsilon"},
      {[](tblob_slm1_writer_options *p) { p->flags = 2; }, "flags"},
      {[](tblob_slm1_writer_options *p) { p->special_token_count = 261; }, "special_token_count"},
  };
  for (const Bad &b : bad) {
    tblob_slm1_writer_options x = golden_options();
    b.set(&x);
    Writer bw(x);
    EXPECT_EQ(bw.status, TBLOB_E_SLM1_HEADER) << b.field;
    EXPECT_EQ(bw.w, nullptr);
    EXPECT_NE(std::string(bw.diag.message).find(b.field), std::string::npos) << bw.diag.message;
  }
  // A tokenizer section that is not valid.
  tblob_slm1_writer_options x = golden_options();
  const uint8_t junk[28] = {'B', 'T', 'O', 'K', 2};
  x.tokenizer = junk;
  x.tokenizer_length = sizeof(junk);
  Writer tw(x);
  EXPECT_EQ(tw.status, TBLOB_E_SLM1_TOKENIZER) << tw.diag.message;
  // Struct too small.
  x = golden_options();
  x.struct_size = 8;
  Writer sw(x);
  EXPECT_EQ(sw.status, TBLOB_E_INVALID_ARGUMENT);
}

TEST(Slm1Writer, RefusesBadTensors) {
  Writer w;
  const std::vector<float> v4 = {1, 2, 3, 4};
  auto msg = [&w]() { return std::string(w.diag.message); };
  // Values.
  EXPECT_EQ(w.add("nan", {4}, {1, NAN, 3, 4}, TBLOB_SLM1_F32), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("\"nan\""), std::string::npos);
  EXPECT_NE(msg().find("value 1"), std::string::npos);
  EXPECT_EQ(w.add("inf", {2, 2}, {1, 2, 3, INFINITY}, TBLOB_SLM1_Q8_0), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(w.add("ninf", {2, 2}, {-INFINITY, 2, 3, 4}, TBLOB_SLM1_Q4_0, 2), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(w.add("count", {4}, {1, 2, 3}, TBLOB_SLM1_F32), TBLOB_E_INVALID_ARGUMENT);
  // Names.
  EXPECT_EQ(w.add("", {4}, v4, TBLOB_SLM1_F32), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_EQ(w.add(std::string("a\0b", 3), {4}, v4, TBLOB_SLM1_F32), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("NUL"), std::string::npos);
  EXPECT_EQ(w.add("bad\xff", {4}, v4, TBLOB_SLM1_F32), TBLOB_E_INVALID_ARGUMENT);
  EXPECT_NE(msg().find("UTF-8"), std::string::npos);
  EXPECT_EQ(w.add("\xed\xa0\x80", {4}, v4, TBLOB_SLM1_F32), TBLOB_E_INVALID_ARGUMENT);  // surrogate
  // Shape, dtype and block size.
  EXPECT_EQ(w.add("rank0", {}, v4, TBLOB_SLM1_F32), TBLOB_E_SLM1_ENTRY);
  EXPECT_EQ(w.add("rank5", {1, 1, 1, 1, 4}, v4, TBLOB_SLM1_F32), TBLOB_E_SLM1_ENTRY);
  EXPECT_EQ(w.add("dim0", {0, 4}, {}, TBLOB_SLM1_F32), TBLOB_E_SLM1_ENTRY);
  EXPECT_EQ(w.add("huge", {1ull << 32}, v4, TBLOB_SLM1_F32), TBLOB_E_SLM1_ENTRY);
  EXPECT_EQ(w.add("dtype", {4}, v4, 4), TBLOB_E_DTYPE);
  EXPECT_EQ(w.add("dtype0", {4}, v4, 0), TBLOB_E_DTYPE);
  EXPECT_EQ(w.add("f32block", {4}, v4, TBLOB_SLM1_F32, 4), TBLOB_E_SLM1_ENTRY);
  EXPECT_EQ(w.add("q8block", {2, 2}, v4, TBLOB_SLM1_Q8_0, 1), TBLOB_E_SLM1_ENTRY);
  EXPECT_EQ(w.add("q4odd", {1, 6}, {1, 2, 3, 4, 5, 6}, TBLOB_SLM1_Q4_0, 3), TBLOB_E_SLM1_ENTRY);
  EXPECT_EQ(w.add("q4div", {1, 6}, {1, 2, 3, 4, 5, 6}, TBLOB_SLM1_Q4_0, 4), TBLOB_E_SLM1_ENTRY);
  EXPECT_NE(msg().find("\"q4div\""), std::string::npos);
  EXPECT_EQ(w.add("q4default", {1, 6}, {1, 2, 3, 4, 5, 6}, TBLOB_SLM1_Q4_0, 0), TBLOB_E_SLM1_ENTRY);  // 32
  EXPECT_EQ(w.add("q4one", {1, 6}, {1, 2, 3, 4, 5, 6}, TBLOB_SLM1_Q4_0, 1), TBLOB_E_SLM1_ENTRY);
  // Nothing above was kept.
  const Bytes f = w.emit();
  Opened o;
  open_bytes(f, &o);
  ASSERT_EQ(o.status, TBLOB_OK);
  EXPECT_EQ(tblob_model_tensor_count(o.m), 0u);
}

TEST(Slm1Writer, RefusesBadEncodedTensors) {
  Writer w;
  const uint64_t shape[2] = {2, 4};
  const uint8_t payload[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  float scales[2] = {1.0f, 0.5f};
  auto add = [&](const void *p, size_t pl, const void *s, size_t sl, uint32_t dtype = TBLOB_SLM1_Q8_0) {
    return tblob_slm1_writer_add_encoded(w.w, "enc", 3, shape, 2, dtype, 0, p, pl, s, sl, &w.diag);
  };
  EXPECT_EQ(add(payload, 7, scales, 8), TBLOB_E_TENSOR_SIZE);
  EXPECT_EQ(add(payload, 8, scales, 4), TBLOB_E_TENSOR_SIZE);  // short scale array
  EXPECT_NE(std::string(w.diag.message).find("scale array"), std::string::npos);
  EXPECT_EQ(add(payload, 8, scales, 12), TBLOB_E_TENSOR_SIZE);
  EXPECT_EQ(add(nullptr, 8, scales, 8), TBLOB_E_TENSOR_SIZE);
  for (float bad : {0.0f, -0.0f, -1.0f, NAN, INFINITY}) {
    scales[1] = bad;
    EXPECT_EQ(add(payload, 8, scales, 8), TBLOB_E_SLM1_SCALE) << bad;
    EXPECT_NE(std::string(w.diag.message).find("scale 1"), std::string::npos);
  }
  scales[1] = 1e-40f;  // subnormal: positive, allowed
  EXPECT_EQ(add(payload, 8, scales, 8), TBLOB_OK) << w.diag.message;
  EXPECT_EQ(add(payload, 8, nullptr, 0, TBLOB_SLM1_F32), TBLOB_E_TENSOR_SIZE);  // f32 [2, 4] needs 32 bytes
  EXPECT_EQ(add(payload, 8, scales, 8, TBLOB_SLM1_F32), TBLOB_E_TENSOR_SIZE);   // and no scales
}

TEST(Slm1Writer, DuplicateNamesAndCollisions) {
  Writer w;
  ASSERT_EQ(w.add("dup", {1}, {1}, TBLOB_SLM1_F32), TBLOB_OK);
  ASSERT_EQ(w.add("dup", {1}, {2}, TBLOB_SLM1_F32), TBLOB_OK);  // checked at finish
  tblob_status s;
  EXPECT_TRUE(w.emit(&s).empty());
  EXPECT_EQ(s, TBLOB_E_DUPLICATE_NAME);
  EXPECT_NE(std::string(w.diag.message).find("\"dup\""), std::string::npos);
}

TEST(Slm1Writer, AllocatorHookBalances) {
  struct Counter {
    long live = 0;
    size_t bytes = 0;
  } c;
  tblob_allocator a = TBLOB_ALLOCATOR_INIT;
  a.opaque = &c;
  a.alloc = [](void *o, size_t n) -> void * {
    auto *k = static_cast<Counter *>(o);
    ++k->live;
    k->bytes += n;
    return std::malloc(n);
  };
  a.free = [](void *o, void *p, size_t n) {
    auto *k = static_cast<Counter *>(o);
    --k->live;
    k->bytes -= n;
    std::free(p);
  };
  tblob_slm1_writer_options o = golden_options();
  o.allocator = &a;
  {
    Writer w(o);
    ASSERT_EQ(w.status, TBLOB_OK);
    ASSERT_EQ(w.add("x", {2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}, TBLOB_SLM1_Q4_0, 2), TBLOB_OK);
    ASSERT_EQ(w.add("y", {3}, {1, 2, 3}, TBLOB_SLM1_F32), TBLOB_OK);
    EXPECT_FALSE(w.emit().empty());
    EXPECT_GT(c.live, 0);
  }
  EXPECT_EQ(c.live, 0);
  EXPECT_EQ(c.bytes, 0u);
}

// ---- config.json ---------------------------------------------------------------------------

tblob_status from_config(const std::string &json, tblob_slm1_writer_options *o, tblob_diag *d) {
  return tblob_slm1_writer_options_from_config(o, json.data(), json.size(), d);
}

TEST(Slm1Config, ReadsHuggingFaceKeys) {
  tblob_slm1_writer_options o = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  tblob_diag d = TBLOB_DIAG_INIT;
  const std::string json =
      "{\"architectures\": [\"LlamaForCausalLM\"], \"hidden_size\": 4, \"intermediate_size\": 8,\n"
      " \"num_hidden_layers\": 1, \"num_attention_heads\": 2, \"num_key_value_heads\": 2,\n"
      " \"head_dim\": null, \"max_position_embeddings\": 16, \"rope_theta\": 10000,\n"
      " \"rms_norm_eps\": 1e-05, \"tie_word_embeddings\": true, \"vocab_size\": 32000,\n"
      " \"rope_scaling\": {\"factor\": 2.0, \"nested\": [1, {\"a\": null}]}, \"h\\u0069dden_x\": 1}";
  ASSERT_EQ(from_config(json, &o, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(o.hidden_size, 4u);
  EXPECT_EQ(o.ffn_size, 8u);
  EXPECT_EQ(o.layer_count, 1u);
  EXPECT_EQ(o.head_count, 2u);
  EXPECT_EQ(o.kv_head_count, 2u);
  EXPECT_EQ(o.head_dim, 0u);  // null: absent
  EXPECT_EQ(o.max_context, 16u);
  EXPECT_EQ(o.rope_theta, 10000.0f);
  EXPECT_EQ(o.rms_norm_epsilon, 1e-5f);
  EXPECT_EQ(o.flags, 1u);
  // The result writes the golden header (tied flag aside).
  o.flags = 0;
  Writer w(o);
  ASSERT_EQ(w.status, TBLOB_OK) << w.diag.message;
  ASSERT_EQ(w.add("norm.weight", {4}, {1, 0.5f, -2, 0.25f}, TBLOB_SLM1_F32), TBLOB_OK);
  const Bytes f = w.emit();
  const Bytes g = read_file(data_path("tiny_btok.slm"));
  EXPECT_EQ(0, std::memcmp(f.data() + 4, g.data() + 4, 60));  // version .. rms_norm_epsilon
  // Escaped key names are decoded.
  tblob_slm1_writer_options e = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  ASSERT_EQ(from_config("{\"hidden\\u005fsize\": 64}", &e, &d), TBLOB_OK);
  EXPECT_EQ(e.hidden_size, 64u);
}

TEST(Slm1Config, Refusals) {
  struct Bad {
    const char *json;
    tblob_status status;
  };
  const Bad bad[] = {
      {"", TBLOB_E_JSON},
      {"{", TBLOB_E_JSON},
      {"{\"hidden_size\": 4,}", TBLOB_E_JSON},
      {"{} x", TBLOB_E_JSON},
      {"{\"a\": 01}", TBLOB_E_JSON},
      {"[1, 2]", TBLOB_E_SCHEMA},
      {"{\"hidden_size\": \"4\"}", TBLOB_E_SCHEMA},
      {"{\"hidden_size\": -4}", TBLOB_E_SCHEMA},
      {"{\"hidden_size\": 4.5}", TBLOB_E_SCHEMA},
      {"{\"hidden_size\": 4294967296}", TBLOB_E_SCHEMA},
      {"{\"hidden_size\": 4, \"hidden_size\": 4}", TBLOB_E_SCHEMA},
      {"{\"rope_theta\": 1e39}", TBLOB_E_SCHEMA},
      {"{\"rms_norm_eps\": \"1e-5\"}", TBLOB_E_SCHEMA},
      {"{\"tie_word_embeddings\": 1}", TBLOB_E_SCHEMA},
  };
  for (const Bad &b : bad) {
    tblob_slm1_writer_options o = TBLOB_SLM1_WRITER_OPTIONS_INIT;
    o.hidden_size = 77;
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(from_config(b.json, &o, &d), b.status) << b.json << ": " << d.message;
    EXPECT_EQ(o.hidden_size, 77u) << "options changed on failure: " << b.json;
    EXPECT_NE(d.message[0], '\0');
  }
  // Nesting deeper than the JSON depth limit.
  std::string deep = "{\"x\": " + std::string(300, '[') + std::string(300, ']') + "}";
  tblob_slm1_writer_options o = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  EXPECT_EQ(from_config(deep, &o, nullptr), TBLOB_E_JSON);
}

}  // namespace
