// Compact JSON output for the CLI, streamed to a FILE in large chunks (inspect --json on a
// 200,000-tensor model writes ~30 MB; building it in one string cost more than parsing).
// A plain byte buffer with a write pointer: every append reserves its worst case first, so
// the per-token work is a bounds check and a copy (std::string appends were a fifth of
// `inspect --json`).
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tbcli {

class JsonWriter {
 public:
  explicit JsonWriter(FILE *out = stdout)
      : out_(out), buf_(static_cast<char *>(std::malloc(kCap))), p_(buf_) {
    if (!buf_) {
      std::fputs("tensorblob: out of memory\n", stderr);
      std::exit(2);
    }
  }
  ~JsonWriter() {
    flush();
    std::free(buf_);
  }
  JsonWriter(const JsonWriter &) = delete;
  JsonWriter &operator=(const JsonWriter &) = delete;

  template <size_t N>
  void lit(const char (&s)[N]) {  // a string literal, length known at compile time
    bytes(s, N - 1);
  }
  void raw(const char *s) { bytes(s, std::strlen(s)); }
  void raw(char c) {
    room(1);
    *p_++ = c;
  }
  // A JSON string of the bytes p[0..n): UTF-8 as it is, bytes that are not UTF-8 as
  // \udbff\udfXX (json_bytes.h), so the line is valid JSON and the name can be recovered.
  void str(const char *p, size_t n);
  void str(const char *s) { str(s, std::strlen(s)); }
  void u64(uint64_t v);
  void key(const char *k) {
    str(k);
    raw(':');
  }
  // `,"k":value`: a member after the first of an object.
  void field(const char *k, const char *p, size_t n) {
    raw(',');
    key(k);
    str(p, n);
  }
  void field(const char *k, const char *s) { field(k, s, std::strlen(s)); }
  void field_u64(const char *k, uint64_t v) {
    raw(',');
    key(k);
    u64(v);
  }
  // Ends a JSON Lines record; writes out when the chunk is full.
  void end_line() {
    raw('\n');
    maybe_flush();
  }
  void flush_line(FILE *f) {
    (void)f;
    end_line();
    flush();
  }
  void flush() {
    if (p_ != buf_) std::fwrite(buf_, 1, static_cast<size_t>(p_ - buf_), out_);
    p_ = buf_;
  }
  // Call between items of a long array so the buffer stays bounded.
  void maybe_flush() {
    if (static_cast<size_t>(p_ - buf_) >= kChunk) flush();
  }
  // Takes back the last byte written (a write leaves its bytes in the buffer), e.g. an
  // object's closing brace to add members after a helper closed it.
  void unput() {
    if (p_ != buf_) --p_;
  }
  // The last byte written and not yet flushed, or 0.
  char last() const { return p_ != buf_ ? p_[-1] : '\0'; }

 private:
  static constexpr size_t kChunk = size_t{1} << 18;  // flush threshold
  static constexpr size_t kCap = kChunk * 2;         // room for any token under kChunk
  // Makes room for n more bytes (n <= kCap).
  void room(size_t n) {
    if (static_cast<size_t>(buf_ + kCap - p_) < n) flush();
  }
  void bytes(const char *s, size_t n) {
    while (n > kChunk) {  // a huge value: in pieces
      room(kChunk);
      std::memcpy(p_, s, kChunk);
      p_ += kChunk;
      s += kChunk;
      n -= kChunk;
    }
    room(n);
    std::memcpy(p_, s, n);
    p_ += n;
  }
  FILE *out_;
  char *buf_;
  char *p_;
};

}  // namespace tbcli
