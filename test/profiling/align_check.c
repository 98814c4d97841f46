/* Aligned allocations on every backend: posix_memalign, aligned_alloc, memalign and valloc for
 * alignments 32 .. 64 KiB and sizes 1 .. 60,000, each block written whole and checked for the
 * alignment asked. Some allocators break the promise for some sizes (Debian's mimalloc 2.0
 * returns blocks aligned to less than asked); under the shim every pointer must be right, and
 * every allocation counted. Prints the number of allocations; exits 1 on a misaligned one. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile keep;

static int check(void *p, size_t align, size_t size, const char *what)
{
    if (!p) {
        printf("%s(%zu, %zu) failed\n", what, align, size);
        return 1;
    }
    memset(p, 0x5a, size);
    keep = p;
    if ((uintptr_t)p & (align - 1)) {
        printf("%s(%zu, %zu) gave %p\n", what, align, size, p);
        return 1;
    }
    return 0;
}

int main(void)
{
    static const size_t aligns[] = {32, 64, 128, 256, 512, 1024, 4096, 8192, 65536};
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    long n = 0;
    int bad = 0;
    for (size_t a = 0; a < sizeof aligns / sizeof *aligns; a++) {
        size_t al = aligns[a];
        for (size_t s = 1; s < 60000; s = s * 3 + 1) {
            void *p = NULL;
            if (posix_memalign(&p, al, s) != 0)
                p = NULL;
            bad += check(p, al, s, "posix_memalign");
            void *q = aligned_alloc(al, (s + al - 1) / al * al);
            bad += check(q, al, (s + al - 1) / al * al, "aligned_alloc");
            void *r = memalign(al, s);
            bad += check(r, al, s, "memalign");
            void *v = valloc(s);
            bad += check(v, page, s, "valloc");
            free(p);
            free(q);
            free(r);
            free(v);
            n += 4;
        }
    }
    printf("%ld aligned allocations, %d wrong\n", n, bad);
    return bad != 0;
}
