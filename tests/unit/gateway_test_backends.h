// The storage backends the gateway's semantic tests run on, one TEST_P
// instance each: every test gets a fresh, empty store of its own, which it
// can open again (as a restart would) and break on purpose.
//
//   kSqlite    a database file in a temp dir;
//   kPostgres  a schema of its own on the test process' PostgreSQL server
//              (PostgresServer::Shared(): started on first use, from
//              Debian's binaries, in a temp dir; a few seconds).
//
// Thread safety: a TestBackend belongs to one test; Open() may be called
// again only once the storage it returned before is gone.
#ifndef FENCEGATE_TESTS_UNIT_GATEWAY_TEST_BACKENDS_H_
#define FENCEGATE_TESTS_UNIT_GATEWAY_TEST_BACKENDS_H_

#include <memory>
#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gateway/storage_backend.h"
#include "gtest/gtest.h"

namespace fencegate::gateway {

enum class BackendKind { kSqlite, kPostgres };

// Every backend, for INSTANTIATE_TEST_SUITE_P; BackendName names the
// instances ("Sqlite", "Postgres").
inline auto AllBackends() {
  return ::testing::Values(BackendKind::kSqlite, BackendKind::kPostgres);
}
std::string BackendName(const ::testing::TestParamInfo<BackendKind>& info);
void PrintTo(BackendKind kind, std::ostream* out);  // for gtest's messages

class TestBackend {
 public:
  static absl::StatusOr<std::unique_ptr<TestBackend>> Create(BackendKind kind);
  virtual ~TestBackend() = default;

  // Opens the store (the same data on every call) with two read connections.
  virtual absl::StatusOr<std::unique_ptr<StorageBackend>> Open() = 0;
  // kPostgres: the connection URI of the test's schema ("" for kSqlite), so
  // a test can open more backends on the same data (more gateways).
  virtual std::string postgres_uri() const { return ""; }
  // From now on, storing an object under `key` fails inside the storage
  // (a trigger), after its op's fence raise and earlier writes: a storage
  // error in the middle of an op.
  virtual absl::Status FailWritesOfKey(const std::string& key) = 0;
};

}  // namespace fencegate::gateway

#endif  // FENCEGATE_TESTS_UNIT_GATEWAY_TEST_BACKENDS_H_
