/* Kill points for tests/ollama/test_store_safety.cpp: this executable defines the libc calls
 * through which the shared library changes the file system (openat64, write, pwrite64, fsync,
 * renameat, mkdirat, unlinkat), so the library's calls land here first. Each call counts one
 * step; when the count reaches tb_kill_at the process kills itself with SIGKILL before doing
 * it, which leaves the store exactly as a crash between two system calls would; when it
 * reaches tb_fail_at the call fails with EIO instead (tests/gguf: a failing file system). The real work
 * is the raw system call (no libc wrapper of the same name to find). C, not C++: glibc
 * declares some of these with exception specifications C++ would have to match. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

long tb_kill_at = 0; /* 0: counting only */
long tb_fail_at = 0; /* 0: no call fails */
long tb_kill_calls = 0;

/* Non-zero: this call fails with EIO. */
static int step(void) {
  ++tb_kill_calls;
  if (tb_kill_at > 0 && tb_kill_calls == tb_kill_at) {
    kill(getpid(), SIGKILL);
    for (;;) pause();
  }
  if (tb_fail_at > 0 && tb_kill_calls == tb_fail_at) {
    errno = EIO;
    return 1;
  }
  return 0;
}

int openat64(int dirfd, const char *path, int flags, ...) {
  mode_t mode = 0;
  if (flags & (O_CREAT | __O_TMPFILE)) {
    va_list ap;
    va_start(ap, flags);
    mode = (mode_t)va_arg(ap, int);
    va_end(ap);
  }
  if (step()) return -1;
  return (int)syscall(SYS_openat, dirfd, path, flags | O_LARGEFILE, mode);
}

ssize_t write(int fd, const void *buf, size_t n) {
  if (step()) return -1;
  return (ssize_t)syscall(SYS_write, fd, buf, n);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
  if (step()) return -1;
  return (ssize_t)syscall(SYS_pwrite64, fd, buf, n, off);
}

int fsync(int fd) {
  if (step()) return -1;
  return (int)syscall(SYS_fsync, fd);
}

int renameat(int olddir, const char *oldpath, int newdir, const char *newpath) {
  if (step()) return -1;
#ifdef SYS_renameat
  return (int)syscall(SYS_renameat, olddir, oldpath, newdir, newpath);
#else
  return (int)syscall(SYS_renameat2, olddir, oldpath, newdir, newpath, 0);
#endif
}

int mkdirat(int dirfd, const char *path, mode_t mode) {
  if (step()) return -1;
  return (int)syscall(SYS_mkdirat, dirfd, path, mode);
}

int unlinkat(int dirfd, const char *path, int flags) {
  if (step()) return -1;
  return (int)syscall(SYS_unlinkat, dirfd, path, flags);
}
