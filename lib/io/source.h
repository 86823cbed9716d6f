// Byte sources: a mapped file, a file read into owned memory, or a borrowed buffer.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"
#include "core/status.h"

namespace tblob {

struct Source {
  enum Kind : uint8_t { kNone, kBorrowed, kMapped, kOwned };
  const uint8_t *data = nullptr;
  size_t len = 0;
  Kind kind = kNone;
};

// mode: TBLOB_OPEN_MAP or TBLOB_OPEN_READ.
Status source_open_file(const char *path, uint32_t mode, const Allocator &a, Source *out,
                        const Diag &diag);
// Reads a small side file (config.json and the like) into owned memory after checking what
// it is: a FIFO, device or directory is TBLOB_E_IO and a file over max_bytes is `too_large`,
// both without reading a byte.
Status source_read_bounded(const char *path, uint64_t max_bytes, Status too_large, const Allocator &a,
                           Source *out, const Diag &diag);
// Maps or reads an open file descriptor of `len` bytes into a Source (closing nothing);
// `what` names the file in messages.
Status source_from_fd(int fd, size_t len, uint32_t mode, const Allocator &a, Source *out,
                      const char *what, const Diag &diag);
void source_borrow(const void *buf, size_t len, Source *out);
void source_close(Source *s, const Allocator &a);
// A mapped source about to be read front to back in [0, len): map its pages in one call
// instead of one fault per few pages (best effort; nothing for other kinds).
void source_prefault(const Source &s, size_t len);

// File system helpers (POSIX now; one place to port).
bool path_is_directory(const char *path);
bool path_is_regular_file(const char *path);
// Size of a regular file, 0 when it cannot be read.
uint64_t path_file_size(const char *path);
// Reads at most cap bytes from the start of a file. -1 on error.
long long read_file_prefix(const char *path, uint8_t *dst, size_t cap);

}  // namespace tblob
