// http:// and https:// files for the CLI (see http_source.h). One curl easy handle per source,
// reused for every range request (curl keeps the connection open between them). Each answer
// is checked before its body is taken: a 206 whose Content-Range starts where asked and ends
// no later than asked, with the total the first answer gave; anything else is refused without
// reading the body (a server that ignores Range and sends 200 with the whole file is never
// downloaded).
#include "http_source.h"

#include <strings.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>

#include "cli.h"
#include "commands.h"
#include "json_writer.h"

#if TBLOB_HAVE_CURL
#include <curl/curl.h>
#endif

namespace tbcli {

namespace {

std::vector<std::string> g_headers;
std::string g_ca_file;  // empty: libcurl's default CA store
std::atomic<uint64_t> g_bytes{0}, g_requests{0};
std::mutex g_error_mu;
std::string g_last_error;

[[maybe_unused]] void set_last_error(std::string s) {  // unused without libcurl
  std::lock_guard<std::mutex> lock(g_error_mu);
  g_last_error = std::move(s);
}

// The message and status of a failed open, in the caller's diag.
tblob_status fail_open(tblob_diag *diag, tblob_status s, const std::string &msg) {
  if (diag) {
    diag->status = s;
    diag->offset = TBLOB_NO_OFFSET;
    diag->tensor_index = -1;
    std::snprintf(diag->message, sizeof(diag->message), "%s", msg.c_str());
  }
  return s;
}

}  // namespace

bool is_url(const char *p) { return strncasecmp(p, "http://", 7) == 0 || strncasecmp(p, "https://", 8) == 0; }

void http_set_headers(const std::vector<const char *> &headers) {
  g_headers.clear();
  for (const char *h : headers) g_headers.emplace_back(h);
}

void http_set_ca_file(const char *path) { g_ca_file = path ? path : ""; }

HttpStats http_stats() {
  HttpStats s;
  s.bytes = g_bytes.load();
  s.requests = g_requests.load();
  return s;
}

std::string http_last_error() {
  std::lock_guard<std::mutex> lock(g_error_mu);
  return g_last_error;
}

#if TBLOB_HAVE_CURL

namespace {

constexpr uint64_t kUnknown = TBLOB_SOURCE_SIZE_UNKNOWN;
// Bytes fetched at open to learn the size: every format's first read (the safetensors header
// length, GGUF and SLM1 magic and version) lies in them, so they are kept and served again.
constexpr size_t kProbeBytes = 8;

// One HTTP resource, owned by the library once opened (freed in remote_close).
struct Remote {
  std::string url;
  std::string name;  // the URL without its query (which may hold a signature)
  CURL *easy = nullptr;
  curl_slist *headers = nullptr;  // the --header values: sent to `origin` only
  std::string origin;             // origin_of(url)
  std::mutex mu;  // one request at a time on the easy handle
  uint64_t size = kUnknown;
  std::string etag;  // the first answer's validator, when it gave one
  unsigned char head[kProbeBytes];
  size_t head_len = 0;
  char errbuf[CURL_ERROR_SIZE];
};

// One request and its answer.
struct Exchange {
  Remote *remote;
  uint64_t offset;
  unsigned char *dst;
  size_t want;
  size_t got = 0;
  size_t limit = 0;  // the body length the checked Content-Range announces (<= want)
  // From the headers of the final response (reset by each status line: redirects, 1xx).
  long status = 0;
  bool have_range = false, unsatisfied_range = false;
  uint64_t first = 0, last = 0, total = kUnknown;
  std::string etag;
  // Set when the answer is refused.
  bool checked = false;
  bool discard = false;  // an answer without content for us (416 of an empty file): body ignored
  tblob_status why = TBLOB_OK;
  std::string error;
};

bool parse_u64(const char *&p, const char *end, uint64_t *out) {
  uint64_t v = 0;
  const char *s = p;
  while (p < end && *p >= '0' && *p <= '9') {
    const uint64_t d = static_cast<uint64_t>(*p - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
    ++p;
  }
  *out = v;
  return p != s;
}

// "bytes A-B/TOTAL", "bytes A-B/*" or "bytes */TOTAL".
bool parse_content_range(const char *p, const char *end, Exchange *ex) {
  if (end - p < 6 || strncasecmp(p, "bytes ", 6) != 0) return false;
  p += 6;
  while (p < end && *p == ' ') ++p;
  if (p < end && *p == '*') {
    ++p;
    ex->unsatisfied_range = true;
  } else {
    if (!parse_u64(p, end, &ex->first) || p >= end || *p++ != '-' || !parse_u64(p, end, &ex->last) ||
        ex->last < ex->first)
      return false;
    ex->have_range = true;
  }
  if (p >= end || *p++ != '/') return false;
  if (p < end && *p == '*') {
    ++p;
    ex->total = kUnknown;
  } else if (!parse_u64(p, end, &ex->total)) {
    return false;
  }
  return p == end;
}

size_t on_header(char *buf, size_t size, size_t n, void *user) {
  Exchange *ex = static_cast<Exchange *>(user);
  const size_t len = size * n;
  const char *p = buf, *end = buf + len;
  while (end > p && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) --end;
  if (end - p >= 5 && std::strncmp(p, "HTTP/", 5) == 0) {  // a new response (after a redirect or 100)
    const char *sp = static_cast<const char *>(std::memchr(p, ' ', static_cast<size_t>(end - p)));
    uint64_t code = 0;
    if (sp) {
      ++sp;
      parse_u64(sp, end, &code);
    }
    ex->status = static_cast<long>(code);
    ex->have_range = ex->unsatisfied_range = false;
    ex->first = ex->last = 0;
    ex->total = kUnknown;
    ex->etag.clear();
    return len;
  }
  const char *colon = static_cast<const char *>(std::memchr(p, ':', static_cast<size_t>(end - p)));
  if (!colon) return len;
  const size_t name_len = static_cast<size_t>(colon - p);
  const char *v = colon + 1;
  while (v < end && (*v == ' ' || *v == '\t')) ++v;
  if (name_len == 13 && strncasecmp(p, "content-range", 13) == 0) {
    if (!parse_content_range(v, end, ex)) {
      ex->have_range = false;
      ex->error = "unreadable Content-Range: " + std::string(v, static_cast<size_t>(end - v));
    }
  } else if (name_len == 4 && strncasecmp(p, "etag", 4) == 0) {
    ex->etag.assign(v, static_cast<size_t>(end - v));
  }
  return len;
}

// The redirects fetch() follows itself (curl's FOLLOWLOCATION would send every --header to
// whatever host the Location names; it holds back only Authorization and Cookie).
bool is_redirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// Scheme, host and port of a URL (the port made explicit), lower-case: the "host" a --header
// was given for. Empty when curl cannot parse it.
std::string origin_of(const char *url) {
  std::string o;
  CURLU *u = curl_url();
  if (!u) return o;
  char *scheme = nullptr, *host = nullptr, *port = nullptr;
  if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
    o = std::string(scheme) + "://" + host + ":" + port;
    for (char &c : o)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  curl_url_cleanup(u);
  return o;
}

constexpr int kMaxRedirects = 10;

std::string range_text(uint64_t first, uint64_t last) {
  return std::to_string(first) + "-" + std::to_string(last);
}

// Decides whether the answer's body may be taken; sets ex->why and ex->error when not.
bool check_answer(Exchange *ex) {
  ex->checked = true;
  if (is_redirect(ex->status)) {  // fetch() follows it; its body is nothing of ours
    ex->discard = true;
    return true;
  }
  Remote *r = ex->remote;
  const uint64_t last = ex->offset + ex->want - 1;
  const std::string asked = "bytes " + range_text(ex->offset, last);
  auto refuse = [&](tblob_status s, std::string msg) {
    ex->why = s;
    ex->error = r->name + ": " + msg;
    return false;
  };
  // A validator that changed means another file is now behind the URL.
  if (!r->etag.empty() && !ex->etag.empty() && ex->etag != r->etag && ex->status / 100 == 2)
    return refuse(TBLOB_E_SOURCE_CHANGED, "the file changed while open (ETag " + r->etag + " became " + ex->etag + ")");
  if (ex->status == 200)
    return refuse(TBLOB_E_IO, "the server answered 200 with the whole file instead of 206 with the " + asked +
                                  " asked for (no range requests); refusing to download it all");
  if (ex->status == 416) {
    if (ex->unsatisfied_range && ex->total != kUnknown && r->size != kUnknown && ex->total != r->size)
      return refuse(TBLOB_E_SOURCE_CHANGED, "the file's size changed from " + std::to_string(r->size) + " to " +
                                                std::to_string(ex->total) + " bytes while open");
    if (ex->unsatisfied_range && ex->total == 0 && r->size == kUnknown) {  // an empty file
      ex->discard = true;
      return true;
    }
    return refuse(TBLOB_E_IO, "HTTP 416: the server cannot send the " + asked);
  }
  if (ex->status == 401 || ex->status == 403)
    return refuse(TBLOB_E_IO, "HTTP " + std::to_string(ex->status) +
                                  (ex->status == 401 ? " Unauthorized" : " Forbidden") +
                                  ": the server wants credentials (--header 'Authorization: Bearer TOKEN')");
  if (ex->status == 404 || ex->status == 410)
    return refuse(TBLOB_E_NOT_FOUND, "HTTP " + std::to_string(ex->status) + ": no such file on the server");
  if (ex->status != 206)
    return refuse(TBLOB_E_IO, "HTTP " + std::to_string(ex->status) + " to a request for " + asked);
  if (!ex->have_range)
    return refuse(TBLOB_E_IO, "206 without a usable Content-Range" + (ex->error.empty() ? "" : " (" + ex->error + ")"));
  if (ex->first != ex->offset)
    return refuse(TBLOB_E_IO, "asked for " + asked + ", the server sent bytes " + range_text(ex->first, ex->last));
  if (ex->last > last)
    return refuse(TBLOB_E_SOURCE_OVERREAD,
                  "asked for " + asked + ", the server sent more: bytes " + range_text(ex->first, ex->last));
  if (ex->total != kUnknown && r->size != kUnknown && ex->total != r->size)
    return refuse(TBLOB_E_SOURCE_CHANGED, "the file's size changed from " + std::to_string(r->size) + " to " +
                                              std::to_string(ex->total) + " bytes while open");
  ex->limit = static_cast<size_t>(ex->last - ex->first + 1);
  return true;
}

size_t on_body(char *buf, size_t size, size_t n, void *user) {
  Exchange *ex = static_cast<Exchange *>(user);
  const size_t len = size * n;
  if (!ex->checked && !check_answer(ex)) return 0;  // aborts the transfer
  if (ex->why != TBLOB_OK) return 0;
  if (ex->discard) return len;
  if (len > ex->limit - ex->got) {
    ex->why = TBLOB_E_SOURCE_OVERREAD;
    ex->error = ex->remote->name + ": the server sent more than the " + std::to_string(ex->limit) +
                " bytes its Content-Range announced at offset " + std::to_string(ex->offset);
    return 0;
  }
  std::memcpy(ex->dst + ex->got, buf, len);
  ex->got += len;
  g_bytes += len;
  return len;
}

// One range request: bytes [offset, offset + want) into dst. The count received, or a
// negative status (the reason in g_last_error). want > 0.
int64_t fetch(Remote *r, uint64_t offset, unsigned char *dst, size_t want) {
  const std::string range = range_text(offset, offset + want - 1);
  curl_easy_setopt(r->easy, CURLOPT_RANGE, range.c_str());
  // Redirects are followed here, one request per hop: the --header values go only to the
  // scheme, host and port of the URL they were given with, never to another one a
  // Location names (a CDN, or an attacker's host).
  std::string where = r->url;
  Exchange ex;
  CURLcode rc = CURLE_OK;
  for (int hop = 0;; ++hop) {
    ex = Exchange();
    ex.remote = r;
    ex.offset = offset;
    ex.dst = dst;
    ex.want = want;
    const bool own_host = hop == 0 || (!r->origin.empty() && origin_of(where.c_str()) == r->origin);
    curl_easy_setopt(r->easy, CURLOPT_URL, where.c_str());
    curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, own_host ? r->headers : nullptr);
    curl_easy_setopt(r->easy, CURLOPT_HEADERDATA, &ex);
    curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, &ex);
    r->errbuf[0] = '\0';
    ++g_requests;
    rc = curl_easy_perform(r->easy);
    if (rc != CURLE_OK || ex.why != TBLOB_OK || !is_redirect(ex.status)) break;
    char *next = nullptr;
    if (curl_easy_getinfo(r->easy, CURLINFO_REDIRECT_URL, &next) != CURLE_OK || !next) {
      ex.why = TBLOB_E_IO;
      ex.error = r->name + ": HTTP " + std::to_string(ex.status) + " without a usable Location";
      break;
    }
    if (hop == kMaxRedirects) {
      ex.why = TBLOB_E_IO;
      ex.error = r->name + ": more than " + std::to_string(kMaxRedirects) + " redirects";
      break;
    }
    where = next;
  }
  if (ex.why == TBLOB_OK && rc == CURLE_OK && !ex.checked) check_answer(&ex);  // an answer without a body
  if (ex.why != TBLOB_OK) {
    set_last_error(ex.error);
    return ex.why;
  }
  if (rc != CURLE_OK) {
    std::string hint;
    if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)
      hint = g_ca_file.empty() ? "; to trust a private CA: --cacert FILE or CURL_CA_BUNDLE=FILE"
                               : "; CA file " + g_ca_file;
    set_last_error(r->name + ": " + (r->errbuf[0] ? r->errbuf : curl_easy_strerror(rc)) + " (" +
                   std::to_string(ex.got) + " of bytes " + range + " received" + hint + ")");
    return TBLOB_E_IO;
  }
  if (ex.status == 206 && r->etag.empty() && !ex.etag.empty()) r->etag = ex.etag;
  if (ex.total != kUnknown && r->size == kUnknown) r->size = ex.total;
  return static_cast<int64_t>(ex.got);
}

int64_t remote_read(void *user, uint64_t offset, void *dst, size_t len) {
  Remote *r = static_cast<Remote *>(user);
  std::lock_guard<std::mutex> lock(r->mu);
  if (len == 0) return 0;
  if (r->size != kUnknown) {
    if (offset >= r->size) return 0;
    if (len > r->size - offset) len = static_cast<size_t>(r->size - offset);
  } else if (offset > UINT64_MAX - len) {
    return TBLOB_E_RANGE;
  }
  unsigned char *out = static_cast<unsigned char *>(dst);
  size_t done = 0;
  if (offset < r->head_len) {  // bytes fetched at open: served again, not fetched twice
    done = r->head_len - static_cast<size_t>(offset);
    if (done > len) done = len;
    std::memcpy(out, r->head + offset, done);
  }
  if (done == len) return static_cast<int64_t>(len);
  const int64_t n = fetch(r, offset + done, out + done, len - done);
  if (n < 0) return n;
  return static_cast<int64_t>(done) + n;
}

void remote_close(void *user) {
  Remote *r = static_cast<Remote *>(user);
  if (r->easy) curl_easy_cleanup(r->easy);
  curl_slist_free_all(r->headers);
  delete r;
}

std::once_flag g_curl_once;
bool g_curl_ok = false;

// The URL as messages and file names show it: without user:password@ and without the query
// (either may hold a secret, e.g. a signed URL's signature).
std::string without_query(const std::string &url) {
  const size_t q = url.find_first_of("?#");
  std::string s = q == std::string::npos ? url : url.substr(0, q) + (url[q] == '?' ? "?..." : "");
  const size_t host = s.find("://");
  if (host != std::string::npos) {
    const size_t end = s.find('/', host + 3);
    const size_t at = s.rfind('@', end == std::string::npos ? s.size() : end);
    if (at != std::string::npos && at > host) s.erase(host + 3, at + 1 - (host + 3));
  }
  return s;
}

// A new source for URL: its easy handle and headers, and the first 8 bytes, whose answer
// gives the size. On failure the message is in *msg.
tblob_status remote_new(const std::string &url, Remote **out, std::string *msg) {
  std::call_once(g_curl_once, [] {
    g_curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
    // Every model (and so every handle) is closed before main returns: leak checkers see
    // libcurl's and its TLS library's global state freed too.
    if (g_curl_ok) std::atexit(curl_global_cleanup);
  });
  *out = nullptr;
  if (!g_curl_ok) {
    *msg = "libcurl could not be initialised";
    return TBLOB_E_IO;
  }
  Remote *r = new (std::nothrow) Remote;
  if (!r) return TBLOB_E_OUT_OF_MEMORY;
  r->url = url;
  r->name = without_query(url);
  r->easy = curl_easy_init();
  if (!r->easy) {
    remote_close(r);
    *msg = "libcurl could not create a handle";
    return TBLOB_E_OUT_OF_MEMORY;
  }
  for (const std::string &h : g_headers) r->headers = curl_slist_append(r->headers, h.c_str());
  CURL *e = r->easy;
  curl_easy_setopt(e, CURLOPT_URL, r->url.c_str());
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  // Hosting sites redirect downloads to a CDN: fetch() follows redirects itself (at most
  // kMaxRedirects, http and https only, as CURLOPT_PROTOCOLS_STR allows) and sends the
  // --header values to the URL's own origin only.
  r->origin = origin_of(r->url.c_str());
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  // Peer and host verification stay on (libcurl's defaults); a given CA file replaces the
  // default store, as the curl tool's --cacert does.
  if (!g_ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, g_ca_file.c_str());
  curl_easy_setopt(e, CURLOPT_USERAGENT, (std::string("tensorblob/") + tblob_version_string()).c_str());
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 30L);
  // A server that stops sending is an error after a minute, never a hang.
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, r->errbuf);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  const int64_t n = fetch(r, 0, r->head, kProbeBytes);
  if (n < 0) {
    *msg = http_last_error();
    remote_close(r);
    return static_cast<tblob_status>(n);
  }
  r->head_len = static_cast<size_t>(n);
  if (r->size == kUnknown && r->head_len < kProbeBytes) r->size = r->head_len;  // 416 */0 or a short file
  *out = r;
  return TBLOB_OK;
}

// Percent-encodes a relative name for a URL path ('/' kept).
bool encode_relative(const char *name, size_t len, std::string *out) {
  if (len == 0 || name[0] == '/') return false;
  size_t seg = 0;
  for (size_t i = 0; i <= len; ++i) {
    if (i == len || name[i] == '/') {
      const size_t sl = i - seg;
      if ((sl == 1 && name[seg] == '.') || (sl == 2 && name[seg] == '.' && name[seg + 1] == '.')) return false;
      seg = i + 1;
    }
  }
  static const char kHex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < len; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~' || c == '/') {
      *out += static_cast<char>(c);
    } else {
      *out += '%';
      *out += kHex[c >> 4];
      *out += kHex[c & 15];
    }
  }
  return true;
}

tblob_status fill_source(Remote *r, tblob_byte_source *src);

// A shard named by a sharded index: resolved against this URL's directory.
tblob_status remote_sibling(void *user, const char *name, size_t name_len, tblob_byte_source *out) {
  Remote *r = static_cast<Remote *>(user);
  std::string base = r->url.substr(0, r->url.find_first_of("?#"));
  const size_t host = base.find("://") + 3;
  const size_t slash = base.find('/', host);
  base = slash == std::string::npos ? base + "/" : base.substr(0, base.rfind('/') + 1);
  std::string rel;
  if (!encode_relative(name, name_len, &rel)) {
    set_last_error(r->name + ": refused sibling name '" + std::string(name, name_len) +
                   "' (absolute, or with . or .. segments)");
    return TBLOB_E_NOT_FOUND;
  }
  Remote *s = nullptr;
  std::string msg;
  const tblob_status st = remote_new(base + rel, &s, &msg);
  if (st != TBLOB_OK) {
    set_last_error(msg);
    return st;
  }
  return fill_source(s, out);
}

tblob_status fill_source(Remote *r, tblob_byte_source *src) {
  src->size = r->size;
  src->read = remote_read;
  src->open_sibling = remote_sibling;
  src->close = remote_close;
  src->user = r;
  src->name = r->name.c_str();  // copied by the library
  return TBLOB_OK;
}

}  // namespace

bool http_available() { return true; }

tblob_status http_open_model(const char *url, const tblob_open_options *options, tblob_model **out,
                             tblob_diag *diag) {
  *out = nullptr;
  Remote *r = nullptr;
  std::string msg;
  const tblob_status s = remote_new(url, &r, &msg);
  if (s != TBLOB_OK) {
    set_last_error(std::string());  // the message says it all: no separate detail
    return fail_open(diag, s, msg);
  }
  tblob_byte_source src = TBLOB_BYTE_SOURCE_INIT;
  fill_source(r, &src);
  return tblob_model_open_source(&src, options, out, diag);  // owns r from here
}

#else  // no libcurl

bool http_available() { return false; }

tblob_status http_open_model(const char *url, const tblob_open_options *, tblob_model **out, tblob_diag *diag) {
  *out = nullptr;
  return fail_open(diag, TBLOB_E_FEATURE_DISABLED,
                   std::string(url) + ": this build of tensorblob has no http support (built without libcurl)");
}

#endif

tblob_status open_model_any(const char *path, const tblob_open_options *options, tblob_model **out,
                            tblob_diag *diag) {
  if (is_url(path)) return http_open_model(path, options, out, diag);
  return tblob_model_open(path, options, out, diag);
}

int prepare_remote(const Args &a, size_t file_args) {
  const std::vector<const char *> headers = a.get_all("--header");
  for (const char *h : headers) {
    const char *colon = std::strchr(h, ':');
    if (!colon || colon == h || std::strpbrk(h, "\r\n"))
      return usage_error(*a.cmd, "--header wants 'Name: value' on one line, not '%s'", h);
  }
  http_set_headers(headers);
  // As the curl tool: --cacert, else a non-empty CURL_CA_BUNDLE. Verification is never off.
  const char *ca = a.get("--cacert");
  if (ca) {
    std::FILE *f = std::fopen(ca, "rb");
    if (!f) return usage_error(*a.cmd, "--cacert: cannot read '%s'", ca);
    std::fclose(f);
  } else {
    ca = std::getenv("CURL_CA_BUNDLE");
    if (ca && !*ca) ca = nullptr;
  }
  http_set_ca_file(ca);
  if (http_available()) return -1;
  for (size_t i = 0; i < a.positional.size() && i < file_args; ++i) {
    const char *p = a.positional[i];
    if (!is_url(p)) continue;
    std::fprintf(stderr,
                 "tensorblob %s: %s: this build of tensorblob has no http support (it was built without "
                 "libcurl: install libcurl4-openssl-dev and configure with -Dcurl=enabled)\n",
                 a.cmd->name, p);
    if (a.json) {
      JsonWriter w;
      w.lit("{\"path\":");
      w.str(p);
      w.lit(",\"ok\":false,\"error\":{\"status\":\"TBLOB_E_FEATURE_DISABLED\",\"message\":"
            "\"this build has no http support (built without libcurl)\"}}");
      w.flush_line(stdout);
    }
    return kExitUsage;
  }
  return -1;
}

void json_fetched(JsonWriter &w, const HttpStats &before) {
  const HttpStats now = http_stats();
  w.lit(",\"fetched\":{\"bytes\":");
  w.u64(now.bytes - before.bytes);
  w.lit(",\"requests\":");
  w.u64(now.requests - before.requests);
  w.raw('}');
}

}  // namespace tbcli
