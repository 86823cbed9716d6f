#include "formats/slm1/layout.h"

#include <cstdio>

#include "core/checked.h"
#include "core/range_check.h"
#include "formats/slm1/format.h"
#include "core/allocator.h"

namespace tblob {
namespace slm1 {

namespace {

using ull = unsigned long long;

// The shape check_tiling sorts and walks: offsets relative to tensor_data_offset, each end
// rounded up to 64 so that "next begin == previous aligned end" is the packing rule.
struct Region {
  uint64_t begin, end;  // end: align64(real end), relative
  uint64_t order;       // 2 x entry index, + 1 for the scale array
  Status entry_status;
  uint64_t real_end;    // absolute
};

uint64_t entry_at(const Header &h, uint32_t i) { return h.directory_offset + uint64_t{i} * kEntryBytes; }

const char *what(uint64_t order) { return order & 1 ? "scale array" : "payload"; }

Status region_fail(const Diag &diag, Status s, const Header &h, const Entry *e, uint64_t order,
                   const char *fmt, ull a, ull b = 0, ull c = 0) {
  const uint32_t i = static_cast<uint32_t>(order / 2);
  const uint64_t field = entry_at(h, i) + (order & 1 ? kEntScaleOffset : kEntByteOffset);
  char why[160];
  std::snprintf(why, sizeof(why), fmt, a, b, c);
  return diag.fail(s, field, i, "tensor %u (hash %016llx, entry at byte %llu): %s %s", i,
                   static_cast<ull>(e[i].hash), static_cast<ull>(entry_at(h, i)), what(order), why);
}

// First non-zero byte in [begin, end), or end.
uint64_t first_nonzero(const uint8_t *f, uint64_t begin, uint64_t end) {
  for (uint64_t k = begin; k < end; ++k)
    if (f[k] != 0) return k;
  return end;
}

}  // namespace

Status check_data_region(const uint8_t *f, uint64_t len, const Header &h, const Entry *e,
                         uint32_t n, const Allocator &a, const Diag &diag) {
  // 1. Inside the file; 2. aligned (each over every region, in directory order).
  for (int rule = 1; rule <= 2; ++rule) {
    for (uint32_t i = 0; i < n; ++i) {
      for (int part = 0; part < (e[i].dtype == kDtypeF32 ? 1 : 2); ++part) {
        const uint64_t off = part ? e[i].scale_offset : e[i].byte_offset;
        const uint64_t bytes = part ? e[i].scale_bytes : e[i].byte_length;
        const uint64_t order = 2 * uint64_t{i} + static_cast<uint64_t>(part);
        if (rule == 1 && !range_inside(off, bytes, len))
          return region_fail(diag, TBLOB_E_TRUNCATED, h, e, order,
                             "[%llu, +%llu) runs past the end of the %llu-byte file", off, bytes, len);
        if (rule == 2 && off % kAlign != 0)
          return region_fail(diag, TBLOB_E_SLM1_ALIGNMENT, h, e, order,
                             "offset %llu is not a multiple of 64", off);
      }
    }
  }
  // 3. Packed in offset order from tensor_data_offset.
  const uint64_t count = 2 * uint64_t{n};
  PodVec<Region> regions(&a);
  if (!regions.resize(count ? count : 1))
    return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory checking the data region");
  size_t k = 0;
  uint64_t lowest = UINT64_MAX, lowest_order = 0;
  for (uint32_t i = 0; i < n; ++i) {
    for (int part = 0; part < (e[i].dtype == kDtypeF32 ? 1 : 2); ++part) {
      const uint64_t off = part ? e[i].scale_offset : e[i].byte_offset;
      const uint64_t end = off + (part ? e[i].scale_bytes : e[i].byte_length);  // rule 1: no overflow
      Region r;
      r.order = 2 * uint64_t{i} + static_cast<uint64_t>(part);
      r.entry_status = TBLOB_OK;
      r.real_end = end;
      if (off < lowest) {
        lowest = off;
        lowest_order = r.order;
      }
      uint64_t aligned;
      if (!checked_align_up(end, kAlign, &aligned)) aligned = UINT64_MAX & ~(kAlign - 1);
      r.begin = off >= h.data_offset ? off - h.data_offset : 0;
      r.end = aligned >= h.data_offset ? aligned - h.data_offset : 0;
      regions[k++] = r;
    }
  }
  if (k > 0 && lowest < h.data_offset)
    return region_fail(diag, TBLOB_E_OFFSETS, h, e, lowest_order,
                       "at %llu starts before tensor_data_offset %llu (overlaps the header or directory)",
                       lowest, h.data_offset);
  size_t bad = 0;
  uint64_t cursor = 0;
  Status s = check_tiling(regions.data(), k, &bad, &cursor);
  if (s != TBLOB_OK) {
    const Region &r = regions[bad];
    const uint64_t at = h.data_offset + r.begin, want = h.data_offset + cursor;
    return region_fail(diag, TBLOB_E_OFFSETS, h, e, r.order,
                       at < want ? "at %llu overlaps the region before it; the next free 64-byte "
                                   "boundary is %llu"
                                 : "at %llu leaves a hole; it must start at %llu",
                       at, want);
  }
  // 4. Nothing after the last region.
  const uint64_t last_end = k ? regions[k - 1].real_end : h.data_offset;
  if (last_end != len)
    return diag.fail(TBLOB_E_TRAILING_BYTES, last_end, k ? static_cast<int64_t>(regions[k - 1].order / 2) : -1,
                     "%llu bytes follow the last %s, which ends at byte %llu",
                     static_cast<ull>(len - last_end), k ? what(regions[k - 1].order) : "directory entry",
                     static_cast<ull>(last_end));
  // 5. Zero padding: after the tokenizer section, and between regions.
  const uint64_t tok_end = h.tokenizer_offset + h.tokenizer_length;
  uint64_t z = first_nonzero(f, tok_end, h.directory_offset);
  if (z != h.directory_offset)
    return diag.fail(TBLOB_E_SLM1_PADDING, z, -1,
                     "padding byte %llu (between the tokenizer end %llu and the directory) is 0x%02x, not 0",
                     static_cast<ull>(z), static_cast<ull>(tok_end), f[z]);
  for (size_t r = 0; r + 1 < k; ++r) {
    const uint64_t gap_end = h.data_offset + regions[r + 1].begin;
    z = first_nonzero(f, regions[r].real_end, gap_end);
    if (z != gap_end) {
      const uint32_t i = static_cast<uint32_t>(regions[r].order / 2);
      return diag.fail(TBLOB_E_SLM1_PADDING, z, i,
                       "padding byte %llu after tensor %u's %s (hash %016llx) is 0x%02x, not 0",
                       static_cast<ull>(z), i, what(regions[r].order), static_cast<ull>(e[i].hash), f[z]);
    }
  }
  return TBLOB_OK;
}

}  // namespace slm1
}  // namespace tblob
