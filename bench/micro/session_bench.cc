// Microbenchmarks of the per-message cost of the gateway's Session stream
// beside the unary call, inside one process: a real gRPC server (the
// gateway's service and Session reactor, over loopback TCP) in front of a
// FencedStore whose storage accepts every op without touching a disk, and a
// gRPC client in the same process. So what is left is gRPC, the session,
// the store's queueing and group-commit thread, and the client:
//
//   BM_UnaryWrite              one Gateway.Write call at a time.
//   BM_StreamWrite/N           one message of N calls on a Session stream,
//                              then its N answers; N = 1 is the closed loop
//                              of one request per message.
//   BM_StreamPipelined/D       D calls in flight on one stream, a new
//                              message with as many calls as were answered
//                              after each message of answers (the loadgen's
//                              pipelined_write loop).
//   BM_EncodeAnswer, BM_ParseMessage/N  the session's own wire work per call.
//
// Items are calls. cpu_us_per_call is the CPU of the whole process (client
// and server threads together, from getrusage) per call: the figure to
// compare designs with. Run on a quiet machine; on a busy one, only
// back-to-back comparisons of the same build mean anything.
#include <sys/resource.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "common/server/commit_bursts.h"
#include "common/server/completion_queue_loop.h"
#include "fencegate/v1/gateway.grpc.pb.h"
#include "gateway/fenced_store.h"
#include "gateway/gateway_service.h"
#include "gateway/session_wire.h"
#include "grpcpp/grpcpp.h"

namespace fencegate::gateway {
namespace {

namespace v1 = ::fencegate::v1;

// Accepts every op; commits nothing anywhere.
class NullStorage final : public StorageBackend {
 public:
  absl::Status BeginBatch(absl::Span<const absl::string_view>) override {
    return absl::OkStatus();
  }
  absl::Status Apply(const FencedOp& op, OpResult* result) override {
    result->outcome = Outcome::kAccepted;
    result->max_token = op.token;
    result->version = ++revision_;
    return absl::OkStatus();
  }
  absl::Status CommitBatch() override { return absl::OkStatus(); }
  void AbortBatch() override {}
  absl::StatusOr<ReadResult> ReadCommitted(absl::string_view, absl::string_view) override {
    return ReadResult();
  }
  absl::StatusOr<ListPage> ListCommitted(absl::string_view, absl::string_view,
                                         size_t) override {
    return ListPage();
  }
  absl::StatusOr<ResourceStats> DescribeCommitted(absl::string_view) override {
    return ResourceStats();
  }

 private:
  uint64_t revision_ = 0;
};

// The gateway's gRPC service on NullStorage, on a free loopback port, and a
// client channel to it.
class InProcessGateway {
 public:
  InProcessGateway()
      : store_(&storage_, GatewayLimits()),
        service_(&store_, StreamLimits(), /*max_sessions=*/10000) {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(service_.service());
    std::unique_ptr<grpc::ServerCompletionQueue> cq = builder.AddCompletionQueue();
    server_ = builder.BuildAndStart();
    service_.Serve(cq.get());
    loop_ = std::make_unique<CompletionQueueLoop>(std::move(cq), &bursts_, "gw-loop");
    grpc::ChannelArguments args;
    args.SetInt("grpc.use_local_subchannel_pool", 1);
    channel_ = grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                         grpc::InsecureChannelCredentials(), args);
    stub_ = v1::Gateway::NewStub(channel_);
  }
  ~InProcessGateway() {
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    service_.CloseSessions(deadline);
    server_->Shutdown(absl::ToChronoTime(deadline));
    loop_->Stop();
  }

  v1::Gateway::Stub& stub() { return *stub_; }

 private:
  NullStorage storage_;
  FencedStore store_;
  GatewayServiceImpl service_;
  CommitBursts bursts_{[this] { return store_.Arriving(); }};
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CompletionQueueLoop> loop_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Gateway::Stub> stub_;
};

InProcessGateway& Gateway() {
  static auto* gateway = new InProcessGateway();  // one for every benchmark
  return *gateway;
}

double ProcessCpuSeconds() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Reports calls/s and the process' CPU per call.
class CallCounter {
 public:
  explicit CallCounter(benchmark::State& state) : state_(state), cpu_(ProcessCpuSeconds()) {}
  ~CallCounter() {
    state_.SetItemsProcessed(calls_);
    if (calls_ > 0) {
      state_.counters["cpu_us_per_call"] = (ProcessCpuSeconds() - cpu_) * 1e6 / calls_;
    }
  }
  void Add(int64_t n) { calls_ += n; }

 private:
  benchmark::State& state_;
  const double cpu_;
  int64_t calls_ = 0;
};

void FillWrite(v1::WriteRequest* write, uint64_t n) {
  write->set_resource(absl::StrCat("r", n % 1000));
  write->set_token(1);
  write->mutable_mutation()->set_key("k");
  write->mutable_mutation()->set_value(std::string(1024, 'v'));
}

void BM_UnaryWrite(benchmark::State& state) {
  v1::Gateway::Stub& stub = Gateway().stub();
  CallCounter calls(state);
  v1::WriteRequest request;
  v1::WriteResponse response;
  uint64_t n = 0;
  for (auto _ : state) {
    FillWrite(&request, n++);
    grpc::ClientContext ctx;
    grpc::Status status = stub.Write(&ctx, request, &response);
    if (!status.ok()) state.SkipWithError(status.error_message().c_str());
    calls.Add(1);
  }
}
BENCHMARK(BM_UnaryWrite)->UseRealTime();

void BM_StreamWrite(benchmark::State& state) {
  const int per_message = static_cast<int>(state.range(0));
  grpc::ClientContext ctx;
  auto stream = Gateway().stub().Session(&ctx);
  CallCounter calls(state);
  v1::GatewaySessionRequest message;
  for (int i = 0; i < per_message; ++i) message.add_calls();
  v1::GatewaySessionResponse answers;
  uint64_t id = 0;
  for (auto _ : state) {
    for (v1::GatewayCall& call : *message.mutable_calls()) {
      call.set_request_id(++id);
      FillWrite(call.mutable_write(), id);
    }
    if (!stream->Write(message)) state.SkipWithError("the stream ended");
    for (int answered = 0; answered < per_message; answered += answers.results_size()) {
      if (!stream->Read(&answers)) {
        state.SkipWithError("the stream ended");
        break;
      }
    }
    calls.Add(per_message);
  }
  stream->WritesDone();
  stream->Finish().IgnoreError();
}
BENCHMARK(BM_StreamWrite)->Arg(1)->Arg(8)->Arg(32)->UseRealTime();

void BM_StreamPipelined(benchmark::State& state) {
  const int depth = static_cast<int>(state.range(0));
  grpc::ClientContext ctx;
  auto stream = Gateway().stub().Session(&ctx);
  CallCounter calls(state);
  v1::GatewaySessionRequest message;
  v1::GatewaySessionResponse answers;
  uint64_t id = 0;
  int to_send = depth;
  int in_flight = 0;
  for (auto _ : state) {
    message.clear_calls();
    for (; to_send > 0; --to_send, ++in_flight) {
      v1::GatewayCall* call = message.add_calls();
      call->set_request_id(++id);
      FillWrite(call->mutable_write(), id);
    }
    if (message.calls_size() > 0 && !stream->Write(message)) {
      state.SkipWithError("the stream ended");
    }
    if (!stream->Read(&answers)) state.SkipWithError("the stream ended");
    to_send = answers.results_size();
    in_flight -= to_send;
    calls.Add(to_send);
  }
  for (; in_flight > 0; in_flight -= answers.results_size()) {
    if (!stream->Read(&answers)) break;
  }
  stream->WritesDone();
  stream->Finish().IgnoreError();
}
BENCHMARK(BM_StreamPipelined)->Arg(8)->Arg(32)->UseRealTime();

void BM_EncodeAnswer(benchmark::State& state) {
  std::string out;
  uint64_t id = 0;
  for (auto _ : state) {
    out.clear();
    AppendWriteResult(++id, CallKind::kWrite, 0, WriteResult{id, 7}, &out);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EncodeAnswer);

void BM_ParseMessage(benchmark::State& state) {
  v1::GatewaySessionRequest message;
  for (int i = 0; i < state.range(0); ++i) {
    v1::GatewayCall* call = message.add_calls();
    call->set_request_id(i);
    FillWrite(call->mutable_write(), i);
  }
  const std::string bytes = message.SerializeAsString();
  for (auto _ : state) {
    std::unique_ptr<IncomingMessage> parsed = IncomingMessage::Parse(bytes);
    benchmark::DoNotOptimize(parsed->calls().data());
    parsed.release()->Unref();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ParseMessage)->Arg(1)->Arg(32);

}  // namespace
}  // namespace fencegate::gateway
