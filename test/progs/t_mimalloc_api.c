/* link: -lmimalloc */
/* A program written against mimalloc's own API, linked with libmimalloc (which also overrides
 * malloc): every block-taking mi_* function is handed blocks malloc made and the other way
 * round (mi_free of malloc's blocks, free of mi_malloc's), usable sizes are compared, contents
 * must survive every reallocation, zeroing forms must zero, aligned forms must align (at their
 * offset too), and heaps are used, reallocated into and destroyed. Under the shim, malloc's
 * blocks are the shim's: mimalloc alone must never see one. */
#include "testutil.h"

#include <errno.h>
#include <malloc.h>
#include <mimalloc.h>

static void *volatile sink;

void *reallocf(void *p, size_t n); /* BSD; libmimalloc defines both (as libbsd does) */
int reallocarr(void *pp, size_t count, size_t size);

/* Debian's mimalloc 2.0.9 sometimes answers an aligned request with a block aligned to less
 * (mi_realloc_aligned(p, 853, 128) giving a 64-byte aligned block, in some heap states): its
 * alignments are not checked, only the shim's, which are those at offsets that are multiples
 * of 32 (mimalloc serves the others under the shim too). */
static int aligned_at(const void *p, size_t a, size_t o)
{
    return !under_shim() || o % 32 != 0 || ((uintptr_t)p + o) % a == 0;
}

static int zeroed(const void *p, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (((const unsigned char *)p)[i])
            return 0;
    return 1;
}

/* A block from one of eight sources (malloc's or mimalloc's), *np bytes (which it may lower). */
static void *make(unsigned k, size_t *np)
{
    size_t n = *np;
    void *p = NULL;
    switch (k % 8) {
    case 0: p = malloc(n); break;
    case 1: p = mi_malloc(n); break;
    case 2: p = mi_zalloc(n); CHECK(p && zeroed(p, 0, n), "mi_zalloc not zeroed"); break;
    case 3: p = mi_calloc(2, n / 2 + 1); CHECK(p && zeroed(p, 0, n), "mi_calloc not zeroed"); break;
    case 4: p = mi_mallocn(n, 1); break;
    case 5: p = mi_malloc_aligned(n, 64); CHECK(aligned_at(p, 64, 0), "mi_malloc_aligned"); break;
    case 6: n = *np = n < 128 ? n : 128; p = mi_malloc_small(n); break;
    default: p = calloc(1, n); break;
    }
    CHECK(p, "allocation %u of %zu bytes", k, n);
    return p;
}

/* Give p back through one of seven ways. */
static void unmake(unsigned k, void *p)
{
    switch (k % 7) {
    case 0: free(p); break;
    case 1: mi_free(p); break;
    case 2: mi_cfree(p); break;
    case 3: mi_free_size(p, mi_usable_size(p)); break;
    case 4: mi_free_aligned(p, 16); break;
    case 5: mi_free_size_aligned(p, mi_usable_size(p), 16); break;
    default: free(p); break;
    }
}

static void sizes_agree(void *p, size_t n)
{
    size_t u = mi_usable_size(p);
    CHECK(u >= n, "mi_usable_size %zu < %zu", u, n);
    CHECK(u == malloc_usable_size(p) && u == mi_malloc_size(p) && u == mi_malloc_usable_size(p),
          "usable sizes differ: mi %zu, malloc %zu, mi_malloc_size %zu", u, malloc_usable_size(p),
          mi_malloc_size(p));
}

static void mixed(void)
{
    for (unsigned i = 0; i < 4000; i++) {
        size_t n = 1 + (i * 97) % 3000;
        void *p = make(i, &n);
        sizes_agree(p, n);
        size_t u = mi_usable_size(p);
        pat_fill(p, n, i);
        sink = p;
        size_t m = n * 2 + 5;
        switch (i % 11) {
        case 0: p = mi_realloc(p, m); break;
        case 1: p = mi_reallocn(p, m, 1); break;
        case 2: p = mi_reallocf(p, m); break;
        case 3: p = mi_reallocarray(p, 1, m); break;
        case 4: {
            void *q = p;
            CHECK(mi_reallocarr(&q, m, 1) == 0, "mi_reallocarr");
            p = q;
            break;
        }
        case 5: p = realloc(p, m); break;
        case 6: p = mi_realloc_aligned(p, m, 128); CHECK(aligned_at(p, 128, 0), "mi_realloc_aligned"); break;
        case 7: p = mi_new_realloc(p, m); break;
        case 8: p = reallocf(p, m); break;
        case 9: {
            void *q = mi_expand(p, u); /* in place, up to the usable size */
            CHECK(q == p, "mi_expand to the usable size moved or failed");
            CHECK(mi_expand(p, u + 100000) == NULL, "mi_expand past the block succeeded");
            m = n;
            break;
        }
        default: p = mi_new_reallocn(p, m, 1); break;
        }
        CHECK(p && pat_ok(p, n, i), "reallocation %u lost the contents", i);
        sizes_agree(p, m);
        unmake(i, p);
    }
}

static void zeroing(void)
{
    for (unsigned i = 0; i < 600; i++) {
        size_t n = 8 + (i * 37) % 900;
        void *p = (i & 1) ? mi_zalloc(n) : calloc(n, 1);
        CHECK(p && zeroed(p, 0, n), "zeroed allocation");
        memset(p, 0x5a, n);
        size_t m = n * 3;
        switch (i % 6) {
        case 0: p = mi_rezalloc(p, m); break;
        case 1: p = mi_recalloc(p, m, 1); break;
        case 2: p = mi_rezalloc_aligned(p, m, 64); CHECK(aligned_at(p, 64, 0), "mi_rezalloc_aligned"); break;
        case 3: p = mi_recalloc_aligned(p, 3, n, 256); CHECK(aligned_at(p, 256, 0), "mi_recalloc_aligned"); break;
        case 4: p = mi_aligned_recalloc(p, m, 1, 32); CHECK(aligned_at(p, 32, 0), "mi_aligned_recalloc"); break;
        default: p = mi_rezalloc_aligned_at(p, m, 128, 64); CHECK(aligned_at(p, 128, 64), "_at"); break;
        }
        CHECK(p, "zeroing reallocation %u", i);
        for (size_t k = 0; k < n; k++)
            CHECK(((unsigned char *)p)[k] == 0x5a, "byte %zu of %u lost", k, i);
        CHECK(zeroed(p, n, m), "zeroing reallocation %u left garbage past %zu", i, n);
        (i & 2) ? free(p) : mi_free(p);
    }
}

static void aligned(void)
{
    static const size_t al[] = {16, 32, 64, 256, 4096, 65536};
    static const size_t off[] = {0, 8, 16, 32, 64, 96};
    for (unsigned i = 0; i < 6 * 6 * 4; i++) {
        size_t a = al[i % 6], o = off[(i / 6) % 6], n = 10 + i * 13;
        void *p;
        switch ((i / 36) % 4) {
        case 0: p = mi_malloc_aligned_at(n, a, o); break;
        case 1: p = mi_zalloc_aligned_at(n, a, o); CHECK(p && zeroed(p, 0, n), "zalloc_aligned_at"); break;
        case 2: p = mi_calloc_aligned_at(n, 1, a, o); CHECK(p && zeroed(p, 0, n), "calloc_aligned_at"); break;
        default: p = mi_realloc_aligned_at(NULL, n, a, o); break;
        }
        CHECK(p && aligned_at(p, a, o), "aligned %zu at %zu: %p", a, o, p);
        pat_fill(p, n, i);
        sink = p;
        p = mi_realloc_aligned_at(p, n * 2, a, o);
        CHECK(p && aligned_at(p, a, o) && pat_ok(p, n, i), "realloc_aligned_at %zu at %zu", a, o);
        (i & 1) ? mi_free(p) : free(p);
    }
    void *p = mi_memalign(512, 100), *q = mi_aligned_alloc(1024, 2048), *r = NULL;
    CHECK(p && q && aligned_at(p, 512, 0) && aligned_at(q, 1024, 0), "mi_memalign / mi_aligned_alloc");
    CHECK(mi_posix_memalign(&r, 2048, 10) == 0 && aligned_at(r, 2048, 0), "mi_posix_memalign");
    CHECK(mi_posix_memalign(&r, 24, 10) == EINVAL, "mi_posix_memalign(24) not refused");
    CHECK(mi_malloc_aligned(10, 0) == NULL && mi_malloc_aligned(10, 48) == NULL, "odd alignments not refused");
    void *v = mi_valloc(100), *pv = mi_pvalloc(5000), *z = mi_zalloc_aligned(300, 128);
    void *c = mi_calloc_aligned(10, 10, 64);
    CHECK(v && pv && aligned_at(v, 4096, 0) && aligned_at(pv, 4096, 0) && mi_usable_size(pv) >= 5000,
          "mi_valloc / mi_pvalloc");
    CHECK(z && aligned_at(z, 128, 0) && zeroed(z, 0, 300) && c && zeroed(c, 0, 100), "zeroed aligned");
    free(p), mi_free(q), free(r), mi_free(v), free(pv), mi_free(z), free(c);
}

static void strings(void)
{
    char *s = mi_strdup("heapprof and mimalloc");
    char *t = mi_strndup("heapprof and mimalloc", 8);
    unsigned char *u = mi_mbsdup((const unsigned char *)"bytes");
    static const unsigned short w[] = {'w', 'i', 'd', 'e', 0};
    unsigned short *wd = mi_wcsdup(w);
    char *rp = mi_realpath("/usr/lib/../lib", NULL);
    char buf[4096];
    CHECK(s && !strcmp(s, "heapprof and mimalloc") && t && !strcmp(t, "heapprof"), "mi_strdup/ndup");
    CHECK(u && !strcmp((char *)u, "bytes") && wd && wd[3] == 'e' && wd[4] == 0, "mi_mbsdup/wcsdup");
    CHECK(rp && !strcmp(rp, "/usr/lib"), "mi_realpath: %s", rp ? rp : "(null)");
    /* (not compared with buf: mimalloc.h declares mi_realpath malloc-like, so the compiler may
     * take the result for a pointer to nothing else) */
    char *inbuf = mi_realpath("/usr/lib/..", buf);
    CHECK(inbuf && !strcmp(inbuf, "/usr"), "mi_realpath into a buffer");
    CHECK(mi_realpath("/no/such/dir", NULL) == NULL, "mi_realpath of nothing");
    free(s), mi_free(t), free(u), mi_free(wd), free(rp);
    char *cp = strdup("from glibc's strdup");
    cp = mi_realloc(cp, 100);
    CHECK(cp && !strcmp(cp, "from glibc's strdup"), "mi_realloc of strdup's block");
    mi_free(cp);
}

static void heaps(void)
{
    mi_heap_t *h = mi_heap_new();
    CHECK(h, "mi_heap_new");
    void *keep[64];
    for (unsigned i = 0; i < 64; i++) {
        size_t n = 16 + i * 40;
        void *p;
        switch (i % 8) {
        case 0: p = mi_heap_malloc(h, n); break;
        case 1: p = mi_heap_zalloc(h, n); CHECK(p && zeroed(p, 0, n), "heap zalloc"); break;
        case 2: p = mi_heap_calloc(h, n, 1); CHECK(p && zeroed(p, 0, n), "heap calloc"); break;
        case 3: p = mi_heap_mallocn(h, 1, n); break;
        case 4: p = mi_heap_malloc_small(h, 64); n = 64; break;
        case 5: p = mi_heap_malloc_aligned(h, n, 256); CHECK(aligned_at(p, 256, 0), "heap aligned"); break;
        case 6: p = mi_heap_zalloc_aligned_at(h, n, 128, 32); CHECK(p && aligned_at(p, 128, 32), "heap _at"); break;
        default: p = mi_heap_calloc_aligned(h, 1, n, 64); CHECK(aligned_at(p, 64, 0), "heap calloc aligned"); break;
        }
        CHECK(p, "heap allocation %u", i);
        sizes_agree(p, n);
        pat_fill(p, n, i);
        switch (i % 5) {
        case 0: p = mi_heap_realloc(h, p, n * 2); break;
        case 1: p = mi_heap_reallocn(h, p, 2, n); break;
        case 2: p = mi_heap_reallocf(h, p, n * 2); break;
        case 3: p = mi_heap_rezalloc(h, p, n * 2); break;
        default: p = mi_heap_realloc_aligned(h, p, n * 2, 512); CHECK(aligned_at(p, 512, 0), "heap realloc aligned"); break;
        }
        CHECK(p && pat_ok(p, n, i), "heap reallocation %u lost the contents", i);
        keep[i] = p;
    }
    /* malloc's blocks moved into the heap, and heap blocks given back through free */
    for (unsigned i = 0; i < 32; i++) {
        void *p = malloc(100 + i);
        pat_fill(p, 100 + i, i);
        p = mi_heap_realloc(h, p, 300 + i);
        CHECK(p && pat_ok(p, 100 + i, i), "malloc's block into a heap");
        (i & 1) ? free(p) : mi_free(p);
    }
    for (unsigned i = 0; i < 64; i += 2)
        free(keep[i]);
    char *s = mi_heap_strdup(h, "in a heap"), *t = mi_heap_strndup(h, "in a heap", 4);
    char *rp = mi_heap_realpath(h, "/usr/lib/..", NULL);
    CHECK(s && t && rp && !strcmp(s, "in a heap") && !strcmp(t, "in a") && !strcmp(rp, "/usr"), "heap strings");
    void *an = mi_heap_alloc_new(h, 500), *ann = mi_heap_alloc_new_n(h, 10, 50);
    CHECK(an && ann, "mi_heap_alloc_new");
    /* the odd half of keep[], the strings and the new'd blocks go with the heap */
    mi_heap_destroy(h);

    mi_heap_t *h2 = mi_heap_new();
    void *live = mi_heap_malloc(h2, 1000);
    pat_fill(live, 1000, 7);
    mi_heap_delete(h2); /* its blocks live on in the thread's default heap */
    CHECK(pat_ok(live, 1000, 7), "block of a deleted heap");
    free(live);
}

/* mi_heap_visit_blocks shows the program's own blocks, with their usable sizes. */
struct seen {
    void *want[10];
    int found, strange;
};

static bool visitor(const mi_heap_t *h, const mi_heap_area_t *area, void *block, size_t size, void *arg)
{
    (void)h, (void)area;
    struct seen *s = arg;
    if (!block)
        return true;
    int known = 0;
    for (int i = 0; i < 10; i++)
        known |= block == s->want[i];
    if (known && size >= 100 && size == mi_usable_size(block))
        s->found++;
    else
        s->strange++;
    return true;
}

static void visiting(void)
{
    mi_heap_t *h = mi_heap_new();
    struct seen s = {{0}, 0, 0};
    for (int i = 0; i < 10; i++)
        s.want[i] = (i & 1) ? mi_heap_malloc(h, 100) : mi_heap_malloc_aligned(h, 100, 64);
    CHECK(mi_heap_visit_blocks(h, true, visitor, &s), "mi_heap_visit_blocks");
    printf("visited: %d of 10 blocks found, %d others\n", s.found, s.strange);
    mi_heap_destroy(h);
}

/* A deferred-free function that frees malloc's blocks: mimalloc calls it from inside its own
 * allocation slow path, which under the shim may be a call the shim made. */
static void *volatile pending[256];
/* volatile: clang takes malloc for a call that cannot touch the program's globals and would
 * keep npending in a register across it, while mimalloc's call of deferred changes it */
static volatile int npending, deferred_calls;

static void deferred(bool force, unsigned long long heartbeat, void *arg)
{
    (void)force, (void)heartbeat, (void)arg;
    deferred_calls++;
    while (npending > 0) {
        void *p = pending[--npending];
        CHECK(pat_ok(p, 64, 3), "pending block overwritten");
        free(p);
    }
}

static void deferred_frees(void)
{
    mi_register_deferred_free(deferred, NULL);
    for (unsigned i = 0; i < 200000; i++) {
        size_t n = 64 + (i * 7) % 4000;
        void *p = malloc(n);
        pat_fill(p, 64, 3);
        if (npending < 256)
            pending[npending++] = p;
        else
            free(p);
    }
    mi_collect(true);
    mi_register_deferred_free(NULL, NULL);
    while (npending > 0)
        free(pending[--npending]);
    printf("deferred free called: %s\n", deferred_calls ? "yes" : "no");
}

static void cxx_forms(void)
{
    for (int i = 0; i < 300; i++) {
        void *a = mi_new(40 + i), *b = mi_new_aligned(100, 256), *c = mi_new_nothrow(24);
        void *d = mi_new_aligned_nothrow(64, 128), *e = mi_new_n(10, 10 + i);
        CHECK(a && b && c && d && e && aligned_at(b, 256, 0) && aligned_at(d, 128, 0), "mi_new family");
        memset(e, 1, 10 * (10 + i));
        sink = a;
        free(a), mi_free(b), mi_free(c), free(d), mi_free(e);
    }
}

/* libmimalloc's reallocarr is its mi_reallocarr: answers printed, to be the same under the shim
 * (a count of 0 leaves a block there, where NetBSD's frees). */
static void bsd_names(void)
{
    int *p = NULL;
    int r1 = reallocarr(&p, 10, sizeof *p);
    CHECK(r1 == 0 && p, "reallocarr from NULL");
    for (int i = 0; i < 10; i++)
        p[i] = i;
    int r2 = reallocarr(&p, 1000, sizeof *p);
    CHECK(r2 == 0 && p && p[9] == 9, "reallocarr grow");
    volatile size_t huge = SIZE_MAX;
    int r3 = reallocarr(&p, huge, 16);
    int r4 = reallocarr(&p, 0, 4);
    printf("reallocarr: overflow %d, count 0 %d leaves %s\n", r3, r4, p ? "a block" : "NULL");
    free(p);
    void *q = reallocf(malloc(10), 100);
    CHECK(q, "reallocf");
    free(q);
}

int main(void)
{
    mixed();
    zeroing();
    aligned();
    strings();
    heaps();
    cxx_forms();
    bsd_names();
    visiting();
    deferred_frees();
    volatile size_t huge = SIZE_MAX;
    CHECK(mi_reallocn(NULL, huge, 2) == NULL && mi_calloc(huge, 2) == NULL && mi_mallocn(huge / 2, 3) == NULL,
          "overflows not refused");
    puts("mimalloc api ok");
    return 0;
}
