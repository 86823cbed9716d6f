// SLM1 on-disk layout (docs/slm1.md sections 1-6): field offsets, codes and sizes, and the
// little-endian loads and stores every SLM1 file uses. Fields may be unaligned (u64 at header
// offsets 92 and 100, tokenizer sections anywhere), so they are only ever read with memcpy.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/endian.h"

namespace tblob {
namespace slm1 {

constexpr uint8_t kMagic[4] = {'S', 'L', 'M', '1'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kVersionByteSwapped = 0x01000000u;
constexpr uint64_t kHeaderBytes = 108;
constexpr uint64_t kEntryBytes = 64;
constexpr uint64_t kAlign = 64;
constexpr uint32_t kMaxRank = 4;
constexpr uint32_t kKnownHeaderFlags = 1u;  // bit 0: tied output projection

// Header field offsets (section 3).
constexpr uint64_t kOffVersion = 4;
constexpr uint64_t kOffHeaderLength = 8;
constexpr uint64_t kOffModelType = 12;
constexpr uint64_t kOffFlags = 16;
constexpr uint64_t kOffVocabSize = 20;
constexpr uint64_t kOffSpecialTokens = 24;
constexpr uint64_t kOffHiddenSize = 28;
constexpr uint64_t kOffLayerCount = 32;
constexpr uint64_t kOffHeadCount = 36;
constexpr uint64_t kOffKvHeadCount = 40;
constexpr uint64_t kOffHeadDim = 44;
constexpr uint64_t kOffFfnSize = 48;
constexpr uint64_t kOffMaxContext = 52;
constexpr uint64_t kOffRopeTheta = 56;
constexpr uint64_t kOffRmsNormEps = 60;
constexpr uint64_t kOffTokenizerOffset = 64;
constexpr uint64_t kOffTokenizerLength = 72;
constexpr uint64_t kOffDirectoryOffset = 80;
constexpr uint64_t kOffTensorCount = 88;
constexpr uint64_t kOffDataOffset = 92;
constexpr uint64_t kOffChecksum = 100;

// Directory entry field offsets (section 5), relative to the entry.
constexpr uint64_t kEntHash = 0;
constexpr uint64_t kEntDtype = 8;
constexpr uint64_t kEntRank = 12;
constexpr uint64_t kEntDims = 16;
constexpr uint64_t kEntByteOffset = 32;
constexpr uint64_t kEntByteLength = 40;
constexpr uint64_t kEntScaleOffset = 48;
constexpr uint64_t kEntBlockSize = 56;
constexpr uint64_t kEntReserved = 60;

// Dtype codes (section 6); the same numbers as tblob_slm1_dtype.
constexpr uint32_t kDtypeF32 = 1;
constexpr uint32_t kDtypeQ8_0 = 2;
constexpr uint32_t kDtypeQ4_0 = 3;

// Tokenizer sections (section 4).
constexpr uint32_t kTokenizerBtok = 1;  // tblob_slm1_tokenizer_kind
constexpr uint32_t kTokenizerBpe1 = 2;
constexpr uint64_t kBtokBytes = 28;
constexpr uint64_t kBpe1HeaderBytes = 36;
constexpr uint64_t kBpe1MergeBytes = 16;
constexpr uint32_t kByteVocab = 256;
constexpr uint32_t kMinVocab = 260;
constexpr uint32_t kSpecialCount = 4;
constexpr uint32_t kMinSpecialTokens = 4;

inline uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// "f32", "q8_0", "q4_0"; "?" for other codes.
inline const char *dtype_name(uint32_t code) {
  switch (code) {
    case kDtypeF32: return "f32";
    case kDtypeQ8_0: return "q8_0";
    case kDtypeQ4_0: return "q4_0";
    default: return "?";
  }
}

}  // namespace slm1
}  // namespace tblob
