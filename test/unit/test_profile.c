/* Unit tests for the profiler core (shim/profile.c with hib.c and stack.c): contexts per call
 * site, live-heap counters, the shared HIB table and its eviction, deferred frees and several
 * threads. Each test runs in its own fork (CK_FORK=yes) and sets the profiler up itself.
 *
 * Call sites: every frame of this binary counts as "the shim" for the unwinder (the test links
 * the shim's objects), so distinct allocation sites are made as tiny generated functions in a
 * mapping of their own. Each clears rbp before calling hp_profile_alloc, which ends the frame
 * chain there: the captured stack is exactly one pc, the site's return address. */
#include "unit_support.h"
#include "rt/rt.h"

#include "core/core.h"
#include "profile/profile.h"
#include "unwind/unwind.h"
#include "dump/dump.h"
#include "dump/dump_internal.h"

#include <elf.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

/* ---------- generated call sites ---------- */

#define SITE_BYTES 32
#define SITE_RET 15 /* offset of the return address after the call */
#define MAX_SITES 600
#define SITES_BYTES ((MAX_SITES * SITE_BYTES + 4095) & ~4095)

typedef uint32_t (*site_fn)(uint64_t size, uint32_t now_ms, uint32_t cpu);
static unsigned char *code;

static void make_sites(void)
{
    code = mmap(NULL, SITES_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(code, MAP_FAILED);
    uint64_t target = (uint64_t)(uintptr_t)&hp_profile_alloc;
    for (int k = 0; k < MAX_SITES; k++) {
        unsigned char *c = code + k * SITE_BYTES;
        int i = 0;
        c[i++] = 0x55;                  /* push %rbp */
        c[i++] = 0x31, c[i++] = 0xed;   /* xor %ebp,%ebp */
        c[i++] = 0x48, c[i++] = 0xb8;   /* movabs $target,%rax */
        memcpy(c + i, &target, 8);
        i += 8;
        c[i++] = 0xff, c[i++] = 0xd0;   /* call *%rax */
        ck_assert_int_eq(i, SITE_RET);
        c[i++] = 0x5d;                  /* pop %rbp */
        c[i++] = 0xc3;                  /* ret */
    }
    ck_assert_int_eq(mprotect(code, SITES_BYTES, PROT_READ | PROT_EXEC), 0);
}

static site_fn site(int k) { return (site_fn)(void *)(code + k * SITE_BYTES); }
static uintptr_t site_pc(int k) { return (uintptr_t)(code + k * SITE_BYTES + SITE_RET); }

static void init_profiler(const char *spec)
{
    hp_options_parse(&hp_opt, spec);
    make_sites();
    hp_clock_init();
    hp_olock_init(); /* as init.c: thread caches' locks the owner takes without an exchange */
    hp_meta_init(64u << 20);
    hp_stack_init(); /* reads the maps: the sites' mapping is executable */
    hp_profile_init(hp_spool_hib);
    hp_init_state = HP_INIT_DONE;
    ck_assert_int_eq(hp_profiling, 1);
    memset(&hp_counters, 0, sizeof hp_counters);
}

static struct hp_ctx *ctx(uint32_t id)
{
    ck_assert_uint_gt(id, 0);
    ck_assert_uint_lt(id, hp_prof.max_id);
    struct hp_ctx *c = hp_prof.by_id[id];
    ck_assert_ptr_nonnull(c);
    return c;
}

/* ---------- HIB table walk ---------- */

#define MAX_HIBS 1024
struct hibs {
    int n;
    struct hpf_hib h[MAX_HIBS];
};

static void collect(const struct hpf_hib *h, void *arg)
{
    struct hibs *s = arg;
    ck_assert_int_lt(s->n, MAX_HIBS);
    s->h[s->n++] = *h;
}

static const struct hpf_hib *hib_of(const struct hibs *s, uint32_t id)
{
    const struct hpf_hib *r = NULL;
    for (int i = 0; i < s->n; i++)
        if (s->h[i].context_id == id) {
            ck_assert_msg(r == NULL, "context %u twice in the table", id);
            r = &s->h[i];
        }
    return r;
}

/* ---------- tests ---------- */

/* A module's load bias and build id from its mappings: program headers in the first page, and
 * (as BOLT leaves a binary) in a segment of their own far into the file. */
static void fake_image(uint8_t *first, uint8_t *phpage, uint64_t phoff)
{
    Elf64_Ehdr *eh = (Elf64_Ehdr *)first;
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_phoff = phoff;
    eh->e_phnum = 3;
    Elf64_Phdr *ph = (Elf64_Phdr *)(phpage + (phoff & 4095));
    ph[0] = (Elf64_Phdr){.p_type = PT_PHDR, .p_offset = phoff, .p_vaddr = phoff};
    ph[1] = (Elf64_Phdr){.p_type = PT_LOAD, .p_offset = 0, .p_vaddr = 0, .p_filesz = 4096};
    /* The build-id note sits right after the headers, in the same page. */
    uint64_t note_off = phoff + 3 * sizeof(Elf64_Phdr);
    ph[2] = (Elf64_Phdr){.p_type = PT_NOTE, .p_offset = note_off, .p_vaddr = note_off, .p_filesz = 16 + 8};
    uint8_t *note = phpage + (note_off & 4095);
    Elf64_Nhdr nh = {4, 8, NT_GNU_BUILD_ID};
    memcpy(note, &nh, sizeof nh);
    memcpy(note + sizeof nh, "GNU", 4);
    memcpy(note + sizeof nh + 4, "\x01\x02\x03\x04\x05\x06\x07\x08", 8);
}

START_TEST(test_module_elf_info)
{
    uint8_t *mem = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(mem, MAP_FAILED);
    uint8_t id[64];
    uint32_t idlen;
    uint64_t bias;
    /* Headers in the first page. */
    fake_image(mem, mem, 64);
    struct hpf_segment one[] = {{(uintptr_t)mem, (uintptr_t)mem + 4096, 0, 1, 0}};
    hp_module_elf_info(one, 1, &bias, id, &idlen);
    ck_assert_uint_eq(bias, (uintptr_t)mem);
    ck_assert_uint_eq(idlen, 8);
    ck_assert_int_eq(id[7], 8);
    /* Headers at file offset 80 MiB, mapped two pages on, with a gap between. */
    memset(mem, 0, 3 * 4096);
    uint64_t phoff = (uint64_t)80 << 20;
    fake_image(mem, mem + 2 * 4096, phoff);
    struct hpf_segment two[] = {{(uintptr_t)mem, (uintptr_t)mem + 4096, 0, 1, 0},
                                {(uintptr_t)mem + 2 * 4096, (uintptr_t)mem + 3 * 4096, phoff, 5, 0}};
    hp_module_elf_info(two, 2, &bias, id, &idlen);
    ck_assert_uint_eq(bias, (uintptr_t)mem);
    ck_assert_uint_eq(idlen, 8);
    ck_assert_int_eq(id[0], 1);
    /* Without the segment that holds them: no bias rather than a wrong one. */
    hp_module_elf_info(two, 1, &bias, id, &idlen);
    ck_assert_uint_eq(bias, 0);
    ck_assert_uint_eq(idlen, 0);
    munmap(mem, 3 * 4096);
}
END_TEST

START_TEST(test_contexts_per_site)
{
    init_profiler("output=:verbosity=0");
    uint32_t a[5], b[3];
    for (int i = 0; i < 5; i++)
        a[i] = site(0)(100, 0, 0);
    for (int i = 0; i < 3; i++)
        b[i] = site(1)(1000, 0, 0);
    ck_assert_uint_gt(a[0], 0);
    ck_assert_uint_gt(b[0], 0);
    ck_assert_uint_ne(a[0], b[0]);
    for (int i = 1; i < 5; i++)
        ck_assert_uint_eq(a[i], a[0]);
    for (int i = 1; i < 3; i++)
        ck_assert_uint_eq(b[i], b[0]);
    /* The depot holds each site's stack: one frame, the site's return address. */
    struct hp_ctx *ca = ctx(a[0]), *cb = ctx(b[0]);
    ck_assert_uint_eq(ca->id, a[0]);
    ck_assert_uint_eq(ca->depth, 1);
    ck_assert_uint_eq(ca->pcs[0], site_pc(0));
    ck_assert_uint_eq(cb->depth, 1);
    ck_assert_uint_eq(cb->pcs[0], site_pc(1));
    ck_assert_uint_eq(hp_prof.next_id, 3); /* ids 1 and 2 */
    /* A third site gets a third id. */
    uint32_t c = site(7)(1, 0, 0);
    ck_assert_uint_ne(c, a[0]);
    ck_assert_uint_ne(c, b[0]);
    ck_assert_uint_eq(ctx(c)->pcs[0], site_pc(7));
}
END_TEST

/* One thread: each context's values at the global peak are exact, whether it changed after the
 * peak (copied lazily at its first change), never changed again (copied at the dump), was
 * created after the peak (0), or had its thread cache entry displaced in between. */
START_TEST(test_values_at_peak_one_thread)
{
    init_profiler("output=:verbosity=0:thread_cache_size=1");
    uint32_t a = 0, b = 0, d = 0;
    d = site(3)(10, 1, 0);                /* D: 10, never touched again */
    for (int i = 0; i < 3; i++)
        a = site(0)(100, 1, 0);           /* A: 300 */
    for (int i = 0; i < 2; i++)
        b = site(1)(100, 1, 0);           /* B: 200; heap 510, the peak */
    hp_profile_free(a, 100, 1, 0);        /* the heap shrinks: values at the peak wanted */
    hp_profile_free(b, 100, 1, 0);
    hp_profile_free(b, 100, 1, 0);        /* B: 0 */
    uint32_t c = site(2)(50, 2, 0);       /* C: created after the peak */
    a = site(0)(100, 2, 0);               /* A: back to 300, heap 360 */
    hp_profile_flush_all();
    hp_peak_finish();
    ck_assert_uint_eq(hp_prof.peak_size, 510);
    ck_assert_uint_eq(hp_prof.peak_count, 6);
    ck_assert_uint_eq(ctx(a)->peak_live_size, 300);
    ck_assert_uint_eq(ctx(a)->peak_live_count, 3);
    ck_assert_uint_eq(ctx(b)->peak_live_size, 200);
    ck_assert_uint_eq(ctx(b)->peak_live_count, 2);
    ck_assert_uint_eq(ctx(d)->peak_live_size, 10);
    ck_assert_uint_eq(ctx(d)->peak_live_count, 1);
    ck_assert_uint_eq(ctx(c)->peak_live_size, 0);
    ck_assert_uint_eq(ctx(c)->peak_live_count, 0);

    /* A higher peak later replaces all of them. */
    for (int i = 0; i < 4; i++)
        c = site(2)(50, 3, 0);            /* C: 250, heap 560 */
    hp_profile_free(c, 50, 3, 0);
    hp_profile_flush_all();
    hp_peak_finish();
    ck_assert_uint_eq(hp_prof.peak_size, 560);
    ck_assert_uint_eq(ctx(c)->peak_live_size, 250);
    ck_assert_uint_eq(ctx(a)->peak_live_size, 300);
    ck_assert_uint_eq(ctx(b)->peak_live_size, 0);
    ck_assert_uint_eq(ctx(d)->peak_live_size, 10);

    /* A new peak only 2 bytes higher (heap 510 -> 562 > 560) still counts with one thread. */
    a = site(0)(52, 4, 0);
    hp_profile_free(a, 52, 4, 0);
    hp_profile_flush_all();
    hp_peak_finish();
    ck_assert_uint_eq(hp_prof.peak_size, 562);
    ck_assert_uint_eq(ctx(a)->peak_live_size, 352);
    ck_assert_uint_eq(ctx(a)->peak_live_count, 4);
    ck_assert_uint_eq(ctx(c)->peak_live_size, 200);
}
END_TEST

/* One thread, against a model: random allocations and frees over 12 sites (a thread cache of 4
 * entries, so entries are displaced all the time), in phases that climb to a new peak in small
 * steps, fall back by more events than the undo log holds, or wander; dumps in between. After
 * each dump every context's values at the peak are those the model saw when the heap last rose
 * above its previous peak. */
#define RP_SITES 12
#define RP_BLOCKS 6000

START_TEST(test_values_at_peak_model)
{
    init_profiler("output=:verbosity=0:thread_cache_size=4");
    static struct { int site; uint32_t ctx; uint64_t size; } blk[RP_BLOCKS];
    int nblk = 0;
    int64_t live_size[RP_SITES] = {0}, live_count[RP_SITES] = {0};
    int64_t at_peak_size[RP_SITES] = {0}, at_peak_count[RP_SITES] = {0};
    uint32_t id[RP_SITES] = {0};
    int64_t heap = 0, peak = 0;
    uint64_t rnd = 12345;
    int dumps = 0;
    for (int phase = 0; phase < 40; phase++) {
        int kind = phase % 4; /* 0, 2: climb; 1: fall far; 3: wander */
        int steps = kind == 1 ? 2500 : 800;
        for (int i = 0; i < steps; i++) {
            rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
            unsigned r = (unsigned)(rnd >> 33);
            int alloc_pct = kind == 1 ? 15 : kind == 3 ? 50 : 60;
            if (nblk == 0 || (nblk < RP_BLOCKS && (int)(r % 100) < alloc_pct)) {
                int k = (int)((r >> 8) % RP_SITES);
                uint64_t size = 1 + (r >> 12) % 500;
                uint32_t c = site(k)(size, (uint32_t)phase, 0);
                ck_assert_uint_gt(c, 0);
                id[k] = c;
                blk[nblk].site = k, blk[nblk].ctx = c, blk[nblk].size = size;
                nblk++;
                live_size[k] += (int64_t)size, live_count[k]++;
                heap += (int64_t)size;
                if (heap > peak) {
                    peak = heap;
                    memcpy(at_peak_size, live_size, sizeof live_size);
                    memcpy(at_peak_count, live_count, sizeof live_count);
                }
            } else {
                int j = (int)((r >> 8) % (unsigned)nblk);
                int k = blk[j].site;
                hp_profile_free(blk[j].ctx, blk[j].size, (uint32_t)phase, 0);
                live_size[k] -= (int64_t)blk[j].size, live_count[k]--;
                heap -= (int64_t)blk[j].size;
                blk[j] = blk[--nblk];
            }
        }
        if (phase % 3 == 2 || phase == 39) {
            hp_profile_flush_all();
            hp_peak_finish();
            dumps++;
            ck_assert_uint_eq(hp_prof.peak_size, (uint64_t)peak);
            for (int k = 0; k < RP_SITES; k++) {
                if (!id[k])
                    continue;
                ck_assert_msg(ctx(id[k])->peak_live_size == (uint64_t)at_peak_size[k] &&
                                  ctx(id[k])->peak_live_count == (uint64_t)at_peak_count[k],
                              "phase %d site %d: at the peak %lu bytes in %lu blocks, want %ld in %ld",
                              phase, k, (unsigned long)ctx(id[k])->peak_live_size,
                              (unsigned long)ctx(id[k])->peak_live_count, (long)at_peak_size[k],
                              (long)at_peak_count[k]);
            }
        }
    }
    ck_assert_int_ge(dumps, 10);
}
END_TEST

/* fork from one thread: the child goes on with the parent's values at the peak, including the
 * contexts whose values were not copied yet when it forked. */
START_TEST(test_values_at_peak_after_fork)
{
    init_profiler("output=:verbosity=0");
    uint32_t a = 0;
    for (int i = 0; i < 3; i++)
        a = site(0)(100, 1, 0);            /* A: 300 */
    uint32_t b = site(1)(50, 1, 0);        /* heap 350, the peak */
    hp_profile_free(b, 50, 1, 0);          /* values at the peak wanted; A's not copied yet */
    hp_profile_fork_prepare();
    hp_profile_fork_child();               /* as the child of fork() */
    hp_profile_free(a, 100, 2, 0);         /* A changes after the peak, in the child */
    hp_profile_flush_all();
    hp_peak_finish();
    ck_assert_uint_eq(hp_prof.peak_size, 350);
    ck_assert_uint_eq(ctx(a)->peak_live_size, 300);
    ck_assert_uint_eq(ctx(a)->peak_live_count, 3);
    ck_assert_uint_eq(ctx(b)->peak_live_size, 50);
    ck_assert_uint_eq(ctx(a)->live_size, 200);
}
END_TEST

/* A thread's tables start small and grow when it allocates from many stacks: 600 contexts
 * displace each other in 256 entries (ids 256 apart share a slot) until the entries grow to
 * 1024, and miss the stack cache until it grows. Nothing is lost on the way. */
START_TEST(test_thread_tables_grow)
{
    init_profiler("output=:verbosity=0:thread_cache_size=4096");
    uint32_t id[MAX_SITES];
    uint64_t entries, sets;
    id[0] = site(0)(1, 1, 0);
    hp_profile_thread_tables(&entries, &sets);
    ck_assert_uint_eq(entries, 256);
    ck_assert_uint_eq(sets, 256);
    for (int round = 0; round < 20; round++)
        for (int k = 0; k < MAX_SITES; k++) {
            id[k] = site(k)((uint64_t)k + 1, (uint32_t)round, 0);
            if (round % 2 == 0)
                hp_profile_free(id[k], (uint64_t)k + 1, (uint32_t)round, 0);
        }
    hp_profile_thread_tables(&entries, &sets);
    ck_assert_uint_eq(entries, 1024);
    ck_assert_uint_ge(sets, 1024);
    hp_profile_flush_all();
    struct hibs *s = calloc(1, sizeof *s);
    ck_assert_ptr_nonnull(s);
    hp_table_foreach(collect, s);
    for (int k = 0; k < MAX_SITES; k++) {
        struct hp_ctx *c = ctx(id[k]);
        uint64_t n = k == 0 ? 21 : 20; /* site 0 allocated once more at the start */
        ck_assert_uint_eq(c->allocs, n);
        ck_assert_uint_eq(c->bytes, n * ((uint64_t)k + 1));
        ck_assert_int_eq(c->live_count, (int64_t)n - 10);
        const struct hpf_hib *h = hib_of(s, id[k]);
        ck_assert_ptr_nonnull(h);
        ck_assert_uint_eq(h->alloc_count, 10);
        ck_assert_uint_eq(h->total_size, 10 * ((uint64_t)k + 1));
    }
    free(s);
}
END_TEST

/* The threads' batch grows with the peak: peak_slack_kb, or 1/256 of the peak (a power of two). */
START_TEST(test_slack_follows_peak)
{
    init_profiler("output=:verbosity=0:peak_slack_kb=1");
    ck_assert_uint_eq(hp_prof.slack, 1024);
    uint32_t a = site(0)(100000, 1, 0);    /* 100000 / 256 = 390: below the minimum */
    ck_assert_uint_eq(hp_prof.slack, 1024);
    site(0)(1000000, 1, 0);                /* peak 1100000 / 256 = 4296 -> 8192 */
    ck_assert_uint_eq(hp_prof.slack, 8192);
    hp_profile_free(a, 100000, 1, 0);
    ck_assert_uint_eq(hp_profile_slack_bound(), 0); /* one thread: exact */
    hp_note_threads();
    ck_assert_uint_eq(hp_profile_slack_bound(), 8192 * 2);
}
END_TEST

START_TEST(test_live_counters_and_table)
{
    init_profiler("output=:verbosity=0");
    uint32_t a = 0, b = 0;
    for (int i = 0; i < 5; i++)
        a = site(0)(100, 10, 1);
    hp_profile_free(a, 100, 10, 1);
    hp_profile_free(a, 100, 10, 1);
    for (int i = 0; i < 3; i++)
        b = site(1)(1000, 20, 2);
    hp_profile_free(b, 1000, 20, 2);
    hp_profile_flush_all();

    struct hp_ctx *ca = ctx(a), *cb = ctx(b);
    ck_assert_uint_eq(ca->allocs, 5);
    ck_assert_uint_eq(ca->bytes, 500);
    ck_assert_int_eq(ca->live_count, 3);
    ck_assert_int_eq(ca->live_size, 300);
    ck_assert_uint_eq(ca->max_live_count, 5);
    ck_assert_uint_eq(ca->max_live_size, 500);
    ck_assert_uint_eq(ca->min_size, 100);
    ck_assert_uint_eq(ca->max_size, 100);
    ck_assert_uint_eq(ca->first_alloc_ms, 10);
    ck_assert_uint_eq(ca->last_alloc_ms, 10);
    ck_assert_int_eq(ca->live_ts, 3 * 10);
    ck_assert_uint_eq(cb->allocs, 3);
    ck_assert_uint_eq(cb->bytes, 3000);
    ck_assert_int_eq(cb->live_count, 2);
    ck_assert_int_eq(cb->live_size, 2000);
    ck_assert_uint_eq(cb->max_live_size, 3000);
    ck_assert_uint_eq(cb->max_live_count, 3);

    ck_assert_uint_eq(hp_prof.total_allocs, 8);
    ck_assert_uint_eq(hp_prof.total_frees, 3);
    ck_assert_uint_eq(hp_prof.total_bytes, 3500);
    ck_assert_int_eq(hp_prof.live_size, 2300);
    ck_assert_int_eq(hp_prof.live_count, 5);
    /* 500, 300 after the frees, 3300 after B's allocations, then 2300. */
    ck_assert_uint_eq(hp_prof.peak_size, 3300);
    ck_assert_uint_eq(hp_prof.peak_count, 6);
    ck_assert_uint_eq(hp_profile_slack_bound(), 0); /* one thread: exact */

    struct hibs s;
    s.n = 0;
    hp_table_foreach(collect, &s);
    ck_assert_int_eq(s.n, 2);
    const struct hpf_hib *ha = hib_of(&s, a), *hb = hib_of(&s, b);
    ck_assert_ptr_nonnull(ha);
    ck_assert_ptr_nonnull(hb);
    ck_assert_uint_eq(ha->alloc_count, 2);
    ck_assert_uint_eq(ha->total_size, 200);
    ck_assert_uint_eq(ha->min_size, 100);
    ck_assert_uint_eq(ha->max_size, 100);
    ck_assert_uint_eq(ha->alloc_timestamp_ms, 10);
    ck_assert_uint_eq(ha->alloc_cpu_id, 1);
    ck_assert_uint_eq(ha->flags, 0);
    ck_assert_uint_eq(hb->alloc_count, 1);
    ck_assert_uint_eq(hb->total_size, 1000);
    ck_assert_uint_eq(hb->alloc_cpu_id, 2);
    ck_assert_uint_eq(hp_counters.evicted_hibs, 0);
    ck_assert_uint_eq(hp_counters.unprofiled_allocs, 0);

    /* A second flush with nothing new changes nothing. */
    hp_profile_flush_all();
    s.n = 0;
    hp_table_foreach(collect, &s);
    ck_assert_int_eq(s.n, 2);
    ck_assert_uint_eq(hib_of(&s, a)->alloc_count, 2);
    ck_assert_uint_eq(ca->allocs, 5);
}
END_TEST

START_TEST(test_lifetimes_from_clock)
{
    init_profiler("output=:verbosity=0");
    uint32_t id = site(3)(64, 0, 0);
    /* Allocated "at" 0xfffffff0: the clock wrapped since; the lifetime is now + 0x10. */
    uint32_t now0 = hp_now_ms();
    hp_profile_free(id, 64, 0xfffffff0u, 0);
    uint32_t now1 = hp_now_ms();
    hp_profile_flush_all();
    struct hibs s;
    s.n = 0;
    hp_table_foreach(collect, &s);
    const struct hpf_hib *h = hib_of(&s, id);
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_ge(h->total_lifetime_ms, (uint64_t)now0 + 0x10);
    ck_assert_uint_le(h->total_lifetime_ms, (uint64_t)now1 + 0x10);
    ck_assert_uint_eq(h->alloc_timestamp_ms, 0xfffffff0u);
    ck_assert_uint_ge(h->dealloc_timestamp_ms, now0);
}
END_TEST

START_TEST(test_eviction_without_output)
{
    init_profiler("output=:verbosity=0:hib_table_size=4:hib_table_ways=1:thread_cache_size=16");
    enum { N = 16 };
    uint32_t id[N];
    for (int k = 0; k < N; k++) {
        id[k] = site(k)(8 + (uint64_t)k, 0, 0);
        hp_profile_free(id[k], 8 + (uint64_t)k, 0, 0);
    }
    for (int k = 0; k < N; k++)
        for (int j = k + 1; j < N; j++)
            ck_assert_uint_ne(id[k], id[j]);
    hp_profile_flush_all();
    struct hibs s;
    s.n = 0;
    hp_table_foreach(collect, &s);
    /* 4 sets of one way: at most 4 entries stay; every other context's HIB was evicted
     * (and dropped: there is no output file). Each context was merged exactly once. */
    ck_assert_int_le(s.n, 4);
    ck_assert_int_ge(s.n, 1);
    ck_assert_uint_eq(hp_counters.evicted_hibs, (uint64_t)(N - s.n));
    for (int i = 0; i < s.n; i++) {
        ck_assert_uint_eq(s.h[i].alloc_count, 1);
        ck_assert_uint_eq(s.h[i].flags, 0);
        int k = -1;
        for (int j = 0; j < N; j++)
            if (id[j] == s.h[i].context_id)
                k = j;
        ck_assert_int_ge(k, 0);
        ck_assert_uint_eq(s.h[i].total_size, 8 + (uint64_t)k);
    }
    /* Live counters do not depend on the table. */
    for (int k = 0; k < N; k++) {
        ck_assert_uint_eq(ctx(id[k])->allocs, 1);
        ck_assert_int_eq(ctx(id[k])->live_count, 0);
    }
    ck_assert_int_eq(hp_prof.live_size, 0);
    ck_assert_uint_eq(hp_prof.total_frees, N);
}
END_TEST

START_TEST(test_context_limit)
{
    init_profiler("output=:verbosity=0:max_contexts=16");
    ck_assert_uint_eq(hp_prof.max_id, 17);
    int got = 0, zero = 0;
    for (int k = 0; k < 20; k++) {
        uint32_t id = site(k)(32, 0, 0);
        if (id) {
            got++;
            ck_assert_uint_le(id, 16);
        } else {
            zero++;
        }
    }
    ck_assert_int_eq(got, 16);
    ck_assert_int_eq(zero, 4);
    ck_assert_uint_eq(hp_counters.unprofiled_allocs, 4);
    /* Known sites still work. */
    ck_assert_uint_eq(site(0)(32, 0, 0), site(0)(32, 0, 0));
    ck_assert_uint_ne(site(0)(32, 0, 0), 0);
    /* Frees of an out-of-range id are ignored. */
    hp_profile_free(17, 32, 0, 0);
    hp_profile_free(UINT32_MAX, 32, 0, 0);
    hp_profile_flush_all();
    ck_assert_uint_eq(hp_prof.total_frees, 0);
}
END_TEST

START_TEST(test_reentrant_calls)
{
    init_profiler("output=:verbosity=0");
    uint32_t id = site(0)(100, 0, 0);
    uint32_t id2 = site(0)(100, 0, 0);
    ck_assert_uint_eq(id, id2);
    /* Inside the shim's own work (depth other than HP_DEPTH_EVENT; e.g. a handler that
     * interrupted a dump): allocations are not profiled, frees are deferred and applied by the
     * thread's next call or the next flush. */
    hp_tls.depth = 1;
    ck_assert_uint_eq(site(0)(100, 0, 0), 0);
    hp_profile_free(id, 100, 0, 0);
    hp_tls.depth = 0;
    ck_assert_uint_eq(hp_counters.unprofiled_allocs, 1);
    ck_assert_int_eq(ctx(id)->live_count, 0); /* nothing pushed yet */
    hp_profile_flush_all(); /* applies the deferred free */
    ck_assert_int_eq(ctx(id)->live_count, 1);
    ck_assert_uint_eq(hp_prof.total_frees, 1);
    ck_assert_uint_eq(hp_prof.total_allocs, 2);
    ck_assert_uint_eq(site(0)(50, 0, 0), id);
    hp_profile_flush_all();
    ck_assert_uint_eq(hp_prof.total_frees, 1);
    ck_assert_uint_eq(hp_prof.total_allocs, 3);
    ck_assert_int_eq(ctx(id)->live_count, 2);
    ck_assert_int_eq(ctx(id)->live_size, 150);
    ck_assert_int_eq(hp_prof.live_size, 150);
    struct hibs s;
    s.n = 0;
    hp_table_foreach(collect, &s);
    ck_assert_uint_eq(hib_of(&s, id)->alloc_count, 1);
}
END_TEST

/* A signal handler that allocates while its thread is recording an event of its own (depth
 * HP_DEPTH_EVENT): its blocks get their context at once, and its events are applied by the
 * interrupted thread afterwards, in the order they happened. */
START_TEST(test_handler_calls)
{
    init_profiler("output=:verbosity=0");
    uint32_t id = site(0)(100, 0, 0);
    ck_assert_uint_ne(id, 0);
    hp_tls.depth = HP_DEPTH_EVENT;
    uint32_t a = site(1)(200, 5, 0);
    uint32_t b = site(1)(300, 5, 0);
    ck_assert_uint_ne(a, 0);
    ck_assert_uint_eq(a, b);
    ck_assert_uint_ne(a, id);
    hp_profile_free(a, 200, 5, 0);
    hp_profile_free(b, 300, 5, 0);
    hp_tls.depth = 0;
    ck_assert_uint_eq(hp_counters.unprofiled_allocs, 0);
    struct hp_ctx *c = ctx(a);
    ck_assert_uint_eq(c->allocs, 0); /* waiting for the interrupted call */
    /* The next call applies them, oldest first: 200 then 500 bytes live, then 300, then none
     * (newest first would never have had more than nothing live). */
    ck_assert_uint_eq(site(0)(100, 6, 0), id);
    hp_profile_flush_all();
    ck_assert_uint_eq(c->allocs, 2);
    ck_assert_uint_eq(c->bytes, 500);
    ck_assert_int_eq(c->live_count, 0);
    ck_assert_int_eq(c->live_size, 0);
    ck_assert_uint_eq(c->max_live_count, 2);
    ck_assert_uint_eq(c->max_live_size, 500);
    /* A block a handler allocated, freed by the thread before anything applied the allocation:
     * the free applies it first, so the context never goes below nothing live. */
    hp_tls.depth = HP_DEPTH_EVENT;
    uint32_t d = site(1)(700, 7, 0);
    hp_tls.depth = 0;
    ck_assert_uint_eq(d, a);
    hp_profile_free(d, 700, 7, 0);
    hp_profile_flush_all();
    ck_assert_uint_eq(c->allocs, 3);
    ck_assert_int_eq(c->live_count, 0);
    ck_assert_uint_eq(c->max_live_size, 700);
    /* Waiting events are part of what a flush (a dump, the thread's exit) takes in. */
    hp_tls.depth = HP_DEPTH_EVENT;
    ck_assert_uint_eq(site(1)(900, 8, 0), a);
    hp_tls.depth = 0;
    hp_profile_flush_all();
    ck_assert_uint_eq(c->allocs, 4);
    ck_assert_int_eq(c->live_size, 900);
    struct hibs s;
    s.n = 0;
    hp_table_foreach(collect, &s);
    const struct hpf_hib *h = hib_of(&s, a);
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_eq(h->alloc_count, 3);
    ck_assert_uint_eq(h->total_size, 1200);
    /* The shim's own work (any other depth) is not the program's: not recorded. */
    hp_tls.depth = 1;
    ck_assert_uint_eq(site(1)(100, 9, 0), 0);
    hp_tls.depth = HP_DEPTH_EVENT + 1;
    ck_assert_uint_eq(site(1)(100, 9, 0), 0);
    hp_tls.depth = 0;
    ck_assert_uint_eq(hp_counters.unprofiled_allocs, 2);
}
END_TEST

/* ---------- several threads ---------- */

#define NT 4
#define PER 2000

/* Event i of thread t: a block of 16 + 1000k + t bytes from site k = i % 2 (two sites shared by
 * every thread), freed right away unless i % 4 == 3 (those, all from site 1, stay live). */
static uint64_t event_size(int t, int i) { return 16 + (uint64_t)(i % 2) * 1000 + (uint64_t)t; }

static void site_event(int t, int i)
{
    uint64_t size = event_size(t, i);
    uint32_t id = site(i % 2)(size, (uint32_t)i, (uint32_t)t);
    if (i % 4 != 3 && id)
        hp_profile_free(id, size, (uint32_t)i, (uint32_t)t);
}

/* What events 0 .. n[t] - 1 of threads t < NT must add up to, per site. */
struct sums {
    uint64_t count[2], bytes[2], live[2], nlive;
};

static struct sums expected_sums(const int *n)
{
    struct sums e;
    memset(&e, 0, sizeof e);
    for (int t = 0; t < NT; t++)
        for (int i = 0; i < n[t]; i++) {
            int k = i % 2;
            e.count[k]++;
            e.bytes[k] += event_size(t, i);
            if (i % 4 == 3) {
                e.live[k] += event_size(t, i);
                e.nlive++;
            }
        }
    return e;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < PER; i++)
        site_event(t, i);
    return NULL;
}

/* The profiler set up for several threads, and NT threads running fn(t). */
static void start_threads(const char *spec, pthread_t *th, void *(*fn)(void *))
{
    init_profiler(spec);
    hp_note_threads();
    for (int t = 0; t < NT; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, fn, (void *)(intptr_t)t), 0);
}

START_TEST(test_threads)
{
    pthread_t th[NT];
    start_threads("output=:verbosity=0:thread_cache_size=16:peak_slack_kb=1", th, worker);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    hp_profile_flush_all();

    ck_assert_uint_eq(hp_counters.unprofiled_allocs, 0);
    ck_assert_uint_eq(hp_prof.total_allocs, NT * PER);
    ck_assert_uint_eq(hp_prof.total_frees, NT * PER * 3 / 4);
    int per[NT];
    for (int t = 0; t < NT; t++)
        per[t] = PER;
    struct sums e = expected_sums(per);
    uint64_t *bytes = e.bytes, *live = e.live;
    ck_assert_uint_eq(hp_prof.total_bytes, bytes[0] + bytes[1]);
    ck_assert_int_eq(hp_prof.live_size, (int64_t)(live[0] + live[1]));
    ck_assert_int_eq(hp_prof.live_count, NT * PER / 4);
    ck_assert_uint_ge(hp_prof.peak_size, live[0] + live[1]);
    ck_assert_uint_le(hp_prof.peak_size, bytes[0] + bytes[1]);
    ck_assert_uint_gt(hp_profile_slack_bound(), 0);

    /* Both sites have one context each, shared by every thread. (Threads racing to insert the
     * same stack may leave a hole in the ids, so count contexts, not ids.) */
    ck_assert_uint_eq(hp_prof.ncontexts, 2);
    struct hibs s;
    s.n = 0;
    hp_table_foreach(collect, &s);
    ck_assert_int_eq(s.n, 2);
    int seen = 0;
    for (uint32_t id = 1; id < hp_prof.next_id; id++) {
        if (!hp_prof.by_id[id])
            continue;
        seen++;
        struct hp_ctx *c = ctx(id);
        int k = c->pcs[0] == site_pc(0) ? 0 : 1;
        ck_assert_uint_eq(c->pcs[0], site_pc(k));
        ck_assert_uint_eq(c->allocs, NT * PER / 2);
        ck_assert_uint_eq(c->bytes, bytes[k]);
        ck_assert_int_eq(c->live_size, (int64_t)live[k]);
        ck_assert_int_eq(c->live_count, k ? NT * PER / 4 : 0);
        ck_assert_uint_eq(c->min_size, 16 + (uint64_t)k * 1000);
        ck_assert_uint_eq(c->max_size, 16 + (uint64_t)k * 1000 + NT - 1);
        const struct hpf_hib *h = hib_of(&s, id);
        ck_assert_ptr_nonnull(h);
        ck_assert_uint_eq(h->alloc_count, k ? NT * PER / 4 : NT * PER / 2);
        ck_assert_uint_eq(h->total_size, bytes[k] - live[k]);
    }
    ck_assert_int_eq(seen, 2);
    ck_assert_uint_eq(hp_counters.evicted_hibs, 0);
}
END_TEST

/* ---------- access profiling ---------- */

/* Blocks freed with access figures reach the table with them (kept beside the thread's entry
 * until it is flushed); blocks freed without (before an instrumented module attached) merge in
 * as blocks of no accesses. */
START_TEST(test_access_frees)
{
    init_profiler("output=:verbosity=0:access_hist_granules=4");
    ck_assert_uint_eq(hp_hist_bins, 4);
    uint32_t a = 0;
    for (int i = 0; i < 4; i++)
        a = site(0)(256, 10, 0);
    /* Small blocks bring their histograms along; the thread's cache sums them. */
    struct hp_access x = {320, 320, 100, 4, {100, 100, 100, 20}}, y = {16, 4, 50, 2, {10, 6}};
    hp_profile_free_access(a, 256, 10, 0, &x);
    hp_profile_free_access(a, 256, 10, 0, &y);
    struct hibs s;
    s.n = 0;
    hp_table_foreach(collect, &s);
    ck_assert_ptr_null(hib_of(&s, a)); /* in the thread's cache, figures beside the entry */
    uint64_t *hist = ctx(a)->access->hist;
    ck_assert_uint_eq(hist[0] + hist[1] + hist[2] + hist[3], 0); /* the bins too */
    hp_profile_flush_all();
    ck_assert_uint_eq(hist[0], 110);
    ck_assert_uint_eq(hist[1], 106);
    ck_assert_uint_eq(hist[2], 100);
    ck_assert_uint_eq(hist[3], 20);
    s.n = 0;
    hp_table_foreach(collect, &s);
    const struct hpf_hib *h = hib_of(&s, a);
    ck_assert_ptr_nonnull(h);
    ck_assert_uint_eq(h->alloc_count, 2);
    ck_assert_uint_eq(h->total_access_count, 336);
    ck_assert_uint_eq(h->min_access_count, 16);
    ck_assert_uint_eq(h->max_access_count, 320);
    ck_assert_uint_eq(h->total_write_count, 324);
    ck_assert_uint_eq(h->min_write_count, 4);
    ck_assert_uint_eq(h->max_write_count, 320);
    ck_assert_uint_eq(h->total_percent_utilized, 150);
    ck_assert_uint_eq(h->min_percent_utilized, 50);
    ck_assert_uint_eq(h->max_percent_utilized, 100);
    /* One without figures, merged at the flush: no accesses. */
    hp_profile_free(a, 256, 10, 0);
    hp_profile_flush_all();
    struct hp_ctx *c = ctx(a);
    ck_assert_int_eq(c->live_count, 1);
    s.n = 0;
    hp_table_foreach(collect, &s);
    h = hib_of(&s, a);
    ck_assert_uint_eq(h->alloc_count, 3);
    ck_assert_uint_eq(h->total_access_count, 336);
    ck_assert_uint_eq(h->min_access_count, 0);
    ck_assert_uint_eq(h->min_write_count, 0);
    ck_assert_uint_eq(h->max_write_count, 320);
    /* A signal handler's free with figures waits for the interrupted call, figures included. */
    hp_tls.depth = HP_DEPTH_EVENT;
    struct hp_access z = {1000, 0, 25, 1, {1000}};
    hp_profile_free_access(a, 256, 10, 0, &z);
    hp_tls.depth = 0;
    ck_assert_uint_eq(site(1)(8, 11, 0), site(1)(8, 11, 0));
    hp_profile_flush_all();
    ck_assert_uint_eq(hist[0], 1110);
    s.n = 0;
    hp_table_foreach(collect, &s);
    h = hib_of(&s, a);
    ck_assert_uint_eq(h->alloc_count, 4);
    ck_assert_uint_eq(h->total_access_count, 1336);
    ck_assert_uint_eq(h->max_access_count, 1000);
    ck_assert_uint_eq(h->min_percent_utilized, 0);
    ck_assert_int_eq(c->live_count, 0);
}
END_TEST

/* More contexts than the thread's first table of entries holds: entries displaced and the
 * table grown, the figures beside them carried along, none lost or given to another context. */
START_TEST(test_access_table_grows)
{
    init_profiler("output=:verbosity=0");
    uint32_t id[MAX_SITES];
    for (int round = 0; round < 3; round++)
        for (int k = 0; k < MAX_SITES; k++) {
            id[k] = site(k)(64, 0, 0);
            struct hp_access a = {(uint64_t)k, (uint64_t)round, 100, 1, {(uint64_t)k}};
            hp_profile_free_access(id[k], 64, 0, 0, &a);
        }
    uint64_t entries, sets;
    hp_profile_thread_tables(&entries, &sets);
    ck_assert_uint_gt(entries, 256);
    hp_profile_flush_all();
    struct hibs s;
    s.n = 0;
    hp_table_foreach(collect, &s);
    ck_assert_int_eq(s.n, MAX_SITES);
    for (int k = 0; k < MAX_SITES; k++) {
        const struct hpf_hib *h = hib_of(&s, id[k]);
        ck_assert_ptr_nonnull(h);
        ck_assert_uint_eq(h->alloc_count, 3);
        ck_assert_uint_eq(h->total_access_count, 3 * (uint64_t)k);
        ck_assert_uint_eq(h->min_access_count, (uint64_t)k);
        ck_assert_uint_eq(h->total_write_count, 0 + 1 + 2);
        ck_assert_uint_eq(h->min_write_count, 0);
        ck_assert_uint_eq(h->max_write_count, 2);
        ck_assert_uint_eq(h->total_percent_utilized, 300);
        uint64_t *hist = ctx(id[k])->access ? ctx(id[k])->access->hist : NULL;
        if (k)
            ck_assert_uint_eq(hist[0], 3 * (uint64_t)k); /* bins carried along too */
    }
}
END_TEST

/* A context's histogram: made on first use, only for blocks of up to hp_hist_bins granules. */
START_TEST(test_access_hist)
{
    init_profiler("output=:verbosity=0:access_hist_granules=8");
    uint32_t a = site(0)(256, 0, 0);
    ck_assert_ptr_null(ctx(a)->access);
    ck_assert_ptr_null(hp_profile_hist(a, 9));
    ck_assert_ptr_null(hp_profile_hist(a, 0));
    uint64_t *h = hp_profile_hist(a, 8);
    ck_assert_ptr_nonnull(h);
    ck_assert_ptr_eq(ctx(a)->access->hist, h);
    ck_assert_ptr_eq(hp_profile_hist(a, 1), h);
    for (int i = 0; i < 16; i++) /* freed bins, then the live ones: all zero */
        ck_assert_uint_eq(h[i], 0);
    ck_assert_ptr_null(hp_ctx_access(0, 1));
    ck_assert_ptr_null(hp_ctx_access(hp_prof.max_id, 1));
    /* access_hist_granules=0: no histograms, the state all the same. */
    hp_hist_bins = 0;
    uint32_t b = site(1)(64, 0, 0);
    ck_assert_ptr_null(hp_profile_hist(b, 1));
    ck_assert_ptr_nonnull(hp_ctx_access(b, 0));
}
END_TEST

/* Several threads freeing blocks of shared contexts with figures: exact sums. */
static void *access_worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < PER; i++) {
        uint32_t id = site(i % 2)(64, (uint32_t)i, (uint32_t)t);
        struct hp_access acc = {(uint64_t)(i % 7), (uint64_t)(i % 3), (uint32_t)(i % 101), 2,
                                {(uint64_t)(i % 7), (uint64_t)(i % 3)}};
        if (id)
            hp_profile_free_access(id, 64, (uint32_t)i, (uint32_t)t, &acc);
    }
    return NULL;
}

START_TEST(test_access_threads)
{
    pthread_t th[NT];
    start_threads("output=:verbosity=0:thread_cache_size=16", th, access_worker);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    hp_profile_flush_all();
    uint64_t acc[2] = {0, 0}, wr[2] = {0, 0}, ut[2] = {0, 0};
    for (int i = 0; i < PER; i++) {
        acc[i % 2] += NT * (uint64_t)(i % 7);
        wr[i % 2] += NT * (uint64_t)(i % 3);
        ut[i % 2] += NT * (uint64_t)(i % 101);
    }
    struct hibs s;
    s.n = 0;
    hp_table_foreach(collect, &s);
    ck_assert_int_eq(s.n, 2);
    for (int i = 0; i < s.n; i++) {
        const struct hpf_hib *h = &s.h[i];
        int k = ctx(h->context_id)->pcs[0] == site_pc(0) ? 0 : 1;
        ck_assert_uint_eq(h->alloc_count, NT * PER / 2);
        ck_assert_uint_eq(h->total_access_count, acc[k]);
        ck_assert_uint_eq(h->total_write_count, wr[k]);
        ck_assert_uint_eq(h->total_percent_utilized, ut[k]);
        ck_assert_uint_eq(h->max_access_count, 6);
        ck_assert_uint_eq(h->min_access_count, 0);
        ck_assert_uint_eq(ctx(h->context_id)->live_count, 0);
        const uint64_t *hist = ctx(h->context_id)->access->hist; /* the threads' bins, all */
        ck_assert_uint_eq(hist[0], acc[k]);
        ck_assert_uint_eq(hist[1], wr[k]);
    }
}
END_TEST

/* Dumps fold every thread's cache in while the threads go on allocating: no event may be lost
 * or torn. The workers run until the main thread has folded their caches in FLUSHES times. */
#define FLUSHES 60
static volatile int busy_started, busy_stop;
static int busy_done[NT];

static void *busy_worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    __atomic_add_fetch(&busy_started, 1, __ATOMIC_RELAXED);
    int i = 0;
    for (; !__atomic_load_n(&busy_stop, __ATOMIC_RELAXED) || i < 4; i++)
        site_event(t, i);
    busy_done[t] = i;
    return NULL;
}

START_TEST(test_flush_during_events)
{
    pthread_t th[NT];
    start_threads("output=:verbosity=0:peak_slack_kb=1", th, busy_worker);
    while (__atomic_load_n(&busy_started, __ATOMIC_RELAXED) < NT)
        sched_yield();
    for (int f = 0; f < FLUSHES; f++) {
        /* Not back to back: the cache locks are not fair, and a flush in a loop would starve
         * the owners. */
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
        hp_profile_flush_all();
        /* As a dump: the other threads' moves wait from the flush until the hold ends. */
        hp_profile_hold(1);
        hp_profile_hold(0);
    }
    __atomic_store_n(&busy_stop, 1, __ATOMIC_RELAXED);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    hp_profile_flush_all();
    struct sums e = expected_sums(busy_done);
    uint64_t *bytes = e.bytes, *live = e.live, *count = e.count, nlive = e.nlive;
    uint64_t n = count[0] + count[1];
    ck_assert_uint_eq(hp_counters.unprofiled_allocs, 0);
    ck_assert_uint_eq(hp_prof.total_allocs, n);
    ck_assert_uint_eq(hp_prof.total_frees, n - nlive);
    ck_assert_uint_eq(hp_prof.total_bytes, bytes[0] + bytes[1]);
    ck_assert_int_eq(hp_prof.live_size, (int64_t)(live[0] + live[1]));
    ck_assert_int_eq(hp_prof.live_count, (int64_t)nlive);
    struct hibs s;
    s.n = 0;
    hp_table_foreach(collect, &s);
    for (uint32_t id = 1; id < hp_prof.next_id; id++) {
        if (!hp_prof.by_id[id])
            continue;
        struct hp_ctx *c = ctx(id);
        int k = c->pcs[0] == site_pc(0) ? 0 : 1;
        ck_assert_uint_eq(c->allocs, count[k]);
        ck_assert_uint_eq(c->bytes, bytes[k]);
        ck_assert_int_eq(c->live_count, k ? (int64_t)nlive : 0);
        const struct hpf_hib *h = hib_of(&s, id);
        ck_assert_ptr_nonnull(h);
        ck_assert_uint_eq(h->alloc_count, k ? count[1] - nlive : count[0]);
        ck_assert_uint_eq(h->total_size, bytes[k] - live[k]);
    }
}
END_TEST

/* While a dump is written (hp_profile_hold), the threads that go on allocating keep their
 * changes in their caches: the contexts and totals the dump reads stay those of the flush, even
 * with a 1 KiB slack that makes them push every few events otherwise. Nothing is lost: after
 * the hold everything arrives. */
START_TEST(test_hold_during_dump)
{
    pthread_t th[NT];
    start_threads("output=:verbosity=0:peak_slack_kb=1", th, busy_worker);
    while (__atomic_load_n(&busy_started, __ATOMIC_RELAXED) < NT)
        sched_yield();
    hp_profile_flush_all();
    hp_profile_hold(1);
    uint64_t allocs = hp_prof.total_allocs, frees = hp_prof.total_frees;
    int64_t live = hp_prof.live_size;
    uint64_t ctx_allocs[2] = {0, 0};
    for (uint32_t id = 1; id < hp_prof.next_id; id++)
        if (hp_prof.by_id[id])
            ctx_allocs[ctx(id)->pcs[0] == site_pc(0) ? 0 : 1] = ctx(id)->allocs;
    /* Long enough for thousands of events per thread. */
    struct timespec ts = {0, 30 * 1000 * 1000};
    nanosleep(&ts, NULL);
    ck_assert_uint_eq(hp_prof.total_allocs, allocs);
    ck_assert_uint_eq(hp_prof.total_frees, frees);
    ck_assert_int_eq(hp_prof.live_size, live);
    for (uint32_t id = 1; id < hp_prof.next_id; id++)
        if (hp_prof.by_id[id])
            ck_assert_uint_eq(ctx(id)->allocs, ctx_allocs[ctx(id)->pcs[0] == site_pc(0) ? 0 : 1]);
    hp_profile_hold(0);
    nanosleep(&ts, NULL);
    ck_assert_uint_gt(hp_prof.total_allocs, allocs); /* pushing again */
    __atomic_store_n(&busy_stop, 1, __ATOMIC_RELAXED);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    ck_assert_int_gt(busy_done[0], 1000);
    hp_profile_flush_all();
    struct sums e = expected_sums(busy_done);
    ck_assert_uint_eq(hp_prof.total_allocs, e.count[0] + e.count[1]);
    ck_assert_uint_eq(hp_prof.total_bytes, e.bytes[0] + e.bytes[1]);
    ck_assert_int_eq(hp_prof.live_size, (int64_t)(e.live[0] + e.live[1]));
}
END_TEST

/* A forked child's caches of the threads that did not survive the fork ("orphans") are folded
 * at its first dump and then serve its new threads, each exactly once: a second dump must not
 * hand them out again (two threads on one cache would race on its entries unlocked). */
static pthread_barrier_t orph_ready, orph_go, takers_in;
static struct hp_thread *volatile taken[NT + 1];

static void *orphan_worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < 100; i++)
        site_event(t, i);
    pthread_barrier_wait(&orph_ready);
    pthread_barrier_wait(&orph_go); /* alive with a full cache while the main thread forks */
    return NULL;
}

static void *cache_taker(void *arg)
{
    int k = (int)(intptr_t)arg;
    site_event(k % NT, 0);
    taken[k] = hp_tls.thread;
    pthread_barrier_wait(&takers_in); /* all alive at once: none gives its cache back early */
    return NULL;
}

/* The child's part: 0 when all went well. */
static int orphans_child(void)
{
    hp_profile_fork_child();
    for (int d = 0; d < 2; d++) { /* two dumps */
        hp_profile_flush_all();
        hp_profile_hold(1);
        hp_profile_hold(0);
    }
    pthread_barrier_init(&takers_in, NULL, NT + 2);
    pthread_t th[NT + 1];
    for (int k = 0; k <= NT; k++)
        if (pthread_create(&th[k], NULL, cache_taker, (void *)(intptr_t)k) != 0)
            return 2;
    pthread_barrier_wait(&takers_in);
    int bad = 0;
    for (int k = 0; k <= NT; k++) {
        bad |= taken[k] == NULL;
        for (int j = 0; j < k; j++)
            bad |= taken[j] == taken[k];
    }
    for (int k = 0; k <= NT; k++)
        pthread_join(th[k], NULL);
    return bad ? 1 : 0;
}

START_TEST(test_fork_orphans_reused_once)
{
    init_profiler("output=:verbosity=0");
    hp_note_threads();
    pthread_barrier_init(&orph_ready, NULL, NT + 1);
    pthread_barrier_init(&orph_go, NULL, NT + 1);
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, orphan_worker, (void *)(intptr_t)t), 0);
    pthread_barrier_wait(&orph_ready);
    hp_profile_fork_prepare();
    pid_t pid = fork();
    if (pid == 0)
        _exit(orphans_child());
    hp_profile_fork_parent();
    pthread_barrier_wait(&orph_go);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "the child's new threads did not each get a cache of their own (status %#x)", st);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("profile");
    tcase_add_test(tc, test_contexts_per_site);
    tcase_add_test(tc, test_module_elf_info);
    tcase_add_test(tc, test_live_counters_and_table);
    tcase_add_test(tc, test_values_at_peak_one_thread);
    tcase_add_test(tc, test_values_at_peak_model);
    tcase_add_test(tc, test_values_at_peak_after_fork);
    tcase_add_test(tc, test_fork_orphans_reused_once);
    tcase_add_test(tc, test_thread_tables_grow);
    tcase_add_test(tc, test_slack_follows_peak);
    tcase_add_test(tc, test_lifetimes_from_clock);
    tcase_add_test(tc, test_eviction_without_output);
    tcase_add_test(tc, test_context_limit);
    tcase_add_test(tc, test_reentrant_calls);
    tcase_add_test(tc, test_handler_calls);
    tcase_add_test(tc, test_threads);
    tcase_add_test(tc, test_access_frees);
    tcase_add_test(tc, test_access_hist);
    tcase_add_test(tc, test_access_table_grows);
    tcase_add_test(tc, test_access_threads);
    tcase_add_test(tc, test_flush_during_events);
    tcase_add_test(tc, test_hold_during_dump);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
