/*
 * The lock service's threads (lock_service.pml holds its state and
 * decisions): gRPC's handlers, the group-commit thread, the timer thread
 * (and restarts), and with NI = 2 the leader election.
 */

/* gRPC's handlers: each call decided at once, under the manager's mutex. */
inline decide(i) {
  if
  :: h_k == ACQ -> ls_acquire(i, h_c, h_r, h_a, h_b)
#if ELECTION
  :: h_k == REL -> ls_resign(i, h_c, h_r, h_a, h_b)
  :: h_k == PROC -> ls_proclaim(i, h_c, h_r, h_a, h_b)
#else
  :: h_k == REL -> ls_release(i, h_c, h_r, h_a, h_b)
#endif
  :: h_k == REN -> ls_renew(i, h_c, h_r, h_a)
  fi
}

inline handled() {
  h_k = 0; h_c = 0; h_r = 0; h_a = 0; h_b = 0; h_i = 0
}

/* Instance i may decide: it serves, and its open batch has room (no
 * bound in the liveness configuration, where a bound would take turns
 * away from fair processes). */
#ifdef MUTANT_SPLIT_DECISION
#define NOT_SPLIT(i) && m_split[i] == 0
#else
#define NOT_SPLIT(i)
#endif
#ifdef LIVE
#define CAN_DECIDE(i) (ls_lead[i])
inline decided(i) {
  m_dirty[i] = 1
}
#else
#define CAN_DECIDE(i) (ls_lead[i] && m_nb[i] < LS_BATCH NOT_SPLIT(i))
inline decided(i) {
  m_nb[i]++;
  m_dirty[i] = 1
}
#endif

proctype LockHandler() {
end:
  do
  :: d_step { nempty(lsq) && drops > 0 -> drops--; lsq?_, h_c, _, _, _; call_lost(h_c); h_c = 0 }  /* lost */
#if NI == 1
  :: d_step { CAN_DECIDE(0) && nempty(lsq) -> lsq?h_k, h_c, h_r, h_a, h_b; decide(0); decided(0); handled() }
#else
  /* to a leader, or to a standby that forwards it to one */
  :: d_step { CAN_DECIDE(0) && nempty(lsq) -> lsq?h_k, h_c, h_r, h_a, h_b; decide(0); decided(0); handled() }
  :: d_step { CAN_DECIDE(1) && nempty(lsq) -> lsq?h_k, h_c, h_r, h_a, h_b; decide(1); decided(1); handled() }
  /* no leader: UNAVAILABLE, the client retries */
  :: d_step { !ls_lead[0] && !ls_lead[1] && nempty(lsq) -> lsq?_, _, _, _, _ }
#endif
  od
}

/* The group-commit thread: commit, then publish to the feed (one step:
 * what a stream that subscribes in between sees is the same, the events
 * either in its catch-up or queued for it). */
proctype LockCommitter(byte i) {
end:
  do
  :: d_step {
       ls_lead[i] && m_dirty[i] ->
#if NI == 2
       if
#ifndef MUTANT_NO_TERM_GUARD
       :: key_term != ls_term[i] ->
          /* the guarded txn is refused: the term ends, nothing of the
           * batch is applied or answered */
          printf("MSC: lock service %d: commit refused (term %d is over)\n", i, ls_term[i]);
          forget(i);
          ls_lead[i] = 0
#endif
       :: else -> do_commit(i)
       fi
#else
       do_commit(i)
#endif
     }
  od
}

#ifndef MUTANT_SPLIT_DECISION
#define EXPIRE(i, r) \
  :: d_step { CAN_DECIDE(i) && m_hold[X(i, r)] != 0 EXPIRY_BUDGET(i, r) -> end_lease(i, r, 1); decided(i) }
#else
/* The code before ab58e96: the group-commit writer could take a batch
 * after EndLease's first item (the expiry mark's fence position) and
 * before its second (the lease row's deletion); the manager's mutex kept
 * other decisions out meanwhile. Now a decision's items are one group that
 * no batch cuts (LockManager::DecisionLock). */
#define EXPIRE(i, r) \
  :: d_step { CAN_DECIDE(i) && m_hold[X(i, r)] != 0 -> \
       m_cnt[i]++; m_pos[X(i, r)] = m_cnt[i]; \
       m_rdirty[X(i, r)] = 1; m_dirty[i] = 1; m_split[i] = r + 1; \
       printf("MSC: lock service %d: expiry of r%d: its mark %d is queued first\n", i, r, m_cnt[i]) } \
  :: d_step { m_split[i] == r + 1 -> \
       m_cnt[i]--; end_lease(i, r, 1); m_split[i] = 0; decided(i) }
#endif
#define DELAY_END(i, r) \
  :: d_step { CAN_DECIDE(i) && m_delay[X(i, r)] -> m_delay[X(i, r)] = 0; grant_waiters(i, r); decided(i) }
#define WAIT_END(i, r, j) \
  :: d_step { CAN_DECIDE(i) && QA(m_q[QX(i, r, j)]) WAIT_END_BUDGET(m_q[QX(i, r, j)]) -> \
       h_c = QC(m_q[QX(i, r, j)]); \
       h_a = QR(m_q[QX(i, r, j)]); \
       q_remove(i, r, j); \
       reply(i, h_c, ACQ, r, h_a, 0, m_tok[X(i, r)]); \
       decided(i); h_c = 0; h_a = 0 }
#define WAIT_END_ALL(i, r) FOR_IRJ(WAIT_END, i, r)
#define DROP_DETACHED(i, r) \
  :: d_step { CAN_DECIDE(i) && DETACHED(i, r) -> \
       h_b = 0; \
       do \
       :: h_b < QL && m_q[QX(i, r, h_b)] != 0 && !QA(m_q[QX(i, r, h_b)]) -> q_remove(i, r, h_b) \
       :: h_b < QL && m_q[QX(i, r, h_b)] != 0 && QA(m_q[QX(i, r, h_b)]) -> h_b++ \
       :: h_b == QL || m_q[QX(i, r, h_b)] == 0 -> break \
       od; \
       h_b = 0; \
       grant_waiters(i, r); decided(i) }
#if QL == 2
#define DETACHED(i, r) \
  ((m_q[QX(i, r, 0)] != 0 && !QA(m_q[QX(i, r, 0)])) || \
   (m_q[QX(i, r, 1)] != 0 && !QA(m_q[QX(i, r, 1)])))
#else
#define DETACHED(i, r) \
  ((m_q[QX(i, r, 0)] != 0 && !QA(m_q[QX(i, r, 0)])) || \
   (m_q[QX(i, r, 1)] != 0 && !QA(m_q[QX(i, r, 1)])) || \
   (m_q[QX(i, r, 2)] != 0 && !QA(m_q[QX(i, r, 2)])))
#endif
#ifdef LIVE
/* A lease its holder still holds expires at most `expiries` times; one
 * nobody knows of (granted to a call its client gave up on) always may. */
#define KNOWN(i, r) (cl_tok[m_hold[X(i, r)] - 1] == m_tok[X(i, r)])
#define EXPIRY_BUDGET(i, r) && (!KNOWN(i, r) || expiries > 0) -> \
  if :: KNOWN(i, r) -> expiries-- :: else fi
/* A call its client still waits for runs out of wait at most wait_ends
 * times; one the client gave up on (a late duplicate) always may. */
#define ABANDONED(e) (lw_kind[QC(e) - 1] != ACQ || lw_key[QC(e) - 1] != QR(e))
#define WAIT_END_BUDGET(e) && (ABANDONED(e) || wait_ends > 0) -> \
  if :: !ABANDONED(e) -> wait_ends-- :: else fi
#else
#define EXPIRY_BUDGET(i, r)
#define WAIT_END_BUDGET(e)
#endif

/* The timer thread (lease expiry, lock-delay end, wait timeouts, the drop
 * of loaded waiters whose clients did not come back), and restarts. */
proctype LockTimers() {
end:
  do
  FOR_IR(EXPIRE)
#if LOCK_DELAY
  FOR_IR(DELAY_END)
#endif
  FOR_IR(WAIT_END_ALL)
  FOR_IR(DROP_DETACHED)
#if NI == 1
  :: d_step {
       ls_restarts > 0 ->
       ls_restarts--;
       printf("MSC: lock service restarts\n");
       forget(0);
       load(0);
       calls_died()
     }
#endif
  od
}

#if NI == 2
/* LeaderElection: a campaign creates the leader key (a new term) when
 * there is none; the winner loads the store (EtcdLockNode::StartTerm). A
 * session may expire under a live leader (paused, cut off), which learns
 * of it later, or at its next commit (refused by the term guard). */
#define CAMPAIGN(i) \
  :: d_step { key_term == 0 && !ls_lead[i] -> \
       term_ctr++; key_term = term_ctr; ls_term[i] = term_ctr; \
       printf("MSC: lock service %d leads term %d\n", i, term_ctr); \
       forget(i); load(i); ls_lead[i] = 1 }
#define NOTICES(i) printf("MSC: lock service %d learns its term %d is over\n", i, ls_term[i])
#define CRASHES(i) printf("MSC: lock service %d dies (kill -9)\n", i)
proctype LeaderElection() {
end:
  do
  CAMPAIGN(0)
  CAMPAIGN(1)
  :: d_step { key_term != 0 && key_losses > 0 -> key_losses--; key_term = 0; \
       printf("MSC: the leader's session expires (term %d)\n", ls_term[0] + ls_term[1]) }
  :: d_step { ls_lead[0] && key_term != ls_term[0] -> NOTICES(0); forget(0); ls_lead[0] = 0 }
  :: d_step { ls_lead[1] && key_term != ls_term[1] -> NOTICES(1); forget(1); ls_lead[1] = 0 }
  :: d_step {
       ls_lead[0] && crashes[0] > 0 -> crashes[0]--; CRASHES(0);
       if :: key_term == ls_term[0] -> key_term = 0 :: else fi;
       forget(0); ls_lead[0] = 0 }
  :: d_step {
       ls_lead[1] && crashes[1] > 0 -> crashes[1]--; CRASHES(1);
       if :: key_term == ls_term[1] -> key_term = 0 :: else fi;
       forget(1); ls_lead[1] = 0 }
  od
}
#endif
