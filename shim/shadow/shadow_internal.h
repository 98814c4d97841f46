/* shim/shadow's private header: the raw system calls its files make (libc's wrappers may be
 * interposed, the shim exports syscall, and they set errno, which the allocation paths keep for
 * the program). Also compiled into the instrumentation runtime (instrument/). */
#ifndef HP_SHADOW_INTERNAL_H
#define HP_SHADOW_INTERNAL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

/* ---------- raw system calls: libc's wrappers may be interposed (the shim exports syscall) or
 * set errno, which the allocation paths keep for the program ---------- */
#if defined(__x86_64__)
static inline long sys6(long n, long a, long b, long c, long d, long e, long f)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret; /* -errno on failure */
}
#else
#include <unistd.h>
static inline long sys6(long n, long a, long b, long c, long d, long e, long f)
{
    int saved = errno;
    long r = syscall(n, a, b, c, d, e, f);
    if (r == -1)
        r = -errno;
    errno = saved;
    return r;
}
#endif

static inline long sys_mmap(uintptr_t at, size_t len, int flags)
{
    return sys6(SYS_mmap, (long)at, (long)len, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | flags, -1, 0);
}
static inline void sys_munmap(uintptr_t at, size_t len) { sys6(SYS_munmap, (long)at, (long)len, 0, 0, 0, 0); }
static inline void sys_madvise(uintptr_t at, size_t len, int advice)
{
    sys6(SYS_madvise, (long)at, (long)len, advice, 0, 0, 0);
}

#endif
