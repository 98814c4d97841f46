/* Known access patterns, one allocation site each, built with heapprof-cc (clang inline, clang
 * callbacks, gcc): the counts every mode must give are in patterns.expected, and why in README.
 * Every access to a block is a volatile load or store (or a memory intrinsic, or a struct copy),
 * so the compiler can neither drop, merge nor vectorise them; blocks escape through `keep`.
 * Under the phase-1 probe (probe.c) each site prints what the shadow counted for its blocks;
 * without it the program prints only its own results, the same for every build. */
#include "probe.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS 4 /* blocks per site */
/* Read through a volatile: a loop of a known count of 4 would be unrolled into 4 calls of
 * malloc, 4 allocation contexts instead of 1. */
static volatile int blocks = BLOCKS;

void lib_fill(void *p, size_t n); /* access_lib.c, another instrumented module */

static void *volatile keep;
/* Called through a volatile pointer: the compiler must assume it reads the block, so writes
 * before it are not dead (it reads nothing). */
static void sink_fn(void *p) { (void)p; }
static void (*volatile sink)(void *) = sink_fn;

struct total {
    const char *name;
    struct hp_probe_sum s;
};

static void *take_new(void *p, size_t size)
{
    keep = p;
    if (heapprof_probe_clear)
        heapprof_probe_clear(p, size);
    return p;
}

static void done(struct total *t, void *p, size_t size)
{
    sink(p);
    if (heapprof_probe_take) {
        struct hp_probe_sum s;
        heapprof_probe_take(p, size, &s);
        t->s.accesses += s.accesses;
        t->s.writes += s.writes;
        t->s.granules += s.granules;
        t->s.touched += s.touched;
    }
    free(p);
}

static void print(const struct total *t)
{
    if (!heapprof_probe_take)
        return;
    printf("probe %s blocks=%d accesses=%" PRIu64 " writes=%" PRIu64 " granules=%" PRIu64
           " touched=%" PRIu64 "\n", t->name, BLOCKS, t->s.accesses, t->s.writes, t->s.granules,
           t->s.touched);
}

/* 256 bytes, every 8th byte written, 10 times: 320 stores a block. */
__attribute__((noinline)) static void site_every8(void)
{
    struct total t = {"every8", {0, 0, 0, 0}};
    for (int b = 0; b < blocks; b++) {
        volatile uint64_t *q = take_new(malloc(256), 256);
        for (int r = 0; r < 10; r++)
            for (int i = 0; i < 32; i++)
                q[i] = (uint64_t)(r + i);
        done(&t, (void *)q, 256);
    }
    print(&t);
}

/* 512 bytes on a 64-byte boundary, its first half written once: 32 stores, 4 of 8 granules. */
__attribute__((noinline)) static void site_half(void)
{
    struct total t = {"half", {0, 0, 0, 0}};
    for (int b = 0; b < blocks; b++) {
        volatile uint64_t *q = take_new(aligned_alloc(64, 512), 512);
        for (int i = 0; i < 32; i++)
            q[i] = (uint64_t)i;
        done(&t, (void *)q, 512);
    }
    print(&t);
}

/* 1024 bytes never touched. */
__attribute__((noinline)) static void site_untouched(void)
{
    struct total t = {"untouched", {0, 0, 0, 0}};
    for (int b = 0; b < blocks; b++)
        done(&t, take_new(malloc(1024), 1024), 1024);
    print(&t);
}

/* 128 bytes written once (16 stores), then read 100 times (1600 loads). */
__attribute__((noinline)) static uint64_t site_readheavy(void)
{
    struct total t = {"readheavy", {0, 0, 0, 0}};
    uint64_t sum = 0;
    for (int b = 0; b < blocks; b++) {
        volatile uint64_t *q = take_new(malloc(128), 128);
        for (int i = 0; i < 16; i++)
            q[i] = (uint64_t)(i * 3 + b);
        for (int r = 0; r < 100; r++)
            for (int i = 0; i < 16; i++)
                sum += q[i];
        done(&t, (void *)q, 128);
    }
    print(&t);
    return sum;
}

/* 1000 bytes filled by memset: clang's __memprof_memset counts ceil(1000 / 8) = 125; gcc calls
 * libc's memset, which nothing counts. */
__attribute__((noinline)) static void site_memset(void)
{
    struct total t = {"memset", {0, 0, 0, 0}};
    for (int b = 0; b < blocks; b++) {
        char *p = take_new(malloc(1000), 1000);
        memset(p, 'x' + b, 1000); /* not 0: malloc + memset(0) may become calloc */
        done(&t, p, 1000);
    }
    print(&t);
}

/* 256 bytes written by 16-byte stores: 16 accesses (one per instruction, any width). */
__attribute__((noinline)) static void site_wide(void)
{
    struct total t = {"wide", {0, 0, 0, 0}};
    for (int b = 0; b < blocks; b++) {
        volatile unsigned __int128 *q = take_new(malloc(256), 256);
        for (int i = 0; i < 16; i++)
            q[i] = (unsigned __int128)i << 64 | (unsigned)b;
        done(&t, (void *)q, 256);
    }
    print(&t);
}

/* A 64-byte struct written field by field (8 stores), then copied whole into another block:
 * the copy is a memcpy (clang) or loadN/storeN (gcc), one access per 8 bytes on each side. */
struct s64 {
    uint64_t f[8];
};
__attribute__((noinline)) static uint64_t site_copy(void)
{
    struct total ts = {"copy_src", {0, 0, 0, 0}}, td = {"copy_dst", {0, 0, 0, 0}};
    uint64_t check = 0;
    for (int b = 0; b < blocks; b++) {
        struct s64 *s = take_new(aligned_alloc(64, 64), 64);
        struct s64 *d = take_new(aligned_alloc(64, 64), 64);
        volatile uint64_t *f = s->f;
        for (int i = 0; i < 8; i++)
            f[i] = (uint64_t)(i + b);
        sink(s);
        *d = *s;
        sink(d);
        check += (uint64_t)(uintptr_t)d & 0; /* d's contents are not read back here */
        done(&ts, s, 64);
        done(&td, d, 64);
    }
    print(&ts);
    print(&td);
    return check;
}

/* 256 bytes written every 8th byte once by an instrumented shared library: 32 stores, counted
 * in the same shadow as the executable's. */
__attribute__((noinline)) static void site_lib(void)
{
    struct total t = {"lib", {0, 0, 0, 0}};
    for (int b = 0; b < blocks; b++) {
        void *p = take_new(malloc(256), 256);
        lib_fill(p, 256);
        done(&t, p, 256);
    }
    print(&t);
}

/* A 48-byte struct whose fields are hot, cold, never touched, or read past the per-word
 * counter's 255 (per-word histograms, callback builds): per block, word 0 (hot) 1 store and
 * 100 loads, word 1 (cold) 1 store, word 2 none, word 3 (burst) 1 store and 300 loads, word 4
 * (two 4-byte fields) 5 + 7 stores, word 5 none. */
struct fields {
    uint64_t hot, cold, never, burst;
    uint32_t a, b;
    uint64_t tail;
};
__attribute__((noinline)) static uint64_t site_fields(void)
{
    struct total t = {"fields", {0, 0, 0, 0}};
    uint64_t sum = 0;
    for (int b = 0; b < blocks; b++) {
        volatile struct fields *f = take_new(malloc(sizeof(struct fields)), sizeof(struct fields));
        /* A call between repeated accesses to one address: gcc's asan callbacks (a gcc before
         * 10) check an address once where nothing in between could free the memory. */
        f->hot = (uint64_t)b;
        f->cold = 2;
        f->burst = 3;
        for (int r = 0; r < 100; r++) {
            sink(NULL);
            sum += f->hot;
        }
        for (int r = 0; r < 300; r++) {
            sink(NULL);
            sum += f->burst;
        }
        for (uint32_t r = 0; r < 5; r++) {
            sink(NULL);
            f->a = r;
        }
        for (uint32_t r = 0; r < 7; r++) {
            sink(NULL);
            f->b = r;
        }
        done(&t, (void *)f, sizeof(struct fields));
    }
    print(&t);
    return sum;
}

int main(void)
{
    site_every8();
    site_half();
    site_untouched();
    uint64_t sum = site_readheavy();
    site_memset();
    site_wide();
    uint64_t check = site_copy();
    site_lib();
    uint64_t fsum = site_fields();
    printf("readheavy sum %" PRIu64 ", copy check %" PRIu64 ", fields sum %" PRIu64 "\n", sum,
           check, fsum);
    if (heapprof_probe_modes)
        printf("probe modes 0x%x\n", heapprof_probe_modes());
    puts("patterns done");
    return 0;
}
