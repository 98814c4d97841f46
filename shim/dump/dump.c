/* Writing profiles: the exit dump, on-demand dumps (heapprof_dump(), dump_signal=,
 * dump_interval_ms=) and the spool of HIBs evicted from the shared table. Everything here uses
 * raw system calls and static buffers, so a dump may run inside a signal handler. */
#include "profile/profile.h"
#include "unwind/unwind.h"
#include "dump/dump.h"
#include "backend/backend.h"
#include "bootstrap/bootstrap.h"
#include "rt/rt.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

char hp_exe_name[256];
static char exe_path[1024];
static char out_template[1024]; /* absolute, %p still in it */
static char out_path[1100];     /* expanded for this pid */
static uint32_t forked_from;
static uint32_t dump_seq;
/* The process's totals when the last numbered dump was written (numbered_seen: there was one):
 * an interval tick finding them unchanged writes nothing. */
static uint64_t numbered_allocs, numbered_frees, numbered_bytes;
static int numbered_seen;
static int exit_dumped;
static uint32_t killed_by; /* the signal that ended the process (HPF_DUMP_KILLED) */

static hp_lock_t dump_lock = HP_LOCK_INIT;
static hp_lock_t spool_lock = HP_LOCK_INIT;
static int spool_fd = -1;       /* the exit profile, created at the first eviction */
/* spool_fd holds a provisional profile (hp_dump_before_credentials), not a spool: it is
 * started again as a spool when one is needed. */
static int spool_provisional;
static uint64_t spool_dev, spool_ino;
static uint64_t spool_records;  /* records in it after the file header (all spool_rec) */
/* The length of the provisional profile, and how long the exit profile must be when it is
 * written over it without truncating (under a seccomp filter). */
static uint64_t provisional_len, pad_to;
/* The MODULE records of the provisional profile: under a seccomp filter /proc cannot be read,
 * and the exit profile repeats them. */
static char saved_modules[256 << 10];
static size_t saved_modules_len;
static uint64_t saved_modules_records;
static int saved_modules_ok;
static int inherit_fd = -1;     /* after fork: the parent's spool, to copy what it held */
/* Evicted HIBs wait here, and are written out only when they no longer fit (or at a dump): the
 * spool is the file's records (spool_records) followed by these. The profile file is made only
 * then: a forked child that execs at once, in a program with a full HIB table, would otherwise
 * leave a file with no end behind (the exec'd image writes a profile of its own). And one write
 * of a thousand records instead of a write, two fstat and a prlimit per record: a program with
 * more contexts than the table holds evicts at every new context (cc1plus on a 7-line C++ file:
 * 88,000 contexts, 14,000 evictions; 65,000 of them took 0.3 s of system time one by one). */
#define SPOOL_HOLD 1024
struct spool_rec {
    struct hpf_record_header rh;
    struct hpf_hib h;
};
static struct spool_rec held0[SPOOL_HOLD];
static struct spool_rec *held = held0; /* room for held_cap (more in a forked child, below) */
static uint32_t nheld, held_cap = SPOOL_HOLD;
static uint64_t inherit_dev, inherit_ino, inherited_records;

/* ---------- buffered writer ---------- */

struct writer {
    int fd, err;
    uint64_t records;
    uint64_t total; /* bytes given to it since the dump began */
    /* When tee is set, every byte given is also copied there (tee_len), up to tee_cap. */
    char *tee;
    size_t tee_len, tee_cap;
    size_t len;
    char buf[1 << 16];
};

static struct writer wr; /* used under dump_lock only */

static void w_flush(struct writer *w)
{
    const char *p = w->buf;
    size_t n = w->len;
    while (n && !w->err) {
        long r = syscall(SYS_write, w->fd, p, n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            w->err = errno;
            break;
        }
        p += r;
        n -= (size_t)r;
    }
    w->len = 0;
}

static void w_bytes(struct writer *w, const void *data, size_t n)
{
    const char *p = data;
    w->total += n;
    if (w->tee) {
        if (w->tee_cap - w->tee_len >= n)
            hp_memcpy(w->tee + w->tee_len, data, n);
        w->tee_len += n; /* past tee_cap: too much to keep */
    }
    while (n) {
        if (w->len == sizeof w->buf)
            w_flush(w);
        size_t c = sizeof w->buf - w->len;
        if (c > n)
            c = n;
        hp_memcpy(w->buf + w->len, p, c);
        w->len += c;
        p += c;
        n -= c;
    }
}

static void w_pad(struct writer *w, size_t n, size_t to)
{
    static const char zero[8];
    size_t pad = (to - n % to) % to;
    w_bytes(w, zero, pad);
}

static void w_record(struct writer *w, uint32_t type, uint32_t flags, uint64_t size)
{
    struct hpf_record_header rh = {type, flags, size};
    w_bytes(w, &rh, sizeof rh);
    w->records++;
}

static size_t str_size(size_t len) { return 4 + ((len + 3) & ~(size_t)3); }

static void w_string(struct writer *w, const char *s, size_t len)
{
    uint32_t l = (uint32_t)len;
    w_bytes(w, &l, 4);
    w_bytes(w, s, len);
    w_pad(w, len, 4);
}

static void file_header(struct hpf_file_header *fh)
{
    hp_memset(fh, 0, sizeof *fh);
    hp_memcpy(fh->magic, HPF_MAGIC, 8);
    fh->version = HPF_VERSION;
    fh->header_size = sizeof *fh;
    fh->endian_check = HPF_ENDIAN_CHECK;
}

static void w_file_header(struct writer *w)
{
    struct hpf_file_header fh;
    file_header(&fh);
    w_bytes(w, &fh, sizeof fh);
}

/* ---------- paths ---------- */

static void expand_path(void)
{
    char pid[16];
    hp_fmt(pid, sizeof pid, "%d", (int)getpid());
    size_t o = 0;
    for (const char *p = out_template; *p && o + 1 < sizeof out_path; p++) {
        const char *ins = NULL;
        if (p[0] == '%' && p[1] == 'p')
            ins = pid;
        else if (p[0] == '%' && p[1] == 'e')
            ins = hp_exe_name;
        else if (p[0] == '%' && p[1] == '%')
            ins = "%";
        if (ins) {
            p++;
            while (*ins && o + 1 < sizeof out_path)
                out_path[o++] = *ins++;
        } else {
            out_path[o++] = *p;
        }
    }
    out_path[o] = 0;
}

/* The directory check_output_dir found unusable at start, and the errno creating a file there
 * gives: that failure has been said, and is not said again for every file. */
static char bad_dir[1100];
static int bad_dir_errno;

/* Is path a file right in bad_dir? */
static int in_bad_dir(const char *path)
{
    const char *slash = NULL;
    for (const char *p = path; *p; p++)
        if (*p == '/')
            slash = p;
    if (!slash || !bad_dir[0])
        return 0;
    size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/x" is in "/" */
    return hp_strlen(bad_dir) == n && hp_strncmp(path, bad_dir, n) == 0;
}

/* Words for why a profile file could not be made or written: the causes a user can do
 * something about by name, others as "<what> (errno N)". */
static void file_error(int e, const char *what, char *why, size_t cap)
{
    if (e == ENOSPC)
        hp_strlcpy(why, "no space left on the device", cap);
    else if (e == EDQUOT)
        hp_strlcpy(why, "disk quota exceeded", cap);
    else if (e == EFBIG)
        hp_strlcpy(why, "file too large for the file system or RLIMIT_FSIZE", cap);
    else if (e == EMFILE)
        hp_strlcpy(why, "no free file descriptor (RLIMIT_NOFILE)", cap);
    else if (e == EROFS)
        hp_strlcpy(why, "read-only file system", cap);
    else
        hp_fmt(why, cap, "%s (errno %d)", what, e);
}

/* Name k of those a file meant to be path may take: path itself, then path-1, path-2, ... */
#define NAME_TRIES 100
static void name_try(char *used, size_t cap, const char *path, int k)
{
    if (k == 0)
        hp_strlcpy(used, path, cap);
    else
        hp_fmt(used, cap, "%s-%d", path, k);
}

/* Create path (or path-1, path-2, ... if it exists) exclusively, without following links.
 * A failure is reported with note after it, or not at all when note is NULL; the report names
 * shown (the name the file was to have in the end: a numbered dump's, not its .tmp). */
static int create_file_shown(const char *path, const char *shown, char *used, size_t cap,
                             const char *note)
{
    for (int k = 0; k < NAME_TRIES; k++) {
        name_try(used, cap, path, k);
        /* Readable too: dumps and forked children copy the spool's records (pread). */
        int fd = (int)hp_sys_open(used, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            break;
    }
    if (note && !(errno == bad_dir_errno && in_bad_dir(path))) {
        int e = errno;
        char why[64];
        if (e == EACCES)
            hp_strlcpy(why, "permission denied", sizeof why);
        else if (e == ENOENT)
            hp_strlcpy(why, "no such directory", sizeof why);
        else if (e == ELOOP)
            hp_strlcpy(why, "it is a symbolic link", sizeof why);
        else if (e == ENOSYS || e == EPERM) /* what seccomp filters (man-db's) answer */
            hp_fmt(why, sizeof why, "open refused (errno %d; a seccomp sandbox?)", e);
        else
            file_error(e, "open failed", why, sizeof why);
        hp_error("cannot create profile %s: %s%s", shown, why, note);
    }
    return -1;
}

static int create_file(const char *path, char *used, size_t cap, const char *note)
{
    return create_file_shown(path, path, used, cap, note);
}

/* Give the whole dump written at tmp its name: path, or path-1, path-2, ... if that exists
 * (as create_file would have chosen), never over another file. renameat2 with
 * RENAME_NOREPLACE; where that fails (a kernel or file system without it, a filter refusing
 * it), a hard link and the unlink of tmp; where that fails too (no hard links: vfat), a plain
 * rename once path is seen not to exist. 0 with the name in used; -1 with errno (tmp is left
 * as it is). */
static int place_file_as(const char *tmp, const char *path, char *used, size_t cap, int plain)
{
    /* plain: 0 to begin with renameat2; 1: no RENAME_NOREPLACE here; 2: no hard links either */
    for (int k = 0; k < NAME_TRIES; k++) {
        name_try(used, cap, path, k);
        if (plain == 0) {
            if (syscall(SYS_renameat2, AT_FDCWD, tmp, AT_FDCWD, used, RENAME_NOREPLACE) == 0)
                return 0;
            if (errno == EEXIST)
                continue;
            plain = 1; /* EINVAL, ENOSYS; or a filter's EPERM: the next way may be allowed */
        }
        if (plain == 1) {
            if (syscall(SYS_link, tmp, used) == 0) {
                syscall(SYS_unlink, tmp);
                return 0;
            }
            if (errno == EEXIST)
                continue;
            plain = 2;
        }
        struct stat st;
        if (syscall(SYS_lstat, used, &st) == 0)
            continue;
        if (errno != ENOENT)
            return -1;
        return (int)syscall(SYS_rename, tmp, used);
    }
    errno = EEXIST;
    return -1;
}

static int place_file(const char *tmp, const char *path, char *used, size_t cap)
{
    return place_file_as(tmp, path, used, cap, 0);
}

/* ---------- spool of evicted HIBs ---------- */

static int same_file(int fd, uint64_t dev, uint64_t ino)
{
    struct stat st;
    return syscall(SYS_fstat, fd, &st) == 0 && (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino;
}

/* A profile that could not be written whole (a full disk): the reader would reject what is
 * there, so it goes, if path still names the file fd is open on. */
static void remove_failed(int fd, const char *path)
{
    struct stat st;
    if (syscall(SYS_stat, path, &st) == 0 && same_file(fd, (uint64_t)st.st_dev, (uint64_t)st.st_ino))
        syscall(SYS_unlink, path);
}

/* Copy the first `records` records of a spool (fd `from`, file header skipped) to fd `to` or,
 * when to < 0, to the writer w (flushed first, then written past); returns how many whole
 * records were copied (the spool holds nothing but spool_rec records, and only whole records
 * are counted when the source turns out shorter). The kernel copies them (copy_file_range:
 * page cache to page cache, no trip through this process; a spool of 600k records took 0.7 s
 * per forked child through 8 KiB reads and writes); under a seccomp filter (which may kill on
 * it) and where it fails (a kernel or file system without it, an O_APPEND target), reads and
 * writes take over from where it stopped. Buffers in this file are static: dumps may run in a
 * signal handler on a small alternate stack; dump_lock and spool_lock serialise their users. */
static uint64_t copy_spool(int from, uint64_t records, int to, struct writer *w)
{
    static char buf[64 << 10];
    const uint64_t rec = sizeof(struct spool_rec);
    if (to < 0) {
        w_flush(w);
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
            w_bytes(w, buf, (size_t)r); /* a failed write is the writer's error (w->err) */
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
    if (hp_sandboxed || !same_file(inherit_fd, inherit_dev, inherit_ino))
        return 0; /* (or the program closed it and reused the number) */
    return copy_spool(inherit_fd, inherited_records, fd, NULL);
}



/* Programs that close every descriptor (daemons do) may have closed the spool and reused its
 * number for a file of their own: never write there. Reopen the spool by name instead, or
 * give it up (the exit dump then starts a new file). With spool_lock held. */
static void spool_check(void)
{
    if (spool_fd < 0 || same_file(spool_fd, spool_dev, spool_ino))
        return;
    int fd = hp_sandboxed ? -1 : (int)hp_sys_open(out_path, O_RDWR | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0);
    if (fd >= 0 && same_file(fd, spool_dev, spool_ino)) {
        spool_fd = fd;
        return;
    }
    if (fd >= 0)
        syscall(SYS_close, fd);
    hp_warn("the profile file %s was closed by the program; evicted records so far are lost",
            out_path);
    spool_fd = -1;
    spool_records = 0;
}

/* fd, just made at out_path, is the spool from now on (its identity for spool_check). */
static void spool_adopt(int fd)
{
    struct stat st;
    if (syscall(SYS_fstat, fd, &st) == 0) {
        spool_dev = (uint64_t)st.st_dev;
        spool_ino = (uint64_t)st.st_ino;
    }
    spool_fd = fd;
}

/* The spool file, made if it is not there yet (its header, then the records inherited from the
 * parent; spool_flush writes the held ones after them). With spool_lock held. */
static int spool_open(void)
{
    spool_check();
    if (spool_fd >= 0 && !spool_provisional)
        return 0;
    int fd = spool_fd;
    if (fd >= 0) {
        /* The file made before a change of credentials: the process may no longer be
         * allowed to create it, so it is emptied and becomes the spool (its offset is 0
         * already). Under a seccomp filter, which may not allow ftruncate, it is written over
         * instead, and the exit profile made at least as long (pad_to). */
        spool_provisional = 0;
        if (hp_sandboxed) {
            pad_to = provisional_len;
        } else if (syscall(SYS_ftruncate, fd, 0) != 0 || lseek(fd, 0, SEEK_SET) != 0) {
            hp_error("cannot rewrite profile %s (errno %d)", out_path, errno);
            syscall(SYS_close, fd);
            spool_fd = fd = -1;
        }
    }
    if (fd < 0) {
        if (!out_template[0] || hp_sandboxed)
            return -1;
        static char used[1200];
        fd = create_file(out_path, used, sizeof used, "");
        if (fd < 0)
            return -1;
        hp_strlcpy(out_path, used, sizeof out_path);
        spool_adopt(fd);
    }
    struct hpf_file_header fh;
    file_header(&fh);
    hp_write_all(fd, &fh, sizeof fh);
    spool_records = inherit_fd >= 0 ? copy_inherited(fd) : 0;
    return 0;
}

/* The held records written out to the spool file, which is made if need be. With spool_lock
 * held. */
static int spool_flush(void)
{
    if (spool_open() != 0)
        return -1;
    if (nheld) {
        hp_write_all(spool_fd, held, (size_t)nheld * sizeof held[0]);
        spool_records += nheld;
        nheld = 0;
    }
    return 0;
}

/* A write past RLIMIT_FSIZE makes the kernel send the writing thread SIGXFSZ, which ends a
 * program that has not ignored it (status 153, a core), before the write fails with EFBIG. The
 * shim's writes must not: while the limit is finite they run under a guard for it. */
static void fsize_guard_begin(struct hp_sig_guard *g)
{
    if (!hp_filtered && hp_soft_limit(RLIMIT_FSIZE) != UINT64_MAX)
        hp_sig_guard_begin(g, SIGXFSZ);
    else
        g->on = 0;
}

void hp_spool_hib(const struct hpf_hib *hib)
{
    hp_lock(&spool_lock);
    if (!exit_dumped) {
        if (nheld == held_cap) {
            struct hp_sig_guard g;
            fsize_guard_begin(&g);
            spool_flush(); /* if the file cannot be made, this record is lost */
            hp_sig_guard_end(&g);
        }
        if (nheld < held_cap) {
            struct spool_rec *rec = &held[nheld++];
            rec->rh = (struct hpf_record_header){HPF_REC_HIB, 0, sizeof(struct hpf_hib)};
            hp_memcpy(&rec->h, hib, sizeof rec->h);
        }
    }
    hp_unlock(&spool_lock);
}

/* ---------- the dump ---------- */

struct module_acc {
    struct writer *w;
    char path[1024];
    int nsegs, has_exec;
    struct hpf_segment segs[64];
};

/* The run-time address of n bytes at file offset off, if the module maps them readable. */
static uint64_t offset_addr(const struct hpf_segment *segs, int nsegs, uint64_t off, uint64_t n)
{
    for (int i = 0; i < nsegs; i++) {
        const struct hpf_segment *g = &segs[i];
        if ((g->prot & 1) && off >= g->offset && off - g->offset + n <= g->end - g->start)
            return g->start + (off - g->offset);
    }
    return 0;
}

/* Load bias and GNU build id from the ELF image in memory. The program headers are found by
 * their file offset: usually in the first page, but a binary rewritten by BOLT (the Rust
 * toolchain's librustc_driver) has them in a segment of their own at the end. */
void hp_module_elf_info(const struct hpf_segment *segs, int nsegs, uint64_t *bias, uint8_t *id,
                        uint32_t *idlen)
{
    *bias = 0;
    *idlen = 0;
    uint64_t ehdr = offset_addr(segs, nsegs, 0, sizeof(Elf64_Ehdr));
    if (!ehdr)
        return;
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)ehdr;
    if (hp_memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
        return;
    uint64_t ph = offset_addr(segs, nsegs, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr));
    if (!ph)
        return;
    const Elf64_Phdr *p = (const Elf64_Phdr *)ph;
    for (int i = 0; i < eh->e_phnum; i++)
        if (p[i].p_type == PT_LOAD) {
            uint64_t at = offset_addr(segs, nsegs, p[i].p_offset & ~(uint64_t)4095, 1);
            if (!at)
                return;
            *bias = at - (p[i].p_vaddr & ~(uint64_t)4095);
            break;
        }
    for (int i = 0; i < eh->e_phnum; i++) {
        if (p[i].p_type != PT_NOTE)
            continue;
        uint64_t a = offset_addr(segs, nsegs, p[i].p_offset, p[i].p_filesz), end = a + p[i].p_filesz;
        if (!a)
            continue;
        while (a + sizeof(Elf64_Nhdr) <= end) {
            const Elf64_Nhdr *nh = (const Elf64_Nhdr *)a;
            uint64_t name = a + sizeof *nh;
            uint64_t desc = name + ((nh->n_namesz + 3) & ~3u);
            uint64_t next = desc + ((nh->n_descsz + 3) & ~3u);
            if (next > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
                !hp_memcmp((const void *)name, "GNU", 4) && nh->n_descsz <= 64) {
                hp_memcpy(id, (const void *)desc, nh->n_descsz);
                *idlen = nh->n_descsz;
                return;
            }
            a = next;
        }
    }
}

static void write_module(struct writer *w, uint64_t bias, const struct hpf_segment *segs, uint32_t nsegs,
                         const uint8_t *id, uint32_t idlen, const char *path)
{
    size_t plen = hp_strlen(path);
    uint64_t size = sizeof(struct hpf_module) + (uint64_t)nsegs * sizeof(struct hpf_segment) +
                    ((idlen + 3) & ~3u) + str_size(plen);
    w_record(w, HPF_REC_MODULE, 0, size);
    struct hpf_module mod = {bias, nsegs, idlen};
    w_bytes(w, &mod, sizeof mod);
    w_bytes(w, segs, (size_t)nsegs * sizeof(struct hpf_segment));
    w_bytes(w, id, idlen);
    w_pad(w, idlen, 4);
    w_string(w, path, plen);
    w_pad(w, size, 8);
}

static void emit_module(struct module_acc *m)
{
    if (!m->nsegs || !m->has_exec) {
        m->nsegs = 0;
        return;
    }
    uint8_t id[64];
    uint32_t idlen = 0;
    uint64_t bias = 0;
    if (m->path[0] == '/')
        hp_module_elf_info(m->segs, m->nsegs, &bias, id, &idlen);
    write_module(m->w, bias, m->segs, (uint32_t)m->nsegs, id, idlen, m->path);
    m->nsegs = 0;
}

/* One module per loaded image: the mappings of one file, with anonymous ones (its .bss, a
 * gap before a segment aligned to 2 MiB) skipped between them; a mapping of the file at
 * offset 0 begins another image of it. */
static int module_line(const struct hp_mapping *mp, void *arg)
{
    struct module_acc *m = arg;
    int named = mp->path[0] == '/' || !hp_strcmp(mp->path, "[vdso]");
    if (!named && !mp->path[0])
        return 0;
    if (m->nsegs && (hp_strcmp(m->path, mp->path) != 0 || m->nsegs == 64 || mp->offset == 0))
        emit_module(m);
    if (!named)
        return 0;
    if (!m->nsegs) {
        hp_strlcpy(m->path, mp->path, sizeof m->path);
        m->has_exec = 0;
    }
    struct hpf_segment *s = &m->segs[m->nsegs++];
    s->start = mp->start;
    s->end = mp->end;
    s->offset = mp->offset;
    s->prot = mp->prot;
    s->pad = 0;
    if (mp->prot & 4)
        m->has_exec = 1;
    return 0;
}

static struct module_acc macc;

/* Libraries closed since start whose code is not mapped any more (retired.c). The maps table
 * was refreshed at the start of this dump. */
static void write_retired(struct writer *w)
{
    for (const struct hp_retired *r = hp_retired_list(); r; r = r->next) {
        int mapped = 0;
        for (uint32_t i = 0; i < r->nsegs && !mapped; i++)
            mapped = hp_is_exec_mapping(r->segs[i].start) || hp_is_exec_mapping(r->segs[i].end - 1);
        if (!mapped)
            write_module(w, r->bias, r->segs, r->nsegs, r->build_id, r->build_id_len, r->path);
    }
}

static void write_process(struct writer *w, int reason, uint32_t now_ms)
{
    static char cmdline[8192];
    static long cmdline_len; /* of the last read: /proc cannot be read under a seccomp filter */
    long n = hp_read_proc_self("cmdline", cmdline, sizeof cmdline);
    if (n < 0)
        n = cmdline_len;
    cmdline_len = n;
    uint32_t argc = 0;
    uint64_t size = sizeof(struct hpf_process);
    size += str_size(hp_strlen(hp_be.name ? hp_be.name : "")) + str_size(hp_strlen(exe_path));
    size += str_size(hp_strlen(hp_be.object));
    for (long i = 0; i < n;) {
        size_t l = hp_strlen(cmdline + i);
        if (i + (long)l >= n)
            l = (size_t)(n - i);
        size += str_size(l);
        argc++;
        i += (long)l + 1;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct hpf_process p;
    hp_memset(&p, 0, sizeof p);
    p.pid = (uint32_t)getpid();
    static uint32_t ppid; /* under a seccomp filter, that of the provisional profile */
    if (!hp_sandboxed)
        ppid = (uint32_t)getppid();
    p.ppid = ppid;
    p.start_unix_ns = hp_start_unix_ns();
    p.dump_unix_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    p.dump_ms = now_ms;
    p.dump_seq = dump_seq;
    p.dump_reason = (uint32_t)reason;
    p.unwinder = !hp_strcmp(hp_opt.unwinder, "libunwind") ? HPF_UNWIND_LIBUNWIND
                 : !hp_strcmp(hp_opt.unwinder, "cfi")     ? HPF_UNWIND_CFI
                                                          : HPF_UNWIND_FP;
    p.stack_depth = (uint32_t)hp_opt.stack_depth;
    p.forked_from = forked_from;
    p.argc = argc;
    w_record(w, HPF_REC_PROCESS, 0, size);
    w_bytes(w, &p, sizeof p);
    const char *bn = hp_be.name ? hp_be.name : "";
    w_string(w, bn, hp_strlen(bn));
    w_string(w, exe_path, hp_strlen(exe_path));
    for (long i = 0; i < n;) {
        size_t l = hp_strlen(cmdline + i);
        if (i + (long)l >= n)
            l = (size_t)(n - i);
        w_string(w, cmdline + i, l);
        i += (long)l + 1;
    }
    /* The object the allocator the shim forwards to lives in (with backend "next" the
     * library that was preloaded after the shim, or libc). */
    w_string(w, hp_be.object, hp_strlen(hp_be.object));
    w_pad(w, size, 8);
}

/* ---------- HIB and LIVE records, packed (docs/FORMAT.md, PACKED) ---------- */

/* Entries waiting for their PACKED record, one packer per record type (under dump_lock). */
struct packer {
    uint32_t type, nfields;
    const struct hpf_field *fields;
    uint32_t count;
    size_t len;
    uint8_t buf[1 << 15];
};

static struct packer hib_packer = {HPF_REC_HIB, HPF_HIB_NFIELDS, hpf_hib_fields, 0, 0, {0}};
static struct packer live_packer = {HPF_REC_LIVE, HPF_LIVE_NFIELDS, hpf_live_fields, 0, 0, {0}};

static void pack_flush(struct writer *w, struct packer *pk)
{
    if (!pk->count)
        return;
    struct hpf_packed ph = {pk->type, pk->count, pk->nfields, 0};
    w_record(w, HPF_REC_PACKED, 0, sizeof ph + pk->len);
    w_bytes(w, &ph, sizeof ph);
    w_bytes(w, pk->buf, pk->len);
    w_pad(w, pk->len, 8);
    pk->count = 0;
    pk->len = 0;
}

/* One record's fields, each a LEB128 number of at most 10 bytes. */
static void pack_add(struct writer *w, struct packer *pk, const void *rec)
{
    if (sizeof pk->buf - pk->len < 10 * (size_t)pk->nfields)
        pack_flush(w, pk);
    const char *r = rec;
    for (uint32_t i = 0; i < pk->nfields; i++) {
        /* Fixed-size copies: single loads (__builtin_memcpy stays inline under -fno-builtin;
         * a call to hp_memcpy per field was a fifth of the dump's instructions). */
        uint64_t v;
        if (pk->fields[i].size == 4) {
            uint32_t v32;
            __builtin_memcpy(&v32, r + pk->fields[i].offset, 4);
            v = v32;
        } else {
            __builtin_memcpy(&v, r + pk->fields[i].offset, 8);
        }
        pk->len += hpf_uleb_put(pk->buf + pk->len, v);
    }
    pk->count++;
}

static void write_hib(const struct hpf_hib *h, void *arg) { pack_add(arg, &hib_packer, h); }

/* ---------- stacks: the frame tree (docs/FORMAT.md, FRAMES) ---------- */

/* One context's stack in full (a STACK record): what is written when the tree cannot be made. */
static void write_stack_record(struct writer *w, const struct hp_ctx *c)
{
    struct hpf_stack st = {c->id, c->depth};
    w_record(w, HPF_REC_STACK, 0, sizeof st + (uint64_t)c->depth * 8);
    w_bytes(w, &st, sizeof st);
    if (sizeof c->pcs[0] == 8) {
        w_bytes(w, c->pcs, (size_t)c->depth * 8); /* one copy, not one per frame */
    } else {
        for (uint32_t i = 0; i < c->depth; i++) {
            uint64_t pc = c->pcs[i];
            w_bytes(w, &pc, 8);
        }
    }
}

/* Frame d of c counted from the outermost (0), plus 1; 0 past its innermost frame, so that a
 * stack sorts before every stack it is the outer part of. */
static inline uint64_t frame_key(const struct hp_ctx *c, uint32_t d)
{
    return d < c->depth ? (uint64_t)c->pcs[c->depth - 1 - d] + 1 : 0;
}

/* a before b, both known to agree on their first d outer frames. */
static int stack_before_from(const struct hp_ctx *a, const struct hp_ctx *b, uint32_t d)
{
    for (;; d++) {
        uint64_t x = frame_key(a, d), y = frame_key(b, d);
        if (x != y)
            return x < y;
        if (!x)
            return 0; /* the same stack */
    }
}

/* How many outer frames a and b share, knowing they share d. */
static uint32_t shared_from(const struct hp_ctx *a, const struct hp_ctx *b, uint32_t d)
{
    uint32_t n = a->depth < b->depth ? a->depth : b->depth;
    while (d < n && a->pcs[a->depth - 1 - d] == b->pcs[b->depth - 1 - d])
        d++;
    return d;
}

/* How many outer frames every stack of a[lo..lo+n) has in common, knowing they share d, up to
 * d + SHARED_STEP: each compared with the first, frame by frame from the outermost in
 * (adjacent words, two lines at most), never past the fewest found so far. The bound keeps
 * what a stack that parts early costs the others small. */
#define SHARED_STEP 16
static uint32_t shared_by_all(struct hp_ctx *const *a, size_t lo, size_t n, uint32_t d)
{
    const struct hp_ctx *r = a[lo];
    uint32_t m = r->depth < d + SHARED_STEP ? r->depth : d + SHARED_STEP;
    for (size_t i = lo + 1; i < lo + n && m > d; i++) {
        const struct hp_ctx *b = a[i];
        uint32_t lim = m < b->depth ? m : b->depth, k = d;
        while (k < lim && r->pcs[r->depth - 1 - k] == b->pcs[b->depth - 1 - k])
            k++;
        m = k;
    }
    return m;
}

static inline void swap_ctx(struct hp_ctx **a, size_t i, size_t j)
{
    struct hp_ctx *t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* Insertion sort of a[lo..lo+n), whose stacks share d outer frames; then the frames each
 * shares with the one before it, into lcp. */
static void sort_small(struct hp_ctx **a, uint32_t *lcp, size_t lo, size_t n, uint32_t d)
{
    for (size_t i = lo + 1; i < lo + n; i++)
        for (size_t j = i; j > lo && stack_before_from(a[j], a[j - 1], d); j--)
            swap_ctx(a, j, j - 1);
    for (size_t i = lo + 1; i < lo + n; i++)
        lcp[i] = shared_from(a[i - 1], a[i], d);
}

/* Sorts a[0..n) by frames read from the outermost in: a multikey quicksort (Bentley and
 * Sedgewick), which partitions on one frame at a time, so the outer frames that many stacks
 * share are each read about log n times in all, not at every comparison. No recursion: the two
 * smaller parts of each partition wait on a small stack (each at most half its parent, so
 * 2 log2 n entries) while the largest goes on.
 * When a partition finds every stack of a part equal at its frame, the frames after it they all
 * share are found in one pass that compares each with the first (shared_by_all).
 * It also leaves in lcp[i] how many outer frames a[i] shares with a[i - 1] (lcp[0]: 0), as
 * each partition learns that for the borders it makes: the tree is then built without reading
 * those frames again, which cost more than the sort itself (each context's frames are a cache
 * miss away). */
static void sort_stacks(struct hp_ctx **a, uint32_t *lcp, size_t n)
{
    if (n)
        lcp[0] = 0;
    static struct part { /* static: under dump_lock, and off a small signal stack */
        size_t lo, n;
        uint32_t d;
    } todo[2 * 64 + 2];
    int sp = 0;
    size_t lo = 0;
    uint32_t d = 0;
    for (;;) {
        while (n > 1) {
            if (n <= 8) {
                sort_small(a, lcp, lo, n, d);
                break;
            }
            /* Median of three keys as the pivot. */
            uint64_t k0 = frame_key(a[lo], d), k1 = frame_key(a[lo + n / 2], d);
            uint64_t k2 = frame_key(a[lo + n - 1], d);
            uint64_t p = k0 < k1 ? (k1 < k2 ? k1 : (k0 < k2 ? k2 : k0))
                                 : (k0 < k2 ? k0 : (k1 < k2 ? k2 : k1));
            /* [lo, lt) below p, [lt, i) equal, [gt, lo + n) above. */
            size_t lt = lo, i = lo, gt = lo + n;
            while (i < gt) {
                uint64_t k = frame_key(a[i], d);
                if (k < p)
                    swap_ctx(a, lt++, i++);
                else if (k > p)
                    swap_ctx(a, i, --gt);
                else
                    i++;
            }
            struct part parts[3] = {{lo, lt - lo, d}, {lt, gt - lt, d + 1}, {gt, lo + n - gt, d}};
            /* The parts differ from each other at frame d. */
            if (lt > lo)
                lcp[lt] = d;
            if (gt < lo + n && gt > lo)
                lcp[gt] = d;
            if (!p) { /* all end here: the same stack, of depth d */
                for (size_t x = lt + 1; x < gt; x++)
                    lcp[x] = d;
                parts[1].n = 0;
            } else if (lt == lo && gt == lo + n) {
                /* All share frame d, and likely the frames after it (python3's stacks share
                 * their first twenty or so): those are skipped at once. Partitioned one at a
                 * time, each would be read from every stack, a cache miss apiece once there
                 * are more stacks than the cache holds lines. */
                d = shared_by_all(a, lo, n, d + 1);
                continue;
            }
            int big = parts[0].n >= parts[1].n ? 0 : 1;
            if (parts[2].n > parts[big].n)
                big = 2;
            for (int k = 0; k < 3; k++) {
                if (k == big || parts[k].n < 2)
                    continue;
                if (sp < (int)(sizeof todo / sizeof todo[0]))
                    todo[sp++] = parts[k];
                else /* cannot happen (see above); correct anyway, if slow */
                    sort_small(a, lcp, parts[k].lo, parts[k].n, parts[k].d);
            }
            lo = parts[big].lo;
            n = parts[big].n;
            d = parts[big].d;
        }
        if (!sp)
            return;
        sp--;
        lo = todo[sp].lo;
        n = todo[sp].n;
        d = todo[sp].d;
    }
}

#define TREE_DEPTH_MAX 256 /* stack_depth's largest value */

/* Encoded nodes waiting for their FRAMES record (used under dump_lock only). */
static struct {
    uint8_t buf[1 << 15];
    size_t len;
    uint32_t first, count;
    uint64_t prev_pc;
} frames;

static void frames_flush(struct writer *w)
{
    if (!frames.count)
        return;
    struct hpf_frames fh = {frames.first, frames.count};
    w_record(w, HPF_REC_FRAMES, 0, sizeof fh + frames.len);
    w_bytes(w, &fh, sizeof fh);
    w_bytes(w, frames.buf, frames.len);
    w_pad(w, frames.len, 8);
    frames.first += frames.count;
    frames.count = 0;
    frames.len = 0;
    frames.prev_pc = 0;
}

static void frames_node(struct writer *w, uint32_t id, uint32_t parent, uint64_t pc)
{
    if (sizeof frames.buf - frames.len < 20)
        frames_flush(w);
    frames.len += hpf_uleb_put(frames.buf + frames.len, id - parent);
    frames.len += hpf_uleb_put(frames.buf + frames.len, hpf_zigzag(pc - frames.prev_pc));
    frames.prev_pc = pc;
    frames.count++;
}

/* Whether the dump writes context c: it exists and some of its allocations are in the dump.
 * A context is made when its first allocation's stack is seen, and that allocation waits in
 * its thread's cache until the next push or flush: a context made after the dump flushed
 * the thread that made it has no allocation in this dump (nor frees, so no HIB names it),
 * and would only be a row of zeros (interval dumps of python3 had up to a dozen). */
static int in_dump(const struct hp_ctx *c)
{
    return c && __atomic_load_n(&c->allocs, __ATOMIC_RELAXED) != 0;
}

/* The stacks of contexts 1..n-1 (those in_dump): sorted from their outermost frame in, each
 * shares with the one before it every outer frame it shares with any earlier one, so one pass
 * over them makes the tree (python3's 13,000 stacks of 42 frames on average are 48,000
 * nodes). The contexts to sort and the references written after the tree (8 bytes a context
 * each) are mapped for the dump and unmapped after it; without that memory every stack is
 * written in full. */
static void write_stacks(struct writer *w, uint32_t n)
{
    size_t cap = n, bytes = (2 * cap * sizeof(struct hp_ctx *) + 4095) & ~(size_t)4095;
    void *map = cap ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                    : MAP_FAILED;
    struct hp_ctx **a = map == MAP_FAILED ? NULL : map, **tmp = a ? a + cap : NULL;
    size_t m = 0;
    int deep = 0;
    for (uint32_t id = 1; id < n && id < hp_prof.max_id; id++) {
        struct hp_ctx *c = __atomic_load_n(&hp_prof.by_id[id], __ATOMIC_ACQUIRE);
        if (!in_dump(c))
            continue;
        if (!a) {
            write_stack_record(w, c);
            continue;
        }
        deep |= c->depth > TREE_DEPTH_MAX;
        a[m++] = c;
    }
    if (!a)
        return;
    if (deep) { /* cannot happen (stack_depth <= 256), but the path below has no room */
        for (size_t i = 0; i < m; i++)
            write_stack_record(w, a[i]);
        munmap(map, bytes);
        return;
    }
    uint32_t *lcp = (uint32_t *)tmp;
    sort_stacks(a, lcp, m);
    /* Each context's reference replaces its pointer once read: a ref is as large as one. */
    struct hpf_stack_ref *refs = (struct hpf_stack_ref *)a;
    _Static_assert(sizeof(struct hpf_stack_ref) <= sizeof(struct hp_ctx *), "a ref fits a slot");
    static uint32_t path[TREE_DEPTH_MAX]; /* node of each frame of the previous stack, outermost first */
    uint32_t next = 1;
    frames.len = frames.count = 0;
    frames.first = 1;
    frames.prev_pc = 0;
    for (size_t i = 0; i < m; i++) {
        const struct hp_ctx *c = a[i];
        uint32_t k = lcp[i];
        for (uint32_t j = k; j < c->depth; j++) {
            path[j] = next;
            frames_node(w, next, j ? path[j - 1] : 0, (uint64_t)c->pcs[c->depth - 1 - j]);
            next++;
        }
        struct hpf_stack_ref r = {c->id, c->depth ? path[c->depth - 1] : 0};
        hp_memcpy(&refs[i], &r, sizeof r); /* over a[i], whose pointer was read above */
    }
    frames_flush(w);
    struct hpf_stack_refs rh = {(uint32_t)m, 0};
    w_record(w, HPF_REC_STACK_REFS, 0, sizeof rh + m * sizeof refs[0]);
    w_bytes(w, &rh, sizeof rh);
    w_bytes(w, refs, m * sizeof refs[0]);
    munmap(map, bytes);
}

#ifdef HP_UNIT_TEST
/* For test_dump: place_file, beginning with the way `plain` names. */
int hp_test_place_file(const char *tmp, const char *path, char *used, size_t cap, int plain);
int hp_test_place_file(const char *tmp, const char *path, char *used, size_t cap, int plain)
{
    return place_file_as(tmp, path, used, cap, plain);
}

/* For test_dump: the stack records of contexts 1..n-1 as a dump writes them, to fd. */
void hp_test_write_stacks(int fd, uint32_t n);
void hp_test_write_stacks(int fd, uint32_t n)
{
    struct writer *w = &wr;
    w->fd = fd;
    w->err = 0;
    w->len = 0;
    w->records = 0;
    w->total = 0;
    w->tee = NULL;
    write_stacks(w, n);
    w_flush(w);
}
#endif

/* The totals of the contexts as written, for the summary (under dump_lock). */
static struct {
    uint64_t contexts, allocs, bytes, live_count, live_size;
} written;

static void write_contexts(struct writer *w, uint32_t now_ms, uint32_t cpu)
{
    uint32_t n = __atomic_load_n(&hp_prof.next_id, __ATOMIC_ACQUIRE);
    hp_memset(&written, 0, sizeof written);
    hib_packer.count = live_packer.count = 0;
    hib_packer.len = live_packer.len = 0;
    write_stacks(w, n);
    for (uint32_t id = 1; id < n && id < hp_prof.max_id; id++) {
        struct hp_ctx *c = __atomic_load_n(&hp_prof.by_id[id], __ATOMIC_ACQUIRE);
        if (!in_dump(c))
            continue;
        int64_t lc = c->live_count, ls = c->live_size, lt = c->live_ts;
        if (lc > 0) {
            /* Fold the blocks still live into a HIB as if freed now (the RFC's exit rule). */
            struct hpf_hib h;
            hp_memset(&h, 0, sizeof h);
            h.context_id = c->id;
            h.flags = HPF_HIB_LIVE_FOLDED;
            h.alloc_count = (uint64_t)lc;
            h.total_size = ls > 0 ? (uint64_t)ls : 0;
            h.min_size = c->min_size == UINT64_MAX ? 0 : c->min_size;
            h.max_size = c->max_size;
            int64_t tl = lc * (int64_t)now_ms - lt;
            h.total_lifetime_ms = tl > 0 ? (uint64_t)tl : 0;
            h.min_lifetime_ms = now_ms >= c->last_alloc_ms ? now_ms - c->last_alloc_ms : 0;
            h.max_lifetime_ms = c->first_alloc_ms <= now_ms ? now_ms - c->first_alloc_ms : 0;
            h.alloc_timestamp_ms = c->last_alloc_ms;
            h.dealloc_timestamp_ms = now_ms;
            h.alloc_cpu_id = h.dealloc_cpu_id = cpu;
            pack_add(w, &hib_packer, &h);
        }
        struct hpf_live lv;
        hp_memset(&lv, 0, sizeof lv);
        lv.context_id = c->id;
        lv.allocs = c->allocs;
        lv.bytes = c->bytes;
        lv.live_count = lc > 0 ? (uint64_t)lc : 0;
        lv.live_size = ls > 0 ? (uint64_t)ls : 0;
        lv.max_live_count = c->max_live_count;
        lv.max_live_size = c->max_live_size;
        lv.peak_live_count = c->peak_live_count;
        lv.peak_live_size = c->peak_live_size;
        lv.first_alloc_ms = c->first_alloc_ms == UINT32_MAX ? 0 : c->first_alloc_ms;
        lv.last_alloc_ms = c->last_alloc_ms;
        pack_add(w, &live_packer, &lv);
        written.contexts++;
        written.allocs += lv.allocs;
        written.bytes += lv.bytes;
        written.live_count += lv.live_count;
        written.live_size += lv.live_size;
    }
    pack_flush(w, &live_packer);
}

static void write_summary(struct writer *w)
{
    struct hpf_summary s;
    hp_memset(&s, 0, sizeof s);
    /* The counts are the contexts' sums, so that they agree with the contexts even when a
     * thread changed something while the dump was written (a thread leaving, which flushes its
     * cache; hp_profile_hold keeps the others still). They equal hp_prof's totals otherwise. */
    s.total_allocs = written.allocs;
    s.total_frees = written.allocs - written.live_count;
    s.total_bytes = written.bytes;
    s.live_count = written.live_count;
    s.live_size = written.live_size;
    s.peak_live_size = hp_prof.peak_size;
    s.peak_live_count = hp_prof.peak_count;
    s.peak_ms = hp_prof.peak_ms;
    s.peak_slack_bytes = hp_profile_slack_bound();
    s.contexts = written.contexts;
    s.unprofiled_allocs = hp_counters.unprofiled_allocs;
    s.evicted_hibs = hp_counters.evicted_hibs;
    s.foreign_frees = hp_counters.foreign_frees;
    s.double_frees = hp_counters.double_frees;
    s.bootstrap_bytes = hp_boot_bytes();
    s.metadata_bytes = hp_meta_used();
    s.metadata_resident = hp_meta_resident();
    s.metadata_budget = hp_meta_budget();
    s.truncated_stacks = hp_counters.truncated_stacks;
    s.killed_by = killed_by;
    w_record(w, HPF_REC_SUMMARY, 0, sizeof s);
    w_bytes(w, &s, sizeof s);
}

/* A dump that stops before writing anything: both locks held, depth raised. */
static int dump_abandon(int rc)
{
    hp_profile_hold(0);
    hp_unlock(&spool_lock);
    hp_tls.depth--;
    hp_unlock(&dump_lock);
    return rc;
}

static int dump(int reason);
static void run_pending(void);

int hp_dump(int reason)
{
    struct hp_sig_guard g;
    fsize_guard_begin(&g);
    int rc = dump(reason);
    hp_sig_guard_end(&g);
    return rc;
}

static int dump(int reason)
{
    if (!hp_profiling || !out_template[0])
        return -1;
    /* Marked inside the shim before the lock is taken: an exit from a signal handler
     * interrupting this thread then never waits for a lock this thread holds. Another dump
     * being written is as fresh as an on-demand one would be; the exit profile waits for it. */
    hp_tls.depth++;
    /* The final profile of the process continues the spool file; the others are numbered. */
    int final = reason == HPF_DUMP_EXIT || reason == HPF_DUMP_KILLED;
    int provisional = reason == HPF_DUMP_CREDENTIALS;
    int peak = reason == HPF_DUMP_PEAK;
    if (hp_sandboxed && !final) {
        /* Under a seccomp filter no file is made: only the exit profile is written, into the
         * one made before the filter. */
        hp_tls.depth--;
        return -1;
    }
    if (final || provisional) {
        hp_lock(&dump_lock);
        if (exit_dumped) {
            /* Another thread wrote the final profile while this one waited (a kill during
             * the exit dump, two signals at once): it ends the spool file; nothing may follow. */
            hp_unlock(&dump_lock);
            hp_tls.depth--;
            return 0;
        }
    } else if (!hp_trylock(&dump_lock)) {
        hp_tls.depth--;
        return -1;
    } else if (exit_dumped) {
        /* The final profile is written: the process is on its way out (a kill's handler
         * re-raises the signal next). A numbered dump begun now was cut short by the end of
         * the process: python's multiprocessing workers, ended with SIGTERM while their
         * interval thread waited for the lock, left files of 32 bytes without END. */
        hp_unlock(&dump_lock);
        hp_tls.depth--;
        return -1;
    }
    hp_maps_refresh(1);
    hp_profile_flush_all();
    hp_profile_hold(1);
    /* The totals at this moment, every thread's cache taken in: a numbered dump remembers them.
     * An interval tick that finds the program has neither allocated nor freed since the last
     * numbered dump writes none (it would differ only in its time and the live blocks' ages):
     * a server idle for a day at dump_interval_ms=60000 would leave 1,440 copies. */
    uint64_t t_allocs = __atomic_load_n(&hp_prof.total_allocs, __ATOMIC_RELAXED);
    uint64_t t_frees = __atomic_load_n(&hp_prof.total_frees, __ATOMIC_RELAXED);
    uint64_t t_bytes = __atomic_load_n(&hp_prof.total_bytes, __ATOMIC_RELAXED);
    uint32_t now = hp_now_ms(), cpu = hp_cpu();
    hp_peak_finish();
    struct writer *w = &wr;
    w->err = 0;
    w->len = 0;
    w->records = 0;
    w->total = 0;
    w->tee = NULL;
    uint64_t at = 0; /* where in the file the writer starts */
    int rc = 0, aside = 0;
    static char used[1200];
    static char final_name[1200]; /* a numbered or peak dump's name once whole */
    hp_lock(&spool_lock);
    if (reason == HPF_DUMP_INTERVAL && numbered_seen && t_allocs == numbered_allocs &&
        t_frees == numbered_frees && t_bytes == numbered_bytes)
        return dump_abandon(0);
    if (final) {
        /* The exit profile continues the spool file, which already holds evicted HIBs. */
        if (spool_flush() != 0)
            return dump_abandon(-1);
        w->fd = spool_fd;
        w->records = spool_records;
        at = sizeof(struct hpf_file_header) + spool_records * sizeof(struct spool_rec);
        hp_strlcpy(used, out_path, sizeof used);
        exit_dumped = 1;
    } else if (provisional) {
        /* Made now, while the process may still create it, and kept open: the exit profile
         * is written into it later. Nothing to do when the file exists already. */
        spool_check();
        if (spool_fd >= 0)
            return dump_abandon(0);
        w->fd = create_file(out_path, used, sizeof used, "");
        if (w->fd < 0)
            return dump_abandon(-1);
        w_file_header(w);
        if (inherit_fd >= 0) {
            w_flush(w);
            w->records = copy_inherited(w->fd);
            w->total += w->records * sizeof(struct spool_rec); /* the provisional's length */
        }
        w_bytes(w, held, (size_t)nheld * sizeof held[0]); /* they stay held */
        w->records += nheld;
        hp_strlcpy(out_path, used, sizeof out_path);
        spool_adopt(w->fd);
        spool_provisional = 1;
        spool_records = 0;
    } else {
        static char path[1200];
        /* Written aside and named when whole (place_file): a process that execs or is
         * killed while it writes one leaves a .tmp, not a numbered dump without its end.
         * The peak dump is renamed over the previous one. Under a filter the shim did not
         * see installed (which may kill on a call it does not list) numbered dumps are
         * written in place, with no calls they did not make before. */
        aside = !peak && !hp_filtered && hp_seccomp_mode() == 0; /* (a filter installed since) */
        if (peak)
            hp_fmt(final_name, sizeof final_name, "%s.peak", out_path);
        else
            hp_fmt(final_name, sizeof final_name, "%s.%u", out_path, dump_seq + 1);
        hp_fmt(path, sizeof path, aside || peak ? "%s.tmp" : "%s", final_name);
        /* An interval dump that cannot be made (after the process gave up its privileges,
         * say) is said once, not every interval. */
        static int failed_before;
        w->fd = create_file_shown(path, final_name, used, sizeof used,
                                  failed_before ? NULL : " (later on-demand dumps that fail are not reported)");
        if (w->fd < 0) {
            failed_before = 1;
            return dump_abandon(-1);
        }
        w_file_header(w);
        spool_check();
        if (spool_fd >= 0 && !spool_provisional) {
            /* Self-contained: copy the evicted HIBs spooled so far. */
            w->records = copy_spool(spool_fd, spool_records, -1, w);
        } else if (inherit_fd >= 0) {
            w_flush(w);
            w->records = copy_inherited(w->fd);
        }
        w_bytes(w, held, (size_t)nheld * sizeof held[0]); /* the spool's records not yet in it */
        w->records += nheld;
        if (!peak)
            dump_seq++;
    }
    hp_unlock(&spool_lock);

    write_process(w, reason, now);
    macc.w = w;
    macc.nsegs = 0;
    if (hp_sandboxed) {
        if (saved_modules_ok) {
            w_bytes(w, saved_modules, saved_modules_len);
            w->records += saved_modules_records;
        }
    } else {
        uint64_t before = w->records;
        if (provisional) {
            w->tee = saved_modules;
            w->tee_len = 0;
            w->tee_cap = sizeof saved_modules;
        }
        hp_maps_foreach(module_line, &macc);
        emit_module(&macc);
        if (provisional) {
            saved_modules_ok = w->tee_len <= w->tee_cap;
            saved_modules_len = w->tee_len;
            saved_modules_records = w->records - before;
            w->tee = NULL;
        }
    }
    write_retired(w);
    write_contexts(w, now, cpu);
    hp_table_foreach(write_hib, w);
    pack_flush(w, &hib_packer);
    write_summary(w);
    if (final && pad_to) {
        /* Written over the provisional profile without truncating: no byte of it may remain
         * after END, so a PAD record makes up the difference. */
        uint64_t end_at = at + w->total + sizeof(struct hpf_record_header) + sizeof(struct hpf_end);
        if (end_at < pad_to) {
            uint64_t need = pad_to - end_at, pad = 0;
            if (need > sizeof(struct hpf_record_header))
                pad = (need - sizeof(struct hpf_record_header) + 7) & ~(uint64_t)7;
            static const char zero[256];
            w_record(w, HPF_REC_PAD, 0, pad);
            for (uint64_t left = pad; left;) {
                size_t c = left < sizeof zero ? (size_t)left : sizeof zero;
                w_bytes(w, zero, c);
                left -= c;
            }
        }
    }
    hp_profile_hold(0);
    struct hpf_end end = {w->records};
    w_record(w, HPF_REC_END, 0, sizeof end);
    w_bytes(w, &end, sizeof end);
    w_flush(w);
    if (provisional && !w->err) {
        /* The exit profile goes over it from the start: the offset goes there now, while
         * every call is still allowed. */
        provisional_len = w->total;
        if (lseek(w->fd, 0, SEEK_SET) != 0)
            w->err = errno;
    }
    /* The final profile is the spool, whose descriptor the process's exit closes. No fsync:
     * what write() put in the page cache is what every reader sees, and waiting for the disk
     * cost every process 0.4-0.7 ms at exit here (more on slow or network file systems). */
    if (aside && !w->err) {
        static char tmp_path[1200];
        hp_strlcpy(tmp_path, used, sizeof tmp_path);
        if (place_file(tmp_path, final_name, used, sizeof used) != 0) {
            w->err = errno;
            hp_strlcpy(used, tmp_path, sizeof used); /* removed below */
        }
    }
    if (w->err && !provisional)
        remove_failed(w->fd, used);
    if (!final && !provisional)
        syscall(SYS_close, w->fd);
    if (peak && !w->err) {
        if (syscall(SYS_rename, used, final_name) == 0)
            hp_strlcpy(used, final_name, sizeof used);
        else
            w->err = errno;
    }
    if (w->err) {
        char why[64];
        file_error(w->err, "failed", why, sizeof why);
        hp_error("writing profile %s: %s%s", used, why,
                 provisional ? "" : "; the incomplete file was removed");
        rc = -1;
    } else if (!provisional && !peak) {
        hp_info("profile written to %s", used);
        if (!final) {
            numbered_seen = 1;
            numbered_allocs = t_allocs;
            numbered_frees = t_frees;
            numbered_bytes = t_bytes;
        }
    }
    hp_tls.depth--;
    hp_unlock(&dump_lock);
    /* A signal that arrived during the dump may have left another one (or a kill) to do. */
    if (!hp_tls.depth && HP_UNLIKELY(hp_dump_pending))
        run_pending();
    return rc;
}

void hp_dump_at_exit(void)
{
    if (exit_dumped || !hp_profiling)
        return;
    if (hp_tls.depth) {
        /* exit() from a signal handler that interrupted this thread inside the shim: the
         * shim's locks it holds would deadlock the dump. */
        hp_error("the process exited while this thread was inside the allocator (from a signal "
                 "handler?); no exit profile written");
        return;
    }
    hp_dump(HPF_DUMP_EXIT);
}

/* The process the dump state belongs to: set at init and in fork's child handler. */
static int dump_pid;

/* dump_pid is 0 before hp_dump_init: nothing to tell apart yet, everyone is the owner. */
int hp_dump_owner(void) { return !dump_pid || (int)syscall(SYS_getpid) == dump_pid; }

void hp_dump_at__exit(void)
{
    /* A vfork child (or a clone that shares memory without fork's handlers) runs on its
     * parent's memory: a dump there would write the parent's state and mark it dumped. */
    if ((int)syscall(SYS_getpid) != dump_pid)
        return;
    hp_dump_at_exit();
}

/* ---------- triggers ---------- */

void hp_dump_before_credentials(void)
{
    /* Not in a vfork child (its parent's state), nor from a signal handler inside the shim. */
    if (!hp_profiling || !out_template[0] || exit_dumped || hp_tls.depth || !hp_dump_owner())
        return;
    /* The file exists already (an earlier change, or the spool): nothing to do. hp_dump checks
     * again under its locks. */
    if (__atomic_load_n(&spool_fd, __ATOMIC_RELAXED) >= 0)
        return;
    hp_dump(HPF_DUMP_CREDENTIALS);
}

int hp_dump_request(int reason)
{
    if (hp_tls.depth) {
        /* A signal handler that interrupted the shim on this thread, which may hold the
         * shim's locks: the interrupted call writes the profile on its way out. A pending
         * kill stays: its profile is as fresh and the process must still end. */
        if (hp_dump_pending != HPF_DUMP_KILLED)
            hp_dump_pending = reason;
        return 0;
    }
    return hp_dump(reason);
}

volatile int hp_kill_pending;
volatile int hp_kill_pid;

void hp_dump_killed(int sig, int resend)
{
    /* A vfork child shares its parent's memory: it neither writes the parent's profile nor
     * marks it written. */
    if (hp_dump_owner() && hp_profiling && !exit_dumped) {
        killed_by = (uint32_t)sig;
        hp_dump(HPF_DUMP_KILLED);
    }
    hp_die_by(sig, resend);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig, (void)si, (void)uc;
    int saved = errno;
    hp_dump_request(HPF_DUMP_SIGNAL);
    errno = saved;
}

static int dump_signal_installed;

/* The program gives dump_signal a disposition of its own (handler, SIG_IGN, SIG_DFL), which
 * replaces the shim's: that signal writes no dumps from then on. Said once, as the user asked
 * for them. h: the new handler (sa_handler or sa_sigaction, the same word). */
void hp_dump_signal_taken(int sig, void *h)
{
    static int said;
    if (!dump_signal_installed || sig != (int)hp_opt.dump_signal || h == (void *)on_signal ||
        __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
        return;
    hp_warn("the program set its own disposition for SIG%s (dump_signal=%d): that signal writes no "
            "profiles from now on (pick one the program leaves alone, e.g. dump_signal=RTMIN+1, or "
            "use dump_interval_ms)", sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", sig);
}

static HP_COLD void run_pending(void)
{
    int reason = hp_dump_pending;
    if (reason && !hp_tls.depth) {
        hp_dump_pending = 0;
        if (reason == HPF_DUMP_KILLED) {
            /* Only the process the signal came to acts on it: a vfork child that died before
             * it could leaves it behind in its parent's memory. */
            if (hp_kill_pid == (int)syscall(SYS_getpid))
                hp_dump_killed(hp_kill_pending, 1);
        } else {
            hp_dump(reason);
        }
    }
}

/* May the interval thread make system calls (sleep, dump)? Not under a seccomp filter the
 * process installed: with SECCOMP_FILTER_FLAG_TSYNC it filters this thread too, and its sleep
 * was killed (or, refused, turned into dumps back to back); under a filter no interval dump
 * is written anyway, so the thread ends. While a filter is being installed it spins without a
 * system call until the installing thread knows whether it took. */
static int interval_go_on(void)
{
    while (__atomic_load_n(&hp_sandboxing, __ATOMIC_SEQ_CST) &&
           !__atomic_load_n(&hp_sandboxed, __ATOMIC_SEQ_CST))
        hp_cpu_relax();
    return !__atomic_load_n(&hp_sandboxed, __ATOMIC_SEQ_CST);
}

static void *interval_thread(void *arg)
{
    (void)arg;
    struct timespec ts = {(time_t)(hp_opt.dump_interval_ms / 1000),
                          (long)(hp_opt.dump_interval_ms % 1000) * 1000000L};
    for (;;) {
        while (interval_go_on() && nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        ts.tv_sec = (time_t)(hp_opt.dump_interval_ms / 1000);
        ts.tv_nsec = (long)(hp_opt.dump_interval_ms % 1000) * 1000000L;
        /* A fork holds the dump lock from before it to after it (as does a dump): at the tick
         * it may be taken. Look again every millisecond, up to an interval, rather than lose
         * the interval's dump: test fork-evict (200 forks back to back, 0.7-1.7 s, then at
         * 500 ms) sometimes had none at all. */
        for (uint64_t waited = 0; __atomic_load_n(&dump_lock.v, __ATOMIC_RELAXED) &&
                                  waited < hp_opt.dump_interval_ms && interval_go_on();
             waited++)
            hp_sleep_ns(1000000);
        if (!interval_go_on())
            return NULL;
        hp_dump(HPF_DUMP_INTERVAL);
    }
    return NULL;
}

static void start_interval_thread(void)
{
    if (!hp_opt.dump_interval_ms || !hp_profiling)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the program's signals are not ours to take */
    pthread_t th;
    hp_note_threads();
    hp_fd_table_grow();
    if (pthread_create(&th, NULL, interval_thread, NULL) == 0)
        pthread_detach(th);
    else
        hp_error("cannot start the dump_interval_ms thread");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Say at startup, not at exit hours later, when the profile cannot be made where asked. */
static void check_output_dir(void)
{
    static char dir[1100];
    hp_strlcpy(dir, out_path, sizeof dir);
    char *slash = NULL;
    for (char *p = dir; *p; p++)
        if (*p == '/')
            slash = p;
    if (!slash)
        return;
    slash[slash == dir] = 0; /* "/x" keeps "/" */
    struct stat st;
    int found = syscall(SYS_stat, dir, &st) == 0;
    if (!found || !S_ISDIR(st.st_mode)) {
        bad_dir_errno = found ? ENOTDIR : errno;
        hp_error("profiles cannot be written: %s %s (output=%s)", dir,
                 bad_dir_errno == ENOENT ? "does not exist" : "is not a directory", hp_opt.output);
    } else if (syscall(SYS_access, dir, W_OK | X_OK) != 0) {
        hp_error("profiles cannot be written: no permission to create files in %s (output=%s)", dir,
                 hp_opt.output);
        bad_dir_errno = EACCES;
    } else {
        return;
    }
    hp_strlcpy(bad_dir, dir, sizeof bad_dir);
}

void hp_dump_init(void)
{
    hp_pending_runner = run_pending;
    dump_pid = (int)syscall(SYS_getpid);
    long n = syscall(SYS_readlink, "/proc/self/exe", exe_path, sizeof exe_path - 1);
    exe_path[n > 0 ? n : 0] = 0;
    const char *base = exe_path;
    for (const char *p = exe_path; *p; p++)
        if (*p == '/')
            base = p + 1;
    hp_strlcpy(hp_exe_name, *base ? base : "unknown", sizeof hp_exe_name);
    const char *o = hp_opt.output;
    if (!o[0]) {
        out_template[0] = 0;
        return;
    }
    if (o[0] == '/') {
        hp_strlcpy(out_template, o, sizeof out_template);
    } else {
        char cwd[800];
        long r = syscall(SYS_getcwd, cwd, sizeof cwd);
        if (r <= 0)
            hp_strlcpy(cwd, ".", sizeof cwd);
        hp_fmt(out_template, sizeof out_template, "%s/%s", cwd, o);
    }
    expand_path();
    check_output_dir();
}

void hp_dump_late_init(void)
{
    if (!hp_profiling)
        return;
    struct sigaction cur;
    if (hp_opt.dump_signal && sigaction((int)hp_opt.dump_signal, NULL, &cur) == 0 &&
        cur.sa_handler == SIG_IGN) {
        /* Ignored from the start (nohup's SIGHUP): a handler would undo that for every program
         * this one execs (exec keeps SIG_IGN, not a handler). It stays ignored. */
        hp_warn("dump_signal=%d: SIG%s is ignored in this process (inherited): it stays ignored and "
                "writes no profiles", (int)hp_opt.dump_signal,
                sigabbrev_np((int)hp_opt.dump_signal) ? sigabbrev_np((int)hp_opt.dump_signal) : "?");
    } else if (hp_opt.dump_signal) {
        struct sigaction sa;
        hp_memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigfillset(&sa.sa_mask);
        if (sigaction((int)hp_opt.dump_signal, &sa, NULL) != 0)
            hp_error("dump_signal=%d: cannot install the handler", (int)hp_opt.dump_signal);
        else
            dump_signal_installed = 1;
    }
    if (hp_opt.dump_on_kill && out_template[0])
        hp_signals_init();
    start_interval_thread();
}

/* Fork: the dump lock and the spool lock are held across fork() so the child never sees a
 * half-written spool record; the child then starts its own profile file. The dump lock comes
 * before every lock of the profiler (a dump takes them under it), the spool lock after the
 * threads' and the table's (an eviction spools under a thread's lock and a set's): taken
 * first, it deadlocked a fork against a thread evicting (rustc, test fork_evict). */
void hp_dump_fork_prepare(void) { hp_lock(&dump_lock); }

void hp_dump_fork_prepare_spool(void) { hp_lock(&spool_lock); }

void hp_dump_fork_parent(void)
{
    hp_unlock(&spool_lock);
    hp_unlock(&dump_lock);
}

/* Every child, profiling or not: fork_prepare took both locks whatever the options. */
void hp_dump_fork_child_locks(void)
{
    hp_lock_reset(&spool_lock);
    hp_lock_reset(&dump_lock);
}

void hp_dump_fork_child(void)
{
    forked_from = (uint32_t)getppid();
    if (spool_fd >= 0 && spool_provisional) {
        syscall(SYS_close, spool_fd); /* the parent's profile, not a spool to copy */
    } else if (spool_fd >= 0) {
        if (inherit_fd >= 0)
            syscall(SYS_close, inherit_fd);
        inherit_fd = spool_fd;
        inherit_dev = spool_dev;
        inherit_ino = spool_ino;
        inherited_records = spool_records;
    }
    spool_fd = -1;
    spool_provisional = 0;
    provisional_len = pad_to = 0;
    spool_records = 0;
    /* The parent's held records are this process's history too, and stay held. They must not
     * take the child's room: a child that execs at once, folding the caches of the threads it
     * did not inherit into a full table, would make a file of the replaced image for them (a
     * test of fork_exec.c forking after each of 128 rounds of new contexts left one or two).
     * Its room is theirs and SPOOL_HOLD more. */
    if (nheld) {
        struct spool_rec *more = hp_meta_alloc(((size_t)nheld + SPOOL_HOLD) * sizeof *more);
        if (more) {
            hp_memcpy(more, held, (size_t)nheld * sizeof *more);
            held = more;
            held_cap = nheld + SPOOL_HOLD;
        }
    }
    dump_seq = 0;
    numbered_seen = 0;
    exit_dumped = 0;
    /* A dump or kill left pending in the parent is the parent's. */
    hp_dump_pending = 0;
    hp_kill_pending = 0;
    dump_pid = (int)syscall(SYS_getpid);
    if (out_template[0])
        expand_path();
}

/* The child's dump_interval_ms thread, once the profiler has reset its locks and gone back to
 * one thread: starting it is what tells the profiler that the child has two. */
void hp_dump_fork_child_threads(void)
{
    start_interval_thread();
}
