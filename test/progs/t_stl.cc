// Ordinary heavy C++ container use (vector, string, map, unordered_map, shared_ptr, list) from
// several threads: the allocator is not the subject here, so this is also built with ASan.
// Prints a checksum that must be the same bare, preloaded and sanitized.
#include <pthread.h>
#include <stdio.h>
#include <algorithm>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

// A global with a heap-allocating constructor: runs before main, possibly the first allocation.
static std::string global_str(1000, 'g');

static unsigned long work(unsigned seed)
{
    std::map<std::string, std::vector<int>> m;
    std::unordered_map<int, std::string> um;
    std::list<std::shared_ptr<std::string>> l;
    unsigned x = seed;
    for (int i = 0; i < 20000; i++) {
        x = x * 1103515245u + 12345u;
        std::string key = "k" + std::to_string(x % 3000);
        m[key].push_back(i);
        um[static_cast<int>(x % 5000)] += static_cast<char>('a' + i % 26);
        if (i % 3 == 0)
            l.push_back(std::make_shared<std::string>(key + key));
        if (l.size() > 500)
            l.pop_front();
        if (i % 1000 == 0)
            m.erase(m.begin());
    }
    std::vector<std::string> keys;
    for (auto &kv : m)
        keys.push_back(kv.first);
    std::sort(keys.begin(), keys.end(), [](const std::string &a, const std::string &b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
    unsigned long sum = keys.size();
    for (auto &k : keys)
        for (int v : m[k])
            sum = sum * 31 + static_cast<unsigned long>(v);
    for (auto &kv : um)
        sum += kv.second.size() * static_cast<unsigned long>(kv.first);
    for (auto &p : l)
        sum += p->size();
    return sum;
}

static unsigned long results[4];

static void *thread_main(void *arg)
{
    long i = reinterpret_cast<long>(arg);
    results[i] = work(static_cast<unsigned>(i) + 1);
    return nullptr;
}

int main()
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], nullptr, thread_main, reinterpret_cast<void *>(i));
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], nullptr);
    unsigned long total = global_str.size();
    for (unsigned long r : results)
        total = total * 7 + r;
    printf("checksum %lu\n", total);
    return 0;
}
