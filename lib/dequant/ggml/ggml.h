// GGML block quantization (ggml-org/ggml `src/ggml-common.h` layouts, `dequantize_row_*`
// formulas): the type table, the kernel table and the checked
// entry point. Kernels know nothing about files; UQFF (and anything else that stores raw ggml
// blocks) hands over bytes.
//
// Definition (the scalar kernels in ggml_scalar.cpp; every SIMD set must agree bit for bit):
//  - Block fields are little-endian; f16 fields are IEEE binary16, widened exactly.
//  - Per-element arithmetic is ggml's reference order, each operation rounded to f32 and never
//    fused: Q4_0 `(q-8)*d`, Q4_1 `q*d + m`, Q5_0 `(q-16)*d`, Q5_1 `q*d + m`, Q8_0/Q8_1/Q8_K
//    `q*d`, Q2_K/Q4_K/Q5_K `(d*sc)*q - (dmin*m)`, Q3_K `(d*(sc-32))*q`, Q6_K `(d*sc)*q`.
//    For finite scales every product is exact in f32 (at most 24 significant bits), so only
//    the final add/subtract rounds and FMA contraction could not change a result anyway.
//  - IQ4_NL `d*kv[q]`, IQ4_XS `(d*(ls-32))*kv[q]` (kv: the 16-entry non-linear grid),
//    TQ1_0/TQ2_0 `d*t` (t in -1..1; TQ1_0 unpacks base-3 digits by multiplying a byte by a power
//    of 3 modulo 256 and taking the top of x*3), MXFP4 `e*k` (e: the E8M0 byte as a float
//    holding half the scale; k: the E2M1 code doubled, -12..12), as gguf-py computes them.
//    IQ2_XXS/IQ2_XS/IQ2_S `((d*(0.5+s))*0.25*g)*sign`, IQ3_XXS the same with 0.5,
//    IQ3_S `(d*(1+2s))*g*sign`, IQ1_S/IQ1_M `(d*(2s+1))*(g+-0.125)` (g: a lattice value from
//    iq_grids.h; sign: +-1 from the block's sign bits or the parity-completed 7-bit pattern).
//    NVFP4 `u*k` (u: a UE4M3 scale byte per 16 elements as a float holding half the scale, 0
//    for bytes 0x00 and 0x7F, the top bit ignored; k as MXFP4), Q1_0 `bit ? d : -d`.
//    For finite d every one of these products is exact in f32 as well.
//  - Q8_1's `s` and Q8_K's `bsums` are ignored (ggml has no to_float for Q8_1; by the struct's
//    meaning y = qs*d).
//  - NaN: a block whose scale fields are not finite (f16 exponent 31, or Q8_K's f32 `d`) is
//    decoded by the scalar block function, which writes any NaN result as the canonical quiet
//    NaN 0x7FC00000. Infinities are kept. gguf's numpy dequantizer agrees on every block with
//    finite scales (tests/data/ggml); NaN payloads are not something gguf or ggml pin.
//  - f16/bf16 output: the f32 result rounded to nearest even (dequant/convert.h).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace tblob {
namespace ggml {

// ggml_type ids (GG include/ggml.h), as UQFF stores them in `<key>.weight.dtype`.
enum : uint32_t {
  kTypeF32 = 0,
  kTypeF16 = 1,
  kTypeQ4_0 = 2,
  kTypeQ4_1 = 3,
  kTypeQ5_0 = 6,
  kTypeQ5_1 = 7,
  kTypeQ8_0 = 8,
  kTypeQ8_1 = 9,
  kTypeQ2_K = 10,
  kTypeQ3_K = 11,
  kTypeQ4_K = 12,
  kTypeQ5_K = 13,
  kTypeQ6_K = 14,
  kTypeQ8_K = 15,
  kTypeIQ2_XXS = 16,
  kTypeIQ2_XS = 17,
  kTypeIQ3_XXS = 18,
  kTypeIQ1_S = 19,
  kTypeIQ4_NL = 20,
  kTypeIQ3_S = 21,
  kTypeIQ2_S = 22,
  kTypeIQ4_XS = 23,
  kTypeIQ1_M = 29,
  kTypeBF16 = 30,
  kTypeTQ1_0 = 34,
  kTypeTQ2_0 = 35,
  kTypeMXFP4 = 39,
  kTypeNVFP4 = 40,
  kTypeQ1_0 = 41,
};

// Kernel slots, one per supported type.
enum Slot : uint32_t {
  kSlotF32 = 0, kSlotF16, kSlotBF16, kSlotQ4_0, kSlotQ4_1, kSlotQ5_0, kSlotQ5_1, kSlotQ8_0,
  kSlotQ8_1, kSlotQ2_K, kSlotQ3_K, kSlotQ4_K, kSlotQ5_K, kSlotQ6_K, kSlotQ8_K,
  // The newer types (ggml_blocks.h TBLOB_GGML_AVX2_TYPES): AVX2 and NEON kernels for all.
  kSlotIQ4_NL, kSlotIQ4_XS, kSlotTQ2_0, kSlotMXFP4,
  kSlotTQ1_0, kSlotIQ2_XXS, kSlotIQ2_XS, kSlotIQ2_S, kSlotIQ3_XXS, kSlotIQ3_S, kSlotIQ1_S, kSlotIQ1_M,
  kSlotNVFP4, kSlotQ1_0,
  kSlotCount
};

struct TypeInfo {
  uint32_t id;           // ggml_type
  Slot slot;
  const char *name;      // ggml's name: "q4_K", "f16", ...
  const char *uqff_name; // mistral.rs's IsqType label: "q4k", "q8_0", ... ("f16" for floats);
                         // nullptr for types mistral.rs does not write (IQ4_NL, TQ*, MXFP4...)
  uint32_t block_elems;  // 32, 64, 128, 256, or 1 for the float types
  uint32_t block_bytes;
  uint32_t bits;         // nominal bits per weight (4 for Q4_K, 16 for F16, ...)
};

// nullptr for an id this library does not decode (anything outside the table above).
const TypeInfo *type_info(uint32_t ggml_type);
const TypeInfo *type_info_by_slot(uint32_t slot);

// Decodes nblocks consecutive blocks to f32. `src` and `dst` may have any alignment.
// Contract: src holds nblocks * block_bytes bytes, dst room for nblocks * block_elems floats.
// flags: kStream allows non-temporal stores (the dispatcher sets it for f32 outputs of at least
// the size dequant/dispatch.h stream_output() streams; the kernel then issues the closing fence itself:
// AVX2 MOVNTPS + SFENCE, NEON STNP + DMB ISHST). Results are identical with or without it.
constexpr uint32_t kStream = 1u;
using BlocksToF32 = void (*)(const uint8_t *src, size_t nblocks, float *dst, uint32_t flags);
// f32 -> f16 / bf16 for n values (round to nearest even, as convert.h).
using F32ToHalf = void (*)(const float *src, size_t n, uint16_t *dst);

struct Kernels {
  const char *name;  // the implementation: "scalar", "avx2" or "neon" (tblob_ggml_kernel_name)
  // to_f32[slot]: whole blocks, any src/dst alignment. to_f16/to_bf16 narrow f32 values.
  BlocksToF32 to_f32[kSlotCount];
  F32ToHalf to_f16;
  F32ToHalf to_bf16;
};

const Kernels &scalar_kernels();
// The AVX2 set (ggml_avx2.cpp, x86-64; needs AVX2+FMA+F16C), or nullptr when not compiled in.
// Whether the CPU runs it is dequant/dispatch.h's question, not this file's.
const Kernels *avx2_kernels();
// The NEON set (ggml_neon.cpp, AArch64 baseline Advanced SIMD, built unless simd_neon is
// disabled), or nullptr when not compiled in. Every AArch64 CPU runs it.
const Kernels *neon_kernels();

// The set in use: the GGML kernels of dequant/dispatch.h's process-wide set object
// (TBLOB_KERNEL, tblob_kernel_set): the AVX2 GGML set for avx2/avx512, NEON for neon, scalar
// for scalar.
const Kernels &active_kernels();
// The GGML kernels of dispatch.h's set `name` ("avx512" gives the AVX2 set): TBLOB_OK,
// TBLOB_E_UNSUPPORTED when the host cannot run it or it is not built,
// TBLOB_E_INVALID_ARGUMENT for an unknown name.
Status kernels_by_name(const char *name, const Kernels **out);

// The scalar per-block decoders (the definition). Used by SIMD sets for blocks with
// non-finite scales.
void scalar_block(uint32_t slot, const uint8_t *src, float *dst);
// The scalar whole-row kernel of a slot (instantiated for the slots SIMD sets do not
// implement), so every set's table is complete.
template <uint32_t SLOT>
void scalar_rows(const uint8_t *src, size_t nblocks, float *dst, uint32_t flags);

// Checked entry point: decodes `elements` values (a multiple of the block size) starting at
// block 0 of src into dst as out_dtype (TBLOB_DTYPE_F32 / F16 / BF16).
// TBLOB_E_UNSUPPORTED (unknown type), TBLOB_E_TENSOR_SIZE (elements not a multiple of the
// block, or src_bytes != the exact byte count), TBLOB_E_SHAPE_OVERFLOW,
// TBLOB_E_BUFFER_TOO_SMALL (checked before writing anything), TBLOB_E_INVALID_ARGUMENT.
Status dequantize(const Kernels &k, uint32_t ggml_type, const uint8_t *src, uint64_t src_bytes,
                  uint64_t elements, uint32_t out_dtype, void *dst, uint64_t dst_bytes,
                  const Diag &diag);

// Byte count of `elements` values of a type; false when elements is not a multiple of the
// block size or the count overflows.
bool bytes_for(const TypeInfo &t, uint64_t elements, uint64_t *bytes);

}  // namespace ggml
}  // namespace tblob
