// Test hooks: failpoints, planted bugs and the lock service's lease history,
// for the torture suite (tests/torture/, docs/torture.md).
//
// They exist only in test builds. tests/torture/CMakeLists.txt compiles the
// servers' sources that hold a hook a second time, with FENCEGATE_TEST_HOOKS
// defined, links them with the production objects of every other source,
// and links fencegate_test_hooks (test_hooks.cc), which adds the flags
// below. Without the definition every macro here compiles to nothing
// (FENCEGATE_PLANTED_BUG to `false`, its name dropped), so the production
// binaries contain no failpoint, no planted bug and none of these flags. In
// server code each hook is one line marked "test builds only"; no header
// may hold one (a header's code must be the same in both builds).
//
// The planted bugs of the cores' decisions (the fence check, the grant
// rule, LockManager's commits and loads) are not hooks in those decisions:
// the test builds link a stand-in for each core's link seam
// (gateway/fenced_store_seams.cc, lockservice/core/lock_manager_seams.cc),
// which calls PlantedBug() itself (tests/torture/planted_*_bugs.cc).
//
// Flags of the test builds (fencegate-lockservice-torture,
// fencegate-gateway-torture):
//   --failpoint_file=PATH  read at every failpoint the thread passes. If it
//       says "crash NAME", the server dies at failpoint NAME: it logs, writes
//       PATH.hit, waits kFailpointCrashDelay (what other threads already
//       handed to the network gets out, as in a crash during a slow fsync)
//       and calls _exit(kFailpointExitCode). If it says "stall NAME", the thread stops
//       at NAME (a stalled disk), writes PATH.hit, and goes on once the file
//       says anything else. "crash NAME SUBJECT" and "stall NAME SUBJECT"
//       act only where the failpoint passes SUBJECT (FailpointOn): e.g. only
//       on the commit that carries one resource's lease. "hold NAME" holds
//       what failpoint NAME guards (FailpointHeld: a burst of the event loop
//       kept open, gathering messages) until the file says anything else;
//       the first time it is asked, it writes PATH.hit.
//   --planted_bug=NAME     switches on one deliberate bug (PlantedBugNames()).
//   --lease_history_file=PATH  the lock service appends one line per lease
//       event: "<CLOCK_MONOTONIC ns>\t<kind>\t<resource>\t<token>\t<ttl ms>
//       \t<holder>", kind = load (state about to be (re)loaded from the
//       store), restore (a lease loaded), grant, release, expire; a grant or
//       restore of a shared lease or a permit says so: grant-shared,
//       restore-permit. One write(2) per line on an O_APPEND file, so a
//       kill -9 loses no line already written.
//
// Thread safety: every function is thread-safe.
#ifndef FENCEGATE_COMMON_TEST_HOOKS_TEST_HOOKS_H_
#define FENCEGATE_COMMON_TEST_HOOKS_TEST_HOOKS_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace fencegate::test_hooks {

// The exit status of a failpoint crash, so a harness tells it from a real one.
inline constexpr int kFailpointExitCode = 86;
inline constexpr absl::Duration kFailpointCrashDelay = absl::Milliseconds(100);

// Acts on the failpoint `name` as --failpoint_file says (see above).
void Failpoint(absl::string_view name);
// Likewise, but if the file names a SUBJECT too, only when
// `has_subject(SUBJECT)`.
void FailpointOn(absl::string_view name,
                 absl::FunctionRef<bool(absl::string_view)> has_subject);

// True while --failpoint_file says "hold NAME" for `name` (see above).
bool FailpointHeld(absl::string_view name);
// True iff --planted_bug names `bug`. Logs once that a bug is planted.
bool PlantedBug(absl::string_view bug);

// Every name --planted_bug accepts.
const std::vector<absl::string_view>& PlantedBugNames();

// Appends one line to --lease_history_file, if set: time, kind, resource,
// token, TTL in ms, holder (tests/torture/history_log.h reads it).
void LeaseEvent(absl::string_view kind, absl::string_view resource, uint64_t token,
                absl::Duration ttl, absl::string_view holder);

}  // namespace fencegate::test_hooks

#ifdef FENCEGATE_TEST_HOOKS
#define FENCEGATE_FAILPOINT(name) ::fencegate::test_hooks::Failpoint(name)
#define FENCEGATE_FAILPOINT_ON(name, has_subject) \
  ::fencegate::test_hooks::FailpointOn(name, has_subject)
#define FENCEGATE_FAILPOINT_HELD(name) ::fencegate::test_hooks::FailpointHeld(name)
#define FENCEGATE_PLANTED_BUG(name) ::fencegate::test_hooks::PlantedBug(name)
#define FENCEGATE_LEASE_EVENT(kind, resource, token, ttl, holder) \
  ::fencegate::test_hooks::LeaseEvent(kind, resource, token, ttl, holder)
#else
#define FENCEGATE_FAILPOINT(name) static_cast<void>(0)
#define FENCEGATE_FAILPOINT_ON(name, has_subject) static_cast<void>(0)
#define FENCEGATE_FAILPOINT_HELD(name) false
#define FENCEGATE_PLANTED_BUG(name) false
#define FENCEGATE_LEASE_EVENT(kind, resource, token, ttl, holder) static_cast<void>(0)
#endif

#endif  // FENCEGATE_COMMON_TEST_HOOKS_TEST_HOOKS_H_
