/* The records of a dump that describe the process and its contexts: PROCESS, each context's
 * LIVE record and the HIB of its blocks still live, the HIB table's records (both packed:
 * docs/FORMAT.md, PACKED), and SUMMARY. */
#include "dump/dump_internal.h"
#include "backend/backend.h"
#include "bootstrap/bootstrap.h"
#include "shadow/shadow.h"

#include <time.h>
#include <unistd.h>

void hp_write_process(struct writer *w, int reason, uint32_t now_ms)
{
    static char cmdline[8192];
    static long cmdline_len; /* of the last read: /proc cannot be read under a seccomp filter */
    long n = hp_read_proc_self("cmdline", cmdline, sizeof cmdline);
    if (n < 0)
        n = cmdline_len;
    cmdline_len = n;
    uint32_t argc = 0;
    uint64_t size = sizeof(struct hpf_process);
    size += hp_str_size(hp_strlen(hp_be.name ? hp_be.name : "")) + hp_str_size(hp_strlen(hp_ds.exe_path));
    size += hp_str_size(hp_strlen(hp_be.object));
    for (long i = 0; i < n;) {
        size_t l = hp_strlen(cmdline + i);
        if (i + (long)l >= n)
            l = (size_t)(n - i);
        size += hp_str_size(l);
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
    p.dump_seq = hp_ds.seq;
    p.dump_reason = (uint32_t)reason;
    p.unwinder = !hp_strcmp(hp_opt.unwinder, "libunwind") ? HPF_UNWIND_LIBUNWIND
                 : !hp_strcmp(hp_opt.unwinder, "cfi")     ? HPF_UNWIND_CFI
                                                          : HPF_UNWIND_FP;
    p.stack_depth = (uint32_t)hp_opt.stack_depth;
    p.forked_from = hp_ds.forked_from;
    p.argc = argc;
    hp_w_record(w, HPF_REC_PROCESS, 0, size);
    hp_w_bytes(w, &p, sizeof p);
    const char *bn = hp_be.name ? hp_be.name : "";
    hp_w_string(w, bn, hp_strlen(bn));
    hp_w_string(w, hp_ds.exe_path, hp_strlen(hp_ds.exe_path));
    for (long i = 0; i < n;) {
        size_t l = hp_strlen(cmdline + i);
        if (i + (long)l >= n)
            l = (size_t)(n - i);
        hp_w_string(w, cmdline + i, l);
        i += (long)l + 1;
    }
    /* The object the allocator the shim forwards to lives in (with backend "next" the
     * library that was preloaded after the shim, or libc). */
    hp_w_string(w, hp_be.object, hp_strlen(hp_be.object));
    hp_w_pad(w, size, 8);
}

/* HIB and LIVE records, packed (docs/FORMAT.md, PACKED): entries waiting for their PACKED
 * record, one packer per record type (under the dump lock). */
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
    hp_w_record(w, HPF_REC_PACKED, 0, sizeof ph + pk->len);
    hp_w_bytes(w, &ph, sizeof ph);
    hp_w_bytes(w, pk->buf, pk->len);
    hp_w_pad(w, pk->len, 8);
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
        /* Fixed-size copies: single loads (__builtin_memcpy stays inline under -fno-builtin),
         * not a call to hp_memcpy per field, which would be a large part of the dump's
         * instructions (bench/many_contexts.c times the exit dump). */
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

/* After hp_write_contexts, whose folded HIBs share their PACKED records. */
void hp_write_hibs(struct writer *w)
{
    hp_table_foreach(write_hib, w);
    pack_flush(w, &hib_packer);
}

/* The totals of the contexts as written, for the summary (under the dump lock). */
static struct {
    uint64_t contexts, allocs, bytes, live_count, live_size;
} written;

void hp_write_contexts(struct writer *w, uint32_t now_ms, uint32_t cpu)
{
    uint32_t n = __atomic_load_n(&hp_prof.next_id, __ATOMIC_ACQUIRE);
    hp_memset(&written, 0, sizeof written);
    hib_packer.count = live_packer.count = 0;
    hib_packer.len = live_packer.len = 0;
    hp_write_stacks(w, n);
    for (uint32_t id = 1; id < n && id < hp_prof.max_id; id++) {
        struct hp_ctx *c = __atomic_load_n(&hp_prof.by_id[id], __ATOMIC_ACQUIRE);
        if (!hp_in_dump(c))
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
            hp_access_fold_into(c, &h, lc);
            pack_add(w, &hib_packer, &h);
        }
        struct hpf_live lv;
        hp_memset(&lv, 0, sizeof lv);
        lv.context_id = c->id;
        lv.flags = __atomic_load_n(&c->flags, __ATOMIC_RELAXED);
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

void hp_write_summary(struct writer *w)
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
    s.pool_unknown_frees = __atomic_load_n(&hp_counters.pool_unknown_frees, __ATOMIC_RELAXED);
    s.pool_dropped = __atomic_load_n(&hp_counters.pool_dropped, __ATOMIC_RELAXED);
    s.headerless = (uint64_t)hp_profile_headerless;
    s.headerless_unseen_frees = __atomic_load_n(&hp_counters.headerless_unseen_frees, __ATOMIC_RELAXED);
    s.double_frees = hp_counters.double_frees;
    s.bootstrap_bytes = hp_boot_bytes();
    s.metadata_bytes = hp_meta_used();
    s.metadata_resident = hp_meta_resident();
    s.metadata_budget = hp_meta_budget();
    s.truncated_stacks = hp_counters.truncated_stacks;
    s.killed_by = hp_ds.killed_by;
    s.shadow_resident = hp_access_shadow_resident();
    s.shadow_registry_bytes = hp_shadow_live_bytes();
    hp_w_record(w, HPF_REC_SUMMARY, 0, sizeof s);
    hp_w_bytes(w, &s, sizeof s);
}
