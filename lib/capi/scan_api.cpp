// tblob_st_scan: the zero-allocation scanner behind the C API, with the whole-table checks
// run in caller-lent scratch.
#include <algorithm>
#include <cstring>

#include "capi/capi_common.h"
#include "core/checked.h"
#include "core/limits.h"
#include "core/range_check.h"
#include "json/st_scanner.h"
#include "table/name_hash.h"

using tblob::Diag;
using tblob::Status;

namespace {

struct TensorRec {  // one per tensor in the scratch
  uint64_t begin, end, order;
  Status entry_status;
  uint32_t has_escapes;
  const char *name;
  size_t name_len;
  uint64_t hash;
  uint64_t key_offset;
  uint64_t bytes;
};

struct MetaRec {
  const char *name;
  size_t name_len;
  uint64_t hash;
  uint32_t has_escapes;
  uint32_t order;
};

// name_hash of the decoded name: equal names hash equally whatever their JSON spelling.
// Escaped names are decoded in small stack chunks into a stack hash state: no allocation.
uint64_t decoded_hash(const tblob::NameHashKeys &keys, const char *p, size_t n, bool escapes) {
  if (!escapes) return tblob::name_hash(keys, p, n);
  tblob::NameHasher state(keys);
  tblob::json::Decoder d(p, n);
  uint8_t chunk[256];
  size_t k = 0;
  uint8_t b;
  while (d.next(&b)) {
    chunk[k++] = b;
    if (k == sizeof(chunk)) {
      state.update(chunk, k);
      k = 0;
    }
  }
  state.update(chunk, k);
  return state.digest();
}

bool decoded_equal(const char *a, size_t an, const char *b, size_t bn) {
  tblob::json::Decoder da(a, an), db(b, bn);
  for (;;) {
    uint8_t x, y;
    const bool hx = da.next(&x), hy = db.next(&y);
    if (hx != hy) return false;
    if (!hx) return true;
    if (x != y) return false;
  }
}

// Slots for an open-addressing table over n records: a power of two >= 2n.
uint64_t table_slots(uint64_t n) {
  uint64_t cap = 16;
  while (cap < n * 2 && cap < (uint64_t{1} << 62)) cap *= 2;
  return cap;
}

// Finds the first (in header order) record whose decoded name equals an earlier one's, using
// a table of 32-bit slots (position + 1) lent from the scratch. SIZE_MAX if none.
template <class R>
size_t find_duplicate(const R *recs, size_t n, uint32_t *slots, size_t nslots) {
  std::memset(slots, 0, nslots * sizeof(uint32_t));
  const size_t mask = nslots - 1;
  size_t found = SIZE_MAX;
  for (size_t i = 0; i < n; ++i) {
    size_t s = static_cast<size_t>(recs[i].hash) & mask;
    for (;;) {
      const uint32_t at = slots[s];
      if (at == 0) {
        slots[s] = static_cast<uint32_t>(i + 1);
        break;
      }
      const R &other = recs[at - 1];
      if (other.hash == recs[i].hash &&
          decoded_equal(recs[i].name, recs[i].name_len, other.name, other.name_len)) {
        if (found == SIZE_MAX || recs[i].order < recs[found].order) found = i;
        break;
      }
      s = (s + 1) & mask;
    }
  }
  return found;
}

// Records go into the lent scratch from both ends in one pass: tensor records up from the
// start, metadata records down from the end (so neither count has to be known first). A
// record that does not fit is dropped; the caller compares the scratch with what the final
// counts need before using any.
class EventSink final : public tblob::StSink {
 public:
  EventSink(tblob_scan_fn cb, void *user, TensorRec *trecs, MetaRec *mtop, size_t avail)
      : cb_(cb), user_(user), trecs_(trecs), mtop_(mtop), avail_(avail) {
    light = trecs == nullptr;  // an event per entry at most; the records make it a table's work
    if (trecs) {
      keys_ = tblob::name_hash_keys();  // the records' hashes key the duplicate check
    } else {
      tensor_fn = cb;  // the callback is all there is to do per tensor
      tensor_user = user;
    }
  }

  Status on_tensor(const tblob::StTensorEntry &e) override {
    if (trecs_) record(e);
    ++tn_;
    // The scanner filled the event in place.
    return cb_ && cb_(user_, &e.ev) ? TBLOB_E_CANCELLED : TBLOB_OK;
  }

  Status on_metadata(const tblob::StMetaEntry &e) override {
    if (trecs_ && used() + sizeof(MetaRec) <= avail_) {
      MetaRec &r = *(mtop_ - mn_ - 1);  // inside the scratch: checked just above
      r.name = e.key.ptr;
      r.name_len = e.key.len;
      r.has_escapes = e.key.has_escapes;
      r.hash = decoded_hash(keys_, e.key.ptr, e.key.len, e.key.has_escapes);
      r.order = static_cast<uint32_t>(e.index);
    }
    ++mn_;
    if (!cb_) return TBLOB_OK;
    tblob_scan_event ev;
    ev.struct_size = sizeof(ev);
    ev.kind = TBLOB_SCAN_METADATA;
    ev.dtype = TBLOB_DTYPE_INVALID;
    ev.rank = 0;
    ev.shape = nullptr;
    ev.shape_json = nullptr;
    ev.shape_json_len = 0;
    ev.data_begin = ev.data_end = 0;
    ev.index = e.index;
    ev.name = e.key.ptr;
    ev.name_len = e.key.len;
    ev.name_has_escapes = e.key.has_escapes;
    ev.value = e.value.ptr;
    ev.value_len = e.value.len;
    ev.value_has_escapes = e.value.has_escapes;
    ev.header_offset = e.key_offset;
    return cb_(user_, &ev) ? TBLOB_E_CANCELLED : TBLOB_OK;
  }

 private:
  tblob_scan_fn cb_;
  void *user_;
  TensorRec *trecs_;  // nullptr: no scratch, no records
  MetaRec *mtop_;     // one past the last metadata record slot
  size_t avail_;      // bytes from trecs_ to mtop_
  tblob::NameHashKeys keys_{};
  size_t tn_ = 0, mn_ = 0;
  // Bytes both record arrays take so far (counts below what fits, so no overflow).
  size_t used() const { return tn_ * sizeof(TensorRec) + mn_ * sizeof(MetaRec); }
  // Out of line: the event alone then needs no saved registers.
  __attribute__((noinline)) void record(const tblob::StTensorEntry &e) {
    if (used() + sizeof(TensorRec) > avail_) return;
    TensorRec &r = trecs_[tn_];
    r.begin = e.ev.data_begin;
    r.end = e.ev.data_end;
    r.order = e.ev.index;
    r.entry_status = e.entry_status;
    r.has_escapes = e.ev.name_has_escapes;
    r.name = e.ev.name;
    r.name_len = e.ev.name_len;
    r.hash = decoded_hash(keys_, e.ev.name, e.ev.name_len, e.ev.name_has_escapes != 0);
    r.key_offset = e.ev.header_offset;
    r.bytes = e.bytes;
  }
};

// The same offset and wording as the open path (st_model.cpp): where the tensors stop
// matching the data region.
Status length_error(const Diag &d, Status s, uint64_t data_offset, uint64_t covered,
                    uint64_t available) {
  return tblob::st_length_error(d, s, data_offset, covered, available);
}

Status entry_error(const Diag &d, Status s, const TensorRec &r, uint64_t expected) {
  tblob::json::StringSlice name;
  name.ptr = r.name;
  name.len = r.name_len;
  return tblob::st_entry_error(d, s, r.order, name, r.key_offset, r.begin, r.end, expected);
}

}  // namespace

using tblob::capi::bad_arg;

extern "C" {

TBLOB_API size_t tblob_st_scan_scratch_bytes(uint64_t tensor_count, uint64_t metadata_count) noexcept {
  // Layout: tensor records, one slot table sized for the larger count, metadata records
  // (stored from the end of the scratch), plus alignment slack.
  if (tensor_count > UINT32_MAX - 1 || metadata_count > UINT32_MAX - 1) return SIZE_MAX;
  uint64_t a, b, c, total;
  const uint64_t slots = table_slots(tensor_count > metadata_count ? tensor_count : metadata_count);
  if (!tblob::checked_mul(tensor_count, sizeof(TensorRec), &a) ||
      !tblob::checked_mul(metadata_count, sizeof(MetaRec), &b) ||
      !tblob::checked_mul(slots, sizeof(uint32_t), &c) || !tblob::checked_add(a, b, &total) ||
      !tblob::checked_add(total, c, &total) || !tblob::checked_add(total, 16, &total) ||
      total > SIZE_MAX)
    return SIZE_MAX;
  return static_cast<size_t>(total);
}

TBLOB_API tblob_status tblob_st_scan(const uint8_t *buf, size_t len,
                                     const tblob_open_options *options, tblob_scan_fn callback,
                                     void *user, void *scratch, size_t scratch_bytes,
                                     tblob_scan_result *result, tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if (!buf && len) return d.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: buf is NULL");
  if (result && !TBLOB_COVERS(result, metadata_count))
    return d.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: result->struct_size");
  tblob::Limits limits;
  if (!tblob::resolve_limits(options, &limits))
    return d.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "invalid argument: options->struct_size");

  // Scratch (8-byte aligned at both ends): tensor records from the start, metadata records
  // from the end, the slot table between them once both counts are known.
  TensorRec *trecs = nullptr;
  MetaRec *mtop = nullptr;
  size_t avail = 0;
  if (scratch) {
    // Any non-NULL scratch asks for the whole-table checks; too little of it is reported
    // as TBLOB_E_BUFFER_TOO_SMALL after the scan, never silently skipped.
    const uintptr_t at = reinterpret_cast<uintptr_t>(scratch);
    const uintptr_t base = (at + 7) & ~uintptr_t{7};
    uintptr_t top = (at + scratch_bytes) & ~uintptr_t{7};
    if (top < base) top = base;
    trecs = reinterpret_cast<TensorRec *>(base);
    mtop = reinterpret_cast<MetaRec *>(top);
    avail = static_cast<size_t>(top - base);
  }
  EventSink sink(callback, user, trecs, mtop, avail);
  tblob::StScanSummary sum;
  // Neither a callback nor scratch: the sink would only count, which the summary does.
  Status s = tblob::st_scan_header(buf, len, limits, callback || trecs ? &sink : nullptr, &sum, d);
  if (result) {
    result->whole_table_checked = 0;
    result->header_bytes = sum.header_bytes;
    result->data_offset = sum.data_offset;
    result->data_bytes = sum.max_end;
    result->tensor_count = sum.tensor_count;
    result->metadata_count = sum.metadata_count;
  }
  if (s != TBLOB_OK) return s;

  if (!trecs) {
    // No scratch: per-entry checks in header order, then the length check on the
    // largest end offset. Tiling and duplicates are not checked.
    if (sum.first_entry_status != TBLOB_OK) {
      TensorRec r{};
      r.begin = sum.first_entry_begin;
      r.end = sum.first_entry_end;
      r.order = sum.first_entry_index;
      r.name = sum.first_entry_name.ptr;
      r.name_len = sum.first_entry_name.len;
      r.key_offset = sum.first_entry_key_offset;
      return entry_error(d, sum.first_entry_status, r, sum.first_entry_bytes);
    }
    s = tblob::check_region_length(sum.max_end, sum.data_available);
    if (s != TBLOB_OK) return length_error(d, s, sum.data_offset, sum.max_end, sum.data_available);
    return TBLOB_OK;
  }

  const size_t need = tblob_st_scan_scratch_bytes(sum.tensor_count, sum.metadata_count);
  if (scratch_bytes < need)
    return d.fail(TBLOB_E_BUFFER_TOO_SMALL, TBLOB_NO_OFFSET, -1,
                  "scratch has %zu bytes; the whole-table checks need %zu", scratch_bytes, need);
  // Scratch covering `need` holds every record (need adds the slot table and 16 bytes of
  // alignment slack to them), so both arrays are complete and the table fits between them.
  const size_t nt = static_cast<size_t>(sum.tensor_count);
  const size_t nm = static_cast<size_t>(sum.metadata_count);
  MetaRec *mrecs = mtop - nm;
  std::reverse(mrecs, mtop);  // stored from the end down: back to header order
  uint32_t *slots = reinterpret_cast<uint32_t *>(trecs + nt);
  if (nm > 1) {
    const size_t dup = find_duplicate(mrecs, nm, slots, static_cast<size_t>(table_slots(nm)));
    if (dup != SIZE_MAX) {
      const char *ell;
      const int shown = tblob::clip_name(mrecs[dup].name_len, &ell);
      return d.fail(TBLOB_E_METADATA, TBLOB_NO_OFFSET, -1, "__metadata__ key \"%.*s%s\" appears twice",
                    shown, mrecs[dup].name, ell);
    }
  }
  const size_t dup = find_duplicate(trecs, nt, slots, static_cast<size_t>(table_slots(nt)));
  if (dup != SIZE_MAX) {
    const char *ell;
    const int shown = tblob::clip_name(trecs[dup].name_len, &ell);
    return d.fail(TBLOB_E_DUPLICATE_NAME, trecs[dup].key_offset, static_cast<int64_t>(trecs[dup].order),
                  "tensor \"%.*s%s\" (byte %llu) appears twice", shown, trecs[dup].name, ell,
                  static_cast<unsigned long long>(trecs[dup].key_offset));
  }
  size_t bad = 0;
  uint64_t cursor = 0;
  s = tblob::check_tiling(trecs, nt, &bad, &cursor);
  if (s != TBLOB_OK)
    return entry_error(d, s, trecs[bad], s == TBLOB_E_TENSOR_SIZE ? trecs[bad].bytes : cursor);
  s = tblob::check_region_length(cursor, sum.data_available);
  if (s != TBLOB_OK) return length_error(d, s, sum.data_offset, cursor, sum.data_available);
  if (result) result->whole_table_checked = 1;
  return TBLOB_OK;
}

}  // extern "C"

namespace {

tblob_status unescape(const char *src, size_t src_len, char *dst, size_t dst_capacity,
                      size_t *out_len) {
  // Validate as a JSON string body first: the scanner's slices are valid, but callers may
  // pass anything.
  tblob::json::Cursor c;
  c.begin = reinterpret_cast<const uint8_t *>(src);
  // scan_string expects the opening quote; validate the body through a bounded walk.
  size_t i = 0;
  while (i < src_len) {
    const uint8_t b = static_cast<uint8_t>(src[i]);
    if (b == '"' || b < 0x20) return TBLOB_E_JSON;
    if (b != '\\') {
      ++i;
      continue;
    }
    if (i + 1 >= src_len) return TBLOB_E_JSON;
    const char e = src[i + 1];
    if (e != 'u') {
      if (!std::strchr("\"\\/bfnrt", e)) return TBLOB_E_JSON;
      i += 2;
      continue;
    }
    auto hex4 = [&](size_t at, uint32_t *v) {
      if (at + 4 > src_len) return false;
      *v = 0;
      for (size_t k = 0; k < 4; ++k) {
        const char h = src[at + k];
        uint32_t x;
        if (h >= '0' && h <= '9') x = static_cast<uint32_t>(h - '0');
        else if (h >= 'a' && h <= 'f') x = static_cast<uint32_t>(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F') x = static_cast<uint32_t>(h - 'A' + 10);
        else return false;
        *v = (*v << 4) | x;
      }
      return true;
    };
    uint32_t cp;
    if (!hex4(i + 2, &cp)) return TBLOB_E_JSON;
    i += 6;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return TBLOB_E_JSON;
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t lo;
      if (i + 1 >= src_len || src[i] != '\\' || src[i + 1] != 'u' || !hex4(i + 2, &lo) ||
          lo < 0xDC00 || lo > 0xDFFF)
        return TBLOB_E_JSON;
      i += 6;
    }
  }
  if (tblob::json::first_invalid_utf8(reinterpret_cast<const uint8_t *>(src), src_len) >= 0)
    return TBLOB_E_UTF8;
  tblob::json::StringSlice s;
  s.ptr = src;
  s.len = src_len;
  s.has_escapes = true;
  const size_t n = tblob::json::decode_into(s, dst, dst_capacity);
  *out_len = n;
  return n > dst_capacity ? TBLOB_E_BUFFER_TOO_SMALL : TBLOB_OK;
}

}  // namespace

extern "C" {

TBLOB_API tblob_status tblob_json_unescape(const char *src, size_t src_len, char *dst,
                                           size_t dst_capacity, size_t *out_len,
                                           tblob_diag *diag) noexcept {
  TBLOB_CAPI_BEGIN(d, diag);
  if ((!src && src_len) || !out_len || (!dst && dst_capacity))
    return bad_arg(d, "src (when src_len > 0), out_len and dst (when dst_capacity > 0) are required");
  const tblob_status s = unescape(src, src_len, dst, dst_capacity, out_len);
  if (s == TBLOB_OK) return TBLOB_OK;
  if (s == TBLOB_E_BUFFER_TOO_SMALL)
    return d.fail(s, TBLOB_NO_OFFSET, -1, "JSON string: %zu decoded bytes, dst holds %zu", *out_len,
                  dst_capacity);
  return d.fail(s, TBLOB_NO_OFFSET, -1, "JSON string of %zu bytes: %s", src_len,
                tblob_status_message(s));
}

}  // extern "C"
