// Standalone driver: replays files through a harness's LLVMFuzzerTestOneInput without
// libFuzzer, so every corpus and regression file runs as an ordinary test in any build.
//
//   fuzz_<target> [--tap | --summary] PATH...
//
// Each PATH is a file or a directory (walked recursively, files in sorted order; names
// starting with '.' and README* files are skipped). --tap (the default) prints TAP 13:
// "1..N" then "ok K - PATH" per input; --summary prints one line. A finding aborts the
// process inside the harness, so the test fails with the input's path as the last line
// printed ("# running PATH" goes to stderr before each input).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

namespace fs = std::filesystem;

namespace {

bool skipped(const fs::path &p) {
  const std::string name = p.filename().string();
  return name.empty() || name[0] == '.' || name.rfind("README", 0) == 0;
}

bool read_file(const std::string &path, std::vector<uint8_t> *out) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  out->clear();
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out->insert(out->end(), buf, buf + n);
  const bool ok = !std::ferror(f);
  std::fclose(f);
  return ok;
}

}  // namespace

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  bool tap = true;
  std::vector<std::string> inputs;
  int bad_args = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--tap") {
      tap = true;
    } else if (a == "--summary") {
      tap = false;
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: %s [--tap|--summary] FILE-OR-DIR...\n", argv[0]);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      // libFuzzer flags (e.g. -runs=0) are accepted and ignored, so scripts can call
      // either kind of binary the same way.
      continue;
    } else {
      std::error_code ec;
      if (fs::is_directory(a, ec)) {
        std::vector<std::string> found;
        for (fs::recursive_directory_iterator it(a, ec), end; !ec && it != end; it.increment(ec)) {
          if (it->is_regular_file(ec) && !skipped(it->path())) found.push_back(it->path().string());
        }
        if (ec) {
          std::fprintf(stderr, "cannot walk %s: %s\n", a.c_str(), ec.message().c_str());
          ++bad_args;
        }
        std::sort(found.begin(), found.end());
        inputs.insert(inputs.end(), found.begin(), found.end());
      } else if (fs::is_regular_file(a, ec)) {
        inputs.push_back(a);
      } else if (!fs::exists(a, ec)) {
        // A target may have no regression files yet: a missing directory is not an error.
        std::fprintf(stderr, "# %s does not exist, skipped\n", a.c_str());
      } else {
        std::fprintf(stderr, "%s is not a file or directory\n", a.c_str());
        ++bad_args;
      }
    }
  }
  if (tap) std::printf("TAP version 13\n1..%zu\n", inputs.size() + (bad_args ? 1 : 0));
  std::fflush(stdout);
  std::vector<uint8_t> buf;
  size_t failed = 0, k = 0;
  for (const std::string &path : inputs) {
    ++k;
    if (!read_file(path, &buf)) {
      ++failed;
      if (tap) std::printf("not ok %zu - %s (cannot read)\n", k, path.c_str());
      continue;
    }
    std::fprintf(stderr, "# running %s\n", path.c_str());
    // A heap copy of exactly the input's size, as libFuzzer hands it over.
    uint8_t *copy = new uint8_t[buf.size() ? buf.size() : 1];
    if (!buf.empty()) std::memcpy(copy, buf.data(), buf.size());
    LLVMFuzzerTestOneInput(copy, buf.size());
    delete[] copy;
    if (tap) std::printf("ok %zu - %s\n", k, path.c_str());
    std::fflush(stdout);
  }
  if (bad_args) {
    ++failed;
    if (tap) std::printf("not ok %zu - bad arguments\n", inputs.size() + 1);
  }
  if (!tap)
    std::printf("%s: %zu inputs replayed, %zu failed\n", argv[0], inputs.size(), failed);
  return failed ? 1 : 0;
}
