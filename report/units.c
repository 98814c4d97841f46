/* Human-readable byte counts for the text report (binary units, one decimal). */
#include <stdio.h>

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
