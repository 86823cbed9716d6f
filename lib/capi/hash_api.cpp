// The extern "C" hash helpers that bindings and tools need whatever formats are built.
#include "hash/fnv1a.h"
#include "tensorblob.h"

extern "C" {

// FNV-1a 64 (SLM1's name hash): the standard basis and prime over the exact bytes.
TBLOB_API uint64_t tblob_fnv1a64(const void *data, size_t len) noexcept {
  return tblob::fnv1a64(data ? data : "", data ? len : 0);
}

}  // extern "C"
