// The one digest grammar: "sha256:" + 64 lowercase hex in manifests,
// "sha256-" + 64 lowercase hex as blob file names. Used when a manifest is parsed and again
// wherever a path is built; nothing else decides what a digest is.
#include <cstring>

#include "formats/ollama/ollama.h"

namespace tblob {
namespace ollama {

bool digest_valid(const char *p, size_t n, DigestForm form) {
  if (!p || n != kDigestChars) return false;
  if (std::memcmp(p, "sha256", 6) != 0) return false;
  if (p[6] != (form == DigestForm::kManifest ? ':' : '-')) return false;
  for (size_t i = 7; i < kDigestChars; ++i) {
    const char c = p[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status check_digest(const char *p, size_t n, DigestForm form, const char *what, const Diag &diag) {
  if (digest_valid(p, n, form)) return TBLOB_OK;
  // Say what is wrong without echoing unbounded or control bytes.
  const char *why = "is not sha256:<64 lowercase hex>";
  if (form == DigestForm::kFile) why = "is not sha256-<64 lowercase hex>";
  if (n == 0) {
    why = "is empty";
  } else if (n != kDigestChars) {
    why = n < kDigestChars ? "is too short" : "is too long";
  } else if (std::memcmp(p, "sha256", 6) == 0 &&
             p[6] == (form == DigestForm::kManifest ? '-' : ':')) {
    why = form == DigestForm::kManifest ? "uses '-' (the file-name form) instead of ':'"
                                        : "uses ':' instead of '-'";
  } else {
    for (size_t i = 7; i < n; ++i)
      if (p[i] >= 'A' && p[i] <= 'F') {
        why = "has uppercase hex digits";
        break;
      }
  }
  char shown[80];
  size_t k = 0;
  for (size_t i = 0; i < n && k + 4 < sizeof(shown); ++i) {
    const unsigned char c = static_cast<unsigned char>(p[i]);
    shown[k++] = (c >= 0x20 && c < 0x7f && c != '"') ? static_cast<char>(c) : '?';
  }
  shown[k] = '\0';
  return diag.fail(TBLOB_E_OLLAMA_DIGEST, TBLOB_NO_OFFSET, -1, "%s \"%s%s\" (%zu bytes) %s", what, shown,
                   n > k ? "..." : "", n, why);
}

Status blob_file_name(const char *digest, size_t n, char out[kDigestBuf], const Diag &diag) {
  Status s = check_digest(digest, n, DigestForm::kManifest, "digest", diag);
  if (s != TBLOB_OK) return s;
  std::memcpy(out, "sha256-", 7);
  std::memcpy(out + 7, digest + 7, 64);
  out[kDigestChars] = '\0';
  // The file name is checked by the same grammar before it is used.
  return check_digest(out, kDigestChars, DigestForm::kFile, "blob file name", diag);
}

}  // namespace ollama
}  // namespace tblob
