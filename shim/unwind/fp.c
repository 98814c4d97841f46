/* The thread's stack bounds, which every walk keeps its reads within, and the frame-pointer
 * walk: it trusts a frame only while it lies on this thread's stack above the previous one and
 * its return address is in an executable mapping. */
#include "unwind/unwind_internal.h"

#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_stack_end;

static uint64_t main_stack_limit;

struct find_map {
    uintptr_t addr, lo, hi;
};

static int find_map(const struct hp_mapping *m, void *arg)
{
    struct find_map *f = arg;
    if (f->addr < m->start || f->addr >= m->end)
        return 0;
    f->lo = m->start;
    f->hi = m->end;
    return 1;
}

void hp_main_stack_init(void)
{
    struct rlimit rl;
    main_stack_limit = 8u << 20;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > main_stack_limit)
        main_stack_limit = rl.rlim_cur;
}

void hp_own_stack_compute(uintptr_t *lo, uintptr_t *hi)
{
    uintptr_t l = 0, h = 0;
    /* (Under a seccomp filter even gettid may be fatal; the main thread's bounds were found
     * before, at its first allocation.) */
    if (!hp_sandboxed && syscall(SYS_gettid) == getpid()) {
        h = (uintptr_t)__libc_stack_end; /* every frame of the main thread is below it */
        l = h > main_stack_limit ? h - main_stack_limit : 0;
    } else {
        /* Once per thread, from /proc/self/maps: the mapping that holds the thread's
         * descriptor, which glibc puts atop the thread's stack (its own or one the program
         * gave it). Not pthread_getattr_np: glibc allocates inside it while holding the
         * thread's lock, so asking it from here, under that very allocation, waits forever
         * (threads of the JVM and of Rust call it first thing). A thread glibc did not make:
         * the mapping this frame is on. */
        struct find_map f = {(uintptr_t)pthread_self(), 0, 0};
        if (hp_maps_foreach(find_map, &f) != 0 && hp_sandboxed) {
            /* Under a seccomp filter (no /proc): glibc's thread descriptor sits right above
             * the thread's stack, in the same mapping, so the stack below it is readable up
             * to it. A thread on another stack than that is walked as one
             * (hp_walk_limit_other). */
            f.lo = (uintptr_t)__builtin_frame_address(0) & ~(uintptr_t)4095;
            f.hi = f.addr > f.lo && f.addr - f.lo < ((uintptr_t)1 << 30) ? f.addr : 0;
        }
        if (!f.hi && !hp_sandboxed) {
            f.addr = (uintptr_t)__builtin_frame_address(0);
            hp_maps_foreach(find_map, &f);
        }
        l = f.lo;
        h = f.hi;
        if (!h)
            l = h = 1; /* nothing found: an empty range (computed all the same), so every
                        * walk of this thread takes the mincore path */
    }
    hp_tls.stack_lo = *lo = l;
    hp_tls.stack_hi = *hi = h;
}

uintptr_t hp_walk_limit_other(uintptr_t sp)
{
    uintptr_t page = sp & ~(uintptr_t)4095;
    static const unsigned pages[] = {64, 16, 4, 1};
    unsigned char vec[64];
    int saved = errno;
    uintptr_t limit = sp;
    /* No mincore under a filter the process installed (hp_sandboxed): sp's own page is
     * mapped. A filter it started under (hp_filtered) is most often a container's, which
     * allows mincore; walks on coroutine stacks keep their depth there. */
    if (__atomic_load_n(&hp_sandboxed, __ATOMIC_RELAXED))
        return page + 4096;
    for (unsigned i = 0; i < sizeof pages / sizeof pages[0]; i++)
        if (mincore((void *)page, (size_t)pages[i] * 4096, vec) == 0) {
            limit = page + (uintptr_t)pages[i] * 4096;
            break;
        }
    errno = saved;
    return limit;
}

int hp_capture_fp(uintptr_t *pcs, int max, int *truncated, uintptr_t fp)
{
    uintptr_t lo = fp, hi = hp_walk_limit(fp);
    uintptr_t code_lo = 0, code_hi = 0; /* the executable range the last frame was in */
    int n = 0, miss = 0;
    while (fp >= lo && fp < hi && hi - fp >= 2 * sizeof(uintptr_t) && !(fp & (sizeof(uintptr_t) - 1))) {
        uintptr_t next = ((uintptr_t *)fp)[0];
        uintptr_t ret = ((uintptr_t *)fp)[1];
        if (!hp_in_shim(ret)) {
            if (ret - code_lo >= code_hi - code_lo) {
                if (!hp_exec_range(ret, &code_lo, &code_hi)) {
                    miss = 1;
                    break;
                }
            }
            if (n == max) {
                *truncated = 1;
                break;
            }
            pcs[n++] = ret;
        }
        if (next <= fp)
            break;
        fp = next;
    }
    /* A return address outside every known executable mapping may belong to a library loaded
     * since the last look at the maps. */
    if (miss && n == 0)
        hp_maps_refresh(0);
    return n;
}
