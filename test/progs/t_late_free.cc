// Frees that happen late, when the shim may be tearing itself down: pthread_key destructors and
// C++ thread_local destructors at thread exit, atexit handlers, static destructors and a
// __attribute__((destructor)) function after main returns.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <map>
#include <string>
#include <vector>

// _Exit, not exit: some checks run inside atexit handlers and destructors, where calling exit()
// again is undefined.
#define FAILX(...) (printf("FAIL: " __VA_ARGS__), printf("\n"), fflush(stdout), _Exit(1))

static pthread_key_t key;
static volatile int key_dtor_runs;

static void key_dtor(void *p)
{
    // The key's value was a malloc'd block; re-arm once so the destructor runs a second round
    // (glibc repeats up to PTHREAD_DESTRUCTOR_ITERATIONS times) with a fresh allocation.
    char *s = static_cast<char *>(p);
    if (strcmp(s, "first") == 0) {
        char *again = static_cast<char *>(malloc(64));
        strcpy(again, "second");
        pthread_setspecific(key, again);
    }
    free(s);
    __atomic_fetch_add(&key_dtor_runs, 1, __ATOMIC_RELAXED);
}

// thread_local object whose destructor frees heap memory owned through several containers.
struct Tls {
    std::vector<std::string> v;
    std::map<int, std::string> m;
    char *raw = nullptr;
    ~Tls()
    {
        free(raw);
        __atomic_fetch_add(&tls_dtor_runs, 1, __ATOMIC_RELAXED);
    }
    static int tls_dtor_runs;
};
int Tls::tls_dtor_runs;
static thread_local Tls tls;

static void *thread_main(void *arg)
{
    long id = reinterpret_cast<long>(arg);
    char *s = static_cast<char *>(malloc(32));
    strcpy(s, "first");
    pthread_setspecific(key, s);
    for (int i = 0; i < 50; i++) {
        tls.v.push_back(std::string(40 + i, 'a' + static_cast<char>(id % 26)));
        tls.m[i] = std::to_string(i * id);
    }
    tls.raw = static_cast<char *>(malloc(1000));
    return nullptr;
}

// Blocks freed by the late hooks; volatile so the compiler can't pair and drop them.
static void *volatile atexit_block;
static void *volatile dtor_block;
static std::vector<std::string> *volatile static_vec;

struct StaticObj {
    std::string s = std::string(200, 's'); // heap-allocated, freed by the static destructor
    std::vector<int> v = std::vector<int>(1000, 7);
    ~StaticObj()
    {
        if (v.size() != 1000 || v[999] != 7)
            FAILX("static object corrupted at exit");
    }
};
static StaticObj static_obj;

static void atexit_handler()
{
    if (!atexit_block || memcmp(atexit_block, "atexit", 7) != 0)
        FAILX("atexit block corrupted");
    free(atexit_block);
    atexit_block = nullptr;
    delete static_vec;
    // allocating and freeing from an atexit handler is legal too
    void *p = malloc(12345);
    memset(p, 1, 12345);
    free(p);
}

__attribute__((destructor)) static void late_destructor()
{
    if (!dtor_block || memcmp(dtor_block, "destructor", 11) != 0)
        FAILX("destructor block corrupted");
    free(dtor_block);
    char *q = strdup("allocated in a destructor");
    free(q);
}

int main()
{
    if (pthread_key_create(&key, key_dtor) != 0)
        FAILX("pthread_key_create");
    for (int round = 0; round < 10; round++) {
        pthread_t t[8];
        for (long i = 0; i < 8; i++)
            if (pthread_create(&t[i], nullptr, thread_main, reinterpret_cast<void *>(i + 1)))
                FAILX("pthread_create");
        for (int i = 0; i < 8; i++)
            pthread_join(t[i], nullptr);
    }
    if (key_dtor_runs != 160)
        FAILX("pthread_key destructor ran %d times, expected 160", key_dtor_runs);
    if (Tls::tls_dtor_runs != 80)
        FAILX("thread_local destructor ran %d times, expected 80", Tls::tls_dtor_runs);

    // the main thread's own thread_local and key value are destroyed at exit
    thread_main(reinterpret_cast<void *>(99));

    atexit_block = malloc(100);
    strcpy(static_cast<char *>(atexit_block), "atexit");
    dtor_block = malloc(100000);
    strcpy(static_cast<char *>(dtor_block), "destructor");
    static_vec = new std::vector<std::string>(100, std::string(100, 'v'));
    atexit(atexit_handler);
    return 0;
}
