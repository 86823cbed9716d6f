#include "io/source.h"

#include <cerrno>
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

void source_close(Source *s, const Allocator &a) {
  if (s->kind == Source::kMapped && s->data) {
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
