// An Ollama store whose model is one GGUF blob (layer media type
// application/vnd.ollama.image.model), the form almost every model in a real store has: it
// opens through the store open path as one table, the same as the GGUF file opened directly.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../ollama/store_writer.h"
#include "tensorblob.h"

namespace {

std::string slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string temp_root(const char *tag) {
  const char *t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t ? t : "/tmp") + "/gguf_ollama_" + tag + "_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  EXPECT_NE(::mkdtemp(buf.data()), nullptr);
  return std::string(buf.data()) + "/store";
}

const char kModel[] = "application/vnd.ollama.image.model";

TEST(GgufOllama, ModelLayerOpensAsTheGgufTable) {
  const std::string gguf = slurp(std::string(TBLOB_GGUF_DATA_DIR) + "/good_v3.gguf");
  ASSERT_FALSE(gguf.empty());
  tw::Store st(temp_root("model"));
  std::vector<tw::Layer> layers;
  layers.push_back(st.blob(gguf, "", kModel));
  layers.push_back(st.blob("{{ .Prompt }}", "", "application/vnd.ollama.image.template"));
  layers.push_back(st.blob("{\"stop\":[\"</s>\"]}", "", "application/vnd.ollama.image.params"));
  st.manifest("tiny", layers);

  tblob_model *direct = nullptr, *stored = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open_memory(gguf.data(), gguf.size(), nullptr, &direct, &d), TBLOB_OK) << d.message;
  ASSERT_EQ(tblob_model_open((st.root() + "/tiny").c_str(), nullptr, &stored, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_format(stored), static_cast<uint32_t>(TBLOB_FORMAT_OLLAMA));
  ASSERT_EQ(tblob_model_tensor_count(stored), tblob_model_tensor_count(direct));
  ASSERT_GT(tblob_model_tensor_count(stored), 10u);
  for (uint64_t i = 0; i < tblob_model_tensor_count(direct); ++i) {
    tblob_tensor_info a = TBLOB_TENSOR_INFO_INIT, b = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(direct, i, &a, nullptr), TBLOB_OK);
    ASSERT_EQ(tblob_tensor_at(stored, i, &b, nullptr), TBLOB_OK);
    ASSERT_EQ(std::string(a.name, a.name_len), std::string(b.name, b.name_len));
    EXPECT_EQ(a.dtype, b.dtype);
    ASSERT_EQ(a.rank, b.rank);
    for (uint32_t k = 0; k < a.rank; ++k) EXPECT_EQ(a.shape[k], b.shape[k]);
    EXPECT_EQ(a.file_offset, b.file_offset);
    const void *pa, *pb;
    uint64_t la, lb;
    ASSERT_EQ(tblob_tensor_data(direct, i, &pa, &la, nullptr), TBLOB_OK);
    ASSERT_EQ(tblob_tensor_data(stored, i, &pb, &lb, nullptr), TBLOB_OK);
    ASSERT_EQ(la, lb);
    EXPECT_EQ(std::memcmp(pa, pb, la), 0);
  }
  // Dequantization goes through the same GGUF path.
  uint64_t q;
  ASSERT_EQ(tblob_tensor_find(stored, "q4_K", 4, &q, nullptr), TBLOB_OK);
  std::vector<float> x(3 * 512), y(3 * 512);
  ASSERT_EQ(tblob_tensor_dequantize(direct, q, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, x.data(), x.size() * 4, &d), TBLOB_OK)
      << d.message;
  ASSERT_EQ(tblob_tensor_dequantize(stored, q, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, y.data(), y.size() * 4, &d), TBLOB_OK)
      << d.message;
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * 4), 0);
  // Metadata: the store's keys, then the GGUF key/values.
  const char *v;
  size_t vn;
  ASSERT_EQ(tblob_metadata_find(stored, "ollama.name", 11, &v, &vn, nullptr), TBLOB_OK);
  ASSERT_EQ(tblob_metadata_find(stored, "general.architecture", 20, &v, &vn, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(v, vn), "llama");
  EXPECT_EQ(tblob_metadata_count(stored), tblob_metadata_count(direct) + 2);
  tblob_model_close(direct);
  tblob_model_close(stored);
}

TEST(GgufOllama, BadModelLayers) {
  tw::Store st(temp_root("bad"));
  // A model layer that is not GGUF: still "no tensors", naming the layer.
  st.manifest("notgguf", {st.blob("not a gguf file", "", kModel)});
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_model_open((st.root() + "/notgguf").c_str(), nullptr, &m, &d), TBLOB_E_OLLAMA_NO_TENSORS);
  EXPECT_NE(std::strstr(d.message, "GGUF"), nullptr) << d.message;
  // A GGUF blob that breaks a rule: the GGUF status, the message naming the blob.
  std::string bad = slurp(std::string(TBLOB_GGUF_DATA_DIR) + "/small_v2.gguf");
  bad[4] = 1;  // version 1
  st.manifest("v1", {st.blob(bad, "", kModel)});
  EXPECT_EQ(tblob_model_open((st.root() + "/v1").c_str(), nullptr, &m, &d), TBLOB_E_GGUF_V1);
  EXPECT_NE(std::strstr(d.message, "sha256-"), nullptr) << d.message;
  EXPECT_EQ(m, nullptr);
}

}  // namespace
