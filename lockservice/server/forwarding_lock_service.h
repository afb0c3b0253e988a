// ForwardingLockService: fencegate.v1.LockService that answers each call by
// making the same call on another instance (the leader of a replicated
// deployment) and passing its answer back unchanged: status, error details
// and response. A standby serves through it (routing_lock_service.h), so
// clients may call any instance.
//
// Both sides use gRPC's callback API, so a forwarded call holds no thread,
// however long a parked Acquire waits or a stream runs. A WatchFences
// stream's messages are relayed one at a time (the leader's stream waits
// for the caller to take each one), and a Session stream's in both
// directions the same way, as raw bytes (the leader parses and answers
// them; its flow control and in-flight bound see the real client). The
// forwarded call carries the
// caller's deadline and is cancelled with it, and it carries the metadata
// key kForwardedMetadata, so the receiving instance never forwards it again
// (one hop at most: no loops while instances disagree about the leader),
// and the caller's certificate subject (kForwardedSubjectMetadata), so the
// leader records the caller, not this instance, as the holder.
//
// Abandon() ends every call still in flight with UNAVAILABLE ("the leader
// changed; retry"): a parked Acquire forwarded to a leader that has lost
// its term (paused, say) then retries at once, and with the same request_id
// finds its place at the new leader, instead of waiting out its deadline;
// a relayed Session stream ends, and its client reconnects.
//
// Thread safety: thread-safe. Lifetime: calls in flight keep what they use
// alive, so the object may be destroyed while they run.
#ifndef FENCEGATE_LOCKSERVICE_SERVER_FORWARDING_LOCK_SERVICE_H_
#define FENCEGATE_LOCKSERVICE_SERVER_FORWARDING_LOCK_SERVICE_H_

#include <functional>
#include <memory>
#include <string>

#include "fencegate/v1/lock.grpc.pb.h"
#include "grpcpp/channel.h"
#include "lockservice/server/lock_service_base.h"

namespace fencegate::lockservice {

// Present (any value) on a call that one instance forwarded to another.
inline constexpr char kForwardedMetadata[] = "fencegate-forwarded";
// On a forwarded call whose caller presented a client certificate (mutual
// TLS): its subject. The leader believes it only from a peer whose own
// certificate has the deployment's subject (lock_service.h).
inline constexpr char kForwardedSubjectMetadata[] = "fencegate-forwarded-subject-bin";

class ForwardingLockService final : public LockServiceBase {
 public:
  // Forwards to `target` ("host:port") over `channel`.
  ForwardingLockService(std::shared_ptr<grpc::Channel> channel, std::string target);
  ~ForwardingLockService() override;

  const std::string& target() const { return target_; }

  // Ends every call in flight with UNAVAILABLE (see the header).
  void Abandon();

  // Every method of the service (lock_service_base.h).
  FENCEGATE_LOCK_SERVICE_OVERRIDES

 private:
  class ForwardedCall;  // what the three below share
  class CallReactor;
  template <typename Request, typename Response>
  class StreamReactor;
  class SessionRelay;
  struct Shared;  // the stub and the calls in flight, shared with the calls

  // The stub's method that makes a unary call, or starts a server stream.
  template <typename Request, typename Response>
  using UnaryFn = void (fencegate::v1::LockService::Stub::async::*)(
      grpc::ClientContext*, const Request*, Response*, std::function<void(grpc::Status)>);
  template <typename Request, typename Response>
  using StreamFn = void (fencegate::v1::LockService::Stub::async::*)(
      grpc::ClientContext*, const Request*, grpc::ClientReadReactor<Response>*);

  // Forwards one unary call, or one server stream, as `method`.
  template <typename Request, typename Response>
  grpc::ServerUnaryReactor* ForwardUnary(grpc::CallbackServerContext* context,
                                         const Request* request, Response* response,
                                         UnaryFn<Request, Response> method);
  template <typename Request, typename Response>
  grpc::ServerWriteReactor<Response>* ForwardStream(grpc::CallbackServerContext* context,
                                                    const Request* request,
                                                    StreamFn<Request, Response> method);

  const std::string target_;
  const std::shared_ptr<Shared> shared_;
};

}  // namespace fencegate::lockservice

#endif  // FENCEGATE_LOCKSERVICE_SERVER_FORWARDING_LOCK_SERVICE_H_
