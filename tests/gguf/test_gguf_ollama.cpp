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

// Opens one part of model `name`; returns the status.
tblob_status open_part(const tw::Store &st, const char *name, uint32_t part, uint64_t index, tblob_model **m,
                       tblob_diag *d) {
  tblob_store *s = nullptr;
  EXPECT_EQ(tblob_store_open(st.root().c_str(), nullptr, &s, nullptr), TBLOB_OK);
  tblob_store_open_options o;
  tblob_store_open_options_init(&o, sizeof(o));
  o.part = part;
  o.part_index = index;
  const tblob_status r = tblob_store_open_model(s, name, std::strlen(name), &o, m, d);
  tblob_store_close(s);
  return r;
}

std::string meta(const tblob_model *m, const char *key) {
  const char *v = nullptr;
  size_t n = 0;
  if (tblob_metadata_find(m, key, std::strlen(key), &v, &n, nullptr) != TBLOB_OK) return "<none>";
  return std::string(v, n);
}

TEST(GgufOllama, ProjectorAndAdapterLayersOpenAsModels) {
  const std::string model = slurp(std::string(TBLOB_GGUF_DATA_DIR) + "/good_v3.gguf");
  const std::string projector = slurp(std::string(TBLOB_GGUF_DATA_DIR) + "/small_v2.gguf");
  const std::string arrays = slurp(std::string(TBLOB_GGUF_DATA_DIR) + "/arrays.gguf");
  ASSERT_FALSE(model.empty() || projector.empty() || arrays.empty());
  // A safetensors adapter (a LoRA pair), the form `ollama create` keeps for safetensors adapters.
  std::string a(16 * 4, '\0'), b(8 * 4, '\0');
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<char>(i * 7);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<char>(i * 3 + 1);
  const std::string st_adapter = tw::go_blob({{"blk.0.attn_q.weight.lora_a", "F32", {4, 4}, a},
                                              {"blk.0.attn_q.weight.lora_b", "F32", {2, 4}, b}},
                                             {{"adapter", "lora"}});
  tw::Store st(temp_root("parts"));
  std::vector<tw::Layer> layers;
  layers.push_back(st.blob(model, "", kModel));
  layers.push_back(st.blob(projector, "", "application/vnd.ollama.image.projector"));
  layers.push_back(st.blob(arrays, "", "application/vnd.ollama.image.adapter"));
  layers.push_back(st.blob(st_adapter, "", "application/vnd.ollama.image.adapter"));
  layers.push_back(st.blob("{{ .Prompt }}", "", "application/vnd.ollama.image.template"));
  st.manifest("mm", layers);

  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  // The default part is still the model layer.
  ASSERT_EQ(open_part(st, "mm", TBLOB_STORE_PART_MODEL, 0, &m, &d), TBLOB_OK) << d.message;
  uint64_t idx;
  EXPECT_EQ(tblob_tensor_find(m, "q4_K", 4, &idx, nullptr), TBLOB_OK);
  EXPECT_EQ(meta(m, "ollama.layer"), "<none>");
  tblob_model_close(m);

  // The projector: small_v2.gguf's one tensor, the same bytes as the file opened directly.
  ASSERT_EQ(open_part(st, "mm", TBLOB_STORE_PART_PROJECTOR, 0, &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_format(m), static_cast<uint32_t>(TBLOB_FORMAT_OLLAMA));
  ASSERT_EQ(tblob_model_tensor_count(m), 1u);
  tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
  ASSERT_EQ(tblob_tensor_at(m, 0, &t, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(t.name, t.name_len), "w");
  std::vector<float> w(8);
  ASSERT_EQ(tblob_tensor_dequantize(m, 0, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, w.data(), 32, &d), TBLOB_OK) << d.message;
  for (int i = 0; i < 8; ++i) EXPECT_EQ(w[i], static_cast<float>(i));  // np.arange(8) in gen_gguf_fixtures.py
  EXPECT_EQ(meta(m, "ollama.layer"), "1");
  EXPECT_EQ(meta(m, "ollama.media_type"), "application/vnd.ollama.image.projector");
  EXPECT_EQ(meta(m, "general.name"), "small");
  tblob_model_close(m);

  // The first adapter is GGUF: its typed metadata comes after the four ollama.* keys.
  ASSERT_EQ(open_part(st, "mm", TBLOB_STORE_PART_ADAPTER, 0, &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(meta(m, "ollama.layer"), "2");
  tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT;
  ASSERT_EQ(tblob_metadata_typed_at(m, 0, &v, &d), TBLOB_OK);
  EXPECT_EQ(std::string(v.key, v.key_len), "ollama.name");
  EXPECT_EQ(v.value_type, static_cast<uint32_t>(TBLOB_META_STRING));
  ASSERT_EQ(tblob_metadata_typed_find(m, "a.string", 8, &v, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(v.value_type, static_cast<uint32_t>(TBLOB_META_ARRAY));
  EXPECT_EQ(v.count, 5u);
  const char *s;
  size_t n;
  ASSERT_EQ(tblob_metadata_array_string(m, v.index, 3, nullptr, &s, &n, &d), TBLOB_OK);
  EXPECT_EQ(std::string(s, n), "\xe2\x96\x81hello");
  ASSERT_EQ(tblob_metadata_typed_find(m, "s.i64", 5, &v, &d), TBLOB_OK);
  EXPECT_EQ(v.int_value, INT64_MIN);
  tblob_model_close(m);

  // The second adapter is safetensors, read by its content.
  ASSERT_EQ(open_part(st, "mm", TBLOB_STORE_PART_ADAPTER, 1, &m, &d), TBLOB_OK) << d.message;
  ASSERT_EQ(tblob_model_tensor_count(m), 2u);
  ASSERT_EQ(tblob_tensor_find(m, "blk.0.attn_q.weight.lora_b", 26, &idx, &d), TBLOB_OK);
  const void *p;
  uint64_t len;
  ASSERT_EQ(tblob_tensor_data(m, idx, &p, &len, nullptr), TBLOB_OK);
  ASSERT_EQ(len, b.size());
  EXPECT_EQ(std::memcmp(p, b.data(), len), 0);
  EXPECT_EQ(meta(m, "adapter"), "lora");
  EXPECT_EQ(meta(m, "ollama.layer"), "3");
  tblob_model_close(m);

  // Any layer by its manifest index; the template layer holds no tensors.
  ASSERT_EQ(open_part(st, "mm", TBLOB_STORE_PART_LAYER, 1, &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_tensor_count(m), 1u);
  tblob_model_close(m);
  EXPECT_NE(open_part(st, "mm", TBLOB_STORE_PART_LAYER, 4, &m, &d), TBLOB_OK);
  EXPECT_EQ(m, nullptr);
  // Selections that find no layer.
  EXPECT_EQ(open_part(st, "mm", TBLOB_STORE_PART_ADAPTER, 2, &m, &d), TBLOB_E_OLLAMA_COMPONENT);
  EXPECT_NE(std::strstr(d.message, "adapter"), nullptr) << d.message;
  EXPECT_EQ(open_part(st, "mm", TBLOB_STORE_PART_LAYER, 5, &m, &d), TBLOB_E_OLLAMA_COMPONENT);
  EXPECT_EQ(open_part(st, "mm", 4, 0, &m, &d), TBLOB_E_INVALID_ARGUMENT);
  // A component filter belongs to the model part.
  tblob_store *sp = nullptr;
  ASSERT_EQ(tblob_store_open(st.root().c_str(), nullptr, &sp, nullptr), TBLOB_OK);
  tblob_store_open_options o;
  tblob_store_open_options_init(&o, sizeof(o));
  o.part = TBLOB_STORE_PART_PROJECTOR;
  o.component = "vae";
  o.component_len = 3;
  EXPECT_EQ(tblob_store_open_model(sp, "mm", 2, &o, &m, &d), TBLOB_E_INVALID_ARGUMENT);
  // A caller built against the 0.1 struct (32 bytes) gets the model part.
  o.struct_size = 32;
  o.component = nullptr;
  o.component_len = 0;
  ASSERT_EQ(tblob_store_open_model(sp, "mm", 2, &o, &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_tensor_find(m, "q4_K", 4, &idx, nullptr), TBLOB_OK);
  tblob_model_close(m);
  tblob_store_close(sp);

  // A model without a projector.
  tw::Store st2(temp_root("noparts"));
  st2.manifest("plain", {st2.blob(model, "", kModel)});
  EXPECT_EQ(open_part(st2, "plain", TBLOB_STORE_PART_PROJECTOR, 0, &m, &d), TBLOB_E_OLLAMA_COMPONENT);
  EXPECT_NE(std::strstr(d.message, "projector"), nullptr) << d.message;
  // A broken GGUF projector: the GGUF status, naming the blob.
  std::string bad = projector;
  bad[4] = 1;
  st2.manifest("badproj", {st2.blob(model, "", kModel), st2.blob(bad, "", "application/vnd.ollama.image.projector")});
  EXPECT_EQ(open_part(st2, "badproj", TBLOB_STORE_PART_PROJECTOR, 0, &m, &d), TBLOB_E_GGUF_V1);
  EXPECT_NE(std::strstr(d.message, "sha256-"), nullptr) << d.message;
}

}  // namespace
