// The store root. Every path below the root is walked with openat() from directory
// descriptors opened with O_NOFOLLOW, one validated component at a time, so a name, a
// digest or a symlink planted in the store can never lead outside it.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <new>
#include <unistd.h>

#include "core/checked.h"
#include "formats/ollama/ollama.h"
#include "io/file.h"

namespace tblob {
namespace ollama {

namespace {


// Why openat(dir, name) failed, in store terms.
Status classify_open_error(int dir, const char *name, int err, Status missing) {
  struct stat st;
  if (::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) return TBLOB_E_OLLAMA_PATH;
    if (err == ENOTDIR) return TBLOB_E_OLLAMA_NOT_A_FILE;
  }
  if (err == ENOENT || err == ENOTDIR) return missing;
  if (err == ELOOP) return TBLOB_E_OLLAMA_PATH;
  return TBLOB_E_IO;
}

bool mkdir_p(const char *path) {
  char buf[4096];
  const size_t n = std::strlen(path);
  if (n == 0 || n >= sizeof(buf)) return false;
  std::memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; ++i) {
    if (buf[i] == '/' || buf[i] == '\0') {
      const char c = buf[i];
      buf[i] = '\0';
      if (::mkdir(buf, 0755) != 0 && errno != EEXIST) return false;
      buf[i] = c;
    }
  }
  return true;
}

int open_subdir(int root, const char *name, bool create, Status *why) {
  if (create && ::mkdirat(root, name, 0755) != 0 && errno != EEXIST) {
    *why = TBLOB_E_IO;
    return -1;
  }
  int fd = open_dir_nofollow(root, name);
  if (fd < 0) *why = classify_open_error(root, name, errno, TBLOB_E_OLLAMA_NOT_A_STORE);
  return fd;
}

}  // namespace

bool looks_like_store(const char *dir) {
  int root = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return false;
  struct stat a, b;
  const bool ok = ::fstatat(root, "manifests", &a, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(a.st_mode) &&
                  ::fstatat(root, "blobs", &b, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(b.st_mode);
  ::close(root);
  return ok;
}

Status store_open(const char *root, const tblob_store_options *options, tblob_store **out,
                  const Diag &diag) {
  *out = nullptr;
  uint32_t flags = 0;
  uint64_t max_manifest = TBLOB_OLLAMA_MAX_MANIFEST, max_config = TBLOB_OLLAMA_MAX_CONFIG;
  const tblob_allocator *hook = nullptr;
  if (options) {
    const size_t n = options->struct_size;
    if (n < offsetof(tblob_store_options, flags) + sizeof(uint32_t))
      return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                       "invalid argument: options->struct_size (use TBLOB_STORE_OPTIONS_INIT)");
    flags = options->flags;
    if (n >= offsetof(tblob_store_options, max_manifest_bytes) + sizeof(uint64_t))
      max_manifest = options->max_manifest_bytes;
    if (n >= offsetof(tblob_store_options, max_config_bytes) + sizeof(uint64_t))
      max_config = options->max_config_bytes;
    if (n >= offsetof(tblob_store_options, allocator) + sizeof(void *)) hook = options->allocator;
  }
  char fallback[4096];
  if (!root) {
    const char *env = std::getenv("OLLAMA_MODELS");
    if (env && *env) {
      root = env;
    } else {
      const char *home = std::getenv("HOME");
      if (!home || !*home)
        return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                         "no store root given and neither OLLAMA_MODELS nor HOME is set");
      const int k = std::snprintf(fallback, sizeof(fallback), "%s/.ollama/models", home);
      if (k < 0 || static_cast<size_t>(k) >= sizeof(fallback))
        return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "HOME is too long");
      root = fallback;
    }
  }
  const bool create = (flags & TBLOB_STORE_CREATE) != 0;
  if (create && !mkdir_p(root))
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot create store root %s: %s", root,
                     std::strerror(errno));
  Allocator a(hook);
  void *mem = a.alloc(sizeof(tblob_store));
  if (!mem) return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  tblob_store *s = new (mem) tblob_store(hook);
  s->max_manifest_bytes = max_manifest;
  s->max_config_bytes = max_config;
  s->root_len = std::strlen(root);
  s->root = static_cast<char *>(a.alloc(s->root_len + 1));
  if (!s->root) {
    store_close(s);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  std::memcpy(s->root, root, s->root_len + 1);
  // The root itself may be a symlink (a models directory moved to another disk).
  s->root_fd = ::open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (s->root_fd < 0) {
    const int e = errno;
    store_close(s);
    return diag.fail(e == ENOENT ? TBLOB_E_NOT_FOUND : e == ENOTDIR ? TBLOB_E_OLLAMA_NOT_A_STORE : TBLOB_E_IO,
                     TBLOB_NO_OFFSET, -1, "cannot open store root %s: %s", root, std::strerror(e));
  }
  Status why = TBLOB_OK;
  s->manifests_fd = open_subdir(s->root_fd, "manifests", create, &why);
  if (s->manifests_fd >= 0) s->blobs_fd = open_subdir(s->root_fd, "blobs", create, &why);
  if (s->manifests_fd < 0 || s->blobs_fd < 0) {
    const char *which = s->manifests_fd < 0 ? "manifests" : "blobs";
    store_close(s);
    return diag.fail(why, TBLOB_NO_OFFSET, -1,
                     why == TBLOB_E_OLLAMA_PATH ? "%s/%s is a symlink; store directories must be real"
                     : why == TBLOB_E_OLLAMA_NOT_A_STORE ? "%s has no %s/ directory: not an Ollama store"
                                                         : "cannot open %s/%s",
                     root, which);
  }
  *out = s;
  return TBLOB_OK;
}

void store_close(tblob_store *s) {
  if (!s) return;
  if (s->root_fd >= 0) ::close(s->root_fd);
  if (s->manifests_fd >= 0) ::close(s->manifests_fd);
  if (s->blobs_fd >= 0) ::close(s->blobs_fd);
  Allocator a = s->alloc;
  if (s->root) a.free(s->root, s->root_len + 1);
  s->~tblob_store();
  a.free(s, sizeof(tblob_store));
}

void free_bytes(const tblob_store &s, FileBytes *b) {
  if (b->data) s.alloc.free(b->data, b->cap);
  *b = FileBytes{};
}

Status read_manifest_file(const tblob_store &s, const ModelName &name, FileBytes *out,
                          const Diag &diag) {
  *out = FileBytes{};
  char full[kFullNameBuf];
  format_full_name(name, full);
  const char *parts[3] = {name.host, name.ns, name.model};
  int dir = s.manifests_fd;
  int owned = -1;
  for (const char *part : parts) {
    const int fd = open_dir_nofollow(dir, part);
    if (fd < 0) {
      const Status st = classify_open_error(dir, part, errno, TBLOB_E_OLLAMA_MODEL_NOT_FOUND);
      if (owned >= 0) ::close(owned);
      return diag.fail(st, TBLOB_NO_OFFSET, -1,
                       st == TBLOB_E_OLLAMA_PATH ? "manifest path of %s passes through a symlink (%s)"
                       : st == TBLOB_E_OLLAMA_MODEL_NOT_FOUND ? "no model %s in the store (%s)"
                                                              : "cannot open the manifest directory of %s (%s)",
                       full, part);
    }
    if (owned >= 0) ::close(owned);
    owned = dir = fd;
  }
  const int fd = open_nofollow(dir, name.tag);
  if (fd < 0) {
    const Status st = classify_open_error(dir, name.tag, errno, TBLOB_E_OLLAMA_MODEL_NOT_FOUND);
    ::close(owned);
    return diag.fail(st, TBLOB_NO_OFFSET, -1,
                     st == TBLOB_E_OLLAMA_PATH ? "manifest of %s is a symlink"
                     : st == TBLOB_E_OLLAMA_MODEL_NOT_FOUND ? "no model %s in the store"
                                                            : "cannot open the manifest of %s",
                     full);
  }
  ::close(owned);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot stat the manifest of %s", full);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return diag.fail(TBLOB_E_OLLAMA_NOT_A_FILE, TBLOB_NO_OFFSET, -1,
                     "manifest of %s is a %s, not a file", full, S_ISDIR(st.st_mode) ? "directory" : "special file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > s.max_manifest_bytes) {
    ::close(fd);
    return diag.fail(TBLOB_E_OLLAMA_LIMIT_MANIFEST, TBLOB_NO_OFFSET, -1,
                     "manifest of %s is %llu bytes, above the limit of %llu", full,
                     static_cast<unsigned long long>(size),
                     static_cast<unsigned long long>(s.max_manifest_bytes));
  }
  out->mtime = static_cast<int64_t>(st.st_mtime);
  // With the limit raised, a manifest can outgrow a 32-bit address space: refused by size,
  // not cut to the low bits of its length.
  size_t cap = 0;
  if (!to_size(size, &cap) || cap == SIZE_MAX) {
    ::close(fd);
    return diag.fail(TBLOB_E_UNSUPPORTED, TBLOB_NO_OFFSET, -1,
                     "manifest of %s is %llu bytes, more than a %u-bit address space holds", full,
                     static_cast<unsigned long long>(size), static_cast<unsigned>(sizeof(size_t) * 8));
  }
  ++cap;
  out->data = static_cast<uint8_t *>(s.alloc.alloc(cap));
  if (!out->data) {
    ::close(fd);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  out->cap = cap;
  // Read what is there now (one size snapshot; a file growing meanwhile is cut at size).
  size_t got = 0;
  while (got < size) {
    const ssize_t r = ::read(fd, out->data + got, static_cast<size_t>(size) - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  out->len = got;
  return TBLOB_OK;
}

size_t blob_path(const tblob_store &s, const char *digest, char *buf, size_t cap) {
  const size_t need = s.root_len + 7 + kDigestChars;
  if (need + 1 > cap || !digest_valid(digest, kDigestChars, DigestForm::kManifest)) return 0;
  std::memcpy(buf, s.root, s.root_len);
  std::memcpy(buf + s.root_len, "/blobs/sha256-", 14);
  std::memcpy(buf + s.root_len + 14, digest + 7, 64);
  buf[need] = '\0';
  return need;
}

Status open_blob(const tblob_store &s, const char *digest, size_t n, int *fd, struct stat *st,
                 const Diag &diag) {
  *fd = -1;
  char file[kDigestBuf];
  Status r = blob_file_name(digest, n, file, diag);
  if (r != TBLOB_OK) return r;
  const int f = open_nofollow(s.blobs_fd, file);
  if (f < 0) {
    const int e = errno;
    Status why = classify_open_error(s.blobs_fd, file, e, TBLOB_E_OLLAMA_BLOB_MISSING);
    if (why == TBLOB_E_OLLAMA_BLOB_MISSING) {
      char partial[kDigestBuf + 16];
      std::snprintf(partial, sizeof(partial), "%s-partial", file);
      struct stat ps;
      if (::fstatat(s.blobs_fd, partial, &ps, AT_SYMLINK_NOFOLLOW) == 0) why = TBLOB_E_OLLAMA_BLOB_PARTIAL;
    }
    return diag.fail(why, TBLOB_NO_OFFSET, -1,
                     why == TBLOB_E_OLLAMA_BLOB_MISSING ? "blob %s is missing from the store"
                     : why == TBLOB_E_OLLAMA_BLOB_PARTIAL ? "blob %s exists only as a partial download (%s-partial)"
                     : why == TBLOB_E_OLLAMA_PATH ? "blob %s is a symlink; blobs must be files in the store"
                                                  : "cannot open blob %s",
                     file, file);
  }
  if (::fstat(f, st) != 0) {
    ::close(f);
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot stat blob %s", file);
  }
  if (!S_ISREG(st->st_mode)) {
    ::close(f);
    return diag.fail(TBLOB_E_OLLAMA_NOT_A_FILE, TBLOB_NO_OFFSET, -1, "blob %s is a %s, not a file", file,
                     S_ISDIR(st->st_mode) ? "directory" : "special file");
  }
  *fd = f;
  return TBLOB_OK;
}

namespace {

struct Walk {
  PodVec<ListedName> *out;
  Status err = TBLOB_OK;
};

// Lists the names in directory fd (taking ownership), skipping "." entries and dotfiles.
template <class Fn>
bool for_each_entry(int fd, Fn fn) {
  DIR *d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return false;
  }
  bool ok = true;
  while (struct dirent *e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    if (!fn(::dirfd(d), e->d_name)) {
      ok = false;
      break;
    }
  }
  ::closedir(d);
  return ok;
}

bool add_listed(Walk &w, const char *const parts[4], Status st) {
  ListedName l;
  std::memset(&l, 0, sizeof(l));
  l.status = st;
  size_t k = 0;
  for (int i = 0; i < 4 && parts[i]; ++i) {
    const size_t n = std::strlen(parts[i]);
    if (k + n + 2 >= sizeof(l.raw)) break;
    if (i) l.raw[k++] = i == 3 ? ':' : '/';
    std::memcpy(l.raw + k, parts[i], n);
    k += n;
  }
  l.raw[k] = '\0';
  bool complete = true;
  for (int i = 0; i < 4; ++i) complete = complete && parts[i];
  if (complete) {
    const NamePart kinds[4] = {NamePart::kHost, NamePart::kNamespace, NamePart::kModel, NamePart::kTag};
    bool valid = true;
    for (int i = 0; i < 4; ++i) valid = valid && name_part_valid(kinds[i], parts[i], std::strlen(parts[i]));
    if (!valid && l.status == TBLOB_OK) l.status = TBLOB_E_OLLAMA_NAME;
    if (valid) {
      char *dst[4] = {l.name.host, l.name.ns, l.name.model, l.name.tag};
      size_t *lens[4] = {&l.name.host_len, &l.name.ns_len, &l.name.model_len, &l.name.tag_len};
      for (int i = 0; i < 4; ++i) {
        *lens[i] = std::strlen(parts[i]);
        std::memcpy(dst[i], parts[i], *lens[i] + 1);
      }
    }
  }
  if (!w.out->push(l)) {
    w.err = TBLOB_E_OUT_OF_MEMORY;
    return false;
  }
  return true;
}

bool walk_level(Walk &w, int dirfd, const char *parts[4], int level) {
  return for_each_entry(dirfd, [&](int parent, const char *name) -> bool {
    parts[level] = name;
    for (int i = level + 1; i < 4; ++i) parts[i] = nullptr;
    struct stat st;
    if (::fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return true;
    if (S_ISLNK(st.st_mode)) return add_listed(w, parts, TBLOB_E_OLLAMA_PATH);
    if (level == 3) {
      return add_listed(w, parts, S_ISREG(st.st_mode) ? TBLOB_OK : TBLOB_E_OLLAMA_NOT_A_FILE);
    }
    if (!S_ISDIR(st.st_mode)) return true;  // Ollama globs exactly four levels
    const int fd = open_dir_nofollow(parent, name);
    if (fd < 0) return true;
    return walk_level(w, fd, parts, level + 1) || w.err == TBLOB_OK;
  });
}

}  // namespace

Status list_manifest_names(const tblob_store &s, PodVec<ListedName> *out, const Diag &diag) {
  Walk w;
  w.out = out;
  // A fresh open file description (not dup, which would share the directory offset with
  // another thread listing the same store).
  const int fd = open_dir_nofollow(s.manifests_fd, ".");
  if (fd < 0) return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot list %s/manifests", s.root);
  const char *parts[4] = {nullptr, nullptr, nullptr, nullptr};
  walk_level(w, fd, parts, 0);
  if (w.err != TBLOB_OK) return diag.fail_plain(w.err);
  std::sort(out->data(), out->data() + out->size(), [](const ListedName &a, const ListedName &b) {
    return std::strcmp(a.raw, b.raw) < 0;
  });
  return TBLOB_OK;
}

}  // namespace ollama
}  // namespace tblob
