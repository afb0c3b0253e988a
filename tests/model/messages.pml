/*
 * Messages and channels. Clients are 1..NC (0: nobody), resources 0..NR-1,
 * tokens 1..MAXTOK (0: none), request ids 1..15 (0: none given).
 *
 * The network: one FIFO channel into each server, shared by the clients;
 * answers travel in slots (below). Delay is interleaving. Loss is a server
 * dropping a request it takes (budget DROPS), or a client giving up on a
 * call whose answer is still on its way (the answer is then dropped).
 * Reordering is a client sending an older request again later (a retry,
 * or a STALE send), after a newer one. Across clients the shared FIFO
 * order is send order, and since a client can only have sent after it
 * learned something, every arrival order that causality allows is some
 * interleaving of the sends (docs/model.md, "What the model abstracts").
 */

#define MAXTOK 30

/* Per instance i and resource r. */
#define X(i, r) ((i) * NR + (r))

/* Lock-service requests: { kind, client, resource, a, b } */
#define ACQ 1   /* a = request id, b = wait (0: try-lock, 1: park) */
#define REL 2   /* a = token, b = request id */
#define REN 3   /* a = token */
/* Lock-service answers: kind, resource, key, val, token
 *   ACQ: key = request id, val = hold count (0: not acquired), token
 *   REL: key = request id, val = holds left + 1 (0: lease lost)
 *   REN: key = token, val = 1 renewed, 0 lease lost */

/* Gateway requests: { kind, client, resource, token, value } */
#define WRITE 1
#define READ 2  /* a fenced read (token > 0) */
#define FENCE 3
/* Gateway answers: status, value */
#define OK 1
#define ABORTED 2  /* stale token: nothing changed */

#define LSQ (NC + 1)
#define GWQ (NC + 1)

chan lsq = [LSQ] of { byte, byte, byte, byte, byte };
chan gwq = [GWQ] of { byte, byte, byte, byte, byte };

/* Answers. A client has at most one call of each server in flight (what
 * gRPC's unary calls give it), and gRPC hands an answer only to the call
 * it belongs to: the answer to a call the client gave up on is discarded.
 * So an answer travels in a slot of its client, and only if the client
 * still waits for that call (kind, resource, key) when it is sent. */
byte lw_kind[NC];  /* the lock-service call client c waits for (0: none) */
byte lw_r[NC];
byte lw_key[NC];
byte la_kind[NC];  /* its answer, arrived (0: none yet) */
byte la_val[NC];
byte la_tok[NC];
byte gw_kind[NC];  /* the gateway call client c waits for (0: none) */
byte gw_r[NC];
byte gw_t[NC];
byte ga_in[NC];    /* its answer, arrived: status (0: none yet) */
byte ga_val[NC];

/* Delivers a lock-service answer to client c (1..NC) if it waits for it. */
inline ls_answer(c, k, r, key, val, tok) {
  if
  :: lw_kind[c - 1] == k && lw_r[c - 1] == r && lw_key[c - 1] == key ->
     la_kind[c - 1] = k;
     la_val[c - 1] = val;
     la_tok[c - 1] = tok
  :: else
  fi
}

inline gw_answer(c, k, r, t, st, v) {
  if
  :: gw_kind[c - 1] == k && gw_r[c - 1] == r && gw_t[c - 1] == t ->
     ga_in[c - 1] = st;
     ga_val[c - 1] = v
  :: else
  fi
}

/* The WatchFences stream: one message carries the new fence position of
 * each resource (0: none in this message). */
chan fch = [1] of { byte, byte };

/* Budgets for the whole run, shared by the clients (what is left of
 * them): Acquire calls, lost requests, resends of a call in flight (lock
 * service, gateway), stale sends. */
byte calls_left = CALLS;
#if ABSTRACT_LOCKS
byte tok_ctr;  /* the abstract lock service's counter */
#endif
byte drops = DROPS;
byte retries_left = RETRIES;
byte gw_retries_left = GW_RETRIES;
byte stale_left = STALE;
