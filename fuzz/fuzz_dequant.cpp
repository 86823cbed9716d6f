// fuzz_dequant: random descriptor + bytes through every dequantization kernel set the host can
// run (scalar, avx2, avx512 / neon); every set must produce the scalar reference's bytes
// exactly, write nothing outside its output, and read nothing outside the descriptor's
// ranges (each range is its own exact-size heap block under ASan, or sits against an
// inaccessible page otherwise).
//
// Input: a 16-byte header, then the bytes the ranges are filled from (cycled when short):
//   [0] scheme (% 17; 0 and 14 are rejected by validation)   [1] affine bits selector
//   [2] group size selector   [3] scale dtype selector (raw dtype when >= 0x80)
//   [4] special bits (& 7, | raw when >= 0x80)   [5] global scale mode (% 3)
//   [6..7] rows (LE, % 64 + 1)   [8..9] cols (LE, % 2048 + 1, rounded up to a valid
//   multiple unless [13] bit 0)   [10] output dtype (% 3)   [11] row_begin, [12] row_end
//   selectors   [13] flags: bit 0 raw cols, bit 1 non-temporal path (stream threshold 0),
//   bits 2-3 destination misalignment, bit 4 guard page before instead of after
//   [14] length tweak of one range (0: none)   [15] unused
// Inputs shorter than the header are padded with zeros.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "dequant/dequant.h"
#include "dequant/dispatch.h"
#include "dequant/quant_desc.h"
#include "dequant/scalar/scalar.h"
#include "fuzz_common.h"

using namespace tblob;

namespace {

constexpr size_t kHeader = 16;
constexpr uint64_t kMaxElems = uint64_t{1} << 16;

// One input range: exact heap block (ASan sees any overrun) or page-guarded mapping.
class Range {
 public:
  Range(size_t n, bool guard_before) : n_(n) {
#ifdef FUZZ_HAVE_MALLOC_HOOKS
    (void)guard_before;
    heap_ = static_cast<uint8_t *>(std::malloc(n ? n : 1));
    FUZZ_ASSERT(heap_ != nullptr);
    ptr_ = heap_;
#else
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t body = (n + page - 1) / page * page + page;
    len_ = body + 2 * page;
    void *m = mmap(nullptr, len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    FUZZ_ASSERT(m != MAP_FAILED);
    map_ = static_cast<uint8_t *>(m);
    mprotect(map_, page, PROT_NONE);
    mprotect(map_ + page + body, page, PROT_NONE);
    ptr_ = guard_before ? map_ + page : map_ + page + body - n;
#endif
  }
  ~Range() {
#ifdef FUZZ_HAVE_MALLOC_HOOKS
    std::free(heap_);
#else
    munmap(map_, len_);
#endif
  }
  Range(const Range &) = delete;
  Range &operator=(const Range &) = delete;
  uint8_t *data() { return ptr_; }
  size_t size() const { return n_; }

 private:
  uint8_t *ptr_ = nullptr;
  size_t n_ = 0;
#ifdef FUZZ_HAVE_MALLOC_HOOKS
  uint8_t *heap_ = nullptr;
#else
  uint8_t *map_ = nullptr;
  size_t len_ = 0;
#endif
};

// Fills ranges from the input tail, cycling.
struct Source {
  const uint8_t *p;
  size_t n, pos = 0;
  void fill(uint8_t *dst, size_t len) {
    for (size_t i = 0; i < len; ++i) {
      dst[i] = n ? p[pos % n] : static_cast<uint8_t>(i * 131 + 7);
      ++pos;
    }
  }
};

uint64_t gcd(uint64_t a, uint64_t b) { return b ? gcd(b, a % b) : a; }

uint32_t esize_of(uint32_t dt) {
  return dt == TBLOB_DTYPE_F32 ? 4 : (dt == TBLOB_DTYPE_F16 || dt == TBLOB_DTYPE_BF16) ? 2 : 1;
}

struct Restore {
  uint64_t old;
  ~Restore() { set_stream_threshold(old); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size) {
  uint8_t h[kHeader] = {};
  std::memcpy(h, in, size < kHeader ? size : kHeader);
  Source src{in + (size < kHeader ? size : kHeader), size < kHeader ? 0 : size - kHeader};

  static const uint32_t kBits[] = {1, 2, 3, 4, 5, 6, 8, 4};
  static const uint32_t kGroups[] = {32, 64, 128, 16, 8, 3, 5, 24, 48, 96, 256, 12, 1, 2, 40, 80};
  static const uint32_t kScaleDt[] = {TBLOB_DTYPE_BF16, TBLOB_DTYPE_F16, TBLOB_DTYPE_F32,
                                      TBLOB_DTYPE_F8_E8M0, TBLOB_DTYPE_F8_E4M3, 0};
  static const uint32_t kOut[] = {TBLOB_DTYPE_F32, TBLOB_DTYPE_F16, TBLOB_DTYPE_BF16};

  QuantDesc d;
  static_assert(kQuantSchemeCount == 17, "the scheme byte covers every scheme");
  d.scheme = static_cast<QuantScheme>(h[0] % kQuantSchemeCount);
  const bool affine = d.scheme == QuantScheme::kMlxAffine;
  const bool slm1_q8 = d.scheme == QuantScheme::kSlm1Q8, slm1_q4 = d.scheme == QuantScheme::kSlm1Q4;
  const bool grouped = affine || d.scheme == QuantScheme::kMxfp4 || d.scheme == QuantScheme::kMxfp8 ||
                       d.scheme == QuantScheme::kNvfp4 || slm1_q8 || slm1_q4;
  d.bits = affine ? kBits[h[1] % 8] : (h[1] >= 0xF0 ? h[1] & 15u : 0);
  if (affine) {
    d.group_size = kGroups[h[2] % 16];
  } else if (slm1_q4) {
    d.group_size = 2 * (1 + h[2] % 64);  // any even block
  } else if (d.scheme == QuantScheme::kNvfp4) {
    d.group_size = 16;
  } else if (grouped) {
    d.group_size = 32;
  }
  if (h[2] >= 0xF8) d.group_size = h[2] & 7u;  // sometimes nonsense
  if (h[3] >= 0x80) {
    d.scale_dtype = h[3] & 0x1Fu;
  } else if (affine) {
    d.scale_dtype = kScaleDt[h[3] % 3];
  } else if (slm1_q8 || slm1_q4) {
    d.scale_dtype = TBLOB_DTYPE_F32;
  } else if (d.scheme == QuantScheme::kNvfp4) {
    d.scale_dtype = TBLOB_DTYPE_F8_E4M3;
  } else if (grouped) {
    d.scale_dtype = TBLOB_DTYPE_F8_E8M0;
  }
  d.bias_dtype = affine ? d.scale_dtype : 0;
  d.special = (h[4] & 7u) | (h[4] >= 0xF0 ? (h[4] & 8u) : 0u);
  d.global_scale_mode = d.scheme == QuantScheme::kNvfp4 ? static_cast<GlobalScaleMode>(h[5] % 3)
                                                        : GlobalScaleMode::kNone;
  d.rows = ((h[6] | (h[7] << 8)) % 64) + 1;
  uint64_t cols = ((h[8] | (h[9] << 8)) % 2048) + 1;
  const uint8_t flags = h[13];
  if ((flags & 1u) == 0) {
    // Round up to a shape validation accepts: whole groups, whole 32-bit words per row for
    // the MLX schemes, an even element count for F4.
    uint64_t unit = 1;
    const uint32_t b = quant_element_bits(d);
    if (grouped && d.group_size != 0 && b != 0) {
      const uint64_t wc = 32 / gcd(b, 32);
      unit = d.group_size / gcd(d.group_size, wc) * wc;
    } else if (d.scheme == QuantScheme::kF4E2M1) {
      unit = 2;
    }
    if (slm1_q4 && d.group_size != 0) unit = d.group_size;
    if (slm1_q8) unit = 1;
    cols = (cols + unit - 1) / unit * unit;
  }
  d.cols = cols;
  if (slm1_q8 && h[2] < 0xF8) d.group_size = static_cast<uint32_t>(cols);  // one scale per row
  if (d.rows * d.cols > kMaxElems) d.rows = kMaxElems / d.cols ? kMaxElems / d.cols : 1;
  if (d.rows * d.cols > kMaxElems) return 0;

  // Honest byte lengths, then (sometimes) one of them off by a little.
  const uint32_t eb = quant_element_bits(d) ? quant_element_bits(d) : 8;
  uint64_t data_bytes = d.rows * d.cols * eb / 8;
  uint64_t groups = (grouped && d.group_size) ? d.rows * (d.cols / d.group_size) : 0;
  uint64_t scale_bytes = d.scale_dtype ? groups * esize_of(d.scale_dtype) : 0;
  uint64_t bias_bytes = d.bias_dtype ? groups * esize_of(d.bias_dtype) : 0;
  const uint64_t gs_bytes = d.global_scale_mode != GlobalScaleMode::kNone ? 4 : 0;
  switch (h[14] & 7u) {
    case 1: data_bytes += 1; break;
    case 2: data_bytes = data_bytes ? data_bytes - 1 : 0; break;
    case 3: scale_bytes = scale_bytes ? scale_bytes - 1 : 1; break;
    case 4: bias_bytes += 2; break;
    default: break;
  }
  const bool guard_before = (flags & 16u) != 0;
  Range data(data_bytes, guard_before), scales(scale_bytes, !guard_before),
      biases(bias_bytes, guard_before), global(gs_bytes, !guard_before);
  src.fill(data.data(), data_bytes);
  src.fill(scales.data(), scale_bytes);
  src.fill(biases.data(), bias_bytes);
  src.fill(global.data(), gs_bytes);
  d.data = data_bytes ? data.data() : nullptr;
  d.data_bytes = data_bytes;
  d.scales = scale_bytes ? scales.data() : nullptr;
  d.scales_bytes = scale_bytes;
  d.biases = bias_bytes ? biases.data() : nullptr;
  d.biases_bytes = bias_bytes;
  d.global_scale = gs_bytes ? global.data() : nullptr;
  d.global_scale_bytes = gs_bytes;

  const uint32_t out = kOut[h[10] % 3];
  uint64_t rb = h[11] % (d.rows + 1), re = h[12] % (d.rows + 1);
  if (rb > re) {
    const uint64_t t = rb;
    rb = re;
    re = t;
  }
  if (h[12] >= 0xF0) re = d.rows;
  uint64_t need = 0;
  const Status st = dequant_output_bytes(d, out, rb, re, &need);
  if (st != TBLOB_OK) {
    // A rejected descriptor is rejected the same way by every entry point.
    uint8_t dummy[4];
    FUZZ_ASSERT(dequantize_rows_with(scalar_kernel_table(), d, out, rb, re, dummy, 0) == st);
    return 0;
  }

  Restore restore{set_stream_threshold((flags & 2u) ? 0 : stream_threshold())};
  const size_t mis = (flags >> 2) & 3u;
  const size_t n = static_cast<size_t>(need);
  uint8_t *want = static_cast<uint8_t *>(std::malloc(n + 1));
  uint8_t *got = static_cast<uint8_t *>(std::malloc(n + mis + 64));
  FUZZ_ASSERT(want && got);
  FUZZ_ASSERT(dequantize_rows_with(scalar_kernel_table(), d, out, rb, re, want, n) == TBLOB_OK);

  uint32_t count = 0;
  const char *const *names = supported_kernels(&count);
  for (uint32_t i = 0; i < count; ++i) {
    const KernelTable *k = kernel_table_by_name(names[i]);
    FUZZ_ASSERT(k != nullptr);
    std::memset(got, 0xA5, n + mis + 64);
    FUZZ_ASSERT_MSG(dequantize_rows_with(*k, d, out, rb, re, got + mis, n) == TBLOB_OK, "%s", names[i]);
    for (size_t j = 0; j < mis; ++j) FUZZ_ASSERT_MSG(got[j] == 0xA5, "%s wrote before dst", names[i]);
    for (size_t j = mis + n; j < n + mis + 64; ++j) {
      FUZZ_ASSERT_MSG(got[j] == 0xA5, "%s wrote past the output", names[i]);
    }
    if (std::memcmp(got + mis, want, n) != 0) {
      size_t j = 0;
      while (got[mis + j] == want[j]) ++j;
      FUZZ_ASSERT_MSG(false, "%s differs from scalar: %s bits=%u G=%u sdt=%u %llux%llu out=%u rows [%llu,%llu) byte %zu",
                      names[i], quant_scheme_name(d.scheme), d.bits, d.group_size, d.scale_dtype,
                      static_cast<unsigned long long>(d.rows), static_cast<unsigned long long>(d.cols), out,
                      static_cast<unsigned long long>(rb), static_cast<unsigned long long>(re), j);
    }
  }
  std::free(want);
  std::free(got);
  return 0;
}
