/* Unit tests for HEAPPROF_OPTIONS parsing (shim/options.c): defaults from options.def, the
 * "k=v:k=v" grammar, value kinds, problem counting, clamping and the help=1 table. */
#include "unit_support.h"

#include "rt/rt.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

static struct hp_options o;

static int parse(const char *spec) { return hp_options_parse(&o, spec); }

/* Every field equals its row in options.def (the table is the single source of defaults). */
static void assert_defaults(const struct hp_options *x)
{
#define CHECK_BOOL(name, def) ck_assert_msg(x->name == (def), "default of " #name);
#define CHECK_INT(name, def) ck_assert_msg(x->name == (uint64_t)(def), "default of " #name);
#define CHECK_SIG CHECK_INT
#define CHECK_STR(name, def) ck_assert_msg(strcmp(x->name, def) == 0, "default of " #name);
#define HP_OPTION(kind, name, def, doc) CHECK_##kind(name, def)
#include "rt/options.def"
#undef HP_OPTION
#undef CHECK_BOOL
#undef CHECK_INT
#undef CHECK_SIG
#undef CHECK_STR
}

START_TEST(test_defaults)
{
    memset(&o, 0x5a, sizeof o);
    ck_assert_int_eq(parse(NULL), 0);
    assert_defaults(&o);
    memset(&o, 0x5a, sizeof o);
    ck_assert_int_eq(parse(""), 0);
    assert_defaults(&o);
    /* A few rows whose meaning other modules rely on. */
    ck_assert_int_eq(o.help, 0);
    ck_assert_int_eq(o.profile, 1);
    ck_assert_uint_eq(o.fault_after, 0);
    ck_assert_str_eq(o.backend, "next");
    ck_assert_str_eq(o.unwinder, "cfi");
}
END_TEST

START_TEST(test_basic_pairs)
{
    ck_assert_int_eq(parse("verbosity=2:stack_depth=32"), 0);
    ck_assert_uint_eq(o.verbosity, 2);
    ck_assert_uint_eq(o.stack_depth, 32);
    ck_assert_int_eq(parse("profile=0:output=/tmp/p.hpf:dump_signal=12"), 0);
    ck_assert_int_eq(o.profile, 0);
    ck_assert_str_eq(o.output, "/tmp/p.hpf");
    ck_assert_uint_eq(o.dump_signal, 12);
    /* Parsing starts from the defaults again: nothing from the previous spec survives. */
    ck_assert_int_eq(parse("verbosity=0"), 0);
    ck_assert_int_eq(o.profile, 1);
    ck_assert_uint_eq(o.dump_signal, 0);
    ck_assert_uint_eq(o.verbosity, 0);
    /* The last assignment wins. */
    ck_assert_int_eq(parse("verbosity=2:verbosity=0:verbosity=3"), 0);
    ck_assert_uint_eq(o.verbosity, 3);
}
END_TEST

START_TEST(test_separators)
{
    ck_assert_int_eq(parse("verbosity=2:"), 0);
    ck_assert_uint_eq(o.verbosity, 2);
    ck_assert_int_eq(parse(":verbosity=2"), 0);
    ck_assert_uint_eq(o.verbosity, 2);
    ck_assert_int_eq(parse("verbosity=2::stack_depth=9"), 0);
    ck_assert_uint_eq(o.verbosity, 2);
    ck_assert_uint_eq(o.stack_depth, 9);
    ck_assert_int_eq(parse(":"), 0);
    ck_assert_int_eq(parse(":::"), 0);
    assert_defaults(&o);
}
END_TEST

START_TEST(test_problems_counted)
{
    /* A key without '=': one problem, the rest still applies. */
    ck_assert_int_eq(parse("verbosity:stack_depth=5"), 1);
    ck_assert_uint_eq(o.stack_depth, 5);
    ck_assert_int_eq(parse("verbosity"), 1);
    assert_defaults(&o);
    ck_assert_int_eq(parse("nosuch=1"), 1);
    assert_defaults(&o);
    ck_assert_int_eq(parse("a=1:b=2"), 2);
    ck_assert_int_eq(parse("=5"), 1);
    /* Prefixes and case do not match names. */
    ck_assert_int_eq(parse("verb=1"), 1);
    ck_assert_int_eq(parse("verbosityx=1"), 1);
    ck_assert_int_eq(parse("Verbosity=1"), 1);
    ck_assert_int_eq(parse("nosuch=1:verbosity=2:other"), 2);
    ck_assert_uint_eq(o.verbosity, 2);
}
END_TEST

START_TEST(test_bad_numbers)
{
    static const char *bad[] = {
        "stack_depth=", "stack_depth=abc", "stack_depth=-1", "stack_depth=1x", "stack_depth= 5",
        "stack_depth=5 ", "stack_depth=0x10", "stack_depth=1.5", "stack_depth=1kk",
        "stack_depth=18446744073709551616", "stack_depth=17179869184g",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(parse(bad[i]) == 1, "'%s' not counted as a problem", bad[i]);
        /* The default stays. */
        struct hp_options d;
        hp_options_parse(&d, NULL);
        ck_assert_msg(o.stack_depth == d.stack_depth, "'%s' changed stack_depth", bad[i]);
    }
}
END_TEST

START_TEST(test_suffixes_and_limits)
{
    ck_assert_int_eq(parse("peak_slack_kb=2k:dump_interval_ms=3m:fault_after=1g"), 0);
    ck_assert_uint_eq(o.peak_slack_kb, 2048);
    ck_assert_uint_eq(o.dump_interval_ms, 3u << 20);
    ck_assert_uint_eq(o.fault_after, 1u << 30);
    /* One problem: peak_slack_kb out of range. */
    ck_assert_int_eq(parse("fault_after=4K:dump_interval_ms=5M:peak_slack_kb=6G"), 1);
    ck_assert_uint_eq(o.fault_after, 4096);
    ck_assert_uint_eq(o.dump_interval_ms, 5u << 20);
    ck_assert_uint_eq(o.peak_slack_kb, 1u << 20); /* clamped to 1 GiB */
    ck_assert_int_eq(parse("fault_after=18446744073709551615"), 0);
    ck_assert_uint_eq(o.fault_after, UINT64_MAX);
    ck_assert_int_eq(parse("fault_after=18446744073709551616"), 1);
    ck_assert_uint_eq(o.fault_after, 0);
}
END_TEST

START_TEST(test_bools)
{
    static const struct {
        const char *v;
        int expect;
    } good[] = {{"0", 0}, {"1", 1}, {"true", 1}, {"false", 0}, {"yes", 1}, {"no", 0}};
    char spec[64];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        for (int start = 0; start < 2; start++) {
            snprintf(spec, sizeof spec, "report_bad_free=%d:report_bad_free=%s", start, good[i].v);
            ck_assert_int_eq(parse(spec), 0);
            ck_assert_msg(o.report_bad_free == good[i].expect, "report_bad_free=%s", good[i].v);
        }
        snprintf(spec, sizeof spec, "help=%s", good[i].v);
        ck_assert_int_eq(parse(spec), 0);
        ck_assert_int_eq(o.help, good[i].expect);
    }
    static const char *bad[] = {"2", "TRUE", "Yes", "on", "off", "y", "n", "", "truex", "1k", "10"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(spec, sizeof spec, "help=%s", bad[i]);
        ck_assert_msg(parse(spec) == 1, "help=%s accepted", bad[i]);
        ck_assert_int_eq(o.help, 0);
    }
}
END_TEST

START_TEST(test_strings)
{
    ck_assert_int_eq(parse("output="), 0);
    ck_assert_str_eq(o.output, "");
    ck_assert_int_eq(parse("output=a=b"), 0); /* the first '=' splits */
    ck_assert_str_eq(o.output, "a=b");
    ck_assert_int_eq(parse("output=/tmp/with space/%p.hpf:verbosity=0"), 0);
    ck_assert_str_eq(o.output, "/tmp/with space/%p.hpf");
    ck_assert_uint_eq(o.verbosity, 0);
    ck_assert_int_eq(parse("backend=glibc:unwinder=libunwind"), 0);
    ck_assert_str_eq(o.backend, "glibc");
    ck_assert_str_eq(o.unwinder, "libunwind");

    char spec[600], val[300];
    memset(val, 'v', sizeof val);
    val[HP_OPT_STR_MAX - 1] = 0; /* 255 bytes: the longest that fits */
    snprintf(spec, sizeof spec, "output=%s", val);
    ck_assert_int_eq(parse(spec), 0);
    ck_assert_uint_eq(strlen(o.output), HP_OPT_STR_MAX - 1);
    ck_assert_str_eq(o.output, val);
    memset(val, 'w', sizeof val);
    val[HP_OPT_STR_MAX] = 0; /* 256 bytes: rejected, default kept */
    snprintf(spec, sizeof spec, "output=%s:stack_depth=7", val);
    ck_assert_int_eq(parse(spec), 1);
    struct hp_options d;
    hp_options_parse(&d, NULL);
    ck_assert_str_eq(o.output, d.output);
    ck_assert_uint_eq(o.stack_depth, 7);
}
END_TEST

START_TEST(test_clamps)
{
    ck_assert_int_eq(parse("stack_depth=0"), 1);
    ck_assert_uint_eq(o.stack_depth, 1);
    ck_assert_int_eq(parse("stack_depth=1"), 0);
    ck_assert_uint_eq(o.stack_depth, 1);
    ck_assert_int_eq(parse("stack_depth=256"), 0);
    ck_assert_uint_eq(o.stack_depth, 256);
    ck_assert_int_eq(parse("stack_depth=1000"), 1);
    ck_assert_uint_eq(o.stack_depth, 256);

    ck_assert_int_eq(parse("hib_table_ways=0"), 0); /* raised to the minimum, silently */
    ck_assert_uint_eq(o.hib_table_ways, 1);
    ck_assert_int_eq(parse("hib_table_ways=16"), 0);
    ck_assert_uint_eq(o.hib_table_ways, 16);
    ck_assert_int_eq(parse("hib_table_ways=17"), 1);
    ck_assert_uint_eq(o.hib_table_ways, 16);

    ck_assert_int_eq(parse("hib_table_size=1000:hib_table_ways=1"), 0);
    ck_assert_uint_eq(o.hib_table_size, 1024);
    ck_assert_int_eq(parse("hib_table_size=1024:hib_table_ways=1"), 0);
    ck_assert_uint_eq(o.hib_table_size, 1024);
    ck_assert_int_eq(parse("hib_table_size=1025:hib_table_ways=1"), 0);
    ck_assert_uint_eq(o.hib_table_size, 2048);
    ck_assert_int_eq(parse("hib_table_size=0:hib_table_ways=1"), 0); /* raised to the minimum, silently */
    ck_assert_uint_eq(o.hib_table_size, 1);
    /* At least one set: never fewer entries than ways. */
    ck_assert_int_eq(parse("hib_table_size=3:hib_table_ways=4"), 0); /* raised to the minimum, silently */
    ck_assert_uint_eq(o.hib_table_size, 4);
    ck_assert_int_eq(parse("hib_table_size=2:hib_table_ways=12"), 0); /* raised to the minimum, silently */
    ck_assert_uint_eq(o.hib_table_size, 16);

    ck_assert_int_eq(parse("thread_cache_size=0"), 0); /* raised to the minimum, silently */
    ck_assert_uint_eq(o.thread_cache_size, 16);
    ck_assert_int_eq(parse("thread_cache_size=15"), 0); /* raised to the minimum, silently */
    ck_assert_uint_eq(o.thread_cache_size, 16);
    ck_assert_int_eq(parse("thread_cache_size=17"), 0);
    ck_assert_uint_eq(o.thread_cache_size, 32);
    ck_assert_int_eq(parse("thread_cache_size=1000"), 0);
    ck_assert_uint_eq(o.thread_cache_size, 1024);
    ck_assert_int_eq(parse("thread_cache_size=65536"), 0);
    ck_assert_uint_eq(o.thread_cache_size, 65536);
    ck_assert_int_eq(parse("thread_cache_size=100000"), 1);
    ck_assert_uint_eq(o.thread_cache_size, 65536);

    ck_assert_int_eq(parse("max_contexts=0"), 0); /* raised to the minimum, silently */
    ck_assert_uint_eq(o.max_contexts, 16);
    ck_assert_int_eq(parse("max_contexts=100"), 0);
    ck_assert_uint_eq(o.max_contexts, 100); /* not rounded */
    ck_assert_int_eq(parse("max_contexts=2g"), 1);
    ck_assert_uint_eq(o.max_contexts, 1u << 30);

    ck_assert_int_eq(parse("metadata_budget_mb=1"), 1);
    ck_assert_uint_eq(o.metadata_budget_mb, 16);
    ck_assert_int_eq(parse("metadata_budget_mb=16"), 0);
    ck_assert_uint_eq(o.metadata_budget_mb, 16);
    ck_assert_int_eq(parse("metadata_budget_mb=17592186044416"), 1); /* 2^44: would wrap << 20 */
    ck_assert_uint_eq(o.metadata_budget_mb, 1u << 20);

    ck_assert_int_eq(parse("dump_signal=64"), 0);
    ck_assert_uint_eq(o.dump_signal, 64);
    ck_assert_int_eq(parse("dump_signal=65"), 1);
    ck_assert_uint_eq(o.dump_signal, 0);
}
END_TEST

/* dump_signal by name, as kill(1) takes it; never a fault's signal (its handler returning would
 * bring it back at once: a crashing program wrote dumps for ever). */
START_TEST(test_dump_signal_names)
{
    static const struct { const char *spec; int want; } ok[] = {
        {"dump_signal=USR2", SIGUSR2}, {"dump_signal=SIGUSR1", SIGUSR1}, {"dump_signal=usr2", SIGUSR2},
        {"dump_signal=sigHup", SIGHUP}, {"dump_signal=12", SIGUSR2},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        ck_assert_msg(parse(ok[i].spec) == 0, "%s: problems", ok[i].spec);
        ck_assert_msg(o.dump_signal == (uint64_t)ok[i].want, "%s: %llu", ok[i].spec,
                      (unsigned long long)o.dump_signal);
    }
    ck_assert_int_eq(parse("dump_signal=RTMIN"), 0);
    ck_assert_uint_eq(o.dump_signal, (uint64_t)SIGRTMIN);
    ck_assert_int_eq(parse("dump_signal=RTMIN+3"), 0);
    ck_assert_uint_eq(o.dump_signal, (uint64_t)SIGRTMIN + 3);
    ck_assert_int_eq(parse("dump_signal=SIGRTMAX-2"), 0);
    ck_assert_uint_eq(o.dump_signal, (uint64_t)SIGRTMAX - 2);
    static const char *const bad[] = {
        "dump_signal=RTMIN+99", "dump_signal=RTMIN-1", "dump_signal=RTMAX+1", "dump_signal=SIG",
        "dump_signal=USR", "dump_signal=USR22", "dump_signal=SEGV", "dump_signal=11",
        "dump_signal=SIGBUS", "dump_signal=8", "dump_signal=ILL", "dump_signal=TRAP",
        "dump_signal=SYS",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(parse(bad[i]) == 1, "%s: not one problem", bad[i]);
        ck_assert_msg(o.dump_signal == 0, "%s: %llu", bad[i], (unsigned long long)o.dump_signal);
    }
}
END_TEST

/* hib_table_size is brought under 2^30 before hp_round_pow2 (which never returns above 2^63). */
START_TEST(test_huge_table_size_terminates)
{
    ck_assert_int_eq(parse("hib_table_size=17179869183g"), 1);
    ck_assert(hp_is_pow2(o.hib_table_size));
}
END_TEST

/* hp_options_print output into a pipe. */
static size_t print_to_string(const struct hp_options *x, char *buf, size_t cap)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    hp_options_print(x, p[1]);
    close(p[1]);
    size_t n = hp_unit_drain(p[0], buf, cap);
    close(p[0]);
    return n;
}

START_TEST(test_print_lists_every_option)
{
    static char out[65536];
    ck_assert_int_eq(parse(NULL), 0);
    size_t n = print_to_string(&o, out, sizeof out);
    ck_assert_uint_gt(n, 0);
    ck_assert_uint_lt(n, sizeof out - 1);
    ck_assert_msg(strncmp(out, "heapprof: options", 17) == 0, "first line: %.40s", out);
    char want[600];
#define HP_OPTION(kind, name, def, doc)                                                   \
    snprintf(want, sizeof want, "\n  %s=", #name);                                        \
    ck_assert_msg(strstr(out, want) != NULL, "option %s missing from the table", #name); \
    ck_assert_msg(strstr(out, doc) != NULL, "doc of %s missing", #name);
#undef HP_OPTION
    /* Values are printed as parsed. */
    snprintf(want, sizeof want, "\n  output=%s\n", o.output);
    ck_assert_ptr_nonnull(strstr(out, want));
    snprintf(want, sizeof want, "\n  stack_depth=%llu\n", (unsigned long long)o.stack_depth);
    ck_assert_ptr_nonnull(strstr(out, want));
    ck_assert_ptr_nonnull(strstr(out, "\n  help=0\n"));

    ck_assert_int_eq(parse("help=1:stack_depth=17:output=/x y/%p:fault_after=3g"), 0);
    print_to_string(&o, out, sizeof out);
    ck_assert_ptr_nonnull(strstr(out, "\n  help=1\n"));
    ck_assert_ptr_nonnull(strstr(out, "\n  stack_depth=17\n"));
    ck_assert_ptr_nonnull(strstr(out, "\n  output=/x y/%p\n"));
    ck_assert_ptr_nonnull(strstr(out, "\n  fault_after=3221225472\n"));
}
END_TEST

START_TEST(test_print_long_string)
{
    static char out[65536];
    char spec[400], val[300];
    memset(val, 'q', sizeof val);
    val[HP_OPT_STR_MAX - 1] = 0;
    snprintf(spec, sizeof spec, "output=%s", val);
    ck_assert_int_eq(parse(spec), 0);
    print_to_string(&o, out, sizeof out);
    char want[400];
    snprintf(want, sizeof want, "\n  output=%s\n", val);
    ck_assert_ptr_nonnull(strstr(out, want));
}
END_TEST

/* Problems are reported on stderr (when the global verbosity allows). */
START_TEST(test_warning_text)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    int saved = dup(2);
    dup2(p[1], 2);
    hp_opt.verbosity = 1;
    int probs = parse("nosuch=1:stack_depth=zz:verbosity");
    int mid = parse("bare:verbosity=1");
    int ranges = parse("stack_depth=1000:dump_signal=99:metadata_budget_mb=0:thread_cache_size=100:"
                       "hib_table_size=1:thread_cache_size=1");
    hp_opt.verbosity = 0;
    int quiet = parse("nosuch2=1");
    dup2(saved, 2);
    close(saved);
    close(p[1]);
    char out[4096];
    hp_unit_drain(p[0], out, sizeof out);
    close(p[0]);
    ck_assert_int_eq(probs, 3);
    ck_assert_int_eq(quiet, 1);
    ck_assert_msg(strstr(out, "heapprof: unknown option 'nosuch'") != NULL, "got: %s", out);
    ck_assert_msg(strstr(out, "stack_depth: bad value 'zz'") != NULL, "got: %s", out);
    ck_assert_msg(strstr(out, "'verbosity' has no '=value' part") != NULL, "got: %s", out);
    /* the item alone, not the rest of the string after it */
    ck_assert_int_eq(mid, 1);
    ck_assert_msg(strstr(out, "option 'bare' has no '=value' part\n") != NULL, "got: %s", out);
    ck_assert_msg(strstr(out, "nosuch2") == NULL, "warned at verbosity 0: %s", out);
    /* Out of range: said, with what is used instead; a power-of-two rounding or a table raised
     * to its smallest size is not a problem. */
    ck_assert_int_eq(ranges, 3);
    ck_assert_msg(strstr(out, "heapprof: option stack_depth=1000 is out of range (1..256): using 256\n") != NULL,
                  "got: %s", out);
    ck_assert_msg(strstr(out, "heapprof: option dump_signal=99 is not a signal number (1..64): no dump signal\n") !=
                      NULL, "got: %s", out);
    ck_assert_msg(strstr(out, "option metadata_budget_mb=0 is out of range (16..1048576): using 16") != NULL,
                  "got: %s", out);
    ck_assert_msg(strstr(out, "thread_cache_size") == NULL, "warned about a rounding: %s", out);
    ck_assert_msg(strstr(out, "hib_table_size") == NULL, "warned about the smallest table: %s", out);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("options");
    TCase *tc = tcase_create("options");
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_basic_pairs);
    tcase_add_test(tc, test_dump_signal_names);
    tcase_add_test(tc, test_separators);
    tcase_add_test(tc, test_problems_counted);
    tcase_add_test(tc, test_bad_numbers);
    tcase_add_test(tc, test_suffixes_and_limits);
    tcase_add_test(tc, test_bools);
    tcase_add_test(tc, test_strings);
    tcase_add_test(tc, test_clamps);
    tcase_add_test(tc, test_huge_table_size_terminates);
    tcase_add_test(tc, test_print_lists_every_option);
    tcase_add_test(tc, test_print_long_string);
    tcase_add_test(tc, test_warning_text);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
