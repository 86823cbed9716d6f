// Quantized-companion resolution at open (lib/formats/safetensors/st_companions.cpp): the
// fixtures of tests/data/companions (tests/oracles/gen_companion_fixtures.py: mlx-community
// checkpoints with config.json, Hugging Face block FP8, Ollama blobs without / with per-tensor
// metadata and with the runner's alias names) resolve to logical tensors whose dequantized
// values equal the oracle's bit for bit; config.json handling; sharded checkpoints.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tensorblob.h"

namespace {

std::string data_dir() {
  if (const char *e = std::getenv("TBLOB_COMPANIONS_DATA_DIR")) return e;
#ifdef TBLOB_COMPANIONS_DATA_DIR
  return TBLOB_COMPANIONS_DATA_DIR;
#else
  return "tests/data/companions";
#endif
}

std::string read_all(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
void write_all(const std::string &path, const std::string &bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string temp_dir() {
  const char *t = std::getenv("TMPDIR");
  std::string tmpl = std::string(t && *t ? t : "/tmp") + "/tblob_companions_XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  const char *d = mkdtemp(buf.data());
  EXPECT_NE(d, nullptr);
  return d ? d : "/tmp";
}

struct Model {
  tblob_model *m = nullptr;
  std::string mem;
  explicit Model(const std::string &path) {
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_model_open(path.c_str(), nullptr, &m, &d), TBLOB_OK) << path << ": " << d.message;
  }
  static Model *memory(const std::string &bytes) {  // no config.json can be found
    Model *x = new Model();
    x->mem = bytes;
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_model_open_memory(x->mem.data(), x->mem.size(), nullptr, &x->m, &d), TBLOB_OK) << d.message;
    return x;
  }
  ~Model() { tblob_model_close(m); }
  uint64_t find(const std::string &name) const {
    uint64_t i = UINT64_MAX;
    EXPECT_EQ(tblob_tensor_find(m, name.data(), name.size(), &i, nullptr), TBLOB_OK) << name;
    return i;
  }
  std::string name(int64_t i) const {
    if (i < 0) return "";
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    EXPECT_EQ(tblob_tensor_at(m, static_cast<uint64_t>(i), &t, nullptr), TBLOB_OK);
    return std::string(t.name, t.name_len);
  }
  std::string bytes(const std::string &name) const {
    const void *p = nullptr;
    uint64_t n = 0;
    EXPECT_EQ(tblob_tensor_data(m, find(name), &p, &n, nullptr), TBLOB_OK) << name;
    return std::string(static_cast<const char *>(p), n);
  }
  tblob_quant_info quant(const std::string &name) const {
    tblob_quant_info q = TBLOB_QUANT_INFO_INIT;
    EXPECT_EQ(tblob_tensor_quant_info(m, find(name), &q, nullptr), TBLOB_OK);
    return q;
  }

 private:
  Model() = default;
};

bool is_nan(int slot, uint32_t v) {
  if (slot == 0) return (v & 0x7FFFFFFFu) > 0x7F800000u;
  if (slot == 1) return (v & 0x7FFFu) > 0x7C00u;
  return (v & 0x7FFFu) > 0x7F80u;
}

const uint32_t kOut[3] = {TBLOB_DTYPE_F32, TBLOB_DTYPE_F16, TBLOB_DTYPE_BF16};
const char *const kSuffix[3] = {"", ".f16", ".bf16"};

// Dequantizes `tensor` of m in all three output types and compares with the oracle's
// `tensor`, `tensor.f16`, `tensor.bf16` in exp: bit for bit, NaN where the oracle has NaN.
void expect_matches(const Model &m, const Model &exp, const std::string &tensor) {
  SCOPED_TRACE(tensor);
  const uint64_t i = m.find(tensor);
  for (int slot = 0; slot < 3; ++slot) {
    const std::string want = exp.bytes(tensor + kSuffix[slot]);
    std::string got(want.size(), '\0');
    tblob_diag d = TBLOB_DIAG_INIT;
    ASSERT_EQ(tblob_tensor_dequantize(m.m, i, kOut[slot], 0, TBLOB_ALL_ROWS, &got[0], got.size(), &d), TBLOB_OK)
        << d.message;
    const size_t es = slot == 0 ? 4 : 2;
    size_t bad = 0;
    for (size_t k = 0; k < want.size() / es; ++k) {
      uint32_t g = 0, w = 0;
      std::memcpy(&g, got.data() + k * es, es);
      std::memcpy(&w, want.data() + k * es, es);
      const bool ok = is_nan(slot, w) ? is_nan(slot, g) : g == w;
      if (!ok && bad++ < 5)
        ADD_FAILURE() << "out " << slot << " element " << k << ": got 0x" << std::hex << g << " want 0x" << w;
    }
    EXPECT_EQ(bad, 0u) << "output " << slot;
  }
}

// ---------------------------------------------------------------------------------------------
TEST(CompanionsMlxCommunity, ConfigQuantizationBlock) {
  const std::string dir = data_dir() + "/mlx_community";
  Model m(dir + "/model.safetensors"), exp(dir + "/expected.safetensors");
  ASSERT_NE(m.m, nullptr);
  ASSERT_NE(exp.m, nullptr);
  struct {
    const char *mod;
    uint32_t bits, group;
    uint64_t rows, cols;
  } k[] = {{"model.embed_tokens", 4, 64, 32, 128},
           {"model.layers.0.mlp.up_proj", 4, 64, 16, 256},
           {"model.layers.0.mlp.down_proj", 8, 32, 8, 256}};  // the per-layer override
  for (const auto &e : k) {
    SCOPED_TRACE(e.mod);
    const std::string w = std::string(e.mod) + ".weight";
    const tblob_quant_info q = m.quant(w);
    EXPECT_EQ(q.flags, TBLOB_TENSOR_QUANTIZED);
    EXPECT_EQ(q.source, static_cast<uint32_t>(TBLOB_QUANT_SOURCE_MLX_COMMUNITY));
    EXPECT_EQ(q.scheme, static_cast<uint32_t>(TBLOB_QUANT_MLX_AFFINE));
    EXPECT_EQ(q.bits, e.bits);
    EXPECT_EQ(q.group_size, e.group);
    EXPECT_EQ(q.rows, e.rows);
    EXPECT_EQ(q.cols, e.cols);
    EXPECT_EQ(q.scale_dtype, static_cast<uint32_t>(TBLOB_DTYPE_BF16));
    EXPECT_EQ(q.special, static_cast<uint32_t>(TBLOB_SPECIAL_MLX));
    EXPECT_EQ(q.status, TBLOB_OK);
    EXPECT_EQ(m.name(q.scale_index), std::string(e.mod) + ".scales");
    EXPECT_EQ(m.name(q.bias_index), std::string(e.mod) + ".biases");
    EXPECT_EQ(q.global_scale_index, -1);
    // The companions stay listed and findable, marked as such.
    const tblob_quant_info c = m.quant(std::string(e.mod) + ".scales");
    EXPECT_EQ(c.flags, TBLOB_TENSOR_COMPANION);
    EXPECT_EQ(c.weight_index, static_cast<int64_t>(m.find(w)));
    EXPECT_EQ(c.scheme, static_cast<uint32_t>(TBLOB_QUANT_BF16));
    tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
    ASSERT_EQ(tblob_tensor_at(m.m, m.find(w), &ti, nullptr), TBLOB_OK);
    EXPECT_EQ(ti.dtype, static_cast<uint32_t>(TBLOB_DTYPE_U32));
    EXPECT_EQ(ti.shape[1], e.cols * e.bits / 32);
    ASSERT_EQ(ti.logical_rank, 2u);
    EXPECT_EQ(ti.logical_shape[0], e.rows);
    EXPECT_EQ(ti.logical_shape[1], e.cols);
    EXPECT_EQ(ti.logical_elements, e.rows * e.cols);
    EXPECT_EQ(ti.quant_scheme, static_cast<uint32_t>(TBLOB_QUANT_MLX_AFFINE));
    EXPECT_EQ(ti.quant_flags, TBLOB_TENSOR_QUANTIZED);
    ASSERT_EQ(tblob_tensor_at(m.m, m.find(std::string(e.mod) + ".biases"), &ti, nullptr), TBLOB_OK);
    EXPECT_EQ(ti.quant_flags, TBLOB_TENSOR_COMPANION);
    EXPECT_EQ(ti.logical_shape, ti.shape);
    expect_matches(m, exp, w);
  }
  const tblob_quant_info n = m.quant("model.norm.weight");
  EXPECT_EQ(n.flags, 0u);
  EXPECT_EQ(n.scheme, static_cast<uint32_t>(TBLOB_QUANT_BF16));
  EXPECT_EQ(tblob_model_tensor_count(m.m), 10u);  // nothing hidden
}

TEST(CompanionsMlxCommunity, WithoutConfigShapesDecide) {
  std::unique_ptr<Model> m(Model::memory(read_all(data_dir() + "/mlx_community/model.safetensors")));
  Model exp(data_dir() + "/mlx_community/expected.safetensors");
  ASSERT_NE(m->m, nullptr);
  // 4-bit g64 and 8-bit g32 give the same shapes; without a config Ollama's rule picks MLX's
  // default (4 bits, group 64): right for up_proj, wrong for down_proj.
  const tblob_quant_info up = m->quant("model.layers.0.mlp.up_proj.weight");
  EXPECT_EQ(up.bits, 4u);
  EXPECT_EQ(up.group_size, 64u);
  expect_matches(*m, exp, "model.layers.0.mlp.up_proj.weight");
  const tblob_quant_info down = m->quant("model.layers.0.mlp.down_proj.weight");
  EXPECT_EQ(down.bits, 4u);
  EXPECT_EQ(down.group_size, 64u);
}

TEST(CompanionsMlxCommunity, ConfigVariants) {
  const std::string model = read_all(data_dir() + "/mlx_community/model.safetensors");
  Model exp(data_dir() + "/mlx_community/expected.safetensors");
  struct {
    const char *what, *config;
    uint32_t down_bits;
  } k[] = {
      {"not JSON: ignored", "{\"quantization\": {\"bits\": 8,", 4},
      {"under text_config",
       "{\"text_config\": {\"quantization\": {\"group_size\": 64, \"bits\": 4, "
       "\"model.layers.0.mlp.down_proj\": {\"group_size\": 32, \"bits\": 8}}}}",
       8},
      {"quantization wins over quantization_config",
       "{\"quantization_config\": {\"group_size\": 64, \"bits\": 4}, \"quantization\": {\"group_size\": 64, "
       "\"bits\": 4, \"mode\": \"affine\", \"model.layers.0.mlp.down_proj\": {\"group_size\": 32, \"bits\": 8}}}",
       8},
  };
  for (const auto &c : k) {
    SCOPED_TRACE(c.what);
    const std::string dir = temp_dir();
    write_all(dir + "/model.safetensors", model);
    write_all(dir + "/config.json", c.config);
    {
      Model m(dir + "/model.safetensors");
      ASSERT_NE(m.m, nullptr);
      EXPECT_EQ(m.quant("model.layers.0.mlp.down_proj.weight").bits, c.down_bits);
      expect_matches(m, exp, "model.layers.0.mlp.up_proj.weight");
      if (c.down_bits == 8) expect_matches(m, exp, "model.layers.0.mlp.down_proj.weight");
    }
    std::remove((dir + "/model.safetensors").c_str());
    std::remove((dir + "/config.json").c_str());
    rmdir(dir.c_str());
  }
}

// Every prefix of a valid config.json, and a config nested deeper than the JSON depth limit,
// opens (the config counts as absent when it is not valid JSON) and never crashes.
TEST(CompanionsMlxCommunity, BrokenConfigsNeverFailTheOpen) {
  const std::string model = read_all(data_dir() + "/mlx_community/model.safetensors");
  const std::string cfg = read_all(data_dir() + "/mlx_community/config.json");
  ASSERT_FALSE(cfg.empty());
  std::vector<std::string> configs;
  for (size_t n = 0; n < cfg.size(); n += 3) configs.push_back(cfg.substr(0, n));
  configs.push_back("{\"quantization\": {\"x\": " + std::string(300, '[') + std::string(300, ']') +
                    ", \"bits\": 8, \"group_size\": 32}}");
  configs.push_back("{\"quantization\": {\"bits\": -4, \"group_size\": 1e3, \"mode\": 7}}");
  configs.push_back("{\"quantization\": {\"bits\": 99999999999999999999, \"group_size\": 64}}");
  configs.push_back("{\"quantization_config\": {\"weight_block_size\": [128]}}");
  const std::string dir = temp_dir();
  write_all(dir + "/model.safetensors", model);
  for (const std::string &c : configs) {
    write_all(dir + "/config.json", c);
    Model m(dir + "/model.safetensors");
    ASSERT_NE(m.m, nullptr) << c;
    const tblob_quant_info up = m.quant("model.layers.0.mlp.up_proj.weight");
    EXPECT_EQ(up.flags, TBLOB_TENSOR_QUANTIZED);
    std::vector<float> out(16 * 256);
    tblob_tensor_dequantize(m.m, m.find("model.layers.0.mlp.down_proj.weight"), TBLOB_DTYPE_F32, 0,
                     TBLOB_ALL_ROWS, out.data(), out.size() * 4, nullptr);
  }
  std::remove((dir + "/model.safetensors").c_str());
  std::remove((dir + "/config.json").c_str());
  rmdir(dir.c_str());
}

TEST(CompanionsMlxCommunity, Mxfp4Mode) {
  const std::string dir = data_dir() + "/mlx_community_mxfp4";
  Model m(dir + "/model.safetensors"), exp(dir + "/expected.safetensors");
  ASSERT_NE(m.m, nullptr);
  for (const char *w : {"model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.o_proj.weight"}) {
    const tblob_quant_info q = m.quant(w);
    EXPECT_EQ(q.scheme, static_cast<uint32_t>(TBLOB_QUANT_MXFP4));
    EXPECT_EQ(q.group_size, 32u);
    EXPECT_EQ(q.scale_dtype, static_cast<uint32_t>(TBLOB_DTYPE_F8_E8M0));  // stored as U8
    EXPECT_EQ(q.bias_index, -1);
    expect_matches(m, exp, w);
  }
}

// Sharded: weight in one shard, its companions in another, config.json beside the index; the
// packed weight in the first shard, then in the second (the first then holds no U32 row, and
// resolution must still look at every shard's rows).
TEST(CompanionsMlxCommunity, ShardedCheckpoint) {
  Model src(data_dir() + "/mlx_community/model.safetensors");
  Model exp(data_dir() + "/mlx_community/expected.safetensors");
  ASSERT_NE(src.m, nullptr);
  const std::string mod = "model.layers.0.mlp.down_proj";
  const std::string names[3] = {mod + ".weight", mod + ".scales", mod + ".biases"};
  auto shard = [&](std::vector<int> which) {
    std::string hdr = "{", data;
    for (int i : which) {
      tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
      EXPECT_EQ(tblob_tensor_at(src.m, src.find(names[i]), &t, nullptr), TBLOB_OK);
      if (i != which[0]) hdr += ",";
      hdr += "\"" + names[i] + "\":{\"dtype\":\"" + tblob_dtype_name(t.dtype) + "\",\"shape\":[" +
             std::to_string(t.shape[0]) + "," + std::to_string(t.shape[1]) + "],\"data_offsets\":[" +
             std::to_string(data.size()) + "," + std::to_string(data.size() + t.data_length) + "]}";
      data += src.bytes(names[i]);
    }
    hdr += "}";
    std::string n(8, '\0');
    for (int i = 0; i < 8; ++i) n[i] = static_cast<char>((hdr.size() >> (8 * i)) & 0xFF);
    return n + hdr + data;
  };
  for (bool weight_last : {false, true}) {
    const std::string dir = temp_dir();
    const std::vector<int> a = weight_last ? std::vector<int>{1, 2} : std::vector<int>{0};
    const std::vector<int> b = weight_last ? std::vector<int>{0} : std::vector<int>{1, 2};
    write_all(dir + "/a.safetensors", shard(a));
    write_all(dir + "/b.safetensors", shard(b));
    // The weight map lists a's names first: the shards are opened in the order it names them.
    std::string idx = "{\"metadata\":{},\"weight_map\":{";
    for (const auto &[file, which] : {std::make_pair("a", a), std::make_pair("b", b)})
      for (int i : which)
        idx += std::string(idx.back() == '{' ? "" : ",") + "\"" + names[i] + "\":\"" + file + ".safetensors\"";
    write_all(dir + "/model.safetensors.index.json", idx + "}}");
    write_all(dir + "/config.json", read_all(data_dir() + "/mlx_community/config.json"));
    {
      Model m(dir);
      ASSERT_NE(m.m, nullptr) << weight_last;
      EXPECT_EQ(tblob_model_format(m.m), static_cast<uint32_t>(TBLOB_FORMAT_SAFETENSORS_SHARDED));
      const tblob_quant_info q = m.quant(names[0]);
      EXPECT_EQ(q.flags, TBLOB_TENSOR_QUANTIZED) << weight_last;
      EXPECT_EQ(q.bits, 8u);
      EXPECT_EQ(q.group_size, 32u);
      expect_matches(m, exp, names[0]);
    }
    for (const char *f : {"/a.safetensors", "/b.safetensors", "/model.safetensors.index.json", "/config.json"})
      std::remove((dir + f).c_str());
    rmdir(dir.c_str());
  }
}

// ---------------------------------------------------------------------------------------------
TEST(CompanionsHfBlockFp8, Block128) {
  const std::string dir = data_dir() + "/hf_fp8";
  Model m(dir + "/model.safetensors"), exp(dir + "/expected.safetensors");
  ASSERT_NE(m.m, nullptr);
  struct {
    const char *w;
    uint32_t scale_dtype;
    uint64_t rows, cols;
  } k[] = {{"model.layers.0.self_attn.q_proj.weight", TBLOB_DTYPE_F32, 130, 136},
           {"model.layers.0.mlp.gate_proj.weight", TBLOB_DTYPE_BF16, 40, 200}};
  for (const auto &e : k) {
    SCOPED_TRACE(e.w);
    const tblob_quant_info q = m.quant(e.w);
    EXPECT_EQ(q.flags, TBLOB_TENSOR_QUANTIZED);
    EXPECT_EQ(q.source, static_cast<uint32_t>(TBLOB_QUANT_SOURCE_HF_BLOCK_FP8));
    EXPECT_EQ(q.scheme, static_cast<uint32_t>(TBLOB_QUANT_BLOCK_FP8));
    EXPECT_EQ(q.group_size, 128u);
    EXPECT_EQ(q.bits, 8u);
    EXPECT_EQ(q.special, static_cast<uint32_t>(TBLOB_SPECIAL_OCP));
    EXPECT_EQ(q.scale_dtype, e.scale_dtype);
    EXPECT_EQ(q.rows, e.rows);
    EXPECT_EQ(q.cols, e.cols);
    EXPECT_EQ(m.name(q.scale_index), std::string(e.w) + "_scale_inv");
    expect_matches(m, exp, e.w);
  }
  // input_scale is not a companion; the norm is plain.
  EXPECT_EQ(m.quant("model.layers.0.self_attn.q_proj.input_scale").flags, 0u);
  EXPECT_EQ(m.quant("model.norm.weight").flags, 0u);
  // Row ranges across the block boundary (rows 127..129 use the second block row).
  const uint64_t w = m.find(k[0].w);
  std::vector<float> all(130 * 136), part(5 * 136);
  ASSERT_EQ(tblob_tensor_dequantize(m.m, w, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, all.data(), all.size() * 4, nullptr),
            TBLOB_OK);
  ASSERT_EQ(tblob_tensor_dequantize(m.m, w, TBLOB_DTYPE_F32, 125, 130, part.data(), part.size() * 4, nullptr), TBLOB_OK);
  EXPECT_EQ(0, std::memcmp(part.data(), all.data() + 125 * 136, part.size() * 4));
  // The output size: 130 x 136 f32, 5 rows of bf16; a block tensor is sized like any other.
  uint64_t bytes = 0;
  ASSERT_EQ(tblob_tensor_dequant_size(m.m, w, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &bytes, nullptr), TBLOB_OK);
  EXPECT_EQ(bytes, 130u * 136u * 4u);
  ASSERT_EQ(tblob_tensor_dequant_size(m.m, w, TBLOB_DTYPE_BF16, 125, 130, &bytes, nullptr), TBLOB_OK);
  EXPECT_EQ(bytes, 5u * 136u * 2u);
  EXPECT_EQ(tblob_tensor_dequant_size(m.m, w, TBLOB_DTYPE_F32, 125, 131, &bytes, nullptr), TBLOB_E_RANGE);
  // The stored bytes stay addressable and F8_E4M3 as stored; the descriptor is exposed.
  tblob_quant_desc qd = TBLOB_QUANT_DESC_INIT;
  ASSERT_EQ(tblob_tensor_quant_desc(m.m, w, &qd, nullptr), TBLOB_OK);
  EXPECT_EQ(qd.scheme, static_cast<uint32_t>(TBLOB_QUANT_BLOCK_FP8));
  EXPECT_EQ(qd.data_bytes, 130u * 136u);
  EXPECT_EQ(qd.scales_bytes, 2u * 2u * 4u);
  // Reading it as MLX would (0x7F = 480) changes exactly the NaN codes.
  qd.special = TBLOB_SPECIAL_E4M3_MAX_FINITE;
  std::vector<float> mlx(130 * 136);
  ASSERT_EQ(tblob_quant_dequantize(&qd, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, mlx.data(), mlx.size() * 4, nullptr),
            TBLOB_OK);
  EXPECT_TRUE(std::isnan(all[0]));
  EXPECT_FALSE(std::isnan(mlx[0]));
  EXPECT_GT(mlx[0], 0.0f);
  EXPECT_LT(mlx[1], 0.0f);
  EXPECT_EQ(0, std::memcmp(mlx.data() + 2, all.data() + 2, (mlx.size() - 2) * 4));
}

TEST(CompanionsHfBlockFp8, BlockSizeFromConfig) {
  const std::string dir = data_dir() + "/hf_fp8_block64";
  Model m(dir + "/model.safetensors"), exp(dir + "/expected.safetensors");
  ASSERT_NE(m.m, nullptr);
  const char *w = "model.layers.0.self_attn.k_proj.weight";
  EXPECT_EQ(m.quant(w).group_size, 64u);
  expect_matches(m, exp, w);
  // Without the config the default 128 x 128 blocks do not fit the 3 x 2 scales.
  std::unique_ptr<Model> mem(Model::memory(read_all(dir + "/model.safetensors")));
  const tblob_quant_info q = mem->quant(w);
  EXPECT_EQ(q.group_size, 128u);
  EXPECT_EQ(q.status, TBLOB_E_QUANT_SCALE_SIZE);
  std::vector<float> out(130 * 70);
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_tensor_dequantize(mem->m, mem->find(w), TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, out.data(),
                             out.size() * 4, &d),
            TBLOB_E_QUANT_SCALE_SIZE);
  EXPECT_NE(std::strstr(d.message, "weight_scale_inv"), nullptr) << d.message;
}

// ---------------------------------------------------------------------------------------------
TEST(CompanionsOllama, InferredFromShapes) {
  Model m(data_dir() + "/ollama_inferred.safetensors");
  Model exp(data_dir() + "/expected_ollama_inferred.safetensors");
  ASSERT_NE(m.m, nullptr);
  struct {
    const char *w;
    uint32_t scheme, bits, group;
    const char *bias;
  } k[] = {{"a.weight", TBLOB_QUANT_MLX_AFFINE, 4, 32, "a.weight.bias"},
           {"b.weight", TBLOB_QUANT_MLX_AFFINE, 8, 64, "b.weight.bias"},
           {"c.weight", TBLOB_QUANT_MXFP8, 8, 32, ""},
           {"d.weight", TBLOB_QUANT_NVFP4, 4, 16, ""}};
  for (const auto &e : k) {
    SCOPED_TRACE(e.w);
    const tblob_quant_info q = m.quant(e.w);
    EXPECT_EQ(q.source, static_cast<uint32_t>(TBLOB_QUANT_SOURCE_OLLAMA));
    EXPECT_EQ(q.scheme, e.scheme);
    EXPECT_EQ(q.bits, e.bits);
    EXPECT_EQ(q.group_size, e.group);
    EXPECT_EQ(m.name(q.scale_index), std::string(e.w) + ".scale");
    EXPECT_EQ(m.name(q.bias_index), e.bias);
    expect_matches(m, exp, e.w);
  }
  // A real parameter named *.scale next to a non-U32 tensor is not a companion.
  EXPECT_EQ(m.quant("router").flags, 0u);
  EXPECT_EQ(m.quant("router.scale").flags, 0u);
}

TEST(CompanionsOllama, PerTensorMetadataAndGlobalScale) {
  Model m(data_dir() + "/ollama_per_tensor.safetensors");
  Model exp(data_dir() + "/expected_ollama_per_tensor.safetensors");
  ASSERT_NE(m.m, nullptr);
  const tblob_quant_info p = m.quant("p");  // p.quant_type int8 beats the blob's int4 g32
  EXPECT_EQ(p.bits, 8u);
  EXPECT_EQ(p.group_size, 64u);
  expect_matches(m, exp, "p");
  const tblob_quant_info g = m.quant("g");
  EXPECT_EQ(g.scheme, static_cast<uint32_t>(TBLOB_QUANT_NVFP4));
  EXPECT_EQ(g.global_scale_mode, static_cast<uint32_t>(TBLOB_GLOBAL_SCALE_MULTIPLIER));
  EXPECT_EQ(m.name(g.global_scale_index), "g.global_scale");
  EXPECT_EQ(m.quant("g.global_scale").flags, TBLOB_TENSOR_COMPANION);
  expect_matches(m, exp, "g");
}

TEST(CompanionsOllama, RunnerAliasNames) {
  Model m(data_dir() + "/ollama_aliases.safetensors");
  Model exp(data_dir() + "/expected_ollama_aliases.safetensors");
  ASSERT_NE(m.m, nullptr);
  const tblob_quant_info q = m.quant("x");
  EXPECT_EQ(q.bits, 4u);
  EXPECT_EQ(q.group_size, 32u);
  EXPECT_EQ(m.name(q.scale_index), "x_scale");
  EXPECT_EQ(m.name(q.bias_index), "x_qbias");
  expect_matches(m, exp, "x");
}

}  // namespace
