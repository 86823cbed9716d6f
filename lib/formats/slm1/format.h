// The SLM1 container (docs/slm1.md sections 1-7, 10): on-disk layout (field offsets, codes,
// sizes), the fixed header, directory entries, the whole-file checksum, scale values and the
// data region: decoding, encoding and the rules the reader checks and the writer obeys.
// Fields may be unaligned (u64 at header offsets 92 and 100, tokenizer sections anywhere),
// so they are only ever read with the core/endian.h loads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/allocator.h"
#include "core/endian.h"
#include "core/limits.h"
#include "core/status.h"

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


// "f32", "q8_0", "q4_0"; "?" for other codes.
inline const char *dtype_name(uint32_t code) {
  switch (code) {
    case kDtypeF32: return "f32";
    case kDtypeQ8_0: return "q8_0";
    case kDtypeQ4_0: return "q4_0";
    default: return "?";
  }
}

// ---- The SLM1 fixed header (docs/slm1.md section 3): parsing and the field rules, shared by the
// reader (which reports byte offsets) and the writer (which must never write a file the
// reader rejects).

struct Header {
  uint32_t version = 0;
  uint32_t header_length = 0;
  uint32_t model_type = 0;
  uint32_t flags = 0;
  uint32_t vocab_size = 0;
  uint32_t special_token_count = 0;
  uint32_t hidden_size = 0;
  uint32_t layer_count = 0;
  uint32_t head_count = 0;
  uint32_t kv_head_count = 0;
  uint32_t head_dim = 0;
  uint32_t ffn_size = 0;
  uint32_t max_context = 0;
  float rope_theta = 0.0f;
  float rms_norm_epsilon = 0.0f;
  uint64_t tokenizer_offset = 0;
  uint64_t tokenizer_length = 0;
  uint64_t directory_offset = 0;
  uint32_t tensor_count = 0;
  uint64_t data_offset = 0;
  uint64_t checksum = 0;
};

// The first broken rule among flags and the hyperparameters, in offset order (section 3).
struct HeaderProblem {
  uint64_t offset = 0;        // byte offset of the field in the header
  const char *field = "";     // its name in docs/slm1.md
  char why[112] = {0};        // "is 0; it must be non-zero"
};
bool header_fields_ok(const Header &h, HeaderProblem *p);

// Steps 1-3 of section 11: length, magic, version, header fields, section offsets, the
// tensor_count bound (before anything is allocated). Reads only [file, file + file_len).
Status read_header(const uint8_t *file, uint64_t file_len, const Limits &limits, Header *out,
                   const Diag &diag);

// Writes the 108 header bytes (checksum as stored in h).
void encode_header(const Header &h, uint8_t out[108]);

// ---- One 64-byte SLM1 directory entry (docs/slm1.md sections 5-6): decoding, encoding and the
// per-entry rules with the exact encoded sizes they imply.

struct Entry {
  // Stored fields.
  uint64_t hash = 0;
  uint32_t dtype = 0;
  uint32_t rank = 0;
  uint32_t dims[4] = {0, 0, 0, 0};
  uint64_t byte_offset = 0;
  uint64_t byte_length = 0;
  uint64_t scale_offset = 0;
  uint32_t block_size = 0;
  uint32_t reserved = 0;
  // Derived by check_entry_shape.
  uint64_t rows = 0;          // product of all dims but the last (1 for rank 1)
  uint64_t cols = 0;          // the last dim
  uint64_t elements = 0;      // rows x cols
  uint64_t payload_bytes = 0; // the exact byte_length for dtype and shape
  uint64_t scale_bytes = 0;   // 0 for f32
};

void decode_entry(const uint8_t *p, Entry *e);
void encode_entry(const Entry &e, uint8_t out[64]);

struct EntryProblem {
  Status status = TBLOB_OK;
  uint64_t field = 0;  // offset of the offending field inside the entry
  char why[160] = {0};
};

// Section 11 step 5 up to, not including, the byte_length comparison: dtype (TBLOB_E_DTYPE);
// rank, dims, reserved, block_size, f32 scale_offset (TBLOB_E_SLM1_ENTRY); rank above
// max_rank (TBLOB_E_LIMIT_RANK); element or byte counts overflowing 64 bits or size_t
// (TBLOB_E_SHAPE_OVERFLOW). Fills the derived fields on success.
bool check_entry_shape(Entry *e, uint32_t max_rank, EntryProblem *p);

// ---- The SLM1 whole-file checksum, our interpretation (docs/slm1.md section 10): start at the
// FNV-1a 64 offset basis; per byte i (bytes 100-107 read as 0):
//   c ^= byte | (i << 8);  c = rotl64(c, 27);  c *= 0x100000001b3.

// Incremental form: bytes are fed in file order, from file offset 0.
class ChecksumStream {
 public:
  void update(const uint8_t *p, size_t n);
  uint64_t value() const { return c_; }
  uint64_t position() const { return i_; }

 private:
  uint64_t c_ = 0xcbf29ce484222325ull;
  uint64_t i_ = 0;
};

uint64_t checksum(const uint8_t *buf, uint64_t len);

// ---- Quantization scale values (docs/slm1.md section 6): every scale is a finite f32 > 0
// (positive subnormals included).

// On the bit pattern: sign 0, exponent not all ones, not +0.
inline bool scale_bits_ok(uint32_t bits) { return bits - 1u < 0x7f7fffffu; }

// Index of the first bad scale among count little-endian f32 at p, or count.
uint64_t first_bad_scale(const uint8_t *p, uint64_t count);

// TBLOB_E_SLM1_SCALE for scale k of entry i (f32 bits `bits`), with the entry and byte named.
Status scale_fail(const Header &h, const Entry *e, uint32_t i, uint64_t k, uint32_t bits, const Diag &diag);

// Section 11 step 8 over every quantized entry (regions already checked to be in the file).
Status check_scales(const uint8_t *file, const Header &h, const Entry *e, uint32_t n,
                    const Diag &diag);

// ---- The SLM1 data region (docs/slm1.md section 7): every payload and scale array inside the
// file, 64-byte aligned, packed in offset order from tensor_data_offset with zero padding of
// fewer than 64 bytes between regions, and nothing after the last one.

// Section 11 step 7 over entries already checked by check_entry_shape. Scratch memory is
// proportional to n (bounded by the directory bytes). data_padding false: the padding between
// data regions is not looked at (a byte source whose data bytes were not read; the padding
// after the tokenizer lies before the directory and is always checked).
Status check_data_region(const uint8_t *file, uint64_t file_len, const Header &h,
                         const Entry *entries, uint32_t n, const Allocator &a, const Diag &diag,
                         bool data_padding = true);

}  // namespace slm1
}  // namespace tblob
