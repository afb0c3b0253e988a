#include "lockservice/core/lock_session.h"

#include <utility>
#include <vector>

#include "lockservice/core/election_requests.h"
#include "lockservice/core/lock_call_authz.h"

namespace fencegate::lockservice {

namespace v1 = ::fencegate::v1;

LockSession* LockSession::Start(std::shared_ptr<LockManager> manager,
                                const TokenSigner* signer, absl::StatusOr<Caller> caller,
                                const StreamLimits& limits, StreamTransport* transport,
                                const authz::Authorizer* authorizer) {
  absl::Status refused = caller.status();
  LockManager* const raw = manager.get();
  auto* session = new LockSession(std::move(manager), signer,
                                  caller.ok() ? *std::move(caller) : Caller(), limits,
                                  transport, authorizer);
  if (refused.ok()) refused = raw->AddListener(session);
  if (!refused.ok()) session->Close(refused);  // then it reads nothing
  session->StartReading();
  return session;
}

std::shared_ptr<LockManager> LockSession::manager() {
  absl::MutexLock lock(&calls_mu_);
  return manager_;
}

void LockSession::AppendError(uint64_t request_id, const absl::Status& status,
                              std::string* out) {
  AppendLockError(request_id, status, out);
}

// ------------------------------------------------------------- calls

absl::Status LockSession::HandleMessage(absl::string_view bytes) {
  std::unique_ptr<LockIncomingMessage> message = LockIncomingMessage::Parse(bytes);
  if (!message->error().ok()) return message->error();
  if (absl::Status count = CheckCallCount(message->calls().size()); !count.ok())
    return count;
  std::shared_ptr<LockManager> manager = this->manager();
  if (manager == nullptr) {
    return absl::UnavailableError(
        "the stream is ending; nothing of this message was applied");
  }
  // The message's calls are decided before its batch starts (group_commit.h),
  // which is committed on this thread once the message is handled
  // (stream_session.h, "Run to completion"). The manager lives until then.
  CommitArrival arrival = manager->Arriving();
  for (const LockIncomingCall& in : message->calls()) Dispatch(*manager, in);
  AfterMessage([manager = std::move(manager), arrival = std::move(arrival)]() mutable {
    std::move(arrival).FlushHere();
    manager.reset();
  });
  return absl::OkStatus();
}

void LockSession::Dispatch(LockManager& manager, const LockIncomingCall& in) {
  if (!Admit(in.request_id, in.error)) return;
  const v1::LockCall& call = *in.call;
  if (absl::Status allowed = AuthorizeCall(authorizer_, caller_.subject, call);
      !allowed.ok()) {
    return Refuse(in.request_id, allowed);
  }
  switch (call.request_case()) {
    case v1::LockCall::kAcquire:
      return Acquire(manager, in.request_id, call.acquire());
    case v1::LockCall::kRenew:
      return Renew(manager, in.request_id, call.renew());
    case v1::LockCall::kRelease:
      return Release(manager, in.request_id, call.release());
    case v1::LockCall::kDescribe:
      return Describe(manager, in.request_id, call.describe());
    case v1::LockCall::kCampaign:
      return Campaign(manager, in.request_id, call.campaign());
    case v1::LockCall::kProclaim:
      return Proclaim(manager, in.request_id, call.proclaim());
    case v1::LockCall::kLeader:
      return Leader(manager, in.request_id, call.leader());
    case v1::LockCall::kResign:
      return Resign(manager, in.request_id, call.resign());
    case v1::LockCall::REQUEST_NOT_SET:  // refused by the parser
      break;
  }
}

void LockSession::Refuse(uint64_t request_id, const absl::Status& status) {
  Complete(request_id,
           [&](std::string* out) { AppendLockError(request_id, status, out); });
}

void LockSession::Acquire(LockManager& manager, uint64_t request_id,
                          const v1::AcquireRequest& request) {
  if (request.resources_size() > 0) return AcquireMany(manager, request_id, request);
  absl::StatusOr<AcquireArgs> args = AcquireArgsFor(request, signer_, caller_);
  if (!args.ok()) return Refuse(request_id, args.status());
  StartAcquire(manager, request_id, *std::move(args));
}

void LockSession::Campaign(LockManager& manager, uint64_t request_id,
                           const v1::CampaignRequest& request) {
  absl::StatusOr<AcquireArgs> args =
      CampaignArgsFor(request, signer_, manager.limits(), caller_);
  if (!args.ok()) return Refuse(request_id, args.status());
  StartAcquire(manager, request_id, *std::move(args));
}

void LockSession::StartAcquire(LockManager& manager, uint64_t request_id,
                               AcquireArgs args) {
  args.listener = this;
  std::string resource = args.resource;
  const LockManager::CallId id = manager.NewCallId();
  {
    absl::MutexLock lock(&calls_mu_);
    acquires_[request_id] = id;
  }
  Ref();  // the call's, until it is answered
  manager.Acquire(id, std::move(args),
                  [this, request_id, resource = std::move(resource),
                   signer = signer_](absl::StatusOr<AcquireResult> result) {
                    {
                      absl::MutexLock lock(&calls_mu_);
                      acquires_.erase(request_id);
                    }
                    Complete(request_id, [&](std::string* out) {
                      AppendAcquireResult(request_id, signer, resource, result, out);
                    });
                    Unref();
                  });
  // The stream may have been cancelled before the call was parked: then
  // OnCancelled() found nothing to cancel.
  if (cancelled()) manager.CancelAcquire(id);
}

void LockSession::AcquireMany(LockManager& manager, uint64_t request_id,
                              const v1::AcquireRequest& request) {
  absl::StatusOr<MultiAcquireArgs> args = MultiAcquireArgsFor(request, signer_, caller_);
  if (!args.ok()) return Refuse(request_id, args.status());
  args->listener = this;
  const LockManager::CallId id = manager.NewCallId();
  {
    absl::MutexLock lock(&calls_mu_);
    acquires_[request_id] = id;
  }
  Ref();  // the call's, until it is answered
  std::vector<std::string> resources = args->resources;
  manager.AcquireMany(id, *std::move(args),
                      [this, request_id, resources = std::move(resources),
                       signer = signer_](absl::StatusOr<MultiAcquireResult> result) {
                        {
                          absl::MutexLock lock(&calls_mu_);
                          acquires_.erase(request_id);
                        }
                        Complete(request_id, [&](std::string* out) {
                          AppendMultiAcquireResult(request_id, signer, resources, result,
                                                   out);
                        });
                        Unref();
                      });
  if (cancelled()) manager.CancelAcquire(id);
}

void LockSession::Renew(LockManager& manager, uint64_t request_id,
                        const v1::RenewRequest& request) {
  absl::StatusOr<RenewArgs> args =
      RenewArgsFor(request, signer_, manager.limits(), caller_);
  if (!args.ok()) return Refuse(request_id, args.status());
  args->listener = this;
  Ref();
  manager.Renew(*std::move(args), [this, request_id, resource = request.resource(),
                                   token = request.token(), mode = request.mode(),
                                   signer = signer_](absl::StatusOr<RenewResult> result) {
    Complete(request_id, [&](std::string* out) {
      AppendRenewResult(request_id, signer, resource, token, mode, result, out);
    });
    Unref();
  });
}

void LockSession::Release(LockManager& manager, uint64_t request_id,
                          const v1::ReleaseRequest& request) {
  absl::StatusOr<ReleaseArgs> args =
      ReleaseArgsFor(request, signer_, manager.limits(), caller_);
  if (!args.ok()) return Refuse(request_id, args.status());
  args->listener = this;
  Ref();
  manager.Release(
      *std::move(args), [this, request_id](absl::StatusOr<ReleaseResult> result) {
        Complete(request_id,
                 [&](std::string* out) { AppendReleaseResult(request_id, result, out); });
        Unref();
      });
}

void LockSession::Describe(LockManager& manager, uint64_t request_id,
                           const v1::DescribeRequest& request) {
  Ref();
  manager.Describe(request.resource(),
                   [this, request_id](absl::StatusOr<ResourceInfo> result) {
                     Complete(request_id, [&](std::string* out) {
                       AppendDescribeResult(request_id, result, out);
                     });
                     Unref();
                   });
}

void LockSession::Proclaim(LockManager& manager, uint64_t request_id,
                           const v1::ProclaimRequest& request) {
  absl::StatusOr<ProclaimArgs> args =
      ProclaimArgsFor(request, signer_, manager.limits(), caller_);
  if (!args.ok()) return Refuse(request_id, args.status());
  Ref();
  manager.Proclaim(*std::move(args),
                   [this, request_id](absl::StatusOr<ProclaimResult> result) {
                     Complete(request_id, [&](std::string* out) {
                       AppendProclaimResult(request_id, result, out);
                     });
                     Unref();
                   });
}

void LockSession::Leader(LockManager& manager, uint64_t request_id,
                         const v1::LeaderRequest& request) {
  Ref();
  manager.Leader(
      request.election(), [this, request_id](absl::StatusOr<ElectionChange> result) {
        Complete(request_id,
                 [&](std::string* out) { AppendLeaderResult(request_id, result, out); });
        Unref();
      });
}

void LockSession::Resign(LockManager& manager, uint64_t request_id,
                         const v1::ResignRequest& request) {
  absl::StatusOr<ReleaseArgs> args =
      ResignArgsFor(request, signer_, manager.limits(), caller_);
  if (!args.ok()) return Refuse(request_id, args.status());
  args->listener = this;  // its own end is answered, not pushed
  Ref();
  manager.Release(
      *std::move(args), [this, request_id](absl::StatusOr<ReleaseResult> result) {
        Complete(request_id,
                 [&](std::string* out) { AppendResignResult(request_id, result, out); });
        Unref();
      });
}

// ------------------------------------------------------- pushes and the end

void LockSession::OnLeaseLost(const LeaseLoss& loss) {
  Push([&](std::string* out) { AppendLeaseLost(loss, out); });
}

void LockSession::OnStopped(const absl::Status& why) { Close(why); }

void LockSession::OnCancelled() {
  std::shared_ptr<LockManager> manager;
  std::vector<LockManager::CallId> parked;
  {
    absl::MutexLock lock(&calls_mu_);
    manager = manager_;
    for (const auto& [request_id, id] : acquires_) parked.push_back(id);
  }
  if (manager == nullptr) return;
  // Each answer (CANCELLED) is dropped: the stream is gone.
  for (LockManager::CallId id : parked) manager->CancelAcquire(id);
}

void LockSession::OnDetached() {
  std::shared_ptr<LockManager> manager;
  {
    absl::MutexLock lock(&calls_mu_);
    manager = std::move(manager_);
  }
  // Ends told from now on find nobody; those already decided hold their own
  // reference. If this was the last reference to the manager, it goes here,
  // not on its own commit thread.
  if (manager != nullptr) manager->RemoveListener(this);
}

}  // namespace fencegate::lockservice
