// What a UQFF model keeps per table row: a RowExt allocated in the model's arena together
// with the row's shape array (one block: [RowExt][dims...], the row's shape points at the
// dims), and tblob_model::ext pointing at a UqffExt that lists them in table order.
// Everything is trivially destructible and released with the arena.
#pragma once
#include <cstddef>
#include <cstdint>

#include "table/model.h"
#include "formats/uqff/uqff.h"

namespace tblob {
namespace uqff {

// One stored entry of a layer (bytes live in the mapped/read shard). A shard read through a
// byte source holds only its small entries in memory: data is null for the others, which
// are read from file `file` at `offset` when dequantized.
struct Part {
  const uint8_t *data = nullptr;
  uint64_t offset = 0;  // absolute offset in its file
  uint32_t file = 0;
  uint64_t bytes = 0;
  uint32_t dtype = 0;
  uint32_t rank = 0;
  const uint64_t *shape = nullptr;
};

struct LayerInfo {
  Family family = Family::kNone;
  const char *label = "";
  uint32_t ggml_type = UINT32_MAX;
  uint32_t bits = 0;
  uint32_t group_size = 0;
  uint32_t hqq_axis = 0;
  uint32_t shard = 0;
  uint32_t shard_span = 1;
  uint32_t has_bias = 0;
  uint32_t scale_dtype = 0;
  uint64_t experts = 0;        // stacked [E, out, in]: E; else 0
  uint64_t rows = 1;           // per expert
  uint64_t cols = 1;
  uint64_t elements = 0;       // logical
  uint64_t stored_bytes = 0;
  uint64_t f8q8_blocks = 0;
  float fp8_scale = 0.0f;      // FP8: dequant_w_scale
  Part weight;                 // `<key>.weight` (plain rows: the tensor itself)
  Part scales;                 // AFQ/HQQ scales, MXFP4 E8M0 scales
  Part aux;                    // AFQ biases, HQQ zeros
};

constexpr uint64_t kRowMagic = 0x55514646524F5731ull;  // "UQFFROW1"

struct alignas(8) RowExt {
  uint64_t magic;
  uint32_t is_layer;
  uint32_t reserved;
  LayerInfo info;
};
static_assert(sizeof(RowExt) % 8 == 0, "dims follow the RowExt, 8-byte aligned");

// Allocates [RowExt][rank dims] in the arena; returns the RowExt (dims at ext + 1).
RowExt *row_ext_new(tblob_model *m, uint32_t rank);
inline uint64_t *row_dims(RowExt *e) { return reinterpret_cast<uint64_t *>(e + 1); }

constexpr uint64_t kExtMagic = 0x5551464645585431ull;  // "UQFFEXT1"
// An entry of a source-backed shard read at open (file 0, by file offset).
struct SmallEntry {
  uint64_t offset;
  uint64_t bytes;
  const uint8_t *data;
};
// Entries of at most this many bytes are read at open from a source-backed shard: every
// entry the layer checks read (scalars, `.weight.shape` of up to 8 dims, version tags) fits.
constexpr uint64_t kSmallEntryBytes = 64;

struct UqffExt {
  uint64_t magic;
  size_t rows;
  const RowExt *const *row;  // one per table row
  size_t small_count;        // source-backed shard: its small entries, by offset; else 0
  const SmallEntry *small;
};
// Points m->ext at a UqffExt built from the table's shape pointers (after the table is final).
bool ext_build(tblob_model *m);
// nullptr when row `index` of m has none (not a UQFF model, index out of range).
const RowExt *row_ext(const tblob_model *m, uint64_t index);

// ---- entry names ----------------------------------------------------------------------------
enum Suffix : uint32_t {
  kSufWeight = 0,     // <key>.weight
  kSufFormat,         // <key>.weight.format
  kSufDtype,
  kSufShape,
  kSufScales,
  kSufZeros,
  kSufBiases,
  kSufBits,
  kSufGroupSize,
  kSufAxis,
  kSufOptSteps,
  kSufRoundZeros,
  kSufChannelWise,
  kSufDequantW,
  kSufDequantX,
  kSufQuantScale,
  kSufNumBlocks,
  kSufBias,           // <key>.bias
  kSufCount,
  kSufUnknown = 100,  // <key>.weight.<something else>
  kSufVersion = 101,  // uqff.version.{major,minor,patch}
  kSufNone = 102,     // no layer pattern at all
};
const char *suffix_text(uint32_t s);  // ".weight", ".weight.format", ..., ".bias"

// Splits an entry name: key (borrowed from name) and suffix. Version keys give kSufVersion
// with *version_part 0/1/2.
uint32_t parse_name(const char *name, size_t len, const char **key, size_t *key_len,
                    uint32_t *version_part);

// Exact entry sets of each family (without the optional bias), bit i = Suffix i.
uint32_t family_mask(Family f);

}  // namespace uqff
}  // namespace tblob
