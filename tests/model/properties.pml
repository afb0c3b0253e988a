/*
 * The properties (docs/model.md, "Properties"), checked where the state
 * they speak of changes. Ghost variables record what has been committed or
 * acknowledged; nothing in the protocol reads them.
 *
 * P1 fence-monotone     no fenced operation (write, fenced read, Fence) is
 *                       committed with a token below one committed before
 *                       on its resource, and the gateway's fence never drops
 * P2 acked-write-kept   the stored value is never below an acknowledged
 *                       write's, across restarts
 * P3 no-lost-increment  the read-modify-write counter is never below the
 *                       number of acknowledged increments
 * P4 tokens-increase    every token the lock service commits (grant or
 *                       expiry mark) is above every token committed before,
 *                       across restarts and leader terms; no client holds a
 *                       token that was not committed
 * P5 one-live-lease     in the lock service's committed view, no lease on a
 *                       resource is committed while another is live there
 *                       (granted, and neither its release nor its expiry
 *                       committed)
 * P6 eventually-granted (LTL, fencegate.pml) under weak fairness
 * P7 expired-fenced     with grant-time fencing: (a) once the follower
 *                       has applied the lock service's positions up to a
 *                       lease's expiry, the gateway refuses that lease's
 *                       token; (b) whenever the stream is live and idle
 *                       (nothing queued, on its way or uncommitted), every
 *                       fence is at least the lock service's committed
 *                       position of its resource; (c) no lease in the lock
 *                       service's committed state is below its resource's
 *                       committed fence position (it would be fenced out
 *                       by its own service)
 * P8-P12                the leader election's (election.pml): leader-per-
 *                       term, terms-disjoint, observer-order,
 *                       deposed-refused, proclaim-durable
 */

hidden byte h_pr;

/* An assertion that names its property in the trail (printf runs only
 * when a trail is replayed, not during the search). */
#define CHECK(cond, what) \
  if \
  :: !(cond) -> printf(what) \
  :: else \
  fi; \
  assert(cond)

#if STALE > 0
int seen[NC * NR];          /* tokens client c saw granted on r, as bits */
#endif

byte g_tokmax;              /* P4: the largest token committed */
byte g_live_tok[NR];        /* P5: the live lease of r (0: none) */
byte g_live_c[NR];
byte g_accmax[NR];          /* P1: largest token of a committed fenced op */
byte g_ackval[NR];          /* P2: largest acknowledged written value */
byte g_incs[NR];            /* P3: acknowledged increments */
#if FOLLOWER
byte g_exp_tok[NR];         /* P7: token of the last committed expiry */
byte g_exp_pos[NR];         /*     and the counter at it (its mark) */
byte g_applied_hi;          /* P7: largest position the follower applied */
#endif

#ifdef LIVE
bit cl_want[NC];            /* P6: asked for the lock, not granted yet */
/* The liveness clients retry a call once its answer cannot come any more
 * (its request or answer lost, the server restarted): the deadline of a
 * real client, which fires eventually, taken at the only moment when
 * waiting longer cannot help. Not a ghost: the clients read it. */
bit cl_lost[NC];
byte cl_tok[NC];            /* the token of the lease client c holds */
#endif

inline call_lost(c) {
#ifdef LIVE
  cl_lost[c - 1] = 1
#else
  skip
#endif
}

/* A restart: the calls in flight died with the process. */
inline calls_died() {
#ifdef LIVE
  for (h_pr : 1 .. NC) {
    if
    :: lw_kind[h_pr - 1] != 0 && la_kind[h_pr - 1] == 0 -> cl_lost[h_pr - 1] = 1
    :: else
    fi
  }
  h_pr = 0
#else
  skip
#endif
}

/* P2 and P3 over the gateway's committed state. */
inline check_values() {
  for (h_pr : 0 .. NR - 1) {
    CHECK(gw_val[h_pr] >= g_ackval[h_pr],
          "VIOLATION P2 acked-write-kept: the stored value is below an acknowledged write\n");
    CHECK(gw_val[h_pr] >= g_incs[h_pr],
          "VIOLATION P3 no-lost-increment: the counter is below the acknowledged increments\n")
  }
  h_pr = 0;
}
