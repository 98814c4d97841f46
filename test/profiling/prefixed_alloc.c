/* A program with an allocator of its own under names other than malloc's, as Rust's
 * jemallocator crate links jemalloc (_rjem_malloc, _rjem_sdallocx, ...) for a
 * #[global_allocator]. The shim does not see those calls; heapprof-run says so up front. */
#include <stdlib.h>

__attribute__((noinline)) void *_rjem_malloc(size_t n) { return calloc(1, n); }
__attribute__((noinline)) void _rjem_sdallocx(void *p, size_t n, int flags)
{
    (void)n, (void)flags;
    free(p);
}

void *volatile sink;

int main(void)
{
    sink = _rjem_malloc(10);
    _rjem_sdallocx(sink, 10, 0);
    return 0;
}
