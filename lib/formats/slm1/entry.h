// One 64-byte SLM1 directory entry (docs/slm1.md sections 5-6): decoding, encoding and the
// per-entry rules with the exact encoded sizes they imply.
#pragma once
#include <cstdint>

#include "core/status.h"

namespace tblob {
namespace slm1 {

struct Entry {
  // Stored fields.
  uint64_t hash = 0;
  uint32_t dtype = 0;
  uint32_t rank = 0;
  uint32_t dims[4] = {0, 0, 0, 0};
  uint64_t byte_offset = 0;
  uint64_t byte_length = 0;
  uint64_t scale_offset = 0;
  uint32_t block_size = 0;
  uint32_t reserved = 0;
  // Derived by check_entry_shape.
  uint64_t rows = 0;          // product of all dims but the last (1 for rank 1)
  uint64_t cols = 0;          // the last dim
  uint64_t elements = 0;      // rows x cols
  uint64_t payload_bytes = 0; // the exact byte_length for dtype and shape
  uint64_t scale_bytes = 0;   // 0 for f32
};

void decode_entry(const uint8_t *p, Entry *e);
void encode_entry(const Entry &e, uint8_t out[64]);

struct EntryProblem {
  Status status = TBLOB_OK;
  uint64_t field = 0;  // offset of the offending field inside the entry
  char why[160] = {0};
};

// Section 11 step 5 up to, not including, the byte_length comparison: dtype (TBLOB_E_DTYPE);
// rank, dims, reserved, block_size, f32 scale_offset (TBLOB_E_SLM1_ENTRY); rank above
// max_rank (TBLOB_E_LIMIT_RANK); element or byte counts overflowing 64 bits or size_t
// (TBLOB_E_SHAPE_OVERFLOW). Fills the derived fields on success.
bool check_entry_shape(Entry *e, uint32_t max_rank, EntryProblem *p);

}  // namespace slm1
}  // namespace tblob
