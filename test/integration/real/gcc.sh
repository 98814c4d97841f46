# requires: gcc g++ nm
# The compiler itself under the shim (cc1, cc1plus, as, collect2, ld): compile, list symbols,
# link and run the result.
set -e
cat >prog.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct node { struct node *next; char name[32]; };
static struct node *push(struct node *h, int i)
{
    struct node *n = malloc(sizeof *n);
    snprintf(n->name, sizeof n->name, "node-%d", i);
    n->next = h;
    return n;
}
int counter;
int main(void)
{
    struct node *h = NULL;
    for (int i = 0; i < 1000; i++) h = push(h, i);
    size_t total = 0;
    while (h) { struct node *n = h->next; total += strlen(h->name); free(h); h = n; }
    printf("total %zu\n", total);
    return 0;
}
C
cat >prog2.cc <<'CC'
#include <iostream>
#include <map>
#include <string>
#include <vector>
template <typename T> T sum(const std::vector<T> &v) { T s{}; for (auto &x : v) s += x; return s; }
int main()
{
    std::map<std::string, std::vector<int>> m;
    for (int i = 0; i < 10000; i++) m["k" + std::to_string(i % 100)].push_back(i);
    long t = 0;
    for (auto &kv : m) t += sum(kv.second);
    std::cout << m.size() << " " << t << "\n";
}
CC
gcc -O2 -c prog.c -o prog.o
nm prog.o
gcc -O2 prog.o -o prog
./prog
g++ -O2 -std=c++17 prog2.cc -o prog2
nm -C prog2 | grep -c ' T ' >/dev/null
./prog2
