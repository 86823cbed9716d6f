// The zero-allocation safetensors header scanner.
//
// Runs the reference implementation's steps 1-5 and the per-tensor part of step 6
// (docs/safetensors.md) over a buffer, reporting entries to a sink. Errors keep
// the reference's order: grammar, UTF-8, depth and __metadata__ errors stop the scan where
// they occur; a tensor entry's schema errors (missing field, wrong type, unknown dtype,
// non-integer shape) are reported only if the whole header is valid JSON (serde buffers
// flattened entries before typing them); per-tensor size errors come after that.
// The whole-table checks (tiling, duplicates) and the final length check belong to the
// caller, which owns the memory they need (see range_check.h).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/endian.h"
#include "core/limits.h"
#include "core/status.h"
#include "json/json_lex.h"

namespace tblob {

constexpr uint32_t kInlineRank = TBLOB_SCAN_INLINE_RANK;

// Step 2: the header length N, the first 8 bytes read as a little-endian u64. False when
// the buffer is shorter than 8 bytes. Every reader of a safetensors prefix uses this.
inline bool st_header_length(const uint8_t *buf, size_t len, uint64_t *n) {
  if (len < 8) return false;
  *n = load_le64(buf);
  return true;
}

struct StTensorEntry {
  // The event tblob_st_scan hands its callback, filled where the scanner reads the entry (so
  // the C API passes its address instead of copying sixteen fields): index (among tensors,
  // header order), name, name_len, name_has_escapes, dtype, rank, shape (rank dims, or nullptr
  // when rank > kInlineRank), shape_json(_len) (the shape array's text, '[' .. ']'),
  // data_begin and data_end (data_offsets), header_offset (the key's byte offset).
  tblob_scan_event ev;
  const uint8_t *name_at;      // the key's opening quote
  uint64_t elements;           // valid when entry_status == OK
  uint64_t bytes;
  Status entry_status;         // per-tensor step-6 result (OK, OFFSETS, SHAPE_OVERFLOW, ...)

  json::StringSlice name() const {
    json::StringSlice s;
    s.ptr = ev.name;
    s.len = ev.name_len;
    s.has_escapes = ev.name_has_escapes != 0;
    s.at = name_at;
    return s;
  }
  // The fields every tensor event has the same. The scanner sets them once per scan and
  // reuses the entry: a callback is handed a pointer to const.
  void set_kind() {
    ev.struct_size = sizeof(ev);
    ev.kind = TBLOB_SCAN_TENSOR;
    ev.value = nullptr;
    ev.value_len = 0;
    ev.value_has_escapes = 0;
  }
};

struct StMetaEntry {
  uint64_t index;
  json::StringSlice key;
  json::StringSlice value;
  uint64_t key_offset;
};

// A field of the entry handed to a sink, read with a load of its own width. Compilers copy
// neighbouring 8-byte fields with one 16-byte load, which the store buffer cannot forward
// from the scanner's two 8-byte stores of a moment before: it waits for them to reach the
// cache (measured: two fifths of a sink's time).
template <class T>
inline T entry_field(const T &field) {
  T v = field;
#if defined(__GNUC__)
  __asm__("" : "+r"(v));
#endif
  return v;
}

class StSink {
 public:
  // Return a status other than OK to stop the scan with it.
  virtual Status on_tensor(const StTensorEntry &entry) = 0;
  virtual Status on_metadata(const StMetaEntry &entry) = 0;

  // True for a sink that does little per entry: the scanner then locates each member's end
  // ahead of reading its numbers (about twenty more instructions a member, so that the next
  // member's loads need not wait for them), which pays only when the scan itself is the work.
  bool light = false;
  // A sink whose whole work for a tensor is one tblob_scan_fn on the entry's event
  // (tblob_st_scan without scratch) names it here, and the scanner calls it instead of
  // on_tensor: non-zero from it stops the scan with TBLOB_E_CANCELLED.
  tblob_scan_fn tensor_fn = nullptr;
  void *tensor_user = nullptr;

 protected:
  ~StSink() = default;
};

struct StScanSummary {
  uint64_t header_bytes = 0;   // N
  uint64_t data_offset = 0;    // 8 + N
  uint64_t data_available = 0; // len - 8 - N
  uint64_t max_end = 0;        // largest end offset
  uint64_t tensor_count = 0;
  uint64_t metadata_count = 0;
  // First per-tensor size error in header order (OK if none); the caller decides when to
  // report it (after tiling when it has the whole table).
  Status first_entry_status = TBLOB_OK;
  uint64_t first_entry_index = 0;
  json::StringSlice first_entry_name;
  uint64_t first_entry_key_offset = 0;
  uint64_t first_entry_begin = 0, first_entry_end = 0, first_entry_bytes = 0;
};

// Steps 1-5 and per-entry step 6. On success every entry reached the sink. (st_scan_loop.h
// has the same for a final sink named by its own type, whose on_tensor it inlines.)
Status st_scan_header(const uint8_t *buf, size_t len, const Limits &limits, StSink *sink,
                      StScanSummary *summary, const Diag &diag);

// Whether the scanner runs its member loop's AVX2 + BMI2 build (st_scan_loop.h): on x86-64
// hosts that have both (core/cpu.h), unless st_scan_allow_avx2(false) said otherwise. Every
// status, event and diagnostic is the same either way; tests compare the two builds.
bool st_scan_uses_avx2();
void st_scan_allow_avx2(bool allow);

// Parses a validated shape array's text into dims (capacity rank).
void st_parse_dims(const char *shape_json, size_t len, uint64_t *dims, uint32_t rank);

// Formats the diagnostic for a per-tensor status of `entry`.
Status st_entry_error(const Diag &diag, Status s, uint64_t index, const json::StringSlice &name,
                      uint64_t key_offset, uint64_t begin, uint64_t end, uint64_t expected);

// Formats the diagnostic of a data region whose length differs from what the tensors cover
// (TBLOB_E_TRAILING_BYTES / TBLOB_E_TRUNCATED), at the offset where they stop matching.
Status st_length_error(const Diag &diag, Status s, uint64_t data_offset, uint64_t covered,
                       uint64_t available);

}  // namespace tblob
