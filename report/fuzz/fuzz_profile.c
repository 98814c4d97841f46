/* libFuzzer target for the profile reader: every input goes through hr_profile_parse, and what
 * parses goes through the text and JSON writers (a profile cut short also through folded and
 * DHAT), symbolisation of bogus modules included.
 * Built by `make fuzz` (clang -fsanitize=fuzzer,address,undefined); seeds in corpus/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hr_output.h"
#include "hr_profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    /* An exact-size copy: the parser owns it, and ASan sees a read one byte past the end. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy || !sink)
        abort();
    memcpy(copy, data, size);
    struct hr_profile p;
    char err[HR_ERR_MAX];
    if (hr_profile_parse(&p, "fuzz.hpf", copy, size, err) == 0) {
        struct hr_profile *v = &p;
        /* Every context and every section; the writers symbolise with the profile's modules
         * (often real files at bogus addresses). */
        struct hr_output_opts opts = {.sort = HR_SORT_ACCESS_DENSITY, .top = 0};
        if (hr_write_text(sink, &v, 1, &opts) || hr_write_json(sink, &v, 1, &opts))
            abort(); /* out of memory on a small input is a bug too */
        /* A profile cut short lost records others refer to: the writers that walk stacks and
         * sizes in their own ways get it too. */
        if (p.cut.cut && (hr_write_folded(sink, &p, &opts) || hr_write_dhat(sink, &p, &opts)))
            abort();
    } else if (!err[0] || strchr(err, '\n')) {
        abort(); /* every failure has exactly one line to say */
    }
    hr_profile_free(&p);
    return 0;
}
