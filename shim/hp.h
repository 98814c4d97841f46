/* The shim's internal API: what the interposed entry points forward to, and the state shared
 * between init, the allocation paths and the profiler. */
#ifndef HP_H
#define HP_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util.h"

/* ---- init (init.c) ---- */
enum { HP_INIT_NONE = 0, HP_INIT_RUNNING = 1, HP_INIT_DONE = 2 };
extern int hp_init_state;
extern int hp_passthrough;    /* another allocator won symbol resolution: forward only */
extern int hp_profiling;      /* profile=1 and profiler set up */
extern int hp_realloc_zero_frees; /* backend's realloc(p, 0) frees and returns NULL */
/* Returns 1 when the shim is ready; 0 while init runs (caller must use the bootstrap arena). */
int hp_init_slow(void);
static inline int hp_ready(void)
{
    if (HP_LIKELY(__atomic_load_n(&hp_init_state, __ATOMIC_ACQUIRE) == HP_INIT_DONE))
        return 1;
    return hp_init_slow();
}

/* ---- per-thread state (thread.c) ---- */
struct hp_thread;
struct hp_tls {
    int depth;                 /* >0 while inside the shim: nested calls are re-entrant;
                                * HP_DEPTH_EVENT inside an allocation's or free's own work */
    int dead;                  /* the thread's destructor ran: no cache any more */
    struct hp_thread *thread;  /* profiling state, NULL until the first profiled call */
    uintptr_t stack_lo, stack_hi; /* this thread's own stack (hi 0: not computed yet) */
    unsigned boot_calls;       /* allocations served by the bootstrap arena (init probes) */
    int in_libunwind;          /* inside a libunwind capture (stack.c, fork) */
};
extern __thread struct hp_tls hp_tls __attribute__((tls_model("initial-exec")));
/* The depth of an allocation or free being recorded (profile.c), where everything else that
 * enters the shim counts from 0 up: a call that finds exactly this depth was made by a signal
 * handler that interrupted the recording (and is recorded itself, profile.c); one that finds
 * any other non-zero depth was made by the shim's own work (loading libunwind, a dump) or
 * during it, and is not. */
#define HP_DEPTH_EVENT (1 << 20)

/* The shim's own malloc (malloc.c); unit tests provide their own. */
void *hp_self_malloc_addr(void);

/* ---- allocation paths (alloc.c) ---- */
void *hp_alloc(size_t size, size_t align, int zero);
void hp_free(void *p);
void *hp_realloc(void *p, size_t size);
size_t hp_usable_size(void *p);
/* jemalloc's extended API (ext.c): allocate or free passing xflags (mallocx flags without the
 * alignment and zero bits: arena, thread cache) to the backend's mallocx/dallocx when it has
 * them; hp_owns: is p a block of the shim's (bootstrap blocks included)? */
#define HP_MALLOCX_ZERO 0x40
void *hp_alloc_x(size_t size, size_t align, int zero, int xflags);
void hp_free_x(void *p, int xflags);
int hp_owns(void *p);
/* mimalloc's API (mi.c): a block placed at (user + offset) % align == 0 in raw memory from
 * get (NULL: the backend's malloc), and the record of a block the allocator freed wholesale. */
void *hp_alloc_from(void *(*get)(void *, size_t, int), void *arg, size_t size, size_t align,
                    size_t offset, int zero);
void hp_forget_block(void *raw, size_t size);
/* The shim's live block (user pointer) made from the allocator's block raw of size bytes, or NULL. */
void *hp_block_in(void *raw, size_t size);
/* Free p if the shim made it (1), else leave it alone (0). */
int hp_free_own(void *p);
/* Look mimalloc's own functions up (after the backend is known). */
void hp_mi_init(void);
extern int hp_foreign_expected; /* mimalloc's blocks may reach free(): not reported */
/* The ms clock and cpu id used in headers and HIBs. */
void hp_clock_init(void);
extern int (*hp_vdso_gettime)(clockid_t, struct timespec *); /* NULL: no vDSO (valgrind) */
extern uint64_t hp_clock_start_ms;
/* Whole ms of the coarse clock since the shim started (the clock ticks every 1 to 4 ms): a
 * 32-bit division of the nanoseconds, not a 64-bit one of the whole time. Straight into the
 * vDSO when there is one: libc's clock_gettime only checks and forwards to it. Inline: it runs
 * twice per block. */
static inline uint32_t hp_now_ms(void)
{
    struct timespec ts;
    int (*vdso)(clockid_t, struct timespec *) = hp_vdso_gettime;
    if (HP_UNLIKELY(vdso == NULL) || HP_UNLIKELY(vdso(CLOCK_MONOTONIC_COARSE, &ts) != 0))
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint32_t)ts.tv_nsec / 1000000u -
                      hp_clock_start_ms);
}
uint32_t hp_cpu_slow(void);
/* The cpu this thread runs on: read from the thread's rseq area, which the kernel keeps up to
 * date and glibc (2.35+) registers, so it costs one load; sched_getcpu() otherwise. */
extern int hp_rseq_ok;
extern ptrdiff_t hp_rseq_cpu_off;
static inline uint32_t hp_cpu(void)
{
#if defined(__x86_64__)
    if (HP_LIKELY(hp_rseq_ok)) {
        uintptr_t tp;
        __asm__("mov %%fs:0, %0" : "=r"(tp));
        int32_t c = *(volatile const int32_t *)(tp + (uintptr_t)hp_rseq_cpu_off);
        if (HP_LIKELY(c >= 0))
            return (uint32_t)c;
    }
#endif
    return hp_cpu_slow();
}
uint64_t hp_start_unix_ns(void);

/* ---- profiler (profile.c) ---- */
void hp_profile_init(void);
/* On allocation: returns the context id for the header (0 if not profiled) and accounts it.
 * frame: the frame address of a shim function that is still running (the entry point's), where
 * the stack walk may start instead of at its own frame; 0: no such hint. */
uint32_t hp_profile_alloc_at(uint64_t size, uint32_t now_ms, uint32_t cpu, uintptr_t frame);
uint32_t hp_profile_alloc(uint64_t size, uint32_t now_ms, uint32_t cpu);
/* On free of a block whose header says it was profiled. */
void hp_profile_free(uint32_t ctx, uint64_t size, uint32_t alloc_ms, uint32_t alloc_cpu);
/* Before a seccomp filter is installed (creds.c): thread locks without membarrier from now. */
void hp_profile_before_sandbox(void);
void hp_profile_fork_prepare(void);
void hp_profile_fork_parent(void);
void hp_profile_fork_child(void);
void hp_note_threads(void); /* a second thread may exist from now on */
uint64_t hp_profile_slack_bound(void); /* bound on the error of the peak figures */

/* ---- stacks (stack.c) ---- */
void hp_stack_init(void);
/* From the shim's constructor; libc_initialised: libc's own initialiser has run, so dlopen
 * (libunwind) is safe now; otherwise it waits for hp_stack_libc_ready. */
void hp_stack_late_init(int libc_initialised);
void hp_stack_libc_ready(void); /* the shim's constructor returned: libc's initialiser is next */
void hp_stack_fork_prepare(void);
void hp_stack_fork_parent(void);
void hp_stack_fork_child(void);
void hp_stack_code_unloaded(void); /* dlclose unmapped code: forget what was cached about it */
/* A seccomp filter is about to be installed: unwinder=libunwind gives way to the cfi walk. */
void hp_stack_before_sandbox(void);
/* Innermost first, shim frames dropped. Returns the depth; *truncated set when cut. *out points
 * at the frames (pcs, or the walk cache wc), *hash is their hp_stack_hash (cfi.h). pcs must
 * have room for max + HP_STACK_SLACK entries (unwinders that cannot skip the shim's own frames
 * write them first). frame: where the frame-pointer walk of the shim's own frames may start
 * (a frame of a shim function below on this stack), 0 for the caller's own frame. */
#define HP_STACK_SLACK 16
struct hp_walk_cache;
int hp_stack_capture(uintptr_t *pcs, int max, int *truncated, struct hp_walk_cache *wc,
                     const uintptr_t **out, uint64_t *hash, uintptr_t frame);
/* The same from a signal handler that interrupted this thread's allocation or free inside the
 * shim (depth HP_DEPTH_EVENT): no walk cache, nothing that waits for a lock the interrupted
 * code may hold, never loads libunwind (frame pointers instead of libunwind when the
 * interrupted code is inside it). -1 when it cannot walk here (the thread's stack bounds are
 * not known yet). */
int hp_stack_capture_nested(uintptr_t *pcs, int max, int *truncated, const uintptr_t **out,
                            uint64_t *hash, uintptr_t frame);
/* The context of the stack from frame (the shim's entry point's frame) if the thread's site
 * cache knows it (cfi.h; unwinder=cfi only), else 0: then hp_stack_capture from the same frame
 * and hp_cfi_site_done with the context found. */
uint32_t hp_stack_site_find(struct hp_walk_cache *wc, uintptr_t frame, int *truncated);
void hp_maps_refresh(int force);
int hp_is_exec(uintptr_t pc);          /* in an executable mapping or a loaded object */
int hp_is_exec_mapping(uintptr_t pc);  /* in the executable mappings of /proc/self/maps */

/* ---- dumps (dump.c) ---- */
void hp_dump_init(void);      /* output path, signal handler, interval thread */
void hp_dump_late_init(void);
int hp_dump(int reason);      /* 0 on success */
/* hp_dump, or, when this thread is inside the shim (a signal handler interrupted it), left for
 * the interrupted call to write on its way out (returns 0 then). */
int hp_dump_request(int reason);
void hp_dump_at_exit(void);
void hp_dump_at__exit(void); /* _exit, _Exit: the exit profile, unless in a vfork child */
void hp_dump_fork_child_locks(void); /* in every child, profiling or not */
void hp_dump_fork_child(void);
void hp_dump_fork_child_threads(void); /* after every fork_child handler: restart ours */
void hp_spool_hib(const void *hib); /* write one evicted HIB record */
void hp_dump_fork_prepare(void);       /* the dump lock: before the profiler's locks */
void hp_dump_fork_prepare_spool(void); /* the spool lock: after them */
void hp_dump_fork_parent(void);
extern volatile int hp_dump_pending;
void hp_dump_run_pending(void); /* a dump signal arrived while inside the shim */
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
/* Leaving the shim: a signal that arrived meanwhile may have left a dump, or a kill, to do. */
static inline void hp_leave(void)
{
    if (--hp_tls.depth == 0 && __builtin_expect(hp_dump_pending != 0, 0))
        hp_dump_run_pending();
}

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
void hp_signals_resolve(void); /* signals.c: find glibc's signal functions now */
extern char hp_exe_name[256];

/* ---- counters for the summary ---- */
struct hp_counters {
    uint64_t foreign_frees, double_frees, unprofiled_allocs, truncated_stacks, evicted_hibs;
    uint64_t page_probes; /* mincore calls of the free path (not in the profile) */
};
extern struct hp_counters hp_counters;
static inline void hp_count(uint64_t *c) { __atomic_fetch_add(c, 1, __ATOMIC_RELAXED); }

#endif
