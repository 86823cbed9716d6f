// GGML type table, the set lookups (answered by the kernel-set objects of dequant/dispatch.cpp,
// which detects the CPU and reads TBLOB_KERNEL) and the checked entry point.
#include <cstring>
#include <initializer_list>

#include "core/checked.h"
#include "dequant/dispatch.h"
#include "dequant/quant_desc.h"
#include "dequant/ggml/ggml.h"

namespace tblob {
namespace ggml {

#if !defined(TBLOB_GGML_NEON)
// Builds without ggml_neon.cpp (other ISAs, or simd_neon disabled) have no NEON set.
const Kernels *neon_kernels() { return nullptr; }
#endif

namespace {

// In slot order. Sizes: ggml-common.h block structs.
constexpr TypeInfo kTypes[kSlotCount] = {
    {kTypeF32, kSlotF32, "f32", "f32", 1, 4, 32},
    {kTypeF16, kSlotF16, "f16", "f16", 1, 2, 16},
    {kTypeBF16, kSlotBF16, "bf16", "bf16", 1, 2, 16},
    {kTypeQ4_0, kSlotQ4_0, "q4_0", "q4_0", 32, 18, 4},
    {kTypeQ4_1, kSlotQ4_1, "q4_1", "q4_1", 32, 20, 4},
    {kTypeQ5_0, kSlotQ5_0, "q5_0", "q5_0", 32, 22, 5},
    {kTypeQ5_1, kSlotQ5_1, "q5_1", "q5_1", 32, 24, 5},
    {kTypeQ8_0, kSlotQ8_0, "q8_0", "q8_0", 32, 34, 8},
    {kTypeQ8_1, kSlotQ8_1, "q8_1", "q8_1", 32, 36, 8},
    {kTypeQ2_K, kSlotQ2_K, "q2_K", "q2k", 256, 84, 2},
    {kTypeQ3_K, kSlotQ3_K, "q3_K", "q3k", 256, 110, 3},
    {kTypeQ4_K, kSlotQ4_K, "q4_K", "q4k", 256, 144, 4},
    {kTypeQ5_K, kSlotQ5_K, "q5_K", "q5k", 256, 176, 5},
    {kTypeQ6_K, kSlotQ6_K, "q6_K", "q6k", 256, 210, 6},
    {kTypeQ8_K, kSlotQ8_K, "q8_K", "q8k", 256, 292, 8},
    {kTypeIQ4_NL, kSlotIQ4_NL, "iq4_nl", nullptr, 32, 18, 4},
    {kTypeIQ4_XS, kSlotIQ4_XS, "iq4_xs", nullptr, 256, 136, 4},
    {kTypeTQ2_0, kSlotTQ2_0, "tq2_0", nullptr, 256, 66, 2},
    {kTypeMXFP4, kSlotMXFP4, "mxfp4", nullptr, 32, 17, 4},
    {kTypeTQ1_0, kSlotTQ1_0, "tq1_0", nullptr, 256, 54, 2},
    {kTypeIQ2_XXS, kSlotIQ2_XXS, "iq2_xxs", nullptr, 256, 66, 2},
    {kTypeIQ2_XS, kSlotIQ2_XS, "iq2_xs", nullptr, 256, 74, 2},
    {kTypeIQ2_S, kSlotIQ2_S, "iq2_s", nullptr, 256, 82, 2},
    {kTypeIQ3_XXS, kSlotIQ3_XXS, "iq3_xxs", nullptr, 256, 98, 3},
    {kTypeIQ3_S, kSlotIQ3_S, "iq3_s", nullptr, 256, 110, 3},
    {kTypeIQ1_S, kSlotIQ1_S, "iq1_s", nullptr, 256, 50, 1},
    {kTypeIQ1_M, kSlotIQ1_M, "iq1_m", nullptr, 256, 56, 1},
    {kTypeNVFP4, kSlotNVFP4, "nvfp4", nullptr, 64, 36, 4},
    {kTypeQ1_0, kSlotQ1_0, "q1_0", nullptr, 128, 18, 1},
};

// ggml_type id -> slot + 1 (0: not decoded); ids run 0..41.
struct SlotOfId {
  uint8_t v[42] = {};
  constexpr SlotOfId() {
    for (uint32_t i = 0; i < kSlotCount; ++i) v[kTypes[i].id] = static_cast<uint8_t>(i + 1);
  }
};
constexpr SlotOfId kSlotOfId{};

}  // namespace

const TypeInfo *type_info(uint32_t id) {
  if (id >= sizeof kSlotOfId.v || kSlotOfId.v[id] == 0) return nullptr;
  return &kTypes[kSlotOfId.v[id] - 1];
}

const TypeInfo *type_info_by_slot(uint32_t slot) { return slot < kSlotCount ? &kTypes[slot] : nullptr; }

// Block sizes are powers of two (1 to 256): masks and shifts instead of 64-bit divisions (they are a
// measurable part of a cache-resident call).
inline uint32_t block_shift(const TypeInfo &t) { return static_cast<uint32_t>(__builtin_ctz(t.block_elems)); }

bool bytes_for(const TypeInfo &t, uint64_t elements, uint64_t *bytes) {
  if ((elements & (t.block_elems - 1u)) != 0) return false;
  return checked_mul(elements >> block_shift(t), t.block_bytes, bytes);
}

Status kernels_by_name(const char *name, const Kernels **out) {
  if (!name) return TBLOB_E_INVALID_ARGUMENT;
  const Kernels *k = ggml_kernels_by_name(name);
  if (k) {
    *out = k;
    return TBLOB_OK;
  }
  return kernel_set_known(name) ? TBLOB_E_UNSUPPORTED  // not built, or not this CPU
                                : TBLOB_E_INVALID_ARGUMENT;
}

// dispatch.cpp's process-wide choice; scalar in the "unavailable" state, where dequantize()
// refuses to run.
const Kernels &active_kernels() {
  const Kernels *k = active_ggml_kernels();
  return k ? *k : scalar_kernels();
}

Status dequantize(const Kernels &k, uint32_t ggml_type, const uint8_t *src, uint64_t src_bytes,
                  uint64_t elements, uint32_t out_dtype, void *dst, uint64_t dst_bytes,
                  const Diag &diag) {
  if (&k == &active_kernels() && active_ggml_kernels() == nullptr)  // "unavailable"
    return diag.fail(kStatusKernelUnavailable, TBLOB_NO_OFFSET, -1,
                     "TBLOB_KERNEL names a kernel set this host or build cannot run");
  const TypeInfo *t = type_info(ggml_type);
  if (!t)
    return diag.fail(TBLOB_E_UNSUPPORTED, TBLOB_NO_OFFSET, -1, "ggml type %u is not one this library decodes",
                     ggml_type);
  const uint32_t esize = dequant_out_size(out_dtype);
  if (esize == 0)
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                     "output dtype %u is not F32, F16 or BF16", out_dtype);
  uint64_t need_src;
  if ((elements & (t->block_elems - 1u)) != 0)
    return diag.fail(TBLOB_E_TENSOR_SIZE, TBLOB_NO_OFFSET, -1,
                     "%llu elements is not a whole number of %s blocks of %u",
                     static_cast<unsigned long long>(elements), t->name, t->block_elems);
  if (!bytes_for(*t, elements, &need_src))
    return diag.fail(TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, -1, "%s byte count overflows", t->name);
  if (need_src != src_bytes)
    return diag.fail(TBLOB_E_TENSOR_SIZE, TBLOB_NO_OFFSET, -1,
                     "%llu %s elements need %llu bytes of blocks, got %llu",
                     static_cast<unsigned long long>(elements), t->name,
                     static_cast<unsigned long long>(need_src), static_cast<unsigned long long>(src_bytes));
  uint64_t need_dst;
  if (!checked_mul(elements, esize, &need_dst))
    return diag.fail(TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, -1, "output byte count overflows");
  if (need_dst > dst_bytes)
    return diag.fail(TBLOB_E_BUFFER_TOO_SMALL, TBLOB_NO_OFFSET, -1,
                     "output needs %llu bytes, the buffer has %llu",
                     static_cast<unsigned long long>(need_dst), static_cast<unsigned long long>(dst_bytes));
  if (elements == 0) return TBLOB_OK;
  if (!src || !dst) return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1, "NULL source or destination");
  size_t nblocks;
  if (!to_size(elements >> block_shift(*t), &nblocks))
    return diag.fail(TBLOB_E_SHAPE_OVERFLOW, TBLOB_NO_OFFSET, -1, "block count exceeds size_t");
  const BlocksToF32 fn = k.to_f32[t->slot];
  if (out_dtype == TBLOB_DTYPE_F32) {
    fn(src, nblocks, static_cast<float *>(dst), stream_output(need_dst) ? kStream : 0u);
    return TBLOB_OK;
  }
  // f16 / bf16: decode a chunk of blocks to f32 on the stack, then narrow it.
  constexpr size_t kChunkFloats = 4096;
  alignas(64) float buf[kChunkFloats];
  const size_t per = kChunkFloats / t->block_elems;  // block_elems <= 256
  const F32ToHalf narrow = out_dtype == TBLOB_DTYPE_F16 ? k.to_f16 : k.to_bf16;
  uint16_t *out = static_cast<uint16_t *>(dst);
  for (size_t i = 0; i < nblocks; i += per) {
    const size_t nb = nblocks - i < per ? nblocks - i : per;
    fn(src + i * t->block_bytes, nb, buf, 0u);
    narrow(buf, nb * t->block_elems, out + i * t->block_elems);
  }
  return TBLOB_OK;
}

}  // namespace ggml
}  // namespace tblob
