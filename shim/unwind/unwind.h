/* shim/unwind: the call stack of an allocation, innermost frame first, without the shim's own
 * frames: the frame-pointer walk (fp.c), the .eh_frame walk (walk.c) with its rule and site
 * caches (rules.c, sites.c) and libunwind loaded privately (libunwind.c); and the executable
 * ranges the walks trust (ranges.c). What only unwind/ uses is in unwind_internal.h. */
#ifndef HP_UNWIND_H
#define HP_UNWIND_H

#include <stdint.h>

/* ---- stack capture (capture.c; set up in setup.c) ---- */
void hp_stack_init(void);
/* From the shim's constructor; libc_initialised: libc's own initialiser has run, so dlopen
 * (libunwind) is safe now; otherwise it waits for hp_stack_libc_ready. */
void hp_stack_late_init(int libc_initialised);
void hp_stack_libc_ready(void); /* the shim's constructor returned: libc's initialiser is next */
void hp_stack_fork_prepare(void);
void hp_stack_fork_parent(void);
void hp_stack_fork_child(void);
void hp_stack_code_unloaded(void); /* dlclose unmapped code: forget what was cached about it */
/* A seccomp filter is about to be installed: unwinder=libunwind gives way to the cfi walk. */
void hp_stack_before_sandbox(void);
/* Innermost first, shim frames dropped. Returns the depth; *truncated set when cut. *out points
 * at the frames (pcs, or the walk cache wc), *hash is their hash (hp_stack_hash,
 * unwind_internal.h). pcs must have room for max + HP_STACK_SLACK entries (unwinders that
 * cannot skip the shim's own frames write them first). frame: where the frame-pointer walk of
 * the shim's own frames may start (a frame of a shim function below on this stack), 0 for the
 * caller's own frame. */
#define HP_STACK_SLACK 16
struct hp_walk_cache;
int hp_stack_capture(uintptr_t *pcs, int max, int *truncated, struct hp_walk_cache *wc,
                     const uintptr_t **out, uint64_t *hash, uintptr_t frame);
/* The same from a signal handler that interrupted this thread's allocation or free inside the
 * shim (depth HP_DEPTH_EVENT): no walk cache, nothing that waits for a lock the interrupted
 * code may hold, never loads libunwind (frame pointers instead of libunwind when the
 * interrupted code is inside it). -1 when it cannot walk here (the thread's stack bounds are
 * not known yet). */
int hp_stack_capture_nested(uintptr_t *pcs, int max, int *truncated, const uintptr_t **out,
                            uint64_t *hash, uintptr_t frame);
/* The context of the stack from frame (the shim's entry point's frame) if the thread's site
 * cache knows it (unwinder=cfi only), else 0: then hp_stack_capture from the same frame and
 * hp_cfi_site_done with the context found. */
uint32_t hp_stack_site_find(struct hp_walk_cache *wc, uintptr_t frame, int *truncated);
/* pipe2 (interpose/pipe.c) made fds, called from caller (its return address): a pipe made by
 * libunwind's code moves up to the shim's own descriptors (libunwind.c). */
void hp_unwind_pipe_made(uintptr_t caller, int fds[2]);
void hp_maps_refresh(int force);
int hp_is_exec_mapping(uintptr_t pc);  /* in the executable mappings of /proc/self/maps */

/* ---- the cfi walk's caches, kept in each thread's cache (walk.c, sites.c) ---- */
/* The cfi unwinder: stack walks through code without frame pointers using .eh_frame, with
 * decoded rules cached per return address. */

/* The previous walk of a thread, kept so the next one can stop early: once a frame has the same
 * code address, stack pointer and frame register as a frame of the previous walk, and every
 * stack slot the previous walk read from there on still holds the value it read, the rest of
 * the walk would repeat the previous one exactly, so it is reused where it lies. Frames are kept
 * at the top end of the arrays (the outermost at HP_WALK_MAX - 1), so a walk that reuses frames
 * j.. only writes its own new frames below j: nothing is copied, and each frame keeps the hash
 * chain of itself and every frame outside it, so only the new frames are hashed. Deep stacks (an
 * interpreter's eval loop, a server's request loop) then cost only their changing top. */
#define HP_WALK_MAX 272
#define HP_WALK_RULES 512

/* The thread's cache of whole stacks by their innermost frame (the allocator's caller: its
 * return address and stack pointer), for allocations whose stack is one the thread allocated
 * from before: a hit hands back the context without walking. An entry keeps where each return
 * address of the walk was read (as an offset from that stack pointer) and what it read there,
 * and the same for every saved rbp the walk went on to use to find a frame; it is taken only
 * if every one of those slots still holds what it held, on the same stack (same top), and,
 * when the walk used the caller's frame register before any frame restored it, with the same
 * register. The first check's value is kept as it is (stacks that share the innermost frame
 * part there, mostly); the others' values, and that register, only as multiplicative chains,
 * four side by side, folded into one value (sites.c): one slot that changed changes it for sure,
 * several changed at once would have to cancel out exactly. So an entry is small: 192 bytes,
 * and the part python3's stacks use takes one or two cache lines. Four entries per set, least
 * recently used first out; the sets grow fourfold from HP_SITE_SETS_MIN up to HP_SITE_SETS_MAX
 * as the thread keeps missing. A set is chosen by the frame's address and stack pointer; a
 * thread that at full size still makes more entries than it gets hits, or gets few, has more
 * stacks under one such key than four ways hold (recursive code reaching one allocating
 * function through many paths): its sets are emptied and from then on chosen by the return
 * addresses the walk's first four steps read as well (sites.c: site_key), and may grow up to
 * HP_SITE_SETS_DEEP_MAX (768 KiB of entries).
 * Walks that need more than HP_SITE_CHECKS checks (over 64 frames, or about 40 of code with
 * frame pointers, whose every frame is found through a saved rbp), or whose slots lie over
 * 512 KiB up the stack, are not kept. */
#define HP_SITE_WAYS 4
#define HP_SITE_FRAMES 64
#define HP_SITE_CHECKS 81 /* 1 + a multiple of 4: checks after the first go in fours */
#define HP_SITE_SETS_MIN 4
#define HP_SITE_SETS_MAX 256
#define HP_SITE_SETS_DEEP_MAX 1024 /* keyed by the callers too (deep, below) */

struct hp_site_tag {
    uintptr_t ip, sp; /* ip 0: an empty way */
};

struct hp_site {
    uint64_t sum;      /* checks 1 .. n - 1 in four chains, folded, and the caller's rbp (when it matters) */
    uintptr_t val0;    /* what check 0 reads */
    uint32_t room;     /* the stack's top less the stack pointer */
    uint32_t id;       /* the context */
    uint8_t n, bp_matters, truncated, pad;
    uint16_t off[HP_SITE_CHECKS]; /* check k reads the 8 bytes at sp + 8 * off[k] */
};
_Static_assert(sizeof(struct hp_site) == 192, "an entry is three cache lines");

struct hp_site_cache {
    struct hp_site_tag (*tags)[HP_SITE_WAYS];
    struct hp_site *body;  /* set s, way w: body[s * HP_SITE_WAYS + w] */
    uint8_t *order;        /* per set: its ways from most to least recently used, 2 bits each */
    uint64_t mask;         /* sets - 1 */
    uint64_t misses;       /* lookups that found nothing since the sets last grew */
    uint32_t tries, hits;  /* lookups and hits in the current window (HP_SITE_WINDOW) */
    uint32_t adds;         /* entries made in the current window */
    uint32_t no_adds;      /* windows still to go without making entries */
    uint32_t add_runs;     /* pauses in a row (up to 5) */
    uint32_t off;          /* lookups still to skip: the thread's stacks keep changing */
    uint32_t low_runs;     /* windows in a row with few hits (up to 5) */
    uint32_t pending;      /* the last lookup missed: the walk that follows may be kept */
    uint32_t deep;         /* 0: sets chosen by the frame alone; else by the return addresses
                            * above it too (keyed deep), and at most this many sets */
    uint32_t bad_runs;     /* windows in a row at full size, not deep, with few hits */
    /* The last entry that could not be made (more checks than an entry holds, a slot out of
     * reach): for the walk of that generation (hp_walk_cache.walk_gen), at its base, seen from
     * that stack pointer and top. The same walk again would fail the same way: not tried. */
    uint32_t fail_gen, fail_base, fail_n;
    uintptr_t fail_sp, fail_hi;
    uint64_t q_set;        /* the set that lookup chose */
    uintptr_t q_ip, q_sp, q_bp, q_hi, q_frame; /* that lookup's frame (q_frame: the shim's) */
};

struct hp_walk_cache {
    int base;           /* the previous walk is in [base, HP_WALK_MAX); HP_WALK_MAX: none */
    int truncated;      /* it stopped at the depth limit, not at the end of the stack */
    uintptr_t stack_hi; /* the stack it walked */
    uintptr_t first_ip; /* the innermost frame's address last time, and its rule */
    uint64_t first_rule;
    uint32_t gen;       /* the code generation its rules belong to (hp_cfi_code_unloaded) */
    /* The walk in progress: its depth limit and the caller's buffer (used when the frames do
     * not fit here); its results: where the frames are, their hash, whether they were cut. */
    int max, res_trunc;
    uintptr_t *pcs, hi16; /* hi16: the top of the stack being walked, less 16 */
    const uintptr_t *res_out;
    uint64_t res_hash;
    /* The innermost frame of the kept walk in the shim's own code (a walk that went through a
     * signal frame into a call of the shim's it interrupted), HP_WALK_MAX for none, as judged
     * with the shim's range [shim_lo, shim_hi); res_noshim: no frame the walk in progress hands
     * out is the shim's, so the capture need not look for them (capture.c). A walk that joins
     * the previous one looks only at its new frames. */
    int shim_at, res_noshim;
    uintptr_t shim_lo, shim_hi;
    uint32_t walk_gen;  /* changes whenever the kept walk's frames change */
    /* Where the walk in progress is (walk.c): its frame and that frame's rule, how many new
     * frames it has, the frame of the previous walk it is at, why it last stopped. */
    struct hp_walk_state {
        uintptr_t ip, sp, bp;
        uint64_t r;
        long m, j;
        int why;
    } st;
    /* ip[HP_WALK_MAX]: what the last frame's step read; the three after it stay 0. */
    uintptr_t ip[HP_WALK_MAX + 4];
    /* Frame k's step read ip[k + 1] from slot[k]. The reuse check reads four at a time: the
     * three entries past the end name a slot that always holds 0, as ip does there. */
    uintptr_t slot[HP_WALK_MAX + 3];
    uintptr_t sp[HP_WALK_MAX + 1]; /* sp[HP_WALK_MAX]: UINTPTR_MAX, ends searches by sp */
    uintptr_t bp[HP_WALK_MAX + 1]; /* [HP_WALK_MAX]: unused */
    uint64_t hash[HP_WALK_MAX + 1]; /* hash chain of frames k..HP_WALK_MAX-1; [HP_WALK_MAX]: 0 */
    /* The new frames of the walk in progress, before they move into place. */
    uintptr_t nf_ip[HP_WALK_MAX], nf_sp[HP_WALK_MAX], nf_bp[HP_WALK_MAX], nf_slot[HP_WALK_MAX];
    /* The thread's own small cache of decoded rules in front of the shared one, by return
     * address: the return addresses a thread keeps meeting stay on a few pages of their own.
     * An address and its rule share a line (a frame's lookup misses the cache at most once). */
    struct hp_walk_rule {
        uintptr_t ra;
        uint64_t rule;
    } rules[HP_WALK_RULES];
    struct hp_site_cache sites;
};
_Static_assert(sizeof(struct hp_walk_rule) == 16, "an address and its rule share a line");

void hp_walk_cache_reset(struct hp_walk_cache *wc);
/* The walk cache is another thread's now (a recycled thread cache): forget its sites too. */
void hp_walk_cache_forget(struct hp_walk_cache *wc);
/* The walk just made (after a hp_cfi_site_find that found nothing) has context id. */
void hp_cfi_site_add(struct hp_walk_cache *wc, uint32_t id);
/* The same for the caller of hp_stack_capture: add the walk (id) or not (0); nothing to do
 * unless a lookup missed. */
static inline void hp_cfi_site_done(struct hp_walk_cache *wc, uint32_t id)
{
    if (wc->sites.pending)
        hp_cfi_site_add(wc, id);
}

#endif
