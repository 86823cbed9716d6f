#include "formats/slm1/lookup.h"

#include <algorithm>
#include <cstring>

#include "formats/slm1/format.h"
#include "core/allocator.h"
#include "hash/fnv1a.h"

namespace tblob {
namespace slm1 {

namespace {

using ull = unsigned long long;

uint64_t entry_at(const State &st, uint64_t i) { return st.header.directory_offset + i * kEntryBytes; }

Status collision(const State &st, uint64_t a, uint64_t b, const Diag &diag) {
  if (a > b) std::swap(a, b);
  return diag.fail(TBLOB_E_HASH_COLLISION, entry_at(st, b) + kEntHash, static_cast<int64_t>(b),
                   "tensors %llu and %llu (entries at bytes %llu and %llu) share name_hash %016llx",
                   static_cast<ull>(a), static_cast<ull>(b), static_cast<ull>(entry_at(st, a)),
                   static_cast<ull>(entry_at(st, b)), static_cast<ull>(st.entries[b].hash));
}

const Listed *find_listed(const State &st, uint64_t hash) {
  const Listed *end = st.listed + st.listed_count;
  const Listed *it = std::lower_bound(st.listed, end, hash,
                                      [](const Listed &l, uint64_t h) { return l.hash < h; });
  return it != end && it->hash == hash ? it : nullptr;
}

}  // namespace

Status index_directory(State *st, Arena *arena, const Diag &diag) {
  st->sorted = true;
  st->index = nullptr;
  for (uint32_t i = 1; i < st->count; ++i) {
    if (st->entries[i].hash == st->entries[i - 1].hash) return collision(*st, i - 1, i, diag);
    if (st->entries[i].hash < st->entries[i - 1].hash) st->sorted = false;
  }
  if (st->sorted) {
    // A dense copy of the hashes: the binary search then touches a few cache lines instead
    // of one per probe (entries are 64 bytes apart in the directory).
    uint64_t *h = static_cast<uint64_t *>(arena->alloc(sizeof(uint64_t) * (size_t{st->count} + 1)));
    if (!h) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory indexing the directory");
    for (uint32_t i = 0; i < st->count; ++i) h[i] = st->entries[i].hash;
    st->hashes = h;
    return TBLOB_OK;
  }
  // One allocation of count slots (the count is bounded by the directory bytes).
  HashSlot *slots = static_cast<HashSlot *>(arena->alloc(sizeof(HashSlot) * size_t{st->count}));
  if (!slots) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory indexing the directory");
  for (uint32_t i = 0; i < st->count; ++i) slots[i] = HashSlot{st->entries[i].hash, i};
  std::sort(slots, slots + st->count, [](const HashSlot &x, const HashSlot &y) {
    return x.hash != y.hash ? x.hash < y.hash : x.index < y.index;
  });
  for (uint32_t i = 1; i < st->count; ++i)
    if (slots[i].hash == slots[i - 1].hash) return collision(*st, slots[i - 1].index, slots[i].index, diag);
  st->index = slots;
  return TBLOB_OK;
}

Status attach_names(State *st, const NameList &list, const Limits &limits, Arena *arena,
                    const Allocator &a, const Diag &diag) {
  st->listed = nullptr;
  st->listed_count = 0;
  uint32_t *owner = static_cast<uint32_t *>(arena->alloc(sizeof(uint32_t) * (size_t{st->count} + 1)));
  if (!owner) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory attaching names");
  std::memset(owner, 0, sizeof(uint32_t) * (size_t{st->count} + 1));
  st->entry_listed = owner;
  if (list.count == 0) return TBLOB_OK;
  if (!list.names || !list.lens)
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                     "invalid argument: required_names and required_name_lens are needed for %zu names",
                     list.count);
  // Sorted by (hash, position); the names themselves stay the caller's until copied.
  PodVec<HashSlot> order(&a);
  if (!order.resize(list.count))
    return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory hashing required names");
  for (size_t k = 0; k < list.count; ++k) {
    if (!list.names[k] && list.lens[k])
      return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                       "invalid argument: required name %zu is NULL with length %zu", k, list.lens[k]);
    if (list.lens[k] > limits.max_name_bytes)
      return diag.fail(TBLOB_E_LIMIT_NAME_BYTES, TBLOB_NO_OFFSET, -1,
                       "required name %zu is %zu bytes, above the limit of %llu", k, list.lens[k],
                       static_cast<ull>(limits.max_name_bytes));
    order[k] = HashSlot{fnv1a64(list.names[k] ? list.names[k] : "", list.lens[k]), k};
  }
  std::sort(order.data(), order.data() + list.count, [](const HashSlot &x, const HashSlot &y) {
    return x.hash != y.hash ? x.hash < y.hash : x.index < y.index;
  });
  Listed *listed = static_cast<Listed *>(arena->alloc(sizeof(Listed) * list.count));
  if (!listed) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory copying required names");
  size_t n = 0;
  for (size_t k = 0; k < list.count; ++k) {
    const size_t pos = static_cast<size_t>(order[k].index);
    const char *name = list.names[pos] ? list.names[pos] : "";
    const size_t len = list.lens[pos];
    if (n > 0 && listed[n - 1].hash == order[k].hash) {
      const Listed &prev = listed[n - 1];
      if (prev.len == len && std::memcmp(prev.name, name, len) == 0) continue;  // listed twice
      const char *e1, *e2;
      const int s1 = clip_name(prev.len, &e1), s2 = clip_name(len, &e2);
      return diag.fail(TBLOB_E_HASH_COLLISION, TBLOB_NO_OFFSET, -1,
                       "required names \"%.*s%s\" and \"%.*s%s\" share FNV-1a 64 hash %016llx", s1,
                       prev.name, e1, s2, name, e2, static_cast<ull>(order[k].hash));
    }
    char *copy = arena->copy(name, len);
    if (!copy) return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory copying required names");
    listed[n++] = Listed{order[k].hash, copy, len};
  }
  st->listed = listed;
  st->listed_count = n;
  for (size_t k = 0; k < n; ++k) {
    uint64_t i;
    if (find_hash(*st, listed[k].hash, &i)) owner[i] = static_cast<uint32_t>(k + 1);
  }
  return TBLOB_OK;
}

bool find_hash(const State &st, uint64_t hash, uint64_t *index) {
  if (st.sorted) {
    const uint64_t *end = st.hashes + st.count;
    const uint64_t *it = std::lower_bound(st.hashes, end, hash);
    if (it != end && *it == hash) {
      *index = static_cast<uint64_t>(it - st.hashes);
      return true;
    }
    return false;
  }
  const HashSlot *end = st.index + st.count;
  const HashSlot *it = std::lower_bound(st.index, end, hash,
                                        [](const HashSlot &s, uint64_t h) { return s.hash < h; });
  if (it != end && it->hash == hash) {
    *index = it->index;
    return true;
  }
  return false;
}

Status find_name(const tblob_model *m, const char *name, size_t len, uint64_t *index,
                 const Diag &diag) {
  const State *st = state_of(m);
  if (!st) return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: not an SLM1 model");
  const uint64_t h = fnv1a64(name, len);
  const char *ell;
  const int shown = clip_name(len, &ell);
  if (const Listed *l = find_listed(*st, h)) {
    if (l->len != len || std::memcmp(l->name, name, len) != 0) {
      const char *ell2;
      const int shown2 = clip_name(l->len, &ell2);
      return diag.fail(TBLOB_E_HASH_COLLISION, TBLOB_NO_OFFSET, -1,
                       "name \"%.*s%s\" has FNV-1a 64 hash %016llx, which belongs to the required "
                       "name \"%.*s%s\"; refused, a hash match is never taken as a guess",
                       shown, name, ell, static_cast<ull>(h), shown2, l->name, ell2);
    }
  }
  uint64_t i;
  if (!find_hash(*st, h, &i))
    return diag.fail(TBLOB_E_NOT_FOUND, TBLOB_NO_OFFSET, -1,
                     "no tensor named \"%.*s%s\" (FNV-1a 64 hash %016llx)", shown, name, ell,
                     static_cast<ull>(h));
  *index = i;
  return TBLOB_OK;
}

}  // namespace slm1
}  // namespace tblob
