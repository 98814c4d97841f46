/* The underlying allocator, behind one table of operations. Only code in backend/ knows how the
 * functions were found (dlsym); the rest of the shim calls through hp_be. */
#ifndef HP_BACKEND_H
#define HP_BACKEND_H

#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct hp_backend {
    const char *name;
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);         /* NULL: malloc + memset */
    void *(*realloc)(void *, size_t);        /* NULL: malloc + copy + free */
    void *(*memalign)(size_t, size_t);       /* NULL: over-allocate with malloc */
    size_t (*usable_size)(void *);           /* NULL: the requested size is all we know */
    /* Pass-through entry points (NULL when the allocator lacks them). */
    int (*mallopt)(int, int);
    struct mallinfo (*mallinfo)(void);
    struct mallinfo2 (*mallinfo2)(void);
    int (*malloc_trim)(size_t);
    void (*malloc_stats)(void);
    int (*malloc_info)(int, FILE *);
    /* jemalloc's extended API, for its flags (arenas, thread caches) and for blocks the shim
     * did not make. */
    void *(*mallocx)(size_t, int);
    void *(*rallocx)(void *, size_t, int);
    size_t (*xallocx)(void *, size_t, size_t, int);
    void (*dallocx)(void *, int);
    /* Its aligned_alloc, asked whether it refuses an alignment that is not a power of two
     * when the program passes one (memalign.c); NULL if it has none. */
    void *(*aligned_alloc)(size_t, size_t);
    /* Its memalign is glibc's, which takes an alignment of 0 or one that is not a power of two
     * (memalign.c need not ask it). */
    int memalign_takes_any;
    /* The start of the object the allocator's malloc is in (NULL: unknown). */
    const void *base;
    /* Where malloc came from, for messages. */
    char object[256];
    /* An allocator after the shim that programs would reach and the backend passes by
     * (glibc's libc_malloc_debug.so, whose malloc is a hidden versioned symbol); "" if none. */
    char passed_by[256];
    /* Another copy of the shim (another build, another path) comes before this one and
     * profiles the process: this one only forwards to the next allocator (passthrough). The
     * other copy's object name; "" if none. */
    char other_shim[256];
    /* A library in front of the shim whose malloc hands every call on to the shim (glibc's
     * libc_malloc_debug.so without MALLOC_CHECK_, a preloaded tracer calling __libc_malloc):
     * the address range of its mapping, whose frames are left off the top of every stack
     * (its wrapper would otherwise be every allocation's site); 0, 0 if none. */
    uintptr_t fwd_lo, fwd_hi;
    /* Passthrough: why the allocator in front of the shim was not patched (with headerless:
     * why not completely). */
    const char *why_not_patched;
    /* The allocator in front of the shim is patched for blocks without headers
     * (why_not_patched says why): its C and C++ entry points lead to the shim, which forwards
     * (passthrough) and records each block by address, without a header (core/headerless.c).
     * The functions above are its original code. 1: a path past its entry points was found
     * (or the look could not finish); 2: it is an allocator of the program's own, nothing
     * found past its entry points. 0: not so. */
    int headerless;
    /* An allocator comes before the shim in symbol lookup (patched, or passthrough). */
    int in_front;
    /* With an allocator in front of the shim (patched or passthrough): glibc's own functions
     * under their __libc_* names (the next definitions after the shim), which the shim's
     * __libc_* entry points forward to, as they do without the shim. A malloc of the
     * program's that wraps __libc_malloc would otherwise come back to itself. */
    struct {
        void *(*malloc)(size_t);
        void (*free)(void *);
        void *(*calloc)(size_t, size_t);
        void *(*realloc)(void *, size_t);
        void *(*memalign)(size_t, size_t);
        void *(*valloc)(size_t);
        void *(*pvalloc)(size_t);
        int (*posix_memalign)(void **, size_t, size_t);
    } libc;
};


extern struct hp_backend hp_be;

/* The allocator's own definition of name, as the program's call would reach it without the
 * shim: the next definition after the shim, or the original code of a patched allocator in
 * front of it (its unpatched functions as they are). NULL if there is none. *where (may be
 * NULL) is set to the definition itself (for a patched function: the patched entry, in the
 * allocator's object). For APIs the shim interposes beyond C's (mimalloc's mi_*, mi.c). */
void *hp_backend_next(const char *name, const void **where);

/* The next definition of name after the shim's (glibc's, for the functions the shim wraps:
 * pthread_create, dlopen, sigaction, ...), looked up once into *slot. The one way the shim
 * resolves a symbol it interposes, so that only backend/ knows dlsym. */
void *hp_next_sym(void **slot, const char *name);
/* The first definition of name in the process (dlsym(RTLD_DEFAULT)), and the definition of sym
 * in the C++ runtime's own object (the one that defines std::get_new_handler), NULL if none. */
void *hp_global_sym(const char *name);
void *hp_cxx_runtime_sym(const char *sym);
/* The function `name` as the first loaded object (in load order, the program first) that
 * defines it in its dynamic symbol table has it, NULL when none does: read from the tables,
 * without dlsym, whose failure makes an error message with malloc. */
void *hp_defined_function(const char *name);

/* The loader's name for the object holding fn ("the program itself" for the executable), for
 * messages; out is left alone if fn is in none. */
void hp_object_name(const void *fn, char *out, size_t cap);

/* Where the shim's __libc_* entry points go: glibc's (hp_be.libc) when an allocator sits in
 * front of the shim, the shim's own paths otherwise. */
static inline int hp_libc_forward(void) { return hp_be.in_front; }

/* ---- patched allocators (patch.c) ---- */
/* An allocator linked into the program under names of its own (Rust's jemallocator links
 * jemalloc as _rjem_malloc, _rjem_sdallocx, ...), found in the program's full symbol table:
 * patch each prefix+name of the C and jemalloc API to lead to the shim's name, whose blocks
 * come from the shim's own backend (that allocator is no longer used). Returns how many entry
 * points were patched (0: no such allocator), or -1 (changing nothing) with *why. */
int hp_patch_prefixed(const char *prefix, const char **why);
/* Around a call from inside the patched allocator out to the program (a callback such as
 * mimalloc's heap visitor): while the shim runs the allocator's original code, its patched
 * entry points go straight to that code, and the program's calls in the callback must reach
 * the shim again. suspend returns the state for resume. */
int hp_patch_suspend(void);
void hp_patch_resume(int state);
/* Where the loaded object holding addr starts (dladdr's dli_fbase, its first segment's page),
 * NULL if in none (symbols.c). */
const void *hp_object_start(const void *addr);

/* Resolve the backend called `name` ("next" or "glibc"). self_malloc is the shim's own malloc,
 * used to detect an allocator that comes before the shim in symbol lookup (linked into the
 * program or preloaded first); with `patch`, that allocator's entry points are patched to lead
 * to the shim (patch.c) and it becomes the backend ("patched"); with headerless, an allocator
 * that cannot be patched completely is patched to be profiled without headers (hp_be.headerless).
 * Returns 0 on success; on failure the message has already been printed. Sets *passthrough when
 * the process's malloc stays another allocator's: hp_be is then that allocator and the shim must
 * forward without headers (recording by address when hp_be.headerless). */
int hp_backend_init(const char *name, void *self_malloc, int patch, int headerless, int *passthrough);

/* The return address of a shim function: its caller's, or when it was reached through a patched
 * entry point (keep_regs.c), the program's call of that entry point, which the stub's frame
 * holds (fp: the shim function's frame, built with frame pointers). */
extern const char hp_patch_value_ret[], hp_patch_void_ret[];
static inline const void *hp_program_caller(const void *ra, const void *fp)
{
    if (__builtin_expect(ra == (const void *)hp_patch_value_ret || ra == (const void *)hp_patch_void_ret, 0))
        return ((const void *const *)*(const void *const *)fp)[1];
    return ra;
}

#endif
