/* Several profiles as one (merge.c, merge_modules.c, merge_fields.c) and the difference of two
 * (diff.c). The rules (which dumps supersede which, what adds) are in docs/REPORT.md, "Merging
 * profiles" and "Diff". Results are complete profiles: hr_symbolizer_new and every writer take
 * them as they take a loaded one. */
#ifndef HR_MERGE_H
#define HR_MERGE_H

#include <stddef.h>

#include "hr_profile.h"

/* Merges in[0..n-1] into out (zeroed by the call; free it with hr_profile_free). Dumps of one
 * process (same pid and start time) are snapshots: only the latest counts. Different processes
 * add. Contexts are matched by their stacks (module identity and offset per frame). out does
 * not point into in: the inputs may be freed first. Returns 0, or -1 with a reason in err. */
int hr_profiles_merge(struct hr_profile *out, struct hr_profile *const *in, size_t n,
                      char err[HR_ERR_MAX]);

/* The diff of the profiles in[] (merged as above) against base: out is the merged new profile
 * with out->diff_base = base_out, base_out the base in the same address layout, and every
 * context of out has c->base set to its counterpart (NULL if none); contexts only in the base
 * are in out with zero figures. Free out before base_out. Returns 0, or -1 with err. */
int hr_profiles_diff(struct hr_profile *out, struct hr_profile *base_out,
                     const struct hr_profile *base, struct hr_profile *const *in, size_t n,
                     char err[HR_ERR_MAX]);

#endif
