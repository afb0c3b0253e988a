// The fsync ceiling: one thread overwriting a 4 KiB block of a preallocated
// file and calling fdatasync(), in a loop, on the file system the servers
// keep their data on. A durable system that acknowledges a write only after
// it is on disk cannot answer one client faster than this; group commit is
// how it serves many clients in fewer syncs than requests.
//
// Thread safety: one call at a time per directory.
#ifndef FENCEGATE_BENCH_LOADGEN_FSYNC_LOOP_H_
#define FENCEGATE_BENCH_LOADGEN_FSYNC_LOOP_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/loadgen/run_stats.h"

namespace fencegate::bench {

// Runs the loop in a new file in `dir` (removed afterwards); one op = one
// pwrite + fdatasync.
absl::StatusOr<RunSummary> RunFsyncLoop(const std::string& dir,
                                        absl::Duration warmup,
                                        absl::Duration duration);

}  // namespace fencegate::bench

#endif  // FENCEGATE_BENCH_LOADGEN_FSYNC_LOOP_H_
