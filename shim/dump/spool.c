/* The spool of evicted HIBs: records evicted from the shared table, held in memory and written
 * in batches to the profile file, which the exit profile continues; copied into numbered dumps
 * and into forked children's profiles. */
#include "dump/dump_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Evicted HIBs wait in memory (held) and are written out only when HP_SPOOL_HOLD of them no
 * longer fit, or at a dump. Two reasons. The profile file is made only when the first batch is
 * written: a forked child that execs at once, in a program with a full HIB table, then leaves
 * no file without an end behind (the exec'd image writes a profile of its own; tests fork-exec
 * and fork-exec-rounds). And a program with more contexts than the table holds evicts at every
 * new context: one write of a thousand records costs far less than a write, two fstat and a
 * prlimit per record (test evict-batched counts the calls; bench/many_contexts.c evicts half
 * of its 131,072 contexts). */
static struct spool_rec held0[HP_SPOOL_HOLD];

struct hp_spool_state hp_spool = {
    .lock = HP_LOCK_INIT,
    .fd = -1,
    .inherit_fd = -1,
    .held = held0,
    .held_cap = HP_SPOOL_HOLD,
};

/* Copy the first `records` records of a spool (fd `from`, file header skipped) to fd `to` or,
 * when to < 0, to the writer w (flushed first, then written past); returns how many whole
 * records were copied (the spool holds nothing but spool_rec records, and only whole records
 * are counted when the source turns out shorter). The kernel copies them (copy_file_range:
 * page cache to page cache, no trip through this process, for a spool that every forked
 * child's profile starts with); under a seccomp filter (which may kill on it) and where it
 * fails (a kernel or file system without it, an O_APPEND target), reads and writes take over
 * from where it stopped (test spool-copy-* checks both). Buffers in this folder are static:
 * dumps may run in a signal handler on a small alternate stack; the dump lock and the spool
 * lock serialise their users. */
static uint64_t copy_spool(int from, uint64_t records, int to, struct writer *w)
{
    static char buf[64 << 10];
    const uint64_t rec = sizeof(struct spool_rec);
    if (to < 0) {
        hp_w_flush(w);
        if (w->err)
            return 0;
        to = w->fd;
    }
    struct stat st;
    uint64_t off = sizeof(struct hpf_file_header);
    if (syscall(SYS_fstat, from, &st) != 0 || (uint64_t)st.st_size < off)
        return 0;
    if (((uint64_t)st.st_size - off) / rec < records)
        records = ((uint64_t)st.st_size - off) / rec; /* no partial record is ever copied */
    uint64_t want = records * rec, done = 0;
    /* Asked at each copy: a filter may have come since the start, unseen. */
    int by_kernel = want && !hp_filtered && hp_seccomp_mode() == 0;
    while (by_kernel && done < want) {
        int64_t in = (int64_t)(off + done); /* the kernel's loff_t */
        long r = syscall(SYS_copy_file_range, from, &in, to, NULL, (size_t)(want - done), 0u);
        if (r <= 0)
            break;
        done += (uint64_t)r;
    }
    if (w)
        w->total += done;
    while (done < want) {
        size_t n = want - done > sizeof buf ? sizeof buf : (size_t)(want - done);
        long r = syscall(SYS_pread64, from, buf, n, (long)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (w)
            hp_w_bytes(w, buf, (size_t)r); /* a failed write is the writer's error (w->err) */
        else
            hp_write_all(to, buf, (size_t)r);
        done += (uint64_t)r;
    }
    return done / rec;
}

/* The records the parent had spooled before the fork describe this process's history too:
 * copied into fd; returns how many. */
static uint64_t copy_inherited(int fd)
{
    /* Under a seccomp filter only write(2) is used: a profile rewritten then leaves the
     * parent's records out. */
    if (hp_sandboxed ||
        !hp_same_file(hp_spool.inherit_fd, hp_spool.inherit_dev, hp_spool.inherit_ino))
        return 0; /* (or the program closed it and reused the number) */
    return copy_spool(hp_spool.inherit_fd, hp_spool.inherited_records, fd, NULL);
}

/* Programs that close every descriptor (daemons do) may have closed the spool and reused its
 * number for a file of their own: never write there. Reopen the spool by name instead, or
 * give it up (the exit dump then starts a new file). With the spool lock held. */
void hp_spool_check(void)
{
    if (hp_spool.fd < 0 || hp_same_file(hp_spool.fd, hp_spool.dev, hp_spool.ino))
        return;
    int fd = -1;
    if (!hp_sandboxed)
        fd = (int)hp_sys_open(hp_ds.out_path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd >= 0 && hp_same_file(fd, hp_spool.dev, hp_spool.ino)) {
        hp_spool.fd = fd;
        return;
    }
    if (fd >= 0)
        syscall(SYS_close, fd);
    hp_warn("the profile file %s was closed by the program; evicted records so far are lost",
            hp_ds.out_path);
    hp_spool.fd = -1;
    hp_spool.records = 0;
}

/* fd, just made at out_path, is the spool from now on (its identity for hp_spool_check). */
void hp_spool_adopt(int fd)
{
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) == 0) {
        hp_spool.dev = (uint64_t)st.st_dev;
        hp_spool.ino = (uint64_t)st.st_ino;
    }
    hp_spool.fd = fd;
}

/* The spool file, made if it is not there yet (its header, then the records inherited from the
 * parent; hp_spool_flush writes the held ones after them). With the spool lock held. */
static int spool_open(void)
{
    hp_spool_check();
    if (hp_spool.fd >= 0 && !hp_spool.provisional)
        return 0;
    int fd = hp_spool.fd;
    if (fd >= 0) {
        /* The file made before a change of credentials: the process may no longer be
         * allowed to create it, so it is emptied and becomes the spool (its offset is 0
         * already). Under a seccomp filter, which may not allow ftruncate, it is written over
         * instead, and the exit profile made at least as long (pad_to; tests drop-privs-evict and
         * sandbox-evict-*). */
        hp_spool.provisional = 0;
        if (hp_sandboxed) {
            hp_spool.pad_to = hp_spool.provisional_len;
        } else if (syscall(SYS_ftruncate, fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
            hp_error("cannot rewrite profile %s (errno %d)", hp_ds.out_path, errno);
            syscall(SYS_close, fd);
            hp_spool.fd = fd = -1;
        }
    }
    if (fd < 0) {
        if (!hp_ds.out_template[0] || hp_sandboxed)
            return -1;
        static char used[1200];
        fd = hp_create_file(hp_ds.out_path, used, sizeof used, "");
        if (fd < 0)
            return -1;
        hp_strlcpy(hp_ds.out_path, used, sizeof hp_ds.out_path);
        hp_spool_adopt(fd);
    }
    struct hpf_file_header fh;
    hp_file_header(&fh);
    hp_write_all(fd, &fh, sizeof fh);
    hp_spool.records = hp_spool.inherit_fd >= 0 ? copy_inherited(fd) : 0;
    return 0;
}

/* The held records written out to the spool file, which is made if need be. With the spool
 * lock held. */
int hp_spool_flush(void)
{
    if (spool_open() != 0)
        return -1;
    if (hp_spool.nheld) {
        hp_write_all(hp_spool.fd, hp_spool.held, (size_t)hp_spool.nheld * sizeof hp_spool.held[0]);
        hp_spool.records += hp_spool.nheld;
        hp_spool.nheld = 0;
    }
    return 0;
}

void hp_spool_hib(const struct hpf_hib *hib)
{
    hp_lock(&hp_spool.lock);
    if (!hp_ds.exit_dumped) {
        if (hp_spool.nheld == hp_spool.held_cap) {
            struct hp_sig_guard g;
            hp_fsize_guard_begin(&g);
            hp_spool_flush(); /* if the file cannot be made, this record is lost */
            hp_sig_guard_end(&g);
        }
        if (hp_spool.nheld < hp_spool.held_cap) {
            struct spool_rec *rec = &hp_spool.held[hp_spool.nheld++];
            rec->rh = (struct hpf_record_header){HPF_REC_HIB, 0, sizeof(struct hpf_hib)};
            hp_memcpy(&rec->h, hib, sizeof rec->h);
        }
    }
    hp_unlock(&hp_spool.lock);
}

void hp_spool_copy_into(struct writer *w)
{
    hp_spool_check();
    if (hp_spool.fd >= 0 && !hp_spool.provisional) {
        /* Self-contained: the evicted HIBs spooled so far. */
        w->records = copy_spool(hp_spool.fd, hp_spool.records, -1, w);
    } else if (hp_spool.inherit_fd >= 0) {
        hp_w_flush(w);
        w->records = copy_inherited(w->fd);
        w->total += w->records * sizeof(struct spool_rec); /* copied past the writer */
    }
    /* The spool's records not yet in its file. */
    hp_w_bytes(w, hp_spool.held, (size_t)hp_spool.nheld * sizeof hp_spool.held[0]);
    w->records += hp_spool.nheld;
}

/* In a forked child: the parent's spool is copied into this process's profile (it describes
 * this process's history too) and is not written to; the child makes its own when it needs one. */
void hp_spool_fork_child(void)
{
    if (hp_spool.fd >= 0 && hp_spool.provisional) {
        syscall(SYS_close, hp_spool.fd); /* the parent's profile, not a spool to copy */
    } else if (hp_spool.fd >= 0) {
        if (hp_spool.inherit_fd >= 0)
            syscall(SYS_close, hp_spool.inherit_fd);
        hp_spool.inherit_fd = hp_spool.fd;
        hp_spool.inherit_dev = hp_spool.dev;
        hp_spool.inherit_ino = hp_spool.ino;
        hp_spool.inherited_records = hp_spool.records;
    }
    hp_spool.fd = -1;
    hp_spool.provisional = 0;
    hp_spool.provisional_len = hp_spool.pad_to = 0;
    hp_spool.records = 0;
    /* The parent's held records are this process's history too, and stay held. They must not
     * take the child's room: a child that execs at once, folding the caches of the threads it
     * did not inherit into a full table, would make a file of the replaced image for them
     * (test fork-exec-rounds). Its room is theirs and HP_SPOOL_HOLD more. */
    if (hp_spool.nheld) {
        size_t n = (size_t)hp_spool.nheld + HP_SPOOL_HOLD;
        struct spool_rec *more = hp_meta_alloc(n * sizeof *more);
        if (more) {
            hp_memcpy(more, hp_spool.held, (size_t)hp_spool.nheld * sizeof *more);
            hp_spool.held = more;
            hp_spool.held_cap = hp_spool.nheld + HP_SPOOL_HOLD;
        }
    }
}
