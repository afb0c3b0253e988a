// The gateway's commands: write, read, fence, list.
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/cli_flags.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "fencegate/client/gateway_client.h"

namespace fencegate::cli {
namespace {

using client::Fencing;
using client::GatewayClient;

absl::StatusOr<std::unique_ptr<GatewayClient>> ConnectGateway(const CommandContext& ctx) {
  absl::StatusOr<std::unique_ptr<GatewayClient>> client =
      GatewayClient::Connect(absl::GetFlag(FLAGS_gateway), ctx.client_options);
  if (!client.ok()) return UsageError(client.status().message());
  return client;
}

absl::Status FromGateway(const CommandContext& ctx, absl::Status status) {
  return NameServer(std::move(status), "the gateway", absl::GetFlag(FLAGS_gateway),
                    "--gateway", ctx.client_options.tls.enabled());
}

// --token's mode ("shared:42...") goes with it: the gateway takes a shared
// lease's token for reads only.
Fencing FencingFromFlags() {
  client::SignedToken token = TokenFromFlags();
  return Fencing{absl::GetFlag(FLAGS_resource), token.token, std::move(token.signature),
                 token.mode};
}

std::string Quoted(absl::string_view bytes) {
  return absl::StrCat("\"", absl::CHexEscape(bytes), "\"");
}

// The value to write: --value, or --value_file's bytes (- for stdin).
absl::StatusOr<std::string> ValueFromFlags(const CommandContext& ctx) {
  if (ctx.Given("value")) return absl::GetFlag(FLAGS_value);
  const std::string path = absl::GetFlag(FLAGS_value_file);
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin),
                       std::istreambuf_iterator<char>());
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return UsageError(absl::StrCat("--value_file: cannot open '", path, "'"));
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

absl::Status RunWrite(CommandContext& ctx) {
  const int forms = ctx.Given("value") + ctx.Given("value_file") +
                    (ctx.Given("delete") && absl::GetFlag(FLAGS_delete));
  if (forms != 1) {
    return UsageError("give exactly one of --value=TEXT, --value_file=FILE or --delete");
  }
  const Fencing fencing = FencingFromFlags();
  const std::string key = absl::GetFlag(FLAGS_key);
  std::optional<uint64_t> expected_version;
  if (ctx.Given("expected_version")) {
    expected_version = absl::GetFlag(FLAGS_expected_version);
  }
  absl::StatusOr<std::unique_ptr<GatewayClient>> connected = ConnectGateway(ctx);
  if (!connected.ok()) return connected.status();
  GatewayClient* gateway = connected->get();
  const bool is_delete = absl::GetFlag(FLAGS_delete);
  absl::StatusOr<client::WriteResult> result;
  if (is_delete) {
    result = gateway->Delete(fencing, key, expected_version);
  } else {
    absl::StatusOr<std::string> value = ValueFromFlags(ctx);
    if (!value.ok()) return value.status();
    result = gateway->Put(fencing, key, *value, expected_version);
  }
  if (!result.ok()) return FromGateway(ctx, result.status());
  ctx.out->Line(
      absl::StrFormat("%s '%s'/'%s' with token %d: version %d, fence at token %d",
                      is_delete ? "deleted" : "wrote", fencing.resource, key,
                      fencing.token, result->version, result->max_token));
  ctx.out->fields()
      .AddString("resource", fencing.resource)
      .AddBytes("key", key)
      .AddBool("deleted", is_delete)
      .AddUint("version", result->version)
      .AddUint("max_token", result->max_token);
  return absl::OkStatus();
}

absl::Status RunRead(CommandContext& ctx) {
  const Fencing fencing = FencingFromFlags();
  const std::string key = absl::GetFlag(FLAGS_key);
  absl::StatusOr<std::unique_ptr<GatewayClient>> connected = ConnectGateway(ctx);
  if (!connected.ok()) return connected.status();
  GatewayClient* gateway = connected->get();
  const bool fenced = ctx.Given("token");
  absl::StatusOr<client::ReadResult> read =
      fenced ? gateway->Read(fencing, key) : gateway->ReadUnfenced(fencing.resource, key);
  if (!read.ok()) return FromGateway(ctx, read.status());
  if (read->found) {
    ctx.out->Line(absl::StrFormat("'%s'/'%s' = %s (version %d, fence at token %d)",
                                  fencing.resource, key, Quoted(read->value),
                                  read->version, read->max_token));
  } else {
    ctx.out->Line(absl::StrFormat("'%s'/'%s' does not exist (fence at token %d)",
                                  fencing.resource, key, read->max_token));
  }
  ctx.out->fields()
      .AddString("resource", fencing.resource)
      .AddBytes("key", key)
      .AddBool("fenced", fenced)
      .AddBool("found", read->found);
  if (read->found) {
    ctx.out->fields().AddBytes("value", read->value).AddUint("version", read->version);
  }
  ctx.out->fields().AddUint("max_token", read->max_token);
  return absl::OkStatus();
}

absl::Status RunFence(CommandContext& ctx) {
  const Fencing fencing = FencingFromFlags();
  absl::StatusOr<std::unique_ptr<GatewayClient>> connected = ConnectGateway(ctx);
  if (!connected.ok()) return connected.status();
  absl::StatusOr<uint64_t> max_token = (*connected)->Fence(fencing);
  if (!max_token.ok()) return FromGateway(ctx, max_token.status());
  ctx.out->Line(absl::StrFormat(
      "fence for '%s' is at token %d: writes with smaller tokens are refused",
      fencing.resource, *max_token));
  ctx.out->fields()
      .AddString("resource", fencing.resource)
      .AddUint("max_token", *max_token);
  return absl::OkStatus();
}

absl::Status RunList(CommandContext& ctx) {
  const std::string resource = absl::GetFlag(FLAGS_resource);
  absl::StatusOr<std::unique_ptr<GatewayClient>> connected = ConnectGateway(ctx);
  if (!connected.ok()) return connected.status();
  GatewayClient* gateway = connected->get();
  absl::StatusOr<client::ResourceSummary> summary = gateway->Describe(resource);
  if (!summary.ok()) return FromGateway(ctx, summary.status());
  absl::StatusOr<client::ListPage> page = gateway->List(
      resource, absl::GetFlag(FLAGS_page_size), absl::GetFlag(FLAGS_page_token));
  if (!page.ok()) return FromGateway(ctx, page.status());
  ctx.out->Line(absl::StrFormat("'%s': fence at token %d, %d key(s), %d byte(s)",
                                resource, summary->max_token, summary->key_count,
                                summary->total_bytes));
  std::vector<JsonObject> keys;
  for (const client::KeyEntry& entry : page->keys) {
    ctx.out->Line(absl::StrFormat("  %s  version %d, %d byte(s)", Quoted(entry.key),
                                  entry.version, entry.size_bytes));
    JsonObject json;
    json.AddBytes("key", entry.key)
        .AddUint("version", entry.version)
        .AddUint("size_bytes", entry.size_bytes);
    keys.push_back(std::move(json));
  }
  if (!page->next_page_token.empty()) {
    ctx.out->Line(absl::StrCat("more: --page_token=", page->next_page_token));
  }
  ctx.out->fields()
      .AddString("resource", resource)
      .AddUint("max_token", summary->max_token)
      .AddUint("key_count", summary->key_count)
      .AddUint("total_bytes", summary->total_bytes)
      .AddArray("keys", keys)
      .AddString("next_page_token", page->next_page_token);
  return absl::OkStatus();
}

}  // namespace

const std::vector<Command>& GatewayCommands() {
  static const auto* const kCommands = new std::vector<Command>{
      {"write",
       "put or delete a key, fenced by a token",
       "fencegate write --resource=NAME --token=TOKEN --key=K "
       "(--value=TEXT | --value_file=FILE | --delete) [--expected_version=V]",
       "Writes through the gateway, which accepts the write only if --token is\n"
       "at least the largest token it has seen for the resource. Exit 2 if the\n"
       "token is stale (a newer holder has used the resource; the gateway's\n"
       "token is shown) or --expected_version did not match: acquire the lock\n"
       "again and redo the read-modify-write.",
       {"gateway", "resource", "token", "key", "value", "value_file", "delete",
        "expected_version"},
       {"resource", "token", "key"},
       &RunWrite},
      {"read",
       "read a key (fenced with --token, plain without)",
       "fencegate read --resource=NAME --key=K [--token=TOKEN]",
       "With --token, a fenced read: refused (exit 2) if the token is stale,\n"
       "and otherwise it raises the fence, so older holders can no longer\n"
       "write. Without --token, a plain read that checks nothing.",
       {"gateway", "resource", "key", "token"},
       {"resource", "key"},
       &RunRead},
      {"fence",
       "raise a resource's fence to a token without writing",
       "fencegate fence --resource=NAME --token=TOKEN",
       "Raises the gateway's fence for the resource to --token, shutting out\n"
       "every older holder; a new holder does this right after acquiring.\n"
       "Exit 2 if the token is already stale.",
       {"gateway", "resource", "token"},
       {"resource", "token"},
       &RunFence},
      {"list",
       "list a resource's keys and its fence",
       "fencegate list --resource=NAME [--page_size=N] [--page_token=T]",
       "Shows the resource's fence (largest token seen), its size, and its keys\n"
       "in key order, one page at a time.",
       {"gateway", "resource", "page_size", "page_token"},
       {"resource"},
       &RunList},
  };
  return *kCommands;
}

}  // namespace fencegate::cli
