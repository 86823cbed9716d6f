// POSIX file helpers shared by every part that touches the file system: a whole write, an
// open that never follows a symlink, and atomic replacement of a file.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tblob {

// Writes all n bytes (retrying short writes and EINTR). False with errno on failure.
bool write_all(int fd, const void *p, size_t n);

// Opens name in directory dirfd for reading without following a final symlink and without
// blocking on a FIFO (O_NOFOLLOW | O_NONBLOCK). -1 with errno on failure.
int open_nofollow(int dirfd, const char *name);
// The same for a directory (O_DIRECTORY | O_NOFOLLOW): a symlink or a non-directory fails.
int open_dir_nofollow(int dirfd, const char *name);

// A file written under a unique temporary name in its final directory, then fsynced and
// renamed over its final name, so a crash leaves the old file or the whole new one, never
// half of it. Every function returns false with errno set on failure; the temporary file
// is removed then (and by the destructor if commit() was never reached).
class AtomicFile {
 public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  ~AtomicFile() { abort(); }

  // In directory dirfd (the caller keeps it open); tag is a short text in the temporary
  // name. The file gets exactly `mode`, whatever the umask.
  bool create(int dirfd, const char *tag, unsigned mode);
  // Beside path (in its directory, which this object opens and closes).
  bool create_beside(const char *path, unsigned mode);
  int fd() const { return fd_; }
  bool write(const void *p, size_t n) { return write_all(fd_, p, n); }
  // fsync, close, rename to name in the directory; with sync_dir, fsync the directory too
  // (best effort) so the rename is durable. A caller renaming many files may sync once.
  bool commit(const char *name, bool sync_dir);
  void abort();

 private:
  void close_dir();
  int dir_ = -1;
  bool own_dir_ = false;
  int fd_ = -1;
  char tmp_[96] = {0};
};

}  // namespace tblob
