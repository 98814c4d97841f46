/* shim/format: the profile file's layout (.hpf) and the Heap Info Block arithmetic, shared by
 * the shim, which writes profiles, and heapprof-report, which reads and merges them: the only
 * shim code the report tool includes. docs/FORMAT.md is the prose description of this file. */
#ifndef HPF_FORMAT_H
#define HPF_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* On-disk layout of heapprof profiles (.hpf): shared by the shim, which writes them, and
 * heapprof-report, which reads them. docs/FORMAT.md is the prose description of this file. */


/* Everything is little-endian, every record starts 8-byte aligned. */
#define HPF_MAGIC "HEAPPROF"
/* Version 2 added the frame tree (FRAMES and STACK_REFS records); a version 2 reader still
 * reads version 1 files, which give every stack in full (STACK records). */
#define HPF_VERSION 2u
#define HPF_VERSION_MIN 1u
#define HPF_ENDIAN_CHECK 0x01020304u

struct hpf_file_header {
    char magic[8];         /* "HEAPPROF", no NUL */
    uint32_t version;      /* HPF_VERSION */
    uint32_t header_size;  /* sizeof(struct hpf_file_header) */
    uint32_t endian_check; /* HPF_ENDIAN_CHECK as written by the producer */
    uint32_t flags;        /* 0 */
    uint64_t reserved;     /* 0 */
};

/* Each record: this header, then `size` payload bytes, then zero padding up to a multiple of 8. */
struct hpf_record_header {
    uint32_t type;  /* enum hpf_record_type */
    uint32_t flags; /* per type; 0 unless stated */
    uint64_t size;  /* payload bytes, without the padding */
};

enum hpf_record_type {
    HPF_REC_PROCESS = 1, /* struct hpf_process + strings */
    HPF_REC_MODULE = 2,  /* struct hpf_module + segments + build id + path */
    HPF_REC_STACK = 3,   /* struct hpf_stack + uint64_t pcs[depth] */
    HPF_REC_HIB = 4,     /* struct hpf_hib */
    HPF_REC_LIVE = 5,    /* struct hpf_live */
    HPF_REC_SUMMARY = 6, /* struct hpf_summary */
    HPF_REC_PAD = 7,     /* zero bytes, ignored: lengthens a profile rewritten in place */
    HPF_REC_FRAMES = 8,  /* struct hpf_frames + encoded nodes of the frame tree (version 2) */
    HPF_REC_STACK_REFS = 9, /* struct hpf_stack_refs + struct hpf_stack_ref[count] (version 2) */
    HPF_REC_PACKED = 10, /* struct hpf_packed + HIB or LIVE records, field by field (version 2) */
    HPF_REC_ACCESS = 11, /* struct hpf_access + struct hpf_access_module[nmodules] */
    HPF_REC_ACCESS_HIST = 12, /* struct hpf_access_hist + uint64_t bins[nbins] */
    HPF_REC_END = 0x7fff /* struct hpf_end: last record of a complete profile */
};

/* A string inside a payload: uint32_t length, then the bytes (no NUL), then zero padding to a
 * multiple of 4 so the next length stays aligned. */

enum hpf_dump_reason {
    HPF_DUMP_EXIT = 1,     /* normal process exit (after other destructors) */
    HPF_DUMP_API = 2,      /* heapprof_dump() */
    HPF_DUMP_SIGNAL = 3,   /* dump_signal= */
    HPF_DUMP_INTERVAL = 4, /* dump_interval_ms= */
    HPF_DUMP_KILLED = 5,   /* a signal ended the process (hpf_summary.killed_by says which) */
    HPF_DUMP_CREDENTIALS = 6, /* provisional, made before the process changed its user or root
                               * directory; its exit profile replaces it */
    HPF_DUMP_PEAK = 7,        /* the heap reached a new peak (dump_peak_growth); <output>.peak */
};

enum hpf_unwinder { HPF_UNWIND_FP = 1, HPF_UNWIND_LIBUNWIND = 2, HPF_UNWIND_CFI = 3 };

struct hpf_process {
    uint32_t pid;
    uint32_t ppid;
    uint64_t start_unix_ns;  /* wall clock when the shim initialised */
    uint64_t dump_unix_ns;   /* wall clock when this profile was written */
    uint64_t dump_ms;        /* ms since start (same clock as every *_ms field) */
    uint32_t dump_seq;       /* 0 for the first dump of this process, then 1, 2, ... */
    uint32_t dump_reason;    /* enum hpf_dump_reason */
    uint32_t unwinder;       /* enum hpf_unwinder */
    uint32_t stack_depth;    /* maximum frames kept per stack */
    uint32_t forked_from;    /* parent's pid when this process was forked from a profiled one */
    uint32_t argc;           /* number of argv strings that follow */
    /* then strings: backend name, executable path, argv[0..argc-1], and the object the
     * backend's malloc is in (absent in profiles of older shims: readers take it as unknown) */
};

/* One loaded ELF object (or other executable mapping). Addresses are run-time addresses;
 * subtract load_bias to get the object's ELF virtual addresses (what DWARF uses). */
struct hpf_module {
    uint64_t load_bias;
    uint32_t nsegs;        /* struct hpf_segment entries that follow */
    uint32_t build_id_len; /* bytes of GNU build id after the segments (0 if none) */
    /* then: struct hpf_segment segs[nsegs]; uint8_t build_id[build_id_len] padded to 4;
     * then the path as a string (may be empty or a pseudo name such as "[vdso]") */
};

struct hpf_segment {
    uint64_t start;  /* run-time start address */
    uint64_t end;    /* run-time end address (exclusive) */
    uint64_t offset; /* file offset of start */
    uint32_t prot;   /* 1 read, 2 write, 4 exec */
    uint32_t pad;
};

/* A call stack, innermost first. pcs[0] is the return address into the function that called the
 * allocator entry point (the allocation site); frames of the shim are never included. Every pc is
 * a return address: symbolise pc - 1. */
struct hpf_stack {
    uint32_t context_id; /* > 0; 0 is reserved for "no context" (internal/re-entrant) */
    uint32_t depth;
    /* then uint64_t pcs[depth] */
};

/* The frame tree (version 2): the stacks of a profile share their outer frames, so each is
 * written as a path in a tree whose nodes are (frame, parent). Node 0 is the root (the empty
 * stack); nodes 1, 2, ... are numbered in the order written, across all FRAMES records, and a
 * node's parent always has a smaller number. A context's stack is its node's pc, then its
 * parent's, and so on up to the root: innermost first, as in STACK records. In a FRAMES record,
 * after struct hpf_frames come `count` nodes, each two unsigned LEB128 numbers: the node's
 * number minus its parent's (at least 1), then its pc minus the pc of the node before it in the
 * same record (the first node: minus 0), as a 64-bit two's complement difference, zigzag
 * coded ((d << 1) ^ (d >> 63)). The payload ends with the last node. */
struct hpf_frames {
    uint32_t first_node; /* the number of the record's first node: 1 + nodes written before */
    uint32_t count;      /* nodes in this record */
};

/* Which node of the frame tree is each context's stack (the innermost frame). */
struct hpf_stack_ref {
    uint32_t context_id; /* > 0 */
    uint32_t node;       /* 0: an empty stack */
};

struct hpf_stack_refs {
    uint32_t count; /* struct hpf_stack_ref entries that follow */
    uint32_t pad;
};

/* Zigzag coding of a signed 64-bit difference, so small negative differences stay short. */
static inline uint64_t hpf_zigzag(uint64_t d) { return (d << 1) ^ (uint64_t)((int64_t)d >> 63); }
static inline uint64_t hpf_unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

/* Writes v as unsigned LEB128 at p (at most 10 bytes); returns the bytes written. */
static inline unsigned hpf_uleb_put(uint8_t *p, uint64_t v)
{
    unsigned n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Heap Info Block: what the blocks of one allocation context did. Several HIB records may exist
 * for one context (entries evicted from the shim's table, then the final one): a reader merges
 * them with hpf_hib_merge semantics (docs/FORMAT.md). flags: HPF_HIB_EVICTED for records written
 * when the entry was evicted; HPF_HIB_LIVE_FOLDED when blocks still live at the dump were folded
 * in (lifetime measured up to dump_ms). */
#define HPF_HIB_EVICTED 1u
#define HPF_HIB_LIVE_FOLDED 2u

struct hpf_hib {
    uint32_t context_id;
    uint32_t flags;
    uint64_t alloc_count;
    uint64_t total_size;
    uint64_t min_size;
    uint64_t max_size;
    uint64_t total_lifetime_ms;
    uint64_t min_lifetime_ms;
    uint64_t max_lifetime_ms;
    uint64_t total_access_count;
    uint64_t min_access_count;
    uint64_t max_access_count;
    uint64_t total_percent_utilized;
    uint32_t min_percent_utilized;
    uint32_t max_percent_utilized;
    uint64_t alloc_timestamp_ms;   /* allocation time of the last block merged */
    uint64_t dealloc_timestamp_ms; /* deallocation time of the last block merged */
    uint32_t alloc_cpu_id;         /* cpu of the last allocation merged */
    uint32_t dealloc_cpu_id;       /* cpu of the last deallocation merged */
    uint32_t num_migrated_cpu;
    uint32_t num_lifetime_overlaps;
    uint32_t num_same_alloc_cpu;
    uint32_t num_same_dealloc_cpu;
    /* Access profiling, writes only (callback and gcc builds; 0 for inline ones, which count
     * loads and stores together): reads = access - writes. */
    uint64_t total_write_count;
    uint64_t min_write_count;
    uint64_t max_write_count;
};

/* LIVE flags: what kind of blocks a context holds. */
#define HPF_LIVE_POOL 1u /* objects of a program's own pool, reported through heapprof.h's
                          * heapprof_pool_* calls (no shim header; kept by address) */

/* Live-heap state of one context at the time of the dump (one record per context that ever
 * allocated; never evicted). Peak fields: see docs/FORMAT.md for how exact they are. */
struct hpf_live {
    uint32_t context_id;
    uint32_t flags;           /* HPF_LIVE_*; 0 in profiles written before flags existed */
    uint64_t allocs;          /* every allocation made from this context, freed or not */
    uint64_t bytes;           /* requested bytes of those allocations */
    uint64_t live_count;      /* blocks still allocated at the dump */
    uint64_t live_size;       /* their requested bytes */
    uint64_t max_live_count;  /* this context's own maximum of live blocks */
    uint64_t max_live_size;   /* this context's own maximum of live bytes */
    uint64_t peak_live_count; /* live blocks at the process's global peak */
    uint64_t peak_live_size;  /* live bytes at the process's global peak */
    uint64_t first_alloc_ms;  /* time of this context's first allocation */
    uint64_t last_alloc_ms;   /* time of its last allocation */
};

/* PACKED (version 2): many HIB or LIVE records in one, each field a LEB128 number, as most
 * are small or zero. After struct hpf_packed come `count` entries of `nfields` numbers: the
 * fields of the record type's payload in the order of hpf_hib_fields / hpf_live_fields (the
 * struct's fields without padding), each as an unsigned value of its width. A reader ignores
 * numbers past the fields it knows and takes 0 for fields a shorter entry lacks. */
struct hpf_packed {
    uint32_t type;    /* HPF_REC_HIB or HPF_REC_LIVE */
    uint32_t count;   /* entries */
    uint32_t nfields; /* numbers per entry */
    uint32_t pad;
};

struct hpf_field {
    uint16_t offset, size; /* in the record's struct; size 4 or 8 */
};

#define HPF_FIELD(t, f) {offsetof(struct t, f), sizeof(((struct t *)0)->f)}
static const struct hpf_field hpf_hib_fields[] __attribute__((unused)) = {
    HPF_FIELD(hpf_hib, context_id),
    HPF_FIELD(hpf_hib, flags),
    HPF_FIELD(hpf_hib, alloc_count),
    HPF_FIELD(hpf_hib, total_size),
    HPF_FIELD(hpf_hib, min_size),
    HPF_FIELD(hpf_hib, max_size),
    HPF_FIELD(hpf_hib, total_lifetime_ms),
    HPF_FIELD(hpf_hib, min_lifetime_ms),
    HPF_FIELD(hpf_hib, max_lifetime_ms),
    HPF_FIELD(hpf_hib, total_access_count),
    HPF_FIELD(hpf_hib, min_access_count),
    HPF_FIELD(hpf_hib, max_access_count),
    HPF_FIELD(hpf_hib, total_percent_utilized),
    HPF_FIELD(hpf_hib, min_percent_utilized),
    HPF_FIELD(hpf_hib, max_percent_utilized),
    HPF_FIELD(hpf_hib, alloc_timestamp_ms),
    HPF_FIELD(hpf_hib, dealloc_timestamp_ms),
    HPF_FIELD(hpf_hib, alloc_cpu_id),
    HPF_FIELD(hpf_hib, dealloc_cpu_id),
    HPF_FIELD(hpf_hib, num_migrated_cpu),
    HPF_FIELD(hpf_hib, num_lifetime_overlaps),
    HPF_FIELD(hpf_hib, num_same_alloc_cpu),
    HPF_FIELD(hpf_hib, num_same_dealloc_cpu),
    HPF_FIELD(hpf_hib, total_write_count),
    HPF_FIELD(hpf_hib, min_write_count),
    HPF_FIELD(hpf_hib, max_write_count),
};
static const struct hpf_field hpf_live_fields[] __attribute__((unused)) = {
    HPF_FIELD(hpf_live, context_id),
    HPF_FIELD(hpf_live, allocs),
    HPF_FIELD(hpf_live, bytes),
    HPF_FIELD(hpf_live, live_count),
    HPF_FIELD(hpf_live, live_size),
    HPF_FIELD(hpf_live, max_live_count),
    HPF_FIELD(hpf_live, max_live_size),
    HPF_FIELD(hpf_live, peak_live_count),
    HPF_FIELD(hpf_live, peak_live_size),
    HPF_FIELD(hpf_live, first_alloc_ms),
    HPF_FIELD(hpf_live, last_alloc_ms),
    HPF_FIELD(hpf_live, flags), /* last: added after the others (a packed entry's 12th number) */
};
#define HPF_HIB_NFIELDS (sizeof hpf_hib_fields / sizeof hpf_hib_fields[0])
#define HPF_LIVE_NFIELDS (sizeof hpf_live_fields / sizeof hpf_live_fields[0])
/* Every byte of the structs is a field: nothing is left out of an entry. */
_Static_assert(sizeof(struct hpf_hib) == 168, "HIB fields");
/* HIB records of profiles written before the write counts existed are this long. */
#define HPF_HIB_MIN_SIZE 144u
_Static_assert(offsetof(struct hpf_hib, total_write_count) == HPF_HIB_MIN_SIZE,
               "the write counts follow the fields of the first HIB layout");
_Static_assert(sizeof(struct hpf_live) == 88, "LIVE fields");

struct hpf_summary {
    uint64_t total_allocs;      /* allocations served by the profiling path */
    uint64_t total_frees;
    uint64_t total_bytes;       /* requested bytes of all allocations */
    uint64_t live_count;        /* at the dump */
    uint64_t live_size;
    uint64_t peak_live_size;    /* global maximum of live requested bytes */
    uint64_t peak_live_count;   /* live blocks at that moment */
    uint64_t peak_ms;           /* when it was reached (ms since start) */
    uint64_t peak_slack_bytes;  /* bound on the error of peak_* (0: exact) */
    uint64_t contexts;          /* distinct contexts in the stack depot */
    uint64_t unprofiled_allocs; /* allocations with no context (re-entrant, depot full) */
    uint64_t evicted_hibs;      /* HIB records written on eviction */
    uint64_t foreign_frees;     /* frees of pointers the shim did not allocate */
    uint64_t double_frees;
    uint64_t bootstrap_bytes;   /* bytes served by the bootstrap arena */
    uint64_t metadata_bytes;    /* metadata arena in use */
    uint64_t metadata_budget;
    uint64_t truncated_stacks;  /* stacks cut at stack_depth */
    /* Added later (readers zero what a shorter record lacks): */
    uint32_t killed_by;         /* HPF_DUMP_KILLED: the signal's number, else 0 */
    uint32_t reserved;
    uint64_t metadata_resident; /* of metadata_bytes, how much was in memory (0: not known) */
    /* Access profiling (0 when no instrumented module attached): */
    uint64_t shadow_resident;   /* bytes of the access shadow in memory (0 also: not known) */
    uint64_t shadow_registry_bytes; /* the live-block registry's tables (not in metadata_bytes) */
    /* The pool API (heapprof.h): frees and resizes of addresses no heapprof_pool_alloc
     * reported (or already freed), and reports dropped (no metadata, a signal handler that
     * interrupted a report on its own thread). */
    uint64_t pool_unknown_frees;
    uint64_t pool_dropped;
    /* An allocator that could not be patched completely, profiled without headers, by address
     * (headerless = 1): blocks freed through paths past its patched entry points, counted
     * when it handed their address out again (their lifetime ends there). */
    uint64_t headerless;
    uint64_t headerless_unseen_frees;
};
/* SUMMARY records of profiles written before killed_by existed are this long. */
#define HPF_SUMMARY_MIN_SIZE 144u
_Static_assert(offsetof(struct hpf_summary, killed_by) == HPF_SUMMARY_MIN_SIZE,
               "killed_by follows the fields of the first SUMMARY layout");

/* ACCESS: once per profile when an instrumented module attached to the shim's shadow. */
struct hpf_access {
    uint32_t modes;     /* OR of the modes of every module attached (HPF_ACCESS_*) */
    uint32_t granule;   /* bytes per shadow counter: 64 */
    uint32_t hist_bins; /* blocks up to this many granules have a histogram */
    uint32_t nmodules;  /* struct hpf_access_module entries that follow */
};
/* Mode bits: the values of enum hp_attach_mode and HP_MODE_ABI_UNKNOWN (shadow/attach.h). */
#define HPF_ACCESS_INLINE 1u      /* clang -fmemory-profile inline counters: no reads/writes */
#define HPF_ACCESS_CALLBACKS 2u   /* clang -memprof-use-callbacks: writes counted apart */
#define HPF_ACCESS_GCC 4u         /* gcc's asan callbacks: writes counted apart */
#define HPF_ACCESS_ABI_UNKNOWN 0x100u /* a module of an unknown MemProf ABI: counts unreliable */

struct hpf_access_module {
    uint64_t addr; /* an address inside the module (in one of its MODULE record's segments) */
    uint32_t mode; /* its HPF_ACCESS_* bits */
    uint32_t pad;
};
/* After the modules (added later: readers of the first layout skip it, and a record without
 * it has no per-word histograms): the per-word histograms' parameters. */
struct hpf_access_words {
    uint32_t word;        /* bytes per word counter: 8; 0 when no word plane was in use */
    uint32_t max_size;    /* blocks of up to this many bytes have per-word histograms */
    uint32_t counter_max; /* accesses a word counter holds per block before saturating: 255 */
    uint32_t pad;
};

/* ACCESS_HIST: one context's access histogram; a context may have several records, which
 * readers add bin by bin. Bin i counts the accesses to the granule i of its blocks, granule 0
 * being the one that holds a block's first byte. */
#define HPF_HIST_GRANULE 1u /* a bin per 64-byte granule */
#define HPF_HIST_WORD 2u    /* a bin per 8-byte word, word 0 the block's first 8 bytes */
/* Bin i: how many blocks' word i saturated (counter_max accesses); their accesses to it are
 * more than the HPF_HIST_WORD bin i adds. Written only for contexts with such blocks. */
#define HPF_HIST_WORD_SATURATED 3u
struct hpf_access_hist {
    uint32_t context_id;
    uint32_t kind;  /* HPF_HIST_* */
    uint32_t nbins; /* uint64_t bins that follow */
    uint32_t pad;
};

struct hpf_end {
    uint64_t records; /* number of records before this one */
};

/* ---- Heap Info Block arithmetic (hib.c): adding one freed block to a HIB and merging two
 * partial HIBs, with the RFC's rules for min/max, cpu and lifetime-overlap counters. Pure
 * functions. ---- */
/* Heap Info Block arithmetic: adding one freed block to a HIB and merging two partial HIBs,
 * with the RFC's rules for min/max, cpu and lifetime-overlap counters. Pure functions. */



struct hp_block_event {
    uint64_t size;
    uint32_t alloc_ms, dealloc_ms;
    uint32_t alloc_cpu, dealloc_cpu;
    uint64_t access_count;   /* 0 unless an instrumented module counts into the shadow */
    uint32_t percent_utilized;
    uint64_t write_count;    /* of access_count, the writes (0 where not told apart) */
};

#define HP_HIB_UNLIKELY(x) __builtin_expect(!!(x), 0)

static inline uint64_t hp_min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t hp_max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* The part of adding a block that every block has: size, lifetime, cpus, times, counts. Last,
 * after the access part (which looks at alloc_count too). A block's lifetime is
 * dealloc - alloc in the shim's ms clock, which wraps after 49 days: unsigned subtraction keeps
 * lifetimes right across the wrap. */
static inline void hp_hib_add_base(struct hpf_hib *h, const struct hp_block_event *e)
{
    uint64_t life = (uint32_t)(e->dealloc_ms - e->alloc_ms);
    if (h->alloc_count == 0) {
        h->min_size = h->max_size = e->size;
        h->min_lifetime_ms = h->max_lifetime_ms = life;
        h->num_migrated_cpu = e->alloc_cpu != e->dealloc_cpu;
    } else {
        h->min_size = hp_min64(h->min_size, e->size);
        h->max_size = hp_max64(h->max_size, e->size);
        h->min_lifetime_ms = hp_min64(h->min_lifetime_ms, life);
        h->max_lifetime_ms = hp_max64(h->max_lifetime_ms, life);
        h->num_migrated_cpu += e->alloc_cpu != e->dealloc_cpu;
        /* Blocks are added in deallocation order: this one overlaps the previous one's
         * lifetime when it was allocated before that one was freed. */
        h->num_lifetime_overlaps += e->alloc_ms < h->dealloc_timestamp_ms;
        h->num_same_alloc_cpu += e->alloc_cpu == h->alloc_cpu_id;
        h->num_same_dealloc_cpu += e->dealloc_cpu == h->dealloc_cpu_id;
    }
    h->alloc_count++;
    h->total_size += e->size;
    h->total_lifetime_ms += life;
    h->alloc_timestamp_ms = e->alloc_ms;
    h->dealloc_timestamp_ms = e->dealloc_ms;
    h->alloc_cpu_id = e->alloc_cpu;
    h->dealloc_cpu_id = e->dealloc_cpu;
}

/* Add one block's life to h (h->context_id is left alone). Inline: it is on every free. */
static inline void hp_hib_add(struct hpf_hib *h, const struct hp_block_event *e)
{
    if (h->alloc_count == 0) {
        h->min_access_count = h->max_access_count = e->access_count;
        h->min_write_count = h->max_write_count = e->write_count;
        h->min_percent_utilized = h->max_percent_utilized = e->percent_utilized;
    } else {
        h->min_access_count = hp_min64(h->min_access_count, e->access_count);
        h->max_access_count = hp_max64(h->max_access_count, e->access_count);
        h->min_write_count = hp_min64(h->min_write_count, e->write_count);
        h->max_write_count = hp_max64(h->max_write_count, e->write_count);
        if (e->percent_utilized < h->min_percent_utilized)
            h->min_percent_utilized = e->percent_utilized;
        if (e->percent_utilized > h->max_percent_utilized)
            h->max_percent_utilized = e->percent_utilized;
    }
    h->total_access_count += e->access_count;
    h->total_write_count += e->write_count;
    h->total_percent_utilized += e->percent_utilized;
    hp_hib_add_base(h, e);
}

/* A thread's running HIB of one context while access profiling is off (every block without
 * access data): only the fields such blocks move, laid out so that the four counters can share
 * a cache line with what comes before them and the rest fills the next one (profile.c puts it
 * at offset 48 of a 64-byte aligned entry; 76 bytes used). Lifetimes fit 32 bits (the ms clock
 * is 32 bits) and cpu ids 16 (as in the block header). hp_hib_run_to turns it into the
 * hpf_hib that hp_hib_add would have built from the same blocks. */
struct hp_hib_run {
    uint32_t num_migrated_cpu, num_lifetime_overlaps, num_same_alloc_cpu, num_same_dealloc_cpu;
    uint64_t alloc_count, total_size, total_lifetime_ms, min_size, max_size;
    uint32_t min_lifetime_ms, max_lifetime_ms, alloc_timestamp_ms, dealloc_timestamp_ms;
    uint16_t alloc_cpu_id, dealloc_cpu_id;
};

static inline void hp_hib_run_reset(struct hp_hib_run *r)
{
    *r = (struct hp_hib_run){0};
    r->min_size = UINT64_MAX;
    r->min_lifetime_ms = UINT32_MAX;
}

/* Add one freed block (no access data). Minima start at their largest value, so the first
 * block needs no case of its own but for the counters that compare with the previous block. */
static inline void hp_hib_run_add(struct hp_hib_run *r, uint64_t size, uint32_t alloc_ms,
                                  uint32_t dealloc_ms, uint32_t alloc_cpu, uint32_t dealloc_cpu)
{
    uint32_t life = dealloc_ms - alloc_ms;
    uint16_t acpu = (uint16_t)alloc_cpu, dcpu = (uint16_t)dealloc_cpu;
    uint32_t later = r->alloc_count != 0;
    r->min_size = hp_min64(r->min_size, size);
    r->max_size = hp_max64(r->max_size, size);
    r->min_lifetime_ms = life < r->min_lifetime_ms ? life : r->min_lifetime_ms;
    r->max_lifetime_ms = life > r->max_lifetime_ms ? life : r->max_lifetime_ms;
    r->num_migrated_cpu += acpu != dcpu;
    /* Blocks come in deallocation order (see hp_hib_add_base). */
    r->num_lifetime_overlaps += later & (alloc_ms < r->dealloc_timestamp_ms);
    r->num_same_alloc_cpu += later & (acpu == r->alloc_cpu_id);
    r->num_same_dealloc_cpu += later & (dcpu == r->dealloc_cpu_id);
    r->alloc_count++;
    r->total_size += size;
    r->total_lifetime_ms += life;
    r->alloc_timestamp_ms = alloc_ms;
    r->dealloc_timestamp_ms = dealloc_ms;
    r->alloc_cpu_id = acpu;
    r->dealloc_cpu_id = dcpu;
}

/* The hpf_hib of r's blocks (context_id and flags 0; all zero when r has none). */
static inline void hp_hib_run_to(const struct hp_hib_run *r, struct hpf_hib *h)
{
    *h = (struct hpf_hib){0};
    if (r->alloc_count == 0)
        return;
    h->alloc_count = r->alloc_count;
    h->total_size = r->total_size;
    h->min_size = r->min_size;
    h->max_size = r->max_size;
    h->total_lifetime_ms = r->total_lifetime_ms;
    h->min_lifetime_ms = r->min_lifetime_ms;
    h->max_lifetime_ms = r->max_lifetime_ms;
    h->alloc_timestamp_ms = r->alloc_timestamp_ms;
    h->dealloc_timestamp_ms = r->dealloc_timestamp_ms;
    h->alloc_cpu_id = r->alloc_cpu_id;
    h->dealloc_cpu_id = r->dealloc_cpu_id;
    h->num_migrated_cpu = r->num_migrated_cpu;
    h->num_lifetime_overlaps = r->num_lifetime_overlaps;
    h->num_same_alloc_cpu = r->num_same_alloc_cpu;
    h->num_same_dealloc_cpu = r->num_same_dealloc_cpu;
}

/* Merge src (which happened after dst, or concurrently) into dst. */
void hp_hib_merge(struct hpf_hib *dst, const struct hpf_hib *src);

#endif
