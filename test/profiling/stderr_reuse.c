/* A daemon's way with descriptors: close stderr, then open a file of its own, which gets
 * number 2. The shim's messages (verbosity=2: "profile written to" at exit) must not go into
 * a data file opened that way; into one opened for appending (a log) they may.
 * Usage: stderr_reuse data|log FILE. Writes "DATA" to FILE through descriptor 2. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink;

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int append = strcmp(argv[1], "log") == 0;
    close(2);
    int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC | (append ? O_APPEND : 0), 0600);
    if (fd != 2)
        return 3;
    sink = malloc(100);
    free(sink);
    if (write(fd, "DATA", 4) != 4)
        return 4;
    return 0;
}
