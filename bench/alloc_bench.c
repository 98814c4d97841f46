/* Allocation-heavy benchmark for heapprof: millions of short-lived malloc/free pairs of varied
 * sizes, some calloc/realloc, and a ring of long-lived blocks replaced over time, issued from
 * several leaf functions at call depths 5..15 so every allocation carries a realistic stack. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* noclone as well: a cloned copy would still be a frame, but with a confusing name. */
#define AB_NOINLINE __attribute__((noinline, noclone))
/* Keeps a call out of tail position so every level of the chain stays a real frame. */
#define AB_BARRIER() __asm__ volatile("" ::: "memory")

/* Call depths of the leaves; -DAB_MIN_DEPTH=20 -DAB_MAX_DEPTH=40 for deeper stacks
 * (bench/access_alloc.sh). */
#ifndef AB_MIN_DEPTH
#define AB_MIN_DEPTH 5
#endif
#ifndef AB_MAX_DEPTH
#define AB_MAX_DEPTH 15
#endif
#define AB_MAX_THREADS 64

/* One per thread, cache-line aligned: threads must not share a written line, or 2-thread runs
 * measure false sharing instead of the allocator. */
struct ab_worker {
    /* Every block is published here before it is freed, so the compiler cannot pair a malloc
     * with its free and delete both. */
    void *volatile sink;
    uint64_t rng;
    long events;      /* leaf calls to perform */
    void **ring;      /* long-lived blocks, replaced round-robin */
    size_t ring_len;
    size_t ring_pos;
    uint64_t allocs;  /* malloc + calloc + realloc calls made */
    uint64_t checksum;
} __attribute__((aligned(64)));

typedef void (*ab_leaf_fn)(struct ab_worker *);

static uint64_t ab_next(struct ab_worker *w)
{
    /* xorshift64*: cheap, and deterministic per thread so runs are comparable. */
    uint64_t x = w->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* 8..4096 bytes, skewed small the way most programs are: 60% up to 128, 25% up to 512,
 * 12% up to 2048, 3% up to 4096. Sizes are not rounded, so every size class is hit. */
static size_t ab_size(struct ab_worker *w)
{
    uint64_t r = ab_next(w);
    unsigned cls = (unsigned)(r % 100);
    uint64_t s = r >> 8;
    if (cls < 60)
        return 8 + s % 121;
    if (cls < 85)
        return 129 + s % 384;
    if (cls < 97)
        return 513 + s % 1536;
    return 2049 + s % 2048;
}

static void ab_touch(struct ab_worker *w, void *p, size_t n)
{
    volatile unsigned char *b = p;
    b[0] = (unsigned char)n;
    b[n - 1] = (unsigned char)(n >> 3);
    w->checksum += b[0] + b[n - 1];
    w->sink = p;
}

static void ab_fail(const char *what)
{
    fprintf(stderr, "alloc_bench: %s failed: %s\n", what, strerror(errno));
    exit(1);
}

/* ---- leaf functions: each one is a distinct allocation site ---- */

/* A small tree node, freed straight away. */
static AB_NOINLINE void make_node(struct ab_worker *w)
{
    size_t n = 16 + ab_next(w) % 113;
    void *p = malloc(n);
    if (!p)
        ab_fail("malloc");
    w->allocs++;
    ab_touch(w, p, n);
    free(p);
}

/* A copy of a piece of text, as string handling code does all the time. */
static AB_NOINLINE void copy_string(struct ab_worker *w)
{
    static const char text[] =
        "the quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs";
    size_t n = 8 + ab_next(w) % (sizeof text - 8);
    char *p = malloc(n + 1);
    if (!p)
        ab_fail("malloc");
    w->allocs++;
    memcpy(p, text, n);
    p[n] = 0;
    ab_touch(w, p, n + 1);
    free(p);
}

/* A scratch buffer of any size in the range, partly used. */
static AB_NOINLINE void scratch_buffer(struct ab_worker *w)
{
    size_t n = ab_size(w);
    unsigned char *p = malloc(n);
    if (!p)
        ab_fail("malloc");
    w->allocs++;
    memset(p, 0x5a, n < 64 ? n : 64);
    ab_touch(w, p, n);
    free(p);
}

/* Two allocations freed in the opposite order to a stack, like a parser's key and value. */
static AB_NOINLINE void parse_record(struct ab_worker *w)
{
    size_t kn = 8 + ab_next(w) % 57;
    size_t vn = ab_size(w);
    char *key = malloc(kn);
    char *val = malloc(vn);
    if (!key || !val)
        ab_fail("malloc");
    w->allocs += 2;
    ab_touch(w, key, kn);
    ab_touch(w, val, vn);
    free(key);
    free(val);
}

/* A zeroed table: calloc. */
static AB_NOINLINE void zeroed_table(struct ab_worker *w)
{
    size_t n = 1 + ab_next(w) % 256;
    uint64_t *t = calloc(n, sizeof *t);
    if (!t)
        ab_fail("calloc");
    w->allocs++;
    ab_touch(w, t, n * sizeof *t);
    free(t);
}

/* A buffer that grows by doubling: realloc, sometimes moving the block. */
static AB_NOINLINE void grow_buffer(struct ab_worker *w)
{
    size_t cap = 32;
    size_t limit = 256u << (ab_next(w) % 4); /* 256 .. 2048 */
    char *p = malloc(cap);
    if (!p)
        ab_fail("malloc");
    w->allocs++;
    ab_touch(w, p, cap);
    while (cap < limit) {
        cap *= 2;
        char *q = realloc(p, cap);
        if (!q)
            ab_fail("realloc");
        w->allocs++;
        p = q;
        ab_touch(w, p, cap);
    }
    free(p);
}

/* Replace the oldest long-lived block: these stay live for ring_len replacements. */
static AB_NOINLINE void replace_long_lived(struct ab_worker *w)
{
    size_t n = ab_size(w);
    void **slot = &w->ring[w->ring_pos];
    free(*slot);
    *slot = malloc(n);
    if (!*slot)
        ab_fail("malloc");
    w->allocs++;
    ab_touch(w, *slot, n);
    w->ring_pos = (w->ring_pos + 1) % w->ring_len;
}

/* ---- the call chain above the leaves ---- */

static uint64_t walk(struct ab_worker *w, int depth, unsigned path, ab_leaf_fn leaf);

/* Three distinct frame functions; which one appears at each level depends on the path, so the
 * same leaf is reached through a few hundred different stacks, not one and not millions. */
static AB_NOINLINE uint64_t walk_lookup(struct ab_worker *w, int depth, unsigned path,
                                        ab_leaf_fn leaf)
{
    uint64_t r = walk(w, depth - 1, path, leaf);
    AB_BARRIER();
    return r + 1;
}

static AB_NOINLINE uint64_t walk_visit(struct ab_worker *w, int depth, unsigned path,
                                       ab_leaf_fn leaf)
{
    uint64_t r = walk(w, depth - 1, path, leaf);
    AB_BARRIER();
    return r + 2;
}

static AB_NOINLINE uint64_t walk_apply(struct ab_worker *w, int depth, unsigned path,
                                       ab_leaf_fn leaf)
{
    uint64_t r = walk(w, depth - 1, path, leaf);
    AB_BARRIER();
    return r + 3;
}

static inline uint64_t walk(struct ab_worker *w, int depth, unsigned path, ab_leaf_fn leaf)
{
    if (depth == 0) {
        leaf(w);
        return 0;
    }
    switch ((path >> (depth % 4)) % 3) {
    case 0:
        return walk_lookup(w, depth, path, leaf);
    case 1:
        return walk_visit(w, depth, path, leaf);
    default:
        return walk_apply(w, depth, path, leaf);
    }
}

/* One event: pick a leaf by weight (calloc and realloc rarer), a depth and a path. */
static AB_NOINLINE uint64_t dispatch_event(struct ab_worker *w)
{
    uint64_t r = ab_next(w);
    unsigned pick = (unsigned)(r % 100);
    int depth = AB_MIN_DEPTH + (int)((r >> 8) % (AB_MAX_DEPTH - AB_MIN_DEPTH + 1));
    unsigned path = (unsigned)(r >> 16) % 16;
    ab_leaf_fn leaf;
    if (pick < 25)
        leaf = make_node;
    else if (pick < 45)
        leaf = copy_string;
    else if (pick < 55)
        leaf = scratch_buffer;
    else if (pick < 70)
        leaf = parse_record;
    else if (pick < 76)
        leaf = zeroed_table;
    else if (pick < 79)
        leaf = grow_buffer;
    else
        leaf = replace_long_lived;
    uint64_t v = walk(w, depth, path, leaf);
    AB_BARRIER();
    return v;
}

static AB_NOINLINE void *run_events(void *arg)
{
    struct ab_worker *w = arg;
    uint64_t acc = 0;
    for (long i = 0; i < w->events; i++)
        acc += dispatch_event(w);
    for (size_t i = 0; i < w->ring_len; i++) {
        free(w->ring[i]);
        w->ring[i] = NULL;
    }
    w->checksum += acc;
    return NULL;
}

static void ab_usage(void)
{
    fprintf(stderr,
            "usage: alloc_bench [-t THREADS] [-n EVENTS] [-r RING] [-q]\n"
            "  -t  worker threads (default 1; 1 runs on the main thread)\n"
            "  -n  events per thread (default 8000000)\n"
            "  -r  long-lived blocks per thread (default 32768)\n"
            "  -q  no summary line on stderr\n");
    exit(2);
}

static long ab_number(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 1)
        ab_usage();
    return v;
}

int main(int argc, char **argv)
{
    long threads = 1, events = 8000000, ring = 32768;
    int quiet = 0, c;
    while ((c = getopt(argc, argv, "t:n:r:q")) != -1) {
        switch (c) {
        case 't': threads = ab_number(optarg); break;
        case 'n': events = ab_number(optarg); break;
        case 'r': ring = ab_number(optarg); break;
        case 'q': quiet = 1; break;
        default: ab_usage();
        }
    }
    if (threads > AB_MAX_THREADS || optind != argc)
        ab_usage();

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);

    struct ab_worker workers[AB_MAX_THREADS];
    pthread_t tids[AB_MAX_THREADS];
    for (long i = 0; i < threads; i++) {
        struct ab_worker *w = &workers[i];
        memset(w, 0, sizeof *w);
        w->rng = 0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1);
        w->events = events;
        w->ring_len = (size_t)ring;
        w->ring = calloc(w->ring_len, sizeof *w->ring);
        if (!w->ring)
            ab_fail("calloc");
    }
    if (threads == 1) {
        run_events(&workers[0]);
    } else {
        for (long i = 0; i < threads; i++) {
            int e = pthread_create(&tids[i], NULL, run_events, &workers[i]);
            if (e) {
                errno = e;
                ab_fail("pthread_create");
            }
        }
        for (long i = 0; i < threads; i++)
            pthread_join(tids[i], NULL);
    }

    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t allocs = 0, sum = 0;
    for (long i = 0; i < threads; i++) {
        allocs += workers[i].allocs;
        sum += workers[i].checksum;
        free(workers[i].ring);
    }
    if (!quiet) {
        double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        fprintf(stderr,
                "alloc_bench: threads=%ld events/thread=%ld allocations=%llu elapsed=%.3fs "
                "(%.1f ns/allocation/thread) checksum=%llx\n",
                threads, events, (unsigned long long)allocs, s,
                s * 1e9 * (double)threads / (double)(allocs ? allocs : 1),
                (unsigned long long)sum);
    }
    return 0;
}
