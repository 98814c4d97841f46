/* shim/core: init, the allocation paths and what every interposed function does. Each entry
 * point in interpose/ is a short forward to a function here; the functions here put the
 * 32-byte header (header_internal.h) in front of blocks from the backend, hand each allocation
 * and free to the profiler, and never call back into an entry point (but syscall(3), the
 * shim's raw system call everywhere, whose entry point is a few instructions of assembly). */
#ifndef HP_CORE_H
#define HP_CORE_H

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "backend/backend.h"
#include "rt/rt.h"

/* ---- init (init.c) ---- */
enum { HP_INIT_NONE = 0, HP_INIT_RUNNING = 1, HP_INIT_DONE = 2 };
extern int hp_init_state;
extern int hp_passthrough;    /* another allocator won symbol resolution: forward only */
extern int hp_headerless;     /* with hp_passthrough: its blocks recorded by address (headerless.c) */
extern int hp_realloc_zero_frees; /* backend's realloc(p, 0) frees and returns NULL */
/* Returns 1 when the shim is ready; 0 while init runs (caller must use the bootstrap arena). */
int hp_init_slow(void);
static inline int hp_ready(void)
{
    if (HP_LIKELY(__atomic_load_n(&hp_init_state, __ATOMIC_ACQUIRE) == HP_INIT_DONE))
        return 1;
    return hp_init_slow();
}

/* The shim's own malloc: defined beside malloc in interpose/malloc.c (an alias can only name a
 * function of its own file); unit tests provide their own. */
void *hp_self_malloc_addr(void);

/* ---- the C API (alloc.c, memalign.c, libc.c, tuning.c) ---- */
void *hp_alloc(size_t size, size_t align, int zero);
void hp_free(void *p);
void *hp_realloc(void *p, size_t size);
size_t hp_usable_size(void *p);
/* count * size, ENOMEM when that overflows. */
void *hp_calloc(size_t n, size_t size);
void *hp_reallocarray(void *p, size_t n, size_t size);
/* The aligned allocations, with the allocator's rules for odd alignments (memalign.c). */
void *hp_memalign(size_t align, size_t size);
void *hp_aligned_alloc(size_t align, size_t size);
int hp_posix_memalign(void **out, size_t align, size_t size);
void *hp_valloc(size_t size);
void *hp_pvalloc(size_t size);
/* glibc's __libc_* names (libc.c): glibc's own functions with an allocator in front of the
 * shim, the shim's paths otherwise. */
void *hp_libc_malloc(size_t size);
void hp_libc_free(void *p);
void *hp_libc_calloc(size_t n, size_t size);
void *hp_libc_realloc(void *p, size_t size);
void *hp_libc_memalign(size_t align, size_t size);
int hp_libc_posix_memalign(void **out, size_t align, size_t size);
void *hp_libc_valloc(size_t size);
void *hp_libc_pvalloc(size_t size);
/* Tuning and statistics: the allocator's own (tuning.c). */
int hp_mallopt(int param, int value);
struct mallinfo hp_mallinfo(void);
struct mallinfo2 hp_mallinfo2(void);
int hp_malloc_trim(size_t pad);
void hp_malloc_stats(void);
int hp_malloc_info(int options, FILE *fp);

/* ---- C++ operator new (new.c); delete is hp_free ---- */
/* align: 0 for the forms without one. The new_handler is called until an allocation succeeds;
 * without one, std::bad_alloc is thrown, or NULL returned when nothrow. */
void *hp_new(size_t size, size_t align, int nothrow);

/* ---- jemalloc's extended API (jemalloc.c), with jemalloc's flags; sallocx is
 * hp_usable_size, sdallocx hp_dallocx ---- */
void *hp_mallocx(size_t size, int flags);
void *hp_rallocx(void *p, size_t size, int flags);
size_t hp_xallocx(void *p, size_t size, size_t extra, int flags);
void hp_dallocx(void *p, int flags);
size_t hp_nallocx(size_t size, int flags);

/* ---- mimalloc's API (mimalloc_*.c) ----
 * hp_mi_<name> does what mimalloc's mi_<name> does, for the entry point of that name. ra is
 * the entry point's return address (HP_CALLER): mimalloc's own calls, and the shim's, are
 * answered by mimalloc's function itself. */
#define HP_CALLER hp_program_caller(__builtin_return_address(0), __builtin_frame_address(0))
typedef struct mi_heap_s mi_heap_t;
typedef bool(mi_visit_fn)(const mi_heap_t *, const void *, void *, size_t, void *);
typedef void(mi_deferred_fn)(bool, unsigned long long, void *);
typedef void(mi_error_fn)(int, void *);
void *hp_mi_malloc(const void *ra, size_t n);
void *hp_mi_calloc(const void *ra, size_t c, size_t n);
void *hp_mi_zalloc(const void *ra, size_t n);
void *hp_mi_malloc_small(const void *ra, size_t n);
void *hp_mi_zalloc_small(const void *ra, size_t n);
void *hp_mi_mallocn(const void *ra, size_t c, size_t n);
char *hp_mi_strdup(const void *ra, const char *s);
char *hp_mi_strndup(const void *ra, const char *s, size_t n);
char *hp_mi_realpath(const void *ra, const char *name, char *resolved);
unsigned char *hp_mi_mbsdup(const void *ra, const unsigned char *s);
unsigned short *hp_mi_wcsdup(const void *ra, const unsigned short *s);
void *hp_mi_malloc_aligned(const void *ra, size_t n, size_t a);
void *hp_mi_malloc_aligned_at(const void *ra, size_t n, size_t a, size_t o);
void *hp_mi_zalloc_aligned(const void *ra, size_t n, size_t a);
void *hp_mi_zalloc_aligned_at(const void *ra, size_t n, size_t a, size_t o);
void *hp_mi_calloc_aligned(const void *ra, size_t c, size_t n, size_t a);
void *hp_mi_calloc_aligned_at(const void *ra, size_t c, size_t n, size_t a, size_t o);
void *hp_mi_memalign(const void *ra, size_t a, size_t n);
int hp_mi_posix_memalign(const void *ra, void **out, size_t a, size_t n);
void *hp_mi_aligned_alloc(const void *ra, size_t a, size_t n);
void *hp_mi_valloc(const void *ra, size_t n);
void *hp_mi_pvalloc(const void *ra, size_t n);
void *hp_mi_realloc(const void *ra, void *p, size_t n);
void *hp_mi_expand(const void *ra, void *p, size_t n);
void *hp_mi__expand(const void *ra, void *p, size_t n);
void *hp_mi_reallocn(const void *ra, void *p, size_t c, size_t n);
void *hp_mi_reallocf(const void *ra, void *p, size_t n);
void *hp_mi_reallocarray(const void *ra, void *p, size_t c, size_t n);
int hp_mi_reallocarr(const void *ra, void *pp, size_t c, size_t n);
void *hp_mi_rezalloc(const void *ra, void *p, size_t n);
void *hp_mi_recalloc(const void *ra, void *p, size_t c, size_t n);
void *hp_mi_realloc_aligned(const void *ra, void *p, size_t n, size_t a);
void *hp_mi_realloc_aligned_at(const void *ra, void *p, size_t n, size_t a, size_t o);
void *hp_mi_rezalloc_aligned(const void *ra, void *p, size_t n, size_t a);
void *hp_mi_rezalloc_aligned_at(const void *ra, void *p, size_t n, size_t a, size_t o);
void *hp_mi_recalloc_aligned(const void *ra, void *p, size_t c, size_t n, size_t a);
void *hp_mi_recalloc_aligned_at(const void *ra, void *p, size_t c, size_t n, size_t a, size_t o);
void *hp_mi_aligned_recalloc(const void *ra, void *p, size_t c, size_t n, size_t a);
void *hp_mi_aligned_offset_recalloc(const void *ra, void *p, size_t c, size_t n, size_t a, size_t o);
void hp_mi_free(const void *ra, void *p);
void hp_mi_cfree(const void *ra, void *p);
void hp_mi_free_size(const void *ra, void *p, size_t n);
void hp_mi_free_aligned(const void *ra, void *p, size_t a);
void hp_mi_free_size_aligned(const void *ra, void *p, size_t n, size_t a);
size_t hp_mi_usable_size(const void *ra, const void *p);
size_t hp_mi_malloc_size(const void *ra, const void *p);
size_t hp_mi_malloc_usable_size(const void *ra, const void *p);
void *hp_mi_new(const void *ra, size_t n);
void *hp_mi_new_aligned(const void *ra, size_t n, size_t a);
void *hp_mi_new_nothrow(const void *ra, size_t n);
void *hp_mi_new_aligned_nothrow(const void *ra, size_t n, size_t a);
void *hp_mi_new_n(const void *ra, size_t c, size_t n);
void *hp_mi_new_realloc(const void *ra, void *p, size_t n);
void *hp_mi_new_reallocn(const void *ra, void *p, size_t c, size_t n);
void *hp_mi_heap_malloc(const void *ra, mi_heap_t *h, size_t n);
void *hp_mi_heap_zalloc(const void *ra, mi_heap_t *h, size_t n);
void *hp_mi_heap_calloc(const void *ra, mi_heap_t *h, size_t c, size_t n);
void *hp_mi_heap_mallocn(const void *ra, mi_heap_t *h, size_t c, size_t n);
void *hp_mi_heap_malloc_small(const void *ra, mi_heap_t *h, size_t n);
char *hp_mi_heap_strdup(const void *ra, mi_heap_t *h, const char *s);
char *hp_mi_heap_strndup(const void *ra, mi_heap_t *h, const char *s, size_t n);
char *hp_mi_heap_realpath(const void *ra, mi_heap_t *h, const char *name, char *resolved);
void *hp_mi_heap_malloc_aligned(const void *ra, mi_heap_t *h, size_t n, size_t a);
void *hp_mi_heap_malloc_aligned_at(const void *ra, mi_heap_t *h, size_t n, size_t a, size_t o);
void *hp_mi_heap_zalloc_aligned(const void *ra, mi_heap_t *h, size_t n, size_t a);
void *hp_mi_heap_zalloc_aligned_at(const void *ra, mi_heap_t *h, size_t n, size_t a, size_t o);
void *hp_mi_heap_calloc_aligned(const void *ra, mi_heap_t *h, size_t c, size_t n, size_t a);
void *hp_mi_heap_calloc_aligned_at(const void *ra, mi_heap_t *h, size_t c, size_t n, size_t a, size_t o);
void *hp_mi_heap_realloc(const void *ra, mi_heap_t *h, void *p, size_t n);
void *hp_mi_heap_reallocn(const void *ra, mi_heap_t *h, void *p, size_t c, size_t n);
void *hp_mi_heap_reallocf(const void *ra, mi_heap_t *h, void *p, size_t n);
void *hp_mi_heap_rezalloc(const void *ra, mi_heap_t *h, void *p, size_t n);
void *hp_mi_heap_recalloc(const void *ra, mi_heap_t *h, void *p, size_t c, size_t n);
void *hp_mi_heap_realloc_aligned(const void *ra, mi_heap_t *h, void *p, size_t n, size_t a);
void *hp_mi_heap_realloc_aligned_at(const void *ra, mi_heap_t *h, void *p, size_t n, size_t a, size_t o);
void *hp_mi_heap_rezalloc_aligned(const void *ra, mi_heap_t *h, void *p, size_t n, size_t a);
void *hp_mi_heap_rezalloc_aligned_at(const void *ra, mi_heap_t *h, void *p, size_t n, size_t a, size_t o);
void *hp_mi_heap_recalloc_aligned(const void *ra, mi_heap_t *h, void *p, size_t c, size_t n, size_t a);
void *hp_mi_heap_recalloc_aligned_at(const void *ra, mi_heap_t *h, void *p, size_t c, size_t n, size_t a,
                                     size_t o);
void *hp_mi_heap_alloc_new(const void *ra, mi_heap_t *h, size_t n);
void *hp_mi_heap_alloc_new_n(const void *ra, mi_heap_t *h, size_t c, size_t n);
void hp_mi_heap_destroy(const void *ra, mi_heap_t *h);
bool hp_mi_heap_visit_blocks(const void *ra, const mi_heap_t *h, bool all, mi_visit_fn *fn, void *arg);
void hp_mi_register_deferred_free(const void *ra, mi_deferred_fn *fn, void *arg);
void hp_mi_register_error(const void *ra, mi_error_fn *fn, void *arg);
/* The BSD names libmimalloc defines too (reallocarr answers as libmimalloc's when that is the
 * one the program would reach). */
void *hp_reallocf(void *p, size_t n);
int hp_reallocarr(void *pp, size_t c, size_t n);

/* ---- signal functions (signals.c): what the program sees of the signals dump/ handles ---- */
typedef void (*hp_sighandler_t)(int);
int hp_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
hp_sighandler_t hp_signal(int sig, hp_sighandler_t h);
hp_sighandler_t hp_bsd_signal(int sig, hp_sighandler_t h);
hp_sighandler_t hp_sysv_signal(int sig, hp_sighandler_t h);
hp_sighandler_t hp_sigset(int sig, hp_sighandler_t h);
int hp_sigignore(int sig);

/* ---- credentials, chroot and seccomp (sandbox.c): the profile file is made before the
 * process may lose the right to; then glibc's function ---- */
int hp_setuid(uid_t uid);
int hp_seteuid(uid_t uid);
int hp_setreuid(uid_t r, uid_t e);
int hp_setresuid(uid_t r, uid_t e, uid_t s);
int hp_setgid(gid_t gid);
int hp_setegid(gid_t gid);
int hp_setregid(gid_t r, gid_t e);
int hp_setresgid(gid_t r, gid_t e, gid_t s);
int hp_setgroups(size_t n, const gid_t *list);
int hp_chroot(const char *path);
int hp_prctl(int option, unsigned long a, unsigned long b, unsigned long c, unsigned long d);
/* A seccomp or prctl request made through syscall(3): syscall number n and its six arguments;
 * the result as syscall's (-1 and errno on failure). */
long hp_syscall_sandbox_request(long n, long a, long b, long c, long d, long e, long f);

/* ---- other process events (process.c) ---- */
int hp_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg);
/* _exit: the exit profile, then the end of the process as glibc's _exit ends it. */
__attribute__((noreturn)) void hp_exit(int status);
/* glibc's dlopen, and in *mask what the mode is and-ed with (strip_deepbind). */
void *hp_dlopen_next(int *mask);
int hp_dlclose(void *handle);
/* heapprof_dump() of heapprof.h. */
int hp_heapprof_dump(void);
/* The pool API of heapprof.h (pool.c): pool is the program's handle (0: none), addr an
 * object's address. */
void hp_pool_create(uintptr_t pool);
void hp_pool_destroy(uintptr_t pool);
void hp_pool_alloc(uintptr_t pool, uintptr_t addr, size_t size);
void hp_pool_free(uintptr_t addr);
void hp_pool_resize(uintptr_t addr, size_t size);
/* heapprof_shadow_attach of shadow/attach.h, which instrumented modules call (access.c). */
struct hp_attach;
int hp_access_attach(struct hp_attach *a);
/* pipe2: the next pipe2, then, for libunwind's own pipe (caller inside the libunwind the shim
 * loaded), both ends moved out of the program's descriptor numbers. */
int hp_pipe2(int fds[2], int flags, uintptr_t caller);

#endif
