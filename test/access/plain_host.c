/* An executable built without instrumentation that opens an instrumented library with
 * RTLD_LOCAL: the library carries a runtime copy of its own, not merged with any other, which
 * must still count into the shadow the probe (later the shim) reads. */
#include "probe.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: plain_host LIB\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "plain_host: %s\n", dlerror());
        return 1;
    }
    void *(*alloc_fill)(size_t) = (void *(*)(size_t))dlsym(h, "lib_alloc_fill");
    if (!alloc_fill)
        return 1;
    void *p = alloc_fill(512); /* 64 stores */
    if (heapprof_probe_take) {
        struct hp_probe_sum s;
        heapprof_probe_take(p, 512, &s);
        printf("probe host_plugin accesses=%" PRIu64 " writes=%" PRIu64 "\n", s.accesses, s.writes);
    }
    free(p);
    puts("plain_host done");
    return 0;
}
