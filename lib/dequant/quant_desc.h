// Quantization descriptor: everything a dequantization kernel needs to know about one logical
// tensor, as bytes plus a few numbers. Kernels know nothing about files; the format readers
// (safetensors companions, Ollama blobs, UQFF, ...) fill a QuantDesc and hand it over.
//
// =============================================================================================
// Definitions (the scalar kernels in scalar/ implement exactly this; SIMD kernels must agree
// bit for bit, on every input, including NaN/inf/subnormal cases)
// =============================================================================================
//
// Shape. The tensor is `rows` x `cols` logical elements, row-major; any leading batch axes are
// folded into rows (rows = product of all but the last axis). Quantization groups run along a
// row and never straddle rows: group g of a row covers columns [g*G, (g+1)*G) and uses scale
// (and bias) number row*(cols/G) + g. Outputs are rows*cols values in the output dtype, written
// in host byte order (little-endian on every supported target). Inputs are little-endian and
// may be unaligned (MLX's safetensors writer does not pad).
//
// Packing of MLX codes (affine, mxfp4, mxfp8, nvfp4). Each row's packed bytes are one
// little-endian bit stream: code j occupies stream bits [j*b, j*b + b), least significant bit
// first. For b = 4 that is "low nibble first"; 3-, 5- and 6-bit codes straddle bytes and 32-bit
// words. MLX stores rows as whole uint32 words, so cols*b must be a multiple of 32.
// Plain F4 (safetensors "F4", E2M1) packs two codes per byte, low nibble first, and the stream
// runs over the whole tensor (element e = row*cols + col sits in byte e/2), so only the total
// element count must be even.
//
// Arithmetic. MLX's dequantize on the CPU is a chain of element-wise array ops, each rounded to
// its dtype (its affine_dequantize / fp_dequantize fallbacks; checked against the mlx-cpu
// 0.32.4 wheel on every fixture in tests/data/dequant). We MATCH MLX's
// arithmetic exactly rather than computing an exact f32 value:
//   * affine, scale/bias dtype S in {bf16, f16, f32}:
//         t = round_S(q * s);  v = round_S(t + b);  out = convert(v -> out dtype)
//     i.e. the multiply and the add are separately rounded to S (never fused into an FMA; q*s is
//     exact in f32 for bf16/f16 S, and an f32 add followed by rounding to S equals the correctly
//     rounded S add because f32 has more than 2p+1 bits). MLX then casts that S value to the
//     requested dtype, so an f32 output of bf16-scaled data holds bf16 values. Exact f32
//     arithmetic (one rounding of q*s+b) would differ from MLX in about 60% of elements for
//     bf16 scales, could never be compared bit for bit against MLX, and would claim a precision
//     the stored model never had; matching MLX reproduces what MLX (and so Ollama's MLX runner)
//     computes, for every output dtype.
//   * mxfp4 / mxfp8 / nvfp4 are computed in the output dtype O, as MLX does:
//         mx*:   v = round_O(elem * round_O(E8M0(scale)))   (2^e rounded to O first: for f16
//                output 2^e underflows to 0 below 2^-24 and overflows to inf from 2^16)
//         nvfp4: v = round_O(FP4(code) * E4M3(scale))       (exact product; no rounding occurs)
//     With a global scale (nvfp4 only), in f32 and then rounded once to O:
//         kGlobalScaleMultiplier (Ollama's stored `.global_scale`, a direct multiplier):
//             v = round_O(f32(FP4 * E4M3 * g))     (= Ollama's runner: bf16 dequant, * g in f32)
//         kGlobalScaleMlxAmax (MLX's API argument, tensor amax):
//             f = f32(g / 2688); s' = f32(E4M3 * f); v = round_O(f32(FP4 * s'))
//             (MLX returns f32 here whatever dtype is asked; O = bf16/f16 rounds that once)
//   * plain F8/F4 codes decode exactly to f32 and are rounded once to O; f16/bf16/f32 inputs
//     are converted exactly/rounded once (same-dtype output copies the bits unchanged).
//   * Rounding is always to nearest, ties to even (convert.h). A NaN produced by scheme
//     arithmetic (affine, mx*, nvfp4) is written as the canonical quiet NaN (f32 0x7FC00000,
//     f16 0x7E00, bf16 0x7FC0), so every ISA gives the same bits; plain decodes keep the sign of
//     the NaN code (as ml_dtypes does) and float conversions keep sign and top payload bits.
//
// SLM1 symmetric integers (kSlm1Q8, kSlm1Q4; docs/slm1.md section 6). Signed codes times one
// little-endian f32 scale per group along a row (scale_dtype F32, no bias, no global scale):
//   * kSlm1Q8 (SLM1 q8_0): int8 two's-complement codes, one byte each, row-major
//     (data_bytes = rows * cols); the group is the whole row: group_size == cols, one scale
//     per row (scales_bytes = rows * 4).
//   * kSlm1Q4 (SLM1 q4_0): 4-bit two's-complement codes, two per byte, each row packed on its
//     own: code c of row r is in byte r*cols/2 + c/2, low nibble (bits 0-3) for even c, high
//     nibble for odd c, sign-extended (8..15 -> -8..-1). group_size = the SLM1 block_size:
//     even, >= 2, divides cols (so rows are whole bytes; data_bytes = rows * cols / 2). Block b
//     of row r covers columns [b*G, (b+1)*G) and uses scale r*(cols/G) + b
//     (scales_bytes = rows * (cols/G) * 4).
//   Value: v = f32(q) * s, exactly one IEEE f32 multiply rounded to nearest even (never fused
//   with anything); f16/bf16 output is that f32 rounded once to nearest even (convert.h).
//   A NaN produced by the arithmetic (NaN scale, +-inf scale times code 0) is written as the
//   canonical quiet NaN, as for the other schemes; +-inf scales and overflow give +-inf, and
//   subnormal scales/products are kept (no flush to zero on any ISA). bits is 0 or the
//   scheme's width (8 / 4). The SLM1 reader only admits finite positive scales unless the
//   scale check is skipped, but the kernels define every f32 bit pattern.
//
// Special values (QuantDesc::special, a set of kSpec* bits) follow the format that stored the
// data. kSpecialOcp (0, the default) is the OCP MX / ml_dtypes meaning: E4M3 0x7F/0xFF = NaN,
// E8M0 0xFF = NaN, E8M0 0x00 = 2^-127. kSpecialMlx is MLX as pinned by Ollama (<= v0.32.2):
// E4M3 0x7F/0xFF = +-480, E8M0 0xFF = +inf. (mlx 0.32.4 changed its E4M3 decoder to NaN for
// 0x7F/0xFF: that is kSpecialMlx0324. MLX's own encoders never emit these codes.)
// kSpecialMistralRs: E8M0 0x00 = 0.0, 0xFF = +inf, E4M3 as OCP (UQFF MXFP4/FP8).
//
// F6_E2M3 / F6_E3M2 are NOT schemes: safetensors only fixes their size (6 bits per element,
// element count a multiple of 4) and ml_dtypes stores one code per byte; no source we trust
// pins how four codes share three bytes (bit order, nibble/byte order), and torchao's packing
// for example is MSB-first. Element decoders exist in minifloat.h for when it is pinned.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "tensorblob.h"

namespace tblob {

// ---- statuses (pinned in tensorblob.h, -70..-99) -------------------------------------------
// Unknown scheme, a bit width the scheme does not have, unknown special/global-scale value.
constexpr tblob_status kStatusQuantScheme = TBLOB_E_QUANT_SCHEME;
// Group size 0, not dividing the row, not the scheme's fixed size, or set for a plain scheme.
constexpr tblob_status kStatusQuantGroupSize = TBLOB_E_QUANT_GROUP_SIZE;
// Codes do not pack into whole units: an MLX row is not whole uint32 words, F4 count is odd.
constexpr tblob_status kStatusQuantPacking = TBLOB_E_QUANT_PACKING;
// Packed data byte length differs from what rows x cols need.
constexpr tblob_status kStatusQuantDataSize = TBLOB_E_QUANT_DATA_SIZE;
// Scale encoding not allowed for the scheme (or scales given to a scheme without scales).
constexpr tblob_status kStatusQuantScaleDtype = TBLOB_E_QUANT_SCALE_DTYPE;
// Scale byte length differs from rows x groups x scale size (too short or too long).
constexpr tblob_status kStatusQuantScaleSize = TBLOB_E_QUANT_SCALE_SIZE;
// Bias encoding wrong: missing for affine, differing from the scale dtype, or given where the
// scheme has no bias.
constexpr tblob_status kStatusQuantBiasDtype = TBLOB_E_QUANT_BIAS_DTYPE;
// Bias byte length differs from rows x groups x bias size.
constexpr tblob_status kStatusQuantBiasSize = TBLOB_E_QUANT_BIAS_SIZE;
// Global scale on a scheme other than nvfp4, missing, or not exactly one f32 (4 bytes).
constexpr tblob_status kStatusQuantGlobalScale = TBLOB_E_QUANT_GLOBAL_SCALE;
// Output dtype is not F32, F16 or BF16.
constexpr tblob_status kStatusDequantOutDtype = TBLOB_E_DEQUANT_OUT_DTYPE;

// ---- schemes ------------------------------------------------------------------------------
enum class QuantScheme : uint32_t {
  kInvalid = 0,
  kMlxAffine = 1,    // w = s*q + b; bits 1,2,3,4,5,6,8; scale/bias bf16, f16 or f32
  kMxfp4 = 2,        // E2M1 codes, E8M0 scale per 32
  kMxfp8 = 3,        // E4M3 codes, E8M0 scale per 32
  kNvfp4 = 4,        // E2M1 codes, E4M3 scale per 16, optional f32 global scale
  kF8E4M3 = 5,       // plain safetensors F8_E4M3
  kF8E5M2 = 6,       // F8_E5M2
  kF8E8M0 = 7,       // F8_E8M0
  kF8E4M3Fnuz = 8,   // F8_E4M3FNUZ
  kF8E5M2Fnuz = 9,   // F8_E5M2FNUZ
  kF4E2M1 = 10,      // F4: two E2M1 codes per byte, low nibble first
  kF16 = 11,         // passthrough / convert
  kBF16 = 12,
  kF32 = 13,
  // Hugging Face block FP8 (DeepSeek-V3 style): E4M3 codes, one scale (`weight_scale_inv`,
  // f32/bf16/f16) per group_size x group_size block of the 2-D [rows, cols] tensor, partial
  // blocks at the edges. Own validation/entry point: scalar/block_fp8.h.
  kBlockFp8 = 14,
  // SLM1 q8_0 / q4_0 (definitions above): signed int8 / int4 codes, f32 scale per row / block.
  kSlm1Q8 = 15,
  kSlm1Q4 = 16,
};
constexpr uint32_t kQuantSchemeCount = 17;

// Special-value bits (see the comment block above).
constexpr uint32_t kSpecE4M3MaxFinite = 1u << 0;   // E4M3 0x7F/0xFF -> +-480 instead of NaN
constexpr uint32_t kSpecE8M0MaxInf = 1u << 1;      // E8M0 0xFF -> +inf instead of NaN
constexpr uint32_t kSpecE8M0ZeroIsZero = 1u << 2;  // E8M0 0x00 -> 0.0 instead of 2^-127
constexpr uint32_t kSpecAll = kSpecE4M3MaxFinite | kSpecE8M0MaxInf | kSpecE8M0ZeroIsZero;
constexpr uint32_t kSpecialOcp = 0;
constexpr uint32_t kSpecialMlx = kSpecE4M3MaxFinite | kSpecE8M0MaxInf;
constexpr uint32_t kSpecialMlx0324 = kSpecE8M0MaxInf;
constexpr uint32_t kSpecialMistralRs = kSpecE8M0MaxInf | kSpecE8M0ZeroIsZero;

// nvfp4 global scale interpretation.
enum class GlobalScaleMode : uint32_t {
  kNone = 0,
  kMultiplier = 1,  // Ollama `<name>.global_scale`: w = FP4 * E4M3 * g
  kMlxAmax = 2,     // MLX quantize/dequantize argument: w = FP4 * E4M3 * (g / (448*6))
};

struct QuantDesc {
  QuantScheme scheme = QuantScheme::kInvalid;
  // Element bits: required for kMlxAffine (1..6 or 8); for every other scheme 0 means "the
  // scheme's own width" and any other value must equal it.
  uint32_t bits = 0;
  // Elements per scale along a row: any divisor of cols for affine (MLX uses 32/64/128),
  // exactly 32 for mxfp4/mxfp8, 16 for nvfp4, cols for kSlm1Q8, an even divisor of cols for
  // kSlm1Q4, 0 for the plain schemes.
  uint32_t group_size = 0;
  // tblob_dtype of the scales/biases: affine F32/F16/BF16 (bias dtype == scale dtype);
  // mx* F8_E8M0; nvfp4 F8_E4M3 (MLX stores both as U8: the resolver states the encoding);
  // kSlm1Q8/kSlm1Q4 F32; TBLOB_DTYPE_INVALID (0) when absent.
  uint32_t scale_dtype = 0;
  uint32_t bias_dtype = 0;
  uint32_t special = kSpecialOcp;  // kSpec* bits
  GlobalScaleMode global_scale_mode = GlobalScaleMode::kNone;
  uint64_t rows = 0;
  uint64_t cols = 0;
  const uint8_t *data = nullptr;  // packed codes / elements
  uint64_t data_bytes = 0;
  const uint8_t *scales = nullptr;
  uint64_t scales_bytes = 0;
  const uint8_t *biases = nullptr;
  uint64_t biases_bytes = 0;
  const uint8_t *global_scale = nullptr;  // one little-endian f32
  uint64_t global_scale_bytes = 0;
};

// Checks a descriptor completely (scheme, bits, flags, group size, packing, every byte length
// exactly, pointers present). Checked arithmetic only; never reads the data. TBLOB_OK or one of
// the kStatusQuant* values, TBLOB_E_SHAPE_OVERFLOW when sizes overflow 64 bits, or
// TBLOB_E_INVALID_ARGUMENT for a NULL pointer with a non-zero length.
Status validate_desc(const QuantDesc &d);

// Element bits of the stored codes (after validation): affine d.bits, fp4 4, fp8 8, ...
uint32_t quant_element_bits(const QuantDesc &d);
// Scales the descriptor needs: one per group, or one per block for kBlockFp8 (0 when the
// group size is 0).
uint64_t quant_scale_count(const QuantDesc &d);

// Bytes one output element takes for out_dtype (F32 4, F16/BF16 2), 0 if not an output dtype.
uint32_t dequant_out_size(uint32_t out_dtype);

// The name of scheme number s from dequant/quant_scheme_list.def ("mlx-affine", ...), nullptr
// for 0 and values outside the enum.
const char *quant_scheme_label(uint32_t s);
// "none" (0), "mlx-affine", "mxfp4", ..., "slm1-q8_0", "slm1-q4_0"; nullptr for a number that
// is no scheme (tblob_quant_scheme_name returns this).
const char *quant_scheme_name(QuantScheme s);

}  // namespace tblob
