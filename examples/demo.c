/* The bundled example for heapprof's first run: a small program with a few clearly named
 * allocation sites (a leak, short-lived temporaries, a long-lived cache, a realloc-grown
 * buffer, string duplication) spread over the main thread and two workers, so the report has
 * one recognisable line per pattern. Build: see examples/README. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

/* Results go through volatile sinks so the compiler keeps every allocation: clang, for one,
 * removes malloc/free pairs whose memory never escapes. */
static volatile uintptr_t sink;

/* A leak: allocated once, never freed. Shows up as still live at exit. */
NOINLINE static void leak_config(void)
{
    char *config = malloc(4096);
    snprintf(config, 4096, "mode=demo\nthreads=2\n");
    sink = (uintptr_t)config;
}

/* Short-lived temporaries: many allocations, each freed at once. High call count, no live bytes. */
NOINLINE static unsigned make_temp_buffer(unsigned i)
{
    size_t n = 64 + i % 512;
    unsigned char *tmp = malloc(n);
    memset(tmp, (int)i, n);
    unsigned sum = tmp[n / 2] + (unsigned)n;
    sink = (uintptr_t)tmp;
    free(tmp);
    return sum;
}

/* A long-lived cache: entries kept until the end of the run, then released. */
struct cache_entry {
    struct cache_entry *next;
    unsigned key;
    char payload[240];
};

static struct cache_entry *cache;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

NOINLINE static void cache_insert(unsigned key)
{
    struct cache_entry *e = calloc(1, sizeof *e);
    e->key = key;
    snprintf(e->payload, sizeof e->payload, "entry %u", key);
    pthread_mutex_lock(&cache_lock);
    e->next = cache;
    cache = e;
    pthread_mutex_unlock(&cache_lock);
}

static void cache_clear(void)
{
    while (cache) {
        struct cache_entry *next = cache->next;
        free(cache);
        cache = next;
    }
}

/* A realloc-grown buffer: doubles its capacity as lines are appended. */
struct log_buffer {
    char *data;
    size_t len, cap;
};

NOINLINE static void grow_log_buffer(struct log_buffer *b, size_t need)
{
    while (b->cap < b->len + need)
        b->cap = b->cap ? b->cap * 2 : 256;
    b->data = realloc(b->data, b->cap);
}

static void log_append(struct log_buffer *b, const char *line)
{
    size_t n = strlen(line);
    if (b->len + n + 1 > b->cap)
        grow_log_buffer(b, n + 1);
    memcpy(b->data + b->len, line, n + 1);
    b->len += n;
}

/* C-string duplication: strdup'd names, half of them kept, half freed. */
NOINLINE static char *duplicate_name(unsigned i)
{
    char name[32];
    snprintf(name, sizeof name, "item-%05u", i);
    return strdup(name);
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    unsigned sum = 0;
    for (unsigned i = 0; i < 20000; i++)
        sum += make_temp_buffer(i + id);
    for (unsigned i = 0; i < 500; i++)
        cache_insert(id * 1000 + i);
    return (void *)(uintptr_t)sum;
}

int main(void)
{
    leak_config();

    pthread_t t[2];
    for (uintptr_t i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)(i + 1));

    struct log_buffer log = {0};
    char *names[1000];
    char line[64];
    for (unsigned i = 0; i < 1000; i++) {
        names[i] = duplicate_name(i);
        snprintf(line, sizeof line, "added %s\n", names[i]);
        log_append(&log, line);
    }
    for (unsigned i = 0; i < 1000; i += 2)
        free(names[i]); /* the odd ones stay live until exit */

    unsigned sum = 0;
    for (int i = 0; i < 2; i++) {
        void *r;
        pthread_join(t[i], &r);
        sum += (unsigned)(uintptr_t)r;
    }
    printf("demo: %zu bytes of log, %u cache entries, checksum %u\n", log.len, 1000u, sum);

    cache_clear();
    free(log.data);
    return 0;
}
