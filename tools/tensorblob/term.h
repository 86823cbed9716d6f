// Terminal output: human sizes, colour (only on a terminal, never with NO_COLOR) and a
// progress bar on stderr (only when stderr is a terminal).
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tbcli {

// 1234567 -> "1.2 MB" (decimal units, as `ls`/`du --si` and Ollama print them).
std::string human_bytes(uint64_t bytes);

// A tensor name, metadata key or file name for text output, escaped by the library's own
// rule (lib/core/name_text.h): "a\0b" for a name holding a NUL, never a line cut short.
// JSON output escapes through JsonWriter::str instead (\u0000).
std::string name_text(const char *p, size_t n);
inline std::string name_text(const std::string &s) { return name_text(s.data(), s.size()); }

// Colour for a stream: it is a terminal and NO_COLOR is unset or empty (no-color.org).
bool colour_enabled(FILE *f);
enum class Colour { kRed, kGreen, kYellow, kBold };
// s wrapped in the escape codes when `on`, else s unchanged.
std::string paint(bool on, Colour c, const std::string &s);

// One line on stderr, redrawn in place whenever the whole percent shown changes (at most
// 101 redraws, however many updates arrive), left at 100% with a newline by finish().
// Inactive (draws nothing) unless enabled and stderr is a terminal.
class ProgressBar {
 public:
  ProgressBar(const char *verb, bool enable);
  bool active() const { return on_; }
  // done/total in bytes; count/count_total (e.g. blobs) shown after the sizes when count_unit.
  void update(uint64_t done, uint64_t total, uint64_t count = 0, uint64_t count_total = 0,
              const char *count_unit = nullptr);
  // Erases the line (before printing other text); the next update draws it again.
  void clear();
  // Draws the final state (ok: everything done) and ends the line.
  void finish(bool ok = true);

 private:
  void draw();
  const char *verb_;
  bool on_ = false, drawn_ = false, finished_ = false;
  int last_percent_ = -1;
  uint64_t done_ = 0, total_ = 0, count_ = 0, count_total_ = 0;
  const char *unit_ = nullptr;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tbcli
