// fuzz_source: tblob_model_open_source (docs/api.md "Byte sources") over a read function that
// serves the input and misbehaves as the trailer says. Input format: fuzz_common.h (file +
// 3-byte trailer); the variant bits:
//   0  honest, size known        1  honest, size unknown
//   2  lying: `lim` bits 0-2 pick short / overread / changed / 0 forever / a negative that is
//      no status, from the read call (lim >> 3) + 1 on; size known
//   3  honest, size known, and the same bytes through tblob_model_open_memory: same status
//      (safetensors and GGUF input, default limits)
// Every sibling (open_sibling) is the input again, served the same way.
// Per input:
//   1. open with the failing allocator: an injected failure is TBLOB_E_OUT_OF_MEMORY and
//      nothing else may be; *out NULL on failure; close called exactly once per source opened
//      (at once on failure, at model close on success); no leaks;
//   2. with the size known, no read asks for a byte past it; an honest source's open reads at
//      most the input's length of the main source;
//   3. on success: every tensor listed; tblob_tensor_data is TBLOB_E_NOT_MAPPED; tblob_tensor_read
//      of each tensor (up to 1 MiB) returns the input's bytes at file_offset (honest, one file)
//      or a source status; dequantization of each small tensor gives a known status, the same
//      as tblob_tensor_dequant_size when the source is honest;
//   4. a lying source's status is the one its lie produces, whenever a read status surfaces.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_common.h"
#include "tensorblob.h"

namespace {

constexpr uint64_t kMaxOutElems = uint64_t{1} << 18;
constexpr uint64_t kMaxRead = uint64_t{1} << 20;

enum Lie : uint8_t { kShort, kOver, kChanged, kZero, kNegative, kHonest };

struct Shared {
  const uint8_t *file;
  size_t len;
  bool size_known;
  Lie lie;
  uint64_t nth;
  int opens = 0;
  int closes = 0;
  uint64_t main_bytes = 0;  // handed out by the first source (it may be closed before the model)
};

struct Src {
  Shared *sh;
  bool main;
  uint64_t calls = 0;
};

int64_t read_fn(void *user, uint64_t offset, void *dst, size_t len) {
  Src *s = static_cast<Src *>(user);
  const Shared &sh = *s->sh;
  ++s->calls;
  if (sh.size_known)
    FUZZ_ASSERT_MSG(offset <= sh.len && len <= sh.len - offset, "read of %zu bytes at %llu past the size %zu", len,
                    static_cast<unsigned long long>(offset), sh.len);
  if (sh.lie != kHonest && s->calls >= sh.nth) {
    switch (sh.lie) {
      case kOver: return static_cast<int64_t>(len) + 1;
      case kChanged: return TBLOB_E_SOURCE_CHANGED;
      case kZero: return 0;
      case kNegative: return -100000;
      default: break;
    }
  }
  const uint64_t avail = offset < sh.len ? sh.len - offset : 0;
  size_t n = len < avail ? len : static_cast<size_t>(avail);
  if (sh.lie == kShort && s->calls >= sh.nth && n > 0) --n;
  if (n) std::memcpy(dst, sh.file + offset, n);
  if (s->main) s->sh->main_bytes += n;
  return static_cast<int64_t>(n);
}

void close_fn(void *user) {
  Src *s = static_cast<Src *>(user);
  ++s->sh->closes;
  delete s;
}

void fill(Shared *sh, tblob_byte_source *bs) {
  Src *s = new Src{sh, sh->opens == 0};
  ++sh->opens;
  bs->size = sh->size_known ? sh->len : TBLOB_SOURCE_SIZE_UNKNOWN;
  bs->read = read_fn;
  bs->close = close_fn;
  bs->user = s;
  bs->name = "fuzz";
}

tblob_status sibling_fn(void *user, const char *, size_t, tblob_byte_source *out) {
  fill(static_cast<Src *>(user)->sh, out);
  out->open_sibling = sibling_fn;
  return TBLOB_OK;
}

bool source_status(tblob_status s) {
  return s == TBLOB_E_SOURCE_SHORT_READ || s == TBLOB_E_SOURCE_OVERREAD || s == TBLOB_E_SOURCE_CHANGED ||
         s == TBLOB_E_IO;
}

tblob_status lie_status(Lie l) {
  switch (l) {
    case kShort: return TBLOB_E_SOURCE_SHORT_READ;
    case kOver: return TBLOB_E_SOURCE_OVERREAD;
    case kChanged: return TBLOB_E_SOURCE_CHANGED;
    case kZero: return TBLOB_E_SOURCE_SHORT_READ;
    case kNegative: return TBLOB_E_IO;
    default: return TBLOB_OK;
  }
}

// A status from a read: the lie's (or, size unknown / zero-length tails, a short read).
void check_read_status(tblob_status s, const Shared &sh) {
  if (!source_status(s)) return;
  if (sh.lie == kHonest)
    FUZZ_ASSERT_MSG(s == TBLOB_E_SOURCE_SHORT_READ && !sh.size_known, "honest source gave %s", tblob_status_name(s));
  else
    FUZZ_ASSERT_MSG(s == lie_status(sh.lie) || s == TBLOB_E_SOURCE_SHORT_READ, "lie %d gave %s", sh.lie,
                    tblob_status_name(s));
}

// may_oom: the failing allocator (kept by the model) may fail an allocation of a read or decode.
void walk(const tblob_model *m, const Shared &sh, bool may_oom) {
  const uint64_t n = tblob_model_tensor_count(m);
  const bool one_file = tblob_model_file_count(m) == 1;
  for (uint64_t i = 0; i < n; ++i) {
    tblob_tensor_info info = TBLOB_TENSOR_INFO_INIT;
    FUZZ_ASSERT(tblob_tensor_at(m, i, &info, nullptr) == TBLOB_OK);
    const void *v = nullptr;
    uint64_t vl = 0;
    FUZZ_ASSERT(tblob_tensor_data(m, i, &v, &vl, nullptr) == TBLOB_E_NOT_MAPPED);
    if (info.data_length <= kMaxRead) {
      std::vector<uint8_t> b(static_cast<size_t>(info.data_length) + 1, 0xA5);
      tblob_diag d = TBLOB_DIAG_INIT;
      const tblob_status s = tblob_tensor_read(m, i, 0, b.data(), static_cast<size_t>(info.data_length), &d);
      FUZZ_ASSERT_MSG(s == TBLOB_OK || source_status(s), "tensor_read: %s (%s)", tblob_status_name(s), d.message);  // copies into dst: allocates nothing
      check_read_status(s, sh);
      FUZZ_ASSERT(b[static_cast<size_t>(info.data_length)] == 0xA5);
      if (s == TBLOB_OK && sh.lie == kHonest && one_file) {
        FUZZ_ASSERT(info.file_offset <= sh.len && info.data_length <= sh.len - info.file_offset);
        FUZZ_ASSERT_MSG(std::memcmp(b.data(), sh.file + info.file_offset, static_cast<size_t>(info.data_length)) == 0,
                        "tensor %llu: bytes differ from the file's", static_cast<unsigned long long>(i));
      }
      // Past the end: TBLOB_E_RANGE, nothing read.
      FUZZ_ASSERT(tblob_tensor_read(m, i, info.data_length, b.data(), 1, nullptr) == TBLOB_E_RANGE);
    }
    uint64_t logical = info.logical_elements;
    if (logical > kMaxOutElems) continue;
    const size_t bytes = static_cast<size_t>(logical) * 4;
    std::vector<uint8_t> out(bytes + 1, 0xA5);
    uint64_t need = UINT64_MAX;
    tblob_diag d = TBLOB_DIAG_INIT;
    const tblob_status sz = tblob_tensor_dequant_size(m, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, &need, nullptr);
    const tblob_status s = tblob_tensor_dequantize(m, i, TBLOB_DTYPE_F32, 0, TBLOB_ALL_ROWS, out.data(), bytes, &d);
    FUZZ_ASSERT_MSG(fuzz::is_known_status(s), "unknown status %d", s);
    FUZZ_ASSERT(out[bytes] == 0xA5);
    check_read_status(s, sh);
    if (s == TBLOB_E_OUT_OF_MEMORY) {
      FUZZ_ASSERT_MSG(may_oom, "dequantize: TBLOB_E_OUT_OF_MEMORY without a failing allocator");
      continue;
    }
    if (!source_status(s)) FUZZ_ASSERT_MSG(sz == s, "dequant_size %s, dequantize %s (%s)", tblob_status_name(sz),
                                           tblob_status_name(s), d.message);
    if (s == TBLOB_OK) FUZZ_ASSERT(need <= bytes);
    // Row 1 alone (what a row-sliced read gives) equals that row of the whole.
    tblob_quant_info q = TBLOB_QUANT_INFO_INIT;
    if (s == TBLOB_OK && tblob_tensor_quant_info(m, i, &q, nullptr) == TBLOB_OK && q.rows >= 2 &&
        need % q.rows == 0) {
      const size_t row = static_cast<size_t>(need / q.rows);
      std::vector<uint8_t> one(row + 1, 0xA5);
      const tblob_status s1 = tblob_tensor_dequantize(m, i, TBLOB_DTYPE_F32, 1, 2, one.data(), row, nullptr);
      check_read_status(s1, sh);
      FUZZ_ASSERT(one[row] == 0xA5);
      if (sh.lie == kHonest && !(may_oom && s1 == TBLOB_E_OUT_OF_MEMORY))
        FUZZ_ASSERT_MSG(s1 == TBLOB_OK && std::memcmp(one.data(), out.data() + row, row) == 0,
                        "tensor %llu: row 1 alone differs from the whole (%s)", static_cast<unsigned long long>(i),
                        tblob_status_name(s1));
    }
  }
}

bool contains(const uint8_t *p, size_t n, const char *what) {
  const uint8_t *w = reinterpret_cast<const uint8_t *>(what);
  return std::search(p, p + n, w, w + std::strlen(what)) != p + n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fuzz::Params p = fuzz::split_input(data, size);
  const fuzz::ExactCopy file(p.file, p.file_len);
  tblob_open_options opts = fuzz::make_options(p);
  // SLM1 without its checksum reads only the header and directory (and scale arrays): the
  // top bits of lim take that path, with and without the scale check.
  if (p.lim & 0x80u) opts.flags |= TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM;
  if (p.lim & 0x40u) opts.flags |= TBLOB_OPEN_FLAG_SLM1_NO_SCALE_CHECK;
  Shared sh{file.ptr, file.len, p.variant != 1, kHonest, 0};
  if (p.variant == 2) {
    sh.lie = static_cast<Lie>((p.lim & 7u) % 5u);
    sh.nth = (p.lim >> 3) + 1u;
  }
  tblob_status so;
  {
    fuzz::FailingAllocator fa(p.fail_at, file.len);
    opts.allocator = fa.hook();
    tblob_byte_source bs;
    FUZZ_ASSERT(tblob_byte_source_init(&bs, sizeof(bs)) == TBLOB_OK);
    fill(&sh, &bs);
    bs.open_sibling = sibling_fn;
    tblob_model *m = reinterpret_cast<tblob_model *>(&opts);  // must be reset to NULL
    tblob_diag d = TBLOB_DIAG_INIT;
    so = tblob_model_open_source(&bs, &opts, &m, &d);
    FUZZ_ASSERT_MSG(fuzz::is_known_status(so), "unknown status %d", so);
    FUZZ_ASSERT(d.status == so);
    if (so != TBLOB_OK) FUZZ_ASSERT_MSG(d.message[0] != '\0', "%s without a message", tblob_status_name(so));
    if (fa.failed())
      FUZZ_ASSERT_MSG(so == TBLOB_E_OUT_OF_MEMORY || source_status(so), "allocation %u failed but open returned %s",
                      p.fail_at, tblob_status_name(so));
    else
      FUZZ_ASSERT_MSG(so != TBLOB_E_OUT_OF_MEMORY, "TBLOB_E_OUT_OF_MEMORY without a failed allocation");
    check_read_status(so, sh);
    if (so == TBLOB_OK) {
      FUZZ_ASSERT(m != nullptr);
      if (sh.lie == kHonest && sh.size_known) FUZZ_ASSERT(sh.main_bytes <= file.len);
      walk(m, sh, p.fail_at != 0);
      tblob_model_close(m);
    } else {
      FUZZ_ASSERT_MSG(m == nullptr, "failed open left *out set");
    }
    FUZZ_ASSERT_MSG(sh.closes == sh.opens, "%d sources opened, %d closed", sh.opens, sh.closes);
    fa.expect_empty("after tblob_model_open_source/tblob_model_close");
  }
  // The same bytes in memory: the same status (formats both entry points read alike).
  const bool gguf = file.len >= 4 && std::memcmp(file.ptr, "GGUF", 4) == 0;
  bool json = false;
  for (size_t i = 0; i < file.len; ++i) {  // a JSON object: tblob_model_open's shard index, not memory's
    const uint8_t c = file.ptr[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    json = c == '{';
    break;
  }
  const bool slm1 = file.len >= 4 && std::memcmp(file.ptr, "SLM1", 4) == 0;
  // UQFF entry names make the source (like tblob_model_open) open a shard set; memory does not.
  const bool uqff = contains(file.ptr, file.len, "uqff.") || contains(file.ptr, file.len, ".weight.format");
  if (p.variant == 3 && p.fail_at == 0 && (p.limits == 0 || p.limits == 3) && !json && !slm1 && !uqff) {
    opts.allocator = nullptr;
    tblob_model *mm = nullptr;
    const tblob_status sm = tblob_model_open_memory(file.ptr, file.len, &opts, &mm, nullptr);
    FUZZ_ASSERT_MSG(sm == so || (gguf && so == TBLOB_E_LIMIT_HEADER_BYTES), "memory says %s, the source %s",
                    tblob_status_name(sm), tblob_status_name(so));
    tblob_model_close(mm);
  }
  return 0;
}
