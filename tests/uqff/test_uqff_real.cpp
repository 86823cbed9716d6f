// Real UQFF exports written by mistral.rs 0.9.5 (tests/oracles/gen_uqff_real.py): every one
// opens and verifies; every GGML layer dequantizes bit-exactly to what gguf-py's dequantizer
// gives for the same blocks (tests/oracles/gen_uqff_expected.py, FNV-1a-64 of the f32 output,
// every kernel set); the other families are checked against the F32 weights mistral.rs
// quantized (source.safetensors): error bounded by what the format can represent.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tensorblob.h"
#include "expert_rows.h"

namespace {

const std::string kReal = std::string(TBLOB_UQFF_DATA_DIR) + "/real/";

uint64_t fnv1a64(const void *p, size_t n) {
  const uint8_t *b = static_cast<const uint8_t *>(p);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

struct Model {
  tblob_model *m = nullptr;
  explicit Model(const std::string &path) {
    tblob_diag d = TBLOB_DIAG_INIT;
    const tblob_status s = tblob_model_open(path.c_str(), nullptr, &m, &d);
    EXPECT_EQ(s, TBLOB_OK) << path << ": " << d.message;
  }
  ~Model() { tblob_model_close(m); }
  uint64_t find(const std::string &n) const {
    uint64_t i = UINT64_MAX;
    EXPECT_EQ(tblob_tensor_find(m, n.data(), n.size(), &i, nullptr), TBLOB_OK) << n;
    return i;
  }
  std::vector<float> deq(uint64_t index, uint64_t expert = UINT64_MAX) const {
    uint64_t bytes = 0, rb = 0, re = UINT64_MAX;
    to_rows(m, index, expert, &rb, &re);
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_tensor_dequant_size(m, index, TBLOB_DTYPE_F32, rb, re, &bytes, &d), TBLOB_OK) << d.message;
    std::vector<float> out(bytes / 4);
    EXPECT_EQ(tblob_tensor_dequantize(m, index, TBLOB_DTYPE_F32, rb, re, out.data(), bytes, &d), TBLOB_OK)
        << d.message;
    return out;
  }
};

std::vector<std::string> exports() {
  std::vector<std::string> v;
  for (const char *model : {"dense", "moe"}) {
    for (const char *t : {"q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q8_1", "q2k", "q3k", "q4k", "q5k", "q6k", "q8k",
                          "hqq4", "hqq8", "fp8", "afq2", "afq3", "afq4", "afq6", "afq8", "f8q8", "mxfp4"}) {
      const std::string p = kReal + model + "/" + t;
      std::ifstream probe(p + "/uqff_report.json");
      if (probe) v.push_back(std::string(model) + "/" + t);
    }
  }
  return v;
}

TEST(UqffReal, EveryExportOpensAndVerifies) {
  const auto ex = exports();
  ASSERT_GE(ex.size(), 25u);
  for (const std::string &e : ex) {
    const std::string dir = kReal + e;
    Model m(dir);
    ASSERT_NE(m.m, nullptr) << e;
    EXPECT_EQ(tblob_model_format(m.m), static_cast<uint32_t>(TBLOB_FORMAT_UQFF));
    const char *paths[1] = {dir.c_str()};
    tblob_uqff_verify_result r = TBLOB_UQFF_VERIFY_RESULT_INIT;
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_uqff_verify(paths, 1, nullptr, nullptr, nullptr, &r, &d), TBLOB_OK) << e << ": " << d.message;
    EXPECT_EQ(r.errors, 0u) << e;
    EXPECT_EQ(r.warnings, 0u) << e;
    EXPECT_EQ(r.version_major, 1u);
    EXPECT_EQ(r.version_minor, 2u);
    EXPECT_EQ(r.layers, 9u) << e;
    // A shard path opens the same set.
    const std::string shard = dir + "/" + e.substr(e.find('/') + 1) + "-0.uqff";
    Model s(shard);
    ASSERT_NE(s.m, nullptr);
    EXPECT_EQ(tblob_model_tensor_count(s.m), tblob_model_tensor_count(m.m));
  }
}

TEST(UqffReal, GgmlLayersMatchGguf) {
  std::ifstream f(kReal + "expected_ggml.txt");
  std::string line;
  std::map<std::string, Model *> open;
  size_t checked = 0;
  const char *sets[] = {"scalar", "avx2"};
  for (const char *ks : sets) {
    if (tblob_kernel_set(ks, nullptr) != TBLOB_OK) continue;
    f.clear();
    f.seekg(0);
    while (std::getline(f, line)) {
      std::istringstream ls(line);
      std::string ex, name, hash;
      uint32_t type;
      uint64_t n;
      ls >> ex >> name >> type >> n >> hash;
      if (!open.count(ex)) open[ex] = new Model(kReal + ex);
      Model &m = *open[ex];
      const uint64_t i = m.find(name);
      tblob_uqff_layer_info li = TBLOB_UQFF_LAYER_INFO_INIT;
      ASSERT_EQ(tblob_uqff_layer_info_at(m.m, i, &li, nullptr), TBLOB_OK);
      EXPECT_EQ(li.family, static_cast<uint32_t>(TBLOB_UQFF_GGUF)) << name;
      EXPECT_EQ(li.ggml_type, type) << ex << " " << name;
      const std::vector<float> y = m.deq(i);
      ASSERT_EQ(y.size(), n) << ex << " " << name;
      char got[17];
      std::snprintf(got, sizeof(got), "%016llx", static_cast<unsigned long long>(fnv1a64(y.data(), y.size() * 4)));
      EXPECT_EQ(hash, got) << ex << " " << name << " kernel " << ks;
      ++checked;
    }
  }
  tblob_kernel_set("auto", nullptr);
  for (auto &p : open) delete p.second;
  EXPECT_GE(checked, 126u);
}

// Mean absolute error relative to the mean magnitude of the weights mistral.rs quantized.
double rel_error(const std::vector<float> &a, const float *src, size_t n) {
  double e = 0, s = 0;
  for (size_t i = 0; i < n; ++i) {
    e += std::fabs(static_cast<double>(a[i]) - src[i]);
    s += std::fabs(static_cast<double>(src[i]));
  }
  return e / (s > 0 ? s : 1);
}

TEST(UqffReal, AllFamiliesAgreeWithTheSourceWeights) {
  const std::map<std::string, double> bound = {
      {"q2k", 0.5}, {"q3k", 0.25}, {"q4_0", 0.12}, {"q4_1", 0.12}, {"q4k", 0.12}, {"q5_0", 0.06},
      {"q5_1", 0.06}, {"q5k", 0.06}, {"q6k", 0.03}, {"q8_0", 0.008}, {"q8_1", 0.008}, {"q8k", 0.015},
      {"hqq4", 0.15}, {"hqq8", 0.01}, {"fp8", 0.05}, {"afq2", 0.5}, {"afq3", 0.25}, {"afq4", 0.12},
      {"afq6", 0.03}, {"afq8", 0.008}, {"f8q8", 0.12}, {"mxfp4", 0.2}, {"unquant", 0.0}, {"f32", 0.0}};
  for (const std::string &e : exports()) {
    const std::string model = e.substr(0, e.find('/'));
    Model src(kReal + model + "/source.safetensors");
    Model m(kReal + e);
    ASSERT_NE(m.m, nullptr);
    const uint64_t n = tblob_model_tensor_count(m.m);
    for (uint64_t i = 0; i < n; ++i) {
      tblob_uqff_layer_info li = TBLOB_UQFF_LAYER_INFO_INIT;
      ASSERT_EQ(tblob_uqff_layer_info_at(m.m, i, &li, nullptr), TBLOB_OK);
      if (li.family == TBLOB_UQFF_PLAIN) continue;
      tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
      ASSERT_EQ(tblob_tensor_at(m.m, i, &ti, nullptr), TBLOB_OK);
      const std::string name(ti.name, ti.name_len);
      ASSERT_TRUE(bound.count(li.label)) << li.label;
      const double limit = bound.at(li.label);
      const uint64_t experts = li.experts ? li.experts : 1;
      for (uint64_t x = 0; x < experts; ++x) {
        std::string sname = name;
        if (li.experts) {  // stacked: the source has one tensor per expert
          const size_t at = name.find(".experts.");
          sname = name.substr(0, at + 9) + std::to_string(x) + "." + name.substr(at + 9);
        }
        const uint64_t si = src.find(sname);
        const void *sd;
        uint64_t sl;
        ASSERT_EQ(tblob_tensor_data(src.m, si, &sd, &sl, nullptr), TBLOB_OK);
        const std::vector<float> y = m.deq(i, li.experts ? x : 0);
        ASSERT_EQ(y.size() * 4, sl) << e << " " << name;
        const double r = rel_error(y, static_cast<const float *>(sd), y.size());
        EXPECT_LE(r, limit) << e << " " << name << " (" << li.label << ") expert " << x;
        if (limit > 0) {
          EXPECT_GT(r, 0.0) << e << " " << name;  // really quantized
        }
      }
    }
  }
}

// AFQ as mistral.rs's CPU quantizer makes it (scale = (max-min)/(2^bits-1), bias = min): every
// value is within half a step of the source weight.
TEST(UqffReal, AfqWithinHalfAStep) {
  for (const char *t : {"afq2", "afq3", "afq4", "afq6", "afq8"}) {
    Model src(kReal + "dense/source.safetensors");
    Model m(kReal + "dense/" + t);
    const uint64_t i = m.find("model.layers.0.mlp.gate_proj.weight");
    tblob_uqff_layer_info li = TBLOB_UQFF_LAYER_INFO_INIT;
    ASSERT_EQ(tblob_uqff_layer_info_at(m.m, i, &li, nullptr), TBLOB_OK);
    const std::vector<float> y = m.deq(i);
    const void *sd;
    uint64_t sl;
    ASSERT_EQ(tblob_tensor_data(src.m, src.find("model.layers.0.mlp.gate_proj.weight"), &sd, &sl, nullptr), TBLOB_OK);
    const float *w = static_cast<const float *>(sd);
    const uint64_t g = li.group_size, levels = (1u << li.bits) - 1;
    for (size_t k = 0; k < y.size(); k += g) {
      float lo = w[k], hi = w[k];
      for (size_t j = k; j < k + g; ++j) {
        lo = std::fmin(lo, w[j]);
        hi = std::fmax(hi, w[j]);
      }
      const double step = (hi - lo) / levels;
      for (size_t j = k; j < k + g; ++j)
        ASSERT_LE(std::fabs(y[j] - w[j]), step * 0.5 * 1.001 + 1e-7) << t << " element " << j;
    }
  }
}

}  // namespace
