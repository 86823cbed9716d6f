// fuzz_uqff_shard: one UQFF shard (a safetensors buffer) through tblob_uqff_open_memory and
// tblob_uqff_verify_memory: open and verify agree, every row dequantizes within bounds with
// every kernel set giving the same bits, no leak, no allocation beyond the input's budget.
// Input format: fuzz_common.h (file + 3-byte trailer).
//
// The checks below (namespace fuzz, uqff_*) are shared with fuzz_uqff_set.cpp, which
// includes this file with FUZZ_UQFF_NO_ENTRY defined.

#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_common.h"
#include "tensorblob.h"

namespace fuzz {

// Largest output one row decode may produce (elements).
constexpr uint64_t kUqffMaxOut = uint64_t{1} << 18;

inline void uqff_walk(const tblob_model *m) {
  FUZZ_ASSERT(tblob_model_format(m) == TBLOB_FORMAT_UQFF);
  const uint64_t n = tblob_model_tensor_count(m);
  static const char *const kSets[] = {"scalar", "avx2", "avx512", "neon"};
  for (uint64_t i = 0; i < n; ++i) {
    tblob_tensor_info ti = TBLOB_TENSOR_INFO_INIT;
    FUZZ_ASSERT(tblob_tensor_at(m, i, &ti, nullptr) == TBLOB_OK);
    uint64_t found = UINT64_MAX;
    FUZZ_ASSERT(tblob_tensor_find(m, ti.name, ti.name_len, &found, nullptr) == TBLOB_OK && found == i);
    const void *data;
    uint64_t len;
    FUZZ_ASSERT(tblob_tensor_data(m, i, &data, &len, nullptr) == TBLOB_OK && len == ti.data_length);
    tblob_uqff_layer_info li = TBLOB_UQFF_LAYER_INFO_INIT;
    FUZZ_ASSERT(tblob_uqff_layer_info_at(m, i, &li, nullptr) == TBLOB_OK);
    FUZZ_ASSERT(li.label != nullptr);
    uint64_t rows = li.experts ? li.experts * li.rows : li.rows;
    if (li.cols == 0 || rows == 0) continue;
    // At most kUqffMaxOut values: a prefix of the rows, plus the last row alone.
    uint64_t take = kUqffMaxOut / li.cols;
    if (take == 0) continue;
    if (take > rows) take = rows;
    for (int part = 0; part < 2; ++part) {
      const uint64_t rb = part ? rows - 1 : 0, re = part ? rows : take;
      const uint32_t out_dtype = part ? TBLOB_DTYPE_BF16 : TBLOB_DTYPE_F32;
      uint64_t bytes = 0;
      const tblob_status ss = tblob_tensor_dequant_size(m, i, out_dtype, rb, re, &bytes, nullptr);
      if (ss != TBLOB_OK) {
        FUZZ_ASSERT(ss == TBLOB_E_UNSUPPORTED);
        continue;
      }
      std::vector<uint8_t> ref, got;
      bool have_ref = false;
      for (const char *k : kSets) {
        if (tblob_kernel_set(k, nullptr) != TBLOB_OK) continue;
        std::vector<uint8_t> &out = have_ref ? got : ref;
        out.assign(bytes + 1, 0xA5);
        const tblob_status s = tblob_tensor_dequantize(m, i, out_dtype, rb, re, out.data(), bytes, nullptr);
        FUZZ_ASSERT_MSG(s == TBLOB_OK || s == TBLOB_E_UNSUPPORTED, "dequantize row %llu: %d",
                        static_cast<unsigned long long>(i), s);
        FUZZ_ASSERT(out[bytes] == 0xA5);  // nothing past the output
        if (have_ref) FUZZ_ASSERT_MSG(std::memcmp(ref.data(), got.data(), bytes) == 0, "kernel %s differs", k);
        have_ref = true;
      }
      // Too small a buffer is refused before anything is written.
      if (bytes) {
        std::vector<uint8_t> small(bytes, 0x5A);
        FUZZ_ASSERT(tblob_tensor_dequantize(m, i, out_dtype, rb, re, small.data(), bytes - 1, nullptr) ==
                    TBLOB_E_BUFFER_TOO_SMALL);
        FUZZ_ASSERT(small[0] == 0x5A);
      }
    }
  }
  tblob_kernel_set("auto", nullptr);
}

inline int uqff_report_check(void *, const tblob_uqff_report_entry *e) {
  FUZZ_ASSERT(e->struct_size == sizeof(tblob_uqff_report_entry));
  FUZZ_ASSERT(e->name != nullptr || e->name_len == 0);
  FUZZ_ASSERT(e->label != nullptr);
  for (uint32_t i = 0; i < e->problem_count; ++i) {
    FUZZ_ASSERT(e->problems[i].status < 0);
    FUZZ_ASSERT(std::strlen(e->problems[i].message) == e->problems[i].message_len);
  }
  if (e->shape) (void)e->shape[e->rank ? e->rank - 1 : 0];
  return 0;
}

// Open strictly and verify; they must agree (open OK <=> verify has no error).
inline void uqff_run(const void *const *bufs, const size_t *lens, size_t count, const Params &p, size_t total) {
  tblob_status open_status, verify_status;
  {
    FailingAllocator fa(p.fail_at, total);
    tblob_open_options o = make_options(p);
    o.allocator = fa.hook();
    tblob_model *m = nullptr;
    tblob_diag d = TBLOB_DIAG_INIT;
    open_status = tblob_uqff_open_memory(bufs, lens, count, &o, &m, &d);
    FUZZ_ASSERT(open_status <= 0 && open_status > -200);
    FUZZ_ASSERT_MSG(!fa.failed() || open_status == TBLOB_E_OUT_OF_MEMORY || open_status == TBLOB_OK,
                    "allocation failure reported as %d", open_status);
    FUZZ_ASSERT((open_status == TBLOB_OK) == (m != nullptr));
    FUZZ_ASSERT(open_status == TBLOB_OK || d.message[0] != '\0');
    if (m) uqff_walk(m);
    tblob_model_close(m);
    fa.expect_empty("uqff open");
  }
  {
    FailingAllocator fa(p.fail_at, total);
    tblob_open_options o = make_options(p);
    o.allocator = fa.hook();
    tblob_uqff_verify_result r = TBLOB_UQFF_VERIFY_RESULT_INIT;
    verify_status = tblob_uqff_verify_memory(bufs, lens, count, &o, uqff_report_check, nullptr, &r, nullptr);
    if (!fa.failed() && verify_status != TBLOB_E_OUT_OF_MEMORY) {
      FUZZ_ASSERT((verify_status == TBLOB_OK) == (r.errors == 0));
    }
    fa.expect_empty("uqff verify");
  }
  if (p.fail_at == 0 && open_status != TBLOB_E_OUT_OF_MEMORY && verify_status != TBLOB_E_OUT_OF_MEMORY)
    FUZZ_ASSERT_MSG((open_status == TBLOB_OK) == (verify_status == TBLOB_OK), "open %d but verify %d", open_status,
                    verify_status);
}

}  // namespace fuzz

#ifndef FUZZ_UQFF_NO_ENTRY
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fuzz::Params p = fuzz::split_input(data, size);
  fuzz::ExactCopy file(p.file, p.file_len);
  const void *bufs[1] = {file.ptr};
  const size_t lens[1] = {file.len};
  fuzz::uqff_run(bufs, lens, 1, p, file.len);
  return 0;
}
#endif
