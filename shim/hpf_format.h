/* On-disk layout of heapprof profiles (.hpf): shared by the shim, which writes them, and
 * heapprof-report, which reads them. docs/FORMAT.md is the prose description of this file. */
#ifndef HPF_FORMAT_H
#define HPF_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Everything is little-endian, every record starts 8-byte aligned. */
#define HPF_MAGIC "HEAPPROF"
#define HPF_VERSION 1u
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
    /* then strings: backend name, executable path, argv[0..argc-1] */
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
};

/* Live-heap state of one context at the time of the dump (one record per context that ever
 * allocated; never evicted). Peak fields: see docs/FORMAT.md for how exact they are. */
struct hpf_live {
    uint32_t context_id;
    uint32_t pad;
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
};
/* SUMMARY records of profiles written before killed_by existed are this long. */
#define HPF_SUMMARY_MIN_SIZE 144u
_Static_assert(offsetof(struct hpf_summary, killed_by) == HPF_SUMMARY_MIN_SIZE,
               "killed_by follows the fields of the first SUMMARY layout");

struct hpf_end {
    uint64_t records; /* number of records before this one */
};

#endif
