/* Reading /proc/self/maps with raw system calls (no stdio, no allocation), for the executable
 * ranges the frame-pointer unwinder trusts and for the module list written into profiles. */
#ifndef HP_MAPS_H
#define HP_MAPS_H

#include <stdint.h>

struct hp_mapping {
    uint64_t start, end, offset;
    uint32_t prot; /* 1 r, 2 w, 4 x */
    const char *path; /* NUL-terminated, valid only during the callback; "" if anonymous */
};

/* Calls fn for each line; returns 0 on success, -1 if the file cannot be read. Async-signal-
 * safe: only open/read/close. */
int hp_maps_foreach(int (*fn)(const struct hp_mapping *, void *), void *arg);

/* Parse one maps line (without the newline) into m; path points into line. 0 on success. */
int hp_maps_parse_line(char *line, struct hp_mapping *m);

/* In a forked child: the lock may have been held by a thread that no longer exists. */
void hp_maps_fork_child(void);

#endif
