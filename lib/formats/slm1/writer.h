// The SLM1 writer (docs/slm1.md sections 1-8): tensors are checked and encoded as they are
// added, then emitted as one canonical file (entries sorted by hash, each payload and scale
// array on the next 64-byte boundary, zero padding, the checksum last).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"
#include "core/status.h"
#include "formats/slm1/format.h"
#include "tensorblob.h"

namespace tblob {
namespace slm1 {

struct Pending {
  Entry e;               // hash, dtype, rank, dims, block_size and the derived sizes
  char *name;            // owned copy (for collision messages)
  size_t name_len;
  uint8_t *payload;      // owned, e.payload_bytes
  uint8_t *scales;       // owned, e.scale_bytes (nullptr for f32)
};

// Where emit() puts the file: bytes in order, then one patch of the checksum field.
class ByteSink {
 public:
  virtual bool write(const uint8_t *p, size_t n) = 0;
  virtual bool patch(uint64_t offset, const uint8_t *p, size_t n) = 0;

 protected:
  ~ByteSink() = default;
};

}  // namespace slm1
}  // namespace tblob

struct tblob_slm1_writer {
  explicit tblob_slm1_writer(const tblob_allocator *hook) : alloc(hook), tensors(&alloc) {}
  ~tblob_slm1_writer();

  tblob::Allocator alloc;
  tblob::slm1::Header header;    // hyperparameters; offsets are set by emit
  uint8_t *tokenizer = nullptr;  // owned copy of the section
  size_t tokenizer_len = 0;
  tblob::PodVec<tblob::slm1::Pending> tensors;
  bool finished = false;
};

namespace tblob {
namespace slm1 {

Status writer_create(const tblob_slm1_writer_options *options, tblob_slm1_writer **out,
                     const Diag &diag);
void writer_free(tblob_slm1_writer *w);

// values == nullptr with encoded payload/scales: add_encoded; otherwise f32 input.
Status writer_add_f32(tblob_slm1_writer *w, const char *name, size_t name_len,
                      const uint64_t *shape, uint32_t rank, const float *values,
                      uint64_t value_count, uint32_t dtype, uint32_t block_size, const Diag &diag);
Status writer_add_encoded(tblob_slm1_writer *w, const char *name, size_t name_len,
                          const uint64_t *shape, uint32_t rank, uint32_t dtype,
                          uint32_t block_size, const void *payload, size_t payload_len,
                          const void *scales, size_t scale_len, const Diag &diag);

// Sorts, checks names, lays out and writes the whole file into sink. *file_len may be null.
Status writer_emit(tblob_slm1_writer *w, ByteSink *sink, uint64_t *file_len, const Diag &diag);
// emit() into a temporary file beside path, fsync, rename over path.
Status writer_finish_path(tblob_slm1_writer *w, const char *path, const Diag &diag);

}  // namespace slm1
}  // namespace tblob

namespace tblob {
namespace slm1 {

// ---- the quantizers: lib/quant/slm1 (rules in slm1_quant.h, docs/slm1.md section 8) ---------
// Index of the first value that is not finite among n f32 at x (any alignment), or n.
uint64_t first_non_finite(const float *x, uint64_t n);

// Encode rows x cols values (row-major, all finite). payload: rows*cols bytes (q8_0) or
// rows*cols/2 (q4_0); scales: rows (q8_0) or rows*cols/block (q4_0) little-endian f32.
void encode_q8_0(const float *x, uint64_t rows, uint64_t cols, uint8_t *payload, uint8_t *scales);
void encode_q4_0(const float *x, uint64_t rows, uint64_t cols, uint32_t block, uint8_t *payload,
                 uint8_t *scales);

}  // namespace slm1
}  // namespace tblob
