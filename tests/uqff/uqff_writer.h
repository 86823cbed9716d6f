// Test writer for UQFF shard sets, following reference/uqff.md: safetensors shards whose
// entries are built per family (scalars 0-d, `.weight.shape` U32 vectors), written to a temp
// directory. Anything can be made malformed on purpose (raw entries, wrong shapes, gaps).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace uqt {

struct Entry {
  std::string name, dtype;
  std::vector<uint64_t> shape;
  std::string bytes;
};

inline std::string u8s(uint8_t v) { return std::string(1, static_cast<char>(v)); }
inline std::string u32s(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}
inline std::string f32s(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u32s(u);
}
inline std::string u32vec(const std::vector<uint64_t> &v) {
  std::string s;
  for (uint64_t x : v) s += u32s(static_cast<uint32_t>(x));
  return s;
}

class Shard {
 public:
  Shard &add(const std::string &name, const std::string &dtype, std::vector<uint64_t> shape, std::string bytes) {
    entries.push_back({name, dtype, std::move(shape), std::move(bytes)});
    return *this;
  }
  Shard &u8(const std::string &name, uint8_t v) { return add(name, "U8", {}, u8s(v)); }
  Shard &u32(const std::string &name, uint32_t v) { return add(name, "U32", {}, u32s(v)); }
  Shard &version(uint32_t ma = 1, uint32_t mi = 2, uint32_t pa = 0) {
    u32("uqff.version.major", ma);
    u32("uqff.version.minor", mi);
    return u32("uqff.version.patch", pa);
  }
  Shard &meta(const std::string &k, const std::string &v) {
    metadata.push_back({k, v});
    return *this;
  }
  Shard &producer() {
    meta("uqff.producer", "mistral.rs");
    return meta("uqff.version", "1.2.0");
  }
  // A GGML layer: format 0, dtype id, shape, raw blocks.
  Shard &ggml(const std::string &key, uint32_t type, std::vector<uint64_t> shape, std::string blocks) {
    u8(key + ".weight.format", 0);
    u32(key + ".weight.dtype", type);
    add(key + ".weight.shape", "U32", {shape.size()}, u32vec(shape));
    const uint64_t n = blocks.size();
    return add(key + ".weight", "U8", {n}, blocks);
  }
  std::string bytes() const {
    std::string header = "{";
    bool first = true;
    if (!metadata.empty()) {
      header += "\"__metadata__\":{";
      for (size_t i = 0; i < metadata.size(); ++i) {
        if (i) header += ",";
        header += "\"" + metadata[i].first + "\":\"" + metadata[i].second + "\"";
      }
      header += "}";
      first = false;
    }
    uint64_t off = 0;
    std::string data;
    for (const Entry &e : entries) {
      if (!first) header += ",";
      first = false;
      header += "\"" + e.name + "\":{\"dtype\":\"" + e.dtype + "\",\"shape\":[";
      for (size_t i = 0; i < e.shape.size(); ++i) header += (i ? "," : "") + std::to_string(e.shape[i]);
      header += "],\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + e.bytes.size()) + "]}";
      off += e.bytes.size();
      data += e.bytes;
    }
    header += "}";
    std::string out(8, '\0');
    for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<uint64_t>(header.size()) >> (8 * i)) & 0xFF);
    return out + header + data;
  }

  std::vector<Entry> entries;
  std::vector<std::pair<std::string, std::string>> metadata;
};

// A fresh directory under TMPDIR (or /tmp), removed by the destructor.
class TempDir {
 public:
  TempDir() {
    const char *t = std::getenv("TMPDIR");
    std::string tmpl = std::string(t && *t ? t : "/tmp") + "/uqff_test_XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data())) path = buf.data();
  }
  ~TempDir() {
    if (!path.empty()) {
      std::string cmd = "rm -rf '" + path + "'";
      if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "cannot remove %s\n", path.c_str());
    }
  }
  std::string file(const std::string &name) const { return path + "/" + name; }
  bool write(const std::string &name, const std::string &bytes) const {
    FILE *f = std::fopen(file(name).c_str(), "wb");
    if (!f) return false;
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    return std::fclose(f) == 0 && ok;
  }
  bool write(const std::string &name, const Shard &s) const { return write(name, s.bytes()); }
  std::string path;
};

}  // namespace uqt
