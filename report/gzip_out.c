/* gzip compression of a finished buffer with zlib (hr_pb.h): pprof reads gzipped profiles. */
#include <zlib.h>

#include "hr_pb.h"

int hr_gzip_write(FILE *out, const uint8_t *data, size_t n)
{
    z_stream z = {0};
    /* windowBits 15 + 16: zlib writes the gzip header and trailer itself. Level 1, as Go's
     * runtime/pprof writes its profiles: a python3 profile's pprof output takes a third of the
     * time of level 6 for 20% more bytes (docs/REPORT.md, "pprof"). */
    if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    uint8_t chunk[1 << 16];
    int flush;
    do {
        /* avail_in is 32 bits: feed at most 1 GiB at a time. */
        size_t take = n < (1u << 30) ? n : (1u << 30);
        z.next_in = (Bytef *)data;
        z.avail_in = (uInt)take;
        data += take;
        n -= take;
        flush = n ? Z_NO_FLUSH : Z_FINISH;
        do {
            z.next_out = chunk;
            z.avail_out = sizeof chunk;
            int r = deflate(&z, flush);
            if (r == Z_STREAM_ERROR || r == Z_MEM_ERROR) {
                deflateEnd(&z);
                return -1;
            }
            fwrite(chunk, 1, sizeof chunk - z.avail_out, out);
        } while (z.avail_out == 0);
    } while (flush != Z_FINISH);
    deflateEnd(&z);
    return 0;
}
