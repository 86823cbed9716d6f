// Entry names of UQFF layers (`<key>.weight`, `<key>.weight.<field>`, `<key>.bias`,
// `uqff.version.*`), each family's exact entry set (docs/uqff.md), and the
// per-row extension block.
#include <cstring>
#include <new>

#include "formats/uqff/uqff_row.h"

namespace tblob {
namespace uqff {

namespace {

struct SuffixName {
  const char *text;  // after "<key>.weight." (empty for the weight itself)
  uint32_t len;
};
constexpr SuffixName kFields[] = {
    {"", 0},
    {"format", 6},
    {"dtype", 5},
    {"shape", 5},
    {"scales", 6},
    {"zeros", 5},
    {"biases", 6},
    {"bits", 4},
    {"group_size", 10},
    {"axis", 4},
    {"optimization_steps", 18},
    {"round_zeros", 11},
    {"channel_wise", 12},
    {"dequant_w_scale", 15},
    {"dequant_x_scale", 15},
    {"quant_scale", 11},
    {"num_blocks", 10},
};
static_assert(sizeof(kFields) / sizeof(kFields[0]) == kSufBias, "one name per weight field");

constexpr char kWeight[] = ".weight";
constexpr size_t kWeightLen = 7;

bool ends_with(const char *p, size_t n, const char *s, size_t k) {
  return n >= k && std::memcmp(p + n - k, s, k) == 0;
}

constexpr uint32_t bit(uint32_t s) { return 1u << s; }

}  // namespace

const char *family_name(Family f) {
  switch (f) {
    case Family::kGgml: return "gguf";
    case Family::kUnquant: return "unquant";
    case Family::kHqq: return "hqq";
    case Family::kFp8: return "fp8";
    case Family::kAfq: return "afq";
    case Family::kF8q8: return "f8q8";
    case Family::kMxfp4: return "mxfp4";
    default: return "none";
  }
}

const char *suffix_text(uint32_t s) {
  static const char *const kText[] = {
      ".weight", ".weight.format", ".weight.dtype", ".weight.shape", ".weight.scales",
      ".weight.zeros", ".weight.biases", ".weight.bits", ".weight.group_size", ".weight.axis",
      ".weight.optimization_steps", ".weight.round_zeros", ".weight.channel_wise",
      ".weight.dequant_w_scale", ".weight.dequant_x_scale", ".weight.quant_scale",
      ".weight.num_blocks", ".bias"};
  return s < kSufCount ? kText[s] : ".weight.?";
}

uint32_t family_mask(Family f) {
  const uint32_t base = bit(kSufWeight) | bit(kSufFormat);
  switch (f) {
    case Family::kGgml: return base | bit(kSufDtype) | bit(kSufShape);
    case Family::kUnquant: return base;
    case Family::kHqq:
      return base | bit(kSufScales) | bit(kSufZeros) | bit(kSufShape) | bit(kSufBits) |
             bit(kSufGroupSize) | bit(kSufAxis) | bit(kSufOptSteps) | bit(kSufRoundZeros) |
             bit(kSufChannelWise);
    case Family::kFp8:
      return base | bit(kSufDequantW) | bit(kSufDequantX) | bit(kSufQuantScale) | bit(kSufDtype);
    case Family::kAfq: return base | bit(kSufBits) | bit(kSufGroupSize) | bit(kSufScales) | bit(kSufBiases);
    case Family::kF8q8: return base | bit(kSufNumBlocks) | bit(kSufShape);
    case Family::kMxfp4: return base | bit(kSufScales);
    default: return 0;
  }
}

uint32_t parse_name(const char *name, size_t len, const char **key, size_t *key_len,
                    uint32_t *version_part) {
  static const char kVer[] = "uqff.version.";
  if (len > sizeof(kVer) - 1 && std::memcmp(name, kVer, sizeof(kVer) - 1) == 0) {
    const char *rest = name + sizeof(kVer) - 1;
    const size_t rn = len - (sizeof(kVer) - 1);
    static const char *const kParts[] = {"major", "minor", "patch"};
    for (uint32_t i = 0; i < 3; ++i) {
      if (rn == std::strlen(kParts[i]) && std::memcmp(rest, kParts[i], rn) == 0) {
        *version_part = i;
        *key = name;
        *key_len = len;
        return kSufVersion;
      }
    }
  }
  if (ends_with(name, len, ".bias", 5) && len > 5) {
    *key = name;
    *key_len = len - 5;
    return kSufBias;
  }
  if (ends_with(name, len, kWeight, kWeightLen) && len > kWeightLen) {
    *key = name;
    *key_len = len - kWeightLen;
    return kSufWeight;
  }
  // The last ".weight." with a non-empty key before it.
  for (size_t i = len; i-- > 1;) {
    if (name[i] != '.') continue;
    if (i < kWeightLen || std::memcmp(name + i - kWeightLen, kWeight, kWeightLen) != 0) continue;
    const size_t klen = i - kWeightLen;
    if (klen == 0) continue;
    const char *field = name + i + 1;
    const size_t fl = len - i - 1;
    *key = name;
    *key_len = klen;
    for (uint32_t s = 1; s < kSufBias; ++s)
      if (kFields[s].len == fl && std::memcmp(kFields[s].text, field, fl) == 0) return s;
    return kSufUnknown;
  }
  *key = name;
  *key_len = len;
  return kSufNone;
}

RowExt *row_ext_new(tblob_model *m, uint32_t rank) {
  const size_t bytes = sizeof(RowExt) + sizeof(uint64_t) * static_cast<size_t>(rank);
  RowExt *e = static_cast<RowExt *>(m->arena.alloc(bytes));
  if (!e) return nullptr;
  new (e) RowExt();
  e->magic = kRowMagic;
  return e;
}

bool ext_build(tblob_model *m) {
  UqffExt *x = static_cast<UqffExt *>(m->arena.alloc(sizeof(UqffExt)));
  const size_t n = m->tensors.size();
  const RowExt **rows = n ? static_cast<const RowExt **>(m->arena.alloc(n * sizeof(RowExt *))) : nullptr;
  if (!x || (n && !rows)) return false;
  for (size_t i = 0; i < n; ++i) rows[i] = reinterpret_cast<const RowExt *>(m->tensors[i].shape) - 1;
  // The small entries of a source-backed shard, set up before the table (entry_data).
  const UqffExt *prev = static_cast<const UqffExt *>(m->ext);
  const bool keep = prev && prev->magic == kExtMagic;
  x->magic = kExtMagic;
  x->rows = n;
  x->row = rows;
  x->small_count = keep ? prev->small_count : 0;
  x->small = keep ? prev->small : nullptr;
  m->ext = x;
  return true;
}

const RowExt *row_ext(const tblob_model *m, uint64_t index) {
  if (!m || m->format != TBLOB_FORMAT_UQFF || !m->ext) return nullptr;
  const UqffExt *x = static_cast<const UqffExt *>(m->ext);
  if (x->magic != kExtMagic || index >= x->rows || index >= m->tensors.size()) return nullptr;
  const RowExt *e = x->row[index];
  return e && e->magic == kRowMagic ? e : nullptr;
}

}  // namespace uqff
}  // namespace tblob
