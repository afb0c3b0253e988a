// The history files: what a worker writes parses back into the ops it
// recorded; a call cut off by a kill stays unknown and never completes.
#include "tests/torture/history_log.h"

#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/temp_dir.h"

namespace fencegate::torture {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(HistoryLogTest, WorkerOpsRoundTrip) {
  testing::TempDir dir;
  const std::string path = dir.File("worker-w1.history");
  {
    auto writer = HistoryWriter::Open(path, "w1");
    ASSERT_TRUE(writer.ok()) << writer.status();
    HistoryWriter& w = **writer;
    uint64_t acquire = w.Invoke("acquire", {{"resource", "r0"}});
    w.Complete(acquire, "acquire", Outcome::kOk, {{"token", "7"}});
    uint64_t read = w.Invoke("read", {{"resource", "r0"}, {"token", "7"}});
    w.Complete(read, "read", Outcome::kOk, {{"value", "3"}, {"max_token", "7"}});
    w.Note("stopped", {{"why", "asked\tto"}});  // separators in values are replaced
    uint64_t write = w.Invoke("write", {{"resource", "r0"}, {"token", "7"},
                                        {"value", "4"}, {"log_id", "w1-1"}});
    w.Complete(write, "write", Outcome::kRefused, {{"max_token", "9"}});
    w.Invoke("write", {{"resource", "r0"}, {"token", "7"}, {"value", "4"},
                       {"log_id", "w1-2"}});  // killed mid-call
  }
  History history;
  ASSERT_TRUE(ParseWorkerHistory(ReadFile(path) + "123\tw1\t9\tinv", &history).ok());

  ASSERT_EQ(history.acquires.size(), 1u);
  EXPECT_EQ(history.acquires[0].process, "w1");
  EXPECT_EQ(history.acquires[0].token, 7u);
  EXPECT_EQ(history.acquires[0].outcome, Outcome::kOk);
  EXPECT_LE(history.acquires[0].invoke_ns, history.acquires[0].complete_ns);
  ASSERT_EQ(history.reads.size(), 1u);
  EXPECT_EQ(history.reads[0].value, 3u);
  ASSERT_EQ(history.writes.size(), 2u);
  EXPECT_EQ(history.writes[0].log_id, "w1-1");
  EXPECT_EQ(history.writes[0].outcome, Outcome::kRefused);
  EXPECT_EQ(history.writes[0].max_token, 9u);
  EXPECT_EQ(history.writes[1].outcome, Outcome::kUnknown);
  EXPECT_EQ(history.writes[1].complete_ns, kNever);
}

TEST(HistoryLogTest, LeaseKindsParse) {
  History history;
  ASSERT_TRUE(ParseWorkerHistory(
                  "1\tw1\t1\tinvoke\tacquire\tresource=sem\tholder=w1-2\tmode=permit"
                  "\tpermits=3\n"
                  "2\tw1\t1\tok\tacquire\ttoken=8\n"
                  "3\tw1\t2\tinvoke\tread\tresource=r0\ttoken=9\tmode=shared\n"
                  "4\tw1\t2\tok\tread\tvalue=2\tmax_token=7\n",
                  &history)
                  .ok());
  ASSERT_EQ(history.acquires.size(), 1u);
  EXPECT_EQ(history.acquires[0].holder, "w1-2");
  EXPECT_EQ(history.acquires[0].mode, LeaseMode::kPermit);
  EXPECT_EQ(history.acquires[0].permits, 3u);
  ASSERT_EQ(history.reads.size(), 1u);
  EXPECT_EQ(history.reads[0].mode, LeaseMode::kShared);
}

TEST(HistoryLogTest, ElectionOpsAndObservedChangesParse) {
  testing::TempDir dir;
  const std::string path = dir.File("worker-w2.history");
  {
    auto writer = HistoryWriter::Open(path, "w2");
    ASSERT_TRUE(writer.ok()) << writer.status();
    HistoryWriter& w = **writer;
    uint64_t campaign =
        w.Invoke("acquire",
                 {{"resource", "election"}, {"holder", "w2-4"}, {"campaign", "w2-4/0"}});
    w.Complete(campaign, "acquire", Outcome::kOk, {{"token", "12"}});
    uint64_t proclaim = w.Invoke(
        "proclaim", {{"election", "election"}, {"term", "12"}, {"value", "w2-4/1"}});
    w.Complete(proclaim, "proclaim", Outcome::kOk, {{"seq", "1"}});
    w.Seen("election", {{"leader", "1"},
                        {"term", "12"},
                        {"seq", "1"},
                        {"value", "w2-4/1"},
                        {"candidate", "w2-4"}});
    w.Seen("election", {{"leader", "0"}, {"term", "12"}, {"seq", "2"}});
  }
  History history;
  ASSERT_TRUE(ParseWorkerHistory(ReadFile(path), &history).ok());

  ASSERT_EQ(history.acquires.size(), 1u);
  EXPECT_TRUE(history.acquires[0].campaign);
  EXPECT_EQ(history.acquires[0].value, "w2-4/0");
  EXPECT_EQ(history.acquires[0].token, 12u);
  ASSERT_EQ(history.proclaims.size(), 1u);
  EXPECT_EQ(history.proclaims[0].term, 12u);
  EXPECT_EQ(history.proclaims[0].value, "w2-4/1");
  EXPECT_EQ(history.proclaims[0].seq, 1u);
  EXPECT_EQ(history.proclaims[0].outcome, Outcome::kOk);
  ASSERT_EQ(history.observed.size(), 2u);
  EXPECT_EQ(history.observed[0].process, "w2");
  EXPECT_TRUE(history.observed[0].leader);
  EXPECT_EQ(history.observed[0].candidate, "w2-4");
  EXPECT_EQ(history.observed[1].seq, 2u);
  EXPECT_FALSE(history.observed[1].leader);
}

TEST(HistoryLogTest, MalformedLineIsAnError) {
  History history;
  absl::Status status = ParseWorkerHistory("12\tw1\tx\tinvoke\tacquire\n", &history);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("malformed"));
}

TEST(HistoryLogTest, LeaseHistoryAndFinalStateParse) {
  History history;
  ASSERT_TRUE(ParseLeaseHistory("10\tload\t\t0\t0\n20\tgrant\tr0\t3\t1500\n30\tgr",
                                &history)
                  .ok());
  ASSERT_EQ(history.lease_events.size(), 2u);
  EXPECT_EQ(history.lease_events[1].kind, LeaseEvent::Kind::kGrant);
  EXPECT_EQ(history.lease_events[1].resource, "r0");
  EXPECT_EQ(history.lease_events[1].ttl_ms, 1500);

  history = History();
  ASSERT_TRUE(ParseLeaseHistory("10\tgrant-shared\tr0\t4\t900\tw1-3\n"
                                "20\trestore-permit\tsem\t5\t800\tw2-1\n"
                                "30\tgrant\tr1\t6\t700\tw3-9\n",
                                &history)
                  .ok());
  ASSERT_EQ(history.lease_events.size(), 3u);
  EXPECT_EQ(history.lease_events[0].kind, LeaseEvent::Kind::kGrant);
  EXPECT_EQ(history.lease_events[0].mode, LeaseMode::kShared);
  EXPECT_EQ(history.lease_events[0].holder, "w1-3");
  EXPECT_EQ(history.lease_events[1].kind, LeaseEvent::Kind::kRestore);
  EXPECT_EQ(history.lease_events[1].mode, LeaseMode::kPermit);
  EXPECT_EQ(history.lease_events[2].mode, LeaseMode::kExclusive);
  EXPECT_EQ(ParseLeaseHistory("10\tgrant-sideways\tr0\t4\t900\tw1\n", &history).code(),
            absl::StatusCode::kInvalidArgument);

  std::map<std::string, FinalState> final_state;
  final_state["r0"] = FinalState{99, 12, 2, {{"w1-1", 1}, {"w2-4", 2}}};
  ASSERT_TRUE(ParseFinalState(FormatFinalState(final_state), &history).ok());
  EXPECT_EQ(history.final_state["r0"].fence, 12u);
  EXPECT_EQ(history.final_state["r0"].log, final_state["r0"].log);
}

}  // namespace
}  // namespace fencegate::torture
