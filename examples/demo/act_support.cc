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

// Marks `step` refused, as safety requires, in these words.
void Refuse(Step& step, std::string result, std::string label) {
  step.result = std::move(result);
  step.label = std::move(label);
  step.outcome = Outcome::kRefused;
}

// A read or write refused as stale: `call` ("read(7)") is how its label
// names it.
void RefuseStale(const Message& reply, absl::string_view call, Step& step) {
  Refuse(step,
         absl::StrCat("REFUSED: stale token; the fence is at token ",
                      reply.Get("max_token")),
         absl::StrCat(call, " → REFUSED: stale, max ", reply.Get("max_token")));
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

absl::StatusOr<Message> Act::Call(
    ClientProcess& client, Lane lane, const Message& command, absl::string_view doing,
    Lane target, absl::FunctionRef<void(const Message&, Step&)> describe) {
  absl::StatusOr<Message> reply = Checked(client.Call(command), client, doing);
  if (!reply.ok()) return reply;
  Step step;
  step.actor = lane;
  step.target = target;
  step.token = token_[Index(lane)];
  describe(*reply, step);
  timeline().Add(step);
  return reply;
}

absl::StatusOr<Message> Act::Call(
    ClientProcess& client, Lane lane, absl::string_view word, Lane target,
    absl::FunctionRef<void(const Message&, Step&)> describe) {
  Message command;
  command.word = std::string(word);
  return Call(client, lane, command, word, target, describe);
}

absl::StatusOr<Message> Act::Acquire(ClientProcess& client, Lane lane) {
  Message command;
  command.word = "acquire";
  command.Set("ttl_ms", absl::ToInt64Milliseconds(setup_.ttl));
  return Call(
      client, lane, command, "acquire", Lane::kLockService,
      [&](const Message& reply, Step& step) {
        step.action = absl::StrCat("acquire '", resource_, "', TTL ",
                                   absl::FormatDuration(setup_.ttl));
        if (reply.ok()) {
          token_[Index(lane)] = reply.GetUint("token");
          step.token = token_[Index(lane)];
          step.result = absl::StrCat("granted: token ", step.token);
          step.label = absl::StrCat("acquire → token ", step.token);
        } else {
          step.token = 0;  // none granted
          Refuse(
              step,
              absl::StrCat("NOT ACQUIRED: held with token ", reply.Get("holder_token")),
              absl::StrCat("acquire → held by token ", reply.Get("holder_token")));
        }
      });
}

absl::StatusOr<Message> Act::Check(ClientProcess& client, Lane lane) {
  Message command;
  command.word = "check";
  return Call(client, lane, command, "check its lease", lane,
              [](const Message& reply, Step& step) {
                step.action = "checks its lease: Lease::Check()";
                if (reply.ok()) {
                  const std::string left = Secs(reply.GetInt("remaining_ms"));
                  step.result = absl::StrCat("valid, ", left, " left");
                  step.label = absl::StrCat("Check(): valid, ", left, " left");
                } else {
                  Refuse(step, "LOST: the lease expired while it was not looking",
                         "Check(): lease LOST");
                }
              });
}

absl::StatusOr<Message> Act::Read(ClientProcess& client, Lane lane) {
  const bool fenced = this->fenced();
  return Call(client, lane, "read", StoreLane(), [&](const Message& reply, Step& step) {
    step.action = fenced ? "read counter" : "read counter from the file";
    if (reply.ok()) {
      last_read_[Index(lane)] = reply.GetInt("value");
      step.result = absl::StrCat("counter = ", reply.Get("value"));
      step.label = fenced ? absl::StrCat("read(", step.token, ") → ", reply.Get("value"))
                          : absl::StrCat("read → ", reply.Get("value"));
    } else {
      RefuseStale(reply, absl::StrCat("read(", step.token, ")"), step);
    }
  });
}

absl::StatusOr<Message> Act::Write(ClientProcess& client, Lane lane, bool stale) {
  const bool fenced = this->fenced();
  const int64_t read = last_read_[Index(lane)];
  return Call(client, lane, "write", StoreLane(), [&](const Message& reply, Step& step) {
    step.action = absl::StrCat("write counter = ", read + 1, " (read ", read, ", +1)",
                               fenced ? "" : " to the file");
    if (reply.ok()) {
      ++acknowledged_;
      const std::string value = reply.Get("value");
      if (stale) {
        step.result = "ACCEPTED, unchecked: overwrites client 2's write";
        step.label =
            absl::StrCat("write counter=", value, " → accepted: overwrites client 2's");
        step.outcome = Outcome::kDamage;
      } else {
        step.result = absl::StrCat("OK, counter = ", value);
        step.label =
            fenced ? absl::StrCat("write(", step.token, ") counter=", value, " → OK")
                   : absl::StrCat("write counter=", value, " → OK");
      }
    } else {
      RefuseStale(reply, absl::StrCat("write(", step.token, ") counter=", read + 1),
                  step);
    }
  });
}

absl::StatusOr<Message> Act::Renew(ClientProcess& client, Lane lane) {
  return Call(
      client, lane, "renew", Lane::kLockService, [](const Message& reply, Step& step) {
        step.action = "renew its lease";
        if (reply.ok()) {
          step.result = absl::StrCat("renewed for ", Secs(reply.GetInt("ttl_ms")));
          step.label = absl::StrCat("renew(", step.token, ") → OK");
        } else {
          Refuse(step,
                 absl::StrCat("REFUSED: lease lost; token ", reply.Get("holder_token"),
                              " holds the lock"),
                 absl::StrCat("renew(", step.token, ") → REFUSED: lease lost"));
        }
      });
}

absl::StatusOr<Message> Act::Release(ClientProcess& client, Lane lane) {
  return Call(
      client, lane, "release", Lane::kLockService, [](const Message& reply, Step& step) {
        step.action = "release the lock";
        if (reply.ok()) {
          step.result = "released";
          step.label = absl::StrCat("release(", step.token, ") → OK");
        } else {
          Refuse(step,
                 absl::StrCat("REFUSED: not the holder (token ",
                              reply.Get("holder_token"), " is); nothing released"),
                 absl::StrCat("release(", step.token, ") → REFUSED: not the holder"));
        }
      });
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

absl::StatusOr<ActResult> PlayAct(const DemoSetup& setup, const ActScript& script) {
  ActResult result;
  result.title = script.title;
  Act act(setup, script.resource, script.storage, &result);
  act.timeline().BeginSection(result.title, script.intro);
  DEMO_RETURN_IF_ERROR(script.play(act, result));
  return result;
}

absl::StatusOr<PausedHolder> FreezeHolderPastExpiry(Act& act) {
  PausedHolder paused;
  DEMO_ASSIGN_OR_RETURN(c1, act.StartClient(Lane::kClient1));
  paused.c1 = std::move(c1);
  DEMO_ASSIGN_OR_RETURN(c2, act.StartClient(Lane::kClient2));
  paused.c2 = std::move(c2);

  DEMO_ASSIGN_OR_RETURN(grant1, act.Acquire(*paused.c1, Lane::kClient1));
  if (!act.Expect(grant1.ok(), "client 1 acquires the free lock")) return paused;
  paused.t1 = grant1.GetUint("token");
  DEMO_ASSIGN_OR_RETURN(check1, act.Check(*paused.c1, Lane::kClient1));
  act.Expect(check1.ok(), "client 1's lease is valid before the pause");
  DEMO_ASSIGN_OR_RETURN(read1, act.Read(*paused.c1, Lane::kClient1));
  act.Expect(read1.ok(), "client 1 reads the counter");

  DEMO_RETURN_IF_ERROR(act.Freeze(*paused.c1, Lane::kClient1));
  DEMO_RETURN_IF_ERROR(act.WaitForExpiry(paused.t1));

  DEMO_ASSIGN_OR_RETURN(grant2, act.Acquire(*paused.c2, Lane::kClient2));
  if (!act.Expect(grant2.ok(), "client 2 acquires the lock after the expiry")) {
    return paused;
  }
  paused.t2 = grant2.GetUint("token");
  paused.handed_over = true;
  return paused;
}

}  // namespace fencegate::demo
