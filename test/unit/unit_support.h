/* Shared glue for the shim's unit tests: definitions of the symbols the interposed entry points
 * (left out of the test objects) would provide, and small helpers. Include from exactly one file
 * per test binary (each test_*.c is its own binary). */
#ifndef HP_UNIT_SUPPORT_H
#define HP_UNIT_SUPPORT_H

#include <check.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* interpose/malloc.c is not linked: init.c asks it for the shim's own malloc. The test binary
 * uses libc's allocator, so there is no such function. */
__attribute__((weak)) void *hp_self_malloc_addr(void) { return NULL; }

/* Run a suite; exit status 0 only when every test passed. CK_FORK=yes runs each test in its own
 * process, which the tests that set up global shim state rely on. */
static inline int hp_unit_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

/* Read everything available from a pipe's read end after the writer closed it. */
static inline size_t hp_unit_drain(int fd, char *buf, size_t cap)
{
    size_t have = 0;
    for (;;) {
        if (have + 1 >= cap)
            break;
        ssize_t r = read(fd, buf + have, cap - 1 - have);
        if (r <= 0)
            break;
        have += (size_t)r;
    }
    buf[have] = 0;
    return have;
}

#endif
