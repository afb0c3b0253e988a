/*
 * The lock service: LockManager (lockservice/core/lock_manager*.cc) deciding in
 * memory, its group commit to the LockStore (SQLite, or etcd guarded by the
 * leader's term), timers, restarts and, with NI = 2, leader election
 * (lockservice/etcd/). docs/model.md maps each piece to its code.
 *
 * Time is abstract: a lease may expire, a wait run out, a lock-delay end at
 * any moment. That covers every clock and every TTL, so what is proven
 * holds whatever the timing; liveness is asked only under fairness.
 */

#define QL NC
#define QX(i, r, j) (((i) * NR + (r)) * QL + (j))
/* A queue entry: client, request id, attached (its call is parked here;
 * 0: loaded from the store, its client has not come back). */
#define QE(c, rid, att) ((c) + ((rid) << 2) + ((att) << 6))
#define QC(e) ((e) & 3)
#define QR(e) (((e) >> 2) & 15)
#define QA(e) (((e) >> 6) & 1)
#define ATT 64
#define BIT(rid) (1 << (rid))

/* ---- each instance's memory (LockManager) ---- */
bit ls_lead[NI];          /* it serves (NI = 1: always; NI = 2: it leads) */
byte ls_term[NI];         /* the term it leads (NI = 2) */
byte m_cnt[NI];           /* last_token_ */
byte m_hold[NI * NR];     /* the lease: holder (0: none) */
byte m_tok[NI * NR];      /*            token */
byte m_holds[NI * NR];    /*            hold count */
short m_rids[NI * NR];    /*            request ids applied to it */
byte m_q[NI * NR * QL];   /* the FIFO wait queue, head first */
bit m_delay[NI * NR];     /* lock-delay running */
#if POSITIONS
byte m_pos[NI * NR];      /* fence position, as decided */
#endif
bit m_rdirty[NI * NR];    /* rows of r changed since the last commit */
bit m_dirty[NI];          /* the open batch has something (rows or answers) */
#ifdef MUTANT_SPLIT_DECISION
byte m_split[NI];         /* r + 1: an expiry decided half-way (see EXPIRE) */
#endif
byte m_nb[NI];            /* decisions in the open batch (at most LS_BATCH) */
/* The open batch's answers, one per client (a newer one replaces an older
 * one: the client abandoned that call). */
byte pa_kind[NI * NC];
byte pa_r[NI * NC];
byte pa_key[NI * NC];
byte pa_val[NI * NC];
byte pa_tok[NI * NC];
/* Ghost, about the open batch (properties.pml). */
byte m_blo[NI];           /* the counter when the batch opened */
byte m_endf[NI * NR];     /* the first lease ended on r in the batch */
#if FOLLOWER
byte m_expt[NI * NR];     /* the last expiry on r in the batch: token, */
byte m_expp[NI * NR];     /* and the counter just after it */
#endif

/* ---- the store: what survives (LockStore) ---- */
byte s_cnt;               /* last_token */
byte s_hold[NR];          /* lease rows */
byte s_tok[NR];
byte s_holds[NR];
short s_rids[NR];
byte s_q[NR * QL];        /* waiter rows, in arrival order (no attached bit) */
#if POSITIONS
byte s_pos[NR];           /* fence positions */
#endif

byte ls_restarts = LS_RESTARTS;
#if NI == 2
byte key_term;            /* the leader key's create revision; 0: no key */
byte term_ctr;            /* etcd's revision counter, for new keys */
byte key_losses = LS_RESTARTS;  /* a live leader's session expires */
byte crashes[NI] = LS_RESTARTS;  /* an instance dies (kill -9) */
#endif
#ifdef LIVE
byte expiries = EXPIRIES; /* faults stop: at most this many expiries */
byte wait_ends = WAIT_ENDS;
#endif

/* Scratch, never part of a state: every atomic step resets what it used. */
hidden byte h_ri, h_gx, h_ex, h_lx, h_wx, h_wc, h_wr, h_hj, h_hr, h_qk, h_qf;
hidden byte h_ax, h_aj, h_rx, h_rl, h_cr, h_cx, h_cj, h_cc, h_ca, h_li, h_lr;
hidden byte h_lj;
hidden byte h_k, h_c, h_r, h_a, h_b, h_i;

#if NI == 1 && NR == 1
#define FOR_IR(M) M(0, 0)
#elif NI == 1
#define FOR_IR(M) M(0, 0) M(0, 1)
#elif NR == 1
#define FOR_IR(M) M(0, 0) M(1, 0)
#else
#define FOR_IR(M) M(0, 0) M(0, 1) M(1, 0) M(1, 1)
#endif
#if QL == 2
#define FOR_IRJ(M, i, r) M(i, r, 0) M(i, r, 1)
#else
#define FOR_IRJ(M, i, r) M(i, r, 0) M(i, r, 1) M(i, r, 2)
#endif

/* The answer to client c joins the open batch (LockManager::Reply). One
 * for a call the client no longer waits for is dropped now (it could only
 * be discarded on arrival: a client never waits for a call it gave up on
 * again, request ids being unique). */
inline reply(i, c, k, r, key, val, tok) {
  if
  :: lw_kind[(c) - 1] == k && lw_r[(c) - 1] == r && lw_key[(c) - 1] == key ->
     h_ri = (i) * NC + (c) - 1;
     pa_kind[h_ri] = k;
     pa_r[h_ri] = r;
     pa_key[h_ri] = key;
     pa_val[h_ri] = val;
     pa_tok[h_ri] = tok;
     h_ri = 0
  :: else
  fi;
  m_dirty[i] = 1
}

/* ---- wait queues (lock_manager_queues.cc) ---- */
inline q_find(i, r, c, rid, j) {
  j = QL;
  for (h_qf : 0 .. QL - 1) {
    if
    :: j == QL && m_q[QX(i, r, h_qf)] != 0 && QC(m_q[QX(i, r, h_qf)]) == c &&
       QR(m_q[QX(i, r, h_qf)]) == rid -> j = h_qf
    :: else
    fi
  }
  h_qf = 0
}

/* EraseWaiter: out of the queue, and its row deleted. */
inline q_remove(i, r, j) {
  h_qk = j;
  do
  :: h_qk + 1 < QL -> m_q[QX(i, r, h_qk)] = m_q[QX(i, r, h_qk + 1)]; h_qk++
  :: else -> break
  od;
  m_q[QX(i, r, QL - 1)] = 0;
  m_rdirty[X(i, r)] = 1;
  h_qk = 0
}

/* LinkWaiter at the back, its row persisted (PersistWaiter). */
inline q_append(i, r, e) {
  h_qk = 0;
  do
  :: m_q[QX(i, r, h_qk)] != 0 -> h_qk++
  :: else -> break
  od;
  m_q[QX(i, r, h_qk)] = e;
  m_rdirty[X(i, r)] = 1;
  h_qk = 0
}

/* ---- leases (lock_manager_leases.cc) ---- */

/* Grant: a new token from the counter, the lease row and the fence
 * position join the batch, and so does the answer. */
inline grant(i, r, c, rid) {
  m_cnt[i]++;
  assert(m_cnt[i] < MAXTOK);
  h_gx = X(i, r);
  m_hold[h_gx] = c;
  m_tok[h_gx] = m_cnt[i];
  m_holds[h_gx] = 1;
  m_rids[h_gx] = BIT(rid);
#if POSITIONS
  m_pos[h_gx] = m_cnt[i];
#endif
  printf("MSC: lock service %d: grant r%d to client %d (request %d): token %d\n", i, r, c, rid, m_cnt[i]);
  m_rdirty[h_gx] = 1;
  el_grant(i, r, c);  /* election.pml: the term's first change */
#ifdef MUTANT_REPLY_BEFORE_COMMIT
  /* the answer leaves before the batch that makes it durable */
  ls_answer(c, ACQ, r, rid, 1, m_cnt[i]);
  m_dirty[i] = 1;
#else
  reply(i, c, ACQ, r, rid, 1, m_cnt[i]);
#endif
  h_gx = 0
}

/* Reenter: the holder again; a request id already applied is a retry. */
inline reenter(i, r, rid) {
  h_ex = X(i, r);
  if
  :: m_rids[h_ex] & BIT(rid) -> skip
  :: else ->
     m_holds[h_ex]++;
     m_rids[h_ex] = m_rids[h_ex] | BIT(rid);
     m_rdirty[h_ex] = 1
  fi;
  printf("MSC: lock service %d: reentrant r%d client %d (request %d): token %d, holds %d\n",
         i, r, m_hold[h_ex], rid, m_tok[h_ex], m_holds[h_ex]);
  reply(i, m_hold[h_ex], ACQ, r, rid, m_holds[h_ex], m_tok[h_ex]);
  h_ex = 0
}

/* GrantHolderWaiters: the holder's own parked calls, as reentrant holds. */
inline grant_holder_waiters(i, r) {
  h_hj = 0;
  do
  :: h_hj < QL && m_q[QX(i, r, h_hj)] != 0 ->
     if
     :: QC(m_q[QX(i, r, h_hj)]) == m_hold[X(i, r)] && QA(m_q[QX(i, r, h_hj)]) ->
        h_hr = QR(m_q[QX(i, r, h_hj)]);
        q_remove(i, r, h_hj);
        reenter(i, r, h_hr)
     :: else -> h_hj++
     fi
  :: else -> break
  od;
  h_hj = 0;
  h_hr = 0
}

/* GrantWaiters: the head, if the resource is free, not delayed, and the
 * head's client is there; then the holder's own parked calls. */
inline grant_waiters(i, r) {
  h_wx = X(i, r);
  if
  :: m_hold[h_wx] == 0 && m_q[QX(i, r, 0)] != 0 && !m_delay[h_wx] &&
     QA(m_q[QX(i, r, 0)]) ->
     h_wc = QC(m_q[QX(i, r, 0)]);
     h_wr = QR(m_q[QX(i, r, 0)]);
     q_remove(i, r, 0);
     grant(i, r, h_wc, h_wr)
  :: else
  fi;
  if
  :: m_hold[h_wx] != 0 -> grant_holder_waiters(i, r)
  :: else
  fi;
  h_wx = 0;
  h_wc = 0;
  h_wr = 0
}

/* EndLease: a release, or an expiry, which draws the expiry mark and moves
 * the fence position to it; lock-delay after an expiry only. */
inline end_lease(i, r, expired) {
  h_lx = X(i, r);
  printf("MSC: lock service %d: lease r%d token %d ends (%d: 1 expiry, 0 release)\n",
         i, r, m_tok[h_lx], expired);
  el_end(i, r);  /* election.pml: the term's end */
  if
  :: m_endf[h_lx] == 0 -> m_endf[h_lx] = m_tok[h_lx]
  :: else
  fi;
  if
  :: expired ->
#ifndef MUTANT_EXPIRY_NO_FENCE
     m_cnt[i]++;
     assert(m_cnt[i] < MAXTOK);
#if POSITIONS
     m_pos[h_lx] = m_cnt[i];
#endif
#endif
#if FOLLOWER
     m_expt[h_lx] = m_tok[h_lx];
     m_expp[h_lx] = m_cnt[i];
#endif
#if LOCK_DELAY
     m_delay[h_lx] = 1;
#endif
  :: else
  fi;
  m_hold[h_lx] = 0;
  m_tok[h_lx] = 0;
  m_holds[h_lx] = 0;
  m_rids[h_lx] = 0;
  m_rdirty[h_lx] = 1;
  m_dirty[i] = 1;
  h_lx = 0;
#ifdef MUTANT_NO_HANDOFF_ON_RELEASE
  if
  :: expired -> grant_waiters(i, r)
  :: else  /* the queue waits for the next expiry or lock-delay end */
  fi
#else
  grant_waiters(i, r)
#endif
}

/* ---- the calls (lock_manager.cc, lock_manager_renew_release.cc) ---- */

/* AcquireLocked. */
inline ls_acquire(i, c, r, rid, wait) {
  h_ax = X(i, r);
  q_find(i, r, c, rid, h_aj);
  if
  :: m_hold[h_ax] == c ->
     /* a loaded waiter of the holder whose client is back: answered here */
     if
     :: h_aj < QL -> q_remove(i, r, h_aj)
     :: else
     fi;
     reenter(i, r, rid)
  :: m_hold[h_ax] != c && h_aj < QL ->
     /* Reattach: a retry takes its parked or loaded place over */
     m_q[QX(i, r, h_aj)] = m_q[QX(i, r, h_aj)] | ATT;
     grant_waiters(i, r)
  :: m_hold[h_ax] != c && h_aj == QL && m_hold[h_ax] == 0 && m_q[QX(i, r, 0)] == 0 &&
     !m_delay[h_ax] ->
     grant(i, r, c, rid)
  :: else ->
     if
     :: wait == 0 -> reply(i, c, ACQ, r, rid, 0, m_tok[h_ax])  /* HELD or LOCK_DELAY */
     :: wait != 0 && m_q[QX(i, r, QL - 1)] != 0 ->
        /* RESOURCE_EXHAUSTED (--max_waiters_per_resource), at once */
        ls_answer(c, ACQ, r, rid, 0, 0)
     :: else ->
        q_append(i, r, QE(c, rid, 1));
        printf("MSC: lock service %d: client %d (request %d) waits for r%d\n", i, c, rid, r)
     fi
  fi;
  h_ax = 0;
  h_aj = 0
}

/* Renew: owner-checked; "extend to" moves only the deadline, which is time
 * (abstract here), and a longer TTL, which no decision reads. */
inline ls_renew(i, c, r, t) {
  reply(i, c, REN, r, t, (m_hold[X(i, r)] != 0 && m_tok[X(i, r)] == t -> 1 : 0), t)
}

/* Release: owner-checked; one hold, unless the request id was applied. */
inline ls_release(i, c, r, t, rid) {
  h_rx = X(i, r);
  if
  :: m_hold[h_rx] != 0 && m_tok[h_rx] == t ->
     if
     :: rid != 0 && (m_rids[h_rx] & BIT(rid)) -> skip  /* a retry */
     :: else ->
        m_holds[h_rx]--;
        if
        :: rid != 0 -> m_rids[h_rx] = m_rids[h_rx] | BIT(rid)
        :: else
        fi;
        m_rdirty[h_rx] = 1
     fi;
     h_rl = m_holds[h_rx];
     if
     :: h_rl == 0 -> end_lease(i, r, 0)
     :: else
     fi;
     reply(i, c, REL, r, rid, h_rl + 1, t)
  :: else -> reply(i, c, REL, r, rid, 0, t)  /* LEASE_LOST */
  fi;
  h_rx = 0;
  h_rl = 0
}

/* ---- restarts: LoadFromStore, and the loss of everything in memory ---- */

inline forget(i) {
  for (h_li : 0 .. NR - 1) {
    h_lr = X(i, h_li);
    m_hold[h_lr] = 0;
    m_tok[h_lr] = 0;
    m_holds[h_lr] = 0;
    m_rids[h_lr] = 0;
    m_delay[h_lr] = 0;
    m_rdirty[h_lr] = 0;
    m_endf[h_lr] = 0;
#if POSITIONS
    m_pos[h_lr] = 0;
#endif
#if FOLLOWER
    m_expt[h_lr] = 0;
    m_expp[h_lr] = 0;
#endif
    for (h_lj : 0 .. QL - 1) {
      m_q[QX(i, h_li, h_lj)] = 0
    }
  }
  for (h_li : 1 .. NC) {
    pa_kind[(i) * NC + h_li - 1] = 0;
    pa_r[(i) * NC + h_li - 1] = 0;
    pa_key[(i) * NC + h_li - 1] = 0;
    pa_val[(i) * NC + h_li - 1] = 0;
    pa_tok[(i) * NC + h_li - 1] = 0
  }
  m_cnt[i] = 0;
  m_blo[i] = 0;
  m_dirty[i] = 0;
  m_nb[i] = 0;
#ifdef MUTANT_SPLIT_DECISION
  m_split[i] = 0;
#endif
  el_forget();
#if FOLLOWER
  if
  :: w_st != 0 && w_inst == i -> stream_cut()  /* its feed closes */
  :: else
  fi;
#endif
  h_li = 0;
  h_lr = 0;
  h_lj = 0
}

/* Every lease held for a full TTL again (time is abstract: it may expire
 * at any moment from now on), the counter as committed, the waiters in
 * their order, detached until their clients retry; no lock-delay. */
inline load(i) {
  printf("MSC: lock service %d: loads the store (counter %d)\n", i, s_cnt);
  m_cnt[i] = s_cnt;
  for (h_li : 0 .. NR - 1) {
    h_lr = X(i, h_li);
#ifndef MUTANT_RESTART_FORGETS_LEASES
    m_hold[h_lr] = s_hold[h_li];
    m_tok[h_lr] = s_tok[h_li];
    m_holds[h_lr] = s_holds[h_li];
    m_rids[h_lr] = s_rids[h_li];
    if
    :: s_tok[h_li] > m_cnt[i] -> m_cnt[i] = s_tok[h_li]
    :: else
    fi;
#endif
#if NI == 2
    /* EtcdLockStore::Load also takes the fence positions into the counter */
    if
    :: s_pos[h_li] > m_cnt[i] -> m_cnt[i] = s_pos[h_li]
    :: else
    fi;
#endif
#if POSITIONS
    m_pos[h_lr] = s_pos[h_li];
#endif
    for (h_lj : 0 .. QL - 1) {
      m_q[QX(i, h_li, h_lj)] = s_q[h_li * QL + h_lj]
    }
  }
  el_load();
  m_blo[i] = m_cnt[i];
  h_li = 0;
  h_lr = 0;
  h_lj = 0
}

/* ---- group commit (lock_manager_commit.cc: Flush) ---- */

/* One batch: the counter, the changed rows and positions in one atomic,
 * durable store transaction; then the batch's answers. */
inline do_commit(i) {
  printf("MSC: lock service %d: commit (counter %d)\n", i, m_cnt[i]);
  /* P4 tokens-increase */
  if
  :: m_cnt[i] > m_blo[i] ->
     CHECK(m_blo[i] >= g_tokmax,
           "VIOLATION P4 tokens-increase: a commit carries a token not above every token committed before\n");
     g_tokmax = m_cnt[i]
  :: else
  fi;
#ifndef MUTANT_COUNTER_NOT_PERSISTED
  if
  :: m_cnt[i] > s_cnt -> s_cnt = m_cnt[i]
  :: else
  fi;
#endif
  for (h_cr : 0 .. NR - 1) {
    h_cx = X(i, h_cr);
    if
    :: m_rdirty[h_cx] ->
       s_hold[h_cr] = m_hold[h_cx];
       s_tok[h_cr] = m_tok[h_cx];
       s_holds[h_cr] = m_holds[h_cx];
       s_rids[h_cr] = m_rids[h_cx];
       for (h_cj : 0 .. QL - 1) {
         s_q[h_cr * QL + h_cj] = m_q[QX(i, h_cr, h_cj)] & (ATT - 1)
       }
#if POSITIONS
       if
       :: m_pos[h_cx] > s_pos[h_cr] ->
          s_pos[h_cr] = m_pos[h_cx];
          feed(i, h_cr, m_pos[h_cx])  /* published after the commit */
       :: else
       fi;
#endif
       /* P5 one-live-lease: the live lease leaves only by its committed
        * end; another is committed only when none is live */
       if
       :: g_live_tok[h_cr] != 0 && m_endf[h_cx] == g_live_tok[h_cr] ->
          g_live_tok[h_cr] = 0;
          g_live_c[h_cr] = 0
       :: else
       fi;
       if
       :: m_hold[h_cx] != 0 &&
          (m_tok[h_cx] != g_live_tok[h_cr] || m_hold[h_cx] != g_live_c[h_cr]) ->
          CHECK(g_live_tok[h_cr] == 0,
                "VIOLATION P5 one-live-lease: a lease is committed while another on the resource is live\n");
          g_live_tok[h_cr] = m_tok[h_cx];
          g_live_c[h_cr] = m_hold[h_cx]
       :: else
       fi;
#if FOLLOWER
       if
       :: m_expt[h_cx] != 0 ->
          g_exp_tok[h_cr] = m_expt[h_cx];
          g_exp_pos[h_cr] = m_expp[h_cx]
       :: else
       fi;
       m_expt[h_cx] = 0;
       m_expp[h_cx] = 0;
#endif
       m_endf[h_cx] = 0;
       m_rdirty[h_cx] = 0
    :: else
    fi;
#if POSITIONS
    /* P7 (c) held-not-fenced: a lease in the committed state is never
     * below its resource's committed fence position */
    CHECK(s_hold[h_cr] == 0 || s_tok[h_cr] >= s_pos[h_cr],
          "VIOLATION P7 held-not-fenced: the store holds a lease whose resource's fence position is past its token\n")
#else
    skip
#endif
  }
  for (h_cc : 1 .. NC) {
    h_ca = (i) * NC + h_cc - 1;
    if
    :: pa_kind[h_ca] != 0 ->
       ls_answer(h_cc, pa_kind[h_ca], pa_r[h_ca], pa_key[h_ca], pa_val[h_ca], pa_tok[h_ca]);
       pa_kind[h_ca] = 0;
       pa_r[h_ca] = 0;
       pa_key[h_ca] = 0;
       pa_val[h_ca] = 0;
       pa_tok[h_ca] = 0
    :: else
    fi
  }
  el_commit(i);  /* election.pml: the record's row, then its changes published */
  m_blo[i] = m_cnt[i];
  m_dirty[i] = 0;
  m_nb[i] = 0;
  h_cr = 0;
  h_cx = 0;
  h_cj = 0;
  h_cc = 0;
  h_ca = 0
}
