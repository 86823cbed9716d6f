// Compact JSON output for the CLI: one growing buffer, written out per object.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace tbcli {

class JsonWriter {
 public:
  void raw(const char *s) { buf_ += s; }
  void raw(char c) { buf_ += c; }
  void str(const char *p, size_t n);
  void str(const char *s);
  void u64(uint64_t v);
  void key(const char *k) {
    str(k);
    buf_ += ':';
  }
  void flush_line(FILE *f) {
    buf_ += '\n';
    std::fwrite(buf_.data(), 1, buf_.size(), f);
    buf_.clear();
  }
  std::string &buffer() { return buf_; }

 private:
  std::string buf_;
};

}  // namespace tbcli
