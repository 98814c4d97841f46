/* Backend resolution: looks the allocator up with dlsym and keeps only entry points that come
 * from the same object as its malloc (pvalloc under jemalloc would otherwise be glibc's). */
#include "backend/backend.h"
#include "rt/rt.h"
#include "patch_internal.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <link.h>

struct hp_backend hp_be;

/* Look `name` up in `handle`; keep it only when it lives in `base` (the malloc's object).
 * RTLD_DEFAULT (an allocator in front of the shim) asks what the program's calls reach, which
 * may be a hidden versioned definition dlsym passes by (hp_bound_symbol). */
static void *lookup(void *handle, const char *name)
{
    return handle == RTLD_DEFAULT ? hp_bound_symbol(name) : dlsym(handle, name);
}

static void *same_object(void *handle, const char *name, const void *base)
{
    void *fn = lookup(handle, name);
    if (!fn)
        return NULL;
    return hp_object_start(fn) == base ? fn : NULL;
}

static void fill(void *handle, const char *prefix, const void *base)
{
    char name[64];
#define LOOK(field, sym)                                                            \
    do {                                                                            \
        hp_fmt(name, sizeof name, "%s%s", prefix, sym);                             \
        *(void **)&hp_be.field = same_object(handle, name, base);                   \
    } while (0)
    LOOK(free, "free");
    LOOK(calloc, "calloc");
    LOOK(realloc, "realloc");
    LOOK(memalign, "memalign");
#undef LOOK
#define LOOK_PLAIN(field, sym) *(void **)&hp_be.field = same_object(handle, sym, base)
    LOOK_PLAIN(usable_size, "malloc_usable_size");
    LOOK_PLAIN(mallopt, "mallopt");
    LOOK_PLAIN(mallinfo, "mallinfo");
    LOOK_PLAIN(mallinfo2, "mallinfo2");
    LOOK_PLAIN(malloc_trim, "malloc_trim");
    LOOK_PLAIN(malloc_stats, "malloc_stats");
    LOOK_PLAIN(malloc_info, "malloc_info");
    if (!*prefix) {
        LOOK_PLAIN(mallocx, "mallocx");
        LOOK_PLAIN(rallocx, "rallocx");
        LOOK_PLAIN(xallocx, "xallocx");
        LOOK_PLAIN(dallocx, "dallocx");
    }
#undef LOOK_PLAIN
    /* Tuning and statistics calls: when the allocator has none, the program's call would have
     * reached the next definition (glibc's, about glibc's own heap), so the shim's forwards
     * there too rather than failing. */
#define NEXT_STAT(field, sym)                                                                  \
    if (!hp_be.field)                                                                           \
        *(void **)&hp_be.field = dlsym(RTLD_NEXT, sym)
    NEXT_STAT(mallopt, "mallopt");
    NEXT_STAT(mallinfo, "mallinfo");
    NEXT_STAT(mallinfo2, "mallinfo2");
    NEXT_STAT(malloc_trim, "malloc_trim");
    NEXT_STAT(malloc_stats, "malloc_stats");
    NEXT_STAT(malloc_info, "malloc_info");
#undef NEXT_STAT
}

/* A non-PIE executable that takes malloc's address makes its PLT slot the canonical address:
 * dlsym then answers that slot, which still leads to the shim. Call it once to find out (the
 * shim's own malloc is in its bootstrap phase now and marks the call). */
static int reaches_shim(void *fn)
{
    hp_tls.boot_calls = 0;
    void *p = ((void *(*)(size_t))fn)(1);
    if (hp_tls.boot_calls)
        return 1;
    void (*other_free)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "free");
    if (p && other_free)
        other_free(p);
    return 0;
}

/* The name of the object holding fn, for messages: the loader's name for it, as dladdr would
 * give (without dladdr's search of the object's symbols). out is left alone if fn is in none. */
void hp_object_name(const void *fn, char *out, size_t cap)
{
    const char *name = NULL;
#if defined(__x86_64__) || defined(__aarch64__)
    struct dl_find_object fo;
    if (_dl_find_object((void *)fn, &fo) == 0 && fo.dlfo_link_map)
        name = fo.dlfo_link_map->l_name;
#endif
    Dl_info info;
    if (!name && dladdr(fn, &info))
        name = info.dli_fname;
    if (name && !*name)
        name = "the program itself"; /* the loader's name for the main program is empty */
    if (name)
        hp_strlcpy(out, name, cap);
}

/* The allocator's aligned_alloc (aa, may be NULL), and the name of the object holding fn, for
 * messages. Whether aligned_alloc refuses alignments that are not powers of two is not asked
 * now: a debugging allocator aborts on such an alignment (gperftools'
 * libtcmalloc_minimal_debug: "Check failed: ... must be power of two"), which only the
 * program's own call may lead to; memalign.c asks the program's own calls. */
static void finish_backend(void *aa, void *fn)
{
    hp_be.aligned_alloc = (void *(*)(size_t, size_t))aa;
    /* glibc's memalign takes every alignment up to SIZE_MAX / 2 + 1 (0 as malloc, the others
     * rounded up): its answer is known without asking. (Known by its object, not by the
     * __libc_memalign name: mimalloc defines that too.) */
    hp_be.memalign_takes_any = hp_be.memalign && hp_object_start((const void *)hp_be.memalign) ==
                                                     hp_object_start((const void *)gnu_get_libc_version);
    hp_object_name(fn, hp_be.object, sizeof hp_be.object);
}

/* The allocator that comes before the shim now leads to it (backend/patch.c): the backend is
 * that allocator's original code. */
static int use_patched(int headerless)
{
    hp_be.name = "patched";
    void *in_use = hp_patch_patched("malloc"); /* the function itself, not a PLT entry for it */
    const void *base = hp_object_start(in_use);
    hp_be.base = base;
    fill(RTLD_DEFAULT, "", base);
    /* Every entry point the shim calls must be the original code, never a patched entry.
     * Without headers only some are patched: the others (fill's) are the original code. */
    hp_be.headerless = headerless;
#define ORIGINAL(field, name)                                                                    \
    do {                                                                                          \
        void *o_ = hp_patch_original(name);                                                       \
        if (o_ || !headerless)                                                                    \
            *(void **)&hp_be.field = o_;                                                          \
    } while (0)
    ORIGINAL(malloc, "malloc");
    ORIGINAL(free, "free");
    ORIGINAL(calloc, "calloc");
    ORIGINAL(realloc, "realloc");
    ORIGINAL(memalign, "memalign");
    ORIGINAL(usable_size, "malloc_usable_size");
    ORIGINAL(mallocx, "mallocx");
    ORIGINAL(rallocx, "rallocx");
    ORIGINAL(xallocx, "xallocx");
    ORIGINAL(dallocx, "dallocx");
#undef ORIGINAL
    if (!hp_be.malloc || !hp_be.free) {
        hp_error("the patched allocator has no malloc or free");
        return -1;
    }
    finish_backend(hp_patch_original("aligned_alloc"), in_use);
    hp_info("patched %d entry points of %s, the allocator that comes before the shim%s",
            hp_patch_count(), hp_be.object, headerless ? ", to profile without headers" : "");
    return 0;
}

static void find_libc(void)
{
    *(void **)&hp_be.libc.malloc = dlsym(RTLD_NEXT, "__libc_malloc");
    *(void **)&hp_be.libc.free = dlsym(RTLD_NEXT, "__libc_free");
    *(void **)&hp_be.libc.calloc = dlsym(RTLD_NEXT, "__libc_calloc");
    *(void **)&hp_be.libc.realloc = dlsym(RTLD_NEXT, "__libc_realloc");
    *(void **)&hp_be.libc.memalign = dlsym(RTLD_NEXT, "__libc_memalign");
    *(void **)&hp_be.libc.valloc = dlsym(RTLD_NEXT, "__libc_valloc");
    *(void **)&hp_be.libc.pvalloc = dlsym(RTLD_NEXT, "__libc_pvalloc");
    *(void **)&hp_be.libc.posix_memalign = dlsym(RTLD_NEXT, "__posix_memalign");
}

/* Is fn in a shared object (not the program itself)? Its mapping's range into lo, hi if so
 * (either may be NULL). */
static int in_library(const void *fn, uintptr_t *lo, uintptr_t *hi)
{
#if defined(__x86_64__) || defined(__aarch64__)
    struct dl_find_object fo;
    if (_dl_find_object((void *)fn, &fo) != 0 || !fo.dlfo_link_map || !fo.dlfo_link_map->l_name ||
        !fo.dlfo_link_map->l_name[0])
        return 0;
    if (lo)
        *lo = (uintptr_t)fo.dlfo_map_start;
    if (hi)
        *hi = (uintptr_t)fo.dlfo_map_end;
    return 1;
#else
    (void)fn, (void)lo, (void)hi;
    return 0;
#endif
}

/* The malloc in use, fn, is not the shim's but reaches it: a shared object that forwards
 * (not a non-PIE program's PLT slot for malloc, which reaches the shim the same way and whose
 * frames are the program's own). */
static void note_forwarder(void *fn)
{
    in_library(fn, &hp_be.fwd_lo, &hp_be.fwd_hi);
}

/* Is fn in another copy of the shim: an object other than this one that defines the shim's
 * public API? (Two builds preloaded at once: the second would add its headers and profile the
 * first one's blocks, and the first one's frames would top every stack of its profile.) */
static int in_other_shim(void *fn, void *self_malloc)
{
    void *api = hp_bound_symbol("heapprof_dump");
    const void *base = hp_object_start(fn);
    if (!api || !base || hp_object_start(api) != base || base == hp_object_start(self_malloc))
        return 0;
    /* A shared object: a program that links its own allocator and defines a fallback
     * heapprof_dump for runs without the shim is not the shim. */
    return in_library(fn, NULL, NULL);
}

void *hp_backend_next(const char *name, const void **where_out)
{
    void *where, *fn;
    if (hp_be.in_front) {
        where = hp_bound_symbol(name);
        fn = hp_patch_original(name);
        if (!fn)
            fn = where;
    } else {
        fn = where = dlsym(RTLD_NEXT, name);
    }
    /* The shim's own definition (first in lookup order, ahead of a patched allocator that
     * lacks the name) is no answer. */
    if (where && hp_object_start(where) == hp_object_start((const void *)hp_backend_next))
        fn = where = NULL;
    if (where_out)
        *where_out = where;
    return fn;
}

int hp_backend_init(const char *name, void *self_malloc, int patch, int headerless, int *passthrough)
{
    void *handle = RTLD_NEXT;
    const char *prefix = "";
    *passthrough = 0;
    hp_memset(&hp_be, 0, sizeof hp_be);

    void *in_use = hp_bound_symbol("malloc");
    int forwards = 0;
    if (in_use && in_use != self_malloc && in_other_shim(in_use, self_malloc)) {
        /* That copy profiles; this one forwards to what comes after it, untouched. */
        hp_object_name(in_use, hp_be.other_shim, sizeof hp_be.other_shim);
        *passthrough = 1;
        name = "next";
    } else if (in_use && in_use != self_malloc && !(forwards = reaches_shim(in_use))) {
        /* Another allocator is earlier in symbol resolution than the shim (linked into the
         * program, or preloaded before the shim): patch its entry points to lead to the shim.
         * Failing that, everything the program frees came from it, so the shim can only
         * forward. */
        const char *why = "patch_allocator=0";
        hp_be.in_front = 1;
        find_libc();
        int rc = patch ? hp_patch_allocator(in_use, headerless, &why) : -1;
        if (rc == 0)
            return use_patched(0);
        hp_be.why_not_patched = why;
        *passthrough = 1;
        if (rc >= 1) /* patched, to be profiled without headers: the shim forwards and records */
            return use_patched(rc);
        handle = RTLD_DEFAULT;
        name = "in-use";
    } else if (!hp_strcmp(name, "glibc")) {
        prefix = "__libc_";
    } else if (hp_strcmp(name, "next") != 0) {
        hp_error("unknown backend '%s' (next, glibc); using next", name);
        name = "next";
    }
    hp_be.name = name;

    char sym[64];
    hp_fmt(sym, sizeof sym, "%smalloc", prefix);
    hp_be.malloc = (void *(*)(size_t))lookup(handle, sym);
    if (!hp_be.malloc) {
        hp_error("cannot find the underlying %s", sym);
        return -1;
    }
    const void *base = hp_object_start((void *)hp_be.malloc);
    hp_be.base = base;
    fill(handle, prefix, base);
    if (!hp_be.free) {
        hp_error("the allocator providing %s has no matching free", sym);
        return -1;
    }
    finish_backend(same_object(handle, "aligned_alloc", base), (void *)hp_be.malloc);
    if (forwards)
        note_forwarder(in_use);
#if defined(__x86_64__)
    /* glibc's malloc debugging library after the shim: its hidden malloc@GLIBC_2.2.5, which
     * dlsym passes by, is not the backend, so its checks (MALLOC_CHECK_, mcheck, mtrace) see
     * none of the program's blocks. Say so (init.c); before the shim it works. */
    if (handle == RTLD_NEXT && !*prefix) {
        void *dbg = dlvsym(RTLD_NEXT, "malloc", "GLIBC_2.2.5");
        const void *dbg_base = hp_object_start(dbg);
        /* (libc is found by a name only it defines: tcmalloc defines __libc_malloc too) */
        if (dbg && dbg_base != base && dbg_base != hp_object_start(dlsym(RTLD_NEXT, "gnu_get_libc_version")))
            hp_object_name(dbg, hp_be.passed_by, sizeof hp_be.passed_by);
    }
#endif
    return 0;
}
