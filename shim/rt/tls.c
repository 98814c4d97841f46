/* The per-thread state of the shim (rt.h: hp_tls) and the work a thread leaves for its way out
 * of the shim (a dump asked for while it was inside). */
#include "rt/rt.h"

__thread struct hp_tls hp_tls __attribute__((tls_model("initial-exec")));

volatile int hp_dump_pending;
void (*volatile hp_pending_runner)(void);

void hp_run_pending(void)
{
    void (*run)(void) = hp_pending_runner;
    if (run)
        run();
}
