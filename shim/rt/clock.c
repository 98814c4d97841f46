/* The shim's clock and cpu id (rt.h): milliseconds since start from the coarse clock, read
 * through the vDSO, and the cpu from the thread's rseq area; set up once at init. */
#include "rt/rt.h"

#include <sched.h>
#include <stddef.h>
#include <time.h>

uint64_t hp_clock_start_ms;
static uint64_t start_unix_ns;

int hp_rseq_ok;
ptrdiff_t hp_rseq_cpu_off;

#if defined(__x86_64__)
/* glibc 2.35+ registers an rseq area for every thread and says where (sys/rseq.h); weak, so
 * an older glibc leaves them NULL. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
#endif

int (*hp_vdso_gettime)(clockid_t, struct timespec *);

void hp_clock_init(void)
{
    hp_vdso_gettime = (int (*)(clockid_t, struct timespec *))hp_vdso_sym("__vdso_clock_gettime");
#if defined(__x86_64__)
    /* cpu_id is the second 32-bit field of struct rseq. */
    if (&__rseq_offset && &__rseq_size && __rseq_size >= 8) {
        hp_rseq_cpu_off = __rseq_offset + 4;
        hp_rseq_ok = 1;
    }
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    hp_clock_start_ms = (uint64_t)ts.tv_sec * 1000u + (uint32_t)ts.tv_nsec / 1000000u;
    clock_gettime(CLOCK_REALTIME, &ts);
    start_unix_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t hp_start_unix_ns(void) { return start_unix_ns; }

uint32_t hp_cpu_slow(void)
{
    /* glibc 2.35+ answers from the rseq area: no system call. */
    int c = sched_getcpu();
    return c < 0 ? 0 : (uint32_t)c;
}
