// Compact JSON output for the CLI, streamed to a FILE in large chunks (inspect --json on a
// 200,000-tensor model writes ~30 MB; building it in one string cost more than parsing).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace tbcli {

class JsonWriter {
 public:
  explicit JsonWriter(FILE *out = stdout) : out_(out) { buf_.reserve(kChunk + 4096); }
  ~JsonWriter() { flush(); }

  template <size_t N>
  void lit(const char (&s)[N]) {  // a string literal, length known at compile time
    buf_.append(s, N - 1);
  }
  void raw(const char *s) { buf_ += s; }
  void raw(char c) { buf_ += c; }
  void str(const char *p, size_t n);
  void str(const char *s) { str(s, std::strlen(s)); }
  void u64(uint64_t v);
  void key(const char *k) {
    str(k);
    buf_ += ':';
  }
  // Ends a JSON Lines record; writes out when the chunk is full.
  void end_line() {
    buf_ += '\n';
    if (buf_.size() >= kChunk) flush();
  }
  void flush_line(FILE *f) {
    (void)f;
    end_line();
    flush();
  }
  void flush() {
    if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), out_);
    buf_.clear();
  }
  // Call between items of a long array so the buffer stays bounded.
  void maybe_flush() {
    if (buf_.size() >= kChunk) flush();
  }
  std::string &buffer() { return buf_; }

 private:
  static constexpr size_t kChunk = 1 << 18;
  FILE *out_;
  std::string buf_;
};

}  // namespace tbcli
