/*
 * The gateway: FencedStore's group commit over a StorageBackend that keeps
 * the backend contract (gateway/fenced_store.cc, gateway/storage_backend.h,
 * gateway/sqlite_storage.cc), and the fence follower (gateway/
 * fence_follower.cc). Per resource the store keeps the fence and one
 * object, the read-modify-write counter. Ops of a batch are applied in
 * arrival order, each checked and applied in one step against the batch's
 * own transaction; the batch commits as one unit, and only then are its
 * answers sent. A restart loses the open batch, never a committed one.
 *
 * GW_CACHE: the fence cache (gateway/fence_cache.h): a lower bound of each
 * resource's committed fence, learned after a commit from the resources the
 * batch decided on, emptied by a restart. An op whose token is below it is
 * refused at once, without joining a batch; any other op is decided by the
 * transaction as before (MUTANT_CACHE_TRUSTED: by the cache).
 * GW2: a second gateway on the same storage (PostgreSQL), without a cache:
 * it takes requests from the same queue and commits each as a batch of its
 * own, between the first gateway's batches (PostgreSQL's row locks order
 * them; the model takes the coarser order). Its raises never reach the
 * first gateway's cache.
 */

#define GB 2        /* ops per batch (--max_batch) */

byte gw_fence[NR];  /* committed */
byte gw_val[NR];
byte tx_fence[NR];  /* the open batch's transaction */
byte tx_val[NR];
byte gb;            /* ops in the open batch */
/* The batch's answers, one per client. */
byte ga_kind[NC];
byte ga_r[NC];
byte ga_t[NC];
byte ga_st[NC];
byte ga_v[NC];
/* Ghost: the batch's accepted client ops, in order, for P1 and P7. */
byte gb_n;
byte gb_r[GB];
byte gb_t[GB];
bit gb_p7[GB];
/* The follower: every position up to f_applied has its fence committed;
 * f_infl is the message whose fences are in the open batch. */
byte f_applied;
byte f_infl;
byte gw_restarts = GW_RESTARTS;
#if GW_CACHE
byte gc_floor[NR];  /* the fence cache: committed fences it learned */
bit gb_seen[NR];    /* resources the open batch decided on */
#endif
bit h_g2;           /* GW2: the second gateway is deciding */

hidden byte h_gk, h_gc, h_gr, h_gt, h_gv, h_gf, h_gi, h_p[2];

inline answer(c, k, r, t, st, v) {
  ga_kind[c - 1] = k;
  ga_r[c - 1] = r;
  ga_t[c - 1] = t;
  ga_st[c - 1] = st;
  ga_v[c - 1] = v
}

/* StorageBackend::Apply: read the fence, refuse if stale, else raise it
 * and apply, in one step (contract 1-3). */
inline gw_apply(k, c, r, t, v) {
  h_gf = tx_fence[r];
#if GW_CACHE
  gb_seen[r] = !h_g2 || gb_seen[r];
#ifdef MUTANT_CACHE_TRUSTED
  if
  :: !h_g2 -> h_gf = gc_floor[r]  /* at or above it: let in */
  :: else
  fi;
#endif
#endif
#ifdef MUTANT_FENCE_SEPARATE_TXN
  h_gf = gw_fence[r];  /* checked against the committed fence */
#endif
#ifdef MUTANT_ACCEPT_FENCE_MINUS_ONE
  if
  :: t + 1 == h_gf -> h_gf = t
  :: else
  fi;
#endif
  printf("MSC: gateway: client %d op %d (1 write, 2 read, 3 fence) r%d token %d (fence %d)\n",
         c, k, r, t, tx_fence[r]);
  if
  :: t < h_gf -> answer(c, k, r, t, ABORTED, tx_fence[r])
  :: else ->
     if
     :: k == WRITE ->
        tx_fence[r] = t;
        tx_val[r] = v;
        answer(c, k, r, t, OK, v)
     :: k == READ ->
#ifndef MUTANT_FENCED_READ_NO_RAISE
        if
        :: t > h_gf -> tx_fence[r] = t
        :: else
        fi;
#endif
        answer(c, k, r, t, OK, tx_val[r])
     :: k == FENCE ->
        if
        :: t > h_gf -> tx_fence[r] = t
        :: else
        fi;
        answer(c, k, r, t, OK, t)
     fi;
     gb_r[gb_n] = r;
     gb_t[gb_n] = t;
#if FOLLOWER
     /* P7: the follower had applied this lease's expiry already */
     gb_p7[gb_n] = (g_exp_tok[r] != 0 && t <= g_exp_tok[r] && g_applied_hi >= g_exp_pos[r]);
#endif
     gb_n++
  fi
}

/* FencedStore::RaiseFence: up to the position; a fence already past it is
 * what was asked for. */
inline gw_raise(r, p) {
#if GW_CACHE
  gb_seen[r] = 1;
#endif
  if
  :: p > tx_fence[r] -> tx_fence[r] = p
  :: else
  fi
}

/* CommitBatch, then the answers; the follower's applied position moves
 * once its fences are committed. */
inline gw_commit() {
  printf("MSC: gateway: commit\n");
  for (h_gi : 0 .. NR - 1) {
    CHECK(tx_fence[h_gi] >= gw_fence[h_gi],
          "VIOLATION P1 fence-monotone: the gateway's fence went down\n");
    gw_fence[h_gi] = tx_fence[h_gi];
    gw_val[h_gi] = tx_val[h_gi];
#if GW_CACHE
    if
    :: gb_seen[h_gi] && gw_fence[h_gi] > gc_floor[h_gi] -> gc_floor[h_gi] = gw_fence[h_gi]
    :: else
    fi;
    gb_seen[h_gi] = 0
#else
    skip
#endif
  }
  h_gi = 0;
  do
  :: h_gi < gb_n ->
     CHECK(gb_t[h_gi] >= g_accmax[gb_r[h_gi]],
           "VIOLATION P1 fence-monotone: an op was accepted with a token below one accepted before\n");
     g_accmax[gb_r[h_gi]] = gb_t[h_gi];
#if FOLLOWER
     CHECK(!gb_p7[h_gi],
           "VIOLATION P7 expired-fenced: an expired lease's token was accepted after the follower applied its expiry\n");
#endif
     gb_r[h_gi] = 0;
     gb_t[h_gi] = 0;
     gb_p7[h_gi] = 0;
     h_gi++
  :: else -> break
  od;
  gb_n = 0;
  check_values();
  for (h_gi : 1 .. NC) {
    if
    :: ga_kind[h_gi - 1] != 0 ->
       gw_answer(h_gi, ga_kind[h_gi - 1], ga_r[h_gi - 1], ga_t[h_gi - 1],
                 ga_st[h_gi - 1], ga_v[h_gi - 1]);
       ga_kind[h_gi - 1] = 0;
       ga_r[h_gi - 1] = 0;
       ga_t[h_gi - 1] = 0;
       ga_st[h_gi - 1] = 0;
       ga_v[h_gi - 1] = 0
    :: else
    fi
  }
  if
  :: f_infl > f_applied -> f_applied = f_infl
  :: else
  fi;
#if FOLLOWER
  if
  :: f_applied > g_applied_hi -> g_applied_hi = f_applied
  :: else
  fi;
#endif
  f_infl = 0;
  gb = 0;
  h_gi = 0;
#if FOLLOWER
  check_caught_up()
#endif
}

/* A crash and restart: the open batch and its answers are gone; the
 * follower starts over from position 0 (it keeps nothing on disk). */
inline gw_restart() {
  printf("MSC: gateway restarts\n");
  for (h_gi : 0 .. NR - 1) {
    tx_fence[h_gi] = gw_fence[h_gi];
    tx_val[h_gi] = gw_val[h_gi];
#if GW_CACHE
    gc_floor[h_gi] = 0;  /* memory: it starts empty */
    gb_seen[h_gi] = 0
#else
    skip
#endif
  }
  for (h_gi : 0 .. GB - 1) {
    gb_r[h_gi] = 0;
    gb_t[h_gi] = 0;
    gb_p7[h_gi] = 0
  }
  for (h_gi : 1 .. NC) {
    ga_kind[h_gi - 1] = 0;
    ga_r[h_gi - 1] = 0;
    ga_t[h_gi - 1] = 0;
    ga_st[h_gi - 1] = 0;
    ga_v[h_gi - 1] = 0
  }
  gb_n = 0;
  gb = 0;
  f_applied = 0;
  f_infl = 0;
#if FOLLOWER
  if
  :: w_st != 0 -> stream_cut()
  :: else
  fi;
#endif
  check_values();
  h_gi = 0
}

proctype Gateway() {
end:
  do
  :: d_step { nempty(gwq) && drops > 0 -> drops--; gwq?_, _, _, _, _ }  /* lost */
  :: d_step {
       gb < GB && nempty(gwq) ->
       gwq?h_gk, h_gc, h_gr, h_gt, h_gv;
#if GW_CACHE
       if
       :: h_gt < gc_floor[h_gr] ->  /* refused at once, by the cache */
          printf("MSC: gateway: client %d token %d refused by the cache (fence %d)\n",
                 h_gc, h_gt, gc_floor[h_gr]);
          gw_answer(h_gc, h_gk, h_gr, h_gt, ABORTED, gc_floor[h_gr])
       :: else ->
          gw_apply(h_gk, h_gc, h_gr, h_gt, h_gv);
          gb++
       fi;
#else
       gw_apply(h_gk, h_gc, h_gr, h_gt, h_gv);
       gb++;
#endif
       h_gk = 0; h_gc = 0; h_gr = 0; h_gt = 0; h_gv = 0; h_gf = 0
     }
  :: d_step { gb > 0 -> gw_commit() }
  :: d_step { gw_restarts > 0 -> gw_restarts--; gw_restart() }
#if FOLLOWER
  /* the follower reads the next message only once the last one committed */
  :: d_step {
       gb < GB && f_infl == 0 && nempty(fch) ->
       fch?h_p[0], h_p[1];
       printf("MSC: follower: raise fences to %d, %d\n", h_p[0], h_p[1]);
       for (h_gi : 0 .. NR - 1) {
         gw_raise(h_gi, h_p[h_gi]);
         if
         :: h_p[h_gi] > f_infl -> f_infl = h_p[h_gi]
         :: else
         fi
       }
       gb++;
       h_p[0] = 0; h_p[1] = 0; h_gi = 0
     }
  /* (re)connect: WatchFences(after = f_applied) to a serving instance */
  :: d_step { w_st == 0 && f_infl == 0 && ls_lead[0] -> stream_open(0) }
#if NI == 2
  :: d_step { w_st == 0 && f_infl == 0 && ls_lead[1] -> stream_open(1) }
#endif
#endif
  od
}

#if GW2
/* The second gateway: each request a transaction of its own, committed at
 * once, while the first gateway has no batch open. */
proctype Gateway2() {
end:
  do
  :: d_step {
       gb == 0 && nempty(gwq) ->
       gwq?h_gk, h_gc, h_gr, h_gt, h_gv;
       printf("MSC: second gateway:\n");
       h_g2 = 1;
       gw_apply(h_gk, h_gc, h_gr, h_gt, h_gv);
       gb++;
       gw_commit();
       h_g2 = 0;
       h_gk = 0; h_gc = 0; h_gr = 0; h_gt = 0; h_gv = 0; h_gf = 0
     }
  od
}
#endif

#if FOLLOWER
/* The lock service's WatchFences reactor for the follower's stream
 * (fence_stream.pml; declared here, after everything it reads). */
proctype FenceWatch() {
end:
  do
  :: d_step { w_st == 1 && empty(fch) -> catch_up() }
  :: d_step { w_st == 2 && empty(fch) && PENDING -> send_pending() }  /* Pump */
#ifdef MUTANT_SCAN_BEFORE_SUBSCRIBE
  :: d_step { w_st == 3 -> printf("MSC: WatchFences subscribes\n"); w_st = 2; check_caught_up() }  /* ... subscribes later */
#endif
  :: d_step { w_st != 0 && cuts > 0 -> cuts--; stream_cut() }
  od
}
#endif
