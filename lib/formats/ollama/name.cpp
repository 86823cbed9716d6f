// Model names: [host/][namespace/]model[:tag], one grammar for every part (Ollama's
// types/model/name.go): host 1-350 bytes, other parts 1-80; first byte [A-Za-z0-9_];
// later bytes [A-Za-z0-9_-] plus '.' (not in the namespace) and ':' (host only).
// The grammar alone keeps a part from being "", ".", "..", absolute or a path.
#include <cstring>

#include "formats/ollama/ollama.h"

namespace tblob {
namespace ollama {

namespace {

constexpr char kDefaultHost[] = "registry.ollama.ai";
constexpr char kDefaultNamespace[] = "library";
constexpr char kDefaultTag[] = "latest";

bool alnum_(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

const char *part_label(NamePart p) {
  switch (p) {
    case NamePart::kHost: return "host";
    case NamePart::kNamespace: return "namespace";
    case NamePart::kModel: return "model";
    default: return "tag";
  }
}

void put(char *dst, size_t *dst_len, const char *p, size_t n) {
  std::memcpy(dst, p, n);
  dst[n] = '\0';
  *dst_len = n;
}

}  // namespace

bool name_part_valid(NamePart part, const char *p, size_t n) {
  const size_t max = part == NamePart::kHost ? 350 : 80;
  if (n == 0 || n > max) return false;
  if (!alnum_(p[0])) return false;
  for (size_t i = 1; i < n; ++i) {
    const char c = p[i];
    if (alnum_(c) || c == '-') continue;
    if (c == '.' && part != NamePart::kNamespace) continue;
    if (c == ':' && part == NamePart::kHost) continue;
    return false;
  }
  return true;
}

Status parse_name(const char *p, size_t n, ModelName *out, const Diag &diag) {
  std::memset(out, 0, sizeof(*out));
  if (!p || n == 0) return diag.fail(TBLOB_E_OLLAMA_NAME, TBLOB_NO_OFFSET, -1, "model name is empty");
  if (n > 350 + 80 * 3 + 3)
    return diag.fail(TBLOB_E_OLLAMA_NAME, TBLOB_NO_OFFSET, -1, "model name is %zu bytes long", n);
  // The tag follows the last ':' after the last '/' (a host may carry a port).
  size_t last_slash = n;
  for (size_t i = n; i > 0; --i)
    if (p[i - 1] == '/') {
      last_slash = i - 1;
      break;
    }
  const size_t path_start = last_slash == n ? 0 : last_slash + 1;
  size_t colon = n;
  for (size_t i = n; i > path_start; --i)
    if (p[i - 1] == ':') {
      colon = i - 1;
      break;
    }
  const char *tag = kDefaultTag;
  size_t tag_len = sizeof(kDefaultTag) - 1;
  size_t path_len = n;
  if (colon != n) {
    tag = p + colon + 1;
    tag_len = n - colon - 1;
    path_len = colon;
  }
  // Split the rest on '/': 1, 2 or 3 parts.
  const char *parts[3];
  size_t lens[3];
  size_t count = 0, start = 0;
  for (size_t i = 0; i <= path_len; ++i) {
    if (i == path_len || p[i] == '/') {
      if (count == 3)
        return diag.fail(TBLOB_E_OLLAMA_NAME, TBLOB_NO_OFFSET, -1,
                         "model name has more than three '/'-separated parts");
      parts[count] = p + start;
      lens[count] = i - start;
      ++count;
      start = i + 1;
    }
  }
  const char *host = kDefaultHost, *ns = kDefaultNamespace;
  size_t host_len = sizeof(kDefaultHost) - 1, ns_len = sizeof(kDefaultNamespace) - 1;
  const char *model = parts[count - 1];
  size_t model_len = lens[count - 1];
  if (count >= 2) {
    ns = parts[count - 2];
    ns_len = lens[count - 2];
  }
  if (count == 3) {
    host = parts[0];
    host_len = lens[0];
  }
  struct {
    NamePart part;
    const char *p;
    size_t n;
  } checks[4] = {{NamePart::kHost, host, host_len},
                 {NamePart::kNamespace, ns, ns_len},
                 {NamePart::kModel, model, model_len},
                 {NamePart::kTag, tag, tag_len}};
  for (const auto &c : checks) {
    if (!name_part_valid(c.part, c.p, c.n)) {
      char shown[100];
      size_t k = 0;
      for (size_t i = 0; i < c.n && k + 1 < sizeof(shown) && k < 96; ++i) {
        const unsigned char ch = static_cast<unsigned char>(c.p[i]);
        shown[k++] = (ch >= 0x20 && ch < 0x7f) ? static_cast<char>(ch) : '?';
      }
      shown[k] = '\0';
      const size_t max = c.part == NamePart::kHost ? 350 : 80;
      return diag.fail(TBLOB_E_OLLAMA_NAME, TBLOB_NO_OFFSET, -1,
                       "model name: %s \"%s%s\" is not valid (%s)", part_label(c.part), shown,
                       c.n > k ? "..." : "",
                       c.n == 0 ? "empty" : c.n > max ? "too long" : "bad character or first character");
    }
  }
  put(out->host, &out->host_len, host, host_len);
  put(out->ns, &out->ns_len, ns, ns_len);
  put(out->model, &out->model_len, model, model_len);
  put(out->tag, &out->tag_len, tag, tag_len);
  return TBLOB_OK;
}

namespace {
// Appends `len` bytes of `part` then `sep` (when not '\0') at buf + *k.
void put_part(char *buf, size_t *k, const char *part, size_t len, char sep) {
  std::memcpy(buf + *k, part, len);
  *k += len;
  if (sep != '\0') buf[(*k)++] = sep;
}

// host/namespace/model:tag; `omit_defaults` drops the default host, and the default namespace
// when the host is also the default (the form `ollama list` shows).
size_t format_name(const ModelName &n, char *buf, bool omit_defaults) {
  const bool default_host = omit_defaults && n.host_len == sizeof(kDefaultHost) - 1 &&
                            std::memcmp(n.host, kDefaultHost, n.host_len) == 0;
  const bool default_ns = omit_defaults && n.ns_len == sizeof(kDefaultNamespace) - 1 &&
                          std::memcmp(n.ns, kDefaultNamespace, n.ns_len) == 0;
  size_t k = 0;
  if (!default_host) put_part(buf, &k, n.host, n.host_len, '/');
  if (!default_host || !default_ns) put_part(buf, &k, n.ns, n.ns_len, '/');
  put_part(buf, &k, n.model, n.model_len, ':');
  put_part(buf, &k, n.tag, n.tag_len, '\0');
  buf[k] = '\0';
  return k;
}
}  // namespace

size_t format_full_name(const ModelName &n, char *buf) { return format_name(n, buf, false); }

size_t format_short_name(const ModelName &n, char *buf) { return format_name(n, buf, true); }

}  // namespace ollama
}  // namespace tblob
