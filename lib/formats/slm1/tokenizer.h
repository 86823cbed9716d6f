// SLM1 tokenizer sections, BTOK and BPE1 (docs/slm1.md section 4): complete validation.
#pragma once
#include <cstdint>

#include "core/allocator.h"
#include "core/status.h"

namespace tblob {
namespace slm1 {

struct TokenizerInfo {
  uint32_t kind = 0;        // kTokenizerBtok / kTokenizerBpe1
  uint32_t vocab_size = 0;
};

// Validates the section [sec, sec + len) that starts at byte section_offset of the file
// (for messages). expected_vocab is the header's vocab_size, or 0 to skip that comparison
// (the writer learns the vocabulary from the section). Scratch memory is bounded by len.
Status check_tokenizer(const uint8_t *sec, uint64_t len, uint64_t section_offset,
                       uint32_t expected_vocab, const Allocator &a, TokenizerInfo *out,
                       const Diag &diag);

// The 28-byte default section: BTOK version 1, vocabulary 260, specials 256-259.
void encode_btok(uint8_t out[28]);

}  // namespace slm1
}  // namespace tblob
