/* shim/dump's private header: the state its files share (the dump's, the spool's), the buffered
 * writer, and the steps a dump is made of. Included by the files of shim/dump only. */
#ifndef HP_DUMP_INTERNAL_H
#define HP_DUMP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "format/format.h"
#include "profile/profile.h"
#include "rt/rt.h"

/* ---- the buffered writer (writer.c) ---- */

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

void hp_w_reset(struct writer *w); /* a new dump: nothing written, no error, no tee (fd kept) */
void hp_w_flush(struct writer *w);
void hp_w_bytes(struct writer *w, const void *data, size_t n);
void hp_w_pad(struct writer *w, size_t n, size_t to); /* zeros from n up to a multiple of to */
void hp_w_record(struct writer *w, uint32_t type, uint32_t flags, uint64_t size);
void hp_w_string(struct writer *w, const char *s, size_t len);
void hp_w_file_header(struct writer *w);
void hp_file_header(struct hpf_file_header *fh);
/* The size of a string as hp_w_string writes it. */
static inline size_t hp_str_size(size_t len) { return 4 + ((len + 3) & ~(size_t)3); }
/* A write past RLIMIT_FSIZE makes the kernel send the writing thread SIGXFSZ, which ends a
 * program that has not ignored it (status 153, a core), before the write fails with EFBIG. The
 * shim's writes must not: while the limit is finite they run under a guard for it (test
 * write-fails). */
void hp_fsize_guard_begin(struct hp_sig_guard *g);

/* ---- the dump's state (hp_ds), shared by the folder's files ---- */

struct hp_dump_state {
    /* One dump at a time; taken before every lock of the profiler (a dump takes them under it)
     * and held across fork (triggers.c). */
    hp_lock_t lock;
    char exe_path[1024];
    char out_template[1024]; /* absolute, %p still in it; empty: no profiles */
    char out_path[1100];     /* expanded for this pid (the name the spool file got) */
    uint32_t forked_from;
    uint32_t seq; /* numbered dumps written by this process */
    /* The process's totals when the last numbered dump was written (seen: there was one): an
     * interval tick finding them unchanged writes nothing. */
    struct {
        uint64_t allocs, frees, bytes;
        int seen;
    } numbered;
    int exit_dumped;    /* the final profile is written: it ends the spool file */
    uint32_t killed_by; /* the signal that ended the process (HPF_DUMP_KILLED) */
    struct writer wr;   /* used under lock only */
};
extern struct hp_dump_state hp_ds;

/* ---- the spool of evicted HIBs (hp_spool; spool.c) ---- */

/* Evicted HIBs wait in memory (held) and are written out only when they no longer fit, or at a
 * dump: the spool is the file's records followed by the held ones (spool.c says why). */
#define HP_SPOOL_HOLD 1024
struct spool_rec {
    struct hpf_record_header rh;
    struct hpf_hib h;
};

struct hp_spool_state {
    hp_lock_t lock; /* after the threads' and the table's locks (an eviction spools under them) */
    int fd;         /* the exit profile, created at the first eviction */
    /* fd holds a provisional profile (hp_dump_before_credentials), not a spool: it is started
     * again as a spool when one is needed. */
    int provisional;
    uint64_t dev, ino;
    uint64_t records; /* records in it after the file header (all spool_rec) */
    /* The length of the provisional profile, and how long the exit profile must be when it is
     * written over it without truncating (under a seccomp filter). */
    uint64_t provisional_len, pad_to;
    int inherit_fd; /* after fork: the parent's spool, to copy what it held */
    uint64_t inherit_dev, inherit_ino, inherited_records;
    struct spool_rec *held; /* room for held_cap (more in a forked child) */
    uint32_t nheld, held_cap;
};
extern struct hp_spool_state hp_spool;

/* With the spool lock held: */
void hp_spool_check(void);   /* the program closed the spool's descriptor: reopen or give up */
int hp_spool_flush(void);    /* the held records to the spool file, made if need be */
void hp_spool_adopt(int fd); /* fd, just made at out_path, is the spool from now on */
/* After a dump's file header: the records spooled so far (from the spool file, or from the
 * parent's when this process has none yet), then the held ones, which stay held. */
void hp_spool_copy_into(struct writer *w);
/* In fork's child, before anything may evict: the parent's spool becomes the inherited one. */
void hp_spool_fork_child(void);

/* ---- output paths and files (paths.c) ---- */

void hp_paths_init(void);   /* the executable's name and path, the output template, check */
void hp_expand_path(void);  /* out_path from out_template for this pid */
/* Create path (or path-1, path-2, ... if it exists), reporting a failure with note after it
 * (none when note is NULL) under the name shown; the name made is in used. */
int hp_create_file_shown(const char *path, const char *shown, char *used, size_t cap,
                         const char *note);
int hp_create_file(const char *path, char *used, size_t cap, const char *note);
/* Give the file written at tmp its name (path, or path-1, ...), never over another file. */
int hp_place_file(const char *tmp, const char *path, char *used, size_t cap);
int hp_same_file(int fd, uint64_t dev, uint64_t ino);
void hp_remove_failed(int fd, const char *path);
/* Words for why a profile file could not be made or written. */
void hp_file_error(int e, const char *what, char *why, size_t cap);

/* ---- the records of a dump (records.c, modules.c, stacks.c) ---- */

void hp_write_process(struct writer *w, int reason, uint32_t now_ms);
/* The module list: the mapped images, then the libraries closed since. save: keep a copy of
 * the MODULE records, which a dump under a seccomp filter writes instead (no /proc then). */
void hp_write_modules(struct writer *w, int save);
/* The contexts' stacks, LIVE records and the HIBs of their live blocks. */
void hp_write_contexts(struct writer *w, uint32_t now_ms, uint32_t cpu);
void hp_write_hibs(struct writer *w); /* the HIB table's records */
void hp_write_summary(struct writer *w);
void hp_write_stacks(struct writer *w, uint32_t n); /* contexts 1..n-1 */

/* ---- access profiling (access.c): nothing while no instrumented module attached ---- */
void hp_write_access(struct writer *w);  /* the ACCESS record */
void hp_access_fold_live(void);           /* the live blocks' figures, before hp_write_contexts */
/* Into h, the HIB folded of context c's lc live blocks: their access figures. */
void hp_access_fold_into(const struct hp_ctx *c, struct hpf_hib *h, int64_t lc);
void hp_write_access_hists(struct writer *w); /* ACCESS_HIST records */
uint64_t hp_access_shadow_resident(void);

/* Whether the dump writes context c: it exists and some of its allocations are in the dump.
 * A context is made when its first allocation's stack is seen, and that allocation waits in
 * its thread's cache until the next push or flush: a context made after the dump flushed the
 * thread that made it has no allocation in this dump (nor frees, so no HIB names it), and is
 * left out rather than written as a row of zeros (test interval-python). */
static inline int hp_in_dump(const struct hp_ctx *c)
{
    return c && __atomic_load_n(&c->allocs, __ATOMIC_RELAXED) != 0;
}

/* ---- triggers.c ---- */
void hp_dump_run_pending(void); /* a dump or kill a signal left for the way out of the shim */

/* A loaded ELF image's load bias and GNU build id (idlen 0: none; id has room for 64 bytes),
 * read from its mappings in memory (modules.c). */
void hp_module_elf_info(const struct hpf_segment *segs, int nsegs, uint64_t *bias, uint8_t *id,
                        uint32_t *idlen);

#endif
