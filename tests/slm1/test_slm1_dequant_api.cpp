// The public dequantization API on SLM1 files (docs/slm1.md section 6): a file written by
// tblob_slm1_writer_finish, opened (mapped) with tblob_model_open, decoded with
// tblob_tensor_dequantize into f32 / f16 / bf16 under every kernel set the host runs, and compared
// with the writer's quantization arithmetic redone here (scale = f32(amax / QMAX), 1 when 0;
// q = round-half-even(f32(x / scale)) clamped to +-QMAX; value = f32(q) * scale). Also the
// zero-copy descriptor (pointers into the mapping, 64-byte aligned), tblob_tensor_quant_info,
// tblob_tensor_at's logical fields, row ranges and the error statuses.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "dequant/convert.h"
#include "slm1_test_util.h"
#include "tensorblob.h"

using namespace slm1test;

namespace {

constexpr uint32_t kSchemeQ8 = 15;  // tblob_quant_scheme numbers of SLM1 q8_0 / q4_0
constexpr uint32_t kSchemeQ4 = 16;

struct Spec {
  std::string name;
  std::vector<uint64_t> shape;
  uint32_t dtype;
  uint32_t block;
  std::vector<float> values;
  uint64_t rows() const {
    uint64_t r = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) r *= shape[i];
    return r;
  }
  uint64_t cols() const { return shape.back(); }
};

// The writer's arithmetic, redone independently (std::nearbyint rounds half to even in the
// default rounding mode).
std::vector<float> expected_f32(const Spec &s) {
  if (s.dtype == TBLOB_SLM1_F32) return s.values;
  const uint64_t rows = s.rows(), cols = s.cols();
  const uint64_t g = s.dtype == TBLOB_SLM1_Q8_0 ? cols : s.block;
  const float qmax = s.dtype == TBLOB_SLM1_Q8_0 ? 127.0f : 7.0f;
  std::vector<float> out(rows * cols);
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t b = 0; b < cols / g; ++b) {
      const float *x = s.values.data() + r * cols + b * g;
      float amax = 0;
      for (uint64_t k = 0; k < g; ++k) amax = std::fmax(amax, std::fabs(x[k]));
      float scale = amax / qmax;
      if (scale == 0.0f) scale = 1.0f;
      for (uint64_t k = 0; k < g; ++k) {
        // The stored code is an integer: a -0.0 quotient becomes code 0 (+0.0 times scale).
        const float q = std::fmin(std::fmax(std::nearbyint(x[k] / scale), -qmax), qmax);
        const int32_t code = static_cast<int32_t>(q);
        out[r * cols + b * g + k] = static_cast<float>(code) * scale;
      }
    }
  }
  return out;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A temporary SLM1 file holding the specs, written by the public writer.
class Slm1File {
 public:
  explicit Slm1File(const std::vector<Spec> &specs) {
    char tmpl[] = "/tmp/slm1-dequant-XXXXXX";
    const int fd = mkstemp(tmpl);
    if (fd >= 0) close(fd);
    path_ = tmpl;
    tblob_slm1_writer_options o = golden_options();
    tblob_slm1_writer *w = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    status_ = tblob_slm1_writer_new(&o, &w, &d);
    for (const Spec &s : specs) {
      if (status_ != TBLOB_OK) break;
      status_ = tblob_slm1_writer_add_f32(w, s.name.data(), s.name.size(), s.shape.data(),
                                          static_cast<uint32_t>(s.shape.size()), s.values.data(),
                                          s.values.size(), s.dtype, s.block, &d);
    }
    if (status_ == TBLOB_OK) status_ = tblob_slm1_writer_finish(w, path_.c_str(), &d);
    message_ = d.message;
    tblob_slm1_writer_free(w);
  }
  ~Slm1File() { std::remove(path_.c_str()); }
  const std::string &path() const { return path_; }
  tblob_status status() const { return status_; }
  const std::string &message() const { return message_; }

 private:
  std::string path_, message_;
  tblob_status status_ = TBLOB_OK;
};

std::vector<Spec> make_specs() {
  std::mt19937 g(1234);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  auto values = [&](uint64_t n, float scale) {
    std::vector<float> v(n);
    for (auto &x : v) x = nd(g) * scale;
    return v;
  };
  std::vector<Spec> s;
  s.push_back({"q8.rows", {7, 4099}, TBLOB_SLM1_Q8_0, 0, values(7 * 4099, 0.02f)});
  s.push_back({"q8.rank3", {3, 5, 64}, TBLOB_SLM1_Q8_0, 0, values(3 * 5 * 64, 3.0f)});
  s.push_back({"q4.b32", {9, 96}, TBLOB_SLM1_Q4_0, 32, values(9 * 96, 0.5f)});
  s.push_back({"q4.b64", {5, 256}, TBLOB_SLM1_Q4_0, 64, values(5 * 256, 1e-3f)});
  s.push_back({"q4.b128", {2, 3, 384}, TBLOB_SLM1_Q4_0, 128, values(6 * 384, 7.0f)});
  s.push_back({"q4.b2", {3, 10}, TBLOB_SLM1_Q4_0, 2, values(30, 1.0f)});
  s.push_back({"q4.b6", {5, 18}, TBLOB_SLM1_Q4_0, 6, values(90, 1.0f)});
  s.push_back({"f32.norm", {33}, TBLOB_SLM1_F32, 0, values(33, 1.0f)});
  s.push_back({"f32.mat", {3, 7}, TBLOB_SLM1_F32, 0, values(21, 1.0f)});
  // A row of zeros (scale 1.0) and rows that hit the clamp / exact halves.
  std::vector<float> z(2 * 64, 0.0f);
  for (int i = 0; i < 64; ++i) z[64 + i] = static_cast<float>(i - 32) * 0.5f;
  s.push_back({"q8.zero", {2, 64}, TBLOB_SLM1_Q8_0, 0, z});
  s.push_back({"q4.zero", {2, 64}, TBLOB_SLM1_Q4_0, 32, z});
  return s;
}

struct Model {
  tblob_model *m = nullptr;
  ~Model() { tblob_model_close(m); }
};

std::vector<const char *> kernel_sets() {
  std::vector<const char *> out;
  for (const char *k : {"scalar", "avx2", "avx512", "neon"}) {
    if (tblob_kernel_set(k, nullptr) == TBLOB_OK) out.push_back(k);
  }
  tblob_kernel_set("auto", nullptr);
  return out;
}

TEST(Slm1DequantApi, WriterFileEveryOutputEveryKernelSet) {
  const std::vector<Spec> specs = make_specs();
  Slm1File file(specs);
  ASSERT_EQ(file.status(), TBLOB_OK) << file.message();
  Model model;
  tblob_diag diag = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open(file.path().c_str(), nullptr, &model.m, &diag), TBLOB_OK) << diag.message;
  const std::vector<const char *> sets = kernel_sets();
  ASSERT_GE(sets.size(), 1u);
  for (const Spec &s : specs) {
    SCOPED_TRACE(s.name);
    uint64_t index = 0;
    ASSERT_EQ(tblob_tensor_find(model.m, s.name.data(), s.name.size(), &index, nullptr), TBLOB_OK);
    const uint64_t rows = s.rows(), cols = s.cols(), n = rows * cols;
    const std::vector<float> want = expected_f32(s);
    for (const char *k : sets) {
      SCOPED_TRACE(k);
      ASSERT_EQ(tblob_kernel_set(k, nullptr), TBLOB_OK);
      std::vector<float> f32(n);
      std::vector<uint16_t> f16(n), bf16(n);
      ASSERT_EQ(tblob_tensor_dequantize(model.m, index, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, f32.data(), n * 4, &diag),
                TBLOB_OK)
          << diag.message;
      ASSERT_EQ(tblob_tensor_dequantize(model.m, index, TBLOB_DTYPE_F16, 0, TBLOB_ALL_ROWS, f16.data(), n * 2, &diag),
                TBLOB_OK);
      ASSERT_EQ(tblob_tensor_dequantize(model.m, index, TBLOB_DTYPE_BF16, 0, TBLOB_ALL_ROWS, bf16.data(), n * 2, &diag),
                TBLOB_OK);
      int bad = 0;
      for (uint64_t i = 0; i < n && bad < 5; ++i) {
        const uint32_t w = bits_of(want[i]);
        if (bits_of(f32[i]) != w || f16[i] != tblob::dq::f32_to_f16(w) || bf16[i] != tblob::dq::f32_to_bf16(w)) {
          ++bad;
          ADD_FAILURE() << "element " << i << ": f32 " << f32[i] << " want " << want[i] << ", f16 0x" << std::hex
                        << f16[i] << " want 0x" << tblob::dq::f32_to_f16(w) << ", bf16 0x" << bf16[i] << " want 0x"
                        << tblob::dq::f32_to_bf16(w) << std::dec;
        }
      }
      // A row range [1, rows - 1) (or the one row) equals that slice.
      const uint64_t rb = rows > 2 ? 1 : 0, re = rows > 2 ? rows - 1 : rows;
      std::vector<float> part((re - rb) * cols + 1, -7.0f);
      ASSERT_EQ(tblob_tensor_dequantize(model.m, index, TBLOB_DTYPE_F32, rb, re, part.data(), (re - rb) * cols * 4, &diag),
                TBLOB_OK);
      EXPECT_EQ(0, std::memcmp(part.data(), f32.data() + rb * cols, (re - rb) * cols * 4));
      EXPECT_EQ(part.back(), -7.0f);
    }
  }
  tblob_kernel_set("auto", nullptr);
}

TEST(Slm1DequantApi, DescriptorIsZeroCopyAndInfoIsLogical) {
  const std::vector<Spec> specs = make_specs();
  Slm1File file(specs);
  ASSERT_EQ(file.status(), TBLOB_OK) << file.message();
  Model model;
  ASSERT_EQ(tblob_model_open(file.path().c_str(), nullptr, &model.m, nullptr), TBLOB_OK);
  for (const Spec &s : specs) {
    SCOPED_TRACE(s.name);
    uint64_t index = 0;
    ASSERT_EQ(tblob_tensor_find(model.m, s.name.data(), s.name.size(), &index, nullptr), TBLOB_OK);
    const void *bytes = nullptr;
    uint64_t len = 0;
    ASSERT_EQ(tblob_tensor_data(model.m, index, &bytes, &len, nullptr), TBLOB_OK);
    tblob_quant_desc d = TBLOB_QUANT_DESC_INIT;
    ASSERT_EQ(tblob_tensor_quant_desc(model.m, index, &d, nullptr), TBLOB_OK);
    EXPECT_EQ(d.data, bytes);  // zero copy: the descriptor points into the mapping
    EXPECT_EQ(d.data_bytes, len);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(d.data) % 64, 0u);
    EXPECT_EQ(d.rows, s.rows());
    EXPECT_EQ(d.cols, s.cols());
    tblob_quant_info qi = TBLOB_QUANT_INFO_INIT;
    ASSERT_EQ(tblob_tensor_quant_info(model.m, index, &qi, nullptr), TBLOB_OK);
    EXPECT_EQ(qi.status, TBLOB_OK);
    EXPECT_EQ(qi.rows, s.rows());
    EXPECT_EQ(qi.cols, s.cols());
    ASSERT_EQ(qi.rank, s.shape.size());
    for (size_t k = 0; k < s.shape.size(); ++k) EXPECT_EQ(qi.shape[k], s.shape[k]);
    tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(model.m, index, &ti, nullptr), TBLOB_OK);
    ASSERT_EQ(ti.logical_rank, s.shape.size());
    for (size_t k = 0; k < s.shape.size(); ++k) EXPECT_EQ(ti.logical_shape[k], s.shape[k]);
    EXPECT_EQ(ti.logical_elements, s.rows() * s.cols());
    if (s.dtype == TBLOB_SLM1_F32) {
      EXPECT_EQ(d.scheme, static_cast<uint32_t>(TBLOB_QUANT_F32));
      EXPECT_EQ(d.scales, nullptr);
      EXPECT_EQ(qi.flags, 0u);
      EXPECT_EQ(qi.source, static_cast<uint32_t>(TBLOB_QUANT_SOURCE_PLAIN));
      EXPECT_EQ(ti.quant_flags, 0u);
      continue;
    }
    const bool q8 = s.dtype == TBLOB_SLM1_Q8_0;
    EXPECT_EQ(d.scheme, q8 ? kSchemeQ8 : kSchemeQ4);
    EXPECT_EQ(d.group_size, q8 ? s.cols() : s.block);
    EXPECT_EQ(d.scale_dtype, static_cast<uint32_t>(TBLOB_DTYPE_F32));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(d.scales) % 64, 0u);
    EXPECT_EQ(d.scales_bytes, 4 * s.rows() * (q8 ? 1 : s.cols() / s.block));
    EXPECT_EQ(d.data_bytes, q8 ? s.rows() * s.cols() : s.rows() * s.cols() / 2);
    EXPECT_EQ(qi.scheme, q8 ? kSchemeQ8 : kSchemeQ4);
    EXPECT_EQ(qi.flags, static_cast<uint32_t>(TBLOB_TENSOR_QUANTIZED));
    EXPECT_EQ(qi.source, static_cast<uint32_t>(TBLOB_QUANT_SOURCE_SLM1));
    EXPECT_EQ(qi.bits, q8 ? 8u : 4u);
    EXPECT_EQ(qi.weight_index, static_cast<int64_t>(index));
    EXPECT_EQ(qi.scale_index, -1);
    EXPECT_STREQ(tblob_quant_scheme_name(qi.scheme), q8 ? "slm1-q8_0" : "slm1-q4_0");
    EXPECT_EQ(ti.quant_scheme, q8 ? kSchemeQ8 : kSchemeQ4);
    EXPECT_EQ(ti.quant_flags, static_cast<uint32_t>(TBLOB_TENSOR_QUANTIZED));
    // The descriptor decodes through tblob_quant_dequantize to the same bits.
    const uint64_t n = s.rows() * s.cols();
    std::vector<float> a(n), b(n);
    ASSERT_EQ(tblob_quant_dequantize(&d, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, a.data(), n * 4, nullptr), TBLOB_OK);
    ASSERT_EQ(tblob_tensor_dequantize(model.m, index, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, b.data(), n * 4, nullptr), TBLOB_OK);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), n * 4));
  }
}

TEST(Slm1DequantApi, Statuses) {
  Slm1File file({{"w", {4, 64}, TBLOB_SLM1_Q4_0, 32, std::vector<float>(256, 0.25f)}});
  ASSERT_EQ(file.status(), TBLOB_OK) << file.message();
  Model model;
  ASSERT_EQ(tblob_model_open(file.path().c_str(), nullptr, &model.m, nullptr), TBLOB_OK);
  std::vector<float> out(256);
  tblob_diag diag = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_tensor_dequantize(model.m, 0, TBLOB_DTYPE_F32, 0, 4, out.data(), 255 * 4, &diag), TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_NE(std::strstr(diag.message, "fnv1a:"), nullptr) << diag.message;  // SLM1 keeps hashes only
  EXPECT_NE(std::strstr(diag.message, "slm1-q4_0"), nullptr) << diag.message;
  EXPECT_NE(std::strstr(diag.message, "1024 bytes"), nullptr) << diag.message;
  EXPECT_EQ(tblob_tensor_dequantize(model.m, 0, TBLOB_DTYPE_F32, 3, 5, out.data(), out.size() * 4, &diag), TBLOB_E_RANGE);
  EXPECT_EQ(tblob_tensor_dequantize(model.m, 0, TBLOB_DTYPE_F32, 2, 1, out.data(), out.size() * 4, &diag), TBLOB_E_RANGE);
  EXPECT_EQ(tblob_tensor_dequantize(model.m, 0, TBLOB_DTYPE_I8, 0, 4, out.data(), out.size() * 4, &diag),
            TBLOB_E_DEQUANT_OUT_DTYPE);
  EXPECT_EQ(tblob_tensor_dequantize(model.m, 1, TBLOB_DTYPE_F32, 0, 4, out.data(), out.size() * 4, &diag), TBLOB_E_RANGE);
  EXPECT_EQ(tblob_tensor_dequantize(model.m, 0, TBLOB_DTYPE_F32, 0, 4, nullptr, 0, &diag), TBLOB_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(tblob_tensor_dequantize(model.m, 0, TBLOB_DTYPE_F32, 1, 1, nullptr, 0, &diag), TBLOB_OK);  // empty range
  ASSERT_EQ(tblob_tensor_dequantize(model.m, 0, TBLOB_DTYPE_F32, 0, 4, out.data(), out.size() * 4, &diag), TBLOB_OK);
  // 0.25 everywhere: amax 0.25, scale 0.25 / 7, q = round(7) = 7, value 7 * f32(0.25 / 7).
  const float scale = 0.25f / 7.0f;
  for (float v : out) EXPECT_EQ(bits_of(v), bits_of(7.0f * scale));
}

}  // namespace
