// Invalid quantization settings are errors of the tensor they describe, never replaced by
// shape inference: per-tensor and blob-wide __metadata__ (Ollama blobs, memory and store) and
// config.json (mlx-community). Every model here has the shapes of affine int4 group 32, which
// inference would pick, so each test fails if inference stands in for the bad value. The
// model still opens; tblob_tensor_quant_info and tblob_tensor_dequantize report the status, and
// the message names the tensor, the key and the value.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "tensorblob.h"
#if QS_HAVE_OLLAMA
#include "../ollama/store_writer.h"
#endif

namespace {

struct Tn {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  std::string data;
};
using Meta = std::vector<std::pair<std::string, std::string>>;

// A safetensors file: 8-byte little-endian header length, JSON header padded with spaces to
// a multiple of 8, then the tensors' bytes in order.
std::string st_file(const std::vector<Tn> &ts, const Meta &meta) {
  std::string h = "{", data;
  if (!meta.empty()) {
    h += "\"__metadata__\":{";
    for (size_t i = 0; i < meta.size(); ++i)
      h += (i ? "," : "") + ("\"" + meta[i].first + "\":\"" + meta[i].second + "\"");
    h += "}";
  }
  for (size_t i = 0; i < ts.size(); ++i) {
    const Tn &t = ts[i];
    h += (i || !meta.empty() ? "," : "") + ("\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[");
    for (size_t k = 0; k < t.shape.size(); ++k) h += (k ? "," : "") + std::to_string(t.shape[k]);
    h += "],\"data_offsets\":[" + std::to_string(data.size()) + "," + std::to_string(data.size() + t.data.size()) + "]}";
    data += t.data;
  }
  h += "}";
  while (h.size() % 8) h += ' ';
  std::string n(8, '\0');
  for (int i = 0; i < 8; ++i) n[i] = static_cast<char>((h.size() >> (8 * i)) & 0xFF);
  return n + h + data;
}

std::string u32s(uint32_t v, size_t n) {
  std::string o;
  for (size_t i = 0; i < n; ++i)
    for (int b = 0; b < 4; ++b) o += static_cast<char>((v >> (8 * b)) & 0xFF);
  return o;
}
std::string bf16s(uint16_t v, size_t n) {
  std::string o;
  for (size_t i = 0; i < n; ++i) o += std::string{static_cast<char>(v & 0xFF), static_cast<char>(v >> 8)};
  return o;
}

// Two rows of four U32 words, each 0x76543210: 4-bit codes 0..7 (low nibble first) over 32
// columns; one scale (1.0) and one bias (0.0) per row: int4 group 32 gives 0, 1, ..., 7, 0, ...
std::vector<Tn> packed(const std::string &w, const std::string &scale, const std::string &bias) {
  return {Tn{w, "U32", {2, 4}, u32s(0x76543210u, 8)}, Tn{scale, "BF16", {2, 1}, bf16s(0x3F80, 2)},
          Tn{bias, "BF16", {2, 1}, bf16s(0x0000, 2)}};
}
std::vector<Tn> ollama_tensors() { return packed("p", "p.scale", "p.bias"); }

struct Opened {
  tblob_model *m = nullptr;
  std::string mem;
  ~Opened() { tblob_model_close(m); }
};

void open_memory(Opened *o, const Meta &meta) {
  o->mem = st_file(ollama_tensors(), meta);
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_model_open_memory(o->mem.data(), o->mem.size(), nullptr, &o->m, &d), TBLOB_OK) << d.message;
}

uint64_t find(tblob_model *m, const std::string &name) {
  uint64_t i = UINT64_MAX;
  EXPECT_EQ(tblob_tensor_find(m, name.data(), name.size(), &i, nullptr), TBLOB_OK) << name;
  return i;
}

// quant_info reports `want` for the weight; dequantizing returns it with a message naming the
// weight, the key and the value.
void expect_refused(tblob_model *m, const std::string &weight, tblob_status want, const std::string &key,
                    const std::string &value) {
  ASSERT_NE(m, nullptr);
  const uint64_t i = find(m, weight);
  tblob_quant_info q = TBLOB_QUANT_INFO_INIT;
  ASSERT_EQ(tblob_tensor_quant_info(m, i, &q, nullptr), TBLOB_OK);
  EXPECT_EQ(q.flags, TBLOB_TENSOR_QUANTIZED);
  EXPECT_EQ(q.status, want);
  std::vector<float> out(2 * 32);
  tblob_diag d = TBLOB_DIAG_INIT;
  EXPECT_EQ(tblob_tensor_dequantize(m, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, out.data(), out.size() * 4, &d), want);
  EXPECT_EQ(d.status, want);
  const std::string msg = d.message;
  EXPECT_NE(msg.find("tensor \"" + weight + "\""), std::string::npos) << msg;
  EXPECT_NE(msg.find(key), std::string::npos) << msg;
  EXPECT_NE(msg.find(value), std::string::npos) << msg;
}

// The weight decodes as int4 group 32: 0..7 repeated (hand-checked from the packing above).
void expect_int4_g32(tblob_model *m, const std::string &weight) {
  ASSERT_NE(m, nullptr);
  const uint64_t i = find(m, weight);
  tblob_quant_info q = TBLOB_QUANT_INFO_INIT;
  ASSERT_EQ(tblob_tensor_quant_info(m, i, &q, nullptr), TBLOB_OK);
  EXPECT_EQ(q.status, TBLOB_OK);
  EXPECT_EQ(q.bits, 4u);
  EXPECT_EQ(q.group_size, 32u);
  std::vector<float> out(2 * 32);
  tblob_diag d = TBLOB_DIAG_INIT;
  ASSERT_EQ(tblob_tensor_dequantize(m, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, out.data(), out.size() * 4, &d), TBLOB_OK)
      << d.message;
  for (size_t k = 0; k < out.size(); ++k) EXPECT_EQ(out[k], static_cast<float>(k % 8)) << k;
}

// ---- Ollama blobs opened from memory ---------------------------------------------------------

TEST(QuantSettingsOllama, AbsentKeysStillInferred) {
  Opened o;
  open_memory(&o, {});
  expect_int4_g32(o.m, "p");
}

TEST(QuantSettingsOllama, ValidPerTensorKeysUsed) {
  Opened o;
  open_memory(&o, {{"p.quant_type", "int4"}, {"p.group_size", "32"}});
  expect_int4_g32(o.m, "p");
}

TEST(QuantSettingsOllama, PerTensorGroupSizeZero) {
  Opened o;
  open_memory(&o, {{"p.quant_type", "int4"}, {"p.group_size", "0"}});
  expect_refused(o.m, "p", TBLOB_E_QUANT_GROUP_SIZE, "\"p.group_size\"", "\"0\"");
}

TEST(QuantSettingsOllama, PerTensorGroupSizeZeroWithoutType) {
  Opened o;
  open_memory(&o, {{"p.group_size", "0"}});
  expect_refused(o.m, "p", TBLOB_E_QUANT_GROUP_SIZE, "\"p.group_size\"", "\"0\"");
}

TEST(QuantSettingsOllama, PerTensorGroupSizeBeyond32Bits) {
  Opened o;
  open_memory(&o, {{"p.group_size", "4294967328"}});  // 2^32 + 32
  expect_refused(o.m, "p", TBLOB_E_QUANT_GROUP_SIZE, "\"p.group_size\"", "\"4294967328\"");
}

TEST(QuantSettingsOllama, PerTensorGroupSizeEmpty) {
  Opened o;
  open_memory(&o, {{"p.quant_type", "int4"}, {"p.group_size", ""}});
  expect_refused(o.m, "p", TBLOB_E_QUANT_GROUP_SIZE, "\"p.group_size\"", "= \"\"");
}

TEST(QuantSettingsOllama, PerTensorQuantTypeUnknown) {
  Opened o;
  open_memory(&o, {{"p.quant_type", "fp3"}});
  expect_refused(o.m, "p", TBLOB_E_QUANT_SCHEME, "\"p.quant_type\"", "\"fp3\"");
}

TEST(QuantSettingsOllama, PerTensorQuantTypeEmpty) {
  Opened o;
  open_memory(&o, {{"p.quant_type", ""}, {"p.group_size", "32"}});
  expect_refused(o.m, "p", TBLOB_E_QUANT_SCHEME, "\"p.quant_type\"", "= \"\"");
}

TEST(QuantSettingsOllama, PerTensorQuantTypeUnsupportedWidth) {
  for (const char *v : {"int7", "int16", "int0"}) {
    SCOPED_TRACE(v);
    Opened o;
    open_memory(&o, {{"p.quant_type", v}, {"p.group_size", "32"}});
    expect_refused(o.m, "p", TBLOB_E_QUANT_SCHEME, "\"p.quant_type\"", std::string("\"") + v + "\"");
  }
}

TEST(QuantSettingsOllama, BlobWideGroupSizeZero) {
  Opened o;
  open_memory(&o, {{"quant_type", "int4"}, {"group_size", "0"}});
  expect_refused(o.m, "p", TBLOB_E_QUANT_GROUP_SIZE, "\"group_size\"", "\"0\"");
}

TEST(QuantSettingsOllama, BlobWideQuantTypeUnknown) {
  Opened o;
  open_memory(&o, {{"quant_type", "q3_k"}, {"group_size", "32"}});
  expect_refused(o.m, "p", TBLOB_E_QUANT_SCHEME, "\"quant_type\"", "\"q3_k\"");
}

// ---- Ollama store blobs (per-blob metadata) --------------------------------------------------
#if QS_HAVE_OLLAMA
struct StoreModel {
  std::string dir;
  tblob_model *m = nullptr;
  explicit StoreModel(const Meta &meta) {
    const char *t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/tblob_qs_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char *dd = mkdtemp(buf.data());
    EXPECT_NE(dd, nullptr);
    if (!dd) return;
    dir = dd;
    tw::Store st(dir + "/store");
    std::vector<tw::T> ts;
    for (const Tn &x : ollama_tensors()) ts.push_back(tw::T{x.name, x.dtype, x.shape, x.data});
    std::map<std::string, std::string> mm(meta.begin(), meta.end());
    // A second blob whose valid metadata must not leak into the first.
    std::vector<tw::T> other;
    for (const Tn &x : packed("q", "q.scale", "q.bias")) other.push_back(tw::T{x.name, x.dtype, x.shape, x.data});
    st.manifest("m", {st.blob(tw::go_blob(ts, mm), "p"),
                      st.blob(tw::go_blob(other, {{"quant_type", "int4"}, {"group_size", "32"}}), "q")});
    tblob_store *s = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_store_open((dir + "/store").c_str(), nullptr, &s, &d), TBLOB_OK) << d.message;
    if (!s) return;
    EXPECT_EQ(tblob_store_open_model(s, "m", 1, nullptr, &m, &d), TBLOB_OK) << d.message;
    tblob_store_close(s);
  }
  ~StoreModel() {
    tblob_model_close(m);
    if (!dir.empty()) std::system(("rm -rf '" + dir + "'").c_str());
  }
};

TEST(QuantSettingsOllamaStore, PerTensorGroupSizeZero) {
  StoreModel s(Meta{{"p.quant_type", "int4"}, {"p.group_size", "0"}});
  expect_refused(s.m, "p", TBLOB_E_QUANT_GROUP_SIZE, "\"p.group_size\"", "\"0\"");
  expect_int4_g32(s.m, "q");
}

TEST(QuantSettingsOllamaStore, PerTensorQuantTypeUnknown) {
  StoreModel s(Meta{{"p.quant_type", "int9"}});
  expect_refused(s.m, "p", TBLOB_E_QUANT_SCHEME, "\"p.quant_type\"", "\"int9\"");
  expect_int4_g32(s.m, "q");
}

TEST(QuantSettingsOllamaStore, BlobWideGroupSizeZero) {
  StoreModel s(Meta{{"quant_type", "int4"}, {"group_size", "0"}});
  expect_refused(s.m, "p", TBLOB_E_QUANT_GROUP_SIZE, "\"group_size\"", "\"0\"");
  expect_int4_g32(s.m, "q");
}
#endif

// ---- mlx-community: config.json beside the file ----------------------------------------------

struct ConfigModel {
  std::string dir;
  tblob_model *m = nullptr;
  explicit ConfigModel(const std::string &config) {
    const char *t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/tblob_qs_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char *dd = mkdtemp(buf.data());
    EXPECT_NE(dd, nullptr);
    if (!dd) return;
    dir = dd;
    write(dir + "/model.safetensors", st_file(packed("l.weight", "l.scales", "l.biases"), {}));
    write(dir + "/config.json", config);
    tblob_diag d = TBLOB_DIAG_INIT;
    EXPECT_EQ(tblob_model_open((dir + "/model.safetensors").c_str(), nullptr, &m, &d), TBLOB_OK) << d.message;
  }
  ~ConfigModel() {
    tblob_model_close(m);
    std::remove((dir + "/model.safetensors").c_str());
    std::remove((dir + "/config.json").c_str());
    rmdir(dir.c_str());
  }
  static void write(const std::string &path, const std::string &bytes) {
    std::ofstream f(path, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
};

TEST(QuantSettingsMlxConfig, ValidConfigUsed) {
  ConfigModel c("{\"quantization\": {\"group_size\": 32, \"bits\": 4}}");
  expect_int4_g32(c.m, "l.weight");
}

TEST(QuantSettingsMlxConfig, AbsentGroupSizeStillInferred) {
  ConfigModel c("{\"quantization\": {\"bits\": 4}}");
  expect_int4_g32(c.m, "l.weight");
}

TEST(QuantSettingsMlxConfig, GroupSizeZero) {
  ConfigModel c("{\"quantization\": {\"group_size\": 0, \"bits\": 4}}");
  expect_refused(c.m, "l.weight", TBLOB_E_QUANT_GROUP_SIZE, "quantization.group_size", "= 0 ");
}

TEST(QuantSettingsMlxConfig, GroupSizeNull) {
  ConfigModel c("{\"quantization\": {\"group_size\": null, \"bits\": 4}}");
  expect_refused(c.m, "l.weight", TBLOB_E_QUANT_GROUP_SIZE, "quantization.group_size", "= null");
}

TEST(QuantSettingsMlxConfig, GroupSizeBeyond32Bits) {
  ConfigModel c("{\"quantization_config\": {\"group_size\": 4294967328, \"bits\": 4}}");
  expect_refused(c.m, "l.weight", TBLOB_E_QUANT_GROUP_SIZE, "quantization_config.group_size", "4294967328");
}

TEST(QuantSettingsMlxConfig, BitsBeyond32Bits) {
  ConfigModel c("{\"quantization\": {\"group_size\": 32, \"bits\": 4294967300}}");
  expect_refused(c.m, "l.weight", TBLOB_E_QUANT_SCHEME, "quantization.bits", "4294967300");
}

TEST(QuantSettingsMlxConfig, ModuleOverrideGroupSizeZero) {
  ConfigModel c("{\"quantization\": {\"group_size\": 32, \"bits\": 4, \"l\": {\"group_size\": 0}}}");
  expect_refused(c.m, "l.weight", TBLOB_E_QUANT_GROUP_SIZE, "quantization.l.group_size", "= 0 ");
}

TEST(QuantSettingsMlxConfig, UnknownModeWithoutBits) {
  ConfigModel c("{\"quantization\": {\"mode\": \"q3_k\"}}");
  expect_refused(c.m, "l.weight", TBLOB_E_QUANT_SCHEME, "mode", "\"q3_k\"");
}

}  // namespace
