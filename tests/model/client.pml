/*
 * Clients (client/lock_client.*, client/lease.*, client/gateway_client.*,
 * and the torture suite's worker, tests/torture/worker.cc). A client may
 * stop at any point for any time (interleaving), give up on any answer and
 * retry with the same request id or move on, keep using a lease after it
 * expired, and send any token it ever saw. Each lease it gets is used for
 * at most one read-modify-write of the resource's counter: a fenced read,
 * then a write of the value + 1 under the same token.
 */

hidden byte h_val, h_tok, h_v;

/* The tokens client c saw granted on resource r, as bits. */
#define SEEN(c, r) seen[((c) - 1) * NR + (r)]

/* pt := any token client c saw granted on resource pr (the guard says
 * there is one). Locals, not scratch: the choice branches, and spin
 * restores on backtracking only what is in the state. */
inline pick_seen(c, pr, pt) {
  pt = MAXTOK;
  do
  :: ((SEEN(c, pr) >> pt) & 1) == 0 -> pt--
  :: ((SEEN(c, pr) >> pt) & 1) -> break
  :: ((SEEN(c, pr) >> pt) & 1) && (SEEN(c, pr) & ((1 << pt) - 1)) != 0 -> pt--
  od
}

#if NR == 1
#define PICK_R(c) (SEEN(c, 0) != 0) -> pr = 0
#else
#define PICK_R(c) \
  (SEEN(c, 0) != 0 || SEEN(c, 1) != 0) -> \
  if \
  :: SEEN(c, 0) != 0 -> pr = 0 \
  :: SEEN(c, 1) != 0 -> pr = 1 \
  fi
#endif

#define STALE_OK (ph == IDLE || ph == HOLDING) && stale_left > 0
/* Late and stale sends, answered to nobody: an old token to the gateway
 * (Fence) or to the lock service (Renew, Release without a request id),
 * the last write again, an abandoned Acquire arriving late. */
#if GATEWAY && STALE > 0
#if RMW
#define STALE_WRITE \
  :: d_step { STALE_OK && wt != 0 && nfull(gwq) -> stale_left--; gwq!WRITE, c, wr, wt, wv }
#else
#define STALE_WRITE
#endif
#define STALE_GATEWAY(c) \
  :: atomic { STALE_OK && nfull(gwq) && PICK_R(c); pick_seen(c, pr, pt); \
       d_step { stale_left--; gwq!FENCE, c, pr, pt, 0; pt = 0; pr = 0 } } \
  STALE_WRITE
#else
#define STALE_GATEWAY(c)
#endif
#if GATEWAY
#define CLEAR_RMW rmw = 0
#else
#define CLEAR_RMW skip
#endif
#if STALE_LOCK && STALE > 0
#if STALE_RENEW
#define STALE_RENEW_SEND(c) \
  :: atomic { STALE_OK && nfull(lsq) && PICK_R(c); pick_seen(c, pr, pt); \
       d_step { stale_left--; lsq!REN, c, pr, pt, 0; pt = 0; pr = 0 } }
#else
#define STALE_RENEW_SEND(c)
#endif
#define STALE_LOCKSERVICE(c) \
  STALE_RENEW_SEND(c) \
  :: atomic { STALE_OK && nfull(lsq) && PICK_R(c); pick_seen(c, pr, pt); \
       d_step { stale_left--; lsq!REL, c, pr, pt, 0; pt = 0; pr = 0 } } \
  :: d_step { STALE_OK && lrid != 0 && nfull(lsq) -> \
       stale_left--; lsq!ACQ, c, lr, lrid, 0; lr = 0; lrid = 0 }
#else
#define STALE_LOCKSERVICE(c)
#endif
#define STALE_SENDS(c) STALE_GATEWAY(c) STALE_LOCKSERVICE(c)

/* A grant reached client c. P4's other half: no token leaves the lock
 * service before it is durable. */
inline saw_grant(c, r, tok) {
  CHECK(tok <= g_tokmax,
        "VIOLATION P4 tokens-increase: a client holds a token that was never committed\n");
#if STALE > 0
  SEEN(c, r) = SEEN(c, r) | (1 << tok);
#endif
}

/* A fresh request id (4 bits in a queue entry, 15 in a lease's set). */
#define NEXT_RID rid++; assert(rid < 15)

/* Waiting for a call's answer, and done with it. */
inline ls_call(c, k, r, key) {
  lw_kind[c - 1] = k;
  lw_r[c - 1] = r;
  lw_key[c - 1] = key
}
inline ls_done(c) {
  lw_kind[c - 1] = 0;
  lw_r[c - 1] = 0;
  lw_key[c - 1] = 0;
  la_kind[c - 1] = 0;
  la_val[c - 1] = 0;
  la_tok[c - 1] = 0
}
inline gw_call(c, k, r, t) {
  gw_kind[c - 1] = k;
  gw_r[c - 1] = r;
  gw_t[c - 1] = t
}
inline gw_done(c) {
  gw_kind[c - 1] = 0;
  gw_r[c - 1] = 0;
  gw_t[c - 1] = 0;
  ga_in[c - 1] = 0;
  ga_val[c - 1] = 0
}

#ifndef LIVE

/* Client phases. */
#define IDLE 0
#define ACQUIRING 1
#define HOLDING 2
#define READING 3
#define WRITING 4
#define RELEASING 5

inline lease_gone() {
  CLEAR_RMW; t = 0; holds = 0; pw = 0; r = 0; ph = IDLE
}

proctype Client(byte c) {
  byte ph;      /* phase */
  byte r;       /* the resource of the call or the lease */
  byte t;       /* the lease's token, 0: none */
  byte holds;   /* its holds, as the last answer said */
  byte rid;     /* the last request id used */
  bit pw;       /* its wait: 0 try-lock, 1 park */
#if STALE_LOCK
  byte lr, lrid;    /* the last abandoned Acquire */
#endif
#if STALE > 0
  byte pr, pt;      /* a token picked for a stale send (0 between steps) */
#endif
#if GATEWAY
  bit rmw;      /* the read-modify-write (or Fence) under t is done */
#endif
#if GATEWAY && RMW
  byte wr, wt, wv;  /* the last write sent */
#endif

end:
  do
#if ABSTRACT_LOCKS
  /* ---- a lease from any lock service: a fresh token, whoever else holds
   * one (the gateway must be safe whatever the leases do) */
  :: atomic {
       ph == IDLE && calls_left > 0 ->
       select (r : 0 .. NR - 1);
       d_step {
         calls_left--;
         tok_ctr++;
         g_tokmax = tok_ctr;
         saw_grant(c, r, tok_ctr);
         t = tok_ctr;
         rmw = 0;
         holds = 1;
         ph = HOLDING
       }
     }
  :: d_step { ph == HOLDING -> lease_gone() }  /* done with it, or it expired */
#else
  /* ---- Acquire: a new lease, or (holding) a reentrant one */
  :: atomic {
       ph == IDLE && calls_left > 0 && nfull(lsq) ->
       select (r : 0 .. NR - 1);
#if WAITERS
       if
       :: pw = 0
       :: pw = 1
       fi;
#endif
       d_step {
         calls_left--; NEXT_RID;
         ls_call(c, ACQ, r, rid);
         lsq!ACQ, c, r, rid, pw;
         ph = ACQUIRING
       }
     }
#if REENTRANT
  :: d_step {
       ph == HOLDING && holds == 1 && calls_left > 0 && nfull(lsq) ->
       calls_left--; NEXT_RID; pw = 0;
       ls_call(c, ACQ, r, rid);
       lsq!ACQ, c, r, rid, 0;
       ph = ACQUIRING
     }
#endif
  :: d_step {
       ph == ACQUIRING && la_kind[c - 1] != 0 ->
       h_val = la_val[c - 1];
       h_tok = la_tok[c - 1];
       ls_done(c);
       if
       :: h_val > 0 ->
          printf("MSC: client %d holds r%d: token %d, holds %d\n", c, r, h_tok, h_val);
          saw_grant(c, r, h_tok);
#if GATEWAY
          if
          :: h_tok != t -> rmw = 0
          :: else
          fi;
#endif
          t = h_tok;
          holds = h_val;
          ph = HOLDING
       :: else ->  /* not acquired */
          if
          :: t != 0 -> ph = HOLDING
          :: else -> lease_gone()
          fi
       fi;
       h_val = 0; h_tok = 0
     }
  :: d_step {
       ph == ACQUIRING && la_kind[c - 1] == 0 && retries_left > 0 && nfull(lsq) ->
       retries_left--; lsq!ACQ, c, r, rid, pw
     }
  :: d_step {
       /* gives up: the call may still be granted, unknown to the client */
       ph == ACQUIRING && la_kind[c - 1] == 0 ->
       ls_done(c);
#if STALE_LOCK
       lr = r; lrid = rid;
#endif
       if
       :: t != 0 -> ph = HOLDING
       :: else -> lease_gone()
       fi
     }
  /* ---- holding */
  :: d_step {
       ph == HOLDING && nfull(lsq) ->
       NEXT_RID;
       ls_call(c, REL, r, rid);
       lsq!REL, c, r, t, rid;
       ph = RELEASING
     }
  :: d_step { ph == HOLDING -> lease_gone() }  /* walks away; the lease expires */
  /* ---- Release */
  :: d_step {
       ph == RELEASING && la_kind[c - 1] != 0 ->
       h_val = la_val[c - 1];
       ls_done(c);
       if
       :: h_val > 1 -> holds = h_val - 1; ph = HOLDING
       :: else -> lease_gone()  /* released, or LEASE_LOST: gone either way */
       fi;
       h_val = 0
     }
  :: d_step {
       ph == RELEASING && la_kind[c - 1] == 0 && retries_left > 0 && nfull(lsq) ->
       retries_left--; lsq!REL, c, r, t, rid
     }
  :: d_step {
       ph == RELEASING && la_kind[c - 1] == 0 ->
       ls_done(c); lease_gone()
     }
#endif  /* ABSTRACT_LOCKS */
#if GATEWAY && !RMW
  /* ---- Fence, once per lease (what a new holder does first), unanswered */
  :: d_step { ph == HOLDING && !rmw && nfull(gwq) -> gwq!FENCE, c, r, t, 0; rmw = 1 }
#endif
#if GATEWAY && RMW
  /* ---- the read-modify-write, once per lease */
  :: d_step {
       ph == HOLDING && !rmw && nfull(gwq) ->
       gw_call(c, READ, r, t);
       gwq!READ, c, r, t, 0;
       ph = READING
     }
  :: d_step {
       ph == READING && ga_in[c - 1] != 0 && nfull(gwq) ->
       if
       :: ga_in[c - 1] == OK ->  /* then writes the value + 1 */
          wr = r; wt = t; wv = ga_val[c - 1] + 1;
          gw_done(c);
          gw_call(c, WRITE, wr, wt);
          gwq!WRITE, c, wr, wt, wv;
          ph = WRITING
       :: else -> gw_done(c); rmw = 1; ph = HOLDING
       fi
     }
  :: d_step { ph == READING && ga_in[c - 1] == 0 -> gw_done(c); rmw = 1; ph = HOLDING }
  :: d_step {
       ph == WRITING && ga_in[c - 1] != 0 ->
       if
       :: ga_in[c - 1] == OK ->
          printf("MSC: client %d: write of %d to r%d under token %d acknowledged\n", c, wv, wr, wt);
          g_incs[wr]++;
          if
          :: wv > g_ackval[wr] -> g_ackval[wr] = wv
          :: else
          fi;
          check_values()
       :: else
       fi;
       gw_done(c); rmw = 1; ph = HOLDING
     }
  :: d_step {
       ph == WRITING && ga_in[c - 1] == 0 && gw_retries_left > 0 && nfull(gwq) ->
       gw_retries_left--; gwq!WRITE, c, wr, wt, wv
     }
  :: d_step {  /* gives up: unknown outcome */
       ph == WRITING && ga_in[c - 1] == 0 -> gw_done(c); rmw = 1; ph = HOLDING
     }
#endif
  STALE_SENDS(c)
  od
}

#else  /* LIVE */

#ifndef ROUNDS
#define ROUNDS 2
#endif

/* A client of the liveness configuration: acquire (waiting), hold,
 * release, ROUNDS times; a call whose answer cannot come any more (lost,
 * or the server restarted) is retried with the same request id. */
proctype Client(byte c) {
  byte t, rid, round;
  do
  :: round < ROUNDS ->
     atomic {
       nfull(lsq) -> round++; rid++; cl_want[c - 1] = 1;
       ls_call(c, ACQ, 0, rid);
       lsq!ACQ, c, 0, rid, 1
     };
     do
     :: atomic {
          la_kind[c - 1] != 0 ->
          if
          :: la_val[c - 1] > 0 -> t = la_tok[c - 1]; cl_tok[c - 1] = t; cl_want[c - 1] = 0; ls_done(c); break
          :: else -> la_kind[c - 1] = 0; la_val[c - 1] = 0; la_tok[c - 1] = 0;
             lsq!ACQ, c, 0, rid, 1  /* the wait ran out: again */
          fi
        }
     :: d_step { cl_lost[c - 1] && nfull(lsq) -> cl_lost[c - 1] = 0; lsq!ACQ, c, 0, rid, 1 }
     od;
     atomic { nfull(lsq) -> rid++; ls_call(c, REL, 0, rid); lsq!REL, c, 0, t, rid };
     do
     :: atomic {
          la_kind[c - 1] != 0 ->
          if
          :: la_val[c - 1] > 1 ->
             rid++; ls_done(c); ls_call(c, REL, 0, rid); lsq!REL, c, 0, t, rid
          :: else -> t = 0; cl_tok[c - 1] = 0; ls_done(c); break
          fi
        }
     :: d_step { cl_lost[c - 1] && nfull(lsq) -> cl_lost[c - 1] = 0; lsq!REL, c, 0, t, rid }
     od
  :: else -> break
  od
}

#endif
