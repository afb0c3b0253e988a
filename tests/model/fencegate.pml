/*
 * fencegate's lease and fence protocol, for spin. docs/model.md has the
 * properties, the bounds and their numbers, and the map from every part
 * of the model to the code it stands for; ./scripts/model-check runs it.
 *
 * Processes: the clients (client.pml); the lock service (lock_service.pml:
 * gRPC's handlers, the group-commit thread, the timer thread, restarts,
 * and with NI = 2 two instances on one shared store, each leading in turn
 * under a term guard); the WatchFences stream (fence_stream.pml); the
 * gateway, its fence follower and the stream's reactor (gateway.pml); with
 * CONFIG_ELECTION, candidates and an observer of the leader election
 * instead of the clients (election.pml).
 * Safety properties are assertions where the state they speak of changes
 * (properties.pml); the liveness one is the LTL formula at the end.
 *
 * Everything is set by -D on spin's command line: a preset (CONFIG_LOCK,
 * CONFIG_LOCK_STALE, CONFIG_FENCE, CONFIG_FOLLOWER, CONFIG_REPLICATED,
 * CONFIG_LIVE, CONFIG_ELECTION: what ctest runs), any knob of the
 * defaults below on top, and at most one mutant:
 *   MUTANT_ACCEPT_FENCE_MINUS_ONE  the gateway accepts token = fence - 1
 *   MUTANT_FENCE_SEPARATE_TXN      the fence check reads the committed fence,
 *                                  not the batch's own (a separate txn)
 *   MUTANT_FENCED_READ_NO_RAISE    a fenced read does not raise the fence
 *   MUTANT_CACHE_TRUSTED           the gateway's fence cache decides
 *                                  acceptances too (GW_CACHE; caught beside
 *                                  GW2, in one batch, after a restart)
 *   MUTANT_COUNTER_NOT_PERSISTED   batches commit without the token counter
 *   MUTANT_RESTART_FORGETS_LEASES  a restart does not load the leases
 *   MUTANT_REPLY_BEFORE_COMMIT     a grant is answered before its commit
 *   MUTANT_EXPIRY_NO_FENCE         an expiry draws no mark, moves no fence
 *   MUTANT_SCAN_BEFORE_SUBSCRIBE   WatchFences reads the store, then
 *                                  subscribes to the feed
 *   MUTANT_NO_TERM_GUARD           a deposed leader's commits succeed
 *   MUTANT_NO_HANDOFF_ON_RELEASE   a release does not serve the wait queue
 *   MUTANT_SPLIT_DECISION          a batch is cut inside an expiry's decision
 *                                  (the code before ab58e96)
 * and in the election configuration (CONFIG_ELECTION, election.pml):
 *   MUTANT_OBSERVER_NO_FILTER      the observer delivers every change it
 *                                  receives, also one at or below the last
 *   MUTANT_PROCLAIM_NO_EXPIRY_CHECK  Proclaim checks the term against the
 *                                  record's, not the current lease's
 *   MUTANT_PROCLAIM_ANY_OWN_TERM   Proclaim accepts any term the candidate
 *                                  was ever granted
 *   MUTANT_PUBLISH_BEFORE_COMMIT   a change is published when decided
 *   MUTANT_TERM_END_NOT_PUBLISHED  a term's end makes no change
 *   MUTANT_ELECT_REPLY_BEFORE_COMMIT  a campaign's grant is answered
 *                                  before its commit (MUTANT_REPLY_BEFORE_COMMIT)
 *   MUTANT_PROCLAIM_REPLY_BEFORE_COMMIT  a Proclaim is answered before its
 *                                  commit
 *   MUTANT_ELECT_FENCE_SEPARATE_TXN   the gateway checks a leader's write
 *                                  against the committed fence only
 *                                  (MUTANT_FENCE_SEPARATE_TXN)
 */

/* ---- Presets: the configurations scripts/model-check and ctest run.
 * Each sets what it leaves different from the defaults below; -D on the
 * command line overrides either. */
#if defined(CONFIG_LOCK)
/* The lock service alone: P4, P5. Reentrancy, retries with one request
 * id, wait queues, a restart, a lost request. */
#ifndef GATEWAY
#define GATEWAY 0
#endif
#ifndef CALLS
#define CALLS 3
#endif
#ifndef STALE
#define STALE 0
#endif
#ifndef LOCK_DELAY
#define LOCK_DELAY 0
#endif
#elif defined(CONFIG_LOCK_STALE)
/* The lock service against old tokens: a stale Release (no request id), an
 * abandoned Acquire arriving late; lock-delay; a restart. P4, P5. */
#ifndef GATEWAY
#define GATEWAY 0
#endif
#ifndef REENTRANT
#define REENTRANT 0
#endif
#ifndef RETRIES
#define RETRIES 0
#endif
#ifndef STALE_RENEW
#define STALE_RENEW 0
#endif
#ifndef STALE
#define STALE 2
#endif
#elif defined(CONFIG_FENCE)
/* The gateway, against any leases at all (the gateway must be safe
 * whatever the lock service does): P1, P2, P3. */
#ifndef ABSTRACT_LOCKS
#define ABSTRACT_LOCKS 1
#endif
#ifndef FOLLOWER
#define FOLLOWER 0
#endif
#ifndef LS_RESTARTS
#define LS_RESTARTS 0
#endif
#ifndef CALLS
#define CALLS 3
#endif
#ifndef STALE
#define STALE 1
#endif
#elif defined(CONFIG_FOLLOWER)
/* Grant-time fencing: the lock service, its feed and WatchFences, the
 * gateway and its follower, a restart of each server. P7 (and P1-P5). */
#ifndef FOLLOWER
#define FOLLOWER 1
#endif
#ifndef RMW
#define RMW 0
#endif
#ifndef REENTRANT
#define REENTRANT 0
#endif
#ifndef WAITERS
#define WAITERS 0
#endif
#ifndef LOCK_DELAY
#define LOCK_DELAY 0
#endif
#ifndef RETRIES
#define RETRIES 0
#endif
#ifndef GW_RETRIES
#define GW_RETRIES 0
#endif
#ifndef DROPS
#define DROPS 0
#endif
#ifndef STALE
#define STALE 0
#endif
#ifndef STREAM_CUTS
#define STREAM_CUTS 0
#endif
#elif defined(CONFIG_REPLICATED)
/* Two lock-service instances on one store, leader terms and the guard;
 * a lost session under a live leader, a crash of each. P4, P5. */
#ifndef NI
#define NI 2
#endif
#ifndef GATEWAY
#define GATEWAY 0
#endif
#ifndef REENTRANT
#define REENTRANT 0
#endif
#ifndef RETRIES
#define RETRIES 0
#endif
#ifndef STALE
#define STALE 0
#endif
#ifndef LOCK_DELAY
#define LOCK_DELAY 0
#endif
#ifndef DROPS
#define DROPS 0
#endif
#elif defined(CONFIG_ELECTION)
/* Leader election on the lock service (election.pml): candidates and one
 * observer (OBSERVER), or the leaders' writes through the gateway
 * (GATEWAY; both at once are a larger bound). P8-P12 (and P1, P4, P5). */
#define ELECTION 1
#ifndef GATEWAY
#define GATEWAY 0     /* the leaders' writes: election_gw, --large */
#endif
#ifndef PROCLAIMS
#define PROCLAIMS 1
#endif
#ifndef FOLLOWER
#define FOLLOWER 0
#endif
#ifndef REENTRANT
#define REENTRANT 0
#endif
#ifndef LOCK_DELAY
#define LOCK_DELAY 0
#endif
#ifndef RETRIES
#define RETRIES 0
#endif
#ifndef GW_RETRIES
#define GW_RETRIES 0
#endif
#ifndef STALE
#define STALE 0
#endif
#ifndef DROPS
#define DROPS 0
#endif
#ifndef GW_RESTARTS
#define GW_RESTARTS 0
#endif
#ifndef STREAM_CUTS
#define STREAM_CUTS 0
#endif
#elif defined(CONFIG_LIVE)
/* P6 under weak fairness. */
#define LIVE
#ifndef GATEWAY
#define GATEWAY 0
#endif
#ifndef ROUNDS
#define ROUNDS 1
#endif
#endif

/* ---- Defaults. */
#ifndef NC
#define NC 2          /* clients (2 or 3) */
#endif
#ifndef NR
#define NR 1          /* resources (1 or 2) */
#endif
#ifndef NI
#define NI 1          /* lock-service instances: 1, or 2 on a shared store */
#endif
#ifndef GATEWAY
#define GATEWAY 1     /* the gateway, and clients that use it */
#endif
#ifndef ABSTRACT_LOCKS
#define ABSTRACT_LOCKS 0  /* leases from an abstract source, not the service */
#endif
#ifndef FOLLOWER
#if GATEWAY && !ABSTRACT_LOCKS
#define FOLLOWER 1    /* grant-time fencing */
#else
#define FOLLOWER 0
#endif
#endif
#ifndef RMW
#define RMW 1         /* a read-modify-write per lease (else one Fence) */
#endif
#ifndef REENTRANT
#define REENTRANT 1   /* reentrant Acquires */
#endif
#ifndef WAITERS
#define WAITERS 1     /* Acquires that wait (else try-locks only) */
#endif
#ifndef LOCK_DELAY
#define LOCK_DELAY 1
#endif
#ifndef LS_BATCH
#define LS_BATCH 2    /* decisions per group-commit batch */
#endif
/* Budgets, shared by the clients. */
#ifndef CALLS
#define CALLS 2       /* Acquire calls, reentrant ones included */
#endif
#ifndef RETRIES
#define RETRIES 1     /* resends of a lock-service call, same request id */
#endif
#ifndef GW_RETRIES
#define GW_RETRIES 1  /* resends of a write */
#endif
#ifndef STALE
#define STALE 1       /* sends with old tokens */
#endif
#ifndef STALE_LOCK
#define STALE_LOCK 1  /* ... to the lock service too (Release, late Acquire) */
#endif
#ifndef STALE_RENEW
#define STALE_RENEW 1 /* ... and Renew */
#endif
/* Faults. */
#ifndef LS_RESTARTS
#define LS_RESTARTS 1 /* NI = 2: crashes of each instance, lost sessions */
#endif
#ifndef GW_RESTARTS
#define GW_RESTARTS 1
#endif
#ifndef STREAM_CUTS
#define STREAM_CUTS 1
#endif
#ifndef DROPS
#define DROPS 1       /* lost requests */
#endif
#ifndef GW_CACHE
#define GW_CACHE 1    /* the gateway's fence cache */
#endif
#ifndef GW2
#define GW2 0         /* a second gateway on the same storage */
#endif
#ifndef ELECTION
#define ELECTION 0    /* leader election (CONFIG_ELECTION) */
#endif
#ifndef PROCLAIMS
#define PROCLAIMS 2   /* ELECTION: Proclaim calls, shared by the candidates */
#endif
#ifndef OBSERVER
#define OBSERVER 1    /* ELECTION: the observer and its stream */
#endif
#ifndef OBS_CUTS
#define OBS_CUTS 1    /* ELECTION: cuts of the observer's stream */
#endif
#ifndef EXPIRIES
#define EXPIRIES 1    /* LIVE: expiries of leases their holders still use */
#endif
#ifndef WAIT_ENDS
#define WAIT_ENDS 1   /* LIVE: waits that run out for a client still waiting */
#endif

/* What the configuration needs kept. */
#define POSITIONS (FOLLOWER || NI == 2)
/* Mutants of the lock service and the gateway, run in the election
 * configurations under names of their own. */
#ifdef MUTANT_ELECT_REPLY_BEFORE_COMMIT
#define MUTANT_REPLY_BEFORE_COMMIT
#endif
#ifdef MUTANT_ELECT_FENCE_SEPARATE_TXN
#define MUTANT_FENCE_SEPARATE_TXN
#endif
#if STALE == 0 || ABSTRACT_LOCKS
#undef STALE_LOCK
#define STALE_LOCK 0
#endif

#include "messages.pml"
#include "properties.pml"
#include "fence_stream.pml"
#include "lock_service.pml"
#include "election.pml"
#include "lock_threads.pml"
#include "gateway.pml"
#include "client.pml"

init {
  atomic {
    byte c;
#if NI == 1
    ls_lead[0] = 1;  /* one instance on its own store: it always serves */
#endif
    for (c : 1 .. NC) {
#if ELECTION
      run Candidate(c);
#else
      run Client(c);
#endif
    }
#if ELECTION && OBSERVER
    run Observer();
#endif
#if !ABSTRACT_LOCKS
    run LockHandler();
    for (c : 0 .. NI - 1) {
      run LockCommitter(c);
    }
    run LockTimers();
#if NI == 2
    run LeaderElection();
#endif
#endif
#if GATEWAY
    run Gateway();
#endif
#if GATEWAY && GW2
    run Gateway2();
#endif
#if FOLLOWER
    run FenceWatch();
#endif
  }
}

#ifdef LIVE
/* A client that asks for the lock is granted it, provided the holders
 * before it release (every client here releases what it holds) and faults
 * stop (the budgets). Checked with pan -a -f (weak fairness). */
#if NC == 2
ltl eventually_granted {
  [] ((cl_want[0] -> <> !cl_want[0]) && (cl_want[1] -> <> !cl_want[1]))
}
#else
ltl eventually_granted {
  [] ((cl_want[0] -> <> !cl_want[0]) && (cl_want[1] -> <> !cl_want[1]) &&
      (cl_want[2] -> <> !cl_want[2]))
}
#endif
#endif
