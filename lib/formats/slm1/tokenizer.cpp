#include "formats/slm1/tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/checked.h"
#include "formats/slm1/format.h"
#include "core/allocator.h"

namespace tblob {
namespace slm1 {

namespace {

using ull = unsigned long long;

constexpr uint32_t kBtokIds[4] = {256, 257, 258, 259};  // BOS, EOS, PAD, UNK

Status fail(const Diag &diag, uint64_t at, const char *fmt, ull a = 0, ull b = 0, ull c = 0,
            ull d = 0) {
  char why[200];
  std::snprintf(why, sizeof(why), fmt, a, b, c, d);
  return diag.fail(TBLOB_E_SLM1_TOKENIZER, at, -1, "tokenizer (byte %llu): %s", static_cast<ull>(at), why);
}

Status check_btok(const uint8_t *s, uint64_t len, uint64_t base, uint32_t expected_vocab,
                  TokenizerInfo *out, const Diag &diag) {
  if (len != kBtokBytes)
    return fail(diag, base, "a BTOK section is exactly 28 bytes; tokenizer_length is %llu", len);
  const uint32_t version = load_le32(s + 4);
  if (version != 1) return fail(diag, base + 4, "BTOK version is %llu; it must be 1", version);
  const uint32_t vocab = load_le32(s + 8);
  if (vocab != kMinVocab) return fail(diag, base + 8, "BTOK vocab_size is %llu; it must be 260", vocab);
  static const char *const kNames[4] = {"bos_id", "eos_id", "pad_id", "unk_id"};
  for (int i = 0; i < 4; ++i) {
    const uint32_t id = load_le32(s + 12 + 4 * i);
    if (id != kBtokIds[i]) {
      char why[96];
      std::snprintf(why, sizeof(why), "BTOK %s is %u; it must be %u", kNames[i], id, kBtokIds[i]);
      return diag.fail(TBLOB_E_SLM1_TOKENIZER, base + 12 + 4 * i, -1, "tokenizer (byte %llu): %s",
                       static_cast<ull>(base + 12 + 4 * i), why);
    }
  }
  if (expected_vocab != 0 && expected_vocab != vocab)
    return fail(diag, base + 8, "BTOK vocab_size 260 disagrees with the header's vocab_size %llu",
                expected_vocab);
  out->kind = kTokenizerBtok;
  out->vocab_size = vocab;
  return TBLOB_OK;
}

struct TokenRec {
  uint64_t off;  // of the bytes, relative to the section
  uint32_t len;  // 0: no record
  uint32_t pad;
};

Status check_bpe1(const uint8_t *s, uint64_t len, uint64_t base, uint32_t expected_vocab,
                  const Allocator &a, TokenizerInfo *out, const Diag &diag) {
  if (len < kBpe1HeaderBytes)
    return fail(diag, base, "a BPE1 section needs a 36-byte header; tokenizer_length is %llu", len);
  const uint32_t version = load_le32(s + 4);
  if (version != 1) return fail(diag, base + 4, "BPE1 version is %llu; it must be 1", version);
  const uint32_t vocab = load_le32(s + 8);
  if (vocab < kMinVocab) return fail(diag, base + 8, "BPE1 vocab_size is %llu; it must be at least 260", vocab);
  if (expected_vocab != 0 && expected_vocab != vocab)
    return fail(diag, base + 8, "BPE1 vocab_size %llu disagrees with the header's vocab_size %llu",
                vocab, expected_vocab);
  uint32_t special[4];
  for (int i = 0; i < 4; ++i) {
    special[i] = load_le32(s + 12 + 4 * i);
    if (special[i] < kByteVocab || special[i] >= vocab)
      return fail(diag, base + 12 + 4 * i, "BPE1 special id %llu is outside [256, vocab_size %llu)",
                  special[i], vocab);
    for (int j = 0; j < i; ++j)
      if (special[j] == special[i])
        return fail(diag, base + 12 + 4 * i, "BPE1 special id %llu appears twice", special[i]);
  }
  auto is_special = [&special](uint32_t id) {
    return id == special[0] || id == special[1] || id == special[2] || id == special[3];
  };
  const uint32_t token_count = load_le32(s + 28);
  const uint32_t merge_count = load_le32(s + 32);
  const uint64_t body = len - kBpe1HeaderBytes;
  if (token_count > body / 8)
    return fail(diag, base + 28, "BPE1 token_count %llu needs at least %llu bytes; %llu follow the header",
                token_count, uint64_t{token_count} * 8, body);
  // Coverage (rule 6) needs vocab_size - 260 records with ids >= 256; checking the count
  // first bounds the per-id table below by the bytes present.
  const uint64_t needed = uint64_t{vocab} - kMinVocab;
  if (needed > token_count)
    return fail(diag, base + 28, "BPE1 token_count %llu cannot cover the %llu non-special ids above 255",
                token_count, needed);
  PodVec<TokenRec> recs(&a);
  if (!recs.resize(vocab))
    return diag.fail(TBLOB_E_OUT_OF_MEMORY, base, -1, "out of memory checking the BPE1 vocabulary");
  std::memset(static_cast<void *>(recs.data()), 0, sizeof(TokenRec) * vocab);
  uint64_t pos = kBpe1HeaderBytes;
  uint64_t high_records = 0;
  for (uint32_t i = 0; i < token_count; ++i) {
    if (len - pos < 8)
      return fail(diag, base + pos, "BPE1 token record %llu is cut off by the end of the section", i);
    const uint32_t id = load_le32(s + pos);
    const uint32_t blen = load_le32(s + pos + 4);
    if (blen == 0) return fail(diag, base + pos + 4, "BPE1 token %llu has no bytes", id);
    if (blen > len - pos - 8)
      return fail(diag, base + pos + 4, "BPE1 token %llu claims %llu bytes; %llu remain", id, blen,
                  len - pos - 8);
    if (id >= vocab) return fail(diag, base + pos, "BPE1 token id %llu is not below vocab_size %llu", id, vocab);
    if (is_special(id)) return fail(diag, base + pos, "BPE1 token id %llu is a special id", id);
    if (recs[id].len != 0) return fail(diag, base + pos, "BPE1 token id %llu appears twice", id);
    if (id < kByteVocab && (blen != 1 || s[pos + 8] != id))
      return fail(diag, base + pos, "BPE1 byte token %llu must be the single byte 0x%02llx", id, id);
    recs[id].off = pos + 8;
    recs[id].len = blen;
    if (id >= kByteVocab) ++high_records;
    pos += 8 + uint64_t{blen};
  }
  uint64_t merge_bytes;
  if (!checked_mul(merge_count, kBpe1MergeBytes, &merge_bytes) || merge_bytes != len - pos)
    return fail(diag, base + 32, "BPE1 merge_count %llu needs %llu bytes after the tokens; %llu remain",
                merge_count, uint64_t{merge_count} * kBpe1MergeBytes, len - pos);
  if (high_records != needed)
    return fail(diag, base + 28, "BPE1 has %llu token records above 255; vocab_size %llu needs %llu",
                high_records, vocab, needed);
  // Bytes of an id: its record, or for 0-255 without one the byte itself. Every non-special
  // id from 256 up has a record (coverage, checked above).
  auto id_len = [&](uint32_t id) -> uint64_t { return recs[id].len ? recs[id].len : 1; };
  auto id_at = [&](uint32_t id, const uint8_t *p) {
    return recs[id].len ? std::memcmp(p, s + recs[id].off, recs[id].len) == 0
                        : p[0] == static_cast<uint8_t>(id);
  };
  PodVec<uint32_t> ranks(&a);
  PodVec<uint64_t> pairs(&a);
  if (!ranks.resize(merge_count ? merge_count : 1) || !pairs.resize(merge_count ? merge_count : 1))
    return diag.fail(TBLOB_E_OUT_OF_MEMORY, base, -1, "out of memory checking the BPE1 merges");
  for (uint32_t i = 0; i < merge_count; ++i) {
    const uint64_t at = pos + uint64_t{i} * kBpe1MergeBytes;
    const uint32_t left = load_le32(s + at), right = load_le32(s + at + 4);
    const uint32_t output = load_le32(s + at + 8), rank = load_le32(s + at + 12);
    if (left >= vocab || is_special(left) || right >= vocab || is_special(right))
      return fail(diag, base + at, "BPE1 merge %llu input %llu is not a non-special id below vocab_size",
                  i, left >= vocab || is_special(left) ? left : right);
    if (output < kByteVocab || output >= vocab || recs[output].len == 0)
      return fail(diag, base + at + 8, "BPE1 merge %llu output %llu has no token record", i, output);
    const uint8_t *op = s + recs[output].off;
    const uint64_t ln = id_len(left);
    if (recs[output].len != ln + id_len(right) || !id_at(left, op) || !id_at(right, op + ln))
      return fail(diag, base + at + 8, "BPE1 merge %llu: the bytes of output %llu are not those of %llu then %llu",
                  i, output, left, right);
    ranks[i] = rank;
    pairs[i] = uint64_t{left} << 32 | right;
  }
  if (merge_count > 1) {
    std::sort(ranks.data(), ranks.data() + merge_count);
    for (uint32_t i = 1; i < merge_count; ++i)
      if (ranks[i] == ranks[i - 1])
        return fail(diag, base + 32, "BPE1 merge rank %llu is used twice", ranks[i]);
    std::sort(pairs.data(), pairs.data() + merge_count);
    for (uint32_t i = 1; i < merge_count; ++i)
      if (pairs[i] == pairs[i - 1])
        return fail(diag, base + 32, "BPE1 merge pair (%llu, %llu) appears twice", pairs[i] >> 32,
                    pairs[i] & 0xffffffffu);
  }
  out->kind = kTokenizerBpe1;
  out->vocab_size = vocab;
  return TBLOB_OK;
}

}  // namespace

Status check_tokenizer(const uint8_t *sec, uint64_t len, uint64_t section_offset,
                       uint32_t expected_vocab, const Allocator &a, TokenizerInfo *out,
                       const Diag &diag) {
  *out = TokenizerInfo{};
  if (len < 4)
    return fail(diag, section_offset, "the section is %llu bytes, too short for its magic", len);
  if (std::memcmp(sec, "BTOK", 4) == 0)
    return check_btok(sec, len, section_offset, expected_vocab, out, diag);
  if (std::memcmp(sec, "BPE1", 4) == 0)
    return check_bpe1(sec, len, section_offset, expected_vocab, a, out, diag);
  return fail(diag, section_offset, "magic %02llx %02llx %02llx... is neither BTOK nor BPE1",
              sec[0], sec[1], sec[2]);
}

void encode_btok(uint8_t out[28]) {
  std::memcpy(out, "BTOK", 4);
  store_le32(out + 4, 1);
  store_le32(out + 8, kMinVocab);
  for (int i = 0; i < 4; ++i) store_le32(out + 12 + 4 * i, kBtokIds[i]);
}

}  // namespace slm1
}  // namespace tblob
