// A C++ STL workload for bench/access_alloc.sh: std::map, std::unordered_map, std::string and
// std::vector churn, std::shared_ptr records, reached through a recursion of varying depth so
// allocations carry realistic stacks. Deterministic output.
// Usage: stl_churn [ROUNDS]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Record {
    std::string name;
    std::vector<int> vals;
};

uint64_t rng = 12345;
uint32_t next()
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

struct Work {
    std::map<std::string, std::vector<int>> index;
    std::unordered_map<uint32_t, std::shared_ptr<Record>> live;
    uint64_t sum = 0;

    __attribute__((noinline)) void leaf(uint32_t r)
    {
        std::string key = "key" + std::to_string(r % 5000);
        key += '/';
        key += std::to_string(r % 17);
        std::vector<int> &v = index[key];
        v.push_back((int)r);
        if (v.size() > 8)
            v.clear();
        auto rec = std::make_shared<Record>();
        rec->name = key + "#" + std::to_string(r);
        rec->vals.assign(r % 24 + 1, (int)r);
        live[r % 2048] = rec;
        sum += rec->name.size() + v.size();
        if (r % 64 == 0) {
            std::vector<std::string> tmp;
            for (int i = 0; i < 16; i++)
                tmp.push_back(rec->name + std::to_string(i));
            sum += tmp.back().size();
        }
    }
    __attribute__((noinline)) void down(int depth, uint32_t r)
    {
        if (depth == 0)
            leaf(r);
        else
            down(depth - 1, r);
        __asm__ volatile("" ::: "memory"); // every level keeps its frame
    }
};

} // namespace

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 400000;
    Work w;
    for (long i = 0; i < rounds; i++) {
        uint32_t r = next();
        w.down(3 + (int)(r % 13), r);
        if (i % 100000 == 99999)
            w.index.clear();
    }
    printf("%llu %zu %zu\n", (unsigned long long)w.sum, w.index.size(), w.live.size());
    return 0;
}
