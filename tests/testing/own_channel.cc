#include "tests/testing/own_channel.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace fencegate::testing {

absl::StatusOr<std::shared_ptr<grpc::Channel>> OwnChannel(const std::string& address,
                                                          absl::Duration timeout) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  if (!channel->WaitForConnected(absl::ToChronoTime(absl::Now() + timeout))) {
    return absl::UnavailableError(absl::StrCat("no connection to ", address, " within ",
                                               absl::FormatDuration(timeout)));
  }
  return channel;
}

}  // namespace fencegate::testing
