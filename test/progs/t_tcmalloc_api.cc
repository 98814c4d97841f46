/* link: -ltcmalloc_minimal */
// A program written against gperftools' tc_* API, linked with tcmalloc: every tc_ allocation
// and free function, mixed with malloc/free and new/delete on the same blocks, and
// tc_malloc_size of blocks malloc made (the shim made them: tcmalloc alone must not see them).
#include "testutil.h"

#include <gperftools/tcmalloc.h>
#include <malloc.h>
#include <new>

static void *volatile sink;

static int aligned(const void *p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

int main()
{
    for (unsigned i = 0; i < 3000; i++) {
        size_t n = 1 + (i * 53) % 7000;
        void *p;
        switch (i % 6) {
        case 0: p = malloc(n); break;
        case 1: p = tc_malloc(n); break;
        case 2: p = tc_malloc_skip_new_handler(n); break;
        case 3: p = tc_calloc(1, n); CHECK(p && !memchr(p, 1, n), "tc_calloc not zeroed"); break;
        case 4: p = tc_memalign(256, n); CHECK(aligned(p, 256), "tc_memalign"); break;
        default: CHECK(tc_posix_memalign(&p, 128, n) == 0 && aligned(p, 128), "tc_posix_memalign"); break;
        }
        CHECK(p, "allocation %u of %zu bytes", i, n);
        size_t u = tc_malloc_size(p);
        CHECK(u >= n && u == malloc_usable_size(p), "tc_malloc_size %zu, usable %zu, asked %zu", u,
              malloc_usable_size(p), n);
        pat_fill(p, u, i);
        sink = p;
        if (i % 4 == 0) {
            p = tc_realloc(p, n * 2 + 10);
            CHECK(p && pat_ok(p, u < n * 2 + 10 ? u : n * 2 + 10, i), "tc_realloc lost the contents");
        }
        switch (i % 5) {
        case 0: free(p); break;
        case 1: tc_free(p); break;
        case 2: tc_free_sized(p, tc_malloc_size(p)); break;
        case 3: tc_cfree(p); break;
        default: tc_free(p); break;
        }
    }
    void *v = tc_valloc(100), *pv = tc_pvalloc(5000);
    CHECK(v && aligned(v, 4096) && pv && aligned(pv, 4096), "tc_valloc/tc_pvalloc alignment");
    CHECK(tc_malloc_size(pv) >= 8192, "tc_pvalloc(5000) usable %zu", tc_malloc_size(pv));
    free(v);
    tc_free(pv);

    // The C++ forms, crossed with the standard operators.
    for (int i = 0; i < 500; i++) {
        char *a = static_cast<char *>(tc_new(40 + i));
        char *b = static_cast<char *>(tc_newarray(80 + i));
        char *c = static_cast<char *>(tc_new_nothrow(24, std::nothrow));
        char *d = static_cast<char *>(tc_new_aligned(100, std::align_val_t(512)));
        char *e = static_cast<char *>(tc_newarray_aligned_nothrow(100, std::align_val_t(64), std::nothrow));
        char *f = new char[33];
        CHECK(a && b && c && d && e && aligned(d, 512) && aligned(e, 64), "tc_new family");
        memset(a, 1, 40 + i);
        memset(b, 2, 80 + i);
        sink = a;
        sink = f;
        if (i % 2) {
            tc_delete_sized(a, 40 + i);
            tc_deletearray_sized(b, 80 + i);
            tc_delete_nothrow(c, std::nothrow);
            tc_delete_sized_aligned(d, 100, std::align_val_t(512));
            tc_deletearray_aligned_nothrow(e, std::align_val_t(64), std::nothrow);
            tc_deletearray(f);
        } else {
            delete a;
            delete[] b;
            tc_delete(c);
            tc_delete_aligned(d, std::align_val_t(512));
            tc_deletearray_aligned(e, std::align_val_t(64));
            delete[] f;
        }
    }
    puts("tcmalloc api ok");
    return 0;
}
