/* Merges the several HIB records one context can have (evicted entries, then the final one)
 * into one; the rules are those of docs/FORMAT.md, "Merging HIB records". */
#include "hr_profile.h"

#include "format/format.h"

void hr_hib_merge(struct hpf_hib *acc, const struct hpf_hib *rec)
{
    /* The shim's own merge (shim/hib.c): a record that saw no block contributes nothing. */
    hp_hib_merge(acc, rec);
    acc->flags |= rec->flags;
}
