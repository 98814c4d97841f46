/* Reads a profile file into memory with a bound: a regular file up to the size it had when
 * opened, a pipe or FIFO up to hr_profile_max bytes and no further than its records declare;
 * directories and devices are refused. Then hands the bytes to hr_profile_parse. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hr_profile.h"

#include "hr_parse_internal.h"

size_t hr_profile_max = HR_PROFILE_MAX_SIZE;

/* What a file of this type is when it cannot hold a profile; NULL for regular files, pipes,
 * FIFOs and sockets. A device is never read: /dev/zero never ends, a tape would move. */
static const char *hr_unreadable_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISREG(mode) || S_ISFIFO(mode) || S_ISSOCK(mode))
        return NULL;
    return "not a regular file";
}

/* Where a stream stands: the offset of the next record header not yet checked. */
struct hr_walk {
    size_t next;
};

/* Looks at what a stream delivered so far. Returns 1 to stop reading (the bytes cannot become a
 * valid profile, or bytes follow a complete END: the parser says which), -1 with err set when a
 * record declares more than the bound, 0 to read on. */
static int hr_walk_stream(struct hr_walk *w, const uint8_t *data, size_t got, size_t limit,
                          char *err)
{
    if (got < sizeof(struct hpf_file_header))
        return got >= 8 && memcmp(data, HPF_MAGIC, 8) != 0;
    if (w->next == 0) {
        if (memcmp(data, HPF_MAGIC, 8) != 0)
            return 1;
        struct hpf_file_header h;
        memcpy(&h, data, sizeof h);
        if (h.header_size < sizeof h || h.header_size % 8 || h.header_size > limit)
            return 1;
        w->next = h.header_size;
    }
    while (w->next <= got && got - w->next >= sizeof(struct hpf_record_header)) {
        struct hpf_record_header rh;
        memcpy(&rh, data + w->next, sizeof rh);
        if (rh.size > limit || w->next + sizeof rh + ((rh.size + 7) & ~(uint64_t)7) > limit) {
            hr_err(err, "record at offset %zu declares %llu bytes, beyond the maximum profile "
                   "size read from a pipe (%zu bytes; HEAPPROF_REPORT_MAX_SIZE raises it)",
                   w->next, (unsigned long long)rh.size, limit);
            return -1;
        }
        size_t end = w->next + sizeof rh + (size_t)((rh.size + 7) & ~(uint64_t)7);
        if (rh.type == HPF_REC_END && end <= got)
            return got > end; /* complete: any further byte is an error, EOF is success */
        w->next = end;
    }
    return 0;
}

/* Reads up to limit bytes from fd (a stream when stream is set: then checked as it arrives,
 * and one byte more than limit is an error). Returns the buffer and its length in *got, or NULL
 * with err set. */
static uint8_t *hr_read_bounded(int fd, size_t limit, int stream, size_t *got, char *err)
{
    size_t cap = stream ? 65536 : limit + 1, n = 0;
    struct hr_walk w = {0};
    uint8_t *data = malloc(cap);
    for (;;) {
        if (!data) {
            hr_err(err, "out of memory");
            return NULL;
        }
        if (n == cap) { /* only streams grow: a regular file's buffer holds its size */
            size_t bigger = cap > limit / 2 ? limit + 1 : cap * 2;
            uint8_t *b = realloc(data, bigger);
            if (!b)
                free(data);
            data = b;
            cap = bigger;
            continue;
        }
        size_t want = (stream ? cap : limit) - n;
        ssize_t r = want ? read(fd, data + n, want) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            hr_err(err, "read error: %s", strerror(errno));
            free(data);
            return NULL;
        }
        n += (size_t)r;
        if (r == 0 || (!stream && n == limit))
            break; /* EOF, or a regular file read to its size (later growth is not read) */
        if (!stream)
            continue;
        if (n > limit) {
            hr_err(err, "more than %zu bytes from a pipe: beyond the maximum profile size "
                   "(HEAPPROF_REPORT_MAX_SIZE raises it)", limit);
            free(data);
            return NULL;
        }
        int st = hr_walk_stream(&w, data, n, limit, err);
        if (st < 0) {
            free(data);
            return NULL;
        }
        if (st > 0)
            break;
    }
    *got = n;
    return data;
}

/* The bound: HEAPPROF_REPORT_MAX_SIZE (bytes, with an optional K, M or G) when it is set,
 * else hr_profile_max. Returns 0, or -1 with err set for a value that is no size. */
static int hr_load_limit(size_t *limit, char *err)
{
    const char *s = getenv("HEAPPROF_REPORT_MAX_SIZE");
    *limit = hr_profile_max;
    if (!s || !*s)
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift)
        end++;
    if (errno || end == s || *end || s[0] == '-' || v == 0 || v > (SIZE_MAX / 2) >> shift) {
        hr_err(err, "HEAPPROF_REPORT_MAX_SIZE='%.40s' is not a size in bytes (K, M, G allowed)",
               s);
        return -1;
    }
    *limit = (size_t)v << shift;
    return 0;
}

int hr_profile_load(struct hr_profile *p, const char *path, char err[HR_ERR_MAX])
{
    memset(p, 0, sizeof *p);
    size_t limit;
    if (hr_load_limit(&limit, err))
        return -1;
    struct stat st;
    /* Checked before open: opening a device can have effects of its own. */
    if (stat(path, &st) != 0) {
        hr_err(err, "%s", strerror(errno));
        return -1;
    }
    const char *kind = hr_unreadable_kind(st.st_mode);
    if (kind) {
        hr_err(err, "%s, not a profile", kind);
        return -1;
    }
    /* A FIFO's open waits for its writer, as cat's does. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        hr_err(err, "%s", strerror(errno));
        return -1;
    }
    /* The path may name something else by now: decide on what was opened. */
    if (fstat(fd, &st) != 0 || (kind = hr_unreadable_kind(st.st_mode)) != NULL) {
        hr_err(err, "%s, not a profile", kind ? kind : strerror(errno));
        close(fd);
        return -1;
    }
    /* A regular file of size 0 may be a /proc file whose size is unknown: read it as a stream
     * (an empty one still reads as empty). */
    int stream = !S_ISREG(st.st_mode) || st.st_size == 0;
    if (!stream && (uint64_t)st.st_size > limit) {
        hr_err(err, "%llu bytes, beyond the maximum profile size (%zu bytes; "
               "HEAPPROF_REPORT_MAX_SIZE raises it)", (unsigned long long)st.st_size, limit);
        close(fd);
        return -1;
    }
    size_t got = 0;
    uint8_t *data = hr_read_bounded(fd, stream ? limit : (size_t)st.st_size, stream,
                                    &got, err);
    close(fd);
    if (!data)
        return -1;
    return hr_profile_parse(p, path, data, got, err);
}
