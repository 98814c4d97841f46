/* The binary interface between the instrumentation runtime (instrument/, linked into programs
 * by heapprof-cc) and the shim: one function the shim exports, found by the runtime through a
 * weak reference. Runtime and shim are built and shipped apart, so the struct is versioned and
 * sized; fields are only ever added at the end. */
#ifndef HP_SHADOW_ATTACH_H
#define HP_SHADOW_ATTACH_H

#include <stddef.h>
#include <stdint.h>

#define HP_ATTACH_VERSION 1

/* How a module was instrumented (heapprof-cc links the matching instrument/module.c object). */
enum hp_attach_mode {
    HP_MODE_NONE = 0,      /* the runtime attaching for itself, before any module said */
    HP_MODE_INLINE = 1,    /* clang -fmemory-profile: plane 0 only, loads and stores together */
    HP_MODE_CALLBACKS = 2, /* clang -mllvm -memprof-use-callbacks: stores also in plane 1 */
    HP_MODE_GCC = 4,       /* gcc -fsanitize=kernel-address callbacks: stores also in plane 1 */
};
/* Set in mode with the above: the module called a MemProf version check this runtime does not
 * know; its counts may follow another mapping and are not to be trusted. */
#define HP_MODE_ABI_UNKNOWN 0x100u

struct hp_attach {
    uint32_t version;     /* HP_ATTACH_VERSION */
    uint32_t size;        /* sizeof(struct hp_attach) as the caller was built with */
    uint32_t mode;        /* hp_attach_mode bits of the module attaching */
    uint32_t memprof_abi; /* the MemProf ABI version it calls the check of (1); 0 for gcc */
    const void *module;   /* an address inside the module (for the report's module list) */
    /* answer */
    uintptr_t base;  /* shadow plane 0 (shadow.h) */
    uintptr_t wbase; /* plane 1 (writes), 0 when none */
    /* Added later (a caller of the first layout passes a size that ends before it, and gets
     * no word plane): */
    uintptr_t hbase; /* plane 2 (per-word counters of armed blocks), 0 when none */
};
/* The size of the first layout, which the shim still takes. */
#define HP_ATTACH_SIZE_V1 40u
_Static_assert(offsetof(struct hp_attach, hbase) == HP_ATTACH_SIZE_V1, "the first layout's size");

/* Exported by the shim (libheapprof_shim.so). Called once per instrumented module as it
 * initialises, and by the runtime for itself: the first call reserves the shadow (until then
 * the shim does no shadow work at all). Returns 0 with base (and wbase and hbase when a
 * callback module asked for them: hbase only with word histograms on) filled in; -1 when the shim refuses (unknown version, or access profiling
 * off): the runtime then keeps a shadow of its own, which nothing reads. */
int heapprof_shadow_attach(struct hp_attach *a);

#endif
