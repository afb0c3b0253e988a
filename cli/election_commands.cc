// The election commands (docs/semantics.md, "Elections"): leader, observe,
// proclaim and resign. A campaign holds its term while something runs:
// `fencegate run --elect=NAME --value=V -- COMMAND` (run_command.cc).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "cli/cli_flags.h"
#include "cli/command.h"
#include "cli/exit_codes.h"
#include "cli/output.h"
#include "fencegate/client/lock_client.h"

namespace fencegate::cli {
namespace {

using client::ElectionState;
using client::LockClient;

// "'jobs': led by a in term 7 (value '10.0.0.1', #2), 8s left", or
// "'jobs': nobody leads (term 7 ended)".
std::string Describe(const ElectionState& state) {
  if (state.leader) {
    return absl::StrFormat("'%s': led by %s in term %d (value '%s', #%d), %s left",
                           state.election, state.candidate, state.term, state.value,
                           state.seq, absl::FormatDuration(state.remaining));
  }
  if (state.term == 0) return absl::StrFormat("'%s': nobody leads", state.election);
  return absl::StrFormat("'%s': nobody leads (term %d ended, #%d)", state.election,
                         state.term, state.seq);
}

JsonObject Fields(const ElectionState& state) {
  JsonObject fields;
  fields.AddString("election", state.election)
      .AddBool("leader", state.leader)
      .AddUint("term", state.term)
      .AddUint("seq", state.seq)
      .AddBytes("value", state.value)
      .AddString("candidate", state.candidate)
      .AddInt("remaining_ms", absl::ToInt64Milliseconds(state.remaining))
      .AddInt("changed_at_unix_ms", absl::ToUnixMillis(state.changed_at));
  return fields;
}

absl::Status RunLeader(CommandContext& ctx) {
  absl::StatusOr<std::unique_ptr<LockClient>> client = ConnectLock(ctx);
  if (!client.ok()) return client.status();
  absl::StatusOr<ElectionState> state = (*client)->Leader(absl::GetFlag(FLAGS_election));
  if (!state.ok()) return FromLockService(ctx, state.status());
  ctx.out->Line(Describe(*state));
  ctx.out->fields() = Fields(*state);
  return absl::OkStatus();
}

absl::Status RunObserve(CommandContext& ctx) {
  absl::StatusOr<std::unique_ptr<LockClient>> client = ConnectLock(ctx);
  if (!client.ok()) return client.status();
  const uint32_t count = absl::GetFlag(FLAGS_count);
  const bool json = absl::GetFlag(FLAGS_json);
  uint32_t seen = 0;
  // Each change as it comes, one line (one JSON object with --json).
  absl::Status status = (*client)->Observe(
      absl::GetFlag(FLAGS_election),
      [&](const ElectionState& state) {
        std::cout << (json ? Fields(state).ToString() : Describe(state)) << std::endl;
        return count == 0 || ++seen < count;
      },
      ctx.Given("timeout") ? absl::GetFlag(FLAGS_timeout) : absl::InfiniteDuration());
  if (!status.ok()) return FromLockService(ctx, status);
  ctx.out->fields().AddUint("changes", seen);
  return absl::OkStatus();
}

absl::Status RunProclaim(CommandContext& ctx) {
  const std::string election = absl::GetFlag(FLAGS_election);
  const client::SignedToken term = TokenFromFlags();
  absl::StatusOr<std::unique_ptr<LockClient>> client = ConnectLock(ctx);
  if (!client.ok()) return client.status();
  const std::string value = absl::GetFlag(FLAGS_value);
  absl::StatusOr<uint64_t> seq =
      (*client)->Proclaim(election, term.token, value, term.signature);
  if (!seq.ok()) return FromLockService(ctx, seq.status());
  ctx.out->Line(absl::StrFormat("'%s': term %d now says '%s' (#%d)", election, term.token,
                                value, *seq));
  ctx.out->fields()
      .AddString("election", election)
      .AddUint("term", term.token)
      .AddUint("seq", *seq);
  return absl::OkStatus();
}

absl::Status RunResign(CommandContext& ctx) {
  const std::string election = absl::GetFlag(FLAGS_election);
  const client::SignedToken term = TokenFromFlags();
  absl::StatusOr<std::unique_ptr<LockClient>> client = ConnectLock(ctx);
  if (!client.ok()) return client.status();
  absl::Status status = (*client)->Resign(election, term.token, term.signature);
  if (!status.ok()) return FromLockService(ctx, status);
  ctx.out->Line(absl::StrFormat("'%s': term %d ended; the next candidate leads", election,
                                term.token));
  ctx.out->fields().AddString("election", election).AddUint("term", term.token);
  return absl::OkStatus();
}

}  // namespace

const std::vector<Command>& ElectionCommands() {
  static const auto* const kCommands = new std::vector<Command>{
      {"leader",
       "show who leads an election",
       "fencegate leader --election=NAME",
       "Shows the election's leader: its candidate name, its term (the fencing\n"
       "token of its writes), its value and that value's number within the\n"
       "term, and the time left on its lease; or that nobody leads.\n"
       "\n"
       "To campaign, run the job under the lead: fencegate run --elect=NAME\n"
       "--value=V -- COMMAND (see fencegate help run).",
       {"lockservice", "election"},
       {"election"},
       &RunLeader},
      {"observe",
       "print an election's changes as they happen",
       "fencegate observe --election=NAME [--count=N] [--timeout=D]",
       "Prints the election's state, then one line per change as it commits (a\n"
       "term begins, its leader proclaims a value, the term ends), in order.\n"
       "Reconnects by itself, resuming after the last change printed. Stops\n"
       "after --count changes, after --timeout if given, or when interrupted.\n"
       "With --json, one JSON object per line.",
       {"lockservice", "election", "count"},
       {"election"},
       &RunObserve},
      {"proclaim",
       "change what an election's leader says",
       "fencegate proclaim --election=NAME --token=TERM --value=V",
       "The leader of the term --token (as run --elect gives it in\n"
       "$FENCEGATE_TOKEN) says --value from now on, without losing the lead.\n"
       "Exit 2 if that term is over (a deposed leader).",
       {"lockservice", "election", "token", "value"},
       {"election", "token"},
       &RunProclaim},
      {"resign",
       "end a term: the next candidate leads",
       "fencegate resign --election=NAME --token=TERM",
       "Ends the term --token at once, whatever its holds; the next candidate\n"
       "in line leads. Exit 2 if that term is over already.",
       {"lockservice", "election", "token"},
       {"election", "token"},
       &RunResign},
  };
  return *kCommands;
}

}  // namespace fencegate::cli
