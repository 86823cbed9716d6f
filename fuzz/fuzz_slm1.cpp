// fuzz_slm1: tblob_slm1_open_memory and the SLM1 API on the model it builds, plus the writer
// on values taken from the input. Input format: fuzz_common.h (file + 3-byte trailer); the
// variant bits choose the open flags:
//   0  strict (checksum and scale checks on)     1  TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM
//   2  no checksum, no scale check, and the writer round trip below
//   3  no checksum, with a required-names list (the golden names and one name of the real
//      FNV-1a collision pair)
// Per input:
//   1. open with the failing allocator: an injected failure must come back as
//      TBLOB_E_OUT_OF_MEMORY and nothing else may; no leaks, allocation within the budget;
//   2. "the checksum is checked last": the same bytes with TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM
//      added must give the same status, except that a strict TBLOB_E_SLM1_CHECKSUM may open;
//   3. on success, walk every tensor: generic and SLM1 infos agree, every payload and scale
//      array lies inside the buffer on a 64-byte boundary, regions do not overlap, dtype x
//      shape = bytes, names are the listed name or "fnv1a:<hash>", lookups by hash and by
//      listed name find their rows, the other collision name is refused; decode every value;
//   4. variant 2: the input bytes as f32 values through tblob_slm1_writer (every dtype);
//      non-finite values are refused with TBLOB_E_INVALID_ARGUMENT, anything finite must
//      give a file that opens strictly (so no quantizer ever writes a bad scale).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "fuzz_common.h"
#include "tensorblob.h"

namespace {

const char *const kNames[] = {"attn.q.weight", "ffn.up.weight", "norm.weight", "evoeblcqtitri"};
const char *const kOtherOfPair = "fukm7eicq6d9h";  // same FNV-1a 64 as "evoeblcqtitri"
constexpr size_t kNameCount = sizeof(kNames) / sizeof(kNames[0]);

uint32_t flags_for(uint8_t variant) {
  switch (variant) {
    case 0: return 0;
    case 2: return TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM | TBLOB_OPEN_FLAG_SLM1_NO_SCALE_CHECK;
    default: return TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM;
  }
}

struct Region {
  uint64_t begin, end;
};

// Reads, decodes and cross-checks everything an open model exposes.
void walk(const tblob_model *m, const uint8_t *file, size_t len, bool listed, bool scales_checked) {
  FUZZ_ASSERT(tblob_model_format(m) == TBLOB_FORMAT_SLM1);
  tblob_slm1_header_info h = TBLOB_SLM1_HEADER_INFO_INIT;
  FUZZ_ASSERT(tblob_slm1_header(m, &h, nullptr) == TBLOB_OK);
  const uint64_t n = tblob_model_tensor_count(m);
  FUZZ_ASSERT(n == h.tensor_count);
  FUZZ_ASSERT(h.tensor_directory_offset % 64 == 0 && h.tensor_data_offset % 64 == 0);
  FUZZ_ASSERT(h.tensor_data_offset == h.tensor_directory_offset + 64 * n);
  FUZZ_ASSERT(h.tensor_data_offset <= len);
  FUZZ_ASSERT(h.tokenizer == file + h.tokenizer_offset);
  std::vector<Region> regions;
  uint64_t prev_hash = 0;
  for (uint64_t i = 0; i < n; ++i) {
    tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
    tblob_slm1_tensor_info s = TBLOB_SLM1_TENSOR_INFO_INIT;
    FUZZ_ASSERT(tblob_tensor_at(m, i, &t, nullptr) == TBLOB_OK);
    FUZZ_ASSERT(tblob_slm1_tensor_at(m, i, &s, nullptr) == TBLOB_OK);
    FUZZ_ASSERT(s.rank >= 1 && s.rank <= 4 && t.rank == s.rank);
    if (h.directory_sorted && i > 0) FUZZ_ASSERT(s.name_hash > prev_hash);
    prev_hash = s.name_hash;
    uint64_t elements = 1;
    for (uint32_t k = 0; k < 4; ++k) {
      if (k < s.rank) {
        FUZZ_ASSERT(s.dims[k] != 0);
        elements *= s.dims[k];  // fits: checked at open
      } else {
        FUZZ_ASSERT(s.dims[k] == 0);
      }
    }
    FUZZ_ASSERT(s.cols == s.dims[s.rank - 1] && s.rows * s.cols == elements);
    // Generic row: stored dtype and shape.
    uint64_t stored = 1;
    for (uint32_t k = 0; k < t.rank; ++k) stored *= t.shape[k];
    FUZZ_ASSERT(stored == t.element_count);
    FUZZ_ASSERT(stored * tblob_dtype_bits(t.dtype) / 8 == t.data_length);
    FUZZ_ASSERT(t.data_length == s.byte_length && t.file_offset == s.byte_offset);
    FUZZ_ASSERT(t.data_offset + h.tensor_data_offset == s.byte_offset);
    switch (s.dtype) {
      case TBLOB_SLM1_F32:
        FUZZ_ASSERT(t.dtype == TBLOB_DTYPE_F32 && s.byte_length == 4 * elements);
        FUZZ_ASSERT(s.scales == nullptr && s.scale_length == 0 && s.block_size == 0);
        break;
      case TBLOB_SLM1_Q8_0:
        FUZZ_ASSERT(t.dtype == TBLOB_DTYPE_I8 && s.byte_length == elements && s.block_size == s.cols);
        FUZZ_ASSERT(s.scale_length == 4 * s.rows);
        break;
      case TBLOB_SLM1_Q4_0:
        FUZZ_ASSERT(t.dtype == TBLOB_DTYPE_U8 && s.byte_length * 2 == elements);
        FUZZ_ASSERT(s.block_size >= 2 && s.block_size % 2 == 0 && s.cols % s.block_size == 0);
        FUZZ_ASSERT(s.scale_length == 4 * s.rows * (s.cols / s.block_size));
        break;
      default:
        FUZZ_ASSERT_MSG(false, "dtype %u", s.dtype);
    }
    // Zero-copy views inside the buffer, 64-byte aligned offsets.
    FUZZ_ASSERT(s.byte_offset % 64 == 0 && s.byte_offset + s.byte_length <= len);
    FUZZ_ASSERT(static_cast<const uint8_t *>(s.payload) == file + s.byte_offset);
    const void *data;
    uint64_t dlen;
    FUZZ_ASSERT(tblob_tensor_data(m, i, &data, &dlen, nullptr) == TBLOB_OK);
    FUZZ_ASSERT(data == s.payload && dlen == s.byte_length);
    regions.push_back({s.byte_offset, s.byte_offset + s.byte_length});
    if (s.dtype != TBLOB_SLM1_F32) {
      FUZZ_ASSERT(s.scale_offset % 64 == 0 && s.scale_offset + s.scale_length <= len);
      FUZZ_ASSERT(static_cast<const uint8_t *>(s.scales) == file + s.scale_offset);
      regions.push_back({s.scale_offset, s.scale_offset + s.scale_length});
    }
    // Decode every value (the reference formula), touching every byte.
    uint64_t acc = 0;
    const uint8_t *pl = static_cast<const uint8_t *>(s.payload);
    const uint8_t *sc = static_cast<const uint8_t *>(s.scales);
    for (uint64_t e = 0; e < elements; ++e) {
      float v;
      if (s.dtype == TBLOB_SLM1_F32) {
        std::memcpy(&v, pl + 4 * e, 4);
      } else {
        const uint64_t r = e / s.cols, c = e % s.cols;
        float scale;
        int q;
        if (s.dtype == TBLOB_SLM1_Q8_0) {
          std::memcpy(&scale, sc + 4 * r, 4);
          q = static_cast<int8_t>(pl[e]);
        } else {
          std::memcpy(&scale, sc + 4 * (r * (s.cols / s.block_size) + c / s.block_size), 4);
          const int nib = (pl[e / 2] >> ((e & 1) * 4)) & 0xf;
          q = nib >= 8 ? nib - 16 : nib;
        }
        if (scales_checked) FUZZ_ASSERT(std::isfinite(scale) && scale > 0.0f);
        v = static_cast<float>(q) * scale;
      }
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      acc += bits;
    }
    fuzz::consume(acc);
    // Names and lookups.
    char label[32];
    std::snprintf(label, sizeof(label), "fnv1a:%016llx", static_cast<unsigned long long>(s.name_hash));
    const std::string name(t.name, t.name_len);
    if (s.name_listed) {
      FUZZ_ASSERT(listed && tblob_fnv1a64(t.name, t.name_len) == s.name_hash);
      uint64_t idx = UINT64_MAX;
      FUZZ_ASSERT(tblob_tensor_find(m, t.name, t.name_len, &idx, nullptr) == TBLOB_OK && idx == i);
    } else {
      FUZZ_ASSERT_MSG(name == label, "row %llu named %s, hash %s", static_cast<unsigned long long>(i),
                      name.c_str(), label);
    }
    uint64_t idx = UINT64_MAX;
    FUZZ_ASSERT(tblob_slm1_find_hash(m, s.name_hash, &idx, nullptr) == TBLOB_OK && idx == i);
  }
  // Regions never overlap (the strict layout; zero-length regions do not exist).
  std::sort(regions.begin(), regions.end(), [](const Region &a, const Region &b) { return a.begin < b.begin; });
  for (size_t k = 0; k < regions.size(); ++k) {
    FUZZ_ASSERT(regions[k].begin < regions[k].end && regions[k].begin >= h.tensor_data_offset);
    if (k) FUZZ_ASSERT(regions[k].begin >= regions[k - 1].end);
  }
  FUZZ_ASSERT((regions.empty() ? h.tensor_data_offset : regions.back().end) == len);
  tblob_tensor_info t = TBLOB_TENSOR_INFO_INIT;
  FUZZ_ASSERT(tblob_tensor_at(m, n, &t, nullptr) == TBLOB_E_RANGE);
  if (listed) {
    uint64_t idx;
    FUZZ_ASSERT(tblob_tensor_find(m, kOtherOfPair, std::strlen(kOtherOfPair), &idx, nullptr) == TBLOB_E_HASH_COLLISION);
  }
}

struct OpenResult {
  tblob_status status = TBLOB_OK;
  bool alloc_failed = false;
};

OpenResult open_once(const fuzz::Params &p, const fuzz::ExactCopy &file, uint32_t flags, bool listed,
                     bool walk_it) {
  tblob_open_options opts = fuzz::make_options(p);
  opts.flags = flags;
  fuzz::FailingAllocator fa(p.fail_at, file.len);
  opts.allocator = fa.hook();
  tblob_slm1_open_options so = TBLOB_SLM1_OPEN_OPTIONS_INIT;
  size_t lens[kNameCount];
  for (size_t k = 0; k < kNameCount; ++k) lens[k] = std::strlen(kNames[k]);
  if (listed) {
    so.required_names = kNames;
    so.required_name_lens = lens;
    so.required_name_count = kNameCount;
  }
  tblob_model *m = reinterpret_cast<tblob_model *>(&opts);  // must be reset to NULL
  tblob_diag d = TBLOB_DIAG_INIT;
  OpenResult r;
  r.status = tblob_slm1_open_memory(file.ptr, file.len, &opts, &so, &m, &d);
  FUZZ_ASSERT_MSG(fuzz::is_known_status(r.status), "unknown status %d", r.status);
  fuzz::check_diag(d, r.status, file.len);
  r.alloc_failed = fa.failed();
  if (r.alloc_failed)
    FUZZ_ASSERT_MSG(r.status == TBLOB_E_OUT_OF_MEMORY, "allocation %u failed but open returned %s",
                    p.fail_at, tblob_status_name(r.status));
  else
    FUZZ_ASSERT_MSG(r.status != TBLOB_E_OUT_OF_MEMORY, "TBLOB_E_OUT_OF_MEMORY without a failed allocation");
  if (r.status == TBLOB_OK) {
    FUZZ_ASSERT(m != nullptr);
    if (walk_it) walk(m, file.ptr, file.len, listed, !(flags & TBLOB_OPEN_FLAG_SLM1_NO_SCALE_CHECK));
    tblob_model_close(m);
  } else {
    FUZZ_ASSERT_MSG(m == nullptr, "failed open left *out set");
  }
  fa.expect_empty("after tblob_slm1_open_memory/tblob_model_close");
  return r;
}

// ---- the writer on input-derived values ---------------------------------------------------

std::string g_dir, g_path;

void remove_temp() {
  if (!g_path.empty()) ::unlink(g_path.c_str());
  if (!g_dir.empty()) ::rmdir(g_dir.c_str());
}

const char *temp_path() {
  if (!g_path.empty()) return g_path.c_str();
  const char *bases[] = {"/dev/shm", std::getenv("TMPDIR"), "/tmp"};
  for (const char *base : bases) {
    if (!base || !*base) continue;
    std::string tmpl = std::string(base) + "/tblob-fuzz-slm1-XXXXXX";
    if (::mkdtemp(&tmpl[0])) {
      g_dir = tmpl;
      g_path = g_dir + "/out.slm";
      std::atexit(remove_temp);
      return g_path.c_str();
    }
  }
  FUZZ_ASSERT_MSG(false, "cannot create a temporary directory");
  return nullptr;
}

void writer_round_trip(const uint8_t *data, size_t size) {
  const size_t count = std::min<size_t>(size / 4, 256);
  if (count < 2) return;
  std::vector<float> v(count);
  std::memcpy(v.data(), data, count * 4);
  bool finite = true;
  for (float f : v) finite = finite && std::isfinite(f);
  tblob_slm1_writer_options o = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  o.hidden_size = 4;
  o.layer_count = 1;
  o.head_count = 2;
  o.ffn_size = 8;
  o.max_context = 16;
  tblob_slm1_writer *w = nullptr;
  FUZZ_ASSERT(tblob_slm1_writer_new(&o, &w, nullptr) == TBLOB_OK);
  const uint64_t even = count & ~size_t{1};
  const uint64_t s_f32[1] = {count}, s_q8[2] = {1, count}, s_q4[2] = {1, even};
  const char *names[3] = {"f32", "q8_0", "q4_0"};
  const uint64_t *shapes[3] = {s_f32, s_q8, s_q4};
  const uint32_t ranks[3] = {1, 2, 2}, dtypes[3] = {TBLOB_SLM1_F32, TBLOB_SLM1_Q8_0, TBLOB_SLM1_Q4_0};
  const uint64_t counts[3] = {count, count, even};
  for (int k = 0; k < 3; ++k) {
    bool fin = true;
    for (uint64_t e = 0; e < counts[k]; ++e) fin = fin && std::isfinite(v[e]);
    const uint32_t block = dtypes[k] == TBLOB_SLM1_Q4_0 ? static_cast<uint32_t>(even) : 0u;
    const tblob_status s = tblob_slm1_writer_add_f32(w, names[k], std::strlen(names[k]), shapes[k], ranks[k],
                                                     v.data(), counts[k], dtypes[k], block, nullptr);
    FUZZ_ASSERT_MSG(s == (fin ? TBLOB_OK : TBLOB_E_INVALID_ARGUMENT), "add %s: %s", names[k], tblob_status_name(s));
  }
  tblob_diag d = TBLOB_DIAG_INIT;
  FUZZ_ASSERT_MSG(tblob_slm1_writer_finish(w, temp_path(), &d) == TBLOB_OK, "finish: %s", d.message);
  tblob_slm1_writer_free(w);
  tblob_model *m = nullptr;
  const tblob_status s = tblob_model_open(temp_path(), nullptr, &m, &d);
  FUZZ_ASSERT_MSG(s == TBLOB_OK, "the writer's file does not open strictly: %s", d.message);
  FUZZ_ASSERT(tblob_model_tensor_count(m) == (finite ? 3u : tblob_model_tensor_count(m)));
  for (int k = 0; k < 3; ++k) {
    uint64_t idx;
    const tblob_status f = tblob_tensor_find(m, names[k], std::strlen(names[k]), &idx, nullptr);
    if (f != TBLOB_OK) continue;  // refused above
    tblob_slm1_tensor_info t = TBLOB_SLM1_TENSOR_INFO_INIT;
    FUZZ_ASSERT(tblob_slm1_tensor_at(m, idx, &t, nullptr) == TBLOB_OK);
    if (t.dtype == TBLOB_SLM1_F32) FUZZ_ASSERT(std::memcmp(t.payload, v.data(), 4 * counts[k]) == 0);
  }
  tblob_model_close(m);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fuzz::Params p = fuzz::split_input(data, size);
  const fuzz::ExactCopy file(p.file, p.file_len);
  const uint32_t flags = flags_for(p.variant);
  const bool listed = p.variant == 3;

  // 1 and 3.
  const OpenResult a = open_once(p, file, flags, listed, true);
  // 2. The checksum is the last check.
  if (!(flags & TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM)) {
    const OpenResult b = open_once(p, file, flags | TBLOB_OPEN_FLAG_SLM1_NO_CHECKSUM, listed, false);
    if (!a.alloc_failed && !b.alloc_failed) {
      if (a.status == TBLOB_E_SLM1_CHECKSUM)
        FUZZ_ASSERT_MSG(b.status == TBLOB_OK, "strict open fails only the checksum, unchecked says %s",
                        tblob_status_name(b.status));
      else
        FUZZ_ASSERT_MSG(a.status == b.status, "strict %s, without checksum %s", tblob_status_name(a.status),
                        tblob_status_name(b.status));
    }
  }
  // 4.
  if (p.variant == 2) writer_round_trip(p.file, p.file_len);
  return 0;
}
