/* Option parsing and the top-level flow of heapprof-report: load every profile first (so a bad
 * one fails the run before any output file is touched), then write them all. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hr_cli.h"
#include "hr_merge.h"
#include "hr_metric.h"
#include "hr_output.h"
#include "hr_profile.h"
#include "hr_symbolize.h"

enum hr_format {
    HR_FORMAT_TEXT, HR_FORMAT_JSON, HR_FORMAT_MEMPROF, HR_FORMAT_PPROF, HR_FORMAT_DHAT,
    HR_FORMAT_FOLDED, HR_FORMAT_HTML, HR_FORMAT_COUNT_
};
static const char *const hr_format_names[HR_FORMAT_COUNT_] = {
    [HR_FORMAT_TEXT] = "text",   [HR_FORMAT_JSON] = "json",     [HR_FORMAT_MEMPROF] = "memprof",
    [HR_FORMAT_PPROF] = "pprof", [HR_FORMAT_DHAT] = "dhat",     [HR_FORMAT_FOLDED] = "folded",
    [HR_FORMAT_HTML] = "html",
};

static const char hr_usage[] =
    "usage: heapprof-report [OPTIONS] PROFILE.hpf...\n"
    "Print heapprof profiles as a readable report, as JSON, or for other viewers.\n"
    "\n"
    "  -f, --format FORMAT     output format: text (default), json, pprof (gzipped\n"
    "                          profile.proto for go tool pprof), dhat (for DHAT's viewer),\n"
    "                          memprof (an LLVM MemProf raw profile for llvm-profdata 16),\n"
    "                          folded (stacks for flamegraph.pl, speedscope), html (one\n"
    "                          self-contained page with a flame graph); pprof and memprof\n"
    "                          are binary (use -o)\n"
    "  -o, --output FILE       write to FILE instead of standard output\n"
    "  -n, --top N             show the first N contexts of each profile (0 = all; default:\n"
    "                          20 in text, all in JSON)\n"
    "  -s, --sort KEY          context order, largest first: total_size (default),\n"
    "                          alloc_count, live_size, peak_live_size, max_live_size,\n"
    "                          total_lifetime_ms, total_access_count, access_density\n"
    "  -S, --sections LIST     text: the sections to print, comma-separated, in this order:\n"
    "                          bytes, count, peak, leaked, temporary, sizes, contexts,\n"
    "                          access; or all (default), none\n"
    "  -M, --metric NAME       figure of folded lines and of the HTML flame graph:\n"
    "                          alloc_bytes (bytes, default), alloc_count (count),\n"
    "                          inuse_bytes (leaked), inuse_count, peak_bytes (peak),\n"
    "                          peak_count, accesses, lifetime_ms\n"
    "  -m, --merge             text and JSON: merge the profiles into one (the other\n"
    "                          formats always do)\n"
    "  -d, --diff BASE         show PROFILE... (merged) minus BASE: what grew, what shrank\n"
    "  -h, --help              show this help and exit\n"
    "  -V, --version           show the version and exit\n"
    "\n"
    "With several profiles and no --merge, text output has one section per profile and JSON\n"
    "output is an array of objects in argument order. Merging adds different processes and\n"
    "takes only the latest dump of each process (docs/REPORT.md). Exit status: 0 ok, 1 bad\n"
    "profile or write error, 2 bad usage.\n";

static int hr_usage_error(FILE *err, const char *what, const char *arg)
{
    fprintf(err, "heapprof-report: %s '%s' (try --help)\n", what, arg);
    return HR_EXIT_USAGE;
}

static int hr_parse_top(const char *s, size_t *top)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
        return -1;
    *top = (size_t)v;
    return 0;
}

/* The one line a profile cut short gets: what was read of it, and what the cut took. tmp: a
 * numbered dump left as NAME.tmp (hr_load_all). */
static void hr_warn_cut(FILE *err, const char *path, const struct hr_profile *p, int tmp)
{
    const struct hr_cut *c = &p->cut;
    fprintf(err, "heapprof-report: warning: %s: cut short at byte %llu (no END record): read %llu "
            "complete records, %zu contexts", path, (unsigned long long)c->size,
            (unsigned long long)c->records, p->ncontexts);
    if (c->dropped_contexts)
        fprintf(err, " (%llu more left out: the cut took some of their records)",
                (unsigned long long)c->dropped_contexts);
    if (c->summary_rebuilt)
        fputs(", no summary (totals are the contexts' sums, no peak)", err);
    fputs(tmp ? "; an unfinished dump: its process exec'd or was killed while writing it\n"
              : "; the process was probably killed while writing it\n", err);
}

/* Loads every profile, printing one line per bad one. Returns how many failed. */
static int hr_load_all(struct hr_profile *profiles, char **paths, int n, FILE *err)
{
    int failed = 0;
    for (int i = 0; i < n; i++) {
        char msg[HR_ERR_MAX];
        /* The shim writes numbered dumps as NAME.tmp and renames them when whole: a .tmp that
         * remains is one its process never finished. */
        size_t len = strlen(paths[i]);
        int tmp = len > 4 && strcmp(paths[i] + len - 4, ".tmp") == 0;
        if (hr_profile_load(&profiles[i], paths[i], msg)) {
            fprintf(err, "heapprof-report: %s: %s%s\n", paths[i],
                    tmp ? "an unfinished dump (its process exec'd or was killed while writing it): " : "",
                    msg);
            failed++;
        } else if (profiles[i].cut.cut) {
            hr_warn_cut(err, paths[i], &profiles[i], tmp);
        }
    }
    return failed;
}

/* Formats that take one profile: several are merged for them, always. */
static int hr_format_merges(enum hr_format format)
{
    return format != HR_FORMAT_TEXT && format != HR_FORMAT_JSON;
}

/* inputs: every profile loaded (the html page's timeline draws their dumps). */
static int hr_write_all(FILE *out, struct hr_profile *const *v, size_t n, enum hr_format format,
                        const struct hr_output_opts *opts, struct hr_profile *const *inputs,
                        size_t ninputs)
{
    struct hr_output_opts o = *opts;
    o.inputs = inputs;
    o.ninputs = ninputs;
    switch (format) {
    case HR_FORMAT_JSON: return hr_write_json(out, v, n, &o);
    case HR_FORMAT_MEMPROF: return hr_write_memprof(out, v[0], &o);
    case HR_FORMAT_PPROF: return hr_write_pprof(out, v[0], &o);
    case HR_FORMAT_DHAT: return hr_write_dhat(out, v[0], &o);
    case HR_FORMAT_FOLDED: return hr_write_folded(out, v[0], &o);
    case HR_FORMAT_HTML: return hr_write_html(out, v[0], &o);
    case HR_FORMAT_TEXT:
    case HR_FORMAT_COUNT_: break;
    }
    return hr_write_text(out, v, n, &o);
}

/* What the command line asks for. */
struct hr_args {
    enum hr_format format;
    const char *output;
    struct hr_output_opts opts;
    int merge;             /* --merge */
    const char *diff_base; /* --diff BASE */
};

/* Parse the options into a; 0 to go on and write the profiles from argv[optind], else the exit
 * status (help and version are printed here). */
static int hr_parse_args(int argc, char **argv, struct hr_args *a, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
        {"top", required_argument, NULL, 'n'},    {"sort", required_argument, NULL, 's'},
        {"merge", no_argument, NULL, 'm'},        {"diff", required_argument, NULL, 'd'},
        {"metric", required_argument, NULL, 'M'}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"sections", required_argument, NULL, 'S'},
        {NULL, 0, NULL, 0},
    };
    optind = 0; /* glibc: full re-initialisation, so tests can call us more than once */
    opterr = 0; /* our own one-line messages */
    int c;
    while ((c = getopt_long(argc, argv, ":f:o:n:s:S:md:M:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': {
            int f = 0;
            while (f < HR_FORMAT_COUNT_ && strcmp(optarg, hr_format_names[f]) != 0)
                f++;
            if (f == HR_FORMAT_COUNT_)
                return hr_usage_error(err, "unknown format", optarg);
            a->format = (enum hr_format)f;
            break;
        }
        case 'o':
            a->output = optarg;
            break;
        case 'n':
            if (hr_parse_top(optarg, &a->opts.top))
                return hr_usage_error(err, "bad --top count", optarg);
            a->opts.json_top = a->opts.top; /* JSON lists every context unless asked for fewer */
            break;
        case 's':
            if (hr_sort_key_parse(optarg, &a->opts.sort))
                return hr_usage_error(err, "unknown sort key", optarg);
            break;
        case 'S':
            if (hr_sections_parse(optarg, &a->opts.sections_off))
                return hr_usage_error(err, "unknown section in", optarg);
            break;
        case 'm':
            a->merge = 1;
            break;
        case 'd':
            a->diff_base = optarg;
            break;
        case 'M':
            if (hr_metric_parse(optarg, &a->opts.metric))
                return hr_usage_error(err, "unknown metric", optarg);
            break;
        case 'h':
            fputs(hr_usage, out);
            return HR_EXIT_OK;
        case 'V':
            fprintf(out, "heapprof-report %s (profile format versions %u to %u)\n", HR_VERSION,
                    HPF_VERSION_MIN, HPF_VERSION);
            return HR_EXIT_OK;
        case ':':
            return hr_usage_error(err, "missing argument for", argv[optind - 1]);
        default:
            return hr_usage_error(err, "unknown option", argv[optind - 1]);
        }
    }
    return -1;
}

/* What gets written: the loaded profiles as they are, or one merged or diff profile. */
struct hr_view {
    struct hr_profile *const *v;
    size_t n;
    struct hr_profile merged, base;
    struct hr_profile *one; /* &merged when v is it */
};

/* Builds the view of the n profiles loaded (base first with --diff). 0, or an exit status. */
static int hr_view_make(struct hr_view *w, struct hr_profile *loaded, size_t n,
                        const struct hr_args *a, FILE *err)
{
    char msg[HR_ERR_MAX];
    struct hr_profile **all = malloc(n * sizeof *all);
    if (!all) {
        fputs("heapprof-report: out of memory\n", err);
        return HR_EXIT_FAIL;
    }
    for (size_t i = 0; i < n; i++)
        all[i] = &loaded[i];
    int r = 0;
    if (a->diff_base)
        r = hr_profiles_diff(&w->merged, &w->base, &loaded[0], all + 1, n - 1, msg);
    else if (n > 1 && (a->merge || hr_format_merges(a->format)))
        r = hr_profiles_merge(&w->merged, all, n, msg);
    else {
        w->v = all; /* kept: freed by hr_view_free */
        w->n = n;
        return 0;
    }
    free(all);
    if (r) {
        fprintf(err, "heapprof-report: %s: %s\n", a->diff_base ? "diff" : "merge", msg);
        return HR_EXIT_FAIL;
    }
    w->one = &w->merged;
    w->v = &w->one;
    w->n = 1;
    return 0;
}

static void hr_view_free(struct hr_view *w)
{
    if (w->v != &w->one)
        free((void *)w->v);
    hr_profile_free(&w->merged); /* before its base, which it points to */
    hr_profile_free(&w->base);
}

/* Refusals of a format for what it was given, checked before the output file is opened so
 * that a refusal leaves it alone. 0, or an exit status. */
static int hr_format_refuses(const struct hr_view *w, const struct hr_args *a, FILE *out,
                             FILE *err)
{
    char msg[HR_ERR_MAX];
    /* Binary data is no use on a terminal. */
    if ((a->format == HR_FORMAT_MEMPROF || a->format == HR_FORMAT_PPROF) && !a->output &&
        isatty(fileno(out))) {
        fprintf(err, "heapprof-report: --format %s writes binary data: give -o FILE\n",
                hr_format_names[a->format]);
        return HR_EXIT_USAGE;
    }
    /* A profile llvm-profdata 16 can read (hr_memprof_check says why not). */
    if (a->format == HR_FORMAT_MEMPROF && hr_memprof_check(w->v[0], msg)) {
        fprintf(err, "heapprof-report: %s: %s\n", w->v[0]->path, msg);
        return HR_EXIT_FAIL;
    }
    return HR_EXIT_OK;
}

/* Write the view where a says. Write errors (disk full, closed pipe) surface only
 * when the stream is flushed and closed: a truncated report must not exit 0. */
static int hr_output(const struct hr_view *w, struct hr_profile *const *inputs, size_t ninputs,
                     const struct hr_args *a, FILE *out, FILE *err)
{
    int refused = hr_format_refuses(w, a, out, err);
    if (refused)
        return refused;
    FILE *dst = out;
    if (a->output) {
        dst = fopen(a->output, "w");
        if (!dst) {
            fprintf(err, "heapprof-report: %s: %s\n", a->output, strerror(errno));
            return HR_EXIT_FAIL;
        }
    }
    int status = HR_EXIT_OK;
    int r = hr_write_all(dst, w->v, w->n, a->format, &a->opts, inputs, ninputs);
    if (r) {
        if (r != HR_WRITE_REFUSED) /* a refusal has said why */
            fputs("heapprof-report: out of memory\n", err);
        status = HR_EXIT_FAIL;
    }
    int bad = fflush(dst) != 0 || ferror(dst);
    if (a->output && fclose(dst) != 0)
        bad = 1;
    if (bad && status == HR_EXIT_OK) {
        fprintf(err, "heapprof-report: %s: write error: %s\n", a->output ? a->output : "<stdout>",
                strerror(errno));
        status = HR_EXIT_FAIL;
    }
    return status;
}

int hr_cli_run(int argc, char **argv, FILE *out, FILE *err)
{
    struct hr_args a = {.format = HR_FORMAT_TEXT,
                        .opts = {.sort = HR_SORT_TOTAL_SIZE, .top = 20, .warn = err}};
    int st = hr_parse_args(argc, argv, &a, out, err);
    if (st >= 0)
        return st;
    int n = argc - optind;
    if (n <= 0) {
        fputs("heapprof-report: no profile given (try --help)\n", err);
        return HR_EXIT_USAGE;
    }
    /* With --diff the base is loaded first, with the others. */
    char **paths = argv + optind;
    if (a.diff_base) {
        paths = malloc(((size_t)n + 1) * sizeof *paths);
        if (!paths) {
            fputs("heapprof-report: out of memory\n", err);
            return HR_EXIT_FAIL;
        }
        paths[0] = (char *)a.diff_base;
        memcpy(paths + 1, argv + optind, (size_t)n * sizeof *paths);
        n++;
    }
    struct hr_profile *profiles = calloc((size_t)n, sizeof *profiles);
    int status = HR_EXIT_FAIL;
    if (!profiles)
        fputs("heapprof-report: out of memory\n", err);
    else if (!hr_load_all(profiles, paths, n, err)) {
        struct hr_view w = {0};
        status = hr_view_make(&w, profiles, (size_t)n, &a, err);
        /* The inputs for the html timeline: every profile but a diff's base. */
        size_t skip = a.diff_base ? 1 : 0;
        struct hr_profile **inputs = status == 0 ? malloc((size_t)n * sizeof *inputs) : NULL;
        if (status == 0 && !inputs) {
            fputs("heapprof-report: out of memory\n", err);
            status = HR_EXIT_FAIL;
        }
        for (size_t i = skip; inputs && i < (size_t)n; i++)
            inputs[i - skip] = &profiles[i];
        if (status == 0)
            status = hr_output(&w, inputs, (size_t)n - skip, &a, out, err);
        free(inputs);
        hr_view_free(&w);
    }
    for (int i = 0; profiles && i < n; i++)
        hr_profile_free(&profiles[i]);
    free(profiles);
    if (paths != argv + optind)
        free(paths);
    hr_symbolizer_release();
    return status;
}
