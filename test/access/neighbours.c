/* Blocks of every kind side by side, for the shadow's promise that two blocks never share a
 * counter (shim/shadow/shadow.h), on whichever allocator runs under the shim (case
 * access-backends). Each block is written byte by byte right after it is made, before its
 * neighbour is made, and freed at the end in a scrambled order. Had two blocks a counter in
 * common, the neighbour's allocation would clear counts of a block already written, or one
 * block's free would take the other's counts: a site's total, or a block's utilisation, would
 * be off. Neighbouring blocks come from different sites, written a different number of times.
 *
 * Every store is a one-byte volatile store, one access (a write) in every build mode. The
 * program prints each site's blocks and accesses ("site NAME blocks=N accesses=A writes=A
 * percent=100", as test/access/check_sites.py --printed reads them), the same bare or
 * profiled: the profile must agree, every block 100% utilised. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 160

enum { S_MALLOC, S_MALLOC2, S_CALLOC, S_ALIGNED, S_MEMALIGN, S_POSIX, S_VALLOC, S_SEED, S_REALLOC, NSITES };
static const char *const names[NSITES] = {"malloc",   "malloc2", "calloc", "aligned_alloc", "memalign",
                                          "posix_memalign", "valloc", "seed",  "realloc"};
static unsigned long blocks[NSITES], accesses[NSITES];

static void *volatile keep[ROUNDS * NSITES];
static int kept;

/* times passes over the block's bytes, one store each. */
static void write_block(int site, void *p, size_t size, int times)
{
    volatile unsigned char *b = p;
    for (int t = 0; t < times; t++)
        for (size_t i = 0; i < size; i++)
            b[i] = (unsigned char)(i + (size_t)t);
    blocks[site]++;
    accesses[site] += (unsigned long)size * (unsigned long)times;
    keep[kept++] = p;
}

/* One function per site, not inlined: each is an allocation context of its own. */
__attribute__((noinline)) static void site_malloc(size_t s) { write_block(S_MALLOC, malloc(s), s, 1); }
__attribute__((noinline)) static void site_malloc2(size_t s) { write_block(S_MALLOC2, malloc(s), s, 2); }
__attribute__((noinline)) static void site_calloc(size_t s) { write_block(S_CALLOC, calloc(1, s), s, 3); }

__attribute__((noinline)) static void site_aligned_alloc(size_t al, size_t s)
{
    s = (s + al - 1) / al * al; /* C11 wants a multiple of the alignment */
    write_block(S_ALIGNED, aligned_alloc(al, s), s, 1);
}

__attribute__((noinline)) static void site_memalign(size_t al, size_t s)
{
    write_block(S_MEMALIGN, memalign(al, s), s, 2);
}

__attribute__((noinline)) static void site_posix_memalign(size_t al, size_t s)
{
    void *p;
    if (posix_memalign(&p, al, s) != 0)
        abort();
    write_block(S_POSIX, p, s, 1);
}

/* Page-start blocks. */
__attribute__((noinline)) static void site_valloc(size_t s) { write_block(S_VALLOC, valloc(s), s, 3); }

/* A block grown by realloc from one made (and written) elsewhere: moved or grown in place,
 * the new block's counts start at zero and the old one's stay with its own site. */
__attribute__((noinline)) static void *site_seed(void)
{
    void *p = malloc(8);
    volatile unsigned char *b = p;
    for (int i = 0; i < 8; i++)
        b[i] = 1;
    blocks[S_SEED]++;
    accesses[S_SEED] += 8;
    return p;
}

__attribute__((noinline)) static void site_realloc(size_t s)
{
    void *p = realloc(site_seed(), s);
    write_block(S_REALLOC, p, s, 2);
}

int main(void)
{
    unsigned x = 12345;
    for (int r = 0; r < ROUNDS; r++) {
        size_t s = 1 + (size_t)r * 7 % 300, al = (size_t)32 << (r % 9); /* 32 .. 8192 */
        site_malloc(s);
        site_malloc2(s + 16);
        site_calloc(s % 97 + 1);
        site_aligned_alloc(al, s);
        site_memalign(al, s + 40);
        site_posix_memalign(al, s % 50 + 1);
        if (r % 8 == 0)
            site_valloc(r % 16 == 0 ? 100 : 4096 + s);
        site_realloc(24 + s * 3);
    }
    /* The seeds were freed by realloc; every other block is freed here, scrambled. */
    for (int i = kept - 1; i > 0; i--) {
        x = x * 1103515245u + 12345u;
        int j = (int)((x >> 8) % (unsigned)(i + 1));
        void *t = keep[i];
        keep[i] = keep[j];
        keep[j] = t;
    }
    for (int i = 0; i < kept; i++)
        free(keep[i]);
    for (int i = 0; i < NSITES; i++)
        printf("site %s blocks=%lu accesses=%lu writes=%lu percent=100\n", names[i], blocks[i],
               accesses[i], accesses[i]);
    return 0;
}
