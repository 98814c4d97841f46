/* The dump's buffered writer: bytes, records, strings and padding of the .hpf layout, written
 * with raw write(2) from a static buffer (a dump may run in a signal handler). */
#include "dump/dump_internal.h"

#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

void hp_w_reset(struct writer *w)
{
    w->err = 0;
    w->len = 0;
    w->records = 0;
    w->total = 0;
    w->tee = NULL;
}

void hp_w_flush(struct writer *w)
{
    const char *p = w->buf;
    size_t n = w->len;
    while (n && !w->err) {
        long r = syscall(SYS_write, w->fd, p, n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            w->err = errno;
            break;
        }
        p += r;
        n -= (size_t)r;
    }
    w->len = 0;
}

void hp_w_bytes(struct writer *w, const void *data, size_t n)
{
    const char *p = data;
    w->total += n;
    if (w->tee) {
        if (w->tee_cap - w->tee_len >= n)
            hp_memcpy(w->tee + w->tee_len, data, n);
        w->tee_len += n; /* past tee_cap: too much to keep */
    }
    while (n) {
        if (w->len == sizeof w->buf)
            hp_w_flush(w);
        size_t c = sizeof w->buf - w->len;
        if (c > n)
            c = n;
        hp_memcpy(w->buf + w->len, p, c);
        w->len += c;
        p += c;
        n -= c;
    }
}

void hp_w_pad(struct writer *w, size_t n, size_t to)
{
    static const char zero[8];
    size_t pad = (to - n % to) % to;
    hp_w_bytes(w, zero, pad);
}

void hp_w_record(struct writer *w, uint32_t type, uint32_t flags, uint64_t size)
{
    struct hpf_record_header rh = {type, flags, size};
    hp_w_bytes(w, &rh, sizeof rh);
    w->records++;
}


void hp_w_string(struct writer *w, const char *s, size_t len)
{
    uint32_t l = (uint32_t)len;
    hp_w_bytes(w, &l, 4);
    hp_w_bytes(w, s, len);
    hp_w_pad(w, len, 4);
}

void hp_file_header(struct hpf_file_header *fh)
{
    hp_memset(fh, 0, sizeof *fh);
    hp_memcpy(fh->magic, HPF_MAGIC, 8);
    fh->version = HPF_VERSION;
    fh->header_size = sizeof *fh;
    fh->endian_check = HPF_ENDIAN_CHECK;
}

void hp_w_file_header(struct writer *w)
{
    struct hpf_file_header fh;
    hp_file_header(&fh);
    hp_w_bytes(w, &fh, sizeof fh);
}

void hp_fsize_guard_begin(struct hp_sig_guard *g)
{
    if (!hp_filtered && hp_soft_limit(RLIMIT_FSIZE) != UINT64_MAX)
        hp_sig_guard_begin(g, SIGXFSZ);
    else
        g->on = 0;
}
