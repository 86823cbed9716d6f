// The range validator shared by every format: data ranges must tile a region exactly
// (no hole, no overlap, first at 0), checked in (begin, end) order the way the safetensors
// reference does, then the region's length.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace tblob {

// Orders items (fields begin, end, order, entry_status) by (begin, end, order). Writers lay
// tensors out in order, so an already sorted table costs one pass. True when it reordered.
template <class T>
bool sort_ranges(T *items, size_t n) {
  auto less = [](const T &a, const T &b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.end != b.end) return a.end < b.end;
    return a.order < b.order;
  };
  if (std::is_sorted(items, items + n, less)) return false;
  std::sort(items, items + n, less);
  return true;
}

// Walks sorted items the way the safetensors reference does: each must begin where the
// previous ended (TBLOB_E_OFFSETS), then its own per-entry status applies. On failure *bad
// is the position and *cursor the offset it should have started at; on success *cursor is
// the covered length.
template <class T>
Status walk_tiling(const T *items, size_t n, size_t *bad, uint64_t *cursor) {
  uint64_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    if (items[i].begin != at || items[i].end < items[i].begin) {
      *bad = i;
      *cursor = at;
      return TBLOB_E_OFFSETS;
    }
    if (items[i].entry_status != TBLOB_OK) {
      *bad = i;
      *cursor = at;
      return items[i].entry_status;
    }
    at = items[i].end;
  }
  *cursor = at;
  return TBLOB_OK;
}

template <class T>
Status check_tiling(T *items, size_t n, size_t *bad, uint64_t *cursor) {
  sort_ranges(items, n);
  return walk_tiling(items, n, bad, cursor);
}

// The covered length must equal the region's: TBLOB_E_TRAILING_BYTES or TBLOB_E_TRUNCATED.
inline Status check_region_length(uint64_t covered, uint64_t available) {
  if (covered == available) return TBLOB_OK;
  return covered < available ? TBLOB_E_TRAILING_BYTES : TBLOB_E_TRUNCATED;
}

}  // namespace tblob
