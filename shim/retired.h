/* Notes on libraries closed with dlclose, for the module list of later dumps (retired.c). */
#ifndef HP_RETIRED_H
#define HP_RETIRED_H

#include <stdint.h>

#include "hpf_format.h"

#define HP_RETIRED_SEGS 8

struct hp_retired {
    struct hp_retired *next;
    uint64_t bias;
    uint32_t nsegs, build_id_len;
    struct hpf_segment segs[HP_RETIRED_SEGS]; /* executable segments only */
    uint8_t build_id[64];
    char path[512];
};

/* Called by the dlclose interposer before the library may go away. */
void hp_retire_note(void *handle);
/* Newest first; entries are never removed. */
const struct hp_retired *hp_retired_list(void);
void hp_retired_fork_child(void);

#endif
