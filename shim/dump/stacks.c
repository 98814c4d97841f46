/* The stacks of a dump as a frame tree (docs/FORMAT.md, FRAMES and STACK_REFS): the contexts'
 * stacks sorted from their outermost frame in, then one node per distinct outer part. */
#include "dump/dump_internal.h"

#include <sys/mman.h>

/* One context's stack in full (a STACK record): what is written when the tree cannot be made. */
static void write_stack_record(struct writer *w, const struct hp_ctx *c)
{
    struct hpf_stack st = {c->id, c->depth};
    hp_w_record(w, HPF_REC_STACK, 0, sizeof st + (uint64_t)c->depth * 8);
    hp_w_bytes(w, &st, sizeof st);
    if (sizeof c->pcs[0] == 8) {
        hp_w_bytes(w, c->pcs, (size_t)c->depth * 8); /* one copy, not one per frame */
    } else {
        for (uint32_t i = 0; i < c->depth; i++) {
            uint64_t pc = c->pcs[i];
            hp_w_bytes(w, &pc, 8);
        }
    }
}

/* Frame d of c counted from the outermost (0), plus 1; 0 past its innermost frame, so that a
 * stack sorts before every stack it is the outer part of. */
static inline uint64_t frame_key(const struct hp_ctx *c, uint32_t d)
{
    return d < c->depth ? (uint64_t)c->pcs[c->depth - 1 - d] + 1 : 0;
}

/* a before b, both known to agree on their first d outer frames. */
static int stack_before_from(const struct hp_ctx *a, const struct hp_ctx *b, uint32_t d)
{
    for (;; d++) {
        uint64_t x = frame_key(a, d), y = frame_key(b, d);
        if (x != y)
            return x < y;
        if (!x)
            return 0; /* the same stack */
    }
}

/* How many outer frames a and b share, knowing they share d. */
static uint32_t shared_from(const struct hp_ctx *a, const struct hp_ctx *b, uint32_t d)
{
    uint32_t n = a->depth < b->depth ? a->depth : b->depth;
    while (d < n && a->pcs[a->depth - 1 - d] == b->pcs[b->depth - 1 - d])
        d++;
    return d;
}

/* How many outer frames every stack of a[lo..lo+n) has in common, knowing they share d, up to
 * d + SHARED_STEP: each compared with the first, frame by frame from the outermost in
 * (adjacent words, two lines at most), never past the fewest found so far. The bound keeps
 * what a stack that parts early costs the others small. */
#define SHARED_STEP 16
static uint32_t shared_by_all(struct hp_ctx *const *a, size_t lo, size_t n, uint32_t d)
{
    const struct hp_ctx *r = a[lo];
    uint32_t m = r->depth < d + SHARED_STEP ? r->depth : d + SHARED_STEP;
    for (size_t i = lo + 1; i < lo + n && m > d; i++) {
        const struct hp_ctx *b = a[i];
        uint32_t lim = m < b->depth ? m : b->depth, k = d;
        while (k < lim && r->pcs[r->depth - 1 - k] == b->pcs[b->depth - 1 - k])
            k++;
        m = k;
    }
    return m;
}

static inline void swap_ctx(struct hp_ctx **a, size_t i, size_t j)
{
    struct hp_ctx *t = a[i];
    a[i] = a[j];
    a[j] = t;
}

/* Insertion sort of a[lo..lo+n), whose stacks share d outer frames; then the frames each
 * shares with the one before it, into lcp. */
static void sort_small(struct hp_ctx **a, uint32_t *lcp, size_t lo, size_t n, uint32_t d)
{
    for (size_t i = lo + 1; i < lo + n; i++)
        for (size_t j = i; j > lo && stack_before_from(a[j], a[j - 1], d); j--)
            swap_ctx(a, j, j - 1);
    for (size_t i = lo + 1; i < lo + n; i++)
        lcp[i] = shared_from(a[i - 1], a[i], d);
}

/* Sorts a[0..n) by frames read from the outermost in: a multikey quicksort (Bentley and
 * Sedgewick), which partitions on one frame at a time, so the outer frames that many stacks
 * share are each read about log n times in all, not at every comparison. No recursion: the two
 * smaller parts of each partition wait on a small stack (each at most half its parent, so
 * 2 log2 n entries) while the largest goes on.
 * When a partition finds every stack of a part equal at its frame, the frames after it they all
 * share are found in one pass that compares each with the first (shared_by_all).
 * It also leaves in lcp[i] how many outer frames a[i] shares with a[i - 1] (lcp[0]: 0), as
 * each partition learns that for the borders it makes: the tree is then built without reading
 * those frames again, which would cost more than the sort itself (each context's frames are
 * a cache miss away; bench/many_contexts.c sorts 131,072 deep stacks at its exit dump). */
static void sort_stacks(struct hp_ctx **a, uint32_t *lcp, size_t n)
{
    if (n)
        lcp[0] = 0;
    static struct part { /* static: under the dump lock, and off a small signal stack */
        size_t lo, n;
        uint32_t d;
    } todo[2 * 64 + 2];
    int sp = 0;
    size_t lo = 0;
    uint32_t d = 0;
    for (;;) {
        while (n > 1) {
            if (n <= 8) {
                sort_small(a, lcp, lo, n, d);
                break;
            }
            /* Median of three keys as the pivot. */
            uint64_t k0 = frame_key(a[lo], d), k1 = frame_key(a[lo + n / 2], d);
            uint64_t k2 = frame_key(a[lo + n - 1], d);
            uint64_t p = k0 < k1 ? (k1 < k2 ? k1 : (k0 < k2 ? k2 : k0))
                                 : (k0 < k2 ? k0 : (k1 < k2 ? k2 : k1));
            /* [lo, lt) below p, [lt, i) equal, [gt, lo + n) above. */
            size_t lt = lo, i = lo, gt = lo + n;
            while (i < gt) {
                uint64_t k = frame_key(a[i], d);
                if (k < p)
                    swap_ctx(a, lt++, i++);
                else if (k > p)
                    swap_ctx(a, i, --gt);
                else
                    i++;
            }
            struct part parts[3] = {{lo, lt - lo, d}, {lt, gt - lt, d + 1}, {gt, lo + n - gt, d}};
            /* The parts differ from each other at frame d. */
            if (lt > lo)
                lcp[lt] = d;
            if (gt < lo + n && gt > lo)
                lcp[gt] = d;
            if (!p) { /* all end here: the same stack, of depth d */
                for (size_t x = lt + 1; x < gt; x++)
                    lcp[x] = d;
                parts[1].n = 0;
            } else if (lt == lo && gt == lo + n) {
                /* All share frame d, and likely the frames after it (python3's stacks share
                 * their first twenty or so): those are skipped at once. Partitioned one at a
                 * time, each would be read from every stack, a cache miss apiece once there
                 * are more stacks than the cache holds lines. */
                d = shared_by_all(a, lo, n, d + 1);
                continue;
            }
            int big = parts[0].n >= parts[1].n ? 0 : 1;
            if (parts[2].n > parts[big].n)
                big = 2;
            for (int k = 0; k < 3; k++) {
                if (k == big || parts[k].n < 2)
                    continue;
                if (sp < (int)(sizeof todo / sizeof todo[0]))
                    todo[sp++] = parts[k];
                else /* cannot happen (see above); correct anyway, if slow */
                    sort_small(a, lcp, parts[k].lo, parts[k].n, parts[k].d);
            }
            lo = parts[big].lo;
            n = parts[big].n;
            d = parts[big].d;
        }
        if (!sp)
            return;
        sp--;
        lo = todo[sp].lo;
        n = todo[sp].n;
        d = todo[sp].d;
    }
}

#define TREE_DEPTH_MAX 256 /* stack_depth's largest value */

/* Encoded nodes waiting for their FRAMES record (used under the dump lock only). */
static struct {
    uint8_t buf[1 << 15];
    size_t len;
    uint32_t first, count;
    uint64_t prev_pc;
} frames;

static void frames_flush(struct writer *w)
{
    if (!frames.count)
        return;
    struct hpf_frames fh = {frames.first, frames.count};
    hp_w_record(w, HPF_REC_FRAMES, 0, sizeof fh + frames.len);
    hp_w_bytes(w, &fh, sizeof fh);
    hp_w_bytes(w, frames.buf, frames.len);
    hp_w_pad(w, frames.len, 8);
    frames.first += frames.count;
    frames.count = 0;
    frames.len = 0;
    frames.prev_pc = 0;
}

static void frames_node(struct writer *w, uint32_t id, uint32_t parent, uint64_t pc)
{
    if (sizeof frames.buf - frames.len < 20)
        frames_flush(w);
    frames.len += hpf_uleb_put(frames.buf + frames.len, id - parent);
    frames.len += hpf_uleb_put(frames.buf + frames.len, hpf_zigzag(pc - frames.prev_pc));
    frames.prev_pc = pc;
    frames.count++;
}

/* The stacks of contexts 1..n-1 (those hp_in_dump): sorted from their outermost frame in, each
 * shares with the one before it every outer frame it shares with any earlier one, so one pass
 * over them makes the tree (tests tree-*: every stack comes back exactly and the profile stays
 * small; test_dump: no node twice). The contexts to sort and the references written after the
 * tree (8 bytes a context each) are mapped for the dump and unmapped after it; without that
 * memory every stack is written in full. */
void hp_write_stacks(struct writer *w, uint32_t n)
{
    size_t cap = n, bytes = (2 * cap * sizeof(struct hp_ctx *) + 4095) & ~(size_t)4095;
    void *map = cap ? mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                    : MAP_FAILED;
    struct hp_ctx **a = map == MAP_FAILED ? NULL : map, **tmp = a ? a + cap : NULL;
    size_t m = 0;
    int deep = 0;
    for (uint32_t id = 1; id < n && id < hp_prof.max_id; id++) {
        struct hp_ctx *c = __atomic_load_n(&hp_prof.by_id[id], __ATOMIC_ACQUIRE);
        if (!hp_in_dump(c))
            continue;
        if (!a) {
            write_stack_record(w, c);
            continue;
        }
        deep |= c->depth > TREE_DEPTH_MAX;
        a[m++] = c;
    }
    if (!a)
        return;
    if (deep) { /* cannot happen (stack_depth <= 256), but the path below has no room */
        for (size_t i = 0; i < m; i++)
            write_stack_record(w, a[i]);
        munmap(map, bytes);
        return;
    }
    uint32_t *lcp = (uint32_t *)tmp;
    sort_stacks(a, lcp, m);
    /* Each context's reference replaces its pointer once read: a ref is as large as one. */
    struct hpf_stack_ref *refs = (struct hpf_stack_ref *)a;
    _Static_assert(sizeof(struct hpf_stack_ref) <= sizeof(struct hp_ctx *), "a ref fits a slot");
    static uint32_t path[TREE_DEPTH_MAX]; /* node of each frame of the previous stack, outermost first */
    uint32_t next = 1;
    frames.len = frames.count = 0;
    frames.first = 1;
    frames.prev_pc = 0;
    for (size_t i = 0; i < m; i++) {
        const struct hp_ctx *c = a[i];
        uint32_t k = lcp[i];
        for (uint32_t j = k; j < c->depth; j++) {
            path[j] = next;
            frames_node(w, next, j ? path[j - 1] : 0, (uint64_t)c->pcs[c->depth - 1 - j]);
            next++;
        }
        struct hpf_stack_ref r = {c->id, c->depth ? path[c->depth - 1] : 0};
        hp_memcpy(&refs[i], &r, sizeof r); /* over a[i], whose pointer was read above */
    }
    frames_flush(w);
    struct hpf_stack_refs rh = {(uint32_t)m, 0};
    hp_w_record(w, HPF_REC_STACK_REFS, 0, sizeof rh + m * sizeof refs[0]);
    hp_w_bytes(w, &rh, sizeof rh);
    hp_w_bytes(w, refs, m * sizeof refs[0]);
    munmap(map, bytes);
}

#ifdef HP_UNIT_TEST
/* For test_dump: the stack records of contexts 1..n-1 as a dump writes them, to fd. */
void hp_test_write_stacks(int fd, uint32_t n);
void hp_test_write_stacks(int fd, uint32_t n)
{
    struct writer *w = &hp_ds.wr;
    w->fd = fd;
    hp_w_reset(w);
    hp_write_stacks(w, n);
    hp_w_flush(w);
}
#endif
