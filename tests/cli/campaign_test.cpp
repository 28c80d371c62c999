// Campaigns in one process (simpact_cli/campaign.h): results in index order
// whatever the thread count, failures named, records and digests exact. The
// same programs over MPI ranks: tests/mpi.
#include "simpact_cli/campaign.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using simpact::cli::CampaignContext;
using simpact::cli::CampaignError;
using simpact::cli::CampaignOptions;
using simpact::cli::Digest;
using simpact::cli::RecordReader;
using simpact::cli::RecordWriter;
using simpact::cli::run_campaign;

/// One context for the whole test program (at most one may exist); not
/// started by mpirun, so it is a single process.
const CampaignContext& context() {
  // Shared by the test files of this program (at most one context exists);
  // reachable until exit, as main()'s would be.
  static const CampaignContext* const instance =
      CampaignContext::current() != nullptr ? CampaignContext::current() : new CampaignContext(nullptr, nullptr);
  return *instance;
}

/// Uneven items: item i spins a multiple of (i mod 7) iterations, so threads
/// finish out of order.
std::string uneven_item(std::int64_t i) {
  std::uint64_t x = static_cast<std::uint64_t>(i) + 1;
  for (std::int64_t k = 0; k < (i % 7) * 20000; ++k) x = x * 6364136223846793005ull + 1442695040888963407ull;
  return RecordWriter().put(i).put(static_cast<std::int64_t>(x >> 1)).take();
}

TEST(Campaign, SingleProcessWithoutALauncher) {
  EXPECT_FALSE(context().mpi());
  EXPECT_EQ(context().rank(), 0);
  EXPECT_EQ(context().ranks(), 1);
  EXPECT_TRUE(context().is_root());
  EXPECT_EQ(CampaignContext::current(), &context());
}

TEST(Campaign, ResultsInIndexOrderForAnyThreadCount) {
  std::vector<std::string> reference;
  for (std::int64_t i = 0; i < 200; ++i) reference.push_back(uneven_item(i));
  for (int threads : {1, 2, 3, 7}) {
    CampaignOptions options;
    options.threads = threads;
    const std::vector<std::string> results = run_campaign(context(), 200, uneven_item, options);
    EXPECT_EQ(results, reference) << threads << " threads";
  }
  EXPECT_TRUE(run_campaign(context(), 0, uneven_item).empty());
  EXPECT_THROW(run_campaign(context(), -1, uneven_item), std::invalid_argument);
}

TEST(Campaign, AFailingItemIsNamed) {
  CampaignOptions options;
  options.threads = 3;
  try {
    run_campaign(
        context(), 50,
        [](std::int64_t i) -> std::string {
          if (i == 17) throw std::runtime_error("world 17 exploded");
          return uneven_item(i);
        },
        options);
    FAIL() << "no CampaignError";
  } catch (const CampaignError& e) {
    EXPECT_EQ(e.item(), 17);
    EXPECT_STREQ(e.what(), "item 17: world 17 exploded");
  }
}

TEST(Campaign, RecordsRoundTripBitForBit) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  const std::vector<double> values = {0.1, -0.0, tiny, 1e308, std::numeric_limits<double>::infinity()};
  RecordWriter writer;
  writer.put(std::int64_t{-5}).put(true).put(std::string("a\0b", 3)).put(values).put(0.1 + 0.2);
  RecordReader reader(writer.bytes());
  EXPECT_EQ(reader.integer(), -5);
  EXPECT_TRUE(reader.boolean());
  EXPECT_EQ(reader.text(), std::string("a\0b", 3));
  const std::vector<double> back = reader.reals();
  ASSERT_EQ(back.size(), values.size());
  EXPECT_TRUE(std::signbit(back[1]));
  EXPECT_EQ(back[2], tiny);
  EXPECT_EQ(back, values);
  EXPECT_EQ(reader.real(), 0.1 + 0.2);
  EXPECT_TRUE(reader.at_end());
  EXPECT_THROW(reader.integer(), std::runtime_error);
  // A list claiming more entries than its record holds.
  RecordWriter claim;  // alive as long as the reader that views its bytes
  claim.put(std::int64_t{1000});
  RecordReader lying(claim.bytes());
  EXPECT_THROW(lying.reals(), std::runtime_error);
}

TEST(Campaign, DigestIsFnv1a64) {
  // Published FNV-1a 64 test vectors: "" and "a".
  EXPECT_EQ(Digest().hex(), "cbf29ce484222325");
  Digest a;
  a.add(std::string("a"));
  EXPECT_EQ(a.hex(), "af63dc4c8601ec8c");
  // A list's digest sees the boundaries between results.
  Digest ab, a_b;
  ab.add(std::vector<std::string>{"ab"});
  a_b.add(std::vector<std::string>{"a", "b"});
  EXPECT_NE(ab.value(), a_b.value());
}

TEST(Campaign, ItemSeedsDependOnSeedAndIndexOnly) {
  EXPECT_EQ(simpact::cli::item_seed(5, 3), simpact::cli::item_seed(5, 3));
  EXPECT_NE(simpact::cli::item_seed(5, 3), simpact::cli::item_seed(5, 4));
  EXPECT_NE(simpact::cli::item_seed(5, 3), simpact::cli::item_seed(6, 3));
}

}  // namespace
