#include "io/file.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tblob {

bool write_all(int fd, const void *p, size_t n) {
  const uint8_t *q = static_cast<const uint8_t *>(p);
  while (n) {
    const ssize_t w = ::write(fd, q, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return false;
    if (w == 0) {
      errno = EIO;
      return false;
    }
    q += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

int open_nofollow(int dirfd, const char *name) {
  return ::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
}

int open_dir_nofollow(int dirfd, const char *name) {
  return ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

namespace {
std::atomic<unsigned long long> g_temp_counter{0};
}  // namespace

bool AtomicFile::create(int dirfd, const char *tag, unsigned mode) {
  abort();
  dir_ = dirfd;
  // pid + a process-wide counter make the name unique among writers; O_EXCL makes sure.
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::snprintf(tmp_, sizeof(tmp_), ".tblob-tmp-%.40s-%ld-%llu", tag, static_cast<long>(::getpid()),
                  g_temp_counter.fetch_add(1, std::memory_order_relaxed));
    fd_ = ::openat(dir_, tmp_, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd_ >= 0) break;
    if (errno != EEXIST) break;
  }
  if (fd_ < 0) {
    const int e = errno;
    tmp_[0] = '\0';
    close_dir();
    errno = e;
    return false;
  }
  if (::fchmod(fd_, static_cast<mode_t>(mode)) != 0) {
    const int e = errno;
    abort();
    errno = e;
    return false;
  }
  return true;
}

bool AtomicFile::create_beside(const char *path, unsigned mode) {
  abort();
  const char *base = std::strrchr(path, '/');
  int dfd;
  if (!base) {
    base = path;
    dfd = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } else {
    const size_t n = static_cast<size_t>(base - path);
    ++base;
    char dir[4096];
    if (n >= sizeof(dir)) {
      errno = ENAMETOOLONG;
      return false;
    }
    std::memcpy(dir, path, n);
    dir[n] = '\0';
    dfd = ::open(n ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (dfd < 0) return false;
  if (!create(dfd, base, mode)) {
    const int e = errno;
    ::close(dfd);
    errno = e;
    return false;
  }
  own_dir_ = true;
  return true;
}

bool AtomicFile::commit(const char *name, bool sync_dir) {
  bool ok = ::fsync(fd_) == 0;
  int e = errno;
  if (::close(fd_) != 0 && ok) {
    ok = false;
    e = errno;
  }
  fd_ = -1;
  if (ok && ::renameat(dir_, tmp_, dir_, name) != 0) {
    ok = false;
    e = errno;
  }
  if (!ok) {
    abort();
    errno = e;
    return false;
  }
  tmp_[0] = '\0';
  if (sync_dir) static_cast<void>(::fsync(dir_));
  close_dir();
  return true;
}

void AtomicFile::abort() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (tmp_[0] && dir_ >= 0) ::unlinkat(dir_, tmp_, 0);
  tmp_[0] = '\0';
  close_dir();
}

void AtomicFile::close_dir() {
  if (own_dir_ && dir_ >= 0) ::close(dir_);
  own_dir_ = false;
  dir_ = -1;
}

}  // namespace tblob
