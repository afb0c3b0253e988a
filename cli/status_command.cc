// `fencegate status`: a server's key figures, the ones its status page
// shows (common/metrics/key_figures.h), read over gRPC with
// fencegate.v1.ServerInfo/GetMetrics: the same address, TLS and deadline
// as every other command, so it works wherever the server can be called,
// also where its metrics listener is loopback-only (docs/observability.md
// says why).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/cli_flags.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "client/channel.h"
#include "common/grpc/grpc_status.h"
#include "common/metrics/key_figures.h"
#include "fencegate/v1/server_info.grpc.pb.h"
#include "grpcpp/client_context.h"

ABSL_FLAG(std::string, server, "127.0.0.1:7070",
          "status: the server (lock service or gateway), host:port of its gRPC port");

namespace fencegate::cli {
namespace {

absl::Status RunStatus(CommandContext& ctx) {
  const std::string server = absl::GetFlag(FLAGS_server);
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      client::NewClientChannel(server, ctx.client_options.tls);
  if (!channel.ok()) return UsageError(channel.status().message());
  auto stub = fencegate::v1::ServerInfo::NewStub(*std::move(channel));
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + ctx.client_options.call_timeout));
  context.set_wait_for_ready(true);  // a server that is starting: wait, within --timeout
  fencegate::v1::GetMetricsResponse response;
  absl::Status status = FromGrpcStatus(
      stub->GetMetrics(&context, fencegate::v1::GetMetricsRequest(), &response));
  if (!status.ok()) {
    return NameServer(status, "the server", server, "--server",
                      ctx.client_options.tls.enabled());
  }
  absl::StatusOr<std::vector<metrics::Sample>> samples =
      metrics::ParseExposition(response.exposition());
  if (!samples.ok()) {
    return absl::InternalError(
        absl::StrCat("the server's metrics do not parse: ", samples.status().message()));
  }
  const std::vector<metrics::Figure> figures = metrics::KeyFigures(*samples, absl::Now());
  ctx.out->fields().AddString("server", server);
  JsonObject json_figures;
  for (const metrics::Figure& f : figures) {
    ctx.out->Line(absl::StrCat(f.label, ": ", f.text));
    if (f.number) {
      json_figures.AddDouble(f.key, *f.number);
    } else {
      json_figures.AddString(f.key, f.text);
    }
  }
  ctx.out->fields().AddObject("figures", json_figures);
  return absl::OkStatus();
}

}  // namespace

const std::vector<Command>& StatusCommands() {
  static const std::vector<Command> commands = {
      {"status",
       "a server's key figures, as its status page shows them",
       "fencegate status [--server=HOST:PORT] [--json]",
       "Asks a lock service or a gateway (--server: its gRPC address) for its metrics\n"
       "(fencegate.v1.ServerInfo/GetMetrics) and prints the key figures its status\n"
       "page shows: for a lock service leases held, waiters, grants, expirations,\n"
       "lost leases, commit time; for a gateway the stale writes it refused, its\n"
       "requests, the grant-time feed's state and lag, commit time. With --json one\n"
       "object: "
       "{\"ok\":true,\"server\":...,\"figures\":{\"stale_writes_refused\":3,...}}.\n"
       "docs/observability.md says what each figure means. Exit 0 when the server\n"
       "answered; a server running with --metrics_listen= (metrics off) answers\n"
       "FAILED_PRECONDITION.",
       {"server"},
       {},
       RunStatus},
  };
  return commands;
}

}  // namespace fencegate::cli
