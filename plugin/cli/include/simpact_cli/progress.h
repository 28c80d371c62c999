// Progress lines for long runs (fuzz campaigns, fits, benchmarks, sweeps).
//
// A ProgressLine shows "label: done/total unit (p%), rate/s, ETA" on one
// terminal line, rewritten in place with '\r', on stderr only, and only when
// that stream is a terminal: in logs, pipes and CI output it writes nothing,
// so a program's stdout and stderr stay the same whether anyone watches.
// The environment variable SIMPACT_PROGRESS overrides the terminal test:
// "never" (or "0") silences it, "always" (or "1") shows it on any stream
// (for a log that should show it, or ranks whose stderr a launcher pipes).
// The counter is thread-safe; the first item's line shows at once, later
// ones at most one per ProgressOptions::min_interval_s. Nothing here
// changes a result.
#ifndef SIMPACT_CLI_PROGRESS_H
#define SIMPACT_CLI_PROGRESS_H

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace simpact::cli {

/// Whether `stream` is an interactive terminal (isatty of its descriptor).
bool is_terminal(std::FILE* stream);

/// Whether progress lines go to `stream`: SIMPACT_PROGRESS when it is set to
/// never/0 or always/1, else is_terminal(stream). Other values of the
/// variable are ignored (auto).
bool progress_wanted(std::FILE* stream);

/// One progress line's text, without '\r' or newline, e.g.
///   "fuzz_worlds: 1200/100000 worlds (1.2%), 18.7/s, ETA 1h 28m"
/// `done` ≤ `total` ≥ 0; `elapsed_s` ≥ 0 [s] since the run started. The rate
/// is done/elapsed; the ETA (total − done)/rate, shown once done > 0 and
/// elapsed > 0, as "Xs", "Xm Ys" or "Xh Ym". A total of 0 reads "0/0".
std::string format_progress(const std::string& label, std::int64_t done, std::int64_t total,
                            const std::string& unit, double elapsed_s);

/// Durations for ETAs: "42s", "3m 05s", "2h 07m" (rounded down; < 0 reads 0s).
std::string format_duration(double seconds);

struct ProgressOptions {
  /// Where lines go; stderr unless a test passes a file.
  std::FILE* stream = stderr;
  /// Show lines at all. The default, as the programs use it:
  /// progress_wanted(stderr). Tests force it on to see the text.
  bool enabled = progress_wanted(stderr);
  /// At most one line per this many seconds [s]: a quarter second keeps a
  /// terminal readable and costs nothing next to items of a millisecond.
  double min_interval_s = 0.25;
};

/// The progress of `total` items. advance() from any thread; finish() (or
/// the destructor) prints the final line and a newline, once, and only if a
/// line was shown, so a run that never advanced leaves no trace.
class ProgressLine {
 public:
  ProgressLine(std::string label, std::int64_t total, std::string unit,
               ProgressOptions options = {});
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// `items` more are done (≥ 0).
  void advance(std::int64_t items = 1);
  /// The count is now `done` (for callers that count elsewhere, e.g. the
  /// ranks of an MPI job); smaller than the current count is ignored.
  void set_done(std::int64_t done);
  /// The total grows by `items` (≥ 0), for runs whose later phases are
  /// sized by earlier ones (a fine grid around a coarse grid's best).
  void add_total(std::int64_t items);
  void finish();
  /// Erases the shown line (if any) so the caller can print other text on
  /// the terminal; the next update draws it again.
  void clear_line();

  std::int64_t done() const;
  /// Lines written so far (0 when disabled).
  int lines_written() const;

 private:
  void show_locked(bool final);

  std::string label_;
  std::int64_t total_;
  std::string unit_;
  ProgressOptions options_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_shown_;
  mutable std::mutex mutex_;
  std::int64_t done_ = 0;
  int lines_ = 0;
  bool finished_ = false;
};

}  // namespace simpact::cli

#endif  // SIMPACT_CLI_PROGRESS_H
