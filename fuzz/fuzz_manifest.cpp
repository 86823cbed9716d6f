// fuzz_manifest: Ollama manifest parsing (tblob_manifest_parse), the model-name grammar
// and the digest grammar. Input format: fuzz_common.h (file + 3-byte trailer).
//
// Per input:
//   1. parse the bytes as a manifest with the failing allocator; an injected failure must
//      come back as TBLOB_E_OUT_OF_MEMORY; on success every layer and the config must have
//      a digest that passes the one digest check, a media type, and consistent kinds;
//      the same digest never appears with two sizes or media types;
//   2. the status is one of the manifest statuses (never a crash, never an unknown status);
//   3. the bytes (first 512) as a model name: when accepted, the canonical form has four
//      parts, no part is empty, ".", ".." or starts with '.', and it re-parses to itself
//      (Ollama's FuzzName property);
//   4. the bytes as a digest in both forms: accepted exactly when the grammar holds.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "fuzz_common.h"
#include "tensorblob.h"

namespace {

bool grammar(const uint8_t *p, size_t n, char sep) {
  if (n != 71 || std::memcmp(p, "sha256", 6) != 0 || p[6] != sep) return false;
  for (size_t i = 7; i < 71; ++i)
    if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return false;
  return true;
}

void check_layer(const tblob_layer_info &li, std::map<std::string, std::pair<uint64_t, std::string>> &seen) {
  FUZZ_ASSERT(li.digest && li.digest_len == 71);
  FUZZ_ASSERT(tblob_ollama_digest_check(li.digest, li.digest_len, 0, nullptr) == TBLOB_OK);
  FUZZ_ASSERT(li.media_type != nullptr);
  FUZZ_ASSERT(li.kind >= TBLOB_LAYER_TENSOR && li.kind <= TBLOB_LAYER_OTHER);
  FUZZ_ASSERT(li.size <= static_cast<uint64_t>(INT64_MAX));
  FUZZ_ASSERT(li.name_len == 0 || li.name != nullptr);
  FUZZ_ASSERT(li.name_len == 0 || std::memchr(li.name, 0, li.name_len) == nullptr);
  if (li.has_shape && li.rank) FUZZ_ASSERT(li.shape != nullptr);
  fuzz::consume(fuzz::touch(li.media_type, li.media_type_len) + fuzz::touch(li.name, li.name_len));
  const std::string d(li.digest, li.digest_len);
  const std::string mt(li.media_type, li.media_type_len);
  auto it = seen.find(d);
  if (it == seen.end()) {
    seen[d] = {li.size, mt};
  } else {
    FUZZ_ASSERT_MSG(it->second.first == li.size && it->second.second == mt, "digest %s listed twice inconsistently",
                    d.c_str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fuzz::Params p = fuzz::split_input(data, size);
  const fuzz::ExactCopy file(p.file, p.file_len);
  {
    fuzz::FailingAllocator fa(p.fail_at, file.len);
    tblob_store_options o = TBLOB_STORE_OPTIONS_INIT;
    o.allocator = fa.hook();
    if (p.limits == 2) o.max_manifest_bytes = uint64_t{p.lim} * 16u;
    tblob_manifest *m = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    const tblob_status s = tblob_manifest_parse(file.ptr, file.len, &o, &m, &d);
    FUZZ_ASSERT(fuzz::is_known_status(s));
    FUZZ_ASSERT(d.status == s);
    FUZZ_ASSERT(std::memchr(d.message, 0, sizeof(d.message)) != nullptr);
    if (fa.failed()) FUZZ_ASSERT_MSG(s == TBLOB_E_OUT_OF_MEMORY || s == TBLOB_OK, "status %d after OOM", s);
    if (s != TBLOB_OK) {
      FUZZ_ASSERT(m == nullptr);
      FUZZ_ASSERT(s == TBLOB_E_OUT_OF_MEMORY || (s <= -100 && s >= -139));
    } else {
      FUZZ_ASSERT(m != nullptr);
      std::map<std::string, std::pair<uint64_t, std::string>> seen;
      tblob_layer_info li = TBLOB_LAYER_INFO_INIT;
      FUZZ_ASSERT(tblob_manifest_layer_at(m, TBLOB_LAYER_CONFIG_INDEX, &li, nullptr) == TBLOB_OK);
      FUZZ_ASSERT(li.kind == TBLOB_LAYER_CONFIG);
      check_layer(li, seen);
      const uint64_t n = tblob_manifest_layer_count(m);
      for (uint64_t i = 0; i < n; ++i) {
        tblob_layer_info l = TBLOB_LAYER_INFO_INIT;
        FUZZ_ASSERT(tblob_manifest_layer_at(m, i, &l, nullptr) == TBLOB_OK);
        check_layer(l, seen);
      }
      tblob_layer_info past = TBLOB_LAYER_INFO_INIT;
      FUZZ_ASSERT(tblob_manifest_layer_at(m, n, &past, nullptr) == TBLOB_E_RANGE);
    }
    tblob_manifest_close(m);
    fa.expect_empty("manifest");
  }
  // Names.
  const size_t nn = file.len < 512 ? file.len : 512;
  char canon[1024];
  size_t cl = 0;
  if (tblob_ollama_name_canonical(reinterpret_cast<const char *>(file.ptr), nn, canon, sizeof(canon), &cl, nullptr) ==
      TBLOB_OK) {
    FUZZ_ASSERT(cl < sizeof(canon) && canon[cl] == '\0');
    const std::string c(canon, cl);
    const size_t colon = c.rfind(':');
    FUZZ_ASSERT(colon != std::string::npos);
    int parts = 0;
    size_t start = 0;
    const std::string path = c.substr(0, colon) + "/" + c.substr(colon + 1);
    for (size_t i = 0; i <= path.size(); ++i) {
      if (i == path.size() || path[i] == '/') {
        const std::string part = path.substr(start, i - start);
        FUZZ_ASSERT(!part.empty() && part[0] != '.' && part != "..");
        FUZZ_ASSERT(part.find('\\') == std::string::npos && part.find('\0') == std::string::npos);
        ++parts;
        start = i + 1;
      }
    }
    FUZZ_ASSERT(parts == 4);
    char again[1024];
    size_t al = 0;
    FUZZ_ASSERT(tblob_ollama_name_canonical(canon, cl, again, sizeof(again), &al, nullptr) == TBLOB_OK);
    FUZZ_ASSERT(al == cl && std::memcmp(again, canon, cl) == 0);
  }
  // Digests.
  const char *dp = reinterpret_cast<const char *>(file.ptr);
  FUZZ_ASSERT((tblob_ollama_digest_check(dp, file.len, 0, nullptr) == TBLOB_OK) == grammar(file.ptr, file.len, ':'));
  FUZZ_ASSERT((tblob_ollama_digest_check(dp, file.len, 1, nullptr) == TBLOB_OK) == grammar(file.ptr, file.len, '-'));
  return 0;
}
