// Helpers shared by the SLM1 tests: file bytes, an independent checksum and FNV-1a (so the
// library's are checked against a second implementation), field patching, a writer that
// emits into memory, and an RAII model.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "formats/slm1/dequant.h"
#include "formats/slm1/writer.h"
#include "tensorblob.h"

#ifndef SLM1_DATA_DIR
#define SLM1_DATA_DIR "tests/data/slm1"
#endif

namespace slm1test {

using Bytes = std::vector<uint8_t>;

inline Bytes read_file(const std::string &path) {
  Bytes out;
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out.insert(out.end(), buf, buf + n);
  std::fclose(f);
  return out;
}

inline std::string data_path(const char *name) { return std::string(SLM1_DATA_DIR) + "/" + name; }

// Written from docs/slm1.md sections 9 and 10, independently of lib/.
inline uint64_t ref_fnv1a64(const void *p, size_t n) {
  const uint8_t *b = static_cast<const uint8_t *>(p);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}
inline uint64_t ref_fnv1a64(const std::string &s) { return ref_fnv1a64(s.data(), s.size()); }

inline uint64_t ref_checksum(const uint8_t *buf, size_t len) {
  uint64_t c = 0xcbf29ce484222325ull;
  for (uint64_t i = 0; i < len; ++i) {
    const uint64_t b = (i >= 100 && i < 108) ? 0 : buf[i];
    c ^= b | (i << 8);
    c = (c << 27) | (c >> 37);
    c *= 0x100000001b3ull;
  }
  return c;
}

inline uint32_t get_u32(const Bytes &b, uint64_t off) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | b[off + i];
  return v;
}
inline uint64_t get_u64(const Bytes &b, uint64_t off) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[off + i];
  return v;
}
inline void put_u32(Bytes &b, uint64_t off, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void put_u64(Bytes &b, uint64_t off, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void put_f32(Bytes &b, uint64_t off, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  put_u32(b, off, bits);
}
// Stores the right checksum, so that a structural mutation is what a test sees.
inline void refresh_checksum(Bytes &b) { put_u64(b, 100, ref_checksum(b.data(), b.size())); }

inline uint64_t dir_offset(const Bytes &b) { return get_u64(b, 80); }
inline uint64_t data_offset(const Bytes &b) { return get_u64(b, 92); }
inline uint64_t entry_at(const Bytes &b, uint32_t i) { return dir_offset(b) + 64ull * i; }

// Header fields of the golden files (docs/slm1.md 13.1).
inline tblob_slm1_writer_options golden_options() {
  tblob_slm1_writer_options o = TBLOB_SLM1_WRITER_OPTIONS_INIT;
  o.hidden_size = 4;
  o.layer_count = 1;
  o.head_count = 2;
  o.kv_head_count = 2;
  o.head_dim = 2;
  o.ffn_size = 8;
  o.max_context = 16;
  o.rope_theta = 10000.0f;
  o.rms_norm_epsilon = 1e-5f;
  return o;
}

class VecSink final : public tblob::slm1::ByteSink {
 public:
  Bytes bytes;
  bool write(const uint8_t *p, size_t n) override {
    bytes.insert(bytes.end(), p, p + n);
    return true;
  }
  bool patch(uint64_t off, const uint8_t *p, size_t n) override {
    if (off + n > bytes.size()) return false;
    std::memcpy(bytes.data() + off, p, n);
    return true;
  }
};

// Owns a writer; emit() returns the file bytes (empty with *status set on failure).
class Writer {
 public:
  explicit Writer(const tblob_slm1_writer_options &o = golden_options()) {
    status = tblob_slm1_writer_new(&o, &w, &diag);
  }
  ~Writer() { tblob_slm1_writer_free(w); }
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  tblob_status add(const std::string &name, std::vector<uint64_t> shape, const std::vector<float> &v,
                   uint32_t dtype, uint32_t block = 0) {
    return tblob_slm1_writer_add_f32(w, name.data(), name.size(), shape.data(),
                                     static_cast<uint32_t>(shape.size()), v.data(), v.size(), dtype,
                                     block, &diag);
  }
  Bytes emit(tblob_status *s = nullptr) {
    VecSink sink;
    tblob::Diag d;
    d.out = &diag;
    d.reset();
    const tblob_status st = tblob::slm1::writer_emit(w, &sink, nullptr, d);
    if (s) *s = st;
    if (st != TBLOB_OK) return Bytes();
    return sink.bytes;
  }

  tblob_slm1_writer *w = nullptr;
  tblob_status status = TBLOB_OK;
  tblob_diag diag = TBLOB_DIAG_INIT;
};

// An open model (or the failure), closed on destruction.
struct Opened {
  tblob_model *m = nullptr;
  tblob_status status = TBLOB_OK;
  tblob_diag diag = TBLOB_DIAG_INIT;
  Opened() = default;
  Opened(const Opened &) = delete;
  Opened &operator=(const Opened &) = delete;
  ~Opened() { tblob_model_close(m); }
  std::string message() const { return diag.message; }
};

inline void open_bytes(const Bytes &b, Opened *o, uint32_t flags = 0,
                       const std::vector<std::string> *names = nullptr,
                       tblob_open_options *base = nullptr) {
  tblob_open_options opts = TBLOB_OPEN_OPTIONS_INIT;
  if (base) opts = *base;
  opts.flags |= flags;
  tblob_slm1_open_options so = TBLOB_SLM1_OPEN_OPTIONS_INIT;
  std::vector<const char *> ptrs;
  std::vector<size_t> lens;
  if (names) {
    for (const std::string &n : *names) {
      ptrs.push_back(n.data());
      lens.push_back(n.size());
    }
    so.required_names = ptrs.data();
    so.required_name_lens = lens.data();
    so.required_name_count = names->size();
  }
  o->status = tblob_slm1_open_memory(b.data(), b.size(), &opts, &so, &o->m, &o->diag);
}

// Dequantizes tensor `index` of an open SLM1 model with the library's reference.
inline std::vector<float> dequant_all(const tblob_model *m, uint64_t index) {
  tblob::Slm1View v;
  if (tblob::slm1_view(m, index, &v) != TBLOB_OK) return {};
  std::vector<float> out(static_cast<size_t>(v.rows * v.cols));
  if (tblob::slm1_dequant_rows(v, 0, v.rows, out.data(), out.size()) != TBLOB_OK) return {};
  return out;
}

// A small valid file: one tensor of each dtype (q8_0 [2,4], q4_0 [2,8] block 4, f32 [4]),
// sorted by hash as the writer does. Regions, in order: the tensors sorted by hash.
inline Bytes three_tensor_file() {
  Writer w;
  w.add("attn.q.weight", {2, 4}, {127, 2.5f, -3.5f, -0.5f, 1, -2, 3, -4}, TBLOB_SLM1_Q8_0);
  w.add("ffn.up.weight", {2, 8}, {7, 3.5f, -2.5f, 0.5f, 1, 2, 3, 4, 0, 0, 0, 0, -1, 0.5f, 0, 0.25f},
        TBLOB_SLM1_Q4_0, 4);
  w.add("norm.weight", {4}, {1, 0.5f, -2, 0.25f}, TBLOB_SLM1_F32);
  return w.emit();
}

}  // namespace slm1test
