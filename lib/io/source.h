// Byte sources: a mapped file, a file read into owned memory, a borrowed buffer, or a caller's
// read function (tblob_byte_source) of which only a prefix (the header) is held in memory.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/allocator.h"
#include "core/status.h"

namespace tblob {

// A caller's read function and what the library keeps of it (allocated by source_open_callback).
struct SourceReader {
  tblob_byte_source src;  // the caller's struct as far as both know it, the rest zero
  char *name;             // NUL-terminated copy ("" when none), owned
  size_t name_len;
  uint64_t size;          // declared total, or TBLOB_SOURCE_SIZE_UNKNOWN
};

struct Source {
  enum Kind : uint8_t { kNone, kBorrowed, kMapped, kOwned, kCallback };
  // kCallback: the first `len` bytes of the source, read at open (the header); the rest is
  // read on demand through `reader`.
  const uint8_t *data = nullptr;
  size_t len = 0;
  Kind kind = kNone;
  SourceReader *reader = nullptr;
};

// Takes ownership of a caller's byte source (copies the struct and its name): on failure the
// caller's close has already been called. The Source holds no bytes yet.
Status source_open_callback(const tblob_byte_source *bs, const Allocator &a, Source *out, const Diag &diag);
// The total length of a source: len, or a callback source's declared size (may be
// TBLOB_SOURCE_SIZE_UNKNOWN).
uint64_t source_total(const Source &s);
// Name for messages ("" for memory).
const char *source_name(const Source &s);
// One call of the read function for exactly len bytes at offset; `what` names the field read.
// Fewer bytes: TBLOB_E_SOURCE_SHORT_READ; more: TBLOB_E_SOURCE_OVERREAD; a negative return:
// that status (unknown values: TBLOB_E_IO). A range past a known size is TBLOB_E_RANGE unread.
Status source_read(const Source &s, uint64_t offset, void *dst, size_t len, const char *what, const Diag &diag);
// Grows a callback source's in-memory prefix to `want` bytes (reading only the new part; a
// known size clips it). Pointers into the old prefix die. OUT_OF_MEMORY, or a read status.
// With eof_ok and the size unknown, a short answer is the end: the prefix keeps what came and
// the size becomes known.
Status source_grow_prefix(Source *s, uint64_t want, const Allocator &a, const char *what, const Diag &diag,
                          bool eof_ok = false);
// Reads a whole callback source of at most max_bytes into its prefix (a small file: a shard
// index, config.json); with the size unknown it reads until a read returns fewer bytes than
// asked. A larger source is `too_large`, read no further.
Status source_read_whole(Source *s, uint64_t max_bytes, Status too_large, const Allocator &a, const char *what,
                         const Diag &diag);
// Opens the sibling `name` of a callback source through its open_sibling (TBLOB_E_NOT_FOUND
// when it has none) into *out, owned like the parent.
Status source_open_sibling(const Source &parent, const char *name, size_t name_len, const Allocator &a, Source *out,
                           const Diag &diag);
// Copies [offset, offset + len) of any source: from memory when the bytes are there, else
// through the read function.
Status source_copy(const Source &s, uint64_t offset, void *dst, size_t len, const char *what, const Diag &diag);

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
