#include "formats/slm1/header.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/checked.h"
#include "formats/slm1/format.h"

namespace tblob {
namespace slm1 {

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
               f32_bits(h.rope_theta));
  if (!positive_finite(h.rms_norm_epsilon))
    return bad(p, kOffRmsNormEps, "rms_norm_epsilon", "(f32 bits 0x%08llx) must be finite and > 0",
               f32_bits(h.rms_norm_epsilon));
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

}  // namespace slm1
}  // namespace tblob
