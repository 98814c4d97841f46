/* Rust symbol names, readable: the v0 scheme (`_R...`, RFC 2603, what the Rust toolchain's own
 * libraries and newer programs use) and the legacy one (`_ZN...17h<hash>E`, Itanium-shaped, whose
 * hash and `$LT$`-style escapes __cxa_demangle leaves in). Crate disambiguators, hashes and
 * lifetimes are left out, as in rustc's own short form:
 *   _RNvXs_NtCs1_4core3fmtNtB4_7FormatterNtB6_5Debug3fmt  ->  <core::fmt::Formatter as core::fmt::Debug>::fmt
 * Input comes from symbol tables of arbitrary files: every read is bounds-checked, nesting and
 * output are limited, and anything not understood makes the result NULL (the caller keeps the
 * mangled name). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hr_symbolize.h"

#define RD_MAX_DEPTH 200
#define RD_MAX_OUT 8192

struct rd {
    const char *s; /* the symbol after "_R" */
    size_t n, pos;
    char *out;
    size_t len, cap;
    int depth;
    int quiet; /* >0: parse without printing (impl paths, instantiating crates) */
    int bad;
};

static void put_n(struct rd *r, const char *p, size_t n)
{
    if (r->quiet || r->bad)
        return;
    if (r->len + n + 1 > RD_MAX_OUT) {
        r->bad = 1;
        return;
    }
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap ? r->cap : 128;
        while (cap < r->len + n + 1)
            cap *= 2;
        char *o = realloc(r->out, cap);
        if (!o) {
            r->bad = 1;
            return;
        }
        r->out = o;
        r->cap = cap;
    }
    memcpy(r->out + r->len, p, n);
    r->len += n;
    r->out[r->len] = 0;
}

static void put(struct rd *r, const char *p) { put_n(r, p, strlen(p)); }

static void put_u64(struct rd *r, uint64_t v)
{
    char b[24];
    int i = sizeof b;
    b[--i] = 0;
    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(r, b + i);
}

static int peek(const struct rd *r) { return r->pos < r->n ? (unsigned char)r->s[r->pos] : 0; }

static int eat(struct rd *r, int c)
{
    if (peek(r) != c)
        return 0;
    r->pos++;
    return 1;
}

static int next(struct rd *r)
{
    if (r->pos >= r->n) {
        r->bad = 1;
        return 0;
    }
    return (unsigned char)r->s[r->pos++];
}

/* <base-62-number>: "_" is 0, digits then "_" are their value + 1. */
static uint64_t base62(struct rd *r)
{
    if (eat(r, '_'))
        return 0;
    uint64_t v = 0;
    for (;;) {
        int c = next(r);
        int d;
        if (c == '_')
            break;
        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'z')
            d = 10 + c - 'a';
        else if (c >= 'A' && c <= 'Z')
            d = 36 + c - 'A';
        else {
            r->bad = 1;
            return 0;
        }
        if (v > (UINT64_MAX - (uint64_t)d) / 62) {
            r->bad = 1;
            return 0;
        }
        v = v * 62 + (uint64_t)d;
    }
    if (v == UINT64_MAX) {
        r->bad = 1;
        return 0;
    }
    return v + 1;
}

/* <disambiguator> = "s" <base-62-number>, optional: its value, 0 when absent. */
static uint64_t disambiguator(struct rd *r) { return eat(r, 's') ? base62(r) + 1 : 0; }

static uint64_t decimal(struct rd *r)
{
    int c = peek(r);
    if (c < '0' || c > '9') {
        r->bad = 1;
        return 0;
    }
    r->pos++;
    if (c == '0')
        return 0;
    uint64_t v = (uint64_t)(c - '0');
    while ((c = peek(r)) >= '0' && c <= '9') {
        r->pos++;
        if (v > (UINT64_MAX - 9) / 10) {
            r->bad = 1;
            return 0;
        }
        v = v * 10 + (uint64_t)(c - '0');
    }
    return v;
}

/* <undisambiguated-identifier> = ["u"] <decimal-number> ["_"] <bytes>: where the bytes are. */
static void ident_raw(struct rd *r, const char **p, size_t *len, int *puny)
{
    *puny = eat(r, 'u');
    uint64_t n = decimal(r);
    eat(r, '_');
    if (r->bad || n > r->n - r->pos) {
        r->bad = 1;
        *p = "";
        *len = 0;
        return;
    }
    *p = r->s + r->pos;
    *len = (size_t)n;
    r->pos += (size_t)n;
}

static void put_ident(struct rd *r, const char *p, size_t len, int puny)
{
    if (puny) { /* non-ASCII identifiers: shown in their encoded form */
        put(r, "punycode{");
        put_n(r, p, len);
        put(r, "}");
    } else {
        put_n(r, p, len);
    }
}

static int rd_path(struct rd *r, int in_value);
static void rd_type(struct rd *r);
static void rd_const(struct rd *r);

enum { BACK_PATH, BACK_TYPE, BACK_CONST };

/* Follow a back-reference (after its "B"): parse the path, type or constant that starts at an
 * earlier offset, then come back. */
static void backref(struct rd *r, int kind, int in_value)
{
    size_t at = r->pos - 1; /* the "B" */
    uint64_t target = base62(r);
    if (r->bad || target >= at || ++r->depth > RD_MAX_DEPTH) {
        r->bad = 1;
        return;
    }
    size_t saved = r->pos;
    r->pos = (size_t)target;
    if (kind == BACK_PATH)
        rd_path(r, in_value);
    else if (kind == BACK_TYPE)
        rd_type(r);
    else
        rd_const(r);
    r->pos = saved;
    r->depth--;
}

static void lifetime_skip(struct rd *r)
{
    if (eat(r, 'L'))
        base62(r);
}

static void binder_skip(struct rd *r)
{
    if (eat(r, 'G'))
        base62(r);
}

static const char *basic_type(int c)
{
    switch (c) {
    case 'a': return "i8";
    case 'b': return "bool";
    case 'c': return "char";
    case 'd': return "f64";
    case 'e': return "str";
    case 'f': return "f32";
    case 'h': return "u8";
    case 'i': return "isize";
    case 'j': return "usize";
    case 'l': return "i32";
    case 'm': return "u32";
    case 'n': return "i128";
    case 'o': return "u128";
    case 's': return "i16";
    case 't': return "u16";
    case 'u': return "()";
    case 'v': return "...";
    case 'x': return "i64";
    case 'y': return "u64";
    case 'z': return "!";
    case 'p': return "_";
    default: return NULL;
    }
}

static void rd_const(struct rd *r)
{
    if (eat(r, 'p')) {
        put(r, "_");
        return;
    }
    if (eat(r, 'B')) {
        backref(r, BACK_CONST, 0);
        return;
    }
    int t = next(r);
    int neg = 0;
    if (strchr("ahijlmnostxy", t) && t) {
        neg = eat(r, 'n');
    } else if (t != 'b' && t != 'c') {
        r->bad = 1; /* constants of other types (references, arrays, structs): not shown */
        return;
    }
    unsigned __int128 v = 0;
    int c;
    while ((c = next(r)) != '_' && !r->bad) {
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? 10 + c - 'a' : -1;
        if (d < 0 || (v >> 124)) {
            r->bad = 1; /* not hex, or beyond 128 bits */
            return;
        }
        v = v * 16 + (unsigned)d;
    }
    if (r->bad)
        return;
    if (t == 'b') {
        if (v > 1) {
            r->bad = 1;
            return;
        }
        put(r, v ? "true" : "false");
    } else if (t == 'c') {
        if (v >= 0x20 && v < 0x7f && v != '\'' && v != '\\') {
            char b[4] = {'\'', (char)v, '\'', 0};
            put(r, b);
        } else {
            r->bad = 1;
        }
    } else {
        if (neg)
            put(r, "-");
        char b[48];
        int i = sizeof b;
        b[--i] = 0;
        do {
            b[--i] = (char)('0' + (int)(v % 10));
            v /= 10;
        } while (v);
        put(r, b + i);
    }
}

/* Generic arguments up to "E", after open ("<" or "::<"): lifetimes are left out, and a list
 * of nothing but lifetimes is not printed at all. */
static void generic_args(struct rd *r, const char *open)
{
    int first = 1;
    while (!eat(r, 'E') && !r->bad) {
        if (eat(r, 'L')) {
            base62(r);
            continue;
        }
        put(r, first ? open : ", ");
        first = 0;
        if (eat(r, 'K'))
            rd_const(r);
        else
            rd_type(r);
    }
    if (!first)
        put(r, ">");
}

/* A dyn trait: its path, then "p" <name> <type> bindings of associated types, printed inside
 * the path's generic arguments. */
static void dyn_trait(struct rd *r)
{
    rd_path(r, 0);
    int open = 0;
    while (peek(r) == 'p' && !r->bad) {
        r->pos++;
        if (!open) {
            if (!r->quiet && r->len && r->out[r->len - 1] == '>') {
                r->len--; /* reopen the path's own argument list */
                put(r, ", ");
            } else {
                put(r, "<");
            }
            open = 1;
        } else {
            put(r, ", ");
        }
        const char *p;
        size_t len;
        int puny;
        ident_raw(r, &p, &len, &puny);
        put_ident(r, p, len, puny);
        put(r, " = ");
        rd_type(r);
    }
    if (open)
        put(r, ">");
}

/* Types up to "E", separated by ", ": how many there were. */
static int type_list(struct rd *r)
{
    int n = 0;
    while (!eat(r, 'E') && !r->bad) {
        if (n++)
            put(r, ", ");
        rd_type(r);
    }
    return n;
}

/* A function pointer type (after its 'F'): fn(args) -> ret, with unsafe and extern "ABI". */
static void rd_fn_type(struct rd *r)
{
    binder_skip(r);
    if (eat(r, 'U'))
        put(r, "unsafe ");
    if (eat(r, 'K')) {
        put(r, "extern \"");
        if (eat(r, 'C')) {
            put(r, "C");
        } else {
            const char *p;
            size_t len;
            int puny;
            ident_raw(r, &p, &len, &puny);
            for (size_t i = 0; i < len && !r->bad; i++)
                put_n(r, p[i] == '_' ? "-" : p + i, 1);
        }
        put(r, "\" ");
    }
    put(r, "fn(");
    type_list(r);
    put(r, ")");
    if (eat(r, 'u')) { /* returns () */
    } else {
        put(r, " -> ");
        rd_type(r);
    }
}

/* A trait object type (after its 'D'): dyn Trait + Trait, then its lifetime. */
static void rd_dyn_type(struct rd *r)
{
    binder_skip(r);
    put(r, "dyn ");
    int n = 0;
    while (!eat(r, 'E') && !r->bad) {
        if (n++)
            put(r, " + ");
        dyn_trait(r);
    }
    if (!eat(r, 'L')) {
        r->bad = 1;
        return;
    }
    base62(r);
}

static void rd_type(struct rd *r)
{
    if (++r->depth > RD_MAX_DEPTH) {
        r->bad = 1;
        return;
    }
    int c = peek(r);
    const char *basic = basic_type(c);
    if (basic) {
        r->pos++;
        put(r, basic);
        r->depth--;
        return;
    }
    switch (c) {
    case 'A':
        r->pos++;
        put(r, "[");
        rd_type(r);
        put(r, "; ");
        rd_const(r);
        put(r, "]");
        break;
    case 'S':
        r->pos++;
        put(r, "[");
        rd_type(r);
        put(r, "]");
        break;
    case 'T': {
        r->pos++;
        put(r, "(");
        put(r, type_list(r) == 1 ? ",)" : ")");
        break;
    }
    case 'R':
    case 'Q':
        r->pos++;
        put(r, c == 'R' ? "&" : "&mut ");
        lifetime_skip(r);
        rd_type(r);
        break;
    case 'P':
    case 'O':
        r->pos++;
        put(r, c == 'P' ? "*const " : "*mut ");
        rd_type(r);
        break;
    case 'F':
        r->pos++;
        rd_fn_type(r);
        break;
    case 'D':
        r->pos++;
        rd_dyn_type(r);
        break;
    case 'B':
        r->pos++;
        backref(r, BACK_TYPE, 0);
        break;
    default:
        rd_path(r, 0); /* an ADT, or a path the grammar allows here */
        break;
    }
    r->depth--;
}

/* Returns 0; r->bad says whether it parsed. in_value: the path names a value (function,
 * static), so generic arguments print as `::<...>`; in a type they print as `<...>`. */
static int rd_path(struct rd *r, int in_value)
{
    if (++r->depth > RD_MAX_DEPTH) {
        r->bad = 1;
        return 0;
    }
    int c = next(r);
    const char *p;
    size_t len;
    int puny;
    switch (c) {
    case 'C': /* crate root; its disambiguator (a hash) is left out */
        disambiguator(r);
        ident_raw(r, &p, &len, &puny);
        put_ident(r, p, len, puny);
        break;
    case 'M': /* <Type>: an inherent impl; the path of the impl itself is not shown */
        disambiguator(r);
        r->quiet++;
        rd_path(r, 0);
        r->quiet--;
        put(r, "<");
        rd_type(r);
        put(r, ">");
        break;
    case 'X': /* <Type as Trait>: a trait impl */
        disambiguator(r);
        r->quiet++;
        rd_path(r, 0);
        r->quiet--;
        /* fall through */
    case 'Y': /* <Type as Trait>: in the trait's definition */
        put(r, "<");
        rd_type(r);
        put(r, " as ");
        rd_path(r, 0);
        put(r, ">");
        break;
    case 'N': {
        int ns = next(r);
        if (!((ns >= 'a' && ns <= 'z') || (ns >= 'A' && ns <= 'Z'))) {
            r->bad = 1;
            break;
        }
        rd_path(r, in_value);
        uint64_t dis = disambiguator(r);
        ident_raw(r, &p, &len, &puny);
        if (ns >= 'A' && ns <= 'Z') { /* closures, shims and other compiler-made items */
            put(r, "::{");
            put(r, ns == 'C' ? "closure" : ns == 'S' ? "shim" : (char[]){(char)ns, 0});
            if (len) {
                put(r, ":");
                put_ident(r, p, len, puny);
            }
            put(r, "#");
            put_u64(r, dis);
            put(r, "}");
        } else if (len) {
            put(r, "::");
            put_ident(r, p, len, puny);
        }
        break;
    }
    case 'I':
        rd_path(r, in_value);
        generic_args(r, in_value ? "::<" : "<");
        break;
    case 'B':
        backref(r, BACK_PATH, in_value);
        break;
    default:
        r->bad = 1;
        break;
    }
    r->depth--;
    return 0;
}

static char *rust_v0(const char *name)
{
    struct rd r = {0};
    r.s = name + 2;
    r.n = strlen(r.s);
    /* An encoding version other than the implied 0 is not known. */
    if (r.n == 0 || (r.s[0] >= '0' && r.s[0] <= '9'))
        return NULL;
    rd_path(&r, 1);
    /* The instantiating crate, then maybe a suffix the compiler or linker added
     * (".llvm.1234"): neither is shown. */
    if (!r.bad && r.pos < r.n && strchr("CMXYNIB", r.s[r.pos])) {
        r.quiet++;
        rd_path(&r, 0);
        r.quiet--;
    }
    if (!r.bad && r.pos < r.n && r.s[r.pos] != '.' && r.s[r.pos] != '$')
        r.bad = 1;
    if (r.bad || !r.out) {
        free(r.out);
        return NULL;
    }
    return r.out;
}

/* ---------- legacy ---------- */

static int is_hex(int c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

/* One path element of a legacy name, its escapes decoded. */
static void legacy_element(struct rd *r, const char *p, size_t n)
{
    if (n >= 2 && p[0] == '_' && p[1] == '$')
        p++, n--; /* an element starting with an escape has a '_' in front */
    static const struct {
        const char *esc, *to;
    } table[] = {{"$SP$", "@"}, {"$BP$", "*"}, {"$RF$", "&"}, {"$LT$", "<"}, {"$GT$", ">"},
                 {"$LP$", "("}, {"$RP$", ")"}, {"$C$", ","}};
    size_t i = 0;
    while (i < n && !r->bad) {
        if (p[i] == '$') {
            size_t k;
            for (k = 0; k < sizeof table / sizeof table[0]; k++) {
                size_t l = strlen(table[k].esc);
                if (i + l <= n && !memcmp(p + i, table[k].esc, l)) {
                    put(r, table[k].to);
                    i += l;
                    break;
                }
            }
            if (k < sizeof table / sizeof table[0])
                continue;
            /* $uXX$: a character by its code */
            if (i + 2 < n && p[i + 1] == 'u') {
                size_t j = i + 2;
                unsigned v = 0;
                while (j < n && is_hex(p[j]) && v < 0x110000)
                    v = v * 16 + (unsigned)(p[j] <= '9' ? p[j] - '0' : p[j] - 'a' + 10), j++;
                if (j < n && p[j] == '$' && j > i + 2 && v >= 0x20 && v < 0x7f) {
                    char b[2] = {(char)v, 0};
                    put(r, b);
                    i = j + 1;
                    continue;
                }
            }
            r->bad = 1;
        } else if (p[i] == '.' && i + 1 < n && p[i + 1] == '.') {
            put(r, "::");
            i += 2;
        } else {
            put_n(r, p + i, 1);
            i++;
        }
    }
}

/* _ZN <len><element>... 17h<16 hex digits> E [suffix] */
static char *rust_legacy(const char *name)
{
    const char *p = name + 3, *end = name + strlen(name);
    const char *el[256];
    size_t len[256], n = 0;
    while (p < end && *p != 'E') {
        if (*p < '1' || *p > '9' || n == 256)
            return NULL;
        size_t l = 0;
        while (p < end && *p >= '0' && *p <= '9') {
            l = l * 10 + (size_t)(*p++ - '0');
            if (l > 4096)
                return NULL;
        }
        if (l > (size_t)(end - p))
            return NULL;
        el[n] = p;
        len[n++] = l;
        p += l;
    }
    if (p >= end || n < 2 || len[n - 1] != 17 || el[n - 1][0] != 'h')
        return NULL;
    for (int i = 1; i < 17; i++)
        if (!is_hex(el[n - 1][i]))
            return NULL;
    p++; /* E */
    if (p < end && *p != '.')
        return NULL; /* something follows: an Itanium name with parameters, not Rust's */
    struct rd r = {0};
    for (size_t i = 0; i + 1 < n && !r.bad; i++) {
        if (i)
            put(&r, "::");
        legacy_element(&r, el[i], len[i]);
    }
    if (r.bad || !r.out) {
        free(r.out);
        return NULL;
    }
    return r.out;
}

char *hr_rust_demangle(const char *name)
{
    if (name[0] == '_' && name[1] == 'R')
        return rust_v0(name);
    if (!strncmp(name, "_ZN", 3))
        return rust_legacy(name);
    return NULL;
}
