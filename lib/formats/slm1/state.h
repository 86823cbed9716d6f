// What an open SLM1 model keeps beside the generic tensor table (the parsed header and
// directory, the lookup structures and the caller's names) and the name lookup over it
// (docs/slm1.md section 9). Allocated in the model's arena (trivially destructible, released
// with it) and reached through tblob_model::ext.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"
#include "core/limits.h"
#include "core/status.h"
#include "formats/slm1/format.h"
#include "table/model.h"

namespace tblob {
namespace slm1 {

struct HashSlot {
  uint64_t hash;
  uint64_t index;  // directory index
};

struct Listed {
  uint64_t hash;
  const char *name;  // arena copy
  size_t len;
};

struct State {
  Header header;
  uint32_t tokenizer_kind = 0;
  const uint8_t *file = nullptr;
  uint64_t file_len = 0;   // the file's length (a byte source: its declared size)
  uint64_t in_memory = 0;  // bytes at `file`: file_len, or a byte source's prefix
  const Entry *entries = nullptr;
  uint32_t count = 0;
  bool sorted = true;                  // hashes strictly increasing: index == position
  bool checksum_verified = false;
  const uint64_t *hashes = nullptr;    // sorted directories: the hashes, dense (8 bytes each)
  const HashSlot *index = nullptr;     // unsorted directories: (hash, index) ascending
  const Listed *listed = nullptr;      // the caller's names, ascending by hash, distinct
  size_t listed_count = 0;
  const uint32_t *entry_listed = nullptr;  // per entry: listed position + 1, or 0
  const uint64_t *logical_shapes = nullptr;  // per entry: 4 dims as stored (q4_0 unhalved)
};

// nullptr unless m is an open SLM1 model.
inline const State *state_of(const tblob_model *m) {
  return m && m->format == TBLOB_FORMAT_SLM1 ? static_cast<const State *>(m->ext) : nullptr;
}

// ---- Name lookup in SLM1 models (docs/slm1.md section 9): names are FNV-1a 64 hashed and the
// hash is found in the directory (binary search when sorted, else a sorted index built at
// open). Duplicate hashes never open; a hash that belongs to another name of the caller's
// list is refused, never guessed.

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

// The find operation of SLM1 models (slm1_format.cpp).
Status find_name(const tblob_model *m, const char *name, size_t len, uint64_t *index,
                 const Diag &diag);

}  // namespace slm1
}  // namespace tblob
