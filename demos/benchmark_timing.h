// Wall-clock timing shared by the benchmarks and demos: the median over
// batches of the mean time of one call, each batch long enough for the
// clock's resolution not to matter. Figures are for humans and for ratios
// measured in one run; nothing asserts on them.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace simpact::demos {

/// Median over `batches` (≥ 1) of the mean time [ns] of one `call()` in a
/// batch of at least `min_batch_ns`. `call` is run once first, untimed (warm
/// caches and workspaces).
template <class Call>
double median_call_ns(Call&& call, int batches, double min_batch_ns) {
  using Clock = std::chrono::steady_clock;
  call();
  long reps = 1;
  while (true) {
    const auto start = Clock::now();
    for (long i = 0; i < reps; ++i) call();
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
    if (ns >= min_batch_ns) break;
    reps *= 2;
  }
  std::vector<double> samples;
  for (int b = 0; b < std::max(1, batches); ++b) {
    const auto start = Clock::now();
    for (long i = 0; i < reps; ++i) call();
    samples.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
                      static_cast<double>(reps));
  }
  const auto middle = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  std::nth_element(samples.begin(), middle, samples.end());
  return *middle;
}

}  // namespace simpact::demos
