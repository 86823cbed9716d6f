// Every blob layout of reference/ollama_mlx.md 3, written byte for byte by the test writer
// in both writers' header styles, opened as one table.
#include "tblob_config.h"
#include "formats/ollama/ollama.h"
#include "formats/safetensors/st_writer.h"
#include "test_util.h"

namespace {

using tw::T;

std::string bf16(size_t n, unsigned seed) { return tw::pattern(n * 2, seed); }

// --- the writers' bytes ---------------------------------------------------------------------

TEST(OllamaWriters, GoWriterSingleTensorHeaderIs80Bytes) {
  // reference/ollama_mlx.md 3.1 (verified example): 80-byte header incl. 3 spaces.
  const std::string h = tw::go_header({T{"model.norm.weight", "BF16", {2560}, std::string(5120, '\0')}});
  EXPECT_EQ(h, "{\"model.norm.weight\":{\"dtype\":\"BF16\",\"shape\":[2560],\"data_offsets\":[0,5120]}}   ");
  EXPECT_EQ(h.size(), 80u);
  // The library's own Go-writer header (used by import) is the same bytes.
  tblob::Allocator a;
  tblob::ByteBuf b(&a);
  const uint64_t shape[1] = {2560};
  tblob::HeaderTensor t{"model.norm.weight", 17, TBLOB_DTYPE_BF16, shape, 1, 5120};
  ASSERT_TRUE(tblob::go_writer_header(&t, 1, &b));
  EXPECT_EQ(std::string(b.data(), b.size()), tw::le64(80) + h);
}

TEST(OllamaWriters, GoWriterDataBlobIs88BytePrefix) {
  // 3.8: {"data":{"dtype":"BF16","shape":[2560,9728],"data_offsets":[0,49807360]}} + 7 spaces.
  const std::string h = tw::go_header({T{"data", "BF16", {2560, 9728}, std::string()}});
  // (data_offsets come from the bytes; rebuild with the real length's digits)
  std::string expect = "{\"data\":{\"dtype\":\"BF16\",\"shape\":[2560,9728],\"data_offsets\":[0,49807360]}}";
  while (expect.size() % 8) expect += ' ';
  EXPECT_EQ(expect.size(), 80u);
  EXPECT_EQ(expect.size() + 8, 88u);
  tblob::Allocator a;
  tblob::ByteBuf b(&a);
  const uint64_t shape[2] = {2560, 9728};
  tblob::HeaderTensor t{"data", 4, TBLOB_DTYPE_BF16, shape, 2, 49807360};
  ASSERT_TRUE(tblob::go_writer_header(&t, 1, &b));
  EXPECT_EQ(std::string(b.data() + 8, b.size() - 8), expect);
  (void)h;
}

TEST(OllamaWriters, MlxWriterInt4CombinedHeaderIs298Bytes) {
  // 3.1 (b) verified example: no padding, data_offsets/dtype/shape order, metadata first.
  std::vector<T> ts = {T{"m.weight", "U32", {4096, 512}, std::string(8388608, '\0')},
                       T{"m.weight.bias", "BF16", {4096, 64}, std::string(524288, '\0')},
                       T{"m.weight.scale", "BF16", {4096, 64}, std::string(524288, '\0')}};
  const std::string h = tw::mlx_header(ts, {{"group_size", "64"}, {"quant_type", "int4"}}, {0, 1, 2});
  EXPECT_EQ(h.size(), 298u);
  const std::string prefix =
      "{\"__metadata__\":{\"group_size\":\"64\",\"quant_type\":\"int4\"},\"m.weight\":{\"data_offsets\":[0,8388608],"
      "\"dtype\":\"U32\",\"shape\":[4096,512]}";
  EXPECT_EQ(h.substr(0, prefix.size()), prefix);
}

TEST(OllamaWriters, JsonStringEscapingMatchesGo) {
  tblob::Allocator a;
  tblob::ByteBuf b(&a);
  const char s[] = "a<b>&\"\\\n\x01\xe2\x80\xa8z";
  ASSERT_TRUE(tblob::go_json_string(&b, s, sizeof(s) - 1));
  EXPECT_EQ(std::string(b.data(), b.size()), "\"a\\u003cb\\u003e\\u0026\\\"\\\\\\n\\u0001\\u2028z\"");
}

TEST(OllamaWriters, ExpertGroupPrefixes) {
  auto g = [](const std::string &n) { return n.substr(0, tblob::ollama::expert_group_of(n.data(), n.size())); };
  EXPECT_EQ(g("model.layers.3.mlp.experts.7.gate_proj.weight"), "model.layers.3.mlp.experts");
  EXPECT_EQ(g("model.layers.3.mlp.shared_experts.up_proj.weight"), "model.layers.3.mlp.shared_experts");
  EXPECT_EQ(g("model.language_model.layers.10.mlp.switch_mlp.down_proj.weight"),
            "model.language_model.layers.10.mlp.switch_mlp");
  EXPECT_EQ(g("backbone.layers.0.mixer.experts.1.up_proj.weight"), "backbone.layers.0.mixer.experts");
  EXPECT_EQ(g("layers.2.moe.experts.0.w1.weight"), "layers.2.moe.experts");
  EXPECT_EQ(g("model.layers.3.mlp.gate_proj.weight"), "");
  EXPECT_EQ(g("model.layers.x.mlp.experts.0.w"), "");
  EXPECT_EQ(g("foo.layers.3.mlp.experts.0.w"), "");
}

// --- layouts opened as a model --------------------------------------------------------------

struct Layouts : tt::Fixture {};

TEST_F(Layouts, UnquantizedSingleTensorBlobs) {
  tw::Store st(root);
  std::vector<tw::Layer> ls;
  ls.push_back(st.blob(tw::go_blob({T{"model.norm.weight", "BF16", {8}, bf16(8, 1)}}), "model.norm.weight"));
  ls.push_back(st.blob(tw::go_blob({T{"lm_head.weight", "F16", {4, 8}, tw::pattern(64, 2)}}), "lm_head.weight"));
  ls.push_back(st.blob("{\"model_type\":\"llama\"}", "config.json", "application/vnd.ollama.image.json"));
  st.manifest("m", ls);
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(open_model("m", &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_format(m), (uint32_t)TBLOB_FORMAT_OLLAMA);
  EXPECT_EQ(tt::tensor_names(m), (std::vector<std::string>{"lm_head.weight", "model.norm.weight"}));
  EXPECT_EQ(tblob_model_file_count(m), 2u);
  EXPECT_EQ(tt::tensor_bytes(m, "lm_head.weight"), tw::pattern(64, 2));
  const char *v;
  size_t vl;
  ASSERT_EQ(tblob_metadata_find(m, "ollama.name", 11, &v, &vl, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(v, vl), "registry.ollama.ai/library/m:latest");
  tblob_model_close(m);
}

TEST_F(Layouts, CombinedQuantizedBlobListsEveryStoredTensor) {
  tw::Store st(root);
  // int4 g64 on K=128: weight [4, 16] U32, scale/bias [4, 2] BF16 (MLX writer, global metadata).
  std::vector<T> q = {T{"model.layers.0.mlp.up_proj.weight", "U32", {4, 16}, tw::pattern(256, 3)},
                      T{"model.layers.0.mlp.up_proj.weight.scale", "BF16", {4, 2}, tw::pattern(16, 4)},
                      T{"model.layers.0.mlp.up_proj.weight.bias", "BF16", {4, 2}, tw::pattern(16, 5)}};
  std::vector<tw::Layer> ls;
  ls.push_back(st.blob(tw::mlx_blob(q, {{"quant_type", "int4"}, {"group_size", "64"}}, {1, 0, 2}),
                       "model.layers.0.mlp.up_proj.weight"));
  // nvfp4 with per-tensor metadata keys (mixed types in one blob)
  std::vector<T> q2 = {T{"a.weight", "U32", {2, 4}, tw::pattern(32, 6)},
                       T{"a.weight.scale", "U8", {2, 2}, tw::pattern(4, 7)}};
  ls.push_back(st.blob(tw::mlx_blob(q2, {{"a.weight.quant_type", "nvfp4"}, {"a.weight.group_size", "16"}}), "a.weight"));
  // pre-quantized nvfp4 import: Go writer, global_scale scalar, metadata object
  std::vector<T> pq = {T{"p.weight", "U32", {2, 4}, tw::pattern(32, 8)},
                       T{"p.weight.scale", "U8", {2, 2}, tw::pattern(4, 9)},
                       T{"p.weight.global_scale", "F32", {}, tw::pattern(4, 10)}};
  ls.push_back(st.blob(tw::go_blob(pq, {{"group_size", "16"}, {"quant_type", "nvfp4"}}), "p.weight"));
  st.manifest("q", ls);
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(open_model("q", &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tt::tensor_names(m),
            (std::vector<std::string>{"a.weight", "a.weight.scale", "model.layers.0.mlp.up_proj.weight",
                                      "model.layers.0.mlp.up_proj.weight.bias",
                                      "model.layers.0.mlp.up_proj.weight.scale", "p.weight",
                                      "p.weight.global_scale", "p.weight.scale"}));
  EXPECT_EQ(tt::tensor_bytes(m, "model.layers.0.mlp.up_proj.weight.scale"), tw::pattern(16, 4));
  EXPECT_EQ(tt::tensor_bytes(m, "p.weight.global_scale"), tw::pattern(4, 10));
  // Per-blob metadata stays in each blob's range; the model lists all of it.
  const char *v;
  size_t vl;
  ASSERT_EQ(tblob_metadata_find(m, "quant_type", 10, &v, &vl, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(v, vl), "int4");
  ASSERT_EQ(tblob_metadata_find(m, "a.weight.quant_type", 19, &v, &vl, nullptr), TBLOB_OK);
  EXPECT_EQ(std::string(v, vl), "nvfp4");
  EXPECT_EQ(tblob_metadata_count(m), 2u + 2u + 2u + 2u);
  tblob_model_close(m);
}

TEST_F(Layouts, ThreeBlobLegacyDataLayers) {
  // Jan-Feb 2026: <name>, <name>_scale, <name>_qbias, each an MLX single-"data" blob with
  // "__metadata__":null and no padding; unquantized tensors a Go-written "data" blob.
  tw::Store st(root);
  const std::string n = "model.layers.0.self_attn.q_proj.weight";
  std::vector<tw::Layer> ls;
  ls.push_back(st.blob(tw::mlx_blob({T{"data", "U32", {8, 4}, tw::pattern(128, 11)}}), n));
  ls.push_back(st.blob(tw::mlx_blob({T{"data", "BF16", {8, 1}, tw::pattern(16, 12)}}), n + "_scale"));
  ls.push_back(st.blob(tw::mlx_blob({T{"data", "BF16", {8, 1}, tw::pattern(16, 13)}}), n + "_qbias"));
  ls.push_back(st.blob(tw::go_blob({T{"data", "BF16", {8}, bf16(8, 14)}}), "model.norm.weight"));
  // Two layers sharing one "data" blob (identical norm weights) each get their own row.
  ls.push_back(st.blob(tw::go_blob({T{"data", "BF16", {8}, bf16(8, 14)}}), "model.layers.0.input_layernorm.weight"));
  st.manifest("legacy", ls);
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(open_model("legacy", &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tt::tensor_names(m), (std::vector<std::string>{"model.layers.0.input_layernorm.weight", n, n + "_qbias",
                                                           n + "_scale", "model.norm.weight"}));
  EXPECT_EQ(tt::tensor_bytes(m, n + "_qbias"), tw::pattern(16, 13));
  EXPECT_EQ(tt::tensor_bytes(m, "model.layers.0.input_layernorm.weight"), bf16(8, 14));
  tblob_model_close(m);
}

TEST_F(Layouts, ExpertGroupsInAllThreeHistoricalLayouts) {
  tw::Store st(root);
  std::vector<tw::Layer> ls;
  // (1) Feb-Mar 2026: one blob per group, per-expert 2-D tensors + .scale/.bias, metadata null.
  std::vector<T> g1;
  for (int e = 0; e < 2; ++e)
    for (const char *p : {"gate_proj", "up_proj"}) {
      const std::string b = "model.layers.1.mlp.experts." + std::to_string(e) + "." + p + ".weight";
      g1.push_back(T{b, "U32", {4, 4}, tw::pattern(64, 20 + e)});
      g1.push_back(T{b + ".scale", "BF16", {4, 1}, tw::pattern(8, 30 + e)});
      g1.push_back(T{b + ".bias", "BF16", {4, 1}, tw::pattern(8, 40 + e)});
    }
  ls.push_back(st.blob(tw::mlx_blob(g1), "model.layers.1.mlp.experts"));
  // (2) Mar-Jul 2026: stacked switch_mlp 3-D tensors, per-tensor metadata keys only.
  std::vector<T> g2;
  std::map<std::string, std::string> meta2;
  for (const char *p : {"gate_proj", "down_proj"}) {
    const std::string b = std::string("model.layers.2.mlp.switch_mlp.") + p + ".weight";
    g2.push_back(T{b, "U32", {2, 4, 4}, tw::pattern(128, 50)});
    g2.push_back(T{b + ".scale", "BF16", {2, 4, 1}, tw::pattern(16, 51)});
    g2.push_back(T{b + ".bias", "BF16", {2, 4, 1}, tw::pattern(16, 52)});
    meta2[b + ".quant_type"] = std::string(p) == "down_proj" ? "int8" : "int4";
    meta2[b + ".group_size"] = "64";
  }
  ls.push_back(st.blob(tw::mlx_blob(g2, meta2), "model.layers.2.mlp.experts"));
  // Shared experts of the same period: names kept, global metadata.
  ls.push_back(st.blob(tw::mlx_blob({T{"model.layers.2.mlp.shared_experts.up_proj.weight", "U32", {4, 4}, tw::pattern(64, 53)},
                                     T{"model.layers.2.mlp.shared_experts.up_proj.weight.scale", "BF16", {4, 1}, tw::pattern(8, 54)},
                                     T{"model.layers.2.mlp.shared_experts.up_proj.weight.bias", "BF16", {4, 1}, tw::pattern(8, 55)}},
                                    {{"quant_type", "int4"}, {"group_size", "32"}}),
                       "model.layers.2.mlp.shared_experts"));
  // (3) Jul 2026 ->: <prefix>.<proj>.weight stacked [E, ...], one blob named <prefix>.
  std::vector<T> g3;
  for (const char *p : {"gate_proj", "up_proj", "down_proj"}) {
    const std::string b = std::string("model.layers.3.mlp.experts.") + p + ".weight";
    g3.push_back(T{b, "U32", {2, 4, 4}, tw::pattern(128, 60)});
    g3.push_back(T{b + ".scale", "BF16", {2, 4, 1}, tw::pattern(16, 61)});
    g3.push_back(T{b + ".bias", "BF16", {2, 4, 1}, tw::pattern(16, 62)});
  }
  ls.push_back(st.blob(tw::mlx_blob(g3, {{"quant_type", "int4"}, {"group_size", "64"}}), "model.layers.3.mlp.experts"));
  // (3) with mixed types: one blob per projection, named after the stacked tensor.
  ls.push_back(st.blob(tw::mlx_blob({T{"model.layers.4.mlp.experts.down_proj.weight", "U32", {2, 4, 8}, tw::pattern(256, 63)},
                                     T{"model.layers.4.mlp.experts.down_proj.weight.scale", "BF16", {2, 4, 1}, tw::pattern(16, 64)},
                                     T{"model.layers.4.mlp.experts.down_proj.weight.bias", "BF16", {2, 4, 1}, tw::pattern(16, 65)}},
                                    {{"quant_type", "int8"}, {"group_size", "64"}}),
                       "model.layers.4.mlp.experts.down_proj.weight"));
  // An unquantized group (Go writer, per-expert 2-D tensors).
  ls.push_back(st.blob(tw::go_blob({T{"model.layers.5.mlp.experts.0.up_proj.weight", "BF16", {4, 4}, bf16(16, 70)},
                                    T{"model.layers.5.mlp.experts.1.up_proj.weight", "BF16", {4, 4}, bf16(16, 71)}}),
                       "model.layers.5.mlp.experts"));
  st.manifest("moe", ls);
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(open_model("moe", &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_tensor_count(m), 12u + 6u + 3u + 9u + 3u + 2u);
  EXPECT_EQ(tt::tensor_bytes(m, "model.layers.1.mlp.experts.1.up_proj.weight.bias"), tw::pattern(8, 41));
  EXPECT_EQ(tt::tensor_bytes(m, "model.layers.2.mlp.switch_mlp.down_proj.weight"), tw::pattern(128, 50));
  EXPECT_EQ(tt::tensor_bytes(m, "model.layers.3.mlp.experts.up_proj.weight.scale"), tw::pattern(16, 61));
  EXPECT_EQ(tt::tensor_bytes(m, "model.layers.5.mlp.experts.1.up_proj.weight"), bf16(16, 71));
  tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
  uint64_t idx;
  ASSERT_EQ(tblob_tensor_find(m, "model.layers.3.mlp.experts.down_proj.weight", 43, &idx, nullptr), TBLOB_OK);
  ASSERT_EQ(tblob_tensor_at(m, idx, &t, nullptr), TBLOB_OK);
  EXPECT_EQ(t.rank, 3u);
  tblob_model_close(m);
}

TEST_F(Layouts, ImageGenerationDataBlobsWithManifestDtypeShapeAndComponents) {
  tw::Store st(root);
  std::vector<tw::Layer> ls;
  auto data_layer = [&](const std::string &name, const std::string &dtype, std::vector<uint64_t> shape, unsigned seed,
                        bool mlx = false) {
    uint64_t n = dtype == "F32" ? 4 : 2;
    for (uint64_t s : shape) n *= s;
    const std::vector<T> ts = {T{"data", dtype, shape, tw::pattern(n, seed)}};
    tw::Layer l = st.blob(mlx ? tw::mlx_blob(ts) : tw::go_blob(ts), name);
    l.extra = ",\"dtype\":\"" + dtype + "\",\"shape\":" + tw::shape_json(shape);
    return l;
  };
  ls.push_back(data_layer("text_encoder/encoder.layers.0.weight", "BF16", {4, 4}, 80));
  ls.push_back(data_layer("transformer/blocks.0.weight", "F16", {2, 8}, 81, true));
  ls.push_back(data_layer("vae/decoder.conv.weight", "F32", {2, 2}, 82));
  // After Feb 2026: an unquantized blob keyed by the bare name under a path-style layer.
  ls.push_back(st.blob(tw::go_blob({T{"blocks.1.weight", "BF16", {4}, bf16(4, 83)}}), "transformer/blocks.1.weight"));
  // ... and a quantized one keyed component/name with companions.
  ls.push_back(st.blob(tw::mlx_blob({T{"transformer/blocks.2.weight", "U32", {4, 4}, tw::pattern(64, 84)},
                                     T{"transformer/blocks.2.weight.scale", "BF16", {4, 1}, tw::pattern(8, 85)},
                                     T{"transformer/blocks.2.weight.bias", "BF16", {4, 1}, tw::pattern(8, 86)}},
                                    {{"quant_type", "int4"}, {"group_size", "32"}}),
                       "transformer/blocks.2.weight"));
  ls.push_back(st.blob("{\"_class_name\":\"FluxPipeline\",\"quantization\":\"Q4\"}", "model_index.json",
                       "application/vnd.ollama.image.config"));
  ls.push_back(st.blob("{\"hidden_size\":4}", "text_encoder/config.json", "application/vnd.ollama.image.json"));
  st.manifest_raw("flux", tw::Store::manifest_json(st.config("image"), ls));
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(open_model("flux", &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tt::tensor_names(m),
            (std::vector<std::string>{"text_encoder/encoder.layers.0.weight", "transformer/blocks.0.weight",
                                      "transformer/blocks.1.weight", "transformer/blocks.2.weight",
                                      "transformer/blocks.2.weight.bias", "transformer/blocks.2.weight.scale",
                                      "vae/decoder.conv.weight"}));
  EXPECT_EQ(tt::tensor_bytes(m, "transformer/blocks.0.weight"), tw::pattern(32, 81));
  tblob_model_close(m);
  // Component filtering.
  ASSERT_EQ(open_model("flux", &m, &d, "transformer"), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_tensor_count(m), 5u);
  tblob_model_close(m);
  ASSERT_EQ(open_model("flux", &m, &d, "vae"), TBLOB_OK) << d.message;
  EXPECT_EQ(tt::tensor_names(m), (std::vector<std::string>{"vae/decoder.conv.weight"}));
  tblob_model_close(m);
  EXPECT_EQ(open_model("flux", &m, &d, "unet"), TBLOB_E_OLLAMA_COMPONENT);
  EXPECT_EQ(m, nullptr);
  // JSON and config layers read as bytes, JSON-checked and hash-checked.
  tblob_store *s = open_store();
  tblob_manifest *man = nullptr;
  ASSERT_EQ(tblob_store_manifest_open(s, "flux", 4, &man, &d), TBLOB_OK) << d.message;
  ASSERT_EQ(tblob_manifest_layer_count(man), ls.size());
  tblob_layer_info li = TBLOB_LAYER_INFO_INIT;
  ASSERT_EQ(tblob_manifest_layer_at(man, 0, &li, &d), TBLOB_OK);
  EXPECT_EQ(li.kind, (uint32_t)TBLOB_LAYER_TENSOR);
  EXPECT_EQ(li.dtype, (uint32_t)TBLOB_DTYPE_BF16);
  ASSERT_EQ(li.has_shape, 1u);
  EXPECT_EQ(li.rank, 2u);
  ASSERT_EQ(tblob_manifest_layer_at(man, 5, &li, &d), TBLOB_OK);
  EXPECT_EQ(li.kind, (uint32_t)TBLOB_LAYER_JSON);
  EXPECT_EQ(std::string(li.name, li.name_len), "model_index.json");
  size_t len = 0;
  EXPECT_EQ(tblob_store_read_layer(s, man, 5, nullptr, 0, &len, &d), TBLOB_E_BUFFER_TOO_SMALL);
  std::string buf(len, '\0');
  ASSERT_EQ(tblob_store_read_layer(s, man, 5, &buf[0], buf.size(), &len, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(buf, "{\"_class_name\":\"FluxPipeline\",\"quantization\":\"Q4\"}");
  char cfg[1024];
  ASSERT_EQ(tblob_store_read_layer(s, man, TBLOB_LAYER_CONFIG_INDEX, cfg, sizeof(cfg), &len, &d), TBLOB_OK);
  EXPECT_NE(std::string(cfg, len).find("\"image\""), std::string::npos);
  tblob_manifest_close(man);
  tblob_store_close(s);
}

TEST_F(Layouts, ManifestDtypeOrShapeDisagreeingWithTheBlob) {
  tw::Store st(root);
  tw::Layer l = st.blob(tw::go_blob({T{"data", "BF16", {4, 4}, bf16(16, 90)}}), "transformer/x.weight");
  l.extra = ",\"dtype\":\"F16\",\"shape\":[4,4]";
  st.manifest("bad-dtype", {l});
  l.extra = ",\"dtype\":\"BF16\",\"shape\":[16]";
  st.manifest("bad-shape", {l});
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_model("bad-dtype", &m, &d), TBLOB_E_OLLAMA_LAYER_MISMATCH);
  EXPECT_NE(std::string(d.message).find("dtype"), std::string::npos) << d.message;
  EXPECT_EQ(open_model("bad-shape", &m, &d), TBLOB_E_OLLAMA_LAYER_MISMATCH);
  EXPECT_NE(std::string(d.message).find("shape"), std::string::npos) << d.message;
}

TEST_F(Layouts, ManyLayersSharingOneDataBlobOpenItOnce) {
  // Image-generation models repeat one "data" blob (e.g. zeros) under many layer names: one
  // file per distinct blob, so a low max_files still opens them all.
  tw::Store st(root);
  tw::Layer shared = st.blob(tw::go_blob({T{"data", "BF16", {2, 2}, bf16(4, 7)}}));
  shared.extra = ",\"dtype\":\"BF16\",\"shape\":[2,2]";
  tw::Layer other = st.blob(tw::go_blob({T{"data", "F32", {1}, tw::pattern(4, 8)}}), "vae/other");
  std::vector<tw::Layer> ls;
  const size_t n = 3000;
  for (size_t i = 0; i < n; ++i) {
    tw::Layer l = shared;
    l.name = "transformer/blocks." + std::to_string(i) + ".weight";
    ls.push_back(l);
  }
  ls.push_back(other);
  st.manifest("shared", ls);
  tblob_open_options oo = TBLOB_OPEN_OPTIONS_INIT;
  oo.max_files = 2;
  tblob_store_open_options so = TBLOB_STORE_OPEN_OPTIONS_INIT;
  so.open = &oo;
  tblob_store *s = open_store();
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_store_open_model(s, "shared", 6, &so, &m, &d), TBLOB_OK) << d.message;
  EXPECT_EQ(tblob_model_file_count(m), 2u);
  EXPECT_EQ(tblob_model_tensor_count(m), n + 1);
  EXPECT_EQ(tt::tensor_bytes(m, "transformer/blocks.0.weight"), bf16(4, 7));
  EXPECT_EQ(tt::tensor_bytes(m, "transformer/blocks.2999.weight"), bf16(4, 7));
  EXPECT_EQ(tt::tensor_bytes(m, "vae/other"), tw::pattern(4, 8));
  tblob_model_close(m);
  // The manifest's dtype/shape is still checked for every layer sharing the blob, and a
  // mismatch shows both shapes.
  ls[1].extra = ",\"dtype\":\"BF16\",\"shape\":[4]";
  st.manifest("shared-bad", ls);
  EXPECT_EQ(tblob_store_open_model(s, "shared-bad", 10, &so, &m, &d), TBLOB_E_OLLAMA_LAYER_MISMATCH);
  EXPECT_NE(std::string(d.message).find("blocks.1.weight"), std::string::npos) << d.message;
  EXPECT_NE(std::string(d.message).find("[4]"), std::string::npos) << d.message;
  EXPECT_NE(std::string(d.message).find("[2, 2]"), std::string::npos) << d.message;
  tblob_store_close(s);
}

TEST_F(Layouts, BlobHeaderErrorsNameTheBlobAndLayer) {
  tw::Store st(root);
  std::string b = tw::go_blob({T{"w", "F32", {4}, tw::pattern(16, 1)}});
  b.resize(b.size() - 4);  // data region short
  st.manifest("short", {st.blob(b, "w")});
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(open_model("short", &m, &d), TBLOB_E_TRUNCATED);
  EXPECT_NE(std::string(d.message).find("blob sha256-"), std::string::npos) << d.message;
  EXPECT_NE(std::string(d.message).find("layer \"w\""), std::string::npos) << d.message;
  // Two blobs holding the same tensor name: duplicate.
  st.manifest("dup", {st.blob(tw::go_blob({T{"w", "F32", {1}, tw::pattern(4, 1)}}), "w"),
                      st.blob(tw::go_blob({T{"w", "F32", {1}, tw::pattern(4, 2)}}), "w")});
  EXPECT_EQ(open_model("dup", &m, &d), TBLOB_E_DUPLICATE_NAME);
  // A GGUF-engine model has no tensor layers: its model layer is read as GGUF when the build
  // has the reader ("GGUF...." has version 0x2e2e2e2e; tests/gguf has the real thing).
  st.manifest("gguf", {st.blob("GGUF....", "", "application/vnd.ollama.image.model")});
#if TBLOB_HAVE_GGUF
  EXPECT_EQ(open_model("gguf", &m, &d), TBLOB_E_GGUF_VERSION);
#else
  EXPECT_EQ(open_model("gguf", &m, &d), TBLOB_E_OLLAMA_NO_TENSORS);
#endif
}

}  // namespace
