// How many streams each server holds open at once, on the real binaries:
// --max_sessions (the Session streams of both servers) and
// --max_fence_watchers (the lock service's WatchFences streams). With a
// limit of 2, a third stream ends at once with RESOURCE_EXHAUSTED naming the
// flag and the limit, and nothing sent on it is applied; the two open
// streams keep working; once one of them ends, a new stream is admitted, and
// the one after it is refused again. No sleeps: reads block under the
// streams' deadlines, and the wait for the freed place polls under a
// deadline (the count goes down when the server is done with the stream,
// a moment after its client saw the end).
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "fencegate/v1/lock.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "tests/testing/lock_session_calls.h"
#include "tests/testing/own_channel.h"
#include "harness/poll.h"
#include "harness/server_process.h"
#include "tests/testing/status_matchers.h"
#include "harness/temp_dir.h"

namespace fencegate {
namespace {

namespace v1 = ::fencegate::v1;
using ::fencegate::testing::IsOk;
using ::fencegate::testing::ServerProcess;
using ::testing::HasSubstr;

constexpr char kResource[] = "sent-on-a-refused-stream";

// What a Session test needs of one server's stream, beyond its types: a
// call that changes something if applied, and one that reads whether it
// was (the answer to either proves the stream was admitted).
struct LockSessions {
  using Service = v1::LockService;
  using Request = v1::LockSessionRequest;
  using Response = v1::LockSessionResponse;
  static constexpr const char* kBinary = FENCEGATE_LOCKSERVICE_BIN;

  static Request Change() {
    Request request;
    *request.add_calls() =
        testing::AcquireCall(1, kResource, "refused", absl::Seconds(60));
    return request;
  }
  static Request Look() {
    Request request;
    *request.add_calls() = testing::DescribeCall(2, kResource);
    return request;
  }
  // Whether `response`, Look()'s answer, shows Change() applied.
  static bool ShowsChange(const Response& response) {
    return response.results(0).describe().held();
  }
};

struct GatewaySessions {
  using Service = v1::Gateway;
  using Request = v1::GatewaySessionRequest;
  using Response = v1::GatewaySessionResponse;
  static constexpr const char* kBinary = FENCEGATE_GATEWAY_BIN;

  static Request Change() {
    Request request;
    v1::GatewayCall* call = request.add_calls();
    call->set_request_id(1);
    call->mutable_write()->set_resource(kResource);
    call->mutable_write()->set_token(1);
    call->mutable_write()->mutable_mutation()->set_key("k");
    call->mutable_write()->mutable_mutation()->set_value("v");
    return request;
  }
  static Request Look() {
    Request request;
    v1::GatewayCall* call = request.add_calls();
    call->set_request_id(2);
    call->mutable_read()->set_resource(kResource);
    call->mutable_read()->set_key("k");
    return request;
  }
  static bool ShowsChange(const Response& response) {
    return response.results(0).read().found();
  }
};

// One stream and the context it lives in.
template <typename Kind>
struct BoundedStream {
  grpc::Status Finish() { return stream->Finish(); }

  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<
      grpc::ClientReaderWriter<typename Kind::Request, typename Kind::Response>>
      stream;
};

template <typename Kind>
BoundedStream<Kind> OpenSession(typename Kind::Service::Stub& stub) {
  BoundedStream<Kind> s;
  s.context = std::make_unique<grpc::ClientContext>();
  s.context->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  s.stream = stub.Session(s.context.get());
  return s;
}

// Sends `request` and reads its answer into *answer; false if the stream
// ended instead.
template <typename Kind>
bool Answers(BoundedStream<Kind>& s, const typename Kind::Request& request,
             typename Kind::Response* answer) {
  s.stream->Write(request);  // a refused stream may have ended already
  return s.stream->Read(answer) && answer->results_size() == 1;
}

template <typename Kind>
bool Admitted(BoundedStream<Kind>& s) {
  typename Kind::Response answer;
  return Answers(s, Kind::Look(), &answer);
}

void ExpectRefusal(const grpc::Status& status, const std::string& limit) {
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr(limit));
}

// A stream past the limit, which `admitted` says was not admitted: it
// ended, refused naming `limit`. (Admitted, it is cancelled, so that the
// test fails at once.)
template <typename Stream>
void ExpectRefused(Stream& s, bool admitted, const std::string& limit) {
  if (admitted) {
    ADD_FAILURE() << "a stream past " << limit << " was admitted";
    s.context->TryCancel();
  }
  ExpectRefusal(s.Finish(), limit);
}

// Opens streams until one is admitted, each refused one ending with the
// refusal naming `limit`: polled under a deadline, as the count goes down
// a moment after the client of the stream that ended saw its end.
template <typename Stream>
Stream AwaitAdmission(absl::FunctionRef<Stream()> open,
                      absl::FunctionRef<bool(Stream&)> admitted,
                      const std::string& limit) {
  Stream kept;
  EXPECT_THAT(testing::PollUntil(
                  [&] {
                    Stream s = open();
                    if (admitted(s)) {
                      kept = std::move(s);
                      return true;
                    }
                    ExpectRefusal(s.Finish(), limit);
                    return false;
                  },
                  absl::Seconds(30),
                  absl::StrCat("a stream admitted under ", limit, " after one ended")),
              IsOk());
  return kept;
}

template <typename Kind>
class SessionBoundTest : public ::testing::Test {
 protected:
  void StartServer() {
    auto server = ServerProcess::Start(
        Kind::kBinary, {"--db=" + dir_.File("server.db"), "--max_sessions=2"},
        dir_.path(), "server");
    ASSERT_THAT(server, IsOk());
    server_ = *std::move(server);
    auto channel = testing::OwnChannel(server_->address());
    ASSERT_THAT(channel, IsOk());
    stub_ = Kind::Service::NewStub(*channel);
  }

  void TearDown() override {
    if (HasFailure() && server_ != nullptr) std::cerr << server_->LogTail() << "\n";
  }

  testing::TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<typename Kind::Service::Stub> stub_;
};

using Kinds = ::testing::Types<LockSessions, GatewaySessions>;
TYPED_TEST_SUITE(SessionBoundTest, Kinds);

TYPED_TEST(SessionBoundTest, AStreamPastMaxSessionsIsRefusedUntilOneEnds) {
  using Kind = TypeParam;
  using Stream = BoundedStream<Kind>;
  ASSERT_NO_FATAL_FAILURE(this->StartServer());
  auto open = [&] { return OpenSession<Kind>(*this->stub_); };
  Stream first = open();
  ASSERT_TRUE(Admitted(first));
  Stream second = open();
  ASSERT_TRUE(Admitted(second));

  typename Kind::Response answer;
  Stream third = open();
  ExpectRefused(third, Answers(third, Kind::Change(), &answer), "--max_sessions=2");

  // The open streams still work, and nothing sent on the third was applied.
  ASSERT_TRUE(Answers(second, Kind::Look(), &answer));
  EXPECT_FALSE(Kind::ShowsChange(answer)) << answer.ShortDebugString();

  // The first ends: a new stream gets its place.
  first.stream->WritesDone();
  ASSERT_TRUE(first.Finish().ok());
  Stream admitted = AwaitAdmission<Stream>(open, Admitted<Kind>, "--max_sessions=2");
  ASSERT_NE(admitted.stream, nullptr);

  // Two are open again: the next is refused.
  Stream over = open();
  ExpectRefused(over, Admitted(over), "--max_sessions=2");

  for (Stream* s : {&second, &admitted}) {
    s->stream->WritesDone();
    EXPECT_TRUE(s->Finish().ok());
  }
}

// ------------------------------------------------------------ WatchFences

struct Watcher {
  grpc::Status Finish() { return reader->Finish(); }

  std::unique_ptr<grpc::ClientContext> context;
  std::unique_ptr<grpc::ClientReader<v1::WatchFencesResponse>> reader;
};

Watcher OpenWatcher(v1::LockService::Stub& stub) {
  Watcher w;
  w.context = std::make_unique<grpc::ClientContext>();
  w.context->set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  w.reader = stub.WatchFences(w.context.get(), v1::WatchFencesRequest());
  return w;
}

// An admitted watcher's first message says it caught up (nothing to
// replay); a refused one's stream ends.
bool CaughtUp(Watcher& w) {
  v1::WatchFencesResponse message;
  return w.reader->Read(&message) && message.caught_up();
}

TEST(FenceWatcherBoundTest, AWatcherPastMaxFenceWatchersIsRefusedUntilOneEnds) {
  testing::TempDir dir;
  auto server =
      ServerProcess::Start(FENCEGATE_LOCKSERVICE_BIN,
                           {"--db=" + dir.File("locks.db"), "--max_fence_watchers=2"},
                           dir.path(), "lockservice");
  ASSERT_THAT(server, IsOk());
  auto channel = testing::OwnChannel((*server)->address());
  ASSERT_THAT(channel, IsOk());
  std::unique_ptr<v1::LockService::Stub> stub = v1::LockService::NewStub(*channel);

  auto open = [&] { return OpenWatcher(*stub); };
  Watcher first = open();
  ASSERT_TRUE(CaughtUp(first));
  Watcher second = open();
  ASSERT_TRUE(CaughtUp(second));
  Watcher third = open();
  ExpectRefused(third, CaughtUp(third), "--max_fence_watchers=2");

  // The first goes away: a new watcher gets its place.
  first.context->TryCancel();
  EXPECT_EQ(first.Finish().error_code(), grpc::StatusCode::CANCELLED);
  Watcher admitted = AwaitAdmission<Watcher>(open, CaughtUp, "--max_fence_watchers=2");
  ASSERT_NE(admitted.reader, nullptr);

  // Two are open again: the next is refused.
  Watcher over = open();
  ExpectRefused(over, CaughtUp(over), "--max_fence_watchers=2");

  // The open watchers still follow the grants.
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  v1::AcquireRequest acquire;
  acquire.set_resource("followed");
  acquire.set_holder("h");
  acquire.set_ttl_ms(60000);
  v1::AcquireResponse granted;
  ASSERT_TRUE(stub->Acquire(&ctx, acquire, &granted).ok());
  for (Watcher* w : {&second, &admitted}) {
    v1::WatchFencesResponse message;
    ASSERT_TRUE(w->reader->Read(&message));
    ASSERT_EQ(message.events_size(), 1) << message.ShortDebugString();
    EXPECT_EQ(message.events(0).resource(), "followed");
    EXPECT_EQ(message.events(0).token(), granted.token());
    w->context->TryCancel();
    (void)w->reader->Finish();
  }
}

}  // namespace
}  // namespace fencegate
