// The client library's gRPC channels: how they reconnect, and how a retry
// waits for one that lost its server.
//
// Thread safety: the functions are thread-safe.
#ifndef FENCEGATE_CLIENT_CHANNEL_H_
#define FENCEGATE_CLIENT_CHANNEL_H_

#include <initializer_list>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "fencegate/client_tls_files.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"

namespace fencegate::client {

// A channel to `address` that reconnects within a second of its server
// coming back: gRPC's default reconnect backoff starts at 1 s and grows to
// two minutes, so a lock client would stay cut off long after a restarted
// lock service is up. (The minimum backoff stays at gRPC's default: gRPC
// also uses it as the connect timeout, and a short one fails handshakes on
// a busy machine.)
std::shared_ptr<grpc::Channel> NewClientChannel(
    const std::string& address, const std::shared_ptr<grpc::ChannelCredentials>& credentials);

// NewClientChannel with the credentials `tls` names (plaintext if none);
// an error if they cannot be read.
absl::StatusOr<std::shared_ptr<grpc::Channel>> NewClientChannel(
    const std::string& address, const ClientTlsFiles& tls);

// A retry's pause for calls over `channel`; returns by `until` (wall
// clock, as gRPC's deadlines). A channel whose server went away fails calls
// at once while it is not connected, and with blocking calls nothing polls
// its reconnection but gRPC's backup poller, every 5 s: so while the
// channel is not READY this resets its reconnect backoff (the retry's own
// backoff paces the attempts; gRPC's, grown while the server was down,
// would wait up to a second past a server that is back), starts a
// reconnection, waits for it to connect and returns as soon as it is. A
// READY channel (the server itself answered UNAVAILABLE) sleeps until
// `until`.
void PauseForChannel(grpc::Channel& channel, absl::Time until);

// The same for a caller that needs several channels (a lock service's and
// a gateway's): starts the reconnection of every channel that is not READY,
// then returns as soon as all of them are connected, or at `until`. If all
// were READY, sleeps until `until`.
void PauseForChannels(std::initializer_list<grpc::Channel*> channels, absl::Time until);

}  // namespace fencegate::client

#endif  // FENCEGATE_CLIENT_CHANNEL_H_
