// The write load of the gateway's crash tests, on SQLite
// (gateway_durability_test.cc) and on two gateways sharing PostgreSQL
// (gateway_postgres_durability_test.cc): each writer puts its three keys at
// a time (all or nothing) on one resource, with ever larger tokens from one
// counter, until its gateway goes; after the restart, each writer's keys
// must hold one request's data, at least as new as its last acknowledged
// one, and nothing newer than its last attempt, and the fence must cover
// every acknowledged token. ThreeKeyLoad runs such writers, one thread
// each, and checks what survived.
//
// Thread safety: a WriterProgress is written by its writer's thread only
// and read after that thread is joined; a ThreeKeyLoad's methods are for
// the test's thread, its on_ack callback runs on the writers' threads.
#ifndef FENCEGATE_TESTS_INTEGRATION_THREE_KEY_WRITERS_H_
#define FENCEGATE_TESTS_INTEGRATION_THREE_KEY_WRITERS_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/integration/gateway_process_fixture.h"
#include "tests/testing/status_matchers.h"

namespace fencegate {

// What one writer sent and what it was told.
struct WriterProgress {
  int64_t attempted = -1;  // the last request sent
  int64_t acked = -1;      // the last request acknowledged
  uint64_t acked_version = 0;
  uint64_t max_acked_token = 0;
};

// Writer `writer`'s three keys.
inline std::vector<std::string> WriterKeys(int writer) {
  return {absl::StrCat("w", writer, "/a"), absl::StrCat("w", writer, "/b"),
          absl::StrCat("w", writer, "/c")};
}

// Sends writer `writer`'s request `seq` (its three keys, each "writer:seq")
// on `resource` with `token`, and records it in `mine`: true when it was
// acknowledged, false when refused as stale (ABORTED: the load goes on);
// the gateway's error otherwise (it is gone, or failed).
inline absl::StatusOr<bool> WriteThreeKeys(GatewayProcessTest::Stub& stub,
                                           const std::string& resource, int writer,
                                           int64_t seq, uint64_t token,
                                           WriterProgress& mine) {
  const std::string value = absl::StrCat(writer, ":", seq);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const std::string& key : WriterKeys(writer)) pairs.emplace_back(key, value);
  mine.attempted = seq;
  auto result = GatewayProcessTest::MultiPut(stub, resource, token, pairs);
  if (result.ok()) {
    mine.acked = seq;
    mine.acked_version = result->versions(0);
    mine.max_acked_token = std::max(mine.max_acked_token, token);
    return true;
  }
  if (result.status().code() == absl::StatusCode::kAborted) return false;
  return result.status();
}

// Through `reader`, after the restart: writer `writer`'s keys on `resource`
// come from one request (nothing half-applied), and, if anything was
// acknowledged, from one at least as new as the last acknowledged one and
// no newer than the last one sent.
inline void ExpectWriterSurvived(GatewayProcessTest::Stub& reader,
                                 const std::string& resource, int writer,
                                 const WriterProgress& mine) {
  std::vector<v1::ReadResponse> reads;
  for (const std::string& key : WriterKeys(writer)) {
    ASSERT_OK_AND_ASSIGN(auto read, GatewayProcessTest::Read(reader, resource, key));
    reads.push_back(read);
  }
  for (const v1::ReadResponse& read : reads) {
    EXPECT_EQ(read.found(), reads[0].found());
    EXPECT_EQ(read.value(), reads[0].value());
    EXPECT_EQ(read.version(), reads[0].version());
  }
  if (mine.acked < 0) return;  // nothing acknowledged, nothing promised
  ASSERT_TRUE(reads[0].found()) << "acknowledged write " << mine.acked << " is lost";
  std::vector<std::string> parts = absl::StrSplit(reads[0].value(), ':');
  int64_t seq = -1;
  ASSERT_EQ(parts.size(), 2u);
  ASSERT_TRUE(absl::SimpleAtoi(parts[1], &seq));
  EXPECT_GE(seq, mine.acked) << "an acknowledged write was lost";
  EXPECT_LE(seq, mine.attempted);
  if (seq == mine.acked) {
    EXPECT_EQ(reads[0].version(), mine.acked_version);
  }
}

// Writers 0 to n-1 on `resource`, writer i through stubs[i], each on a
// thread of its own and with tokens from one counter, from construction
// until its gateway fails it (or Stop()); on_ack(i) runs on writer i's
// thread after each of its acknowledged writes. The stubs' connections are
// made before the load starts: one made by a writer that starts late could
// find its gateway already gone.
class ThreeKeyLoad {
 public:
  using Stub = GatewayProcessTest::Stub;

  ThreeKeyLoad(std::string resource, std::vector<std::unique_ptr<Stub>> stubs,
               std::function<void(int writer)> on_ack)
      : resource_(std::move(resource)),
        stubs_(std::move(stubs)),
        on_ack_(std::move(on_ack)),
        progress_(stubs_.size()),
        errors_(stubs_.size()) {
    for (size_t i = 0; i < stubs_.size(); ++i) {
      threads_.emplace_back([this, i] { RunWriter(static_cast<int>(i)); });
    }
  }
  ~ThreeKeyLoad() { Stop(); }

  ThreeKeyLoad(const ThreeKeyLoad&) = delete;
  ThreeKeyLoad& operator=(const ThreeKeyLoad&) = delete;

  // Waits for every writer to stop by itself, when its gateway fails it.
  void Join() {
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

  // Tells the writers to stop after the request each has in flight, and
  // waits for them.
  void Stop() {
    stop_ = true;
    Join();
  }

  // After Join() or Stop(): why writer `writer` stopped (its gateway's
  // error), or "" when it was told to.
  const std::string& error(int writer) const { return errors_[writer]; }

  // After Join() or Stop(): how many writers their gateway stopped.
  int stopped_by_error() const {
    return static_cast<int>(std::count_if(
        errors_.begin(), errors_.end(), [](const std::string& e) { return !e.empty(); }));
  }

  // After Join() or Stop() and the restart, through `reader`: each writer's
  // keys survived (ExpectWriterSurvived), and the resource's fence covers
  // every acknowledged token.
  void ExpectSurvived(Stub& reader) const {
    uint64_t max_acked_token = 0;
    for (size_t i = 0; i < progress_.size(); ++i) {
      SCOPED_TRACE(absl::StrCat("writer ", i));
      max_acked_token = std::max(max_acked_token, progress_[i].max_acked_token);
      ExpectWriterSurvived(reader, resource_, static_cast<int>(i), progress_[i]);
    }
    ASSERT_OK_AND_ASSIGN(auto described, GatewayProcessTest::Describe(reader, resource_));
    EXPECT_GE(described.max_token(), max_acked_token);
  }

 private:
  void RunWriter(int i) {
    for (int64_t seq = 0; seq < 1000000 && !stop_.load(); ++seq) {
      absl::StatusOr<bool> acked = WriteThreeKeys(*stubs_[i], resource_, i, seq,
                                                  next_token_.fetch_add(1), progress_[i]);
      if (!acked.ok()) {
        errors_[i] = acked.status().ToString();  // the gateway is gone, or failed
        return;
      }
      if (*acked) on_ack_(i);
    }
  }

  const std::string resource_;
  const std::vector<std::unique_ptr<Stub>> stubs_;
  const std::function<void(int writer)> on_ack_;
  std::atomic<uint64_t> next_token_{1};
  std::atomic<bool> stop_{false};
  // Element i is written by writer i's thread only, and read after it ends.
  std::vector<WriterProgress> progress_;
  std::vector<std::string> errors_;
  std::vector<std::thread> threads_;  // last: the writers use the above
};

}  // namespace fencegate

#endif  // FENCEGATE_TESTS_INTEGRATION_THREE_KEY_WRITERS_H_
