/* Stack walks where the current stack is not the thread's own: coroutines (makecontext) on
 * small heap and mmap stacks, and a signal handler on an alternate stack, all allocating. The
 * shim must record them without reading outside mapped memory (the test is that nothing
 * crashes, in every unwinder, and that the coroutine's allocations are attributed). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

static ucontext_t main_ctx, co_ctx;
void *volatile sink;
void *volatile handler_sink; /* the handler's own: it may interrupt main between malloc and free */
static volatile int ticks;

__attribute__((noinline)) void co_alloc(void)
{
    for (int i = 0; i < 1000; i++) {
        sink = malloc(24);
        free(sink);
        if (i % 100 == 0)
            swapcontext(&co_ctx, &main_ctx);
    }
}

static void co_main(void) { co_alloc(); }

static void on_alarm(int sig)
{
    (void)sig;
    void *p = malloc(64);
    handler_sink = p;
    free(p);
    ticks++;
}

static void run_coroutine(void *stack, size_t size)
{
    getcontext(&co_ctx);
    co_ctx.uc_stack.ss_sp = stack;
    co_ctx.uc_stack.ss_size = size;
    co_ctx.uc_link = &main_ctx;
    makecontext(&co_ctx, co_main, 0);
    for (int i = 0; i < 11; i++)
        swapcontext(&main_ctx, &co_ctx);
}

int main(void)
{
    /* A 16 KiB stack right at the end of a mapping: a walk that ran past its top would fault. */
    char *m = mmap(NULL, 3 * 4096 + 16384, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return 1;
    munmap(m + 4096 + 16384, 2 * 4096); /* unmapped right above the stack */
    run_coroutine(m + 4096, 16384);
    void *heap_stack = malloc(65536);
    run_coroutine(heap_stack, 65536);
    free(heap_stack);

    stack_t ss = {.ss_sp = malloc(SIGSTKSZ * 4), .ss_size = SIGSTKSZ * 4, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_ONSTACK | SA_RESTART};
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    for (long i = 0; ticks < 50 && i < 200000000; i++) {
        void *p = malloc(40);
        sink = p;
        free(p);
    }
    it.it_value.tv_usec = it.it_interval.tv_usec = 0;
    setitimer(ITIMER_REAL, &it, NULL);
    printf("stacks done\n");
    return 0;
}
