#include "term.h"

#include "lib/core/name_text.h"

#include <cstdlib>
#include <sys/ioctl.h>
#include <unistd.h>

namespace tbcli {

std::string name_text(const char *p, size_t n) {
  std::string out(n * 4 + 1, '\0');  // every byte escapes to at most 4
  out.resize(tblob::escape_name(p, n, &out[0], out.size()));
  return out;
}

std::string human_bytes(uint64_t b) {
  static const char *const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1000.0 && u < 5) {
    v /= 1000.0;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof(buf), "%llu B", static_cast<unsigned long long>(b));
  else
    std::snprintf(buf, sizeof(buf), "%.1f %s", v, kUnits[u]);
  return buf;
}

bool colour_enabled(FILE *f) {
  const char *nc = std::getenv("NO_COLOR");
  if (nc && nc[0]) return false;
  return ::isatty(::fileno(f)) == 1;
}

std::string paint(bool on, Colour c, const std::string &s) {
  if (!on) return s;
  const char *code = c == Colour::kRed ? "31" : c == Colour::kGreen ? "32" : c == Colour::kYellow ? "33" : "1";
  return std::string("\033[") + code + "m" + s + "\033[0m";
}

ProgressBar::ProgressBar(const char *verb, bool enable)
    : verb_(verb), on_(enable && ::isatty(2) == 1), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(uint64_t done, uint64_t total, uint64_t count, uint64_t count_total, const char *unit) {
  if (!on_ || finished_) return;
  done_ = done;
  total_ = total;
  count_ = count;
  count_total_ = count_total;
  unit_ = unit;
  const int pct = total ? static_cast<int>(static_cast<double>(done) * 100.0 / static_cast<double>(total)) : 100;
  if (pct == last_percent_ && drawn_) return;
  last_percent_ = pct;
  draw();
}

// Columns of the terminal on stderr (80 when unknown).
int terminal_columns() {
  struct winsize ws;
  if (::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

void ProgressBar::draw() {
  const double frac = total_ ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  // A line longer than the terminal wraps, and "\r" then cannot redraw it: narrow terminals
  // get a shorter bar and no counts.
  const int cols = terminal_columns();
  const bool narrow = cols < 100;
  const int width = cols >= 100 ? 30 : cols >= 70 ? 20 : 10, fill = static_cast<int>(frac * width);
  std::string bar(static_cast<size_t>(fill), '#');
  bar.append(static_cast<size_t>(width - fill), '.');
  std::fprintf(stderr, "\r\033[K%s [%s] %3d%%  %s / %s", verb_, bar.c_str(), static_cast<int>(frac * 100.0),
               human_bytes(done_).c_str(), human_bytes(total_).c_str());
  if (unit_ && !narrow)
    std::fprintf(stderr, "  %llu/%llu %s", static_cast<unsigned long long>(count_),
                 static_cast<unsigned long long>(count_total_), unit_);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::clear() {
  if (!on_ || !drawn_ || finished_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

void ProgressBar::finish(bool ok) {
  if (!on_ || finished_) return;
  if (total_ == 0 && !drawn_) {  // nothing was ever reported: no bar at all
    finished_ = true;
    return;
  }
  if (ok) {
    done_ = total_;
    if (count_total_) count_ = count_total_;
  }
  draw();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, ok ? "  done in %.1f s\n" : "  stopped after %.1f s\n", secs);
  std::fflush(stderr);
  finished_ = true;
}

}  // namespace tbcli
