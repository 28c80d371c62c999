// Progress lines (simpact_cli/progress.h): the text, the throttle, silence
// when disabled, and a thread-safe count.
#include "simpact_cli/progress.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using simpact::cli::format_duration;
using simpact::cli::format_progress;
using simpact::cli::ProgressLine;
using simpact::cli::ProgressOptions;

std::string contents(std::FILE* file) {
  std::fflush(file);
  std::rewind(file);
  std::string text;
  char buffer[256];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  return text;
}

/// Lines into `file`, shown (or not) regardless of any terminal.
ProgressOptions into(std::FILE* file, bool enabled, double min_interval_s) {
  ProgressOptions options;
  options.stream = file;
  options.enabled = enabled;
  options.min_interval_s = min_interval_s;
  return options;
}

TEST(Progress, DurationsReadAsSecondsMinutesHours) {
  EXPECT_EQ(format_duration(0.0), "0s");
  EXPECT_EQ(format_duration(-3.0), "0s");
  EXPECT_EQ(format_duration(59.9), "59s");
  EXPECT_EQ(format_duration(185.0), "3m 05s");
  EXPECT_EQ(format_duration(2 * 3600 + 7 * 60 + 59), "2h 07m");
}

TEST(Progress, LineShowsCountPercentRateAndEta) {
  // 1200 of 100000 in 64 s: 18.75/s, 98800 left → 5269.3 s = 1h 27m.
  EXPECT_EQ(format_progress("fuzz_worlds", 1200, 100000, "worlds", 64.0),
            "fuzz_worlds: 1200/100000 worlds (1.2%), 18.8/s, ETA 1h 27m");
  // Fast items: the rate without decimals; done: the time it took.
  EXPECT_EQ(format_progress("fit", 5000, 5000, "", 2.0), "fit: 5000/5000 (100.0%), 2500/s, took 2s");
  // Nothing done yet: no rate, no ETA.
  EXPECT_EQ(format_progress("", 0, 10, "tosses", 0.5), "0/10 tosses (0.0%)");
  EXPECT_EQ(format_progress("x", 0, 0, "", 0.0), "x: 0/0 (100.0%)");
}

TEST(Progress, DisabledWritesNothing) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  {
    const ProgressOptions options = into(file, false, 0.0);
    ProgressLine progress("quiet", 10, "items", options);
    for (int i = 0; i < 10; ++i) progress.advance();
    EXPECT_EQ(progress.done(), 10);
    EXPECT_EQ(progress.lines_written(), 0);
  }
  EXPECT_EQ(contents(file), "");
  std::fclose(file);
}

TEST(Progress, EnabledRewritesOneLineAndEndsWithANewline) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  const ProgressOptions options = into(file, true, 0.0);
  {
    ProgressLine progress("run", 3, "items", options);
    progress.advance();
    progress.advance(2);
    progress.advance();  // beyond the total: clamped
    EXPECT_EQ(progress.done(), 3);
    progress.finish();
    progress.finish();  // once only
    EXPECT_EQ(progress.lines_written(), 4);
  }
  const std::string text = contents(file);
  std::fclose(file);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.front(), '\r');
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one terminal line, rewritten in place";
  EXPECT_NE(text.find("run: 1/3 items (33.3%)"), std::string::npos) << text;
  EXPECT_NE(text.find("run: 3/3 items (100.0%)"), std::string::npos) << text;
}

TEST(Progress, ThrottleShowsTheFirstItemAndTheEndOnly) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  const ProgressOptions options = into(file, true, 3600.0);
  {
    ProgressLine progress("short", 5, "", options);
    for (int i = 0; i < 5; ++i) progress.advance();
    EXPECT_EQ(progress.lines_written(), 1);
  }
  const std::string text = contents(file);
  std::fclose(file);
  EXPECT_EQ(text.rfind("\rshort: 1/5 (20.0%)", 0), 0u) << text;
  EXPECT_NE(text.find("\rshort: 5/5 (100.0%)"), std::string::npos) << text;
}

TEST(Progress, RunThatNeverAdvancedLeavesNoTrace) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  { ProgressLine progress("idle", 5, "", into(file, true, 0.0)); }
  EXPECT_EQ(contents(file), "");
  std::fclose(file);
}

TEST(Progress, EnvironmentOverridesTheTerminalTest) {
  std::FILE* file = std::tmpfile();  // not a terminal
  ASSERT_NE(file, nullptr);
  EXPECT_FALSE(simpact::cli::is_terminal(file));
  ::setenv("SIMPACT_PROGRESS", "always", 1);
  EXPECT_TRUE(simpact::cli::progress_wanted(file));
  ::setenv("SIMPACT_PROGRESS", "0", 1);
  EXPECT_FALSE(simpact::cli::progress_wanted(file));
  ::setenv("SIMPACT_PROGRESS", "sometimes", 1);  // ignored: the terminal test
  EXPECT_FALSE(simpact::cli::progress_wanted(file));
  ::unsetenv("SIMPACT_PROGRESS");
  EXPECT_FALSE(simpact::cli::progress_wanted(file));
  std::fclose(file);
}

TEST(Progress, CountsFromManyThreads) {
  ProgressOptions options;
  options.enabled = false;
  ProgressLine progress("threads", 4000, "", options);
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) progress.advance();
    });
  }
  for (std::thread& thread : pool) thread.join();
  EXPECT_EQ(progress.done(), 4000);
  progress.set_done(10);  // never backwards
  EXPECT_EQ(progress.done(), 4000);
}

}  // namespace
