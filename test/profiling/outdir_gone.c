/* Removes the directory its profile is to go to (argv[1]), then allocates for a while: under
 * dump_interval_ms the interval dumps fail, then the exit profile does. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void *volatile keep;

int main(int argc, char **argv)
{
    if (argc < 2 || rmdir(argv[1]) != 0)
        return 2;
    struct timespec pause = {0, 5 * 1000 * 1000};
    for (int i = 0; i < 40; i++) {
        free(keep);
        keep = malloc(100 + (size_t)i);
        nanosleep(&pause, NULL);
    }
    free(keep);
    return 0;
}
