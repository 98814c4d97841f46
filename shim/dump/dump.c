/* The dumps: the final profile (at exit, or when a signal ends the process), the provisional one
 * (before a change of credentials), numbered ones (heapprof_dump(), dump_signal=,
 * dump_interval_ms=) and the peak dump, each one function over the same steps. */
#include "dump/dump_internal.h"
#include "dump/dump.h"
#include "unwind/unwind.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

struct hp_dump_state hp_ds = {.lock = HP_LOCK_INIT};

/* One dump being written: why, and the moment it describes. */
struct job {
    int reason;
    uint32_t now, cpu;
    /* The totals at this moment, every thread's cache taken in: a numbered dump remembers them. */
    uint64_t allocs, frees, bytes;
};

/* The name of the file being written, as made (a numbered dump's .tmp until it is placed), and
 * a numbered or peak dump's name once whole. Static, as every buffer of a dump (which may run
 * on a small signal stack), and used under the dump lock. */
static char used[1200];
static char final_name[1200];

/* ---- steps shared by every kind of dump ---- */

/* Nothing to do without profiling or an output. Otherwise the thread is marked inside the shim
 * before any lock is taken: an exit from a signal handler interrupting it then never waits for
 * a lock it holds. */
static int dump_enter(void)
{
    if (!hp_profiling || !hp_ds.out_template[0])
        return 0;
    hp_tls.depth++;
    return 1;
}

/* Give up before anything is read: the dump lock released if held, out of the shim. */
static int dump_quit(int locked, int rc)
{
    if (locked)
        hp_unlock(&hp_ds.lock);
    hp_tls.depth--;
    return rc;
}

/* The final and provisional dumps wait for the dump lock: a dump in progress is finished first
 * (test exit-race). 0 when another thread wrote the final profile while this one waited (a
 * kill during the exit dump, two signals at once): it ends the spool file; nothing may follow. */
static int enter_waiting(void)
{
    hp_lock(&hp_ds.lock);
    if (hp_ds.exit_dumped)
        return dump_quit(1, 0);
    return 1;
}

/* Numbered and peak dumps: none under a seccomp filter the process installed (no file is made
 * then: only the exit profile is written, into the one made before the filter); none while
 * another dump is being written (it is as fresh as this one would be); none once the final
 * profile is written (the process is on its way out, a kill's handler re-raises the signal
 * next: a numbered dump begun now would be cut short, a file without END). 1: entered, with
 * the dump lock. */
static int numbered_enter(void)
{
    if (!dump_enter())
        return 0;
    if (hp_sandboxed || !hp_trylock(&hp_ds.lock))
        return dump_quit(0, 0);
    if (hp_ds.exit_dumped)
        return dump_quit(1, 0);
    return 1;
}

/* With the dump lock: the maps read again, every thread's cache taken in and the profiler held
 * still until the body is written (hp_profile_hold), the totals and the time of this moment,
 * the writer reset; then the spool lock, held while the kind's file is opened. */
static struct writer *dump_begin(struct job *j, int reason)
{
    hp_maps_refresh(1);
    hp_profile_flush_all();
    hp_profile_hold(1);
    j->reason = reason;
    j->allocs = __atomic_load_n(&hp_prof.total_allocs, __ATOMIC_RELAXED);
    j->frees = __atomic_load_n(&hp_prof.total_frees, __ATOMIC_RELAXED);
    j->bytes = __atomic_load_n(&hp_prof.total_bytes, __ATOMIC_RELAXED);
    j->now = hp_now_ms();
    j->cpu = hp_cpu();
    hp_peak_finish();
    struct writer *w = &hp_ds.wr;
    hp_w_reset(w);
    hp_lock(&hp_spool.lock);
    return w;
}

/* A dump that stops before writing anything: both locks held, depth raised. */
static int dump_abandon(int rc)
{
    hp_profile_hold(0);
    hp_unlock(&hp_spool.lock);
    hp_unlock(&hp_ds.lock);
    hp_tls.depth--;
    return rc;
}

/* What every kind writes after its file's first records. save_modules: see hp_write_modules. */
static void dump_body(const struct job *j, struct writer *w, int save_modules)
{
    hp_write_process(w, j->reason, j->now);
    hp_write_modules(w, save_modules);
    hp_write_access(w);
    hp_access_fold_live();
    hp_write_contexts(w, j->now, j->cpu);
    hp_write_hibs(w);
    hp_write_access_hists(w);
    hp_write_summary(w);
}

/* The profiler let go, then END and the last write. No fsync: what write() put in the page
 * cache is what every reader sees, and waiting for the disk would lengthen every process's
 * exit, more on slow or network file systems (bench/forks.sh times children that each write
 * a profile). */
static void dump_end(struct writer *w)
{
    hp_profile_hold(0);
    struct hpf_end end = {w->records};
    hp_w_record(w, HPF_REC_END, 0, sizeof end);
    hp_w_bytes(w, &end, sizeof end);
    hp_w_flush(w);
}

/* Say how the dump went: the error (removed: the incomplete file was taken away), or, when
 * announce is set, where the profile went. 0, or -1 after an error. */
static int dump_said(int err, int removed, int announce)
{
    if (err) {
        char why[64];
        hp_file_error(err, "failed", why, sizeof why);
        hp_error("writing profile %s: %s%s", used, why,
                 removed ? "; the incomplete file was removed" : "");
        return -1;
    }
    if (announce)
        hp_info("profile written to %s", used);
    return 0;
}

/* Out of the dump lock, then out of the shim (in that order: a kill signal handled in between
 * must not find this thread outside the shim while it still holds the lock its dump would
 * wait for); a signal that arrived during the dump may have left another one (or a kill) to
 * do. */
static int dump_leave(int rc)
{
    hp_unlock(&hp_ds.lock);
    hp_tls.depth--;
    if (!hp_tls.depth && HP_UNLIKELY(hp_dump_pending))
        hp_dump_run_pending();
    return rc;
}

/* A numbered or peak dump's file, made at final_name (.tmp after it when tmp is set), with the
 * file header and the spool's records so far: it stands alone. With the spool lock. */
static int open_copy(struct writer *w, int tmp)
{
    static char path[1200];
    hp_fmt(path, sizeof path, tmp ? "%s.tmp" : "%s", final_name);
    /* An interval dump that cannot be made (after the process gave up its privileges, say) is
     * said once, not every interval. */
    static int failed_before;
    w->fd = hp_create_file_shown(path, final_name, used, sizeof used,
                                 failed_before ? NULL : " (later on-demand dumps that fail are not reported)");
    if (w->fd < 0) {
        failed_before = 1;
        return -1;
    }
    hp_w_file_header(w);
    hp_spool_copy_into(w);
    return 0;
}

/* ---- the four kinds ---- */

/* Written over the provisional profile without truncating (under a seccomp filter): no byte of
 * it may remain after END, so a PAD record makes up the difference. at: where in the file the
 * writer began. */
static void write_pad(struct writer *w, uint64_t at)
{
    uint64_t end_at = at + w->total + sizeof(struct hpf_record_header) + sizeof(struct hpf_end);
    if (end_at >= hp_spool.pad_to)
        return;
    uint64_t need = hp_spool.pad_to - end_at, pad = 0;
    if (need > sizeof(struct hpf_record_header))
        pad = (need - sizeof(struct hpf_record_header) + 7) & ~(uint64_t)7;
    static const char zero[256];
    hp_w_record(w, HPF_REC_PAD, 0, pad);
    for (uint64_t left = pad; left;) {
        size_t c = left < sizeof zero ? (size_t)left : sizeof zero;
        hp_w_bytes(w, zero, c);
        left -= c;
    }
}

/* The final profile (exit, or a signal ending the process): it continues the spool file, which
 * already holds the evicted HIBs, and ends it. Its descriptor is closed by the process's end. */
static int dump_final(int reason)
{
    if (!dump_enter())
        return -1;
    if (!enter_waiting())
        return 0;
    struct job j;
    struct writer *w = dump_begin(&j, reason);
    if (hp_spool_flush() != 0)
        return dump_abandon(-1);
    w->fd = hp_spool.fd;
    w->records = hp_spool.records;
    uint64_t at = sizeof(struct hpf_file_header) + hp_spool.records * sizeof(struct spool_rec);
    hp_strlcpy(used, hp_ds.out_path, sizeof used);
    hp_ds.exit_dumped = 1;
    hp_unlock(&hp_spool.lock);
    dump_body(&j, w, 0);
    if (hp_spool.pad_to)
        write_pad(w, at);
    dump_end(w);
    if (w->err)
        hp_remove_failed(w->fd, used);
    return dump_leave(dump_said(w->err, 1, 1));
}

/* The provisional profile, before the process changes its user or group ids or its root: made
 * now, while the process may still create it, and kept open as the spool file; the exit
 * profile is written into it later, from its start (tests drop-privs-*, sandbox-*). Its MODULE
 * records are kept for an exit profile under a seccomp filter, which cannot read /proc. */
static int dump_provisional(void)
{
    if (!dump_enter())
        return -1;
    if (hp_sandboxed)
        return dump_quit(0, -1); /* no file is made under a filter (numbered_enter) */
    if (!enter_waiting())
        return 0;
    struct job j;
    struct writer *w = dump_begin(&j, HPF_DUMP_CREDENTIALS);
    hp_spool_check();
    if (hp_spool.fd >= 0)
        return dump_abandon(0); /* the file exists already (an earlier change, or the spool) */
    w->fd = hp_create_file(hp_ds.out_path, used, sizeof used, "");
    if (w->fd < 0)
        return dump_abandon(-1);
    hp_w_file_header(w);
    hp_spool_copy_into(w);
    hp_strlcpy(hp_ds.out_path, used, sizeof hp_ds.out_path);
    hp_spool_adopt(w->fd);
    hp_spool.provisional = 1;
    hp_spool.records = 0;
    hp_unlock(&hp_spool.lock);
    dump_body(&j, w, 1);
    dump_end(w);
    if (!w->err) {
        /* The offset goes back to the start now, while every call is still allowed. */
        hp_spool.provisional_len = w->total;
        if (lseek(w->fd, 0, SEEK_SET) != 0)
            w->err = errno;
    }
    return dump_leave(dump_said(w->err, 0, 0));
}

/* An interval tick that finds the program has neither allocated nor freed since the last
 * numbered dump writes none: it would differ only in its time and the live blocks' ages (test
 * interval-idle: an idle program leaves one dump, not one per tick). */
static int unchanged(const struct job *j)
{
    return hp_ds.numbered.seen && j->allocs == hp_ds.numbered.allocs &&
           j->frees == hp_ds.numbered.frees && j->bytes == hp_ds.numbered.bytes;
}

/* A numbered dump (heapprof_dump(), dump_signal=, dump_interval_ms=): <output>.N, standing
 * alone. Written aside and named when whole (hp_place_file): a process that execs or is killed
 * while it writes one leaves a .tmp, not a numbered dump without its end (test
 * exec-during-dump). Under a filter the shim did not see installed (which may kill on a call
 * it does not list; asked now, as one may have come since the start) it is written in place,
 * with no calls the dumps did not make before. */
static int dump_numbered(int reason)
{
    if (!numbered_enter())
        return -1;
    struct job j;
    struct writer *w = dump_begin(&j, reason);
    if (reason == HPF_DUMP_INTERVAL && unchanged(&j))
        return dump_abandon(0);
    int aside = !hp_filtered && hp_seccomp_mode() == 0;
    hp_fmt(final_name, sizeof final_name, "%s.%u", hp_ds.out_path, hp_ds.seq + 1);
    if (open_copy(w, aside) != 0)
        return dump_abandon(-1);
    hp_ds.seq++;
    hp_unlock(&hp_spool.lock);
    dump_body(&j, w, 0);
    dump_end(w);
    if (aside && !w->err) {
        static char tmp_path[1200];
        hp_strlcpy(tmp_path, used, sizeof tmp_path);
        if (hp_place_file(tmp_path, final_name, used, sizeof used) != 0) {
            w->err = errno;
            hp_strlcpy(used, tmp_path, sizeof used); /* removed below */
        }
    }
    if (w->err)
        hp_remove_failed(w->fd, used);
    syscall(SYS_close, w->fd);
    int rc = dump_said(w->err, 1, 1);
    if (rc == 0) {
        hp_ds.numbered.seen = 1;
        hp_ds.numbered.allocs = j.allocs;
        hp_ds.numbered.frees = j.frees;
        hp_ds.numbered.bytes = j.bytes;
    }
    return dump_leave(rc);
}

/* The peak dump (dump_peak_growth): <output>.peak, written as .peak.tmp and renamed over the
 * previous one when whole, so that a process killed at any moment leaves the profile of its
 * biggest heap (test peak-kill). Not numbered, not announced. */
static int dump_peak(void)
{
    if (!numbered_enter())
        return -1;
    struct job j;
    struct writer *w = dump_begin(&j, HPF_DUMP_PEAK);
    hp_fmt(final_name, sizeof final_name, "%s.peak", hp_ds.out_path);
    if (open_copy(w, 1) != 0)
        return dump_abandon(-1);
    hp_unlock(&hp_spool.lock);
    dump_body(&j, w, 0);
    dump_end(w);
    if (w->err)
        hp_remove_failed(w->fd, used);
    syscall(SYS_close, w->fd);
    if (!w->err) {
        if (syscall(SYS_rename, used, final_name) == 0) {
            hp_strlcpy(used, final_name, sizeof used);
        } else {
            /* Not renamed: the .tmp goes, as the message says (a reader would take a
             * leftover .tmp for a dump its process never finished). */
            w->err = errno;
            syscall(SYS_unlink, used);
        }
    }
    return dump_leave(dump_said(w->err, 1, 0));
}

int hp_dump(int reason)
{
    struct hp_sig_guard g;
    hp_fsize_guard_begin(&g);
    int rc;
    if (reason == HPF_DUMP_EXIT || reason == HPF_DUMP_KILLED)
        rc = dump_final(reason);
    else if (reason == HPF_DUMP_CREDENTIALS)
        rc = dump_provisional();
    else if (reason == HPF_DUMP_PEAK)
        rc = dump_peak();
    else
        rc = dump_numbered(reason);
    hp_sig_guard_end(&g);
    return rc;
}
