#include "bench/loadgen/fsync_loop.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace fencegate::bench {
namespace {

constexpr size_t kBlock = 4096;
constexpr size_t kBlocks = 256;  // a 1 MiB file, written through once first

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<RunSummary> RunFsyncLoop(const std::string& dir,
                                        absl::Duration warmup,
                                        absl::Duration duration) {
  const std::string path = absl::StrCat(dir, "/fsync-loop-", getpid(), ".dat");
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Errno("open", path);
  std::vector<char> block(kBlock, 'f');
  absl::Status status;
  // Real blocks first (not fallocate's unwritten extents), so the loop's
  // fdatasync flushes data only, as a database overwriting its log does.
  for (size_t i = 0; i < kBlocks && status.ok(); ++i) {
    if (pwrite(fd, block.data(), kBlock, i * kBlock) != static_cast<ssize_t>(kBlock)) {
      status = Errno("pwrite", path);
    }
  }
  if (status.ok() && fsync(fd) != 0) status = Errno("fsync", path);

  std::vector<ClientTally> tallies(1);
  const absl::Time start = absl::Now() + warmup;
  const absl::Time end = start + duration;
  for (uint64_t i = 0; status.ok(); ++i) {
    const absl::Time before = absl::Now();
    if (before >= end) break;
    block[0] = static_cast<char>(i);
    if (pwrite(fd, block.data(), kBlock, (i % kBlocks) * kBlock) !=
        static_cast<ssize_t>(kBlock)) {
      status = Errno("pwrite", path);
    } else if (fdatasync(fd) != 0) {
      status = Errno("fdatasync", path);
    }
    if (before >= start) {
      tallies[0].latency_ns.push_back(absl::ToInt64Nanoseconds(absl::Now() - before));
    }
  }
  close(fd);
  unlink(path.c_str());
  if (!status.ok()) return status;
  return Summarize(tallies, duration);
}

}  // namespace fencegate::bench
