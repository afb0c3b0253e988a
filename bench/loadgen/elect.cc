#include "bench/loadgen/elect.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "bench/loadgen/driver.h"
#include "bench/loadgen/etcd_driver.h"
#include "bench/loadgen/grpc_util.h"
#include "etcdserverpb/rpc.grpc.pb.h"
#include "fencegate/client/election.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/gateway_client.h"
#include "fencegate/client/lock_client.h"
#include "v3electionpb/v3election.grpc.pb.h"

namespace fencegate::bench {
namespace {

constexpr char kKey[] = "heartbeat";

int64_t UnixMicros(absl::Time t) { return absl::ToUnixMicros(t); }

void PrintLine(const std::string& line) {
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void PrintCampaigning(const CandidateConfig& config) {
  PrintLine(absl::StrFormat(
      "{\"system\": \"%s\", \"phase\": \"campaigning\", \"election\": \"%s\", "
      "\"candidate\": \"%s\", \"ttl_s\": %.3f}",
      config.system, config.election, config.candidate,
      absl::ToDoubleSeconds(config.ttl)));
}

// Leading since `elected` in `term`: `write` every config.write_every until
// config.duration ends, the first success printed. `write` is the system's
// fenced write of `value`.
absl::Status WriteWhileLeading(
    const CandidateConfig& config, absl::Time campaign, absl::Time elected, uint64_t term,
    absl::Time end, absl::FunctionRef<absl::Status(const std::string&)> write) {
  absl::Time next = absl::Now();
  for (uint64_t n = 0; absl::Now() < end; ++n) {
    absl::Status status = write(absl::StrCat(config.candidate, " ", n));
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat("fenced write ", n,
                                                      " as leader: ", status.message()));
    }
    if (n == 0) {
      PrintLine(absl::StrFormat(
          "{\"system\": \"%s\", \"phase\": \"first_write\", \"election\": \"%s\", "
          "\"candidate\": \"%s\", \"term\": %d, \"ttl_s\": %.3f, "
          "\"campaign_unix_us\": %d, \"elected_unix_us\": %d, "
          "\"first_write_unix_us\": %d}",
          config.system, config.election, config.candidate, term,
          absl::ToDoubleSeconds(config.ttl), UnixMicros(campaign), UnixMicros(elected),
          UnixMicros(absl::Now())));
    }
    next += config.write_every;
    absl::SleepFor(next - absl::Now());  // a negative sleep returns at once
  }
  return absl::OkStatus();
}

absl::Status RunFencegate(const CandidateConfig& config, absl::Time end) {
  if (config.gateway_target.empty()) {
    return absl::InvalidArgumentError(
        "--shape=elect --system=fencegate needs --gateway_target");
  }
  auto lock_channel = ConnectOwnChannel(config.target, kCallTimeout);
  if (!lock_channel.ok()) return lock_channel.status();
  auto gateway_channel = ConnectOwnChannel(config.gateway_target, kCallTimeout);
  if (!gateway_channel.ok()) return gateway_channel.status();
  client::LockClient locks(*lock_channel);  // Session streams, as by default
  client::GatewayClient gateway(*gateway_channel);

  PrintCampaigning(config);
  const absl::Time campaign = absl::Now();
  client::CampaignOptions options;
  options.ttl = config.ttl;
  options.wait = end - campaign;
  auto leading =
      locks.Campaign(config.election, config.candidate, config.candidate, options);
  if (client::IsNotAcquired(leading.status())) return absl::OkStatus();  // never led
  if (!leading.ok()) return leading.status();
  client::Leadership& me = **leading;
  return WriteWhileLeading(config, campaign, absl::Now(), me.term(), end,
                           [&](const std::string& value) {
                             return gateway.Put(me.lease(), kKey, value).status();
                           });
}

// Keeps an etcd lease alive from a thread of its own, as concurrency.Session
// does: a keep-alive on one stream, the next a third of the TTL after the
// last answer. A refused or failed keep-alive is printed on stderr and ends
// the thread (the lease then runs out, and the writes are refused).
class EtcdKeepAlive {
 public:
  EtcdKeepAlive(std::shared_ptr<grpc::Channel> channel, int64_t lease_id,
                absl::Duration ttl)
      : stub_(etcdserverpb::Lease::NewStub(channel)),
        thread_([this, lease_id, ttl] { Run(lease_id, ttl); }) {}
  ~EtcdKeepAlive() {
    stop_.Notify();
    context_.TryCancel();
    thread_.join();
  }

 private:
  void Run(int64_t lease_id, absl::Duration ttl) {
    auto stream = stub_->LeaseKeepAlive(&context_);
    etcdserverpb::LeaseKeepAliveRequest request;
    request.set_id(lease_id);
    etcdserverpb::LeaseKeepAliveResponse response;
    do {
      if (!stream->Write(request) || !stream->Read(&response)) {
        if (!stop_.HasBeenNotified())
          std::fprintf(stderr, "fencegate-loadgen: LeaseKeepAlive: stream broken\n");
        break;
      }
      if (response.ttl() <= 0) {
        std::fprintf(stderr,
                     "fencegate-loadgen: LeaseKeepAlive: the lease has expired\n");
        break;
      }
    } while (!stop_.WaitForNotificationWithTimeout(ttl / 3));
    context_.TryCancel();
    stream->Finish().IgnoreError();
  }

  const std::unique_ptr<etcdserverpb::Lease::Stub> stub_;
  grpc::ClientContext context_;
  absl::Notification stop_;
  std::thread thread_;  // last: started once the rest is set up
};

absl::Status RunEtcd(const CandidateConfig& config, absl::Time end) {
  // The lease (and the guarded writes) through the benchmark's etcd driver.
  EtcdDriver etcd(config.target);
  if (absl::Status status = etcd.Open(config.ttl); !status.ok()) return status;
  auto channel = ConnectOwnChannel(config.target, kCallTimeout);
  if (!channel.ok()) return channel.status();
  EtcdKeepAlive keep_alive(*channel, etcd.lease_id(), config.ttl);
  auto election = v3electionpb::Election::NewStub(*channel);

  PrintCampaigning(config);
  const absl::Time campaign = absl::Now();
  v3electionpb::CampaignRequest request;
  request.set_name(config.election);
  request.set_lease(etcd.lease_id());
  request.set_value(config.candidate);
  v3electionpb::CampaignResponse response;
  grpc::ClientContext context;
  SetDeadline(context, end);
  grpc::Status campaigned = election->Campaign(&context, request, &response);
  if (campaigned.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
      absl::Now() >= end) {
    return absl::OkStatus();  // never led
  }
  if (absl::Status status = FromGrpc("Campaign", campaigned); !status.ok()) return status;
  const absl::Time elected = absl::Now();
  const HeldLock leader{config.election, static_cast<uint64_t>(response.leader().rev()),
                        response.leader().key()};
  return WriteWhileLeading(
      config, campaign, elected, leader.token, end,
      [&](const std::string& value) { return etcd.FencedWrite(leader, kKey, value); });
}

}  // namespace

absl::Status RunCandidate(const CandidateConfig& config) {
  if (config.target.empty()) return absl::InvalidArgumentError("--target is required");
  if (config.election.empty()) {
    return absl::InvalidArgumentError(
        "--shape=elect needs --run_id (the election's name)");
  }
  const absl::Time end = absl::Now() + config.duration;
  if (config.system == "fencegate") return RunFencegate(config, end);
  if (config.system == "etcd") return RunEtcd(config, end);
  return absl::InvalidArgumentError(absl::StrCat(
      "--shape=elect: --system must be fencegate or etcd, not '", config.system, "'"));
}

}  // namespace fencegate::bench
