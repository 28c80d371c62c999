// Campaigns: many independent items (fuzz worlds, replays of a fit grid,
// bootstrap resamples, sweep samples) over MPI ranks and threads, merged in
// index order.
//
// The contract that makes a campaign reproducible:
//   * item i's result depends on i (and the campaign's inputs) alone: every
//     seed is derived from the index, never from a rank, a thread or an order
//     of completion;
//   * run_campaign() returns the results in index order, on every rank.
// Then the merged output is bitwise the same for any number of ranks and
// threads, and a Digest of it proves so.
//
// Work is handed out dynamically: rank 0 keeps the next unstarted index and
// gives chunks of CampaignOptions::chunk items to ranks that ask; inside a
// rank, worker threads take items one at a time. Uneven items (a world that
// runs into its budget next to one that ends in a step) therefore balance
// themselves. Only each rank's main thread calls MPI (MPI_THREAD_FUNNELED);
// rank 0's main thread serves requests by polling, so it leaves its cores to
// the workers.
//
// Failures: an exception from an item stops the campaign. In one process it
// is rethrown (a CampaignError naming the item); under MPI the failing
// rank sends the message to rank 0, which prints it on stderr and aborts the
// job with exit status 1 (MPI_Abort), so no rank is left waiting. A rank
// that dies is reported by mpirun, which then ends the job.
//
// MPI is optional: without SIMPACT_WITH_MPI, or when a program is not
// started by mpirun, a campaign is one process with its threads.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace simpact::cli {

class ProgressLine;

/// The process's place in a job. Construct one at the top of main(), before
/// other threads start; it initialises MPI when the program was started by
/// an MPI launcher (OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_SIZE set) and the
/// library was built with it, and finalises MPI when destroyed. At most one
/// may exist at a time.
class CampaignContext {
 public:
  CampaignContext(int* argc, char*** argv);
  ~CampaignContext();
  CampaignContext(const CampaignContext&) = delete;
  CampaignContext& operator=(const CampaignContext&) = delete;

  /// 0 … ranks() − 1; 0 without MPI.
  int rank() const { return rank_; }
  /// Processes in the job; 1 without MPI.
  int ranks() const { return ranks_; }
  /// Rank 0 prints and writes the results.
  bool is_root() const { return rank_ == 0; }
  /// Whether MPI was initialised (also for a 1-rank mpirun).
  bool mpi() const { return mpi_; }
  /// Whether this build can use MPI at all.
  static bool built_with_mpi();
  /// The context of this process, or nullptr before main() made one.
  static const CampaignContext* current();

 private:
  int rank_ = 0;
  int ranks_ = 1;
  bool mpi_ = false;
};

/// Whether rank 0 should draw progress lines: progress_wanted(stderr)
/// (progress.h), or, under MPI, whether the launcher's stderr is a terminal
/// (the ranks' own stderr is a pipe mpirun forwards; Linux: read from
/// /proc/<parent>/fd/2). Always false on other ranks.
bool campaign_progress_wanted(const CampaignContext& context);

/// Worker threads per rank when a program's user gives none: the cores of
/// this machine shared among the ranks on it (OMPI_COMM_WORLD_LOCAL_SIZE,
/// MPI_LOCALNRANKS), at least 1.
int default_campaign_threads();

struct CampaignOptions {
  /// Worker threads per rank, ≥ 1. The results do not depend on it.
  int threads = 1;
  /// Items per request a rank makes of rank 0; 0: automatic, about 16
  /// requests per rank and thread (at least 1, at most 256 items), which
  /// keeps the requests few and the last chunks small.
  std::int64_t chunk = 0;
  /// Advanced by one on rank 0 per result that arrives (may be nullptr; one
  /// line may count several campaigns).
  ProgressLine* progress = nullptr;
};

/// An item's failure as a single process reports it: the item and the
/// exception's message ("item 17: …").
class CampaignError : public std::runtime_error {
 public:
  CampaignError(std::int64_t item, const std::string& message);
  std::int64_t item() const { return item_; }
  /// The item's own message, without "item N: ".
  const std::string& message() const { return message_; }

 private:
  std::int64_t item_;
  std::string message_;
};

/// An item: its index in [0, items) in, its result as bytes out (RecordWriter).
using CampaignJob = std::function<std::string(std::int64_t item)>;

/// Runs job(i) for every i in [0, items) over the ranks of `context` and
/// `options.threads` threads each; returns the results in index order on
/// every rank (rank 0 gathers them, then broadcasts). Collective: every rank
/// must call it with the same `items`, in the same order of campaigns.
std::vector<std::string> run_campaign(const CampaignContext& context, std::int64_t items,
                                      const CampaignJob& job, const CampaignOptions& options = {});

/// 64-bit FNV-1a over bytes, printed as 16 hex digits: the digest programs
/// print of their merged results. Not cryptographic; it tells runs apart.
class Digest {
 public:
  void add(std::string_view bytes);
  void add(const std::vector<std::string>& results);  ///< each, in order
  std::uint64_t value() const { return hash_; }
  std::string hex() const;

 private:
  std::uint64_t hash_ = 14695981039346656037ull;
};

/// Results as bytes: numbers by their bit patterns (little-endian, doubles
/// exact), strings with their length. Reader and writer must agree on the
/// order; RecordReader throws std::runtime_error when reading past the end.
class RecordWriter {
 public:
  RecordWriter& put(double value);
  RecordWriter& put(std::int64_t value);
  RecordWriter& put(int value) { return put(static_cast<std::int64_t>(value)); }
  RecordWriter& put(bool value) { return put(static_cast<std::int64_t>(value ? 1 : 0)); }
  RecordWriter& put(const std::string& value);
  RecordWriter& put(const std::vector<double>& values);
  const std::string& bytes() const { return bytes_; }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

/// Views the bytes it reads: they must outlive the reader.
class RecordReader {
 public:
  explicit RecordReader(std::string_view bytes) : bytes_(bytes) {}
  double real();
  std::int64_t integer();
  bool boolean() { return integer() != 0; }
  std::string text();
  std::vector<double> reals();
  bool at_end() const { return offset_ == bytes_.size(); }

 private:
  std::string_view take(std::size_t n);
  std::string_view bytes_;
  std::size_t offset_ = 0;
};

/// A seed for item `index` of a campaign seeded `seed`: SplitMix64 of both,
/// so neighbouring indices get unrelated streams.
std::uint64_t item_seed(std::uint64_t seed, std::int64_t index);

}  // namespace simpact::cli
