#include "simpact_cli/campaign.h"

#include "simpact_cli/progress.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#if defined(__linux__)
#include <unistd.h>
#endif

#ifdef SIMPACT_WITH_MPI
#include <mpi.h>
#endif

namespace simpact::cli {
namespace {

const CampaignContext* g_current = nullptr;

#ifdef SIMPACT_WITH_MPI
// The launcher, the dispatcher's pacing and the chunking exist only with MPI.

/// Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE, PMIx launchers PMIX_RANK,
/// MPICH's Hydra and Slurm's PMI PMI_SIZE.
bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_SIZE") != nullptr;
}

/// Rank 0's dispatcher sleeps this long between probes for requests: far
/// below an item's time (a fuzz world or a replay takes milliseconds), so a
/// rank waits little for its next chunk, while the dispatcher's own CPU use
/// stays negligible next to the workers beside it.
constexpr auto kPollPause = std::chrono::microseconds(200);
/// A rank reports finished results to rank 0 at least this often, so rank
/// 0's progress line moves at the pace of the whole job (its refresh rate).
constexpr auto kReportInterval = std::chrono::milliseconds(250);
/// A rank whose item failed waits this long for rank 0 to abort the job
/// after sending it the message, then aborts the job itself.
constexpr auto kAbortGrace = std::chrono::seconds(30);

/// How many items one request asks for (CampaignOptions::chunk).
std::int64_t chunk_size(const CampaignOptions& options, std::int64_t items, int ranks) {
  if (options.chunk > 0) return options.chunk;
  const std::int64_t workers = std::int64_t{ranks} * std::max(1, options.threads);
  return std::clamp<std::int64_t>(items / (workers * 16), 1, 256);
}
#endif  // SIMPACT_WITH_MPI

struct Failure {
  std::int64_t item = -1;
  std::string message;
};

std::string describe_exception(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

#ifdef SIMPACT_WITH_MPI
constexpr int kTagRequest = 101;
constexpr int kTagChunk = 102;
constexpr int kTagError = 103;
/// What a request asks of rank 0, besides delivering finished results.
enum Want : std::int64_t { kReportOnly = 0, kWantChunk = 1, kFinal = 2 };

[[noreturn]] void abort_job(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return
}

void send_bytes(const std::string& bytes, int destination, int tag) {
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, destination, tag, MPI_COMM_WORLD);
}

/// Rank 0's results to every rank, in pieces below MPI's int counts.
void broadcast(std::vector<std::string>& results, bool root) {
  std::string packed;
  if (root) {
    RecordWriter writer;
    for (const std::string& r : results) writer.put(r);
    packed = writer.take();
  }
  std::int64_t size = static_cast<std::int64_t>(packed.size());
  MPI_Bcast(&size, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
  packed.resize(static_cast<std::size_t>(size));
  constexpr std::int64_t kPiece = std::int64_t{1} << 30;
  for (std::int64_t offset = 0; offset < size; offset += kPiece) {
    MPI_Bcast(packed.data() + offset, static_cast<int>(std::min(kPiece, size - offset)), MPI_BYTE, 0,
              MPI_COMM_WORLD);
  }
  if (!root) {
    RecordReader reader(packed);
    for (std::string& r : results) r = reader.text();
  }
}
#endif

/// Rank 0 (and a single process): its own workers take items one at a time
/// from the shared counter; with other ranks, the main thread serves their
/// requests for chunks and collects what they finished.
std::vector<std::string> run_root(const CampaignContext& context, std::int64_t items,
                                  const CampaignJob& job, const CampaignOptions& options) {
  std::vector<std::string> results(static_cast<std::size_t>(items));
  std::mutex mutex;
  std::int64_t next = 0;
  std::atomic<std::int64_t> completed{0};
  std::optional<Failure> failure;
  const int threads = std::max(1, options.threads);
  std::atomic<int> finished_workers{0};

  auto worker = [&] {
    for (;;) {
      std::int64_t item = 0;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (failure || next >= items) break;
        item = next++;
      }
      try {
        std::string result = job(item);
        results[static_cast<std::size_t>(item)] = std::move(result);
        ++completed;
      } catch (...) {
        const std::string message = describe_exception(std::current_exception());
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = Failure{item, message};
        break;
      }
    }
    ++finished_workers;
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);

  int active_ranks = context.ranks() - 1;
  std::int64_t reported = 0;  // of this campaign, to the progress line (which may span several)
  auto report = [&] {
    const std::int64_t now = completed.load();
    if (options.progress != nullptr && now > reported) options.progress->advance(now - reported);
    reported = now;
  };
  while (active_ranks > 0 || finished_workers.load() < threads) {
#ifdef SIMPACT_WITH_MPI
    if (active_ranks > 0) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (failure) {
          abort_job("campaign: rank 0, item " + std::to_string(failure->item) + ": " + failure->message);
        }
      }
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
      if (!flag) {
        report();
        std::this_thread::sleep_for(kPollPause);
        continue;
      }
      int count = 0;
      MPI_Get_count(&status, MPI_BYTE, &count);
      std::string message(static_cast<std::size_t>(count), '\0');
      MPI_Recv(message.data(), count, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      if (status.MPI_TAG == kTagError) abort_job(message);
      RecordReader reader(message);
      const std::int64_t want = reader.integer();
      const std::int64_t records = reader.integer();
      for (std::int64_t k = 0; k < records; ++k) {
        const std::int64_t item = reader.integer();
        results[static_cast<std::size_t>(item)] = reader.text();
        ++completed;
      }
      if (want == kWantChunk) {
        std::int64_t range[2];
        {
          std::lock_guard<std::mutex> lock(mutex);
          range[0] = next;
          range[1] = failure ? next : std::min(items, next + chunk_size(options, items, context.ranks()));
          next = range[1];
        }
        MPI_Send(range, 2, MPI_INT64_T, status.MPI_SOURCE, kTagChunk, MPI_COMM_WORLD);
      } else if (want == kFinal) {
        --active_ranks;
      }
      report();
      continue;
    }
#endif
    report();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (std::thread& thread : pool) thread.join();
  report();
  if (failure) {
#ifdef SIMPACT_WITH_MPI
    if (context.ranks() > 1) {
      abort_job("campaign: rank 0, item " + std::to_string(failure->item) + ": " + failure->message);
    }
#endif
    throw CampaignError(failure->item, failure->message);
  }
  return results;
}

#ifdef SIMPACT_WITH_MPI
/// Every other rank: the main thread asks rank 0 for chunks while the
/// queue runs low and sends back what the workers finished.
std::vector<std::string> run_worker_rank(const CampaignContext& context, std::int64_t items,
                                         const CampaignJob& job, const CampaignOptions& options) {
  std::mutex mutex;
  std::condition_variable work_ready, main_wake;
  std::deque<std::int64_t> queue;
  bool no_more = false;
  std::vector<std::pair<std::int64_t, std::string>> outbox;
  std::optional<Failure> failure;
  const int threads = std::max(1, options.threads);
  int finished_workers = 0;

  auto worker = [&] {
    for (;;) {
      std::int64_t item = 0;
      {
        std::unique_lock<std::mutex> lock(mutex);
        work_ready.wait(lock, [&] { return !queue.empty() || no_more || failure; });
        if (queue.empty() || failure) break;
        item = queue.front();
        queue.pop_front();
        main_wake.notify_one();
      }
      try {
        std::string result = job(item);
        std::lock_guard<std::mutex> lock(mutex);
        outbox.emplace_back(item, std::move(result));
      } catch (...) {
        const std::string message = describe_exception(std::current_exception());
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure) failure = Failure{item, message};
        break;
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    ++finished_workers;
    work_ready.notify_all();
    main_wake.notify_one();
  };

  // Sends finished results with a request; returns the chunk when one was asked for.
  auto send_request = [&](Want want, std::vector<std::pair<std::int64_t, std::string>>& done) {
    RecordWriter writer;
    writer.put(static_cast<std::int64_t>(want)).put(static_cast<std::int64_t>(done.size()));
    for (auto& [item, bytes] : done) writer.put(item).put(bytes);
    done.clear();
    send_bytes(writer.bytes(), 0, kTagRequest);
    std::int64_t range[2] = {0, 0};
    if (want == kWantChunk) {
      MPI_Recv(range, 2, MPI_INT64_T, 0, kTagChunk, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return std::make_pair(range[0], range[1]);
  };

  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(worker);
  auto last_report = std::chrono::steady_clock::now();
  for (;;) {
    std::vector<std::pair<std::int64_t, std::string>> done;
    bool want_chunk = false, all_finished = false;
    std::optional<Failure> failed;
    {
      std::unique_lock<std::mutex> lock(mutex);
      main_wake.wait_for(lock, kReportInterval, [&] {
        return failure || finished_workers == threads ||
               (!no_more && static_cast<int>(queue.size()) < threads);
      });
      failed = failure;
      want_chunk = !failure && !no_more && static_cast<int>(queue.size()) < threads;
      all_finished = finished_workers == threads;
      done.swap(outbox);
    }
    if (failed) {
      const std::string message = "campaign: rank " + std::to_string(context.rank()) + ", item " +
                                  std::to_string(failed->item) + ": " + failed->message;
      send_bytes(message, 0, kTagError);
      std::this_thread::sleep_for(kAbortGrace);
      abort_job(message);
    }
    if (all_finished) {
      send_request(kFinal, done);
      break;
    }
    if (want_chunk) {
      const auto [begin, end] = send_request(kWantChunk, done);
      last_report = std::chrono::steady_clock::now();
      std::lock_guard<std::mutex> lock(mutex);
      if (begin >= end) no_more = true;
      for (std::int64_t item = begin; item < end; ++item) queue.push_back(item);
      work_ready.notify_all();
    } else if (!done.empty() && std::chrono::steady_clock::now() - last_report >= kReportInterval) {
      send_request(kReportOnly, done);
      last_report = std::chrono::steady_clock::now();
    } else if (!done.empty()) {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto& entry : done) outbox.push_back(std::move(entry));
    }
  }
  for (std::thread& thread : pool) thread.join();
  return std::vector<std::string>(static_cast<std::size_t>(items));
}
#endif

}  // namespace

CampaignContext::CampaignContext(int* argc, char*** argv) {
  if (g_current != nullptr) throw std::logic_error("CampaignContext: one exists already");
#ifdef SIMPACT_WITH_MPI
  if (launched_by_mpi()) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (provided < MPI_THREAD_FUNNELED) {
      std::fprintf(stderr, "campaign: MPI provides no MPI_THREAD_FUNNELED support\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks_);
    mpi_ = true;
  }
#else
  (void)argc;
  (void)argv;
#endif
  g_current = this;
}

CampaignContext::~CampaignContext() {
#ifdef SIMPACT_WITH_MPI
  if (mpi_) MPI_Finalize();
#endif
  g_current = nullptr;
}

bool CampaignContext::built_with_mpi() {
#ifdef SIMPACT_WITH_MPI
  return true;
#else
  return false;
#endif
}

const CampaignContext* CampaignContext::current() { return g_current; }

bool campaign_progress_wanted(const CampaignContext& context) {
  if (!context.is_root()) return false;
  if (!context.mpi() || std::getenv("SIMPACT_PROGRESS") != nullptr) return progress_wanted(stderr);
#if defined(__linux__)
  // The launcher (mpirun, a parent of rank 0 on its node) holds the user's
  // terminal; the rank's own stderr is a pipe to it.
  char link[256] = {};
  const std::string path = "/proc/" + std::to_string(getppid()) + "/fd/2";
  const ssize_t n = readlink(path.c_str(), link, sizeof link - 1);
  if (n > 0) {
    const std::string target(link, static_cast<std::size_t>(n));
    return target.rfind("/dev/pts/", 0) == 0 || target.rfind("/dev/tty", 0) == 0;
  }
#endif
  return false;
}

int default_campaign_threads() {
  int local = 1;
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* value = std::getenv(name)) local = std::max(1, std::atoi(value));
  }
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / local);
}

CampaignError::CampaignError(std::int64_t item, const std::string& message)
    : std::runtime_error("item " + std::to_string(item) + ": " + message), item_(item), message_(message) {}

std::vector<std::string> run_campaign(const CampaignContext& context, std::int64_t items,
                                      const CampaignJob& job, const CampaignOptions& options) {
  if (items < 0) throw std::invalid_argument("run_campaign: items must be >= 0");
  if (!context.mpi() || context.ranks() == 1) return run_root(context, items, job, options);
#ifdef SIMPACT_WITH_MPI
  std::vector<std::string> results = context.is_root() ? run_root(context, items, job, options)
                                                       : run_worker_rank(context, items, job, options);
  broadcast(results, context.is_root());
  return results;
#else
  return run_root(context, items, job, options);
#endif
}

void Digest::add(std::string_view bytes) {
  for (const char c : bytes) {
    hash_ ^= static_cast<unsigned char>(c);
    hash_ *= 1099511628211ull;
  }
}

void Digest::add(const std::vector<std::string>& results) {
  for (const std::string& r : results) {
    RecordWriter length;
    length.put(static_cast<std::int64_t>(r.size()));
    add(length.bytes());
    add(r);
  }
}

std::string Digest::hex() const {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(hash_));
  return text;
}

namespace {
template <class T>
void append_le(std::string& out, T value) {
  std::uint64_t bits = 0;
  static_assert(sizeof(T) == sizeof bits);
  std::memcpy(&bits, &value, sizeof bits);
  for (int b = 0; b < 8; ++b) out.push_back(static_cast<char>((bits >> (8 * b)) & 0xffu));
}
std::uint64_t read_le(std::string_view bytes) {
  std::uint64_t bits = 0;
  for (int b = 0; b < 8; ++b) {
    bits |= std::uint64_t{static_cast<unsigned char>(bytes[static_cast<std::size_t>(b)])} << (8 * b);
  }
  return bits;
}
}  // namespace

RecordWriter& RecordWriter::put(double value) {
  append_le(bytes_, value);
  return *this;
}

RecordWriter& RecordWriter::put(std::int64_t value) {
  append_le(bytes_, value);
  return *this;
}

RecordWriter& RecordWriter::put(const std::string& value) {
  put(static_cast<std::int64_t>(value.size()));
  bytes_ += value;
  return *this;
}

RecordWriter& RecordWriter::put(const std::vector<double>& values) {
  put(static_cast<std::int64_t>(values.size()));
  for (double v : values) put(v);
  return *this;
}

std::string_view RecordReader::take(std::size_t n) {
  if (n > bytes_.size() - offset_) {
    throw std::runtime_error("RecordReader: a record ends early (" + std::to_string(n) +
                             " bytes wanted, " + std::to_string(bytes_.size() - offset_) + " left)");
  }
  const std::string_view part = bytes_.substr(offset_, n);
  offset_ += n;
  return part;
}

double RecordReader::real() {
  const std::uint64_t bits = read_le(take(8));
  double value = 0.0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

std::int64_t RecordReader::integer() {
  const std::uint64_t bits = read_le(take(8));
  std::int64_t value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

std::string RecordReader::text() {
  const std::int64_t n = integer();
  if (n < 0) throw std::runtime_error("RecordReader: a negative string length");
  return std::string(take(static_cast<std::size_t>(n)));
}

std::vector<double> RecordReader::reals() {
  const std::int64_t n = integer();
  if (n < 0 || static_cast<std::uint64_t>(n) > (bytes_.size() - offset_) / 8) {
    throw std::runtime_error("RecordReader: a list longer than its record");
  }
  std::vector<double> values(static_cast<std::size_t>(n));
  for (double& v : values) v = real();
  return values;
}

std::uint64_t item_seed(std::uint64_t seed, std::int64_t index) {
  // SplitMix64 (Steele, Lea & Flood 2014) of the seed, then of the index.
  auto mix = [](std::uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  return mix(mix(seed) ^ static_cast<std::uint64_t>(index));
}

}  // namespace simpact::cli
