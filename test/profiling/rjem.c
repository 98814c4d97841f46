/* jemalloc linked in under the _rjem_ prefix, as Rust's jemallocator crate links it for a
 * #[global_allocator] (cases/prefixed-jemalloc.sh renames the public symbols of Debian's static libjemalloc).
 * site_rjem: 100 _rjem_malloc(40) + _rjem_free, 100 _rjem_mallocx(64, zeroed, 64-aligned) +
 * _rjem_sdallocx, 50 times _rjem_calloc(10, 10) -> _rjem_realloc(1000) -> _rjem_rallocx(2000)
 * -> _rjem_free: 350 allocations, 165,400 bytes, none live. site_libc: 70 malloc(24) + free
 * through glibc's. With patch_prefixed=1 the profile has both, exactly. */
#include <stdio.h>
#include <stdlib.h>

void *_rjem_malloc(size_t);
void _rjem_free(void *);
void *_rjem_calloc(size_t, size_t);
void *_rjem_realloc(void *, size_t);
void *_rjem_mallocx(size_t, int);
void *_rjem_rallocx(void *, size_t, int);
void _rjem_sdallocx(void *, size_t, int);

#define MALLOCX_LG_ALIGN(la) (la)
#define MALLOCX_ZERO 0x40

void *volatile sink;

__attribute__((noinline)) void site_rjem(void)
{
    for (int i = 0; i < 100; i++) {
        sink = _rjem_malloc(40);
        _rjem_free(sink);
    }
    for (int i = 0; i < 100; i++) {
        char *p = _rjem_mallocx(64, MALLOCX_ZERO | MALLOCX_LG_ALIGN(6));
        if (!p || ((unsigned long)p & 63) || p[10] || p[63])
            abort();
        sink = p;
        _rjem_sdallocx(p, 64, MALLOCX_LG_ALIGN(6));
    }
    for (int i = 0; i < 50; i++) {
        sink = _rjem_calloc(10, 10);
        sink = _rjem_realloc(sink, 1000);
        sink = _rjem_rallocx(sink, 2000, 0);
        _rjem_free(sink);
    }
}

__attribute__((noinline)) void site_libc(void)
{
    for (int i = 0; i < 70; i++) {
        sink = malloc(24);
        free(sink);
    }
}

int main(void)
{
    site_rjem();
    site_libc();
    puts("done");
    return 0;
}
