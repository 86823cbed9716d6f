// Quantization scale values (docs/slm1.md section 6): every scale is a finite f32 > 0
// (positive subnormals included).
#pragma once
#include <cstdint>

#include "core/status.h"
#include "formats/slm1/entry.h"
#include "formats/slm1/header.h"

namespace tblob {
namespace slm1 {

// On the bit pattern: sign 0, exponent not all ones, not +0.
inline bool scale_bits_ok(uint32_t bits) { return bits - 1u < 0x7f7fffffu; }

// Index of the first bad scale among count little-endian f32 at p, or count.
uint64_t first_bad_scale(const uint8_t *p, uint64_t count);

// Section 11 step 8 over every quantized entry (regions already checked to be in the file).
Status check_scales(const uint8_t *file, const Header &h, const Entry *e, uint32_t n,
                    const Diag &diag);

}  // namespace slm1
}  // namespace tblob
