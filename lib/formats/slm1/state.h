// What an open SLM1 model keeps beside the generic tensor table: the parsed header and
// directory, the lookup structures and the caller's names. Allocated in the model's arena
// (trivially destructible, released with it) and reached through tblob_model::ext.
#pragma once
#include <cstddef>
#include <cstdint>

#include "table/model.h"
#include "formats/slm1/entry.h"
#include "formats/slm1/header.h"

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
  uint64_t file_len = 0;
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

}  // namespace slm1
}  // namespace tblob
