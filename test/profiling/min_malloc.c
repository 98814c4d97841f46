/* A program whose own allocator has only malloc and free (bump allocation, free does nothing):
 * calloc is glibc's, and its blocks come from glibc, which the program's free ignores. Under the
 * shim, patched or only forwarding, calloc must still give zeroed memory from somewhere sound
 * (forwarding used to answer NULL when the allocator in front had no calloc). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static char *cur, *end;

void *malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!cur || (size_t)(end - cur) < n) {
        size_t len = n > (1u << 24) ? n : (1u << 24);
        cur = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (cur == MAP_FAILED)
            return cur = NULL;
        end = cur + len;
    }
    void *p = cur;
    cur += n;
    return p;
}

void free(void *p) { (void)p; }

int main(void)
{
    for (int round = 0; round < 100; round++) {
        unsigned char *volatile p = malloc(64);
        memset(p, 0xff, 64);
        free(p);
        unsigned char *q = calloc(4, 16);
        if (!q) {
            puts("calloc gave NULL");
            return 1;
        }
        for (int i = 0; i < 64; i++)
            if (q[i]) {
                puts("calloc memory not zero");
                return 1;
            }
        memset(q, 0xee, 64);
        free(q);
    }
    puts("ok");
    return 0;
}
