/* A frame of code the program made at run time (as a JIT compiler does: an anonymous executable
 * mapping with no call frame information, keeping a frame pointer) between an allocating
 * function and main. The cfi unwinder steps through it with its frame pointer and goes on to
 * main; the shim reads the table of executable mappings again at most once a second, so the
 * code is called a little over a second after it was made. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define BLOCKS 300

void *volatile sink[BLOCKS];

__attribute__((noinline)) void jit_callee(void)
{
    for (int i = 0; i < BLOCKS; i++)
        sink[i] = malloc(4321);
}

int main(void)
{
    /* push rbp; mov rbp, rsp; movabs rax, jit_callee; call rax; pop rbp; ret */
    unsigned char code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
                            0xff, 0xd0, 0x5d, 0xc3};
    uintptr_t target = (uintptr_t)&jit_callee;
    memcpy(code + 6, &target, sizeof target);
    unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 1;
    memcpy(m, code, sizeof code);
    if (mprotect(m, 4096, PROT_READ | PROT_EXEC) != 0)
        return 1;
    struct timespec ts = {1, 200000000};
    nanosleep(&ts, NULL);
    ((void (*)(void))(uintptr_t)m)();
    for (int i = 0; i < BLOCKS; i++)
        free(sink[i]);
    puts("ok");
    return 0;
}
