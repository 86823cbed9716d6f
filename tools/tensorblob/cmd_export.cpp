// tensorblob export [--store DIR] [--dtype keep|bf16|f16|f32] [--max-shard-size SIZE] [--json] SRC OUT_DIR
// Writes a Hugging Face style directory: model-0000N-of-0000M.safetensors shards, their
// model.safetensors.index.json and the side files the source carries (side_file_name: JSON,
// vocabularies, tokenizer models, also one sub-folder deep such as 1_Pooling/config.json).
// Memory stays bounded: each shard's header is computed from the tensor sizes first, the
// file is sized with ftruncate and filled with pwrite. Tensors are dequantized on every core
// (tblob_tensors_dequantize) into one of two 32 MiB windows while a writer thread pwrites the
// other, so decoding and writing overlap. A store model's blobs are hashed by a thread of
// their own as the export reads them, not in a pass before. Everything goes to
// OUT_DIR.tmp-<pid>, renamed to OUT_DIR only when complete and every blob matched its digest.
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"
#include "commands.h"
#include "json_writer.h"
#include "numbers.h"
#include "term.h"
#include "tblob_config.h"
#include "tensorblob.h"

namespace tbcli {

namespace {

constexpr uint32_t kKeep = 0;  // --dtype keep: bytes as stored
constexpr uint64_t kChunk = uint64_t{16} << 20;
// Decode window: two of them (one filling, one being written). The pieces are stored through
// the cache (TBLOB_STORES_CACHE) for the write that follows; 1 MiB pieces spread a window over
// the threads.
constexpr uint64_t kWindow = uint64_t{32} << 20;
constexpr uint64_t kPiece = uint64_t{1} << 20;

struct Plan {
  uint64_t index;       // tensor index in the model
  std::string name;     // name written
  uint32_t dtype;       // dtype written
  std::vector<uint64_t> shape;
  uint64_t bytes;
  bool convert;         // dequantize (else copy the stored bytes)
  uint64_t rows;        // logical rows (convert)
  uint32_t shard;
};

bool g_json = false;

int fail_msg(const char *what, const char *status, const std::string &msg) {
  std::fprintf(stderr, "tensorblob export: %s: %s: %s\n", what, status, msg.c_str());
  if (g_json) {
    JsonWriter w;
    w.lit("{\"path\":");
    w.str(what);
    w.lit(",\"ok\":false,\"error\":{\"status\":");
    w.str(status);
    w.field("message", msg.c_str());
    w.lit("}}");
    w.flush_line(stdout);
  }
  return kExitInvalid;
}

int fail(const char *what, tblob_status s, const tblob_diag &d) {
  return fail_msg(what, tblob_status_name(s), d.message[0] ? d.message : tblob_status_message(s));
}

int fail_errno(const std::string &what, int e) { return fail_msg(what.c_str(), "TBLOB_E_IO", std::strerror(e)); }

// "5GB", "500MB", "100KB", "1GiB", "4096" -> bytes (decimal units as Hugging Face reads them).
bool parse_size(const char *s, uint64_t *out) {
  uint64_t v = 0;
  const size_t digits = digit_prefix(s);
  if (!parse_number(s, digits, UINT64_MAX, &v)) return false;
  const char *p = s + digits;
  struct Unit { const char *name; uint64_t mul; };
  static const Unit kUnits[] = {{"", 1},           {"B", 1},
                                {"KB", 1000},      {"MB", 1000000},  {"GB", 1000000000},
                                {"KiB", 1024},     {"MiB", 1 << 20}, {"GiB", uint64_t{1} << 30}};
  for (const Unit &u : kUnits)
    if (std::strcmp(p, u.name) == 0) {
      if (v > UINT64_MAX / u.mul) return false;
      *out = v * u.mul;
      return *out != 0;
    }
  return false;
}

bool write_all(int fd, const void *p, uint64_t n, uint64_t off) {
  const char *c = static_cast<const char *>(p);
  while (n) {
    const size_t step = n > (uint64_t{1} << 30) ? size_t{1} << 30 : static_cast<size_t>(n);
    const ssize_t w = ::pwrite(fd, c, step, static_cast<off_t>(off));
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    c += w;
    off += static_cast<uint64_t>(w);
    n -= static_cast<uint64_t>(w);
  }
  return true;
}

bool write_file(const std::string &path, const void *p, size_t n) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool ok = write_all(fd, p, n, 0) && ::fsync(fd) == 0;
  const int e = errno;
  ::close(fd);
  errno = e;
  return ok;
}

bool read_small_file(const std::string &path, std::string *out) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

// Removes the temporary directory and what the export put in it (files, and the files of
// side-file sub-folders: two levels).
void remove_tree(const std::string &dir, int depth = 2) {
  if (DIR *dp = ::opendir(dir.c_str())) {
    while (const dirent *e = ::readdir(dp)) {
      if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
      const std::string p = dir + "/" + e->d_name;
      if (::unlink(p.c_str()) != 0 && (errno == EISDIR || errno == EPERM) && depth > 1) remove_tree(p, depth - 1);
    }
    ::closedir(dp);
  }
  ::rmdir(dir.c_str());
}

// 0: absent, 1: an empty directory, 2: anything else.
int out_dir_state(const char *path) {
  struct stat st;
  if (::lstat(path, &st) != 0) return errno == ENOENT ? 0 : 2;
  if (!S_ISDIR(st.st_mode)) return 2;
  DIR *dp = ::opendir(path);
  if (!dp) return 2;
  int state = 1;
  while (const dirent *e = ::readdir(dp))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) state = 2;
  ::closedir(dp);
  return state;
}

std::string dir_of(const std::string &p) {
  const size_t k = p.find_last_of('/');
  return k == std::string::npos ? "." : k == 0 ? "/" : p.substr(0, k);
}

bool is_dir(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool ends_with(const char *n, const char *suffix) {
  const size_t a = std::strlen(n), b = std::strlen(suffix);
  return a >= b && std::strcmp(n + a - b, suffix) == 0;
}

// The side files a model directory carries next to its weights, which loaders read: every
// JSON file but a weight index (*.index.json names the source's weight files, not the
// export's), so config, generation, tokenizer, and sentence-transformers' modules.json,
// sentence_bert_config.json, config_sentence_transformers.json ...; and the vocabularies and
// tokenizer models (vocab.txt, merges.txt, tokenizer.model, *.tiktoken). The same rule for a
// file source's directory as for a store's JSON layers; hidden names never.
bool side_file_name(const char *n) {
  if (n[0] == '.' || n[0] == '\0') return false;
  if (ends_with(n, ".json")) return !ends_with(n, ".index.json");
  return ends_with(n, ".txt") || ends_with(n, ".model") || ends_with(n, ".tiktoken");
}

// A sub-folder whose side files are copied too (sentence-transformers' 1_Pooling/,
// 2_Normalize/): one level, as `import` stores them; hidden ones never (also the test for a
// path component of a store layer's name: not empty, not hidden, so never "." or "..").
bool side_folder_name(const char *n) { return n[0] != '.' && n[0] != '\0'; }

// A side file is read whole into memory: one larger than this (a data set's .txt beside a
// model file) is no side file, and is left out with a note.
constexpr off_t kSideFileMax = off_t(256) << 20;

#if TBLOB_HAVE_OLLAMA
// A store JSON layer to write: a side file (the rule above) named "file" or "folder/file"
// (what import writes), nothing that could land outside OUT_DIR.
bool side_layer_path(const std::string &name) {
  if (name.empty() || name.find('\0') != std::string::npos) return false;
  const size_t slash = name.find('/');
  if (slash == std::string::npos) return side_file_name(name.c_str());
  if (name.find('/', slash + 1) != std::string::npos) return false;
  return side_folder_name(name.substr(0, slash).c_str()) && side_file_name(name.c_str() + slash + 1);
}
#endif

struct JsonFile {
  std::string name, bytes;
};

// ---- config.json of a dequantized export -------------------------------------------------

size_t skip_ws(const std::string &j, size_t i) {
  while (i < j.size() && (j[i] == ' ' || j[i] == '\t' || j[i] == '\n' || j[i] == '\r')) ++i;
  return i;
}

// End (one past) of the JSON string starting at j[i] == '"', or npos.
size_t skip_string(const std::string &j, size_t i) {
  for (++i; i < j.size(); ++i) {
    if (j[i] == '\\') ++i;
    else if (j[i] == '"') return i + 1;
  }
  return std::string::npos;
}

// End of the value starting at j[i] (strings, nested objects/arrays, scalars), or npos.
size_t skip_value(const std::string &j, size_t i) {
  if (i >= j.size()) return std::string::npos;
  if (j[i] == '"') return skip_string(j, i);
  if (j[i] == '{' || j[i] == '[') {
    int depth = 0;
    while (i < j.size()) {
      const char c = j[i];
      if (c == '"') {
        i = skip_string(j, i);
        if (i == std::string::npos) return i;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return std::string::npos;
  }
  while (i < j.size() && j[i] != ',' && j[i] != '}' && j[i] != ']' && j[i] != ' ' && j[i] != '\n' &&
         j[i] != '\r' && j[i] != '\t')
    ++i;
  return i;
}

// config.json without its top-level "quantization" and "quantization_config" members (the
// exported tensors are plain floats: a loader reading those would treat them as quantized).
// Everything else keeps its bytes and layout. False when the text is not a JSON object as
// far as this walk can tell (the caller then keeps the file as it is and says so).
bool drop_quantization(const std::string &j, std::string *out, bool *changed) {
  *changed = false;
  size_t i = skip_ws(j, 0);
  if (i >= j.size() || j[i] != '{') return false;
  ++i;
  struct Span { size_t begin, end; };  // member text: key through value
  std::vector<Span> members;
  std::vector<bool> drop;
  for (;;) {
    i = skip_ws(j, i);
    if (i < j.size() && j[i] == '}' && members.empty()) break;
    if (i >= j.size() || j[i] != '"') return false;
    const size_t kb = i;
    const size_t ke = skip_string(j, i);
    if (ke == std::string::npos) return false;
    const std::string key = j.substr(kb + 1, ke - kb - 2);
    i = skip_ws(j, ke);
    if (i >= j.size() || j[i] != ':') return false;
    i = skip_ws(j, i + 1);
    const size_t ve = skip_value(j, i);
    if (ve == std::string::npos || ve == i) return false;
    members.push_back({kb, ve});
    drop.push_back(key == "quantization" || key == "quantization_config");
    i = skip_ws(j, ve);
    if (i < j.size() && j[i] == ',') {
      ++i;
      continue;
    }
    if (i < j.size() && j[i] == '}') break;
    return false;
  }
  const size_t close = i;
  if (skip_ws(j, close + 1) != j.size()) return false;
  // Kept members joined by the separator that preceded each in the source (", \n  "), between
  // the original opening and closing layout.
  std::string o;
  bool first = true;
  for (size_t k = 0; k < members.size(); ++k) {
    if (drop[k]) {
      *changed = true;
      continue;
    }
    o += first ? j.substr(0, members[0].begin)
               : j.substr(members[k - 1].end, members[k].begin - members[k - 1].end);
    o += j.substr(members[k].begin, members[k].end - members[k].begin);
    first = false;
  }
  if (!*changed) return true;
  if (first)  // nothing kept: "{}"
    o = j.substr(0, j.find('{') + 1) + j.substr(close);
  else
    o += j.substr(members.back().end);
  *out = std::move(o);
  return true;
}

// ---- SHA-256 of store blobs, as the export reads them ----------------------------------------

struct BlobCheck {
  std::string path, digest;
  uint64_t size;
};

// How far the hasher may run ahead of the decoding: a cold blob it reads from disk is still in
// the page cache when the decoder gets to it (one disk read, not two).
constexpr uint64_t kHashAhead = uint64_t{256} << 20;

struct Hasher {
  std::vector<BlobCheck> blobs;  // in the order the export reads them
  std::vector<uint64_t> before;  // bytes of blobs[0..k)
  uint64_t reader = 0;           // atomic: index of the blob being decoded; UINT64_MAX: done
  tblob_status status = TBLOB_OK;
  std::string message;
  int cancel = 0;  // atomic: the export failed, stop
  int failed = 0;  // atomic: a blob did not match (status/message are set before)
};

void *hasher_main(void *arg) {
  Hasher &h = *static_cast<Hasher *>(arg);
  for (size_t k = 0; k < h.blobs.size(); ++k) {
    const BlobCheck &b = h.blobs[k];
    for (;;) {
      if (__atomic_load_n(&h.cancel, __ATOMIC_ACQUIRE)) return nullptr;
      const uint64_t r = __atomic_load_n(&h.reader, __ATOMIC_ACQUIRE);
      if (r == UINT64_MAX || r >= k || h.before[k] - h.before[static_cast<size_t>(r)] <= kHashAhead) break;
      struct timespec ts = {0, 1000000};
      ::nanosleep(&ts, nullptr);
    }
    tblob_diag d = TBLOB_DIAG_INIT;
    tblob_verifier *v = nullptr;
    tblob_status s = tblob_verifier_open(b.digest.data(), b.digest.size(), b.size, &v, &d);
    const int fd = s == TBLOB_OK ? ::open(b.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
    if (s == TBLOB_OK && fd < 0) {
      s = TBLOB_E_IO;
      std::snprintf(d.message, sizeof d.message, "%s: %s", b.path.c_str(), std::strerror(errno));
    }
    struct stat st;
    if (s == TBLOB_OK && ::fstat(fd, &st) == 0 && st.st_size > 0) {
      // Mapped, not read: the pages are the ones the model's mapping decodes from.
      const size_t len = static_cast<size_t>(st.st_size);
      void *p = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        s = TBLOB_E_IO;
        std::snprintf(d.message, sizeof d.message, "%s: mmap: %s", b.path.c_str(), std::strerror(errno));
      } else {
        ::madvise(p, len, MADV_SEQUENTIAL);
        for (size_t o = 0; o < len && s == TBLOB_OK; o += kPiece * 4) {
          if (__atomic_load_n(&h.cancel, __ATOMIC_ACQUIRE)) break;
          const size_t n = len - o < kPiece * 4 ? len - o : static_cast<size_t>(kPiece * 4);
          s = tblob_verifier_update(v, static_cast<const char *>(p) + o, n, &d);
        }
        ::munmap(p, len);
      }
    }
    if (fd >= 0) ::close(fd);
    if (s == TBLOB_OK && !__atomic_load_n(&h.cancel, __ATOMIC_ACQUIRE)) s = tblob_verifier_final(v, nullptr, 0, &d);
    tblob_verifier_close(v);
    if (s != TBLOB_OK && !__atomic_load_n(&h.cancel, __ATOMIC_ACQUIRE)) {
      h.status = s;
      h.message = d.message[0] ? d.message : tblob_status_message(s);
      __atomic_store_n(&h.failed, 1, __ATOMIC_RELEASE);
      break;
    }
  }
  return nullptr;
}

// ---- the writer: pwrites one window while the next is decoded --------------------------------

struct Write {
  int fd;
  uint64_t off;
  const void *src;  // the source mapping (tensors copied as stored), or null: window bytes
  uint64_t len;
  uint64_t win_off; // where the bytes are in the window (src null)
};

struct Writer {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
  std::vector<Write> *pending = nullptr;  // the window handed over, null when idle
  bool quit = false;
  uint64_t written = 0;  // bytes written so far (for the progress bar)
  int error = 0;         // errno of the first failed write
  std::string error_path;
  const std::vector<std::string> *paths = nullptr;  // shard paths by fd order
  const std::vector<int> *fds = nullptr;
};

void *writer_main(void *arg) {
  Writer &w = *static_cast<Writer *>(arg);
  pthread_mutex_lock(&w.mu);
  for (;;) {
    while (!w.pending && !w.quit) pthread_cond_wait(&w.cv, &w.mu);
    if (!w.pending) break;
    std::vector<Write> *job = w.pending;
    const bool failed = w.error != 0;
    pthread_mutex_unlock(&w.mu);
    int err = 0;
    int bad_fd = -1;
    uint64_t done = 0;
    for (size_t k = 0; k < job->size() && !failed && !err; ++k) {
      const Write &x = (*job)[k];
      if (!write_all(x.fd, x.src, x.len, x.off)) {
        err = errno ? errno : EIO;
        bad_fd = x.fd;
      }
      done += x.len;
    }
    pthread_mutex_lock(&w.mu);
    w.written += done;
    if (err && !w.error) {
      w.error = err;
      for (size_t k = 0; k < w.fds->size(); ++k)
        if ((*w.fds)[k] == bad_fd) w.error_path = (*w.paths)[k];
    }
    w.pending = nullptr;
    pthread_cond_broadcast(&w.cv);
  }
  pthread_mutex_unlock(&w.mu);
  return nullptr;
}

void writer_submit(Writer &w, std::vector<Write> *job) {
  pthread_mutex_lock(&w.mu);
  while (w.pending) pthread_cond_wait(&w.cv, &w.mu);
  w.pending = job;
  pthread_cond_broadcast(&w.cv);
  pthread_mutex_unlock(&w.mu);
}

}  // namespace

int cmd_export(const Args &a) {
  const auto t0 = std::chrono::steady_clock::now();
  g_json = a.json;
  const char *src = a.positional[0];
  // "out/" names the same directory as "out"; the temporary must be its sibling, not inside.
  std::string out_str = a.positional[1];
  while (out_str.size() > 1 && out_str.back() == '/') out_str.pop_back();
  const char *out_dir = out_str.c_str();
  const char *dtype_arg = a.get("--dtype") ? a.get("--dtype") : "bf16";
  const uint32_t out_dtype = std::strcmp(dtype_arg, "keep") == 0 ? kKeep : dtype_from_name(dtype_arg);
  uint64_t max_shard = 5000000000ull;
  if (const char *v = a.get("--max-shard-size"))
    if (!parse_size(v, &max_shard)) return usage_error(*a.cmd, "--max-shard-size wants e.g. 5GB, 500MB, 4096; not '%s'", v);
  if (out_dir_state(out_dir) == 2)
    return fail_msg(out_dir, "TBLOB_E_IO", "exists and is not an empty directory; refusing to overwrite it");

  tblob_diag d = TBLOB_DIAG_INIT;
  tblob_status s;
  tblob_model *m = nullptr;
  std::vector<JsonFile> json_files;
  const char *verified = "no";  // "store": every blob's SHA-256 checked as it was read
  Hasher hasher;
  std::string store_root, model_name;
  const char *store_arg = a.get("--store");
#if TBLOB_HAVE_OLLAMA
  if (store_arg) {
    store_root = store_arg;
    model_name = src;
  }
#endif
  std::string single;  // a directory with one model.safetensors and no index: that file
  if (!store_arg && is_dir(src)) {
    struct stat st;
    const std::string dir(src);
    if (::stat((dir + "/model.safetensors.index.json").c_str(), &st) != 0 &&
        ::stat((dir + "/model.safetensors").c_str(), &st) == 0)
      single = dir + "/model.safetensors";
  }
  if (!store_arg) {
    if ((s = tblob_model_open(single.empty() ? src : single.c_str(), nullptr, &m, &d)) != TBLOB_OK)
      return fail(src, s, d);
    bool beside = true;
#if TBLOB_HAVE_OLLAMA
    // A store model named by path: its blobs live in <root>/blobs/, so the store and the
    // model name are known, and the blobs get the same check as with --store.
    if (tblob_model_format(m) == TBLOB_FORMAT_OLLAMA) {
      const char *fp = nullptr, *nm = nullptr;
      size_t nl = 0;
      if (tblob_model_file_count(m) > 0 && tblob_model_file_path(m, 0, &fp, nullptr, &d) == TBLOB_OK &&
          tblob_metadata_find(m, "ollama.name", 11, &nm, &nl, &d) == TBLOB_OK) {
        store_root = dir_of(dir_of(fp));
        model_name.assign(nm, nl);
      }
      tblob_model_close(m);
      m = nullptr;
      if (store_root.empty()) return fail_msg(src, "TBLOB_E_UNSUPPORTED", "cannot tell the store of this model");
      beside = false;
    }
#endif
    if (beside) {
      // Side files beside a safetensors / UQFF source, and in its sub-folders. Regular files
      // only (a symlink is followed, as in a Hugging Face cache snapshot); a FIFO is never read.
      const std::string dir = is_dir(src) ? std::string(src) : dir_of(src);
      std::vector<std::string> names;
      auto consider = [&](const std::string &rel, const char *leaf) {
        struct stat st;
        if (!side_file_name(leaf) || ::stat((dir + "/" + rel).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;
        if (st.st_size > kSideFileMax)
          std::fprintf(stderr, "tensorblob export: %s/%s: over 256 MiB, not copied as a side file\n", dir.c_str(),
                       rel.c_str());
        else
          names.push_back(rel);
      };
      if (DIR *dp = ::opendir(dir.c_str())) {
        while (const dirent *e = ::readdir(dp)) {
          struct stat st;
          const std::string name = e->d_name;
          consider(name, e->d_name);
          if (!side_folder_name(e->d_name) || ::stat((dir + "/" + name).c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
          if (DIR *sp = ::opendir((dir + "/" + name).c_str())) {
            while (const dirent *se = ::readdir(sp)) consider(name + "/" + se->d_name, se->d_name);
            ::closedir(sp);
          }
        }
        ::closedir(dp);
      }
      std::sort(names.begin(), names.end());
      for (const std::string &name : names) {
        JsonFile f{name, {}};
        if (!read_small_file(dir + "/" + name, &f.bytes)) {
          const int en = errno;
          tblob_model_close(m);
          return fail_errno(dir + "/" + name, en);
        }
        json_files.push_back(std::move(f));
      }
    }
  }
#if TBLOB_HAVE_OLLAMA
  tblob_store *store = nullptr;
  if (!store_root.empty()) {
    // Blobs are named by their digests: put the model's files first, in file order, below.
    if ((s = tblob_store_open(store_root.c_str(), nullptr, &store, &d)) != TBLOB_OK) return fail(store_root.c_str(), s, d);
    const char *what = src;
    tblob_manifest *man = nullptr;
    if ((s = tblob_store_manifest_open(store, model_name.data(), model_name.size(), &man, &d)) != TBLOB_OK) {
      tblob_store_close(store);
      return fail(what, s, d);
    }
    verified = "store";
    // Every blob of the manifest is hashed while the export runs (the hasher thread, in the
    // order the tensors are read); the JSON layers read here are hashed at once.
    const uint64_t nl = tblob_manifest_layer_count(man);
    for (uint64_t i = 0; i <= nl && s == TBLOB_OK; ++i) {
      tblob_layer_info li = TBLOB_LAYER_INFO_INIT;
      s = tblob_manifest_layer_at(man, i == nl ? TBLOB_LAYER_CONFIG_INDEX : i, &li, &d);
      if (s == TBLOB_E_NOT_FOUND && i == nl) {
        s = TBLOB_OK;
        break;
      }
      if (s != TBLOB_OK) break;
      std::string dg(li.digest, li.digest_len);
      bool seen = false;
      for (const BlobCheck &b : hasher.blobs) seen = seen || b.digest == dg;
      if (!seen) {
        std::string hex = dg.substr(dg.find(':') + 1);
        hasher.blobs.push_back({store_root + "/blobs/sha256-" + hex, dg, li.size});
      }
    }
    for (uint64_t i = 0; i < nl && s == TBLOB_OK; ++i) {
      tblob_layer_info li = TBLOB_LAYER_INFO_INIT;
      if ((s = tblob_manifest_layer_at(man, i, &li, &d)) != TBLOB_OK) break;
      if (li.kind != TBLOB_LAYER_JSON || li.name_len == 0) continue;
      JsonFile f{std::string(li.name, li.name_len), {}};
      // "file" or "folder/file" (a sub-folder's JSON, as import names it): nothing may land
      // outside OUT_DIR.
      if (!side_layer_path(f.name)) continue;
      size_t len = 0;
      s = tblob_store_read_layer(store, man, i, nullptr, 0, &len, &d);
      if (s != TBLOB_OK && s != TBLOB_E_BUFFER_TOO_SMALL) break;
      f.bytes.resize(len);
      if ((s = tblob_store_read_layer(store, man, i, &f.bytes[0], len, &len, &d)) != TBLOB_OK) break;
      tblob_verifier *v = nullptr;
      if ((s = tblob_verifier_open(li.digest, li.digest_len, li.size, &v, &d)) == TBLOB_OK &&
          (s = tblob_verifier_update(v, f.bytes.data(), f.bytes.size(), &d)) == TBLOB_OK)
        s = tblob_verifier_final(v, nullptr, 0, &d);
      tblob_verifier_close(v);
      if (s != TBLOB_OK) break;
      json_files.push_back(std::move(f));
    }
    tblob_manifest_close(man);
    if (s == TBLOB_OK) s = tblob_store_open_model(store, model_name.data(), model_name.size(), nullptr, &m, &d);
    tblob_store_close(store);
    if (s != TBLOB_OK) return fail(what, s, d);
  }
#endif

  int rc = kExitOk;
  std::vector<Plan> plan;
  std::vector<std::string> refused;
  const uint64_t n = tblob_model_tensor_count(m);
  std::vector<tblob_tensor_info> infos(static_cast<size_t>(n));
  if (n && (s = tblob_tensors_at(m, 0, n, infos.data(), sizeof(tblob_tensor_info), &d)) != TBLOB_OK) {
    tblob_model_close(m);
    return fail(src, s, d);
  }
  // keep: an Ollama blob's N.scale / N.bias become X.scales / X.biases (mlx-community names).
  std::vector<std::string> rename(static_cast<size_t>(n));
  for (uint64_t i = 0; i < n && rc == kExitOk; ++i) {
    const tblob_tensor_info &t = infos[i];
    tblob_quant_info qi = TBLOB_QUANT_INFO_INIT;
    if ((s = tblob_tensor_quant_info(m, i, &qi, &d)) != TBLOB_OK) {
      rc = fail(src, s, d);
      break;
    }
    Plan p{i, std::string(t.name, t.name_len), t.dtype, {}, t.data_length, false, 0, 0};
    p.shape.assign(t.shape, t.shape + t.rank);
    // Stored bytes can be written under the stored dtype and shape only when they agree
    // (packed formats such as UQFF report the logical shape beside packed bytes).
    uint64_t bits = tblob_dtype_bits(t.dtype), elems = 1;
    for (uint32_t r = 0; r < t.rank; ++r) elems = t.shape[r] && elems > UINT64_MAX / t.shape[r] ? 0 : elems * t.shape[r];
    const bool plain_bytes = bits && elems <= UINT64_MAX / bits && (elems * bits + 7) / 8 == t.data_length;
    if (out_dtype == kKeep) {
      if (t.quant_flags & TBLOB_TENSOR_QUANTIZED) {
        if (qi.scheme != TBLOB_QUANT_MLX_AFFINE || !plain_bytes) {
          const char *sn = tblob_quant_scheme_name(qi.scheme);
          refused.push_back(p.name + " (" + (sn ? sn : "?") + ")");
          continue;
        }
        if (qi.source == TBLOB_QUANT_SOURCE_OLLAMA) {
          std::string base = p.name;
          if (base.size() > 7 && base.compare(base.size() - 7, 7, ".weight") == 0) base.resize(base.size() - 7);
          if (qi.scale_index >= 0) rename[static_cast<size_t>(qi.scale_index)] = base + ".scales";
          if (qi.bias_index >= 0) rename[static_cast<size_t>(qi.bias_index)] = base + ".biases";
        }
      } else if (!plain_bytes) {
        const char *sn = tblob_quant_scheme_name(qi.scheme);
        refused.push_back(p.name + " (packed " + (sn ? sn : "?") + ")");
        continue;
      }
    } else if (t.quant_flags & TBLOB_TENSOR_COMPANION) {
      continue;  // folded into its owner's values
    } else if ((s = tblob_tensor_dequant_size(m, i, out_dtype, 0, TBLOB_ALL_ROWS, &p.bytes, &d)) == TBLOB_OK) {
      p.convert = true;
      p.dtype = out_dtype;
      p.rows = qi.rows;
      p.shape.assign(t.logical_shape, t.logical_shape + t.logical_rank);
    } else if (s == TBLOB_E_NOT_DEQUANTIZABLE && plain_bytes && !(t.quant_flags & TBLOB_TENSOR_QUANTIZED)) {
      p.bytes = t.data_length;  // integers, bool, F64: as stored
    } else {
      rc = fail(src, s, d);
      break;
    }
    plan.push_back(std::move(p));
  }
  if (rc == kExitOk && !refused.empty()) {
    std::string msg = "--dtype keep writes plain tensors and MLX affine quantized ones only; refusing:";
    for (const std::string &r : refused) msg += " " + r;
    rc = fail_msg(src, "TBLOB_E_UNSUPPORTED", msg);
  }
  if (rc != kExitOk) {
    tblob_model_close(m);
    return rc;
  }
  for (Plan &p : plan)
    if (!rename[static_cast<size_t>(p.index)].empty()) p.name = rename[static_cast<size_t>(p.index)];
  {
    // One name, one tensor: a directory cannot hold two (e.g. after the keep renames).
    std::vector<const std::string *> names;
    for (const Plan &p : plan) names.push_back(&p.name);
    std::sort(names.begin(), names.end(), [](const std::string *x, const std::string *y) { return *x < *y; });
    for (size_t k = 1; k < names.size(); ++k)
      if (*names[k] == *names[k - 1]) {
        tblob_model_close(m);
        return fail_msg(src, "TBLOB_E_UNSUPPORTED", "two tensors would be written as \"" + *names[k] + "\"");
      }
  }

  // Shards in source order, each under max_shard unless one tensor alone is larger.
  uint32_t shards = 0;
  uint64_t in_shard = 0, total_bytes = 0;
  for (Plan &p : plan) {
    if (shards == 0 || (in_shard && in_shard + p.bytes > max_shard)) {
      ++shards;
      in_shard = 0;
    }
    p.shard = shards - 1;
    in_shard += p.bytes;
    total_bytes += p.bytes;
  }
  if (shards == 0) shards = 1;  // no tensors: one empty shard keeps the layout loadable
  auto shard_name = [shards](uint32_t k) {
    char b[64];
    std::snprintf(b, sizeof b, "model-%05u-of-%05u.safetensors", k + 1, shards);
    return std::string(b);
  };

  // The model's files first, in file order: the hasher then reads each blob just before (or
  // while) the export decodes it, at most kHashAhead ahead.
  std::vector<uint64_t> file_blob(tblob_model_file_count(m), UINT64_MAX);
  {
    std::vector<BlobCheck> ordered;
    const uint32_t nf = tblob_model_file_count(m);
    for (uint32_t f = 0; f < nf; ++f) {
      const char *fp = nullptr;
      size_t fl = 0;
      if (tblob_model_file_path(m, f, &fp, &fl, &d) != TBLOB_OK) continue;
      const std::string base = std::string(fp, fl).substr(std::string(fp, fl).find_last_of('/') + 1);
      for (BlobCheck &b : hasher.blobs)
        if (b.path.size() >= base.size() && b.path.compare(b.path.size() - base.size(), base.size(), base) == 0) {
          file_blob[f] = ordered.size();
          ordered.push_back(b);
          b.path.clear();
        }
    }
    for (BlobCheck &b : hasher.blobs)
      if (!b.path.empty()) ordered.push_back(b);
    hasher.blobs.swap(ordered);
    hasher.before.assign(hasher.blobs.size() + 1, 0);
    for (size_t k = 0; k < hasher.blobs.size(); ++k) hasher.before[k + 1] = hasher.before[k] + hasher.blobs[k].size;
  }
  auto reading = [&](uint64_t pos) {  // the decoder reached blob `pos` (UINT64_MAX: done)
    if (pos == UINT64_MAX || pos > __atomic_load_n(&hasher.reader, __ATOMIC_RELAXED))
      __atomic_store_n(&hasher.reader, pos, __ATOMIC_RELEASE);
  };
  pthread_t hasher_tid;
  bool hasher_running = !hasher.blobs.empty() && ::pthread_create(&hasher_tid, nullptr, hasher_main, &hasher) == 0;
  if (!hasher.blobs.empty() && !hasher_running) {  // no thread: hash everything first
    hasher.reader = UINT64_MAX;
    hasher_main(&hasher);
  }
  auto stop_hasher = [&](bool cancel) {
    if (cancel) __atomic_store_n(&hasher.cancel, 1, __ATOMIC_RELEASE);
    if (hasher_running) ::pthread_join(hasher_tid, nullptr);
    hasher_running = false;
  };
  auto hash_failed = [&]() { return __atomic_load_n(&hasher.failed, __ATOMIC_ACQUIRE) != 0; };

  const std::string tmp = std::string(out_dir) + ".tmp-" + std::to_string(::getpid());
  if (::mkdir(tmp.c_str(), 0755) != 0) {
    stop_hasher(true);
    tblob_model_close(m);
    return fail_errno(tmp, errno);
  }
  ProgressBar bar("exporting", total_bytes > kChunk);  // as dequant: no flash for small models
  std::vector<std::string> files, paths;
  std::vector<int> fds;
  std::vector<uint64_t> data_start;  // per shard: where its tensor data begin
  uint64_t file_bytes = 0;
  // Every shard is created, sized and given its header first; the data follow in plan order.
  {
    size_t at = 0;
    for (uint32_t k = 0; k < shards && rc == kExitOk; ++k) {
      size_t end = at;
      while (end < plan.size() && plan[end].shard == k) ++end;
      std::vector<tblob_st_tensor_spec> specs;
      for (size_t i = at; i < end; ++i)
        specs.push_back({plan[i].name.data(), plan[i].name.size(), plan[i].dtype,
                         static_cast<uint32_t>(plan[i].shape.size()), plan[i].shape.data(), plan[i].bytes});
      const char *mk[] = {"format"}, *mv[] = {"pt"};
      size_t hlen = 0;
      s = tblob_st_header_write(specs.data(), specs.size(), mk, mv, 1, nullptr, 0, &hlen, &d);
      std::vector<char> header(hlen);
      if ((s != TBLOB_OK && s != TBLOB_E_BUFFER_TOO_SMALL) ||
          (s = tblob_st_header_write(specs.data(), specs.size(), mk, mv, 1, header.data(), hlen, &hlen, &d)) != TBLOB_OK) {
        rc = fail(src, s, d);
        break;
      }
      uint64_t size = hlen;
      for (size_t i = at; i < end; ++i) size += plan[i].bytes;
      const std::string fname = shard_name(k), path = tmp + "/" + fname;
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(size)) != 0 || !write_all(fd, header.data(), hlen, 0)) {
        rc = fail_errno(path, errno);
        if (fd >= 0) ::close(fd);
        break;
      }
      fds.push_back(fd);
      paths.push_back(path);
      files.push_back(fname);
      data_start.push_back(hlen);
      file_bytes += size;
      at = end;
    }
  }

  // Windows: jobs for tblob_tensors_dequantize and the writes that follow them, in plan order.
  struct Window {
    std::vector<unsigned char> buf;
    std::vector<tblob_dequant_job> jobs;
    std::vector<Write> writes;
    uint64_t used = 0;    // bytes of buf holding decoded rows
    uint64_t copied = 0;  // bytes written straight from the source mapping
  };
  Window win[2];
  int cur = 0;
  Writer writer;
  writer.paths = &paths;
  writer.fds = &fds;
  pthread_t writer_tid;
  const bool writer_thread = rc == kExitOk && ::pthread_create(&writer_tid, nullptr, writer_main, &writer) == 0;
  tblob_dequant_options dopt = TBLOB_DEQUANT_OPTIONS_INIT;
  dopt.threads = 0;  // every online core
  dopt.piece_bytes = kPiece;
  dopt.stores = TBLOB_STORES_CACHE;
  auto writer_error = [&]() {
    pthread_mutex_lock(&writer.mu);
    const int e = writer.error;
    pthread_mutex_unlock(&writer.mu);
    return e;
  };
  auto progress = [&]() {
    pthread_mutex_lock(&writer.mu);
    const uint64_t w = writer.written;
    pthread_mutex_unlock(&writer.mu);
    bar.update(w, total_bytes);
  };
  // Decodes the current window on every core, hands it to the writer, switches windows.
  auto flush = [&]() -> bool {
    Window &w = win[cur];
    if (w.writes.empty()) return true;
    if (!w.jobs.empty()) {
      // Destinations were recorded as offsets while the buffer could still grow.
      for (tblob_dequant_job &j : w.jobs) j.dst = w.buf.data() + reinterpret_cast<uintptr_t>(j.dst);
      for (Write &x : w.writes)
        if (x.src == nullptr) x.src = w.buf.data() + x.win_off;
      if ((s = tblob_tensors_dequantize(m, w.jobs.data(), w.jobs.size(), sizeof(tblob_dequant_job), &dopt, &d)) !=
          TBLOB_OK) {
        bar.clear();
        rc = fail(src, s, d);
        return false;
      }
    }
    if (writer_thread) {
      writer_submit(writer, &w.writes);
    } else {
      for (const Write &x : w.writes)
        if (!write_all(x.fd, x.src, x.len, x.off)) {
          rc = fail_errno(src, errno);
          return false;
        }
      writer.written += w.used + w.copied;
    }
    // The writer took this window only after it had written the other one: that one is free
    // now, and is filled while this one is written.
    cur ^= 1;
    Window &n = win[cur];
    progress();
    if (const int e = writer_error()) {
      bar.clear();
      rc = fail_errno(writer.error_path, e);
      return false;
    }
    if (hash_failed()) return false;
    n.jobs.clear();
    n.writes.clear();
    n.used = 0;
    n.copied = 0;
    return true;
  };
  // Window bytes are recorded as offsets and resolved at flush: the buffer may grow for one
  // long row.
  uint64_t off = 0;
  for (size_t i = 0; i < plan.size() && rc == kExitOk && !hash_failed(); ++i) {
    const Plan &p = plan[i];
    const int fd = fds[p.shard];
    if (i == 0 || plan[i - 1].shard != p.shard) off = data_start[p.shard];
    if (infos[p.index].file_index < file_blob.size() && file_blob[infos[p.index].file_index] != UINT64_MAX)
      reading(file_blob[infos[p.index].file_index]);
    const uint64_t tensor_off = off;
    off += p.bytes;
    if (!p.convert) {
      const void *data = nullptr;
      uint64_t len = 0;
      if ((s = tblob_tensor_data(m, p.index, &data, &len, &d)) != TBLOB_OK) {
        rc = fail(src, s, d);
        break;
      }
      win[cur].writes.push_back({fd, tensor_off, data, len, 0});
      win[cur].copied += len;
      if (win[cur].used + win[cur].copied >= kWindow && !flush()) break;
      continue;
    }
    if (!p.rows || !p.bytes) continue;  // nothing to decode for an empty tensor
    const uint64_t row_bytes = p.bytes / p.rows;
    for (uint64_t r = 0; r < p.rows && rc == kExitOk;) {
      Window &w = win[cur];
      const uint64_t room = kWindow > w.used + w.copied ? kWindow - w.used - w.copied : 0;
      uint64_t n = row_bytes ? room / row_bytes : p.rows - r;
      if (n == 0) {
        if (!w.writes.empty()) {  // a fresh window for the next rows
          if (!flush()) break;
          continue;
        }
        n = 1;  // one row longer than a window: the window grows to hold it
      }
      if (n > p.rows - r) n = p.rows - r;
      const uint64_t len = n * row_bytes;
      if (w.buf.size() < w.used + len) w.buf.resize(static_cast<size_t>(w.used + len));
      tblob_dequant_job j = TBLOB_DEQUANT_JOB_INIT;
      j.index = p.index;
      j.out_dtype = p.dtype;
      j.row_begin = r;
      j.row_end = r + n;
      j.dst = reinterpret_cast<void *>(static_cast<uintptr_t>(w.used));  // offset until flush
      j.dst_bytes = static_cast<size_t>(len);
      w.jobs.push_back(j);
      w.writes.push_back({fd, tensor_off + r * row_bytes, nullptr, len, w.used});
      w.used += len;
      r += n;
      if (w.used + w.copied >= kWindow && !flush()) break;
    }
  }
  if (rc == kExitOk && !hash_failed()) flush();
  reading(UINT64_MAX);  // the rest (layers no tensor comes from) without waiting
  if (writer_thread) {
    pthread_mutex_lock(&writer.mu);
    writer.quit = true;
    pthread_cond_broadcast(&writer.cv);
    pthread_mutex_unlock(&writer.mu);
    ::pthread_join(writer_tid, nullptr);
  }
  if (rc == kExitOk)
    if (const int e = writer_error()) rc = fail_errno(writer.error_path, e);
  stop_hasher(rc != kExitOk);
  if (rc == kExitOk && hasher.status != TBLOB_OK) {
    bar.clear();
    rc = fail_msg(src, tblob_status_name(hasher.status), hasher.message);
  }
  for (size_t k = 0; k < fds.size(); ++k) {
    if (rc == kExitOk && ::fsync(fds[k]) != 0) rc = fail_errno(paths[k], errno);
    ::close(fds[k]);
  }
  bar.finish(rc == kExitOk);
  tblob_model_close(m);

  if (rc == kExitOk) {
    // The index: total_size counts tensor data bytes, as transformers writes it.
    std::vector<size_t> order(plan.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&plan](size_t x, size_t y) { return plan[x].name < plan[y].name; });
    const std::string ipath = tmp + "/model.safetensors.index.json";
    FILE *f = std::fopen(ipath.c_str(), "wbx");
    if (!f) {
      rc = fail_errno(ipath, errno);
    } else {
      {
        JsonWriter w(f);
        w.lit("{\"metadata\":{\"total_size\":");
        w.u64(total_bytes);
        w.lit("},\"weight_map\":{");
        for (size_t k = 0; k < order.size(); ++k) {
          if (k) w.raw(',');
          w.str(plan[order[k]].name.data(), plan[order[k]].name.size());  // whole name: a NUL too
          w.raw(':');
          w.str(shard_name(plan[order[k]].shard).c_str());
          w.maybe_flush();
        }
        w.lit("}}\n");
      }
      if (std::fflush(f) != 0 || ::fsync(fileno(f)) != 0) rc = fail_errno(ipath, errno);
      std::fclose(f);
      files.push_back("model.safetensors.index.json");
    }
  }
  for (size_t k = 0; k < json_files.size() && rc == kExitOk; ++k) {
    const std::string p = tmp + "/" + json_files[k].name;
    const size_t slash = json_files[k].name.find('/');
    if (slash != std::string::npos && ::mkdir((tmp + "/" + json_files[k].name.substr(0, slash)).c_str(), 0755) != 0 &&
        errno != EEXIST) {
      rc = fail_errno(p, errno);
      break;
    }
    if (out_dtype != kKeep && json_files[k].name == "config.json") {
      // The tensors are plain floats now: a quantization block would make loaders treat them
      // as quantized.
      std::string rewritten;
      bool changed = false;
      if (!drop_quantization(json_files[k].bytes, &rewritten, &changed))
        std::fprintf(stderr, "tensorblob export: %s: not a JSON object; copied unchanged\n", json_files[k].name.c_str());
      else if (changed)
        json_files[k].bytes.swap(rewritten);
    }
    if (!write_file(p, json_files[k].bytes.data(), json_files[k].bytes.size())) {
      // Two layers with one name: the first wins (files are written once).
      if (errno == EEXIST) continue;
      rc = fail_errno(p, errno);
    } else {
      files.push_back(json_files[k].name);
      file_bytes += json_files[k].bytes.size();
    }
  }
  if (rc == kExitOk) {
    // The directory's entries are durable before it takes the final name.
    const int dfd = ::open(tmp.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
    if (out_dir_state(out_dir) == 2) rc = fail_msg(out_dir, "TBLOB_E_IO", "appeared during the export; left as it was");
    else if (::rename(tmp.c_str(), out_dir) != 0) rc = fail_errno(out_dir, errno);
  }
  if (rc != kExitOk) {
    remove_tree(tmp);
    return rc;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (a.json) {
    JsonWriter w;
    w.lit("{\"path\":");
    w.str(src);
    w.lit(",\"ok\":true");
    w.field("out", out_dir);
    w.field("dtype", out_dtype == kKeep ? "keep" : tblob_dtype_name(out_dtype));
    w.field("verified", verified);
    w.lit(",\"files\":[");
    for (size_t k = 0; k < files.size(); ++k) {
      if (k) w.raw(',');
      w.str(files[k].c_str());
    }
    w.raw(']');
    w.field_u64("shards", shards);
    w.field_u64("tensors", plan.size());
    w.field_u64("tensor_bytes", total_bytes);
    w.field_u64("bytes", file_bytes);
    char sec[32];
    std::snprintf(sec, sizeof sec, "%.3f", secs);
    w.lit(",\"seconds\":");
    w.raw(sec);
    w.raw('}');
    w.flush_line(stdout);
  } else {
    std::printf("%s: %zu tensors, %u shard%s, %s in %.1f s\n", out_dir, plan.size(), shards, shards == 1 ? "" : "s",
                human_bytes(file_bytes).c_str(), secs);
  }
  return kExitOk;
}

}  // namespace tbcli
