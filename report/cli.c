/* Option parsing and the top-level flow of heapprof-report: load every profile first (so a bad
 * one fails the run before any output file is touched), then write them all. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hr_cli.h"
#include "hr_output.h"
#include "hr_profile.h"

enum hr_format {
    HR_FORMAT_TEXT, HR_FORMAT_JSON, HR_FORMAT_MEMPROF, HR_FORMAT_PPROF, HR_FORMAT_DHAT,
    HR_FORMAT_FOLDED, HR_FORMAT_HTML
};
static const char *const hr_format_names[] = {
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
    "                          self-contained page with a flame graph); pprof, dhat,\n"
    "                          memprof, folded and html take one profile, pprof and memprof\n"
    "                          are binary (use -o)\n"
    "  -o, --output FILE       write to FILE instead of standard output\n"
    "  -n, --top N             show the first N contexts of each profile (0 = all; default:\n"
    "                          20 in text, all in JSON)\n"
    "  -s, --sort KEY          context order, largest first: total_size (default),\n"
    "                          alloc_count, live_size, peak_live_size, max_live_size,\n"
    "                          total_lifetime_ms, total_access_count, access_density\n"
    "  -m, --metric NAME       figure of folded lines and of the HTML flame graph:\n"
    "                          alloc_bytes (bytes, default), alloc_count (count),\n"
    "                          inuse_bytes (leaked), inuse_count, peak_bytes (peak),\n"
    "                          peak_count, accesses, lifetime_ms\n"
    "  -h, --help              show this help and exit\n"
    "  -V, --version           show the version and exit\n"
    "\n"
    "With several profiles, text output has one section per profile and JSON output is an\n"
    "array of objects in argument order. Exit status: 0 ok, 1 bad profile or write error,\n"
    "2 bad usage.\n";

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

/* Loads every profile, printing one line per bad one. Returns how many failed. */
static int hr_load_all(struct hr_profile *profiles, char **paths, int n, FILE *err)
{
    int failed = 0;
    for (int i = 0; i < n; i++) {
        char msg[HR_ERR_MAX];
        if (hr_profile_load(&profiles[i], paths[i], msg)) {
            /* The shim writes numbered dumps as NAME.tmp and renames them when whole: a .tmp
             * that remains is one its process never finished. */
            size_t len = strlen(paths[i]);
            int tmp = len > 4 && strcmp(paths[i] + len - 4, ".tmp") == 0;
            fprintf(err, "heapprof-report: %s: %s%s\n", paths[i],
                    tmp ? "an unfinished dump (its process exec'd or was killed while writing it): " : "",
                    msg);
            failed++;
        }
    }
    return failed;
}

static int hr_write_all(FILE *out, struct hr_profile *profiles, int n, enum hr_format format,
                        const struct hr_output_opts *opts)
{
    struct hr_profile **v = malloc((size_t)n * sizeof *v);
    if (!v)
        return -1;
    for (int i = 0; i < n; i++)
        v[i] = &profiles[i];
    struct hr_output_opts o = *opts;
    o.inputs = v; /* the html page's timeline: every profile loaded */
    o.ninputs = (size_t)n;
    int r;
    switch (format) {
    case HR_FORMAT_JSON: r = hr_write_json(out, v, (size_t)n, &o); break;
    case HR_FORMAT_MEMPROF: r = hr_write_memprof(out, v[0], &o); break;
    case HR_FORMAT_PPROF: r = hr_write_pprof(out, v[0], &o); break;
    case HR_FORMAT_DHAT: r = hr_write_dhat(out, v[0], &o); break;
    case HR_FORMAT_FOLDED: r = hr_write_folded(out, v[0], &o); break;
    case HR_FORMAT_HTML: r = hr_write_html(out, v[0], &o); break;
    default: r = hr_write_text(out, v, (size_t)n, &o); break;
    }
    free(v);
    return r;
}

/* What the command line asks for. */
struct hr_args {
    enum hr_format format;
    const char *output;
    struct hr_output_opts opts;
};

/* Parse the options into a; 0 to go on and write the profiles from argv[optind], else the exit
 * status (help and version are printed here). */
static int hr_parse_args(int argc, char **argv, struct hr_args *a, FILE *out, FILE *err)
{
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},
        {"top", required_argument, NULL, 'n'},    {"sort", required_argument, NULL, 's'},
        {"metric", required_argument, NULL, 'm'}, {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    optind = 0; /* glibc: full re-initialisation, so tests can call us more than once */
    opterr = 0; /* our own one-line messages */
    int c;
    while ((c = getopt_long(argc, argv, ":f:o:n:s:m:hV", longopts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "text") == 0)
                a->format = HR_FORMAT_TEXT;
            else if (strcmp(optarg, "json") == 0)
                a->format = HR_FORMAT_JSON;
            else if (strcmp(optarg, "memprof") == 0)
                a->format = HR_FORMAT_MEMPROF;
            else if (strcmp(optarg, "pprof") == 0)
                a->format = HR_FORMAT_PPROF;
            else if (strcmp(optarg, "dhat") == 0)
                a->format = HR_FORMAT_DHAT;
            else if (strcmp(optarg, "folded") == 0)
                a->format = HR_FORMAT_FOLDED;
            else if (strcmp(optarg, "html") == 0)
                a->format = HR_FORMAT_HTML;
            else
                return hr_usage_error(err, "unknown format", optarg);
            break;
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
        case 'm':
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

/* --format memprof takes one profile that llvm-profdata 16 can read, and is binary: never
 * written to a terminal. Checked before the output file is opened, so a refusal leaves it. */
static int hr_memprof_usable(struct hr_profile *profiles, int n, const struct hr_args *a,
                             FILE *out, FILE *err)
{
    char msg[HR_ERR_MAX];
    if (n != 1) {
        fputs("heapprof-report: --format memprof writes one profile (try --help)\n", err);
        return HR_EXIT_USAGE;
    }
    if (!a->output && isatty(fileno(out))) {
        fputs("heapprof-report: --format memprof writes binary data: give -o FILE\n", err);
        return HR_EXIT_USAGE;
    }
    if (hr_memprof_check(&profiles[0], msg)) {
        fprintf(err, "heapprof-report: %s: %s\n", profiles[0].path, msg);
        return HR_EXIT_FAIL;
    }
    return HR_EXIT_OK;
}

/* Write the loaded profiles where a says. Write errors (disk full, closed pipe) surface only
 * when the stream is flushed and closed: a truncated report must not exit 0. */
static int hr_output(struct hr_profile *profiles, int n, const struct hr_args *a, FILE *out,
                     FILE *err)
{
    if (a->format == HR_FORMAT_MEMPROF) {
        int st = hr_memprof_usable(profiles, n, a, out, err);
        if (st != HR_EXIT_OK)
            return st;
    }
    /* DHAT has no negative figures: a diff (p->diff_base, --diff) cannot be shown in it. */
    if (a->format == HR_FORMAT_DHAT && profiles[0].diff_base) {
        fputs("heapprof-report: --format dhat cannot show a diff (DHAT has no negative figures)\n",
              err);
        return HR_EXIT_USAGE;
    }
    /* gzip data is no use on a terminal (memprof says the same in hr_memprof_usable). */
    if (a->format == HR_FORMAT_PPROF && !a->output && isatty(fileno(out))) {
        fputs("heapprof-report: --format pprof writes binary data: give -o FILE\n", err);
        return HR_EXIT_USAGE;
    }
    FILE *dst = out;
    if (a->output) {
        dst = fopen(a->output, "w");
        if (!dst) {
            fprintf(err, "heapprof-report: %s: %s\n", a->output, strerror(errno));
            return HR_EXIT_FAIL;
        }
    }
    int status = HR_EXIT_OK;
    int r = hr_write_all(dst, profiles, n, a->format, &a->opts);
    if (r) {
        if (r != HR_WRITE_REFUSED)
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
    /* The export formats hold one profile; several are merged into one first (not yet). */
    if (n > 1 && (a.format == HR_FORMAT_PPROF || a.format == HR_FORMAT_DHAT ||
                  a.format == HR_FORMAT_FOLDED || a.format == HR_FORMAT_HTML)) {
        fprintf(err, "heapprof-report: --format %s takes one profile, %d given (try --help)\n",
                hr_format_names[a.format], n);
        return HR_EXIT_USAGE;
    }
    struct hr_profile *profiles = calloc((size_t)n, sizeof *profiles);
    if (!profiles) {
        fputs("heapprof-report: out of memory\n", err);
        return HR_EXIT_FAIL;
    }
    int status = hr_load_all(profiles, argv + optind, n, err) ? HR_EXIT_FAIL
                                                               : hr_output(profiles, n, &a, out, err);
    for (int i = 0; i < n; i++)
        hr_profile_free(&profiles[i]);
    free(profiles);
    return status;
}
