#include "formats/slm1/entry.h"

#include <cstdio>
#include <cstring>

#include "core/checked.h"
#include "formats/slm1/format.h"

namespace tblob {
namespace slm1 {

namespace {

using ull = unsigned long long;

bool bad(EntryProblem *p, Status s, uint64_t field, const char *fmt, ull a = 0, ull b = 0,
         ull c = 0) {
  p->status = s;
  p->field = field;
  std::snprintf(p->why, sizeof(p->why), fmt, a, b, c);
  return false;
}

}  // namespace

void decode_entry(const uint8_t *p, Entry *e) {
  *e = Entry{};
  e->hash = load_le64(p + kEntHash);
  e->dtype = load_le32(p + kEntDtype);
  e->rank = load_le32(p + kEntRank);
  for (int i = 0; i < 4; ++i) e->dims[i] = load_le32(p + kEntDims + 4 * i);
  e->byte_offset = load_le64(p + kEntByteOffset);
  e->byte_length = load_le64(p + kEntByteLength);
  e->scale_offset = load_le64(p + kEntScaleOffset);
  e->block_size = load_le32(p + kEntBlockSize);
  e->reserved = load_le32(p + kEntReserved);
}

void encode_entry(const Entry &e, uint8_t out[64]) {
  std::memset(out, 0, kEntryBytes);
  store_le64(out + kEntHash, e.hash);
  store_le32(out + kEntDtype, e.dtype);
  store_le32(out + kEntRank, e.rank);
  for (int i = 0; i < 4; ++i) store_le32(out + kEntDims + 4 * i, e.dims[i]);
  store_le64(out + kEntByteOffset, e.byte_offset);
  store_le64(out + kEntByteLength, e.byte_length);
  store_le64(out + kEntScaleOffset, e.scale_offset);
  store_le32(out + kEntBlockSize, e.block_size);
  store_le32(out + kEntReserved, e.reserved);
}

bool check_entry_shape(Entry *e, uint32_t max_rank, EntryProblem *p) {
  if (e->dtype != kDtypeF32 && e->dtype != kDtypeQ8_0 && e->dtype != kDtypeQ4_0)
    return bad(p, TBLOB_E_DTYPE, kEntDtype, "dtype %llu is not 1 (f32), 2 (q8_0) or 3 (q4_0)", e->dtype);
  if (e->rank < 1 || e->rank > kMaxRank)
    return bad(p, TBLOB_E_SLM1_ENTRY, kEntRank, "rank %llu is outside 1-4", e->rank);
  for (uint32_t i = 0; i < kMaxRank; ++i) {
    if (i < e->rank && e->dims[i] == 0)
      return bad(p, TBLOB_E_SLM1_ENTRY, kEntDims + 4 * i, "dims[%llu] is 0 (rank %llu)", i, e->rank);
    if (i >= e->rank && e->dims[i] != 0)
      return bad(p, TBLOB_E_SLM1_ENTRY, kEntDims + 4 * i,
                 "dims[%llu] is %llu beyond rank %llu; it must be 0", i, e->dims[i], e->rank);
  }
  if (e->reserved != 0)
    return bad(p, TBLOB_E_SLM1_ENTRY, kEntReserved, "reserved is 0x%08llx; it must be 0", e->reserved);
  const uint64_t cols = e->dims[e->rank - 1];
  switch (e->dtype) {
    case kDtypeF32:
      if (e->block_size != 0)
        return bad(p, TBLOB_E_SLM1_ENTRY, kEntBlockSize, "f32 block_size is %llu; it must be 0", e->block_size);
      if (e->scale_offset != 0)
        return bad(p, TBLOB_E_SLM1_ENTRY, kEntScaleOffset, "f32 scale_offset is %llu; it must be 0",
                   e->scale_offset);
      break;
    case kDtypeQ8_0:
      if (e->block_size != cols)
        return bad(p, TBLOB_E_SLM1_ENTRY, kEntBlockSize, "q8_0 block_size is %llu; it must equal cols %llu",
                   e->block_size, cols);
      break;
    default:  // q4_0
      if (e->block_size < 2 || e->block_size % 2 != 0 || cols % e->block_size != 0)
        return bad(p, TBLOB_E_SLM1_ENTRY, kEntBlockSize,
                   "q4_0 block_size is %llu; it must be even, at least 2 and divide cols %llu",
                   e->block_size, cols);
      break;
  }
  if (e->rank > max_rank)
    return bad(p, TBLOB_E_LIMIT_RANK, kEntRank, "rank %llu is above the limit of %llu", e->rank, max_rank);
  uint64_t rows = 1;
  for (uint32_t i = 0; i + 1 < e->rank; ++i)
    if (!checked_mul(rows, e->dims[i], &rows))
      return bad(p, TBLOB_E_SHAPE_OVERFLOW, kEntDims, "the row count overflows 64 bits");
  uint64_t n, payload, scales = 0;
  if (!checked_mul(rows, cols, &n))
    return bad(p, TBLOB_E_SHAPE_OVERFLOW, kEntDims, "the element count overflows 64 bits");
  switch (e->dtype) {
    case kDtypeF32:
      if (!checked_mul(n, 4, &payload))
        return bad(p, TBLOB_E_SHAPE_OVERFLOW, kEntDims, "the f32 byte count of %llu elements overflows 64 bits", n);
      break;
    case kDtypeQ8_0:
      payload = n;
      if (!checked_mul(rows, 4, &scales))
        return bad(p, TBLOB_E_SHAPE_OVERFLOW, kEntDims, "the q8_0 scale byte count overflows 64 bits");
      break;
    default:
      payload = n / 2;  // cols is even: an even block_size divides it
      if (!checked_mul(rows, cols / e->block_size, &scales) || !checked_mul(scales, 4, &scales))
        return bad(p, TBLOB_E_SHAPE_OVERFLOW, kEntDims, "the q4_0 scale byte count overflows 64 bits");
      break;
  }
  size_t fits;
  if (!to_size(payload, &fits) || !to_size(scales, &fits) || !to_size(n, &fits))
    return bad(p, TBLOB_E_SHAPE_OVERFLOW, kEntDims, "%llu elements do not fit this platform's size_t", n);
  e->rows = rows;
  e->cols = cols;
  e->elements = n;
  e->payload_bytes = payload;
  e->scale_bytes = scales;
  return true;
}

}  // namespace slm1
}  // namespace tblob
