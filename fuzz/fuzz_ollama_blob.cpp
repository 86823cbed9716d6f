// fuzz_ollama_blob: one tensor blob of an Ollama store, opened as a store model through
// the public API (tblob_store_open_model), under the layout rules: a single "data" tensor
// renamed after its layer, component prefixes for path-style layers, the manifest's
// dtype/shape cross-check. Input format: fuzz_common.h (file + 3-byte trailer).
//
// The bytes become blobs/sha256-<hex of the bytes> in a private temporary store, with a
// manifest whose one tensor layer has the right digest and size. ctl variant bits pick
// the layer: 0 "w", 1 "data-layer" + the blob's first tensor's dtype/shape from lim bits,
// 2 "transformer/x.weight" (component), 3 the same blob listed twice (shared digest).
// Checks: known status; an injected allocation failure is TBLOB_E_OUT_OF_MEMORY; on
// success every tensor's view lies inside the blob's data region, names are unique and
// found, and a component-2 model has every name under "transformer/".
#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fuzz_common.h"
#include "tensorblob.h"

namespace {

std::string g_root;

void write_file(const std::string &path, const void *p, size_t n) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  FUZZ_ASSERT(fd >= 0);
  const uint8_t *b = static_cast<const uint8_t *>(p);
  while (n) {
    const ssize_t w = ::write(fd, b, n);
    FUZZ_ASSERT(w > 0);
    b += w;
    n -= static_cast<size_t>(w);
  }
  ::close(fd);
}

std::string hex_sha256(const void *p, size_t n) {
  unsigned char d[32];
  unsigned int len = 0;
  EVP_Digest(p, n, d, &len, EVP_sha256(), nullptr);
  static const char kHex[] = "0123456789abcdef";
  std::string o;
  for (int i = 0; i < 32; ++i) {
    o += kHex[d[i] >> 4];
    o += kHex[d[i] & 15];
  }
  return o;
}

void setup_store() {
  if (!g_root.empty()) return;
  const char *base = std::getenv("TMPDIR");
  std::string t = std::string(base && *base ? base : "/tmp") + "/fuzz-ollama-XXXXXX";
  FUZZ_ASSERT(::mkdtemp(&t[0]) != nullptr);
  g_root = t;
  for (const char *d : {"/blobs", "/manifests", "/manifests/registry.ollama.ai",
                        "/manifests/registry.ollama.ai/library", "/manifests/registry.ollama.ai/library/m"})
    ::mkdir((g_root + d).c_str(), 0755);
  static const char kConfig[] = "{}";
  write_file(g_root + "/blobs/sha256-" + hex_sha256(kConfig, 2), kConfig, 2);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup_store();
  const fuzz::Params p = fuzz::split_input(data, size);
  const std::string hex = hex_sha256(p.file, p.file_len);
  const std::string blob = g_root + "/blobs/sha256-" + hex;
  write_file(blob, p.file, p.file_len);
  std::string layer = "{\"mediaType\":\"application/vnd.ollama.image.tensor\",\"digest\":\"sha256:" + hex +
                      "\",\"size\":" + std::to_string(p.file_len);
  switch (p.variant) {
    case 1: {
      static const char *const kDtypes[] = {"BF16", "F16", "F32", "U32"};
      layer += ",\"name\":\"data-layer\",\"dtype\":\"" + std::string(kDtypes[p.lim & 3]) + "\",\"shape\":[" +
               std::to_string(p.lim >> 2) + "]}";
      break;
    }
    case 2: layer += ",\"name\":\"transformer/x.weight\"}"; break;
    case 3: layer += ",\"name\":\"w\"}," + layer + ",\"name\":\"w2\"}"; break;
    default: layer += ",\"name\":\"w\"}"; break;
  }
  const std::string manifest =
      "{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
      "\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\",\"digest\":\"sha256:" +
      hex_sha256("{}", 2) + "\",\"size\":2},\"layers\":[" + layer + "]}\n";
  write_file(g_root + "/manifests/registry.ollama.ai/library/m/latest", manifest.data(), manifest.size());

  fuzz::FailingAllocator fa(p.fail_at, p.file_len + manifest.size());
  tblob_open_options oo = fuzz::make_options(p);
  oo.allocator = fa.hook();
  tblob_store *store = nullptr;
  FUZZ_ASSERT(tblob_store_open(g_root.c_str(), nullptr, &store, nullptr) == TBLOB_OK);
  tblob_store_open_options so = TBLOB_STORE_OPEN_OPTIONS_INIT;
  so.open = &oo;
  tblob_model *m = nullptr;
  tblob_diag d = TBLOB_DIAG_INIT;
  const tblob_status s = tblob_store_open_model(store, "m", 1, &so, &m, &d);
  FUZZ_ASSERT(fuzz::is_known_status(s));
  if (fa.failed()) FUZZ_ASSERT_MSG(s == TBLOB_E_OUT_OF_MEMORY || s == TBLOB_OK, "status %d after OOM", s);
  if (s == TBLOB_OK) {
    FUZZ_ASSERT(tblob_model_format(m) == TBLOB_FORMAT_OLLAMA);
    const uint64_t n = tblob_model_tensor_count(m);
    for (uint64_t i = 0; i < n; ++i) {
      tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
      FUZZ_ASSERT(tblob_tensor_at(m, i, &t, nullptr) == TBLOB_OK);
      FUZZ_ASSERT(t.file_offset <= p.file_len && t.data_length <= p.file_len - t.file_offset);
      const void *v;
      uint64_t vl;  // the API's length type: size_t is 32 bits on 32-bit builds
      FUZZ_ASSERT(tblob_tensor_data(m, i, &v, &vl, nullptr) == TBLOB_OK && vl == t.data_length);
      if (vl) FUZZ_ASSERT(std::memcmp(v, p.file + t.file_offset, static_cast<size_t>(vl)) == 0);
      uint64_t found;
      FUZZ_ASSERT(tblob_tensor_find(m, t.name, t.name_len, &found, nullptr) == TBLOB_OK && found == i);
      if (p.variant == 2) FUZZ_ASSERT(t.name_len >= 12 && std::memcmp(t.name, "transformer/", 12) == 0);
    }
    tblob_model_close(m);
  } else {
    FUZZ_ASSERT(m == nullptr);
  }
  tblob_store_close(store);
  fa.expect_empty("ollama blob");
  ::unlink(blob.c_str());
  return 0;
}
