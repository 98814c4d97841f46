/* Human-readable byte counts for the text report (binary units, one decimal), and the
 * command line as one string for the formats that show it so. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hr_output.h"

char *hr_format_bytes(char *buf, uint64_t bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, HR_BYTES_MAX, "%llu B", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes / 1024.0;
    size_t u = 0;
    /* 1023.96 KiB would print as "1024.0 KiB": move to the next unit before rounding does. */
    while (v >= 1023.95 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, HR_BYTES_MAX, "%.1f %s", v, units[u]);
    return buf;
}

uint32_t hr_argc_shown(const struct hr_profile *p)
{
    uint32_t argc = p->process.argc;
    while (argc > 1 && p->argv[argc - 1].len == 0)
        argc--;
    return argc;
}

char *hr_command_line(const struct hr_profile *p, size_t *len)
{
    uint32_t argc = hr_argc_shown(p);
    size_t n = 0;
    for (uint32_t i = 0; i < argc; i++)
        n += p->argv[i].len + 1;
    char *cmd = malloc(n + 1);
    if (!cmd)
        return NULL;
    size_t at = 0;
    for (uint32_t i = 0; i < argc; i++) {
        if (i)
            cmd[at++] = ' ';
        memcpy(cmd + at, p->argv[i].ptr, p->argv[i].len);
        at += p->argv[i].len;
    }
    cmd[at] = 0;
    *len = at;
    return cmd;
}
