#include "io/source.h"

#include "core/checked.h"

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tblob {

namespace {
const char *file_kind(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "a special file";
}

// Opens path for reading and checks it is a regular file small enough for this platform;
// never blocks on a FIFO or device (O_NONBLOCK, cleared once fstat says it is a regular file).
// A non-regular file is named by what fstat says, never by a stale errno.
Status open_regular(const char *path, int *fd_out, size_t *len, const Diag &diag) {
  const int fd = ::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    return diag.fail(e == ENOENT ? TBLOB_E_NOT_FOUND : TBLOB_E_IO, TBLOB_NO_OFFSET, -1,
                     "cannot open %s: %s", path, std::strerror(e));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot stat %s: %s", path, std::strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "%s is %s, not a regular file", path,
                     file_kind(st.st_mode));
  }
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0 || ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
    const int e = errno;
    ::close(fd);
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot read %s: %s", path, std::strerror(e));
  }
  // A file the address space cannot hold is refused by size, before any mapping or
  // allocation: its length would not survive the conversion to size_t.
  if (static_cast<unsigned long long>(st.st_size) > SIZE_MAX) {
    ::close(fd);
    return diag.fail(TBLOB_E_UNSUPPORTED, TBLOB_NO_OFFSET, -1,
                     "%s is %llu bytes, more than a %u-bit address space holds", path,
                     static_cast<unsigned long long>(st.st_size), static_cast<unsigned>(sizeof(size_t) * 8));
  }
  *fd_out = fd;
  *len = static_cast<size_t>(st.st_size);
  return TBLOB_OK;
}
}  // namespace

Status source_open_file(const char *path, uint32_t mode, const Allocator &a, Source *out,
                        const Diag &diag) {
  *out = Source{};
  int fd = -1;
  size_t len = 0;
  Status s = open_regular(path, &fd, &len, diag);
  if (s != TBLOB_OK) return s;
  s = source_from_fd(fd, len, mode, a, out, path, diag);
  ::close(fd);
  return s;
}

Status source_read_bounded(const char *path, uint64_t max_bytes, Status too_large, const Allocator &a,
                           Source *out, const Diag &diag) {
  *out = Source{};
  int fd = -1;
  size_t len = 0;
  Status s = open_regular(path, &fd, &len, diag);
  if (s != TBLOB_OK) return s;
  if (len > max_bytes) {
    ::close(fd);
    return diag.fail(too_large, TBLOB_NO_OFFSET, -1, "%s is %zu bytes, more than the %llu allowed", path, len,
                     static_cast<unsigned long long>(max_bytes));
  }
  s = source_from_fd(fd, len, TBLOB_OPEN_READ, a, out, path, diag);
  ::close(fd);
  return s;
}

Status source_from_fd(int fd, size_t len, uint32_t mode, const Allocator &a, Source *out,
                      const char *what, const Diag &diag) {
  *out = Source{};
  if (len == 0) {
    out->kind = Source::kOwned;
    return TBLOB_OK;  // data == nullptr, len == 0
  }
  if (mode == TBLOB_OPEN_MAP) {
    void *p = ::mmap(nullptr, len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
      return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "cannot map %s: %s", what, std::strerror(errno));
    out->data = static_cast<const uint8_t *>(p);
    out->len = len;
    out->kind = Source::kMapped;
    return TBLOB_OK;
  }
  uint8_t *buf = static_cast<uint8_t *>(a.alloc(len));
  if (!buf)
    return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "cannot allocate %zu bytes to read %s", len, what);
  size_t got = 0;
  while (got < len) {
    const ssize_t r = ::pread(fd, buf + got, len - got, static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  if (got != len) {
    a.free(buf, len);
    return diag.fail(TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "short read of %s (%zu of %zu bytes)", what, got, len);
  }
  out->data = buf;
  out->len = len;
  out->kind = Source::kOwned;
  return TBLOB_OK;
}

void source_prefault(const Source &s, size_t len) {
#if defined(__linux__)
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14; older kernels say EINVAL and nothing happens
#endif
  if (s.kind != Source::kMapped || len < (size_t{1} << 20)) return;  // small: faults are cheap
  if (len > s.len) len = s.len;
  ::madvise(const_cast<uint8_t *>(s.data), len, MADV_POPULATE_READ);
#else
  (void)s;
  (void)len;
#endif
}

void source_borrow(const void *buf, size_t len, Source *out) {
  *out = Source{};
  out->data = static_cast<const uint8_t *>(buf);
  out->len = len;
  out->kind = Source::kBorrowed;
}

namespace {
// A negative return of a read function: a status this library knows, or TBLOB_E_IO.
Status read_status(int64_t r) {
  // Only values inside the enum's range may be converted to it (-256 covers every status).
  if (r < -256) return TBLOB_E_IO;
  return ::tblob::status_known(static_cast<int>(r)) ? static_cast<Status>(r) : TBLOB_E_IO;
}
}  // namespace

Status source_open_callback(const tblob_byte_source *bs, const Allocator &a, Source *out, const Diag &diag) {
  *out = Source{};
  SourceReader *r = static_cast<SourceReader *>(a.alloc(sizeof(SourceReader)));
  const char *nm = bs->name ? bs->name : "";
  const size_t nl = std::strlen(nm);
  char *name = r ? static_cast<char *>(a.alloc(nl + 1)) : nullptr;
  if (!r || !name) {
    if (r) a.free(r, sizeof(SourceReader));
    if (bs->close) bs->close(bs->user);
    return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "out of memory taking byte source %s", nm);
  }
  std::memset(static_cast<void *>(r), 0, sizeof(*r));
  std::memcpy(&r->src, bs, bs->struct_size < sizeof(r->src) ? bs->struct_size : sizeof(r->src));
  std::memcpy(name, nm, nl + 1);
  r->name = name;
  r->name_len = nl;
  r->size = bs->size;
  out->kind = Source::kCallback;
  out->reader = r;
  return TBLOB_OK;
}

uint64_t source_total(const Source &s) { return s.kind == Source::kCallback ? s.reader->size : s.len; }

const char *source_name(const Source &s) { return s.kind == Source::kCallback ? s.reader->name : ""; }

Status source_read(const Source &s, uint64_t offset, void *dst, size_t len, const char *what, const Diag &diag) {
  if (s.kind != Source::kCallback) return source_copy(s, offset, dst, len, what, diag);
  const SourceReader &r = *s.reader;
  const unsigned long long off = offset;
  if (r.size != TBLOB_SOURCE_SIZE_UNKNOWN && !range_inside(offset, len, r.size))
    return diag.fail(TBLOB_E_RANGE, offset, -1, "source %s: %s: %zu bytes at offset %llu pass its size %llu", r.name,
                     what, len, off, static_cast<unsigned long long>(r.size));
  if (len == 0) return TBLOB_OK;
  // One call, never a loop: a read function returns all of len or says why not.
  const int64_t got = r.src.read(r.src.user, offset, dst, len);
  if (got < 0) {
    const Status st = read_status(got);
    return diag.fail(st, offset, -1, "source %s: %s: reading %zu bytes at offset %llu failed (%s, returned %" PRId64 ")",
                     r.name, what, len, off, ::tblob::status_name(st), got);
  }
  if (static_cast<uint64_t>(got) > len)
    return diag.fail(TBLOB_E_SOURCE_OVERREAD, offset, -1,
                     "source %s: %s: asked %zu bytes at offset %llu, the read function returned %" PRId64, r.name, what,
                     len, off, got);
  if (static_cast<uint64_t>(got) < len)
    return diag.fail(TBLOB_E_SOURCE_SHORT_READ, offset, -1,
                     "source %s: %s: asked %zu bytes at offset %llu, got %" PRId64 " (the source ends early)", r.name,
                     what, len, off, got);
  return TBLOB_OK;
}

namespace {

// One read of bytes [s->len, want) into a new buffer that starts with the source's prefix.
// short_is_end: an answer shorter than asked is the end of the source (*have says how much
// came); otherwise it is an error like any other. On success the caller owns *out (*n bytes).
Status read_extension(Source *s, uint64_t want, const Allocator &a, const char *what, const Diag &diag,
                      bool short_is_end, uint8_t **out, size_t *n, size_t *have) {
  const SourceReader &r = *s->reader;
  if (!to_size(want, n))
    return diag.fail(TBLOB_E_LIMIT_HEADER_BYTES, TBLOB_NO_OFFSET, -1,
                     "source %s: %s: %llu bytes do not fit in this platform's memory", r.name, what,
                     static_cast<unsigned long long>(want));
  uint8_t *buf = static_cast<uint8_t *>(a.alloc(*n));
  if (!buf)
    return diag.fail(TBLOB_E_OUT_OF_MEMORY, TBLOB_NO_OFFSET, -1, "source %s: cannot allocate %zu bytes for %s", r.name,
                     *n, what);
  if (s->len) std::memcpy(buf, s->data, s->len);
  const size_t ask = *n - s->len;
  Status st = TBLOB_OK;
  *have = *n;
  if (short_is_end) {
    const int64_t got = r.src.read(r.src.user, s->len, buf + s->len, ask);
    if (got < 0)
      st = diag.fail(read_status(got), s->len, -1, "source %s: %s: reading %zu bytes at offset %zu failed (returned %"
                     PRId64 ")", r.name, what, ask, s->len, got);
    else if (static_cast<uint64_t>(got) > ask)
      st = diag.fail(TBLOB_E_SOURCE_OVERREAD, s->len, -1,
                     "source %s: %s: asked %zu bytes at offset %zu, the read function returned %" PRId64, r.name, what,
                     ask, s->len, got);
    else
      *have = s->len + static_cast<size_t>(got);
  } else {
    st = source_read(*s, s->len, buf + s->len, ask, what, diag);
  }
  if (st != TBLOB_OK) {
    a.free(buf, *n);
    return st;
  }
  *out = buf;
  return TBLOB_OK;
}

// Makes buf (n bytes allocated, the first `have` of them read) the source's prefix, keeping
// exactly `have` bytes: free is told the prefix's length.
Status adopt_prefix(Source *s, uint8_t *buf, size_t n, size_t have, const Allocator &a, const Diag &diag) {
  if (have < n) {
    uint8_t *keep = have ? static_cast<uint8_t *>(a.alloc(have)) : nullptr;
    if (have && !keep) {
      a.free(buf, n);
      return diag.fail_plain(TBLOB_E_OUT_OF_MEMORY);
    }
    if (have) std::memcpy(keep, buf, have);
    a.free(buf, n);
    buf = keep;
  }
  if (s->data) a.free(const_cast<uint8_t *>(s->data), s->len);
  s->data = buf;
  s->len = have;
  return TBLOB_OK;
}

}  // namespace

Status source_grow_prefix(Source *s, uint64_t want, const Allocator &a, const char *what, const Diag &diag,
                          bool eof_ok) {
  SourceReader &r = *s->reader;
  const bool unknown = r.size == TBLOB_SOURCE_SIZE_UNKNOWN;
  if (!unknown && want > r.size) want = r.size;
  if (want <= s->len) return TBLOB_OK;
  // With the size unknown (and an end allowed here), the size is learnt from a short answer.
  const bool learn = unknown && eof_ok;
  uint8_t *buf = nullptr;
  size_t n = 0, have = 0;
  const Status st = read_extension(s, want, a, what, diag, learn, &buf, &n, &have);
  if (st != TBLOB_OK) return st;
  if (learn && have < n) r.size = have;
  return adopt_prefix(s, buf, n, have, a, diag);
}

Status source_read_whole(Source *s, uint64_t max_bytes, Status too_large, const Allocator &a, const char *what,
                         const Diag &diag) {
  const SourceReader &r = *s->reader;
  if (r.size != TBLOB_SOURCE_SIZE_UNKNOWN) {
    if (r.size > max_bytes)
      return diag.fail(too_large, TBLOB_NO_OFFSET, -1, "source %s: %s is %llu bytes, more than the %llu allowed",
                       r.name, what, static_cast<unsigned long long>(r.size),
                       static_cast<unsigned long long>(max_bytes));
    return source_grow_prefix(s, r.size, a, what, diag);
  }
  // Size unknown: chunks that double, each asked in full; the first one answered short is the end.
  uint64_t chunk = 4096;
  for (;;) {
    uint64_t want = s->len + chunk;
    const uint64_t cap = max_bytes < UINT64_MAX ? max_bytes + 1 : UINT64_MAX;  // one byte more tells "too large"
    if (want > cap) want = cap;
    uint8_t *buf = nullptr;
    size_t n = 0, have = 0;
    Status st = read_extension(s, want, a, what, diag, true, &buf, &n, &have);
    if (st != TBLOB_OK) return st;
    if (have > max_bytes) {
      a.free(buf, n);
      return diag.fail(too_large, TBLOB_NO_OFFSET, -1, "source %s: %s is more than the %llu bytes allowed", r.name,
                       what, static_cast<unsigned long long>(max_bytes));
    }
    st = adopt_prefix(s, buf, n, have, a, diag);
    if (st != TBLOB_OK) return st;
    if (have < n) return TBLOB_OK;  // the end
    if (chunk < (uint64_t{1} << 24)) chunk *= 2;
  }
}

Status source_open_sibling(const Source &parent, const char *name, size_t name_len, const Allocator &a, Source *out,
                           const Diag &diag) {
  *out = Source{};
  const SourceReader &r = *parent.reader;
  const int shown = static_cast<int>(name_len > 200 ? 200 : name_len);
  if (parent.kind != Source::kCallback || !r.src.open_sibling)
    return diag.fail(TBLOB_E_NOT_FOUND, TBLOB_NO_OFFSET, -1, "source %s has no siblings (needed: %.*s)", r.name, shown,
                     name);
  tblob_byte_source bs = TBLOB_BYTE_SOURCE_INIT;
  const Status st = r.src.open_sibling(r.src.user, name, name_len, &bs);
  if (st != TBLOB_OK) {
    // A sibling that failed to open was never the library's: nothing to close.
    return diag.fail(st < 0 ? st : TBLOB_E_IO, TBLOB_NO_OFFSET, -1, "source %s: opening its sibling %.*s: %s", r.name,
                     shown, name, ::tblob::status_name(st));
  }
  if (bs.struct_size < sizeof(tblob_byte_source) || !bs.read) {
    if (bs.close) bs.close(bs.user);
    return diag.fail(TBLOB_E_INVALID_ARGUMENT, TBLOB_NO_OFFSET, -1,
                     "source %s: sibling %.*s has no read function or a bad struct_size", r.name, shown, name);
  }
  // A sibling without a name of its own is named by the name it was asked for.
  char local[256];
  if (!bs.name && name_len < sizeof(local)) {
    std::memcpy(local, name, name_len);
    local[name_len] = '\0';
    bs.name = local;
  }
  return source_open_callback(&bs, a, out, diag);
}

Status source_copy(const Source &s, uint64_t offset, void *dst, size_t len, const char *what, const Diag &diag) {
  if (range_inside(offset, len, s.len)) {
    if (len) std::memcpy(dst, s.data + offset, len);
    return TBLOB_OK;
  }
  if (s.kind == Source::kCallback) return source_read(s, offset, dst, len, what, diag);
  return diag.fail(TBLOB_E_RANGE, offset, -1, "%s: %zu bytes at offset %llu pass the end of the file (%zu bytes)", what,
                   len, static_cast<unsigned long long>(offset), s.len);
}

void source_close(Source *s, const Allocator &a) {
  if (s->kind == Source::kCallback) {
    if (s->data) a.free(const_cast<uint8_t *>(s->data), s->len);
    SourceReader *r = s->reader;
    if (r) {
      if (r->src.close) r->src.close(r->src.user);
      a.free(r->name, r->name_len + 1);
      a.free(r, sizeof(SourceReader));
    }
  } else if (s->kind == Source::kMapped && s->data) {
    ::munmap(const_cast<uint8_t *>(s->data), s->len);
  } else if (s->kind == Source::kOwned && s->data) {
    a.free(const_cast<uint8_t *>(s->data), s->len);
  }
  *s = Source{};
}

bool path_is_directory(const char *path) {
  struct stat st;
  return ::stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool path_is_regular_file(const char *path) {
  struct stat st;
  return ::stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

uint64_t path_file_size(const char *path) {
  struct stat st;
  if (::stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return static_cast<uint64_t>(st.st_size);
}

long long read_file_prefix(const char *path, uint8_t *dst, size_t cap) {
  int fd = -1;
  size_t len = 0;
  if (open_regular(path, &fd, &len, Diag{}) != TBLOB_OK) return -1;  // callers reopen to say why
  size_t got = 0;
  while (got < cap) {
    ssize_t r = ::read(fd, dst + got, cap - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  ::close(fd);
  return static_cast<long long>(got);
}

}  // namespace tblob
