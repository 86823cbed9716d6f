// Test writer for Ollama stores: reproduces, byte for byte, the blob headers of the two
// writers Ollama has used (reference/ollama_mlx.md 3.1) and writes manifests and blobs
// into a store directory, so every historical layout can be opened without Ollama.
//   Go writer  (x/safetensors/extractor.go): sorted keys; per tensor dtype, shape,
//              data_offsets; __metadata__ only when non-empty; spaces to a multiple of 8;
//              data in tensor-list order.
//   MLX writer (mlx/io/safetensors.cpp): sorted keys; per tensor data_offsets, dtype,
//              shape; __metadata__ always, null when empty; no padding; data in an
//              order of its own (std::unordered_map iteration), given here explicitly.
#pragma once
#include <openssl/evp.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace tw {

struct T {
  std::string name;
  std::string dtype;
  std::vector<uint64_t> shape;
  std::string data;  // the bytes
};

inline std::string json_str(const std::string &s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof(b), "\\u%04x", c);
      o += b;
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

inline std::string shape_json(const std::vector<uint64_t> &s) {
  std::string o = "[";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? "," : "") + std::to_string(s[i]);
  return o + "]";
}

inline std::string meta_json(const std::map<std::string, std::string> &m) {
  std::string o = "{";
  bool first = true;
  for (const auto &kv : m) {
    o += (first ? "" : ",") + json_str(kv.first) + ":" + json_str(kv.second);
    first = false;
  }
  return o + "}";
}

inline std::string le64(uint64_t v) {
  std::string o(8, '\0');
  for (int i = 0; i < 8; ++i) o[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return o;
}

// Header JSON only (no length prefix), Go style.
inline std::string go_header(const std::vector<T> &ts, const std::map<std::string, std::string> &meta = {}) {
  std::map<std::string, std::string> entries;  // sorted by key, byte-wise
  uint64_t at = 0;
  for (const T &t : ts) {
    entries[t.name] = "{\"dtype\":" + json_str(t.dtype) + ",\"shape\":" + shape_json(t.shape) +
                      ",\"data_offsets\":[" + std::to_string(at) + "," + std::to_string(at + t.data.size()) + "]}";
    at += t.data.size();
  }
  if (!meta.empty()) entries["__metadata__"] = meta_json(meta);
  std::string h = "{";
  bool first = true;
  for (const auto &kv : entries) {
    h += (first ? "" : ",") + json_str(kv.first) + ":" + kv.second;
    first = false;
  }
  h += "}";
  while (h.size() % 8) h += ' ';
  return h;
}

inline std::string go_blob(const std::vector<T> &ts, const std::map<std::string, std::string> &meta = {}) {
  const std::string h = go_header(ts, meta);
  std::string o = le64(h.size()) + h;
  for (const T &t : ts) o += t.data;
  return o;
}

// MLX style. order: indices of ts in data order (default: reverse, to be unlike key order).
// meta_null: write "__metadata__":null.
inline std::string mlx_header(const std::vector<T> &ts, const std::map<std::string, std::string> &meta,
                              const std::vector<size_t> &order) {
  std::vector<uint64_t> begin(ts.size());
  uint64_t at = 0;
  for (size_t k : order) {
    begin[k] = at;
    at += ts[k].data.size();
  }
  std::map<std::string, std::string> entries;
  for (size_t i = 0; i < ts.size(); ++i)
    entries[ts[i].name] = "{\"data_offsets\":[" + std::to_string(begin[i]) + "," +
                          std::to_string(begin[i] + ts[i].data.size()) + "],\"dtype\":" + json_str(ts[i].dtype) +
                          ",\"shape\":" + shape_json(ts[i].shape) + "}";
  entries["__metadata__"] = meta.empty() ? "null" : meta_json(meta);
  std::string h = "{";
  bool first = true;
  for (const auto &kv : entries) {
    h += (first ? "" : ",") + json_str(kv.first) + ":" + kv.second;
    first = false;
  }
  return h + "}";
}

inline std::string mlx_blob(const std::vector<T> &ts, const std::map<std::string, std::string> &meta = {},
                            std::vector<size_t> order = {}) {
  if (order.empty())
    for (size_t i = ts.size(); i > 0; --i) order.push_back(i - 1);
  const std::string h = mlx_header(ts, meta, order);
  std::string o = le64(h.size()) + h;
  for (size_t k : order) o += ts[k].data;
  return o;
}

inline std::string sha256_hex(const std::string &s) {
  unsigned char d[32];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), d, &n, EVP_sha256(), nullptr);
  static const char kHex[] = "0123456789abcdef";
  std::string o;
  for (int i = 0; i < 32; ++i) {
    o += kHex[d[i] >> 4];
    o += kHex[d[i] & 15];
  }
  return o;
}

inline void write_file(const std::string &path, const std::string &bytes) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) return;
  std::fwrite(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
}

inline std::string read_file(const std::string &path) {
  std::string o;
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return o;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) o.append(buf, n);
  std::fclose(f);
  return o;
}

inline void mkdirs(const std::string &path) {
  std::string cur;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!cur.empty()) ::mkdir(cur.c_str(), 0755);
    }
    if (i < path.size()) cur += path[i];
  }
}

// A bytes pattern of n bytes (deterministic).
inline std::string pattern(size_t n, unsigned seed) {
  std::string o(n, '\0');
  uint32_t x = seed * 2654435761u + 12345u;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    o[i] = static_cast<char>(x >> 24);
  }
  return o;
}

struct Layer {
  std::string media_type = "application/vnd.ollama.image.tensor";
  std::string digest;  // "sha256:<hex>"
  uint64_t size = 0;
  std::string name;
  std::string extra;   // raw JSON appended inside the object (e.g. ,"dtype":"BF16")
};

// A store under construction.
class Store {
 public:
  explicit Store(std::string root) : root_(std::move(root)) {
    mkdirs(root_ + "/blobs");
    mkdirs(root_ + "/manifests");
  }
  const std::string &root() const { return root_; }

  // Writes a blob and returns its layer.
  Layer blob(const std::string &bytes, const std::string &name = "",
             const std::string &media = "application/vnd.ollama.image.tensor") {
    Layer l;
    l.media_type = media;
    const std::string hex = sha256_hex(bytes);
    l.digest = "sha256:" + hex;
    l.size = bytes.size();
    l.name = name;
    write_file(root_ + "/blobs/sha256-" + hex, bytes);
    return l;
  }

  static std::string layer_json(const Layer &l) {
    std::string o = "{\"mediaType\":" + json_str(l.media_type) + ",\"digest\":" + json_str(l.digest) +
                    ",\"size\":" + std::to_string(l.size);
    if (!l.name.empty()) o += ",\"name\":" + json_str(l.name);
    return o + l.extra + "}";
  }

  // Go's json.Encoder form: compact + "\n". config: a ConfigV2 JSON blob.
  static std::string manifest_json(const Layer &config, const std::vector<Layer> &layers) {
    std::string o = "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
                    "\"config\":" + layer_json(config) + ",\"layers\":[";
    for (size_t i = 0; i < layers.size(); ++i) o += (i ? "," : "") + layer_json(layers[i]);
    return o + "]}\n";
  }

  Layer config(const std::string &caps = "completion") {
    return blob("{\"model_format\":\"safetensors\",\"model_family\":\"\",\"model_families\":null,\"model_type\":\"\","
                "\"file_type\":\"\",\"requires\":\"0.19.0\",\"capabilities\":[\"" + caps +
                    "\"],\"architecture\":\"\",\"os\":\"\"}\n",
                "", "application/vnd.docker.container.image.v1+json");
  }

  // manifests/<host>/<ns>/<model>/<tag>
  void manifest_raw(const std::string &model, const std::string &bytes, const std::string &tag = "latest",
                    const std::string &host = "registry.ollama.ai", const std::string &ns = "library") {
    const std::string dir = root_ + "/manifests/" + host + "/" + ns + "/" + model;
    mkdirs(dir);
    write_file(dir + "/" + tag, bytes);
  }
  void manifest(const std::string &model, const std::vector<Layer> &layers, const std::string &tag = "latest") {
    manifest_raw(model, manifest_json(config(), layers), tag);
  }

 private:
  std::string root_;
};

}  // namespace tw
