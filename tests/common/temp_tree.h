// Temporary directories for tests: created under $TMPDIR (else /tmp), removed recursively.
#pragma once
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace tt {

// A new directory $TMPDIR/<prefix>XXXXXX, or "" when mkdtemp fails.
inline std::string make_temp_dir(const std::string &prefix) {
  const char *base = std::getenv("TMPDIR");
  const std::string t = std::string(base && *base ? base : "/tmp") + "/" + prefix + "XXXXXX";
  std::vector<char> buf(t.begin(), t.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) return "";
  return buf.data();
}

// Removes p and, for a directory, everything under it; symbolic links are removed, never
// followed.
inline void rm_rf(const std::string &p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) return;
  if (S_ISDIR(st.st_mode)) {
    if (DIR *d = ::opendir(p.c_str())) {
      while (struct dirent *e = ::readdir(d)) {
        if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
        rm_rf(p + "/" + e->d_name);
      }
      ::closedir(d);
    }
    ::rmdir(p.c_str());
  } else {
    ::unlink(p.c_str());
  }
}

}  // namespace tt
