// Finding the files of a UQFF export: shard sets (`<stem>-N.uqff`, contiguous from 0, or as
// uqff_report.json lists them), residual.safetensors and the JSON assets beside them.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"
#include "core/limits.h"
#include "table/model.h"
#include "core/status.h"

namespace tblob {
namespace uqff {

struct SetPaths {
  explicit SetPaths(const Allocator *a) : shards(a), assets(a) {}
  const char *dir = ".";        // directory of the set (arena)
  PodVec<const char *> shards;  // in set order (arena strings)
  const char *residual = nullptr;
  const char *config = nullptr;
  const char *report = nullptr;
  PodVec<const char *> assets;  // every asset found, config and report included
};

// paths: one directory, one shard file (its siblings are found), or an explicit shard list.
Status discover(tblob_model *m, const char *const *paths, size_t path_count, const Limits &limits,
                SetPaths *out, const Diag &diag);

// "<stem>-<N>.uqff": true with *stem_len (bytes before "-N") and *index.
bool parse_shard_name(const char *name, size_t len, size_t *stem_len, uint64_t *index);

// Lists the regular files of dir: fn(name, len) per entry. False when dir cannot be read.
template <class Fn>
bool list_dir(const char *dir, Fn fn);

}  // namespace uqff
}  // namespace tblob

#include <dirent.h>
#include <cstring>

namespace tblob {
namespace uqff {
template <class Fn>
bool list_dir(const char *dir, Fn fn) {
  DIR *d = ::opendir(dir);
  if (!d) return false;
  bool ok = true;
  while (struct dirent *e = ::readdir(d)) {
    const size_t n = std::strlen(e->d_name);
    if ((n == 1 && e->d_name[0] == '.') || (n == 2 && e->d_name[0] == '.' && e->d_name[1] == '.')) continue;
    if (!fn(e->d_name, n)) {
      ok = false;
      break;
    }
  }
  ::closedir(d);
  return ok;
}
}  // namespace uqff
}  // namespace tblob
