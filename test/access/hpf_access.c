/* Test helper: the access figures of a profile, decoded with the shim's own format header and
 * HIB merge, independently of heapprof-report. Prints one line per context that has HIBs:
 *   ctx ID allocs=N accesses=N writes=N acc_min=N acc_max=N util_total=N util_min=N
 *       util_max=N hist=B0,B1,...
 * then "access modes=0xM hist_bins=N modules=N" when the profile has an ACCESS record and
 * "summary shadow_resident=N registry=N". Usage: hpf_access FILE.hpf */
#include "format/format.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXCTX 4096
#define MAXBINS 1024

static struct hpf_hib hib[MAXCTX];
static int has[MAXCTX];
static uint64_t hist[MAXCTX][MAXBINS];
static uint32_t nbins[MAXCTX];

static void add_hib(const struct hpf_hib *h)
{
    if (h->context_id >= MAXCTX) {
        fprintf(stderr, "context id %u too large\n", h->context_id);
        exit(2);
    }
    if (has[h->context_id]) {
        hp_hib_merge(&hib[h->context_id], h);
    } else {
        hib[h->context_id] = *h;
        has[h->context_id] = 1;
    }
}

static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    for (unsigned s = 0; *p < end && s < 64; s += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80))
            return v;
    }
    fprintf(stderr, "bad LEB128 number\n");
    exit(2);
}

static void packed(const uint8_t *p, const uint8_t *end)
{
    struct hpf_packed ph;
    memcpy(&ph, p, sizeof ph);
    p += sizeof ph;
    for (uint32_t i = 0; i < ph.count; i++) {
        struct hpf_hib h;
        memset(&h, 0, sizeof h);
        for (uint32_t f = 0; f < ph.nfields; f++) {
            uint64_t v = uleb(&p, end);
            if (ph.type != HPF_REC_HIB || f >= HPF_HIB_NFIELDS)
                continue;
            if (hpf_hib_fields[f].size == 4) {
                uint32_t v32 = (uint32_t)v;
                memcpy((char *)&h + hpf_hib_fields[f].offset, &v32, 4);
            } else {
                memcpy((char *)&h + hpf_hib_fields[f].offset, &v, 8);
            }
        }
        if (ph.type == HPF_REC_HIB)
            add_hib(&h);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: hpf_access FILE.hpf\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    static uint8_t buf[64 << 20];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    struct hpf_file_header fh;
    if (len < sizeof fh || memcmp(buf, HPF_MAGIC, 8)) {
        fprintf(stderr, "not a profile\n");
        return 2;
    }
    memcpy(&fh, buf, sizeof fh);
    int access = 0;
    struct hpf_access acc = {0, 0, 0, 0};
    struct hpf_summary sum;
    memset(&sum, 0, sizeof sum);
    for (size_t off = fh.header_size; off + sizeof(struct hpf_record_header) <= len;) {
        struct hpf_record_header rh;
        memcpy(&rh, buf + off, sizeof rh);
        const uint8_t *p = buf + off + sizeof rh, *end = p + rh.size;
        if (rh.type == HPF_REC_HIB && rh.size >= HPF_HIB_MIN_SIZE) {
            struct hpf_hib h;
            memset(&h, 0, sizeof h);
            memcpy(&h, p, rh.size < sizeof h ? rh.size : sizeof h);
            add_hib(&h);
        } else if (rh.type == HPF_REC_PACKED) {
            packed(p, end);
        } else if (rh.type == HPF_REC_ACCESS) {
            memcpy(&acc, p, sizeof acc);
            access = 1;
        } else if (rh.type == HPF_REC_ACCESS_HIST) {
            struct hpf_access_hist hh;
            memcpy(&hh, p, sizeof hh);
            if (hh.context_id >= MAXCTX || hh.nbins > MAXBINS)
                return 2;
            /* Granule histograms only: the per-word ones (kinds 2 and 3) are checked in the
             * report's JSON (check_report.py). */
            for (uint32_t i = 0; hh.kind == HPF_HIST_GRANULE && i < hh.nbins; i++) {
                uint64_t v;
                memcpy(&v, p + sizeof hh + 8 * i, 8);
                hist[hh.context_id][i] += v;
            }
            if (hh.kind == HPF_HIST_GRANULE && hh.nbins > nbins[hh.context_id])
                nbins[hh.context_id] = hh.nbins;
        } else if (rh.type == HPF_REC_SUMMARY) {
            memcpy(&sum, p, rh.size < sizeof sum ? rh.size : sizeof sum);
        }
        off += sizeof rh + ((rh.size + 7) & ~(uint64_t)7);
    }
    for (uint32_t id = 1; id < MAXCTX; id++) {
        if (!has[id])
            continue;
        const struct hpf_hib *h = &hib[id];
        printf("ctx %u allocs=%" PRIu64 " accesses=%" PRIu64 " writes=%" PRIu64 " acc_min=%" PRIu64
               " acc_max=%" PRIu64 " util_total=%" PRIu64 " util_min=%u util_max=%u hist=",
               id, h->alloc_count, h->total_access_count, h->total_write_count,
               h->min_access_count, h->max_access_count, h->total_percent_utilized,
               h->min_percent_utilized, h->max_percent_utilized);
        for (uint32_t i = 0; i < nbins[id]; i++)
            printf("%s%" PRIu64, i ? "," : "", hist[id][i]);
        printf("\n");
    }
    if (access)
        printf("access modes=0x%x hist_bins=%u modules=%u\n", acc.modes, acc.hist_bins, acc.nmodules);
    printf("summary shadow_resident=%" PRIu64 " registry=%" PRIu64 "\n", sum.shadow_resident,
           sum.shadow_registry_bytes);
    return 0;
}
