// Name lookup in SLM1 models (docs/slm1.md section 9): names are FNV-1a 64 hashed and the
// hash is found in the directory (binary search when sorted, else a sorted index built at
// open). Duplicate hashes never open; a hash that belongs to another name of the caller's
// list is refused, never guessed.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"
#include "core/limits.h"
#include "core/status.h"
#include "formats/slm1/state.h"

namespace tblob {
namespace slm1 {

// Checks the directory for duplicate hashes (TBLOB_E_HASH_COLLISION) and sets st->sorted,
// building st->index in the arena when the hashes are not strictly increasing.
Status index_directory(State *st, Arena *arena, const Diag &diag);

// The caller's names: hashed, checked for collisions among themselves, copied into the
// arena and attached to their entries (st->listed, st->entry_listed).
struct NameList {
  const char *const *names = nullptr;
  const size_t *lens = nullptr;
  size_t count = 0;
};
Status attach_names(State *st, const NameList &list, const Limits &limits, Arena *arena,
                    const Allocator &a, const Diag &diag);

// Directory index of the entry whose stored hash is `hash`.
bool find_hash(const State &st, uint64_t hash, uint64_t *index);

// tblob_model::find_fn for SLM1 models.
Status find_name(const tblob_model *m, const char *name, size_t len, uint64_t *index,
                 const Diag &diag);

}  // namespace slm1
}  // namespace tblob
