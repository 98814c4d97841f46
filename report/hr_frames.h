/* The distinct frames and call paths of a profile's stacks (frames.c), for the formats that
 * draw stacks as a tree (folded, html): each symbolised frame once, inlined functions as
 * frames of their own, and a tree of paths from the outermost frame inwards whose nodes the
 * contexts point to. Two contexts with the same frames share one node. */
#ifndef HR_FRAMES_H
#define HR_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "hr_profile.h"
#include "hr_symbolize.h"

/* One distinct frame; name, file and module index hr_ftab.strs. name is the function
 * (demangled), else "module+0xOFFSET", else the address. */
struct hr_ftab_frame {
    uint32_t name, file, module;
    int line;
    int inlined;
};

/* Node 0 is the root; node i > 0 is frame `frame` called from node parent < i. */
struct hr_ftab_node {
    uint32_t parent, frame;
};

/* A distinct pc: its frames, outermost first, are chain[start .. start + len). */
struct hr_ftab_pc {
    uint64_t pc;
    uint32_t start, len;
};

struct hr_ftab {
    char **strs; /* distinct strings, strs[0] = "" */
    size_t nstrs, strs_cap;
    struct hr_ftab_frame *frames;
    size_t nframes, frames_cap;
    struct hr_ftab_node *nodes;
    size_t nnodes, nodes_cap;
    uint32_t *ctx_node; /* the node of p->contexts[i]'s whole stack (0: an empty stack) */
    /* Lookup tables: open addressing, entries are positions + 1. */
    uint32_t *str_idx, *frame_idx, *node_idx;
    size_t str_cap, frame_cap, node_cap;
    uint32_t *pc_idx;
    size_t pc_cap;
    struct hr_ftab_pc *pcs; /* each distinct pc, symbolised once */
    size_t npcs, pcs_cap;
    uint32_t *chain;
    size_t nchain, chain_cap;
};

/* Builds t for every context of p. names_only: a frame is its name alone (file, line and
 * module left out), so paths through the same functions merge, as flame graphs draw them.
 * Returns 0, or -1 when out of memory (t is then freed). */
int hr_ftab_build(struct hr_ftab *t, const struct hr_profile *p, struct hr_symbolizer *sym,
                  int names_only);
void hr_ftab_free(struct hr_ftab *t);

/* The module file name (after the last '/') of a path. */
const char *hr_basename(const char *path);

#endif
