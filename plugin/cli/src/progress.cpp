#include "simpact_cli/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#if defined(_WIN32)
#include <io.h>
#define SIMPACT_ISATTY _isatty
#define SIMPACT_FILENO _fileno
#else
#include <unistd.h>
#define SIMPACT_ISATTY isatty
#define SIMPACT_FILENO fileno
#endif

namespace simpact::cli {

bool is_terminal(std::FILE* stream) {
  return stream != nullptr && SIMPACT_ISATTY(SIMPACT_FILENO(stream)) != 0;
}

bool progress_wanted(std::FILE* stream) {
  if (const char* value = std::getenv("SIMPACT_PROGRESS")) {
    const std::string v = value;
    if (v == "never" || v == "0") return false;
    if (v == "always" || v == "1") return true;
  }
  return is_terminal(stream);
}

std::string format_duration(double seconds) {
  const long long s = seconds > 0.0 && std::isfinite(seconds) ? static_cast<long long>(seconds) : 0;
  char text[48];
  if (s < 60) {
    std::snprintf(text, sizeof text, "%llds", s);
  } else if (s < 3600) {
    std::snprintf(text, sizeof text, "%lldm %02llds", s / 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%lldh %02lldm", s / 3600, (s % 3600) / 60);
  }
  return text;
}

std::string format_progress(const std::string& label, std::int64_t done, std::int64_t total,
                            const std::string& unit, double elapsed_s) {
  char text[160];
  const double percent = total > 0 ? 100.0 * double(done) / double(total) : 100.0;
  int n = std::snprintf(text, sizeof text, "%lld/%lld%s%s (%.1f%%)", static_cast<long long>(done),
                        static_cast<long long>(total), unit.empty() ? "" : " ", unit.c_str(),
                        percent);
  std::string line = label.empty() ? std::string() : label + ": ";
  line.append(text, static_cast<std::size_t>(std::max(0, n)));
  if (done > 0 && elapsed_s > 0.0) {
    const double rate = double(done) / elapsed_s;
    n = std::snprintf(text, sizeof text, rate >= 100.0 ? ", %.0f/s" : ", %.3g/s", rate);
    line.append(text, static_cast<std::size_t>(std::max(0, n)));
    if (done < total) {
      line += ", ETA " + format_duration(double(total - done) / rate);
    } else {
      line += ", took " + format_duration(elapsed_s);
    }
  }
  return line;
}

ProgressLine::ProgressLine(std::string label, std::int64_t total, std::string unit,
                           ProgressOptions options)
    : label_(std::move(label)),
      total_(std::max<std::int64_t>(0, total)),
      unit_(std::move(unit)),
      options_(options),
      start_(std::chrono::steady_clock::now()),
      last_shown_(start_) {
  if (options_.stream == nullptr) options_.enabled = false;
}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::advance(std::int64_t items) {
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = std::min(total_, done_ + std::max<std::int64_t>(0, items));
  show_locked(false);
}

void ProgressLine::set_done(std::int64_t done) {
  std::lock_guard<std::mutex> lock(mutex_);
  done_ = std::min(total_, std::max(done_, done));
  show_locked(false);
}

void ProgressLine::add_total(std::int64_t items) {
  std::lock_guard<std::mutex> lock(mutex_);
  total_ += std::max<std::int64_t>(0, items);
}

void ProgressLine::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (lines_ > 0) show_locked(true);
}

void ProgressLine::clear_line() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!options_.enabled || lines_ == 0 || finished_) return;
  std::fprintf(options_.stream, "\r\x1b[K");
  std::fflush(options_.stream);
}

std::int64_t ProgressLine::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

int ProgressLine::lines_written() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lines_;
}

void ProgressLine::show_locked(bool final) {
  if (!options_.enabled || (finished_ && !final)) return;
  const auto now = std::chrono::steady_clock::now();
  if (!final && lines_ > 0 &&
      std::chrono::duration<double>(now - last_shown_).count() < options_.min_interval_s) {
    return;
  }
  last_shown_ = now;
  const std::string line = format_progress(label_, done_, total_, unit_,
                                           std::chrono::duration<double>(now - start_).count());
  // "\r" + the line + erase to the end of the line (ANSI EL), so a shorter
  // line leaves no tail of the previous one.
  std::fprintf(options_.stream, "\r%s\x1b[K%s", line.c_str(), final ? "\n" : "");
  std::fflush(options_.stream);
  ++lines_;
}

}  // namespace simpact::cli
