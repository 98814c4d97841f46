/* shim/dump: writing profiles (the exit profile, numbered on-demand and interval dumps, the
 * peak dump, the spool of evicted HIBs), the output paths, what triggers a dump (signals, the
 * interval thread, exit, signals that end the process) and the module list (the memory map and
 * libraries closed with dlclose). Raw system calls and static buffers only: a dump may run
 * inside a signal handler. */
#ifndef HP_DUMP_H
#define HP_DUMP_H

#include <stdint.h>

#include "format/format.h"

/* ---- dumps (dump.c) and what triggers them (triggers.c) ---- */
void hp_dump_init(void);      /* output path */
void hp_dump_late_init(void); /* the dump signal's handler, the signals that end a process */
int hp_dump(int reason);      /* an HPF_DUMP_* reason; 0 on success */
/* hp_dump, or, when this thread is inside the shim (a signal handler interrupted it), left for
 * the interrupted call to write on its way out (returns 0 then). */
int hp_dump_request(int reason);
void hp_dump_at_exit(void);
void hp_dump_at__exit(void); /* _exit, _Exit: the exit profile, unless in a vfork child */
void hp_dump_signal_taken(int sig, void *handler); /* the program's sigaction/signal for sig */
/* A signal is ending the process: write the final profile (once, in the process the dump state
 * belongs to), then let the signal's default action end it (hp_die_by). */
void hp_dump_killed(int sig, int resend);
int hp_dump_owner(void); /* this process owns the dump state (not a vfork child) */
/* The process is about to change its user or group ids or its root directory (creds.c): make
 * the profile file now, while it may, and keep it open for the exit profile. */
void hp_dump_before_credentials(void);
extern volatile int hp_kill_pending; /* the signal of a pending HPF_DUMP_KILLED */
extern volatile int hp_kill_pid;     /* and the process it came to */

/* ---- fork (triggers.c), in the order core/ calls them ---- */
void hp_dump_fork_prepare(void);       /* the dump lock: before the profiler's locks */
void hp_dump_fork_prepare_spool(void); /* the spool lock: after them */
void hp_dump_fork_parent(void);
void hp_dump_fork_child_locks(void); /* in every child, profiling or not */
void hp_dump_fork_child(void);
/* The dump_interval_ms thread's body (core/ starts the thread, at init and in a fork child:
 * hp_start_interval_thread). */
void *hp_dump_interval_main(void *arg);

/* ---- the spool of evicted HIBs (spool.c) ---- */
void hp_spool_hib(const struct hpf_hib *hib); /* write one evicted HIB record */

/* ---- signals that end the process (killsig.c; signals.c interposes the signal functions) ---- */
struct sigaction;
void hp_signals_init(void);  /* take over the kill signals left at SIG_DFL (dump_on_kill) */
/* Put SIG_DFL back for sig and, if resend, send it to the process: its default action then
 * happens as soon as it is not blocked (a fault re-runs its instruction: no resend). */
void hp_die_by(int sig, int resend);
int hp_sig_candidate(int sig);            /* a signal the shim may take over */
int hp_sig_is_ours(void (*h)(int));       /* the shim's handler */
int hp_sig_shown(int sig, struct sigaction *out); /* taken over or wrapped: what the program set */
/* The handler to show the program for h, the old handler a signal function found for sig. */
void (*hp_sig_shown_handler(int sig, void (*h)(int)))(int);
void hp_sig_settle(int sig);  /* the program changed sig: take over a SIG_DFL, else let go */

/* ---- libraries closed with dlclose (retired.c) ---- */
/* Notes on libraries closed with dlclose, for the module list of later dumps (modules.c). */
#define HP_RETIRED_SEGS 8

struct hp_retired {
    struct hp_retired *next;
    uint64_t bias;
    uint32_t nsegs, build_id_len;
    struct hpf_segment segs[HP_RETIRED_SEGS]; /* executable segments only */
    uint8_t build_id[64];
    char path[512];
};

/* Called by the dlclose interposer before the library may go away. */
void hp_retire_note(void *handle);
/* Newest first; entries are never removed. */
const struct hp_retired *hp_retired_list(void);
void hp_retired_fork_child(void);

#endif
