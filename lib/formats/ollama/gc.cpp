// Garbage collection: files in blobs/ that no manifest references, and temporary manifests
// (manifests/<host>/<ns>/<model>/.tblob-tmp-*) left by an interrupted import. Dry run by default.
// Refuses when any manifest cannot be read (its blobs would look unreferenced: Ollama's
// "corrupt manifests detected, skipping prune"). Only files named like blobs, partial
// downloads or temporary files are ever listed; anything else, and any symlink or
// directory, is left alone.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "formats/ollama/ollama.h"
#include "io/file.h"

namespace tblob {
namespace ollama {

namespace {

struct Hex {
  char h[64];
};

struct Entry {
  const char *name;  // as reported: "sha256-..." in blobs/, or "manifests/.../.tblob-tmp-..."
  size_t len;
  uint32_t kind;
  uint64_t size;
  int dirfd;         // -1: blobs/
  const char *base;  // the name inside dirfd
};

bool is_hex64(const char *p) {
  for (int i = 0; i < 64; ++i)
    if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f'))) return false;
  return true;
}

// 0: not ours to touch.
uint32_t classify(const char *name, size_t n) {
  if (digest_valid(name, n, DigestForm::kFile)) return TBLOB_GC_UNREFERENCED;
  if (n > kDigestChars && std::memcmp(name, "sha256-", 7) == 0 && is_hex64(name + 7) &&
      std::strncmp(name + kDigestChars, "-partial", 8) == 0)
    return TBLOB_GC_PARTIAL;
  if (std::strncmp(name, ".tblob-tmp-", 11) == 0) return TBLOB_GC_TEMP;
  // Ollama's os.CreateTemp(blobs, "sha256-"): "sha256-" + digits.
  if (n > 7 && n < kDigestChars && std::memcmp(name, "sha256-", 7) == 0) {
    bool digits = true;
    for (size_t i = 7; i < n; ++i) digits = digits && name[i] >= '0' && name[i] <= '9';
    if (digits) return TBLOB_GC_TEMP;
  }
  return 0;
}

constexpr char kTmpPrefix[] = ".tblob-tmp-";

// Whether a file modified at mtime is too young to collect: with min_age 0 none is, even one
// whose timestamp lies a second past `now` (a file system's clock can run ahead of time()'s
// coarse one at a second's turn, which left a killed import's temporary behind).
bool too_young(int64_t now, int64_t mtime, int64_t min_age) { return min_age > 0 && now - mtime < min_age; }

// Temporary manifests, exactly three directory levels under manifests/ (where import writes
// them); directories are opened without following symlinks and only regular files are listed.
// Each directory holding one stays open in *fds for the removal.
bool scan_manifest_temps(int dirfd, const std::string &rel, int level, int64_t now, int64_t min_age,
                         Arena *arena, PodVec<Entry> *entries, PodVec<int> *fds) {
  const int fd = open_dir_nofollow(dirfd, ".");
  if (fd < 0) return true;
  DIR *dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return true;
  }
  int kept = -1;
  bool ok = true;
  while (ok) {
    struct dirent *e = ::readdir(dir);
    if (!e) break;
    const char *name = e->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
    struct stat stt;
    if (::fstatat(::dirfd(dir), name, &stt, AT_SYMLINK_NOFOLLOW) != 0) continue;
    const std::string path = rel + "/" + name;
    if (level < 3) {
      if (!S_ISDIR(stt.st_mode) || name[0] == '.') continue;
      const int sub = open_dir_nofollow(::dirfd(dir), name);
      if (sub < 0) continue;
      ok = scan_manifest_temps(sub, path, level + 1, now, min_age, arena, entries, fds);
      ::close(sub);
      continue;
    }
    if (std::strncmp(name, kTmpPrefix, sizeof(kTmpPrefix) - 1) != 0 || !S_ISREG(stt.st_mode)) continue;
    if (too_young(now, static_cast<int64_t>(stt.st_mtime), min_age)) continue;  // an import in progress
    if (kept < 0) {
      kept = open_dir_nofollow(::dirfd(dir), ".");
      if (kept < 0) continue;
      if (!fds->push(kept)) {
        ::close(kept);
        ok = false;
        break;
      }
    }
    char *full = arena->copy(path.c_str(), path.size() + 1);
    Entry en{full, path.size(), TBLOB_GC_TEMP, static_cast<uint64_t>(stt.st_size), kept,
             full ? full + path.size() - std::strlen(name) : nullptr};
    ok = full && entries->push(en);
  }
  ::closedir(dir);
  return ok;
}

}  // namespace

Status gc_store(const tblob_store &s, const tblob_gc_options *opt, tblob_gc_result *res, const Diag &diag) {
  tblob_gc_options o = TBLOB_GC_OPTIONS_INIT;
  if (opt) {
    const size_t n = opt->struct_size;
    if (n >= offsetof(tblob_gc_options, flags) + sizeof(uint32_t)) o.flags = opt->flags;
    if (n >= offsetof(tblob_gc_options, user) + sizeof(void *)) {
      o.on_entry = opt->on_entry;
      o.user = opt->user;
    }
    if (n >= offsetof(tblob_gc_options, min_age_seconds) + sizeof(int64_t)) o.min_age_seconds = opt->min_age_seconds;
  }
  tblob_gc_result r = TBLOB_GC_RESULT_INIT;
  PodVec<ListedName> names(&s.alloc);
  Status st = list_manifest_names(s, &names, diag);
  if (st != TBLOB_OK) return st;
  PodVec<Hex> refs(&s.alloc);
  for (size_t i = 0; i < names.size(); ++i) {
    ++r.manifests;
    if (names[i].status != TBLOB_OK)
      return diag.fail(TBLOB_E_OLLAMA_CORRUPT_STORE, TBLOB_NO_OFFSET, -1,
                       "manifest entry %s cannot be read (%s); nothing is collected", names[i].raw,
                       ::tblob::status_name(names[i].status));
    tblob_manifest *man = nullptr;
    tblob_diag inner = TBLOB_DIAG_INIT;
    Diag d;
    d.out = &inner;
    st = load_manifest(s, names[i].name, &man, nullptr, d);
    if (st != TBLOB_OK)
      return diag.fail(TBLOB_E_OLLAMA_CORRUPT_STORE, TBLOB_NO_OFFSET, -1, "%s; nothing is collected", inner.message);
    for (size_t k = 0; k <= man->layers.size(); ++k) {
      const LayerRec &l = k == 0 ? man->config : man->layers[k - 1];
      Hex h;
      std::memcpy(h.h, l.digest + 7, 64);
      if (!refs.push(h)) {
        manifest_free(man);
        return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
      }
    }
    manifest_free(man);
  }
  std::sort(refs.data(), refs.data() + refs.size(),
            [](const Hex &a, const Hex &b) { return std::memcmp(a.h, b.h, 64) < 0; });
  size_t uniq = 0;
  for (size_t i = 0; i < refs.size(); ++i)
    if (uniq == 0 || std::memcmp(refs[uniq - 1].h, refs[i].h, 64) != 0) refs[uniq++] = refs[i];
  while (refs.size() > uniq) refs.pop();
  r.referenced_blobs = uniq;

  const int fd = ::openat(s.blobs_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot list %s/blobs", s.root);
  DIR *dir = ::fdopendir(fd);
  if (!dir) {
    ::close(fd);
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot list %s/blobs", s.root);
  }
  Arena arena(&s.alloc);
  PodVec<Entry> entries(&s.alloc);
  const int64_t now = static_cast<int64_t>(::time(nullptr));
  while (struct dirent *e = ::readdir(dir)) {
    const size_t n = std::strlen(e->d_name);
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    const uint32_t kind = classify(e->d_name, n);
    if (kind == 0) continue;
    struct stat stt;
    if (::fstatat(::dirfd(dir), e->d_name, &stt, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(stt.st_mode)) continue;
    if (kind == TBLOB_GC_UNREFERENCED) {
      Hex h;
      std::memcpy(h.h, e->d_name + 7, 64);
      if (std::binary_search(refs.data(), refs.data() + refs.size(), h,
                             [](const Hex &a, const Hex &b) { return std::memcmp(a.h, b.h, 64) < 0; }))
        continue;
    } else if (too_young(now, static_cast<int64_t>(stt.st_mtime), o.min_age_seconds)) {
      continue;  // may belong to a download or import in progress
    }
    const char *copy = arena.copy(e->d_name, n + 1);
    Entry en{copy, n, kind, static_cast<uint64_t>(stt.st_size), -1, copy};
    if (!en.name || !entries.push(en)) {
      ::closedir(dir);
      return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    }
  }
  PodVec<int> manifest_dirs(&s.alloc);
  struct CloseAll {
    PodVec<int> &v;
    ~CloseAll() {
      for (size_t i = 0; i < v.size(); ++i) ::close(v[i]);
    }
  } close_all{manifest_dirs};
  if (!scan_manifest_temps(s.manifests_fd, "manifests", 0, now, o.min_age_seconds, &arena, &entries,
                           &manifest_dirs)) {
    ::closedir(dir);
    return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
  }
  std::sort(entries.data(), entries.data() + entries.size(),
            [](const Entry &a, const Entry &b) { return std::strcmp(a.name, b.name) < 0; });
  Status result = TBLOB_OK;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry &en = entries[i];
    ++r.listed_files;
    r.listed_bytes += en.size;
    tblob_gc_entry ge;
    ge.struct_size = sizeof(ge);
    ge.kind = en.kind;
    ge.file_name = en.name;
    ge.file_name_len = en.len;
    ge.size = en.size;
    ge.removed = TBLOB_OK;
    if (o.flags & TBLOB_GC_REMOVE) {
      if (::unlinkat(en.dirfd >= 0 ? en.dirfd : ::dirfd(dir), en.base, 0) == 0) {
        ++r.removed_files;
        r.removed_bytes += en.size;
      } else {
        ge.removed = TBLOB_E_IO;
        if (result == TBLOB_OK)
          result = diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot remove %s%s: %s", en.dirfd >= 0 ? "" : "blobs/", en.name, std::strerror(errno));
      }
    }
    if (o.on_entry && o.on_entry(o.user, &ge) != 0) {
      ::closedir(dir);
      return diag.fail(TBLOB_E_CANCELLED, TBLOB_NO_OFFSET, -1, "gc cancelled by the callback");
    }
  }
  ::closedir(dir);
  if (res && res->struct_size >= sizeof(tblob_gc_result)) {
    const uint32_t size = res->struct_size;
    *res = r;
    res->struct_size = size;
  }
  return result;
}

}  // namespace ollama
}  // namespace tblob
