/* Started with SIGHUP ignored (nohup, or a shell's trap "" HUP): says whether it still is, raises
 * it, and says it is alive. Under the shim with dump_signal=HUP the signal must stay ignored, as
 * the program and whatever it execs would have it without the shim. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

void *volatile sink;

int main(void)
{
    sink = malloc(10);
    struct sigaction cur;
    sigaction(SIGHUP, NULL, &cur);
    printf("HUP ignored: %d\n", cur.sa_handler == SIG_IGN);
    raise(SIGHUP);
    printf("alive\n");
    free(sink);
    return 0;
}
