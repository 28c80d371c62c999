// A campaign of uneven synthetic items for the MPI tests (tests/mpi): prints
// the digest of the merged results, so runs on 1, 2, 3 and 7 ranks and any
// thread count can be compared; --fail-at K makes item K throw and
// --abort-at K makes the process running item K die, to check that the job
// then ends with the message (or mpirun's report) instead of hanging.
//
//   campaign_probe --items N [--threads T] [--chunk C] [--fail-at K] [--abort-at K]
#include "simpact_cli/campaign.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

namespace {

std::int64_t integer(const char* text) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0') throw std::invalid_argument(std::string("not an integer: ") + text);
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const simpact::cli::CampaignContext context(&argc, &argv);
  std::int64_t items = 100, fail_at = -1, abort_at = -1;
  simpact::cli::CampaignOptions options;
  try {
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--items") items = integer(argv[i + 1]);
      else if (flag == "--threads") options.threads = static_cast<int>(integer(argv[i + 1]));
      else if (flag == "--chunk") options.chunk = integer(argv[i + 1]);
      else if (flag == "--fail-at") fail_at = integer(argv[i + 1]);
      else if (flag == "--abort-at") abort_at = integer(argv[i + 1]);
      else throw std::invalid_argument("unknown flag " + flag);
    }
    const auto job = [&](std::int64_t i) {
      if (i == fail_at) throw std::runtime_error("injected failure");
      if (i == abort_at) std::abort();
      // Uneven work: item i spins (i * 7919 mod 13) × 20000 steps.
      std::uint64_t x = simpact::cli::item_seed(42, i);
      const std::int64_t spins = (i * 7919 % 13) * 20000;
      for (std::int64_t k = 0; k < spins; ++k) x = x * 6364136223846793005ull + 1442695040888963407ull;
      return simpact::cli::RecordWriter().put(i).put(static_cast<double>(x >> 11) * 0x1p-53).take();
    };
    const std::vector<std::string> results = simpact::cli::run_campaign(context, items, job, options);
    simpact::cli::Digest digest;
    digest.add(results);
    if (context.is_root()) {
      std::printf("campaign_probe: %lld items, digest %s\n", static_cast<long long>(items), digest.hex().c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "campaign_probe: %s\n", e.what());
    return 1;
  }
}
