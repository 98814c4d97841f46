/* Access-heavy benchmark (issue 41): streaming and random access over a large array, a pointer
 * chase, and many small objects, each timed. Built plain, with heapprof-cc (run bare or under
 * heapprof-run) and with clang -fmemory-profile and LLVM's runtime; bench/access.sh compares.
 * Usage: access_bench [SCALE]   (SCALE 1: about a second plain on this machine's class) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t *volatile keep;

/* Sum and update a 64 MiB array front to back. */
static uint64_t stream(int scale)
{
    size_t n = (size_t)8 << 20;
    uint64_t *a = malloc(n * sizeof *a), s = 0;
    keep = a;
    for (size_t i = 0; i < n; i++)
        a[i] = i;
    for (int r = 0; r < 4 * scale; r++)
        for (size_t i = 0; i < n; i++) {
            s += a[i];
            a[i] = s;
        }
    free(a);
    return s;
}

/* Random reads and writes over the same 64 MiB. */
static uint64_t random_access(int scale)
{
    size_t n = (size_t)8 << 20;
    uint64_t *a = calloc(n, sizeof *a), s = 0;
    keep = a;
    for (size_t i = 0; i < (size_t)8000000 * scale; i++) {
        uint64_t r = next();
        s += a[r & (n - 1)];
        a[(r >> 32) & (n - 1)] += r;
    }
    free(a);
    return s;
}

/* A pointer chase through 1M nodes of 64 bytes, each its own block, in random order. */
struct node {
    struct node *next;
    uint64_t pad[7];
};
static uint64_t chase(int scale)
{
    size_t n = (size_t)1 << 20;
    struct node **v = malloc(n * sizeof *v);
    for (size_t i = 0; i < n; i++)
        v[i] = malloc(sizeof **v);
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = next() % (i + 1);
        struct node *t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        v[i]->next = v[(i + 1) % n];
    struct node *p = v[0];
    uint64_t s = 0;
    for (size_t i = 0; i < (size_t)4000000 * scale; i++) {
        s += (uintptr_t)p & 0xff;
        p = p->next;
    }
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
    return s;
}

/* Many small objects: made, touched a few times, freed, in waves. */
static uint64_t small_objects(int scale)
{
    enum { LIVE = 4096 };
    static uint32_t *live[LIVE];
    uint64_t s = 0;
    for (size_t i = 0; i < (size_t)2000000 * scale; i++) {
        size_t k = next() % LIVE;
        if (live[k]) {
            s += live[k][0] + live[k][1];
            free(live[k]);
        }
        size_t words = 2 + next() % 30;
        live[k] = malloc(words * sizeof(uint32_t));
        for (size_t w = 0; w < words; w++)
            live[k][w] = (uint32_t)(i + w);
    }
    for (size_t k = 0; k < LIVE; k++)
        free(live[k]);
    return s;
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    if (scale < 1)
        scale = 1;
    struct {
        const char *name;
        uint64_t (*fn)(int);
    } parts[] = {{"stream", stream}, {"random", random_access}, {"chase", chase},
                 {"small_objects", small_objects}};
    double total = 0;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        double t0 = now();
        uint64_t s = parts[i].fn(scale);
        double t = now() - t0;
        total += t;
        printf("%-14s %8.3f s  (%llu)\n", parts[i].name, t, (unsigned long long)(s & 0xffff));
    }
    printf("%-14s %8.3f s\n", "total", total);
    return 0;
}
