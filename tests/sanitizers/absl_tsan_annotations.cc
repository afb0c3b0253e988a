// Makes absl::Mutex, absl::CondVar, absl::Notification and the reference
// count of absl::Status visible to ThreadSanitizer, in the TSan build
// (FENCEGATE_SANITIZE=thread) only.
//
// Why: Debian's libabsl_synchronization.so is not built with TSan, so TSan
// sees none of the ordering these primitives give (their atomics and futex
// waits run in uninstrumented code): every pair of accesses made under one
// absl::Mutex by two threads would be reported as a race. Suppressing those
// reports would hide real races too.
//
// How: every executable of the TSan build is linked with
// -Wl,--wrap=<symbol> for each function below (tests/sanitizers/
// CMakeLists.txt), so fencegate's calls to, say, absl::Mutex::Lock() reach
// __wrap_<mangled Lock>, which calls the real one (__real_<mangled Lock>) and
// tells TSan about it with the same annotations Abseil itself makes when it
// is built with TSan (absl/base/internal/tsan_mutex_interface.h):
// __tsan_mutex_pre_lock / post_lock around acquiring, pre_unlock /
// post_unlock around releasing. So TSan sees lock and unlock as on any
// pthread mutex: happens-before, lock-order inversions, unlocking a mutex not
// held. Between pre and post TSan ignores memory accesses; that covers the
// absl::Condition predicates the real call evaluates, also those of other
// threads' waiters that an unlocking thread evaluates (Abseil's own TSan
// build ignores them the same way). absl::Notification is annotated as a
// release (Notify) and acquire (the waits, and the inline HasBeenNotified()
// through the atomic flag it reads).
//
// Scope: only calls from objects linked into the executable are wrapped, not
// calls made inside Debian's shared libraries (gRPC's own mutexes stay
// invisible; the TSan tier keeps gRPC out, docs/fuzzing-and-sanitizers.md).
// absl::Status: copies share one representation, freed by the last
// Status::UnrefNonInlined() (in the library) after an acquire-release
// decrement; the wrapper makes that acquire-release on the representation.
// The library's own calls (a shared Status being modified) stay unwrapped.
// Await() and CondVar waits are taken as writer-mode; fencegate never waits
// on a reader lock. absl::BlockingCounter and absl::Barrier are not
// annotated (fencegate's tests do not use them).
//
// tests/sanitizers/tsan_absl_test.cc proves both halves: code ordered by
// these primitives is clean, and races TSan should see are still reported.
#include <sanitizer/tsan_interface.h>

#include <atomic>
#include <cstdint>
#include <mutex>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

// "4absl7debian3": namespace absl and its inline namespace as mangled, from
// the build (CMake reads ABSL_OPTION_INLINE_NAMESPACE_NAME).
#ifndef FENCEGATE_ABSL_MANGLED_NS
#error "FENCEGATE_ABSL_MANGLED_NS must be Abseil's mangled namespaces, e.g. 4absl7debian3"
#endif

// The symbol of absl::<member> (a const one for ABSL_CONST_SYMBOL).
#define ABSL_SYMBOL(member) "_ZN" FENCEGATE_ABSL_MANGLED_NS member
#define ABSL_CONST_SYMBOL(member) "_ZNK" FENCEGATE_ABSL_MANGLED_NS member

// Declares the real function and defines its wrapper, both by symbol name
// (the object is the first argument, as the C++ ABI passes `this`).
#define FENCEGATE_WRAP(ret, name, symbol, ...)               \
  ret Real##name(__VA_ARGS__) __asm__("__real_" symbol); \
  ret Wrap##name(__VA_ARGS__) __asm__("__wrap_" symbol); \
  ret Wrap##name(__VA_ARGS__)

// The TSan runtime's dynamic annotations (its tsan_interface_ann.cpp).
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
extern "C" void AnnotateIgnoreSyncBegin(const char* file, int line);
extern "C" void AnnotateIgnoreSyncEnd(const char* file, int line);

namespace {

using absl::Condition;
using absl::CondVar;
using absl::Duration;
using absl::Mutex;
using absl::Notification;
using absl::Time;

constexpr unsigned kRead = __tsan_mutex_read_lock;
constexpr unsigned kTry = __tsan_mutex_try_lock;
constexpr unsigned kTryFailed = __tsan_mutex_try_lock_failed;

void Locked(Mutex* mu, unsigned flags = 0) { __tsan_mutex_post_lock(mu, flags, 0); }
void Locking(Mutex* mu, unsigned flags = 0) { __tsan_mutex_pre_lock(mu, flags); }
void Unlocking(Mutex* mu, unsigned flags = 0) { __tsan_mutex_pre_unlock(mu, flags); }
void Unlocked(Mutex* mu, unsigned flags = 0) { __tsan_mutex_post_unlock(mu, flags); }

// A wait that releases `mu` and takes it again before returning (Await,
// CondVar::Wait): an unlock, then a lock whose acquiring covers the wait.
void ReleasingToWait(Mutex* mu) {
  Unlocking(mu);
  Unlocked(mu);
  Locking(mu);
}

// The address HasBeenNotified() loads with acquire order: the flag after
// the Notification's mutex (absl/synchronization/notification.h).
void* NotifiedFlag(const Notification* n) {
  return const_cast<char*>(reinterpret_cast<const char*>(n) + sizeof(Mutex));
}
static_assert(sizeof(Notification) == sizeof(Mutex) + alignof(Mutex),
              "absl::Notification is no longer {Mutex, atomic<bool>}: fix NotifiedFlag()");

}  // namespace

// ------------------------------------------------------------------ Mutex

FENCEGATE_WRAP(void, Lock, ABSL_SYMBOL("5Mutex4LockEv"), Mutex* mu) {
  Locking(mu);
  RealLock(mu);
  Locked(mu);
}

FENCEGATE_WRAP(void, ReaderLock, ABSL_SYMBOL("5Mutex10ReaderLockEv"), Mutex* mu) {
  Locking(mu, kRead);
  RealReaderLock(mu);
  Locked(mu, kRead);
}

FENCEGATE_WRAP(bool, TryLock, ABSL_SYMBOL("5Mutex7TryLockEv"), Mutex* mu) {
  Locking(mu, kTry);
  const bool locked = RealTryLock(mu);
  Locked(mu, locked ? kTry : kTry | kTryFailed);
  return locked;
}

FENCEGATE_WRAP(bool, ReaderTryLock, ABSL_SYMBOL("5Mutex13ReaderTryLockEv"), Mutex* mu) {
  Locking(mu, kRead | kTry);
  const bool locked = RealReaderTryLock(mu);
  Locked(mu, locked ? kRead | kTry : kRead | kTry | kTryFailed);
  return locked;
}

FENCEGATE_WRAP(void, Unlock, ABSL_SYMBOL("5Mutex6UnlockEv"), Mutex* mu) {
  Unlocking(mu);
  RealUnlock(mu);
  Unlocked(mu);
}

FENCEGATE_WRAP(void, ReaderUnlock, ABSL_SYMBOL("5Mutex12ReaderUnlockEv"), Mutex* mu) {
  Unlocking(mu, kRead);
  RealReaderUnlock(mu);
  Unlocked(mu, kRead);
}

FENCEGATE_WRAP(void, LockWhen, ABSL_SYMBOL("5Mutex8LockWhenERKNS0_9ConditionE"), Mutex* mu,
               const Condition& cond) {
  Locking(mu);
  RealLockWhen(mu, cond);
  Locked(mu);
}

FENCEGATE_WRAP(bool, LockWhenWithTimeout, ABSL_SYMBOL("5Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE"), Mutex* mu,
               const Condition& cond, Duration timeout) {
  Locking(mu);
  const bool met = RealLockWhenWithTimeout(mu, cond, timeout);
  Locked(mu);  // held whether or not the condition became true
  return met;
}

FENCEGATE_WRAP(bool, LockWhenWithDeadline, ABSL_SYMBOL("5Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE"), Mutex* mu,
               const Condition& cond, Time deadline) {
  Locking(mu);
  const bool met = RealLockWhenWithDeadline(mu, cond, deadline);
  Locked(mu);
  return met;
}

FENCEGATE_WRAP(void, ReaderLockWhen, ABSL_SYMBOL("5Mutex14ReaderLockWhenERKNS0_9ConditionE"),
               Mutex* mu, const Condition& cond) {
  Locking(mu, kRead);
  RealReaderLockWhen(mu, cond);
  Locked(mu, kRead);
}

FENCEGATE_WRAP(bool, ReaderLockWhenWithTimeout, ABSL_SYMBOL("5Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE"),
               Mutex* mu, const Condition& cond, Duration timeout) {
  Locking(mu, kRead);
  const bool met = RealReaderLockWhenWithTimeout(mu, cond, timeout);
  Locked(mu, kRead);
  return met;
}

FENCEGATE_WRAP(bool, ReaderLockWhenWithDeadline, ABSL_SYMBOL("5Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE"),
               Mutex* mu, const Condition& cond, Time deadline) {
  Locking(mu, kRead);
  const bool met = RealReaderLockWhenWithDeadline(mu, cond, deadline);
  Locked(mu, kRead);
  return met;
}

FENCEGATE_WRAP(void, Await, ABSL_SYMBOL("5Mutex5AwaitERKNS0_9ConditionE"), Mutex* mu,
               const Condition& cond) {
  ReleasingToWait(mu);
  RealAwait(mu, cond);
  Locked(mu);
}

FENCEGATE_WRAP(bool, AwaitWithTimeout, ABSL_SYMBOL("5Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE"), Mutex* mu,
               const Condition& cond, Duration timeout) {
  ReleasingToWait(mu);
  const bool met = RealAwaitWithTimeout(mu, cond, timeout);
  Locked(mu);
  return met;
}

FENCEGATE_WRAP(bool, AwaitWithDeadline, ABSL_SYMBOL("5Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE"), Mutex* mu,
               const Condition& cond, Time deadline) {
  ReleasingToWait(mu);
  const bool met = RealAwaitWithDeadline(mu, cond, deadline);
  Locked(mu);
  return met;
}

// The destructor forgets the mutex, so a new one at the same address starts
// clean (and destroying a held mutex is reported).
FENCEGATE_WRAP(void, MutexD1, ABSL_SYMBOL("5MutexD1Ev"), Mutex* mu) {
  __tsan_mutex_destroy(mu, 0);
  RealMutexD1(mu);
}

FENCEGATE_WRAP(void, MutexD2, ABSL_SYMBOL("5MutexD2Ev"), Mutex* mu) {
  __tsan_mutex_destroy(mu, 0);
  RealMutexD2(mu);
}

// ReleasableMutexLock::Release() unlocks inside the library: its first
// member is the Mutex* it holds.
FENCEGATE_WRAP(void, Release, ABSL_SYMBOL("19ReleasableMutexLock7ReleaseEv"),
               absl::ReleasableMutexLock* lock) {
  Mutex* mu = *reinterpret_cast<Mutex**>(lock);
  Unlocking(mu);
  RealRelease(lock);
  Unlocked(mu);
}

// ---------------------------------------------------------------- CondVar

FENCEGATE_WRAP(void, Wait, ABSL_SYMBOL("7CondVar4WaitEPNS0_5MutexE"), CondVar* cv, Mutex* mu) {
  ReleasingToWait(mu);
  RealWait(cv, mu);
  Locked(mu);
}

FENCEGATE_WRAP(bool, WaitWithTimeout, ABSL_SYMBOL("7CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE"),
               CondVar* cv, Mutex* mu, Duration timeout) {
  ReleasingToWait(mu);
  const bool timed_out = RealWaitWithTimeout(cv, mu, timeout);
  Locked(mu);
  return timed_out;
}

FENCEGATE_WRAP(bool, WaitWithDeadline, ABSL_SYMBOL("7CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE"),
               CondVar* cv, Mutex* mu, Time deadline) {
  ReleasingToWait(mu);
  const bool timed_out = RealWaitWithDeadline(cv, mu, deadline);
  Locked(mu);
  return timed_out;
}

// ----------------------------------------------------------- Notification

// The real Notify() wakes the waiters through its mutex's Unlock, inside
// the library (not wrapped), which evaluates each waiter's condition: this
// binary's inline HasBeenNotifiedInternal(), a read of the flag. A waiter
// that saw the flag may meanwhile return and destroy the Notification, even
// one on its stack (LockManager::Sync()); ~Notification() takes the mutex,
// which orders it after that Unlock, but in the library, out of TSan's
// sight. As for a Mutex (above), the accesses the real call makes for its
// conditions are ignored, as Abseil's own TSan build ignores them.
FENCEGATE_WRAP(void, Notify, ABSL_SYMBOL("12Notification6NotifyEv"), Notification* n) {
  __tsan_release(n);
  __tsan_release(NotifiedFlag(n));  // for HasBeenNotified(), inline
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  RealNotify(n);
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
}

FENCEGATE_WRAP(void, WaitForNotification, ABSL_CONST_SYMBOL("12Notification19WaitForNotificationEv"),
               const Notification* n) {
  RealWaitForNotification(n);
  __tsan_acquire(const_cast<Notification*>(n));
}

FENCEGATE_WRAP(bool, WaitForNotificationWithTimeout, ABSL_CONST_SYMBOL("12Notification30WaitForNotificationWithTimeoutENS0_8DurationE"),
               const Notification* n, Duration timeout) {
  const bool notified = RealWaitForNotificationWithTimeout(n, timeout);
  if (notified) __tsan_acquire(const_cast<Notification*>(n));
  return notified;
}

FENCEGATE_WRAP(bool, WaitForNotificationWithDeadline, ABSL_CONST_SYMBOL("12Notification31WaitForNotificationWithDeadlineENS0_4TimeE"),
               const Notification* n, Time deadline) {
  const bool notified = RealWaitForNotificationWithDeadline(n, deadline);
  if (notified) __tsan_acquire(const_cast<Notification*>(n));
  return notified;
}

// ----------------------------------------------------------------- Status

// Every copy's release of the shared representation is an acquire-release
// on its count (absl/status/status.cc), so the copy that frees it has seen
// every other copy's accesses. `rep` is the representation's address + 1.
// The real decrement is inside the library, after the annotations: two
// copies released at once could each annotate before either decrements,
// and the one that then frees would not have acquired the other's release
// (a false race on the free, seen in CI). So the annotations and the real
// call are made one copy at a time, under a lock TSan does not see: it
// orders only these calls, as the count itself does, and adds no other
// happens-before between the threads.
FENCEGATE_WRAP(void, StatusUnref, ABSL_SYMBOL("6Status15UnrefNonInlinedEm"), uintptr_t rep) {
  static std::mutex one_at_a_time;
  void* shared = reinterpret_cast<void*>(rep - 1);
  AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
  one_at_a_time.lock();
  AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
  __tsan_release(shared);
  __tsan_acquire(shared);
  RealStatusUnref(rep);
  AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
  one_at_a_time.unlock();
  AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
}
