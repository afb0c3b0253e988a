/*
 * Leader election on the lock service (issue 35), for the configuration
 * `election` (-DCONFIG_ELECTION; docs/model.md, "Leader election").
 *
 * What it models. An election name is a resource (resource 0; the model
 * has one name and one lock-service instance). A candidate campaigns with
 * a waiting Acquire: it queues FIFO for the name's lease, decided, batched,
 * committed, expired and restarted by the lock service of lock_service.pml
 * unchanged. When the lease is granted the candidate leads; its term is
 * the lease's token (the one counter, committed before it is answered) and
 * the change (term, 0, its value) is the term's first. Proclaim(term, v)
 * is accepted only while `term` is the token of the name's current lease:
 * then seq + 1 with v; else LEASE_LOST and nothing changes. Resign(term) is
 * the lease's Release; it or the lease's expiry ends the term with the
 * change (term, seq + 1, no leader), and the next waiting candidate is
 * granted a larger term. The election record (term, seq, value) is a row
 * committed in the lease's batch; each batch's changes are published, in
 * the order decided, after the batch committed. One observer subscribes
 * (and after a cut or a restart of the service resubscribes) with the last
 * (term, seq) it delivered: the stream registers for published changes,
 * then reads the committed record and sends it if it is above that, then
 * the changes published since it registered; the observer drops every
 * change not above the last it delivered. A leader writes through the
 * gateway under its term (one unanswered write per term), at any time,
 * also long after its term ended (a pause): the gateway's fence decides.
 *
 * What it abstracts. Time (as everywhere here: an expiry, a wait's end may
 * happen at any moment, so a leader's own TTL clock and the pushed "your
 * lease ended" are a leader that may stop believing it leads at any
 * moment, or never); the value (a small number naming the candidate and
 * its count of values, VAL); the stream's buffer and the network (two
 * bounded queues; a stream too far behind is cut, and the observer
 * resubscribes); several observers (each is alone with its stream: one
 * stands for all); the server's own dropping of duplicates on the stream
 * (not modelled: it may send a change at or below `after`, which is more
 * behaviour, and the observer's filter is what the property rests on);
 * Describe/Leader queries (committed state, no effect); lock-delay
 * (LOCK_DELAY 0: it only postpones grants); reentrant campaigns, retries
 * and lost requests; two instances on etcd (the `replicated`
 * configuration checks the lock service's terms there, and an election is
 * a lease on it like any other).
 *
 * Properties (checked here; docs/model.md), beside P1, P4 and P5, which
 * hold for the election's leases and the leader's writes as for any:
 *   P8  leader-per-term  the committed changes strictly increase in
 *                        (term, seq); a new term is above every term
 *                        before; a candidate told it leads term T is the
 *                        one T was committed to
 *   P9  terms-disjoint   a new term's first change is committed only after
 *                        the previous term's end (no two terms overlap in
 *                        the service's committed order)
 *   P10 observer-order   the observer's delivered (term, seq) strictly
 *                        increase, and each was committed before it was
 *                        delivered
 *   P11 deposed-refused  a committed change that names a leader names the
 *                        candidate its term was granted to, inside that
 *                        term (before its end committed): a deposed
 *                        leader's Proclaim changes nothing; its late write
 *                        is refused by the gateway once the successor's
 *                        term reached it (that is P1)
 *   P12 proclaim-durable a leader is told its Proclaim was accepted only
 *                        once it is committed (the committed record is at
 *                        or past its (term, seq))
 *
 * Mutants (fencegate.pml lists them): MUTANT_OBSERVER_NO_FILTER (P10),
 * MUTANT_PROCLAIM_NO_EXPIRY_CHECK (P11), MUTANT_PROCLAIM_ANY_OWN_TERM
 * (P11), MUTANT_PUBLISH_BEFORE_COMMIT (P10), MUTANT_TERM_END_NOT_PUBLISHED
 * (P9), MUTANT_ELECT_REPLY_BEFORE_COMMIT (P8), MUTANT_ELECT_FENCE_SEPARATE_TXN
 * (P1, in election_gw), MUTANT_PROCLAIM_REPLY_BEFORE_COMMIT (P12).
 */

#if ELECTION

#if NI != 1 || NR != 1 || ABSTRACT_LOCKS
#error "the election configuration runs one lock-service instance and one election name"
#endif

#define PROC 4  /* lsq!PROC, c, r, term, value; answered with key = value,
                   val = the new seq if accepted, 0: LEASE_LOST */

/* Values: VAL(c, k) is candidate c's k-th value of a term (k = 0: its
 * campaign's); 0: no leader. */
#define VAL(c, k) ((c) * 4 + (k))
#define VOWNER(v) ((v) / 4)
/* (t1, s1) above (t2, s2), lexicographically */
#define LEX_GT(t1, s1, t2, s2) ((t1) > (t2) || ((t1) == (t2) && (s1) > (s2)))

/* ---- the election record of the name ---- */
byte e_t, e_s, e_v;       /* decided (in memory): term, seq, value */
byte se_t, se_s, se_v;    /* committed (the store's row) */
/* The open batch's changes, in the order decided. A decision makes at most
 * two (an end and the next grant), a batch has at most LS_BATCH. */
chan e_batch = [2 * LS_BATCH] of { byte, byte, byte };
#ifdef MUTANT_PROCLAIM_ANY_OWN_TERM
int m_won[NC];            /* the terms each candidate was ever granted */
#endif

/* ---- the observer's stream, the service's side ---- */
byte o_st;                /* 0: none; 1: registered, record not read; 2: live */
byte o_at, o_as;          /* the (term, seq) it resumed after */
chan o_pend = [2] of { byte, byte, byte };  /* published while registering */
chan o_ch = [3] of { byte, byte, byte };    /* sent, on their way */
byte o_cuts = OBS_CUTS;
/* ---- the observer: the last (term, seq) it delivered ---- */
byte ob_t, ob_s;

byte proclaims_left = PROCLAIMS;

/* Ghost (P8-P12): the last committed change, the largest term granted,
 * the largest term ended, the terms committed to each candidate. */
byte g_ct, g_cs, g_cv;
byte g_maxterm;
byte g_ended;
int g_won[NC];

hidden byte h_et, h_es, h_ev;

inline o_cut() {
  printf("MSC: the observer's stream ends\n");
  do
  :: nempty(o_pend) -> o_pend?_, _, _
  :: empty(o_pend) -> break
  od;
  do
  :: nempty(o_ch) -> o_ch?_, _, _
  :: empty(o_ch) -> break
  od;
  o_st = 0;
  o_at = 0;
  o_as = 0
}

/* A committed change goes to the stream: queued behind the record while
 * the stream registers, sent when live; a stream that cannot take it is
 * too far behind and is cut. */
inline el_publish(t, s, v) {
  if
  :: o_st == 1 ->
     if
     :: nfull(o_pend) -> o_pend!t, s, v
     :: full(o_pend) -> o_cut()
     fi
  :: o_st == 2 ->
     if
     :: nfull(o_ch) -> o_ch!t, s, v
     :: full(o_ch) -> o_cut()
     fi
  :: else
  fi
}

/* A change decided: it joins the open batch. */
inline el_change(t, s, v) {
  printf("MSC: election: change (term %d, seq %d, value %d) decided\n", t, s, v);
  assert(nfull(e_batch));
  e_batch!t, s, v;
#ifdef MUTANT_PUBLISH_BEFORE_COMMIT
  el_publish(t, s, v)
#else
  skip
#endif
}

/* From grant(): the lease's token is the term; the campaign's value. */
inline el_grant(i, r, c) {
  e_t = m_cnt[i];
  e_s = 0;
  e_v = VAL(c, 0);
#ifdef MUTANT_PROCLAIM_ANY_OWN_TERM
  m_won[(c) - 1] = m_won[(c) - 1] | (1 << e_t);
#endif
  el_change(e_t, e_s, e_v)
}

/* From end_lease() (a resign is the lease's release, or its expiry),
 * before the lease is cleared: the term ends. */
inline el_end(i, r) {
  assert(e_t == m_tok[X(i, r)] && e_v != 0);
#ifndef MUTANT_TERM_END_NOT_PUBLISHED
  e_s++;
  e_v = 0;
  el_change(e_t, e_s, e_v)
#else
  /* the lease ends, the record still names its leader */
  skip
#endif
}

#ifdef MUTANT_PROCLAIM_NO_EXPIRY_CHECK
/* the record's term, whether or not its lease is still there */
#define PROCLAIM_OK(i, r, c, t) (e_t == (t))
#elif defined(MUTANT_PROCLAIM_ANY_OWN_TERM)
/* any term the candidate was ever granted */
#define PROCLAIM_OK(i, r, c, t) (((m_won[(c) - 1] >> (t)) & 1) && m_hold[X(i, r)] != 0)
#else
/* the token of the name's current, unexpired lease */
#define PROCLAIM_OK(i, r, c, t) (m_hold[X(i, r)] != 0 && m_tok[X(i, r)] == (t))
#endif

/* Proclaim(term, value). */
inline ls_proclaim(i, c, r, t, v) {
  if
  :: PROCLAIM_OK(i, r, c, t) ->
     e_s++;
     e_v = v;
     m_rdirty[X(i, r)] = 1;
     el_change(e_t, e_s, e_v);
#ifdef MUTANT_PROCLAIM_REPLY_BEFORE_COMMIT
     ls_answer(c, PROC, r, v, e_s, t)  /* answered before the batch commits */
#else
     reply(i, c, PROC, r, v, e_s, t)
#endif
  :: else ->
     printf("MSC: election: proclaim of client %d under term %d refused (LEASE_LOST)\n", c, t);
     reply(i, c, PROC, r, v, 0, t)
  fi
}

/* Resign(term): the lease's Release, which ends it whatever its hold
 * count (a candidate that campaigned again while it led was answered with
 * its own term, a reentrant hold). */
inline ls_resign(i, c, r, t, rid) {
  if
  :: m_hold[X(i, r)] != 0 && m_tok[X(i, r)] == (t) ->
     end_lease(i, r, 0);
     reply(i, c, REL, r, rid, 1, t)
  :: else -> reply(i, c, REL, r, rid, 0, t)  /* LEASE_LOST */
  fi
}

/* A restart: the decided record and the open batch's changes are lost,
 * the stream ends; then the record is loaded. */
inline el_forget() {
  e_t = 0;
  e_s = 0;
  e_v = 0;
  do
  :: nempty(e_batch) -> e_batch?_, _, _
  :: empty(e_batch) -> break
  od;
  if
  :: o_st != 0 -> o_cut()
  :: else
  fi
}

inline el_load() {
  e_t = se_t;
  e_s = se_s;
  e_v = se_v
}

/* P8, P9, P11 over one committed change, in the order decided. */
inline el_committed(t, s, v) {
  CHECK(LEX_GT(t, s, g_ct, g_cs),
        "VIOLATION P8 leader-per-term: a committed change is not above the one committed before\n");
  if
  :: s == 0 ->
     CHECK(t > g_maxterm,
           "VIOLATION P8 leader-per-term: a term is granted that is not above every term before\n");
     CHECK(g_cv == 0,
           "VIOLATION P9 terms-disjoint: a term is granted while the previous term has not ended\n");
     g_maxterm = t;
     g_won[VOWNER(v) - 1] = g_won[VOWNER(v) - 1] | (1 << t)
  :: s != 0 && v == 0 -> g_ended = t
  :: s != 0 && v != 0 ->
     CHECK(t > g_ended && ((g_won[VOWNER(v) - 1] >> t) & 1),
           "VIOLATION P11 deposed-refused: a proclaim is committed outside its leader's term\n")
  fi;
  g_ct = t;
  g_cs = s;
  g_cv = v
}

/* From do_commit(): the record's row is written with the batch; then its
 * changes are published, in order. */
inline el_commit(i) {
  se_t = e_t;
  se_s = e_s;
  se_v = e_v;
  do
  :: nempty(e_batch) ->
     e_batch?h_et, h_es, h_ev;
     el_committed(h_et, h_es, h_ev);
#ifndef MUTANT_PUBLISH_BEFORE_COMMIT
     el_publish(h_et, h_es, h_ev)
#endif
  :: empty(e_batch) -> break
  od;
  h_et = 0;
  h_es = 0;
  h_ev = 0
}

/* P10: the observer delivers a change. */
inline el_deliver(t, s, v) {
  printf("MSC: observer delivers (term %d, seq %d, value %d)\n", t, s, v);
  CHECK(LEX_GT(t, s, ob_t, ob_s),
        "VIOLATION P10 observer-order: the observer delivers a change not above the last it delivered\n");
  CHECK(LEX_GT(g_ct, g_cs, t, s) || (g_ct == t && g_cs == s && g_cv == v),
        "VIOLATION P10 observer-order: the observer delivers a change that was not committed\n");
  ob_t = t;
  ob_s = s
}

/* The observer and its stream. */
proctype Observer() {
end:
  do
  /* (re)subscribe with the last (term, seq) delivered */
  :: d_step {
       o_st == 0 ->
       o_at = ob_t;
       o_as = ob_s;
       o_st = 1;
       printf("MSC: observer subscribes after (term %d, seq %d)\n", o_at, o_as)
     }
  /* the stream reads the committed record: sent if above `after`, then
   * what was published since it registered */
  :: d_step {
       o_st == 1 ->
       if
       :: LEX_GT(se_t, se_s, o_at, o_as) -> o_ch!se_t, se_s, se_v
       :: else
       fi;
       do
       :: nempty(o_pend) -> o_pend?h_et, h_es, h_ev; o_ch!h_et, h_es, h_ev
       :: empty(o_pend) -> break
       od;
       o_st = 2;
       h_et = 0;
       h_es = 0;
       h_ev = 0
     }
  :: d_step {
       nempty(o_ch) ->
       o_ch?h_et, h_es, h_ev;
#ifndef MUTANT_OBSERVER_NO_FILTER
       if
       :: LEX_GT(h_et, h_es, ob_t, ob_s) -> el_deliver(h_et, h_es, h_ev)
       :: else  /* at or below what it delivered: dropped */
       fi;
#else
       el_deliver(h_et, h_es, h_ev);
#endif
       h_et = 0;
       h_es = 0;
       h_ev = 0
     }
  :: d_step { o_st != 0 && o_cuts > 0 -> o_cuts--; o_cut() }  /* the network */
  od
}

/* ---- candidates ---- */
#define E_IDLE 0
#define E_CAMPAIGN 1
#define E_LEADING 2
#define E_PROCLAIM 3

/* The grant reached candidate c: P8's last part (checked before P4's, so
 * that a grant answered before its commit is named as the election's). */
inline el_leads(c, t) {
  printf("MSC: candidate %d leads: term %d\n", c, t);
  CHECK(((g_won[(c) - 1] >> (t)) & 1),
        "VIOLATION P8 leader-per-term: a candidate is told it leads a term not committed to it\n");
  CHECK(t <= g_tokmax,
        "VIOLATION P4 tokens-increase: a client holds a token that was never committed\n")
}

inline el_call(c, k, key) {
  lw_kind[(c) - 1] = k;
  lw_r[(c) - 1] = 0;
  lw_key[(c) - 1] = key
}

inline el_call_done(c) {
  lw_kind[(c) - 1] = 0;
  lw_r[(c) - 1] = 0;
  lw_key[(c) - 1] = 0;
  la_kind[(c) - 1] = 0;
  la_val[(c) - 1] = 0;
  la_tok[(c) - 1] = 0
}

/* A candidate: campaigns (a waiting Acquire), leads, proclaims, writes
 * through the gateway under its term, resigns; stops believing it leads
 * at any moment (told its lease ended, or its own clock), or never. */
proctype Candidate(byte c) {
  byte ph;   /* phase */
  byte t;    /* the term it believes it leads (0: none) */
  byte rid;  /* the last request id */
  byte k;    /* values proclaimed in this term */
#if GATEWAY
  bit wrote; /* its write under t is sent */
#endif
end:
  do
  :: d_step {
       ph == E_IDLE && calls_left > 0 && nfull(lsq) ->
       calls_left--;
       rid++;
       el_call(c, ACQ, rid);
       lsq!ACQ, c, 0, rid, 1;
       ph = E_CAMPAIGN
     }
  :: d_step {
       ph == E_CAMPAIGN && la_kind[c - 1] != 0 ->
       if
       :: la_val[c - 1] > 0 ->
          t = la_tok[c - 1];
          el_leads(c, t);
          k = 0;
#if GATEWAY
          wrote = 0;
#endif
          ph = E_LEADING
       :: else -> ph = E_IDLE  /* its wait ran out */
       fi;
       el_call_done(c)
     }
  /* gives up on its campaign (the parked call may still be granted, to
   * nobody: that lease expires); worth it only with a campaign left */
  :: d_step { ph == E_CAMPAIGN && la_kind[c - 1] == 0 && calls_left > 0 -> el_call_done(c); ph = E_IDLE }
  :: d_step {
       ph == E_LEADING && proclaims_left > 0 && nfull(lsq) ->
       proclaims_left--;
       k++;
       el_call(c, PROC, VAL(c, k));
       lsq!PROC, c, 0, t, VAL(c, k);
       ph = E_PROCLAIM
     }
  :: d_step {
       ph == E_PROCLAIM && la_kind[c - 1] != 0 ->
       if
       :: la_val[c - 1] != 0 ->
          /* P12: accepted, so committed: the record is at or past it */
          CHECK(!LEX_GT(t, la_val[c - 1], g_ct, g_cs),
                "VIOLATION P12 proclaim-durable: a leader is told its proclaim was accepted before it was committed\n");
          ph = E_LEADING
       :: else -> t = 0; ph = E_IDLE  /* LEASE_LOST: it no longer leads */
       fi;
       el_call_done(c)
     }
  :: d_step { ph == E_PROCLAIM && la_kind[c - 1] == 0 -> el_call_done(c); ph = E_LEADING }  /* gives up */
  /* resigns: the answer changes nothing it does */
  :: d_step { ph == E_LEADING && nfull(lsq) -> rid++; lsq!REL, c, 0, t, rid; t = 0; ph = E_IDLE }
  /* told its lease ended, or its clock says so */
  :: d_step { ph == E_LEADING && calls_left > 0 -> t = 0; ph = E_IDLE }
#if GATEWAY
  :: d_step { ph == E_LEADING && !wrote && nfull(gwq) -> gwq!WRITE, c, 0, t, t; wrote = 1 }
#endif
  od
}

#else  /* !ELECTION: the lock service's hooks do nothing */

inline el_grant(i, r, c) { skip }
inline el_end(i, r) { skip }
inline el_forget() { skip }
inline el_load() { skip }
inline el_commit(i) { skip }

#endif
