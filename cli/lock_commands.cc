// The lock service's commands: acquire, renew, release, describe.
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/cli_flags.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "common/base/errors.h"
#include "common/signing/signing_keys.h"
#include "fencegate/client/errors.h"
#include "fencegate/client/lock_client.h"

namespace fencegate::cli {
namespace {

using client::AcquireOptions;
using client::AcquireOutcome;
using client::LeaseMode;
using client::LeaseModeName;
using client::LockClient;
using client::LockState;

std::string Seconds(absl::Duration d) { return absl::FormatDuration(d); }

// The kind of lease --shared and --permits ask for (default: exclusive).
absl::Status LeaseKindFromFlags(const CommandContext& ctx, AcquireOptions& options) {
  const bool shared = absl::GetFlag(FLAGS_shared);
  if (shared && ctx.Given("permits")) {
    return UsageError(
        "--shared and --permits ask for different kinds of lock: pass --shared for a "
        "shared lease, or --permits=N for a permit of a semaphore of N, not both");
  }
  if (shared) {
    options.mode = LeaseMode::kShared;
  } else if (ctx.Given("permits")) {
    options.permits = absl::GetFlag(FLAGS_permits);
    if (options.permits == 0) {
      return UsageError(
          "--permits must be at least 1: a semaphore has 1 or more permits");
    }
    options.mode = LeaseMode::kPermit;
  }
  return absl::OkStatus();
}

// Why an Acquire of `mode` was not granted, for the error message.
std::string NotAcquiredWhy(const AcquireOptions& options, const AcquireOutcome& outcome) {
  if (outcome.lock_delay) {
    return "is held back by a lock-delay after its last lease expired";
  }
  switch (options.mode) {
    case LeaseMode::kShared:
      return absl::StrCat("is held exclusively or queued for (FIFO), token ",
                          outcome.holder_token);
    case LeaseMode::kPermit:
      return absl::StrCat("has no free permit of its ", options.permits,
                          " (or is queued for), token ", outcome.holder_token);
    case LeaseMode::kExclusive:
      break;
  }
  return absl::StrCat("is held by another holder, token ", outcome.holder_token);
}

// "(exclusive)", "(shared)", "(a permit of 3)": how the acquired lease holds.
std::string HowHeld(const AcquireOptions& options) {
  if (options.mode == LeaseMode::kPermit) {
    return absl::StrCat("(a permit of ", options.permits, ")");
  }
  return absl::StrCat("(", LeaseModeName(options.mode), ")");
}

// What the token is good for, by the kind of lease.
const char* TokenUses(LeaseMode mode) {
  switch (mode) {
    case LeaseMode::kShared:
      return "read (fenced), renew and release";
    case LeaseMode::kPermit:
      return "renew and release";
    case LeaseMode::kExclusive:
      break;
  }
  return "write, read, renew and release";
}

// `acquire --resources=a,b,c`: several at once, all or nothing.
absl::Status AcquireMany(CommandContext& ctx, const std::vector<std::string>& resources,
                         const std::string& holder, const AcquireOptions& options) {
  absl::StatusOr<std::unique_ptr<LockClient>> client = ConnectLock(ctx);
  if (!client.ok()) return client.status();
  absl::StatusOr<client::MultiAcquireOutcome> outcome =
      (*client)->AcquireMany(resources, holder, options);
  if (!outcome.ok()) return FromLockService(ctx, outcome.status());
  if (!outcome->acquired) {
    absl::Status status = absl::FailedPreconditionError(absl::StrCat(
        "none was acquired: '", outcome->busy_resource, "' ",
        outcome->lock_delay
            ? "is held back by a lock-delay after an expiry"
            : absl::StrCat("is held by another holder, token ", outcome->holder_token),
        "; try again in ", Seconds(outcome->retry_after),
        ", or pass --wait=DURATION to queue for all of them"));
    ErrorInfo info;
    info.current_token = outcome->holder_token;
    SetErrorInfo(status, info);
    return status;
  }
  std::vector<JsonObject> leases;
  for (size_t i = 0; i < resources.size() && i < outcome->leases.size(); ++i) {
    const AcquireOutcome& lease = outcome->leases[i];
    const std::string fencing_token =
        client::FormatFencingToken(lease.token, lease.signature, lease.mode);
    ctx.out->Line(
        absl::StrFormat("acquired '%s' %s: token %d, lease %s, holds %d; pass "
                        "--token=%s",
                        resources[i], HowHeld(options), lease.token, Seconds(lease.ttl),
                        lease.hold_count, fencing_token));
    JsonObject one;
    one.AddString("resource", resources[i])
        .AddUint("token", lease.token)
        .AddString("fencing_token", fencing_token)
        .AddInt("ttl_ms", absl::ToInt64Milliseconds(lease.ttl))
        .AddUint("hold_count", lease.hold_count);
    leases.push_back(std::move(one));
  }
  ctx.out->fields()
      .AddString("holder", holder)
      .AddString("mode", LeaseModeName(options.mode))
      .AddArray("leases", leases);
  return absl::OkStatus();
}

absl::Status RunAcquire(CommandContext& ctx) {
  const std::string resource = absl::GetFlag(FLAGS_resource);
  const std::vector<std::string> resources = absl::GetFlag(FLAGS_resources);
  if (resource.empty() && resources.empty()) {
    return UsageError(
        "missing --resource=NAME (or --resources=A,B,C for several at once)");
  }
  if (!resource.empty() && !resources.empty()) {
    return UsageError(
        "pass --resource=NAME for one resource or --resources=A,B,C for several, "
        "not both");
  }
  if (!resources.empty() && ctx.Given("permits")) {
    return UsageError(
        "--resources takes exclusive or --shared leases, not --permits (a semaphore "
        "is one resource)");
  }
  std::string holder = absl::GetFlag(FLAGS_holder);
  if (holder.empty()) holder = DefaultHolder();
  AcquireOptions options;
  options.ttl = absl::GetFlag(FLAGS_ttl);
  options.wait = absl::GetFlag(FLAGS_wait);
  options.request_id = absl::GetFlag(FLAGS_request_id);
  if (options.ttl <= absl::ZeroDuration()) return UsageError("--ttl must be above 0");
  if (options.wait < absl::ZeroDuration())
    return UsageError("--wait must not be negative");
  if (absl::Status kind = LeaseKindFromFlags(ctx, options); !kind.ok()) return kind;
  if (!resources.empty()) return AcquireMany(ctx, resources, holder, options);
  // The library gives a blocking acquire its wait on top of --timeout.
  absl::StatusOr<std::unique_ptr<LockClient>> client = ConnectLock(ctx);
  if (!client.ok()) return client.status();
  absl::StatusOr<AcquireOutcome> outcome = (*client)->Acquire(resource, holder, options);
  if (!outcome.ok()) return FromLockService(ctx, outcome.status());
  if (!outcome->acquired) {
    absl::Status status = absl::FailedPreconditionError(absl::StrCat(
        "'", resource, "' ", NotAcquiredWhy(options, *outcome), "; try again in ",
        Seconds(outcome->retry_after), ", or pass --wait=DURATION to queue for it"));
    ErrorInfo info;
    info.current_token = outcome->holder_token;
    SetErrorInfo(status, info);
    return status;
  }
  const std::string fencing_token =
      client::FormatFencingToken(outcome->token, outcome->signature, outcome->mode);
  ctx.out->Line(absl::StrFormat(
      "acquired '%s' %s: token %d%s, lease %s, holds %d", resource, HowHeld(options),
      outcome->token,
      outcome->signature.empty()
          ? ""
          : absl::StrCat(" (signed by key '", outcome->signature.key_id, "')"),
      Seconds(outcome->ttl), outcome->hold_count));
  ctx.out->Line(absl::StrFormat("pass --token=%s to %s; renew within %s", fencing_token,
                                TokenUses(outcome->mode), Seconds(outcome->ttl)));
  ctx.out->fields()
      .AddString("resource", resource)
      .AddString("holder", holder)
      .AddString("mode", LeaseModeName(outcome->mode))
      .AddUint("permits", options.permits)
      .AddUint("token", outcome->token)
      .AddString("fencing_token", fencing_token)
      .AddInt("ttl_ms", absl::ToInt64Milliseconds(outcome->ttl))
      .AddUint("hold_count", outcome->hold_count);
  return absl::OkStatus();
}

absl::Status RunRenew(CommandContext& ctx) {
  const std::string resource = absl::GetFlag(FLAGS_resource);
  const client::SignedToken signed_token = TokenFromFlags();
  const uint64_t token = signed_token.token;
  const absl::Duration ttl = absl::GetFlag(FLAGS_ttl);
  if (ttl <= absl::ZeroDuration()) return UsageError("--ttl must be above 0");
  absl::StatusOr<std::unique_ptr<LockClient>> client = ConnectLock(ctx);
  if (!client.ok()) return client.status();
  absl::StatusOr<client::RenewOutcome> renewed =
      (*client)->Renew(resource, token, ttl, absl::InfiniteDuration(),
                       signed_token.signature, signed_token.mode);
  if (!renewed.ok()) return FromLockService(ctx, renewed.status());
  ctx.out->Line(absl::StrFormat("renewed '%s' token %d: the lease now ends in %s",
                                resource, token, Seconds(renewed->ttl)));
  const std::string fencing_token =
      client::FormatFencingToken(token, renewed->signature, signed_token.mode);
  if (!renewed->signature.empty() && renewed->signature.key_id != signed_token.signature.key_id) {
    ctx.out->Line(absl::StrFormat(
        "the lock service signs with a new key now: pass --token=%s from here on",
        fencing_token));
  }
  ctx.out->fields()
      .AddString("resource", resource)
      .AddUint("token", token)
      .AddString("fencing_token", fencing_token)
      .AddInt("ttl_ms", absl::ToInt64Milliseconds(renewed->ttl));
  return absl::OkStatus();
}

absl::Status RunRelease(CommandContext& ctx) {
  const std::string resource = absl::GetFlag(FLAGS_resource);
  const client::SignedToken signed_token = TokenFromFlags();
  const uint64_t token = signed_token.token;
  absl::StatusOr<std::unique_ptr<LockClient>> client = ConnectLock(ctx);
  if (!client.ok()) return client.status();
  absl::StatusOr<uint32_t> holds_left =
      (*client)->Release(resource, token, absl::GetFlag(FLAGS_request_id),
                         signed_token.signature, signed_token.mode);
  if (!holds_left.ok()) return FromLockService(ctx, holds_left.status());
  ctx.out->Line(absl::StrFormat(
      "released '%s' token %d: %s", resource, token,
      *holds_left == 0 ? std::string("the lock is free")
                       : absl::StrCat(*holds_left, " hold(s) left, still held")));
  ctx.out->fields()
      .AddString("resource", resource)
      .AddUint("token", token)
      .AddUint("hold_count", *holds_left);
  return absl::OkStatus();
}

// How a held resource is held, and by whom (the lease Describe details:
// with shared leases or permits, the oldest): "held exclusively by a",
// "held shared by 3 holders; the oldest is a", "2 of its 5 permits held;
// the oldest by a".
std::string HeldBy(const LockState& state) {
  const bool one = state.holders == 1;
  switch (state.mode) {
    case LeaseMode::kShared:
      return absl::StrCat("held shared by ", state.holders,
                          one ? " holder, " : " holders; the oldest is ", state.holder);
    case LeaseMode::kPermit:
      return absl::StrCat(state.holders, " of its ", state.permits, " permits held",
                          one ? ", by " : "; the oldest by ", state.holder);
    case LeaseMode::kExclusive:
      break;
  }
  return absl::StrCat("held exclusively by ", state.holder);
}

absl::Status RunDescribe(CommandContext& ctx) {
  const std::string resource = absl::GetFlag(FLAGS_resource);
  absl::StatusOr<std::unique_ptr<LockClient>> client = ConnectLock(ctx);
  if (!client.ok()) return client.status();
  absl::StatusOr<LockState> state = (*client)->Describe(resource);
  if (!state.ok()) return FromLockService(ctx, state.status());
  if (state->held) {
    ctx.out->Line(
        absl::StrFormat("'%s': %s with token %d, %s left (holds %d, waiters %d)",
                        resource, HeldBy(*state), state->token, Seconds(state->remaining),
                        state->hold_count, state->waiters));
  } else if (state->lock_delay_remaining > absl::ZeroDuration()) {
    ctx.out->Line(absl::StrFormat("'%s': free, but held back by a lock-delay for %s",
                                  resource, Seconds(state->lock_delay_remaining)));
  } else {
    ctx.out->Line(absl::StrFormat("'%s': free", resource));
  }
  ctx.out->fields()
      .AddString("resource", resource)
      .AddBool("held", state->held)
      .AddString("mode", LeaseModeName(state->mode))
      .AddUint("permits", state->permits)
      .AddUint("holders", state->holders)
      .AddString("holder", state->holder)
      .AddUint("token", state->token)
      .AddInt("remaining_ms", absl::ToInt64Milliseconds(state->remaining))
      .AddUint("hold_count", state->hold_count)
      .AddUint("waiters", state->waiters)
      .AddInt("lock_delay_remaining_ms",
              absl::ToInt64Milliseconds(state->lock_delay_remaining));
  return absl::OkStatus();
}

absl::Status RunKeygen(CommandContext& ctx) {
  const std::string id = absl::GetFlag(FLAGS_key_id);
  absl::StatusOr<std::string> line = NewKeyLine(id, absl::GetFlag(FLAGS_sign));
  if (!line.ok()) return line.status();
  // Check it the way the servers will read it.
  absl::StatusOr<KeyRing> parsed = KeyRing::Parse(*line, "--key_id");
  if (!parsed.ok()) return UsageError(parsed.status().message());
  ctx.out->Line(*line);
  ctx.out->fields().AddString("key_id", id).AddString("line", *line);
  return absl::OkStatus();
}

}  // namespace

const std::vector<Command>& LockCommands() {
  static const auto* const kCommands = new std::vector<Command>{
      {"acquire",
       "take a lock; prints its fencing token",
       "fencegate acquire --resource=NAME | --resources=A,B,C [--ttl=10s] [--wait=0s] "
       "[--holder=WHO] [--shared | --permits=N]",
       "Takes the lock on --resource and prints the fencing token to pass to\n"
       "every write. The lease lasts --ttl unless renewed. With --wait=0 (the\n"
       "default) it answers at once; otherwise it queues, first come first\n"
       "served. Exit 0: acquired; 3: held by someone else (the holder's token\n"
       "is shown).\n"
       "\n"
       "Kinds of lock: exclusive by default (one holder; its token writes).\n"
       "--shared takes a shared lease: many holders at once and no exclusive\n"
       "one; its token reads at the gateway (fenced) but does not write.\n"
       "--permits=N takes one permit of a semaphore of N: N holders at once;\n"
       "every holder of the resource must give the same N. A resource is used\n"
       "one way at a time: asking the other way while it is in use is a usage\n"
       "error (exit 4) naming mode or permits. Every lease has its own token;\n"
       "renew and release it the same way.\n"
       "\n"
       "--resources=A,B,C (instead of --resource) takes several at once, all\n"
       "exclusive or all --shared: granted all together or not at all (with\n"
       "--wait, queued in every one's queue at once: no deadlock with callers\n"
       "naming them in another order). It prints one token per resource.",
       {"lockservice", "resource", "resources", "holder", "ttl", "wait", "request_id",
        "shared", "permits"},
       {},
       &RunAcquire},
      {"renew",
       "extend a lease to now + --ttl",
       "fencegate renew --resource=NAME --token=TOKEN [--ttl=10s]",
       "Extends the lease to end --ttl from now (\"extend to\", not \"extend by\").\n"
       "Exit 2 if the token no longer holds the lock (it expired, was released,\n"
       "or a newer holder has it): stop writing and acquire again.",
       {"lockservice", "resource", "token", "ttl"},
       {"resource", "token"},
       &RunRenew},
      {"release",
       "drop one hold of a lock",
       "fencegate release --resource=NAME --token=TOKEN",
       "Drops one hold; the lock is free when none is left. A token that does\n"
       "not hold the lock releases nothing (exit 2): a stale release never\n"
       "frees a newer holder's lock.",
       {"lockservice", "resource", "token", "request_id"},
       {"resource", "token"},
       &RunRelease},
      {"describe",
       "show who holds a lock",
       "fencegate describe --resource=NAME",
       "Shows how the lock is held (exclusively, shared, or as a semaphore: its\n"
       "permits and how many are held), the holder, its token, the time left\n"
       "on its lease, the hold count and the number of queued waiters. With\n"
       "shared leases or permits these describe the oldest (lowest token).",
       {"lockservice", "resource"},
       {"resource"},
       &RunDescribe},
      {"keygen",
       "print a new token-signing key line",
       "fencegate keygen --key_id=ID [--sign] >> keys.txt",
       "Prints one line for a key file (--signing_keys of the lock service and\n"
       "the gateways): the id, 32 random bytes in hex, and 'sign' if --sign is\n"
       "given. Keep the file secret (mode 0600). Rotation: docs/security.md.",
       {"key_id", "sign"},
       {"key_id"},
       &RunKeygen},
  };
  return *kCommands;
}

}  // namespace fencegate::cli
