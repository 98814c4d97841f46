/* Profiles cut short (no END record: the process was killed while writing): where the last
 * complete record ends, and what of the records before it can be kept (docs/REPORT.md). */
#include <stdlib.h>
#include <string.h>

#include "hr_profile.h"

#include "hr_parse_internal.h"

/* A record type this reader knows in a file of this version (FRAMES, STACK_REFS and PACKED
 * came with version 2). */
static int hr_rec_type_known(uint32_t type, uint32_t version)
{
    if (type >= HPF_REC_PROCESS && type <= HPF_REC_ACCESS_HIST)
        return version >= 2 || type < HPF_REC_FRAMES || type > HPF_REC_PACKED;
    return type == HPF_REC_END;
}

int hr_cut_or_corrupt(const uint8_t *rec, size_t have, uint32_t version)
{
    /* Fewer than 4 bytes: nothing says what the record was; the file simply ends. */
    if (have < sizeof(uint32_t))
        return 1;
    uint32_t type;
    memcpy(&type, rec, sizeof type);
    /* An unknown type is skipped in a whole file, but here nothing tells a newer producer's
     * record from damage whose length field points past the end. */
    return hr_rec_type_known(type, version);
}

/* A context of a profile cut before its SUMMARY is kept when it is whole: its stack, its LIVE
 * record, and HIB records for every block LIVE counts (a dump folds the blocks still live into
 * a HIB, so the HIBs of a whole context add up to its allocations; the HIBs of the table come
 * after every LIVE record, in the table's order). */
static int hr_cut_whole(const struct hr_context *c)
{
    return c->has_stack && c->has_live && c->hib.alloc_count == c->live.allocs;
}

/* The summary of a profile whose SUMMARY record was cut: the sums of the contexts kept, as the
 * shim makes them; the figures only SUMMARY holds (the peak, the shim's counters) stay 0. */
static void hr_cut_summary(struct hr_profile *p)
{
    struct hpf_summary *s = &p->summary;
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < p->ncontexts; i++) {
        const struct hpf_live *l = &p->contexts[i].live;
        s->total_allocs += l->allocs;
        s->total_bytes += l->bytes;
        s->live_count += l->live_count;
        s->live_size += l->live_size;
    }
    s->total_frees = s->total_allocs - s->live_count;
    s->contexts = p->ncontexts;
}

int hr_cut_finish(struct hr_profile *p, int have_process, int have_summary, size_t at,
                  char *err)
{
    p->cut.cut = 1;
    p->cut.size = p->size;
    p->cut.complete = at;
    p->cut.records = p->records;
    p->cut.files = 1;
    if (!have_process) {
        hr_err(err, "cut short at byte %zu before its PROCESS record (no END record): nothing "
               "to report; the process was probably killed while writing it", p->size);
        return -1;
    }
    if (have_summary)
        return 0; /* only END is missing: every context's records were read */
    p->cut.dropped_contexts = hr_contexts_prune(p, hr_cut_whole);
    p->cut.summary_rebuilt = 1;
    hr_cut_summary(p);
    return 0;
}
