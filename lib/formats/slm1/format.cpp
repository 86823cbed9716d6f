#include "formats/slm1/format.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/allocator.h"
#include "core/checked.h"
#include "core/range_check.h"
#include "dequant/convert.h"

namespace tblob {
namespace slm1 {

// ---- the fixed header -------------------------------------------------------------------------
namespace {

using ull = unsigned long long;

bool bad(HeaderProblem *p, uint64_t offset, const char *field, const char *fmt, ull a, ull b = 0) {
  p->offset = offset;
  p->field = field;
  std::snprintf(p->why, sizeof(p->why), fmt, a, b);
  return false;
}

bool positive_finite(float f) { return std::isfinite(f) && f > 0.0f; }

}  // namespace

bool header_fields_ok(const Header &h, HeaderProblem *p) {
  if (h.flags & ~kKnownHeaderFlags)
    return bad(p, kOffFlags, "flags", "is 0x%08llx; bits 1-31 are reserved and must be 0", h.flags);
  if (h.vocab_size < kMinVocab)
    return bad(p, kOffVocabSize, "vocab_size", "is %llu; it must be at least %llu", h.vocab_size, kMinVocab);
  if (h.special_token_count < kMinSpecialTokens || h.special_token_count > h.vocab_size)
    return bad(p, kOffSpecialTokens, "special_token_count", "is %llu; it must be in [4, vocab_size %llu]",
               h.special_token_count, h.vocab_size);
  if (h.hidden_size == 0) return bad(p, kOffHiddenSize, "hidden_size", "is 0; it must be non-zero", 0);
  if (h.layer_count == 0) return bad(p, kOffLayerCount, "layer_count", "is 0; it must be non-zero", 0);
  if (h.head_count == 0) return bad(p, kOffHeadCount, "head_count", "is 0; it must be non-zero", 0);
  if (h.kv_head_count == 0 || h.kv_head_count > h.head_count || h.head_count % h.kv_head_count != 0)
    return bad(p, kOffKvHeadCount, "kv_head_count",
               "is %llu; it must be non-zero and divide head_count %llu", h.kv_head_count, h.head_count);
  // Both factors are u32, so the product fits in 64 bits.
  if (h.head_dim == 0 || uint64_t{h.head_count} * h.head_dim != h.hidden_size)
    return bad(p, kOffHeadDim, "head_dim",
               "is %llu; it must be non-zero with head_count x head_dim == hidden_size %llu",
               h.head_dim, h.hidden_size);
  if (h.ffn_size == 0) return bad(p, kOffFfnSize, "ffn_size", "is 0; it must be non-zero", 0);
  if (h.max_context == 0) return bad(p, kOffMaxContext, "max_context", "is 0; it must be non-zero", 0);
  if (!positive_finite(h.rope_theta))
    return bad(p, kOffRopeTheta, "rope_theta", "(f32 bits 0x%08llx) must be finite and > 0",
               dq::f32_bits(h.rope_theta));
  if (!positive_finite(h.rms_norm_epsilon))
    return bad(p, kOffRmsNormEps, "rms_norm_epsilon", "(f32 bits 0x%08llx) must be finite and > 0",
               dq::f32_bits(h.rms_norm_epsilon));
  return true;
}

Status read_header(const uint8_t *f, uint64_t len, const Limits &limits, Header *h,
                   const Diag &diag) {
  *h = Header{};
  if (len < kHeaderBytes)
    return diag.fail(TBLOB_E_TRUNCATED, len, -1,
                     "the file is %llu bytes; an SLM1 header needs 108", static_cast<ull>(len));
  if (std::memcmp(f, kMagic, 4) != 0)
    return diag.fail(TBLOB_E_UNKNOWN_FORMAT, 0, -1,
                     "magic %02x %02x %02x %02x at byte 0 is not \"SLM1\"", f[0], f[1], f[2], f[3]);
  h->version = load_le32(f + kOffVersion);
  if (h->version != kVersion)
    return diag.fail(TBLOB_E_SLM1_VERSION, kOffVersion, -1, "version %u at byte 4 is not 1%s",
                     h->version, h->version == kVersionByteSwapped ? " (byte-swapped?)" : "");
  h->header_length = load_le32(f + kOffHeaderLength);
  h->model_type = load_le32(f + kOffModelType);
  h->flags = load_le32(f + kOffFlags);
  h->vocab_size = load_le32(f + kOffVocabSize);
  h->special_token_count = load_le32(f + kOffSpecialTokens);
  h->hidden_size = load_le32(f + kOffHiddenSize);
  h->layer_count = load_le32(f + kOffLayerCount);
  h->head_count = load_le32(f + kOffHeadCount);
  h->kv_head_count = load_le32(f + kOffKvHeadCount);
  h->head_dim = load_le32(f + kOffHeadDim);
  h->ffn_size = load_le32(f + kOffFfnSize);
  h->max_context = load_le32(f + kOffMaxContext);
  h->rope_theta = load_le_f32(f + kOffRopeTheta);
  h->rms_norm_epsilon = load_le_f32(f + kOffRmsNormEps);
  h->tokenizer_offset = load_le64(f + kOffTokenizerOffset);
  h->tokenizer_length = load_le64(f + kOffTokenizerLength);
  h->directory_offset = load_le64(f + kOffDirectoryOffset);
  h->tensor_count = load_le32(f + kOffTensorCount);
  h->data_offset = load_le64(f + kOffDataOffset);
  h->checksum = load_le64(f + kOffChecksum);

  if (h->header_length < kHeaderBytes)
    return diag.fail(TBLOB_E_SLM1_HEADER, kOffHeaderLength, -1,
                     "header field header_length (byte 8) is %u; it must be at least 108",
                     h->header_length);
  if (h->header_length > len)
    return diag.fail(TBLOB_E_TRUNCATED, kOffHeaderLength, -1,
                     "header_length %u (byte 8) runs past the end of the %llu-byte file",
                     h->header_length, static_cast<ull>(len));
  HeaderProblem p;
  if (!header_fields_ok(*h, &p))
    return diag.fail(TBLOB_E_SLM1_HEADER, p.offset, -1, "header field %s (byte %llu) %s", p.field,
                     static_cast<ull>(p.offset), p.why);
  if (h->tokenizer_offset != h->header_length)
    return diag.fail(TBLOB_E_OFFSETS, kOffTokenizerOffset, -1,
                     "tokenizer_offset %llu (byte 64) must equal header_length %u",
                     static_cast<ull>(h->tokenizer_offset), h->header_length);
  uint64_t tok_end;
  if (!checked_add(h->tokenizer_offset, h->tokenizer_length, &tok_end) || tok_end > len)
    return diag.fail(TBLOB_E_TRUNCATED, kOffTokenizerLength, -1,
                     "tokenizer section [%llu, +%llu) (tokenizer_length at byte 72) runs past the "
                     "end of the %llu-byte file",
                     static_cast<ull>(h->tokenizer_offset), static_cast<ull>(h->tokenizer_length),
                     static_cast<ull>(len));
  uint64_t dir_expected;
  if (!checked_align_up(tok_end, kAlign, &dir_expected))
    return diag.fail(TBLOB_E_TRUNCATED, kOffTokenizerLength, -1,
                     "the tokenizer section ends too close to 2^64 to align the directory");
  if (h->directory_offset != dir_expected)
    return diag.fail(TBLOB_E_OFFSETS, kOffDirectoryOffset, -1,
                     "tensor_directory_offset %llu (byte 80) must be %llu, the tokenizer end %llu "
                     "rounded up to 64",
                     static_cast<ull>(h->directory_offset), static_cast<ull>(dir_expected),
                     static_cast<ull>(tok_end));
  // The exact bound on tensor_count, before anything is allocated.
  if (h->directory_offset > len || h->tensor_count > (len - h->directory_offset) / kEntryBytes)
    return diag.fail(TBLOB_E_TRUNCATED, kOffTensorCount, -1,
                     "tensor_count %u (byte 88) needs %llu directory bytes at %llu; the file has %llu",
                     h->tensor_count, static_cast<ull>(uint64_t{h->tensor_count} * kEntryBytes),
                     static_cast<ull>(h->directory_offset),
                     static_cast<ull>(h->directory_offset > len ? 0 : len - h->directory_offset));
  if (h->tensor_count > limits.max_tensors)
    return diag.fail(TBLOB_E_LIMIT_TENSORS, kOffTensorCount, -1,
                     "tensor_count %u (byte 88) is above the limit of %llu", h->tensor_count,
                     static_cast<ull>(limits.max_tensors));
  // directory_offset <= len and the count bound make this sum at most len: no overflow.
  const uint64_t data_expected = h->directory_offset + uint64_t{h->tensor_count} * kEntryBytes;
  if (h->data_offset != data_expected)
    return diag.fail(TBLOB_E_OFFSETS, kOffDataOffset, -1,
                     "tensor_data_offset %llu (byte 92) must be %llu, right after the %u-entry "
                     "directory",
                     static_cast<ull>(h->data_offset), static_cast<ull>(data_expected),
                     h->tensor_count);
  return TBLOB_OK;
}

void encode_header(const Header &h, uint8_t out[108]) {
  std::memset(out, 0, kHeaderBytes);
  std::memcpy(out, kMagic, 4);
  store_le32(out + kOffVersion, h.version);
  store_le32(out + kOffHeaderLength, h.header_length);
  store_le32(out + kOffModelType, h.model_type);
  store_le32(out + kOffFlags, h.flags);
  store_le32(out + kOffVocabSize, h.vocab_size);
  store_le32(out + kOffSpecialTokens, h.special_token_count);
  store_le32(out + kOffHiddenSize, h.hidden_size);
  store_le32(out + kOffLayerCount, h.layer_count);
  store_le32(out + kOffHeadCount, h.head_count);
  store_le32(out + kOffKvHeadCount, h.kv_head_count);
  store_le32(out + kOffHeadDim, h.head_dim);
  store_le32(out + kOffFfnSize, h.ffn_size);
  store_le32(out + kOffMaxContext, h.max_context);
  store_le_f32(out + kOffRopeTheta, h.rope_theta);
  store_le_f32(out + kOffRmsNormEps, h.rms_norm_epsilon);
  store_le64(out + kOffTokenizerOffset, h.tokenizer_offset);
  store_le64(out + kOffTokenizerLength, h.tokenizer_length);
  store_le64(out + kOffDirectoryOffset, h.directory_offset);
  store_le32(out + kOffTensorCount, h.tensor_count);
  store_le64(out + kOffDataOffset, h.data_offset);
  store_le64(out + kOffChecksum, h.checksum);
}

// ---- directory entries ------------------------------------------------------------------------
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

// ---- the checksum -----------------------------------------------------------------------------
namespace {

constexpr uint64_t kPrime = 0x100000001b3ull;
constexpr uint64_t kFieldBegin = 100, kFieldEnd = 108;  // the checksum field, read as zero

inline uint64_t step(uint64_t c, uint64_t b, uint64_t i) {
  c ^= b | (i << 8);
  c = (c << 27) | (c >> 37);
  return c * kPrime;
}

}  // namespace

void ChecksumStream::update(const uint8_t *p, size_t n) {
  uint64_t c = c_, i = i_;
  size_t k = 0;
  // The few bytes before and inside the checksum field take the careful path.
  while (k < n && i < kFieldEnd) {
    c = step(c, (i >= kFieldBegin) ? 0 : p[k], i);
    ++k;
    ++i;
  }
  for (; k < n; ++k, ++i) c = step(c, p[k], i);
  c_ = c;
  i_ = i;
}

uint64_t checksum(const uint8_t *buf, uint64_t len) {
  ChecksumStream s;
  // len fits in size_t: it is the length of a buffer in memory.
  s.update(buf, static_cast<size_t>(len));
  return s.value();
}

// ---- scale values -----------------------------------------------------------------------------
uint64_t first_bad_scale(const uint8_t *p, uint64_t count) {
  for (uint64_t k = 0; k < count; ++k)
    if (!scale_bits_ok(load_le32(p + 4 * k))) return k;
  return count;
}

Status scale_fail(const Header &h, const Entry *e, uint32_t i, uint64_t k, uint32_t bits, const Diag &diag) {
  using ull = unsigned long long;
  const uint64_t at = e[i].scale_offset + 4 * k;
  return diag.fail(TBLOB_E_SLM1_SCALE, at, i,
                   "tensor %u (hash %016llx, entry at byte %llu): %s scale %llu at byte %llu "
                   "(f32 bits 0x%08x) is not finite and positive",
                   i, static_cast<ull>(e[i].hash), static_cast<ull>(h.directory_offset + uint64_t{i} * kEntryBytes),
                   dtype_name(e[i].dtype), static_cast<ull>(k), static_cast<ull>(at), bits);
}

Status check_scales(const uint8_t *f, const Header &h, const Entry *e, uint32_t n, const Diag &diag) {
  for (uint32_t i = 0; i < n; ++i) {
    if (e[i].dtype == kDtypeF32) continue;
    const uint64_t count = e[i].scale_bytes / 4;
    const uint64_t k = first_bad_scale(f + e[i].scale_offset, count);
    if (k != count) return scale_fail(h, e, i, k, load_le32(f + e[i].scale_offset + 4 * k), diag);
  }
  return TBLOB_OK;
}

// ---- the data region --------------------------------------------------------------------------
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
                         uint32_t n, const Allocator &a, const Diag &diag, bool data_padding) {
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
  for (size_t r = 0; data_padding && r + 1 < k; ++r) {
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
