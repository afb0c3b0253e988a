#include "examples/demo/act_support.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "harness/counter_store.h"
#include "harness/interrupt.h"

namespace fencegate::demo {
namespace {

int Index(Lane lane) { return lane == Lane::kClient1 ? 0 : 1; }

std::string Secs(int64_t ms) { return absl::StrFormat("%.2fs", ms / 1000.0); }

// A reply the scenario did not plan for (status=error) ends the demo.
absl::StatusOr<Message> Checked(absl::StatusOr<Message> reply,
                                const ClientProcess& client, absl::string_view command) {
  if (!reply.ok()) return reply.status();
  if (reply->status() == "error") {
    return absl::InternalError(
        absl::StrCat(client.name(), " failed to ", command, ": ", reply->Get("msg")));
  }
  return reply;
}

}  // namespace

std::string Verdict(const Message& reply) {
  if (reply.ok()) return "ACCEPTED";
  if (reply.status() == "stale") return "REFUSED: stale token";
  if (reply.status() == "lease_lost") return "REFUSED: lease lost";
  return absl::StrCat("REFUSED: ", reply.status());
}

std::string CounterSummary(int64_t counter, int64_t acknowledged) {
  std::string text =
      absl::StrCat("counter = ", counter, " after ", acknowledged,
                   " acknowledged increment", acknowledged == 1 ? "" : "s");
  if (counter == acknowledged) return text + ": none lost";
  if (counter < acknowledged)
    return absl::StrCat(text, ": ", acknowledged - counter, " LOST");
  return text + ": more than acknowledged";
}

Act::Act(const DemoSetup& setup, std::string resource, Storage storage, ActResult* result)
    : setup_(setup), resource_(std::move(resource)), storage_(storage), result_(result) {}

std::string Act::PlainDbPath() const { return setup_.work_dir + "/plain-counter.db"; }

absl::StatusOr<std::unique_ptr<ClientProcess>> Act::StartClient(Lane lane,
                                                                std::string lockservice) {
  ClientProcessOptions options;
  options.binary = setup_.client_binary;
  options.name = LaneName(lane);
  options.lockservice = lockservice.empty() ? setup_.lockservice : lockservice;
  switch (storage_) {
    case Storage::kGateway:
      options.gateway = setup_.gateway;
      break;
    case Storage::kSqlTable:
      options.postgres = setup_.postgres;
      break;
    case Storage::kPlainFile:
      options.plain_db = PlainDbPath();
      break;
  }
  options.resource = resource_;
  options.tls = setup_.client_tls[Index(lane)];
  options.stderr_path =
      absl::StrCat(setup_.work_dir, "/", resource_, "-client", Index(lane) + 1, ".log");
  Timeline* timeline = setup_.timeline;
  auto on_event = [timeline, lane](const Message& event) {
    if (event.Get("what") != "lease_lost") return;
    const bool lapsed = absl::StrContains(event.Get("msg"), "lapsed");
    timeline->Note(lane,
                   lapsed
                       ? "its Lease reports itself lost: no renewal acknowledged in time"
                       : "its Lease reports itself lost: a renewal was refused",
                   "Lease: on_lost fires", Outcome::kNote);
  };
  return ClientProcess::Start(options, on_event);
}

absl::StatusOr<Message> Act::Acquire(ClientProcess& client, Lane lane) {
  Message command;
  command.word = "acquire";
  command.Set("ttl_ms", absl::ToInt64Milliseconds(setup_.ttl));
  absl::StatusOr<Message> reply = Checked(client.Call(command), client, "acquire");
  if (!reply.ok()) return reply;
  Step step;
  step.actor = lane;
  step.target = Lane::kLockService;
  step.action =
      absl::StrCat("acquire '", resource_, "', TTL ", absl::FormatDuration(setup_.ttl));
  if (reply->ok()) {
    token_[Index(lane)] = reply->GetUint("token");
    step.token = token_[Index(lane)];
    step.result = absl::StrCat("granted: token ", step.token);
    step.label = absl::StrCat("acquire → token ", step.token);
  } else {
    step.result =
        absl::StrCat("NOT ACQUIRED: held with token ", reply->Get("holder_token"));
    step.label = absl::StrCat("acquire → held by token ", reply->Get("holder_token"));
    step.outcome = Outcome::kRefused;
  }
  timeline().Add(step);
  return reply;
}

absl::StatusOr<Message> Act::Check(ClientProcess& client, Lane lane) {
  absl::StatusOr<Message> reply =
      Checked(client.Call("check"), client, "check its lease");
  if (!reply.ok()) return reply;
  Step step;
  step.actor = step.target = lane;
  step.token = token_[Index(lane)];
  step.action = "checks its lease: Lease::Check()";
  if (reply->ok()) {
    step.result = absl::StrCat("valid, ", Secs(reply->GetInt("remaining_ms")), " left");
    step.label =
        absl::StrCat("Check(): valid, ", Secs(reply->GetInt("remaining_ms")), " left");
    step.outcome = Outcome::kOk;
  } else {
    step.result = "LOST: the lease expired while it was not looking";
    step.label = "Check(): lease LOST";
    step.outcome = Outcome::kRefused;
  }
  timeline().Add(step);
  return reply;
}

absl::StatusOr<Message> Act::Read(ClientProcess& client, Lane lane) {
  absl::StatusOr<Message> reply = Checked(client.Call("read"), client, "read");
  if (!reply.ok()) return reply;
  const uint64_t token = token_[Index(lane)];
  Step step;
  step.actor = lane;
  step.target = StoreLane();
  step.token = token;
  const bool fenced = this->fenced();
  step.action = fenced ? "read counter" : "read counter from the file";
  if (reply->ok()) {
    last_read_[Index(lane)] = reply->GetInt("value");
    step.result = absl::StrCat("counter = ", reply->Get("value"));
    step.label = fenced ? absl::StrCat("read(", token, ") → ", reply->Get("value"))
                        : absl::StrCat("read → ", reply->Get("value"));
  } else {
    step.result = absl::StrCat("REFUSED: stale token; the fence is at token ",
                               reply->Get("max_token"));
    step.label =
        absl::StrCat("read(", token, ") → REFUSED: stale, max ", reply->Get("max_token"));
    step.outcome = Outcome::kRefused;
  }
  timeline().Add(step);
  return reply;
}

absl::StatusOr<Message> Act::Write(ClientProcess& client, Lane lane, bool stale) {
  absl::StatusOr<Message> reply = Checked(client.Call("write"), client, "write");
  if (!reply.ok()) return reply;
  const uint64_t token = token_[Index(lane)];
  Step step;
  step.actor = lane;
  step.target = StoreLane();
  step.token = token;
  const bool fenced = this->fenced();
  const int64_t read = last_read_[Index(lane)];
  step.action = absl::StrCat("write counter = ", read + 1, " (read ", read, ", +1)",
                             fenced ? "" : " to the file");
  if (reply->ok()) {
    ++acknowledged_;
    const std::string value = reply->Get("value");
    if (stale) {
      step.result = "ACCEPTED, unchecked: overwrites client 2's write";
      step.label =
          absl::StrCat("write counter=", value, " → accepted: overwrites client 2's");
      step.outcome = Outcome::kDamage;
    } else {
      step.result = absl::StrCat("OK, counter = ", value);
      step.label = fenced ? absl::StrCat("write(", token, ") counter=", value, " → OK")
                          : absl::StrCat("write counter=", value, " → OK");
    }
  } else {
    step.result = absl::StrCat("REFUSED: stale token; the fence is at token ",
                               reply->Get("max_token"));
    step.label = absl::StrCat("write(", token, ") counter=", read + 1,
                              " → REFUSED: stale, max ", reply->Get("max_token"));
    step.outcome = Outcome::kRefused;
  }
  timeline().Add(step);
  return reply;
}

absl::StatusOr<Message> Act::Renew(ClientProcess& client, Lane lane) {
  absl::StatusOr<Message> reply = Checked(client.Call("renew"), client, "renew");
  if (!reply.ok()) return reply;
  const uint64_t token = token_[Index(lane)];
  Step step;
  step.actor = lane;
  step.target = Lane::kLockService;
  step.token = token;
  step.action = "renew its lease";
  if (reply->ok()) {
    step.result = absl::StrCat("renewed for ", Secs(reply->GetInt("ttl_ms")));
    step.label = absl::StrCat("renew(", token, ") → OK");
  } else {
    step.result = absl::StrCat("REFUSED: lease lost; token ", reply->Get("holder_token"),
                               " holds the lock");
    step.label = absl::StrCat("renew(", token, ") → REFUSED: lease lost");
    step.outcome = Outcome::kRefused;
  }
  timeline().Add(step);
  return reply;
}

absl::StatusOr<Message> Act::Release(ClientProcess& client, Lane lane) {
  absl::StatusOr<Message> reply = Checked(client.Call("release"), client, "release");
  if (!reply.ok()) return reply;
  const uint64_t token = token_[Index(lane)];
  Step step;
  step.actor = lane;
  step.target = Lane::kLockService;
  step.token = token;
  step.action = "release the lock";
  if (reply->ok()) {
    step.result = "released";
    step.label = absl::StrCat("release(", token, ") → OK");
  } else {
    step.result = absl::StrCat("REFUSED: not the holder (token ",
                               reply->Get("holder_token"), " is); nothing released");
    step.label = absl::StrCat("release(", token, ") → REFUSED: not the holder");
    step.outcome = Outcome::kRefused;
  }
  timeline().Add(step);
  return reply;
}

absl::Status Act::Freeze(ClientProcess& client, Lane lane) {
  absl::Status status = client.Freeze();
  if (!status.ok()) return status;
  timeline().Note(lane,
                  absl::StrCat("SIGSTOP (pid ", client.pid(),
                               "): frozen mid-increment, like a long GC pause; "
                               "its lease renewals stop too"),
                  "SIGSTOP: frozen (GC pause)", Outcome::kNote, Span::kFrozenBegin);
  return absl::OkStatus();
}

absl::Status Act::Thaw(ClientProcess& client, Lane lane) {
  // Noted first: once resumed, the client's own events follow at once.
  timeline().Note(lane, "SIGCONT: resumes where it stopped, about to write",
                  "SIGCONT: resumes", Outcome::kNote, Span::kFrozenEnd);
  return client.Thaw();
}

absl::Status Act::WaitForExpiry(uint64_t token) {
  const absl::Time give_up = absl::Now() + setup_.ttl * 3 + absl::Seconds(10);
  for (;;) {
    if (absl::Status s = CheckInterrupted(); !s.ok()) return s;
    absl::StatusOr<client::LockState> state = setup_.lock->Describe(resource_);
    if (!state.ok()) return state.status();
    if (!state->held || state->token != token) break;
    if (absl::Now() > give_up) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the lease with token ", token, " on '", resource_, "' did not expire within ",
          absl::FormatDuration(setup_.ttl * 3 + absl::Seconds(10))));
    }
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, under a deadline
  }
  timeline().Note(Lane::kLockService,
                  absl::StrCat("lease with token ", token,
                               " expired: not renewed within its TTL; the lock is free"),
                  absl::StrCat("lease ", token, " expired"));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> Act::FinalCounter() {
  if (storage_ == Storage::kGateway) {
    absl::StatusOr<client::ReadResult> read =
        setup_.gateway_client->ReadUnfenced(resource_, "counter");
    if (!read.ok()) return read.status();
    return read->found ? ParseCounter(read->value) : 0;
  }
  if (storage_ == Storage::kSqlTable) {
    return ReadSqlCounterUnfenced(setup_.postgres, resource_, "counter");
  }
  absl::StatusOr<std::unique_ptr<CounterStore>> plain =
      NewPlainCounterStore(PlainDbPath(), "counter");
  if (!plain.ok()) return plain.status();
  absl::StatusOr<CounterValue> read = (*plain)->Read(client::Fencing{resource_, 0, {}});
  if (!read.ok()) return read.status();
  return read->value;
}

bool Act::Expect(bool holds, const std::string& what) {
  if (!holds) {
    result_->failures.push_back(what);
    timeline().Say(absl::StrCat("UNEXPECTED: ", what));
  }
  return holds;
}

}  // namespace fencegate::demo
