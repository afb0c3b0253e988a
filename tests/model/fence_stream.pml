/*
 * Grant-time fencing, the lock service's side: the FenceFeed and one
 * WatchFences stream (lockservice/fence_feed.*, fence_watch.cc). The
 * follower (gateway.pml) opens it with the largest position it applied;
 * the stream subscribes to the feed of the instance that serves it, then
 * reads the committed positions above that from the store (the catch-up,
 * sent with the live events queued meanwhile), then sends each committed
 * batch's positions, one message in flight at a time (FenceStream::Pump).
 * A cut, or a restart of either side, loses what was on its way; the
 * follower reconnects from what it applied.
 *
 * Events queued on the stream are kept per resource, the largest position
 * only: the follower raises a fence to each position in turn, which ends
 * where raising it to the largest does, and its applied position is the
 * largest of a message either way.
 */

byte w_st;          /* 0: no stream; 1: subscribed, catching up; 2: live;
                       3: (MUTANT_SCAN_BEFORE_SUBSCRIBE) read, not subscribed */
byte w_inst;        /* the instance whose feed it follows */
byte w_sent;        /* sent_position */
byte w_pend[NR];    /* positions published, not sent yet */
byte cuts = STREAM_CUTS;

hidden byte h_s[2];
hidden byte h_sr;

#if NR == 1
#define PENDING (w_pend[0] > w_sent)
#else
#define PENDING (w_pend[0] > w_sent || w_pend[1] > w_sent)
#endif

#if FOLLOWER
/* P7 (b), at the steps that can leave the stream idle. */
inline check_caught_up() {
  if
  :: NI == 1 && w_st == 2 && empty(fch) && !PENDING && f_infl == 0 && gb == 0 ->
     for (h_pr : 0 .. NR - 1) {
       CHECK(gw_fence[h_pr] >= s_pos[h_pr],
             "VIOLATION P7 expired-fenced: the follower is live and idle, and a fence is below the lock service's position\n")
     }
     h_pr = 0
  :: else
  fi
}
#endif

inline stream_cut() {
  printf("MSC: the WatchFences stream ends\n");
  w_st = 0;
  w_inst = 0;
  w_sent = 0;
  for (h_sr : 0 .. NR - 1) {
    w_pend[h_sr] = 0
  }
  do
  :: nempty(fch) -> fch?_, _
  :: empty(fch) -> break
  od;
  h_sr = 0
}

/* FenceFeed::Publish, from instance i's commit: position p of resource r,
 * queued for the stream if it follows that feed. */
inline feed(i, r, p) {
#if FOLLOWER
  if
  :: (w_st == 1 || w_st == 2) && w_inst == i && p > w_pend[r] -> w_pend[r] = p
  :: else
  fi
#else
  skip
#endif
}

/* Sends what is queued above w_sent (FillFromPending), if anything. */
inline send_pending() {
  for (h_sr : 0 .. NR - 1) {
    if
    :: w_pend[h_sr] > w_sent -> h_s[h_sr] = w_pend[h_sr]
    :: else
    fi;
    w_pend[h_sr] = 0
  }
  for (h_sr : 0 .. NR - 1) {
    if
    :: h_s[h_sr] > w_sent -> w_sent = h_s[h_sr]
    :: else
    fi
  }
  if
  :: h_s[0] != 0 || h_s[1] != 0 ->
     printf("MSC: WatchFences sends %d, %d\n", h_s[0], h_s[1]);
     fch!h_s[0], h_s[1]
  :: else
  fi;
  h_s[0] = 0;
  h_s[1] = 0;
  h_sr = 0
}

/* ScanPage: every committed position above w_sent (into h_s). */
inline scan() {
  for (h_sr : 0 .. NR - 1) {
    if
    :: s_pos[h_sr] > w_sent -> h_s[h_sr] = s_pos[h_sr]
    :: else
    fi
  }
  for (h_sr : 0 .. NR - 1) {
    if
    :: h_s[h_sr] > w_sent -> w_sent = h_s[h_sr]
    :: else
    fi
  }
  h_sr = 0
}

/* The follower's call reaches instance i (FenceWatchReactor): it
 * subscribes to the feed first, so that the catch-up misses nothing. */
inline stream_open(i) {
  printf("MSC: follower: WatchFences(after %d) to lock service %d\n", f_applied, i);
  w_inst = i;
  w_sent = f_applied;
#ifdef MUTANT_SCAN_BEFORE_SUBSCRIBE
  printf("MSC: WatchFences reads the store first (after %d)\n", w_sent);
  scan();  /* read first ... */
  send_pending();
  w_st = 3
#else
  w_st = 1
#endif
}

/* The catch-up's one page (NR is small), with the live events queued
 * meanwhile that are above it; then live. */
inline catch_up() {
  printf("MSC: WatchFences catches up from the store (after %d)\n", w_sent);
  scan();
  send_pending();
  w_st = 2;
  check_caught_up()
}
