#include "bench/loadgen/grpc_util.h"

#include "absl/strings/str_cat.h"

namespace fencegate::bench {

absl::StatusOr<std::shared_ptr<grpc::Channel>> ConnectOwnChannel(
    const std::string& target, absl::Duration timeout) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // own connection
  args.SetMaxReceiveMessageSize(16 << 20);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args);
  if (!channel->WaitForConnected(absl::ToChronoTime(absl::Now() + timeout))) {
    return absl::UnavailableError(absl::StrCat(
        "cannot connect to ", target, " within ", absl::FormatDuration(timeout),
        ": is the server running and listening there?"));
  }
  return channel;
}

absl::Status FromGrpc(absl::string_view what, const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(what, ": ", status.error_message()));
}

void SetDeadline(grpc::ClientContext& context, absl::Time deadline) {
  context.set_deadline(absl::ToChronoTime(deadline));
}

}  // namespace fencegate::bench
