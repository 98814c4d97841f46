/* Writes the large synthetic profile of big_profile.h to a file, for the cases that open its
 * reports in their viewers. Usage: gen_big_profile OUT.hpf CONTEXTS */
#include <stdio.h>
#include <stdlib.h>

#include "big_profile.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("usage: gen_big_profile OUT.hpf CONTEXTS\n", stderr);
        return 2;
    }
    struct ht_buf b = {0};
    ht_big_profile(&b, (uint32_t)strtoul(argv[2], NULL, 10));
    FILE *f = fopen(argv[1], "wb");
    if (!f || fwrite(b.data, 1, b.len, f) != b.len || fclose(f) != 0) {
        perror(argv[1]);
        return 1;
    }
    free(b.data);
    return 0;
}
