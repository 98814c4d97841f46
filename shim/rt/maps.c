/* /proc/self/maps reader (rt.h). Lines are assembled in a fixed buffer; a line longer
 * than the buffer (a path near PATH_MAX) is skipped rather than misparsed. */
#include "rt/rt.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static char *parse_hex(char *p, uint64_t *out)
{
    uint64_t v = 0;
    int d, any = 0;
    while ((d = hexval(*p)) >= 0) {
        v = (v << 4) | (uint64_t)d;
        p++;
        any = 1;
    }
    *out = v;
    return any ? p : NULL;
}

int hp_maps_parse_line(char *line, struct hp_mapping *m)
{
    char *p = parse_hex(line, &m->start);
    if (!p || *p != '-')
        return -1;
    p = parse_hex(p + 1, &m->end);
    if (!p || *p != ' ')
        return -1;
    p++;
    m->prot = 0;
    if (p[0] == 'r')
        m->prot |= 1;
    if (p[0] && p[1] == 'w')
        m->prot |= 2;
    if (p[0] && p[1] && p[2] == 'x')
        m->prot |= 4;
    while (*p && *p != ' ')
        p++;
    if (*p != ' ')
        return -1;
    p = parse_hex(p + 1, &m->offset);
    if (!p)
        return -1;
    /* device, inode */
    for (int field = 0; field < 2; field++) {
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
    }
    while (*p == ' ')
        p++;
    m->path = p;
    return 0;
}

/* One reader at a time: the buffer is static because callers may run on small stacks. */
static hp_lock_t maps_lock = HP_LOCK_INIT;

int hp_maps_foreach(int (*fn)(const struct hp_mapping *, void *), void *arg)
{
    /* Under a seccomp filter, an open the filter does not list may kill the process. */
    if (__atomic_load_n(&hp_sandboxed, __ATOMIC_RELAXED))
        return -1;
    int fd = (int)hp_open_proc_self("maps");
    if (fd < 0)
        return -1;
    static char buf[8192];
    hp_lock(&maps_lock);
    size_t have = 0;
    int skipping = 0, stop = 0;
    for (;;) {
        long r = syscall(SYS_read, fd, buf + have, sizeof buf - 1 - have);
        if (r < 0)
            break;
        have += (size_t)r;
        size_t start = 0;
        for (size_t i = 0; i < have && !stop; i++) {
            if (buf[i] != '\n')
                continue;
            buf[i] = 0;
            if (!skipping) {
                struct hp_mapping m;
                if (hp_maps_parse_line(buf + start, &m) == 0)
                    stop = fn(&m, arg);
            }
            skipping = 0;
            start = i + 1;
        }
        if (stop)
            break;
        if (start == 0 && have == sizeof buf - 1) {
            skipping = 1; /* line longer than the buffer: drop it */
            have = 0;
        } else {
            for (size_t i = start; i < have; i++)
                buf[i - start] = buf[i];
            have -= start;
        }
        if (r == 0)
            break;
    }
    hp_unlock(&maps_lock);
    syscall(SYS_close, fd);
    return 0;
}

void hp_maps_fork_child(void) { hp_lock_reset(&maps_lock); }
