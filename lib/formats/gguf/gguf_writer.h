// The streaming GGUF writer behind tblob_gguf_writer_* (docs/gguf.md, "Writing GGUF").
// Key/values and tensor infos are encoded into memory as they are added; the first tensor
// data (or finish) writes the header, then tensor bytes pass straight through to the sink.
// Validation is the reader's (gguf_reader.cpp), with its constants and type table, so a file
// this writes is one the reader opens.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"
#include "core/status.h"
#include "io/file.h"
#include "tensorblob.h"

struct tblob_gguf_writer {
  explicit tblob_gguf_writer(const tblob_allocator *hook)
      : alloc(hook), kv(&alloc), kv_keys(&alloc), tensors(&alloc), names(&alloc) {}

  struct KeyRef {  // a key inside kv: its bytes start at kv[at]
    size_t at;
    size_t len;
  };
  struct Tensor {
    size_t name_at, name_len;  // in names
    uint64_t ne[4];
    uint32_t n_dims, type;
    uint64_t bytes;
  };
  enum State { kCollecting, kData, kFinished, kFailed };

  tblob::Allocator alloc;
  tblob::ByteBuf kv;               // encoded key/values, file order
  tblob::PodVec<KeyRef> kv_keys;   // for the duplicate check
  tblob::PodVec<Tensor> tensors;
  tblob::ByteBuf names;            // tensor names back to back
  uint32_t version = 3;
  uint32_t flags = 0;
  uint32_t alignment = 32;
  State state = kCollecting;
  tblob_status failed = TBLOB_OK;  // kFailed: what every later call returns
  // Data position: the next tensor to receive bytes and how many it has.
  uint64_t cur = 0;
  uint64_t cur_done = 0;
  uint64_t written = 0;            // bytes sent to the sink
  // The sink: a temporary file renamed over final_name by finish, or a callback.
  tblob::AtomicFile file;
  char *final_name = nullptr;      // basename of the path (alloc'd), nullptr for a callback
  size_t final_name_size = 0;
  tblob_gguf_write_fn fn = nullptr;
  void *user = nullptr;
};

namespace tblob {
namespace gguf {

Status writer_open(const char *path, tblob_gguf_write_fn fn, void *user, const tblob_gguf_writer_options *options,
                   tblob_gguf_writer **out, const Diag &diag);
Status writer_add_value(tblob_gguf_writer *w, const char *key, size_t key_len, const tblob_gguf_value *value,
                        const Diag &diag);
Status writer_add_tensor(tblob_gguf_writer *w, const char *name, size_t name_len, const uint64_t *shape,
                         uint32_t rank, uint32_t ggml_type, uint64_t *data_bytes, const Diag &diag);
Status writer_write(tblob_gguf_writer *w, uint64_t tensor, const void *data, size_t length, const Diag &diag);
Status writer_finish(tblob_gguf_writer *w, uint64_t *bytes_written, const Diag &diag);
void writer_close(tblob_gguf_writer *w);

}  // namespace gguf
}  // namespace tblob
