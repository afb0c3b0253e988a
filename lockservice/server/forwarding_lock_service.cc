#include "lockservice/server/forwarding_lock_service.h"

#include <atomic>
#include <functional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/server/tls.h"
#include "grpcpp/client_context.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"

namespace fencegate::lockservice {

namespace v1 = ::fencegate::v1;

namespace {

// The status a forwarded call ends with: the leader's, except that a call
// abandoned because the leader changed, or that could not reach the leader,
// says so (UNAVAILABLE: retry).
grpc::Status Forwarded(grpc::Status status, bool abandoned, const std::string& target) {
  if (abandoned && !status.ok()) {
    return grpc::Status(
        grpc::StatusCode::UNAVAILABLE,
        absl::StrCat("the leader changed while this call was forwarded to ", target,
                     "; retry with the same request_id"));
  }
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE,
                        absl::StrCat("forwarding to the leader at ", target,
                                     " failed: ", status.error_message(), "; retry"),
                        status.error_details());
  }
  return status;
}

// Marks the leader-bound call as forwarded, with its caller's certificate
// subject if it has one.
void MarkForwarded(const grpc::CallbackServerContext& from, grpc::ClientContext& to) {
  to.AddMetadata(kForwardedMetadata, "1");
  const std::string subject = PeerSubject(from);
  if (!subject.empty()) to.AddMetadata(kForwardedSubjectMetadata, subject);
}

}  // namespace

struct ForwardingLockService::Shared {
  std::string target;
  std::unique_ptr<v1::LockService::Stub> stub;
  std::unique_ptr<grpc::GenericStub> raw;  // for Session, on raw bytes
  absl::Mutex mu;
  absl::flat_hash_set<ForwardedCall*> calls ABSL_GUARDED_BY(mu);
  bool abandoned ABSL_GUARDED_BY(mu) = false;

  // Registers `call`; abandons it at once if the service already was.
  void Add(ForwardedCall* call);
  void Remove(ForwardedCall* call);
};

// What every forwarded call has: the leader-bound call's context, which
// carries the caller's deadline, cancellation and identity, and a place in
// the service's registry of calls in flight (from construction until its
// reactor's OnDone removes it), so Abandon() can end it.
class ForwardingLockService::ForwardedCall {
 public:
  ForwardedCall(grpc::CallbackServerContext* server_context,
                std::shared_ptr<Shared> shared)
      : client_context_(grpc::ClientContext::FromCallbackServerContext(*server_context)),
        shared_(std::move(shared)) {
    MarkForwarded(*server_context, *client_context_);
    shared_->Add(this);
  }
  ForwardedCall(const ForwardedCall&) = delete;
  ForwardedCall& operator=(const ForwardedCall&) = delete;

  // Ends the call with UNAVAILABLE. Called with Shared::mu held, which keeps
  // the call from being deleted meanwhile.
  void Abandon() {
    abandoned_.store(true);
    client_context_->TryCancel();
  }

 protected:
  ~ForwardedCall() = default;

  // The status the caller gets for the leader's `status` (Forwarded()).
  grpc::Status Outcome(grpc::Status status) const {
    return Forwarded(std::move(status), abandoned_.load(), shared_->target);
  }

  const std::unique_ptr<grpc::ClientContext> client_context_;
  const std::shared_ptr<Shared> shared_;

 private:
  std::atomic<bool> abandoned_{false};
};

void ForwardingLockService::Shared::Add(ForwardedCall* call) {
  absl::MutexLock lock(&mu);
  calls.insert(call);
  if (abandoned) call->Abandon();
}

void ForwardingLockService::Shared::Remove(ForwardedCall* call) {
  absl::MutexLock lock(&mu);
  calls.erase(call);
}

// One forwarded unary call: the server side's reactor, which owns the
// client side's context. It is deleted in OnDone, which gRPC runs only after
// Finish(), which runs only after the client call has completed.
class ForwardingLockService::CallReactor final : public grpc::ServerUnaryReactor,
                                                 public ForwardedCall {
 public:
  CallReactor(grpc::CallbackServerContext* server_context, std::shared_ptr<Shared> shared)
      : ForwardedCall(server_context, std::move(shared)) {}

  grpc::ClientContext* client_context() { return client_context_.get(); }
  class v1::LockService::Stub::async* async() {
    return shared_->stub->async();
  }

  // The client call's completion.
  std::function<void(grpc::Status)> Done() {
    return [this](grpc::Status status) { Finish(Outcome(std::move(status))); };
  }

  void OnDone() override {
    shared_->Remove(this);
    delete this;
  }
};

// One forwarded server stream (WatchFences, Observe): reads a message from
// the leader, writes it to the caller, and only then reads the next, so
// the leader's own flow control (and its cut-off of slow followers) sees
// the real caller. The server side's OnDone comes last (Finish() is called
// only from the client side's OnDone), so the reactor deletes itself there.
template <typename Request, typename Response>
class ForwardingLockService::StreamReactor final
    : public grpc::ServerWriteReactor<Response>,
      public grpc::ClientReadReactor<Response>,
      public ForwardedCall {
 public:
  StreamReactor(grpc::CallbackServerContext* server_context,
                std::shared_ptr<Shared> shared)
      : ForwardedCall(server_context, std::move(shared)) {}

  void Start(const Request* request, StreamFn<Request, Response> start) {
    (shared_->stub->async()->*start)(client_context_.get(), request, this);
    this->StartRead(&message_);
    // Each next read starts from OnWriteDone, a reaction of the server side:
    // the hold keeps the client side from finishing meanwhile.
    this->AddHold();
    this->StartCall();
  }

  // Leader -> this instance.
  void OnReadDone(bool ok) override {
    if (ok) {
      this->StartWrite(&message_);
    } else {
      this->RemoveHold();  // no more reads: the client side's OnDone follows
    }
  }
  void OnDone(const grpc::Status& status) override { this->Finish(Outcome(status)); }

  // This instance -> the caller.
  void OnWriteDone(bool ok) override {
    if (ok) {
      this->StartRead(&message_);
    } else {
      client_context_->TryCancel();
      this->RemoveHold();
    }
  }
  void OnCancel() override { client_context_->TryCancel(); }
  void OnDone() override {
    shared_->Remove(this);
    delete this;
  }

 private:
  Response message_;
};

// One relayed Session stream: the caller's messages go to the leader and
// the leader's to the caller, each one at a time and as raw bytes (the next
// is read only once the last was written), so both ends' flow control and
// the leader's in-flight bound see the real client. Two reactors, since the
// server and client sides' reactions share names: this object is the
// server side (the caller's stream) and owns the client side (Upstream).
// The stream ends with the leader's status, from the client side's OnDone;
// the server side's OnDone comes after that and deletes the relay.
//
// The client side holds two holds, so its OnDone waits while this relay may
// still start its operations from the server side's reactions: the write
// hold (the caller's messages) goes once the caller half-closed or a write
// to the leader failed or the leader's stream is over; the read hold (the
// leader's messages) once a read from the leader failed or a write to the
// caller did.
class ForwardingLockService::SessionRelay final : public RawStreamReactor,
                                                  public ForwardedCall {
 public:
  SessionRelay(grpc::CallbackServerContext* server_context,
               std::shared_ptr<Shared> shared)
      : ForwardedCall(server_context, std::move(shared)) {}

  void Start() {
    shared_->raw->PrepareBidiStreamingCall(client_context_.get(),
                                           "/fencegate.v1.LockService/Session",
                                           grpc::StubOptions(), &upstream_);
    upstream_.AddMultipleHolds(2);  // the write hold and the read hold
    upstream_.StartRead(&down_);
    upstream_.StartCall();
    StartRead(&up_);
  }

  // The caller -> this instance.
  void OnReadDone(bool ok) override {
    bool write = false;
    bool release = false;
    {
      absl::MutexLock lock(&mu_);
      if (ok && !writes_over_) {
        upstream_writing_ = true;
        write = true;
      } else if (!ok) {
        release = EndWritesLocked();
      }
    }
    if (write) {
      upstream_.StartWrite(&up_);
    } else if (release) {
      upstream_.StartWritesDone();  // the caller half-closed, or went away
      upstream_.RemoveHold();
    }
  }
  // This instance -> the caller.
  void OnWriteDone(bool ok) override {
    if (ok) {
      upstream_.StartRead(&down_);
      return;
    }
    client_context_->TryCancel();
    upstream_.RemoveHold();  // the read hold: no more reads
  }
  void OnCancel() override { client_context_->TryCancel(); }
  void OnDone() override {
    shared_->Remove(this);
    delete this;
  }

 private:
  class Upstream final
      : public grpc::ClientBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
   public:
    explicit Upstream(SessionRelay* relay) : relay_(relay) {}
    // The leader -> this instance.
    void OnReadDone(bool ok) override {
      if (ok) {
        relay_->StartWrite(&relay_->down_);
        return;
      }
      // The leader's stream is over: its status follows in OnDone.
      bool release_writes;
      {
        absl::MutexLock lock(&relay_->mu_);
        relay_->upstream_over_ = true;
        release_writes = !relay_->upstream_writing_ && relay_->EndWritesLocked();
      }
      if (release_writes) RemoveHold();
      RemoveHold();  // the read hold
    }
    // This instance -> the leader.
    void OnWriteDone(bool ok) override {
      bool read = false;
      bool release = false;
      {
        absl::MutexLock lock(&relay_->mu_);
        relay_->upstream_writing_ = false;
        if (ok && !relay_->upstream_over_) {
          read = true;
        } else {
          release = relay_->EndWritesLocked();
        }
      }
      if (read) relay_->StartRead(&relay_->up_);
      if (release) RemoveHold();
    }
    void OnDone(const grpc::Status& status) override {
      // Last: the server side's OnDone, which deletes the relay, follows.
      relay_->Finish(relay_->Outcome(status));
    }

   private:
    SessionRelay* const relay_;
  };

  // Whether the write hold is still to be released (once).
  bool EndWritesLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !std::exchange(writes_over_, true);
  }

  Upstream upstream_{this};
  grpc::ByteBuffer up_;    // the caller's message being relayed
  grpc::ByteBuffer down_;  // the leader's message being relayed
  absl::Mutex mu_;
  bool upstream_writing_ ABSL_GUARDED_BY(mu_) = false;
  bool upstream_over_ ABSL_GUARDED_BY(mu_) = false;  // no more from the leader
  bool writes_over_ ABSL_GUARDED_BY(mu_) = false;    // the write hold is gone
};

ForwardingLockService::ForwardingLockService(std::shared_ptr<grpc::Channel> channel,
                                             std::string target)
    : target_(std::move(target)), shared_(std::make_shared<Shared>()) {
  shared_->target = target_;
  shared_->stub = v1::LockService::NewStub(channel);
  shared_->raw = std::make_unique<grpc::GenericStub>(std::move(channel));
}

ForwardingLockService::~ForwardingLockService() = default;

void ForwardingLockService::Abandon() {
  absl::MutexLock lock(&shared_->mu);
  shared_->abandoned = true;
  for (ForwardedCall* call : shared_->calls) call->Abandon();
}

template <typename Request, typename Response>
grpc::ServerUnaryReactor* ForwardingLockService::ForwardUnary(
    grpc::CallbackServerContext* context, const Request* request, Response* response,
    UnaryFn<Request, Response> method) {
  auto* call = new CallReactor(context, shared_);
  (call->async()->*method)(call->client_context(), request, response, call->Done());
  return call;
}

template <typename Request, typename Response>
grpc::ServerWriteReactor<Response>* ForwardingLockService::ForwardStream(
    grpc::CallbackServerContext* context, const Request* request,
    StreamFn<Request, Response> method) {
  auto* stream = new StreamReactor<Request, Response>(context, shared_);
  stream->Start(request, method);
  return stream;
}

// Every unary method and server stream, forwarded as the stub's own method
// of that name (lock_service_base.h).
#define FENCEGATE_FORWARD_UNARY_(Method, Request, Response)                 \
  grpc::ServerUnaryReactor* ForwardingLockService::Method(                  \
      grpc::CallbackServerContext* context, const v1::Request* request,     \
      v1::Response* response) {                                             \
    return ForwardUnary<v1::Request, v1::Response>(                         \
        context, request, response, &v1::LockService::Stub::async::Method); \
  }
#define FENCEGATE_FORWARD_STREAM_(Method, Request, Response)              \
  grpc::ServerWriteReactor<v1::Response>* ForwardingLockService::Method(  \
      grpc::CallbackServerContext* context, const v1::Request* request) { \
    return ForwardStream<v1::Request, v1::Response>(                      \
        context, request, &v1::LockService::Stub::async::Method);         \
  }
FENCEGATE_LOCK_SERVICE_UNARY_METHODS(FENCEGATE_FORWARD_UNARY_)
FENCEGATE_LOCK_SERVICE_WRITE_METHODS(FENCEGATE_FORWARD_STREAM_)
#undef FENCEGATE_FORWARD_UNARY_
#undef FENCEGATE_FORWARD_STREAM_

RawStreamReactor* ForwardingLockService::Session(grpc::CallbackServerContext* context) {
  auto* relay = new SessionRelay(context, shared_);
  relay->Start();
  return relay;
}

}  // namespace fencegate::lockservice
