// tests/data/ollama/real-gguf-store, written by a real `ollama create` from GGUF files the gguf
// package wrote: the model, its projector and its adapter open through the store, and every
// tensor dequantizes to the bits gguf.quants.dequantize gave for the same file
// (tests/data/ollama/real-gguf-oracle); the template, system, params and license layers read
// back as the Modelfile gave them.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tensorblob.h"

namespace {

const std::string kStore = std::string(TBLOB_OLLAMA_DATA_DIR) + "/real-gguf-store";
const std::string kOracle = std::string(TBLOB_OLLAMA_DATA_DIR) + "/real-gguf-oracle";

std::string slurp(const std::string &p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct OracleTensor {
  std::string name;
  uint32_t ggml_type = 0;
  std::vector<uint64_t> shape;
  uint64_t at = 0;  // element offset in the .f32 file
};
struct Oracle {
  std::vector<OracleTensor> tensors;
  std::vector<std::pair<std::string, std::string>> kvs;
  std::vector<float> values;
};

Oracle read_oracle(const std::string &base) {
  Oracle o;
  std::ifstream f(kOracle + "/" + base + ".manifest");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "tensor") {
      OracleTensor t;
      uint32_t rank;
      ls >> t.name >> t.ggml_type >> rank;
      t.shape.resize(rank);
      for (auto &d : t.shape) ls >> d;
      ls >> t.at;
      o.tensors.push_back(t);
    } else if (tag == "kv") {
      std::string k, v;
      ls >> k >> v;
      o.kvs.emplace_back(k, v);
    }
  }
  const std::string b = slurp(kOracle + "/" + base + ".f32");
  o.values.resize(b.size() / 4);
  std::memcpy(o.values.data(), b.data(), b.size());
  return o;
}

tblob_model *open_part(uint32_t part, tblob_diag *d) {
  tblob_store *s = nullptr;
  EXPECT_EQ(tblob_store_open(kStore.c_str(), nullptr, &s, d), TBLOB_OK) << d->message;
  tblob_store_open_options o;
  tblob_store_open_options_init(&o, sizeof(o));
  o.part = part;
  tblob_model *m = nullptr;
  EXPECT_EQ(tblob_store_open_model(s, "tiny-gguf", 9, &o, &m, d), TBLOB_OK) << d->message;
  tblob_store_close(s);
  return m;
}

// Every tensor of m: name, shape and order as gguf-py lists them, values bit for bit.
void check_tensors(const tblob_model *m, const Oracle &o) {
  ASSERT_EQ(tblob_model_tensor_count(m), o.tensors.size());
  ASSERT_FALSE(o.tensors.empty());
  for (size_t i = 0; i < o.tensors.size(); ++i) {
    const OracleTensor &e = o.tensors[i];
    SCOPED_TRACE(e.name);
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(m, i, &t, nullptr), TBLOB_OK);
    EXPECT_EQ(std::string(t.name, t.name_len), e.name);
    ASSERT_EQ(t.rank, e.shape.size());
    uint64_t n = 1;
    for (uint32_t k = 0; k < t.rank; ++k) {
      EXPECT_EQ(t.shape[k], e.shape[k]);
      n *= e.shape[k];
    }
    std::vector<float> got(n);
    tblob_diag d = TBLOB_DIAG_INIT;
    ASSERT_EQ(tblob_tensor_dequantize(m, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, got.data(), n * 4, &d), TBLOB_OK)
        << d.message;
    ASSERT_LE(e.at + n, o.values.size());
    EXPECT_EQ(std::memcmp(got.data(), o.values.data() + e.at, n * 4), 0);
  }
}

std::string meta(const tblob_model *m, const char *key) {
  const char *v = nullptr;
  size_t n = 0;
  if (tblob_metadata_find(m, key, std::strlen(key), &v, &n, nullptr) != TBLOB_OK) return "<none>";
  return std::string(v, n);
}

TEST(RealGgufStore, ModelProjectorAndAdapterMatchGgufPy) {
  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_model *m = open_part(TBLOB_STORE_PART_MODEL, &d);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(tblob_model_format(m), static_cast<uint32_t>(TBLOB_FORMAT_OLLAMA));
  check_tensors(m, read_oracle("tiny"));
  EXPECT_EQ(meta(m, "ollama.name"), "registry.ollama.ai/library/tiny-gguf:latest");
  EXPECT_EQ(meta(m, "general.name"), "tiny-gguf");
  EXPECT_EQ(meta(m, "llama.embedding_length"), "32");
  // The vocabulary: a typed array, in place.
  tblob_metadata_value v = TBLOB_METADATA_VALUE_INIT;
  ASSERT_EQ(tblob_metadata_typed_find(m, "tokenizer.ggml.tokens", 21, &v, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(v.element_type, static_cast<uint32_t>(TBLOB_META_STRING));
  ASSERT_EQ(v.count, 32u);
  const char *s;
  size_t n;
  ASSERT_EQ(tblob_metadata_array_string(m, v.index, 31, nullptr, &s, &n, &d), TBLOB_OK);
  EXPECT_EQ(std::string(s, n), "\xe2\x96\x81t28");  // "\u2581t%d" % 28 in gen_tiny_gguf.py
  ASSERT_EQ(tblob_metadata_typed_find(m, "tokenizer.ggml.token_type", 25, &v, &d), TBLOB_OK);
  int32_t types[3];
  ASSERT_EQ(tblob_metadata_array_get(m, v.index, 0, 3, types, sizeof(types), &d), TBLOB_OK);
  EXPECT_EQ(types[0], 2);
  EXPECT_EQ(types[1], 3);
  ASSERT_EQ(tblob_metadata_typed_find(m, "llama.attention.layer_norm_rms_epsilon", 38, &v, &d), TBLOB_OK);
  EXPECT_EQ(v.value_type, static_cast<uint32_t>(TBLOB_META_F32));
  EXPECT_EQ(static_cast<float>(v.float_value), 1e-5f);
  tblob_model_close(m);

  m = open_part(TBLOB_STORE_PART_PROJECTOR, &d);
  ASSERT_NE(m, nullptr);
  check_tensors(m, read_oracle("mmproj"));
  EXPECT_EQ(meta(m, "general.type"), "projector");
  EXPECT_EQ(meta(m, "ollama.layer"), "0");
  tblob_model_close(m);

  m = open_part(TBLOB_STORE_PART_ADAPTER, &d);
  ASSERT_NE(m, nullptr);
  check_tensors(m, read_oracle("adapter"));
  EXPECT_EQ(meta(m, "adapter.type"), "lora");
  EXPECT_EQ(meta(m, "ollama.layer"), "2");
  tblob_model_close(m);
}

TEST(RealGgufStore, TextLayersAndVerify) {
  tblob_store *s = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_store_open(kStore.c_str(), nullptr, &s, &d), TBLOB_OK) << d.message;
  tblob_manifest *man = nullptr;
  ASSERT_EQ(tblob_store_manifest_open(s, "tiny-gguf", 9, &man, &d), TBLOB_OK) << d.message;
  ASSERT_EQ(tblob_manifest_layer_count(man), 7u);
  struct Want {
    const char *media;
    std::string bytes;
  } want[] = {
      {"application/vnd.ollama.image.template",
       "{{ if .System }}<|system|>{{ .System }}</s>{{ end }}<|user|>{{ .Prompt }}</s><|assistant|>"},
      {"application/vnd.ollama.image.system", "You are a tiny test model."},
      {"application/vnd.ollama.image.license", "tiny-gguf test license: CC0-1.0, no rights reserved."},
      {"application/vnd.ollama.image.params",
       "{\"num_ctx\":64,\"stop\":[\"\\u003c/s\\u003e\",\"\\u003c|user|\\u003e\"],\"temperature\":0.25}\n"},  // json.Encoder: a newline
  };
  int found = 0;
  for (uint64_t i = 0; i < tblob_manifest_layer_count(man); ++i) {
    tblob_layer_info l = TBLOB_LAYER_INFO_INIT;
    ASSERT_EQ(tblob_manifest_layer_at(man, i, &l, &d), TBLOB_OK);
    const std::string media(l.media_type, l.media_type_len);
    for (const Want &w : want) {
      if (media != w.media) continue;
      ++found;
      size_t len = 0;
      ASSERT_EQ(tblob_store_read_layer(s, man, i, nullptr, 0, &len, &d), TBLOB_E_BUFFER_TOO_SMALL);
      std::string buf(len, '\0');
      ASSERT_EQ(tblob_store_read_layer(s, man, i, &buf[0], buf.size(), &len, &d), TBLOB_OK) << d.message;
      EXPECT_EQ(buf, w.bytes) << media;
    }
  }
  EXPECT_EQ(found, 4);
  tblob_manifest_close(man);
  tblob_verify_summary sum = TBLOB_VERIFY_SUMMARY_INIT;
  ASSERT_EQ(tblob_store_verify(s, "tiny-gguf", 9, nullptr, &sum, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(sum.blobs, 8u);
  EXPECT_EQ(sum.blobs_bad, 0u);
  tblob_store_close(s);
}

}  // namespace
