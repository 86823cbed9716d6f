#include "formats/slm1/scales.h"

#include "formats/slm1/format.h"

namespace tblob {
namespace slm1 {

uint64_t first_bad_scale(const uint8_t *p, uint64_t count) {
  for (uint64_t k = 0; k < count; ++k)
    if (!scale_bits_ok(load_le32(p + 4 * k))) return k;
  return count;
}

Status check_scales(const uint8_t *f, const Header &h, const Entry *e, uint32_t n, const Diag &diag) {
  using ull = unsigned long long;
  for (uint32_t i = 0; i < n; ++i) {
    if (e[i].dtype == kDtypeF32) continue;
    const uint64_t count = e[i].scale_bytes / 4;
    const uint64_t k = first_bad_scale(f + e[i].scale_offset, count);
    if (k == count) continue;
    const uint64_t at = e[i].scale_offset + 4 * k;
    return diag.fail(TBLOB_E_SLM1_SCALE, at, i,
                     "tensor %u (hash %016llx, entry at byte %llu): %s scale %llu at byte %llu "
                     "(f32 bits 0x%08x) is not finite and positive",
                     i, static_cast<ull>(e[i].hash),
                     static_cast<ull>(h.directory_offset + uint64_t{i} * kEntryBytes),
                     dtype_name(e[i].dtype), static_cast<ull>(k), static_cast<ull>(at), load_le32(f + at));
  }
  return TBLOB_OK;
}

}  // namespace slm1
}  // namespace tblob
