//go:build cgo

package tensorblob

/*
#include <stdlib.h>
#include "tensorblob.h"

// A malloc-backed allocator that counts live allocations, so tests can check that closing
// everything returns every byte the library took through the allocator hook.
static long long tg_live_allocs;
static long long tg_total_allocs;

static void *tg_count_alloc(void *opaque, size_t size) {
  (void)opaque;
  void *p = malloc(size ? size : 1);
  if (p) {
    __atomic_add_fetch(&tg_live_allocs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&tg_total_allocs, 1, __ATOMIC_RELAXED);
  }
  return p;
}
static void tg_count_free(void *opaque, void *ptr, size_t size) {
  (void)opaque;
  (void)size;
  if (ptr) {
    __atomic_sub_fetch(&tg_live_allocs, 1, __ATOMIC_RELAXED);
    free(ptr);
  }
}
static tblob_allocator tg_counting = {.struct_size = (uint32_t)sizeof(tblob_allocator),
                                      .alloc = tg_count_alloc,
                                      .free = tg_count_free,
                                      .opaque = NULL};
static const tblob_allocator *tg_counting_allocator(void) { return &tg_counting; }
static long long tg_live(void) { return __atomic_load_n(&tg_live_allocs, __ATOMIC_RELAXED); }
static long long tg_total(void) { return __atomic_load_n(&tg_total_allocs, __ATOMIC_RELAXED); }
*/
import "C"

import "sync/atomic"

// countAllocations routes every handle opened afterwards through the counting allocator
// (tests only).
var countAllocations atomic.Bool

// allocator returns the allocator handles are opened with: nil (libc) unless counting.
func allocator() *C.tblob_allocator {
	if countAllocations.Load() {
		return C.tg_counting_allocator()
	}
	return nil
}

// allocationCounts returns the live and total allocations made through the counting allocator.
func allocationCounts() (live, total int64) {
	return int64(C.tg_live()), int64(C.tg_total())
}
