/* cu-launch-lint: rule CU-LAUN0002 (default_stream_kernel_launch) as a tool.
 *
 * Reads CUDA/C/C++ sources and evaluates every triple-chevron kernel launch. A launch takes the
 * default stream when its execution configuration has no fourth argument, or a null stream there
 * (0, NULL, nullptr, cudaStreamLegacy, a cast of those to cudaStream_t). Its result is true only in
 * a translation unit (here: one file) that takes part in stream work: it creates a stream or names
 * the type cudaStream_t (a declaration, a parameter). A unit that defines
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, or any unit under --per-thread, gets false throughout.
 *
 * The reading is token based: a small lexer drops comments, keeps string and character literals
 * (raw strings too) as single tokens, keeps line numbers, and sets preprocessor directives apart.
 * #if 0 / #else / #endif (and #if 1 / #else) are honoured; other conditionals are read in full.
 *
 * Exit status: 1 when any result is true, 0 when none is, 2 on bad usage or an unreadable path.
 * See docs/lint.md for the documentation. */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* realpath */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------------------------------------
 * small utilities */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "cu-launch-lint: out of memory\n");
        exit(2);
    }
    return q;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xrealloc(NULL, n);
    memcpy(d, s, n);
    return d;
}

typedef struct {
    char *s;
    size_t n, cap;
} sbuf_t;

static void sb_putn(sbuf_t *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->s = xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static void sb_puts(sbuf_t *b, const char *s) { sb_putn(b, s, strlen(s)); }

static char *sb_take(sbuf_t *b)
{
    if (!b->s) sb_putn(b, "", 0);
    char *s = b->s;
    b->s = NULL;
    b->n = b->cap = 0;
    return s;
}

/* ---------------------------------------------------------------------------------------------
 * tokens */

enum { T_IDENT, T_NUM, T_STR, T_CHAR, T_PUNCT };

typedef struct {
    int kind;
    int line;
    size_t off, len; /* into the file's text */
    int space;       /* whitespace, a comment or a line break came before it */
    int in_cfg;      /* part of a launch's <<< ... >>> */
} tok_t;

typedef struct {
    tok_t *v;
    size_t n, cap;
} toks_t;

typedef struct {
    size_t lo, hi; /* a directive's tokens in pp: [lo, hi) */
} range_t;

typedef struct {
    const char *path;
    const char *s; /* text */
    size_t n;
    int raw_strings; /* C++ raw strings (not in .c files) */
    toks_t code;     /* tokens outside directives (and outside #if 0) */
    toks_t pp;       /* tokens of directives */
    range_t *dirs;
    size_t ndirs, capdirs;
    int per_thread; /* #define CUDA_API_PER_THREAD_DEFAULT_STREAM seen */
} unit_t;

static void toks_push(toks_t *t, tok_t k)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->v = xrealloc(t->v, t->cap * sizeof *t->v);
    }
    t->v[t->n++] = k;
}

static int tis(const unit_t *u, const tok_t *t, const char *s)
{
    size_t n = strlen(s);
    return t->len == n && memcmp(u->s + t->off, s, n) == 0;
}

static int is_ident(const unit_t *u, const tok_t *t, const char *s)
{
    return t->kind == T_IDENT && tis(u, t, s);
}

static int is_punct(const unit_t *u, const tok_t *t, const char *s)
{
    return t->kind == T_PUNCT && tis(u, t, s);
}

static int in_list(const unit_t *u, const tok_t *t, const char *const *list)
{
    for (; *list; ++list)
        if (tis(u, t, *list)) return 1;
    return 0;
}

/* Token text joined as written, each run of whitespace/comments/line breaks as one space. */
static char *join(const unit_t *u, const tok_t *t, size_t a, size_t b)
{
    sbuf_t o = {0};
    for (size_t i = a; i < b; ++i) {
        if (i > a && t[i].space) sb_putn(&o, " ", 1);
        for (size_t k = 0; k < t[i].len; ++k) {
            char c = u->s[t[i].off + k];
            if (c == '\\' && k + 1 < t[i].len && (u->s[t[i].off + k + 1] == '\n' || u->s[t[i].off + k + 1] == '\r')) {
                /* a line splice inside a token */
                while (k + 1 < t[i].len && (u->s[t[i].off + k + 1] == '\n' || u->s[t[i].off + k + 1] == '\r')) ++k;
                continue;
            }
            if (c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f') c = ' ';
            sb_putn(&o, &c, 1);
        }
    }
    return sb_take(&o);
}

/* ---------------------------------------------------------------------------------------------
 * lexer */

static int ident_start(unsigned char c) { return isalpha(c) || c == '_' || c == '$' || c >= 0x80; }
static int ident_char(unsigned char c) { return isalnum(c) || c == '_' || c == '$' || c >= 0x80; }

static const char *const punct3[] = {"<<<", ">>>", "<<=", ">>=", "...", "->*", "<=>", NULL};
static const char *const punct2[] = {"::", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--",
                                     "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##", ".*", NULL};

/* conditional-inclusion states, one per open #if */
enum { C_NORMAL, C_IF0, C_IF0_ELSE, C_IF1, C_IF1_ELSE };

typedef struct {
    unit_t *u;
    int *cond;
    size_t ncond, capcond;
    int skip; /* > 0: inside a group that is not compiled (nesting depth within it) */
} lexer_t;

static int directive_is(const unit_t *u, size_t lo, size_t hi, const char *name)
{
    return hi > lo + 1 && is_ident(u, &u->pp.v[lo + 1], name);
}

/* A directive's tokens are pp.v[lo, hi); the first is '#'. Returns whether to keep them. */
static int end_directive(lexer_t *L, size_t lo, size_t hi)
{
    unit_t *u = L->u;
    const tok_t *t = u->pp.v;
    int is_if = directive_is(u, lo, hi, "if") || directive_is(u, lo, hi, "ifdef") || directive_is(u, lo, hi, "ifndef");
    int is_else = directive_is(u, lo, hi, "else") || directive_is(u, lo, hi, "elif") ||
                  directive_is(u, lo, hi, "elifdef") || directive_is(u, lo, hi, "elifndef");
    int is_endif = directive_is(u, lo, hi, "endif");
    int *top = L->ncond ? &L->cond[L->ncond - 1] : NULL;

    if (L->skip > 0) {
        if (is_if) ++L->skip;
        else if (is_endif) {
            if (--L->skip == 0 && L->ncond) --L->ncond;
        } else if (is_else && L->skip == 1 && top && *top == C_IF0) {
            *top = C_IF0_ELSE;
            L->skip = 0;
        }
        return 0;
    }
    if (is_if) {
        int st = C_NORMAL;
        if (directive_is(u, lo, hi, "if") && hi == lo + 3 && t[lo + 2].kind == T_NUM) {
            if (tis(u, &t[lo + 2], "0")) st = C_IF0;
            else if (tis(u, &t[lo + 2], "1")) st = C_IF1;
        }
        if (L->ncond == L->capcond) {
            L->capcond = L->capcond ? 2 * L->capcond : 16;
            L->cond = xrealloc(L->cond, L->capcond * sizeof *L->cond);
        }
        L->cond[L->ncond++] = st;
        if (st == C_IF0) L->skip = 1;
        return 0;
    }
    if (is_else) {
        if (top && *top == C_IF1) {
            *top = C_IF1_ELSE;
            L->skip = 1;
        }
        return 0;
    }
    if (is_endif) {
        if (L->ncond) --L->ncond;
        return 0;
    }
    if (directive_is(u, lo, hi, "define") && hi > lo + 2 && is_ident(u, &t[lo + 2], "CUDA_API_PER_THREAD_DEFAULT_STREAM"))
        u->per_thread = 1;
    return 1;
}

static void lex(unit_t *u)
{
    lexer_t L = {0};
    L.u = u;
    const char *s = u->s;
    size_t n = u->n, i = 0, dir_lo = 0;
    int line = 1, bol = 1, space = 1, in_dir = 0;

    while (i <= n) {
        if (i == n || s[i] == '\n') {
            if (in_dir) {
                if (end_directive(&L, dir_lo, u->pp.n)) {
                    if (u->ndirs == u->capdirs) {
                        u->capdirs = u->capdirs ? 2 * u->capdirs : 32;
                        u->dirs = xrealloc(u->dirs, u->capdirs * sizeof *u->dirs);
                    }
                    u->dirs[u->ndirs].lo = dir_lo;
                    u->dirs[u->ndirs].hi = u->pp.n;
                    ++u->ndirs;
                } else {
                    u->pp.n = dir_lo;
                }
                in_dir = 0;
            }
            if (i == n) break;
            ++line;
            ++i;
            bol = 1;
            space = 1;
            continue;
        }
        unsigned char c = (unsigned char)s[i];
        if (c == '\\' && (i + 1 < n && (s[i + 1] == '\n' || (s[i + 1] == '\r' && i + 2 < n && s[i + 2] == '\n')))) {
            i += s[i + 1] == '\n' ? 2 : 3; /* line splice */
            ++line;
            space = 1;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++i;
            space = 1;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n') {
                if (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') {
                    ++line;
                    ++i;
                }
                ++i;
            }
            space = 1;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i < n && !(s[i] == '*' && i + 1 < n && s[i + 1] == '/')) {
                if (s[i] == '\n') ++line;
                ++i;
            }
            i = i < n ? i + 2 : n;
            space = 1;
            continue;
        }
        if (c == '#' && bol && !in_dir) {
            in_dir = 1;
            dir_lo = u->pp.n;
        }
        bol = 0;

        tok_t t = {0};
        t.off = i;
        t.line = line;
        t.space = space;
        space = 0;
        if (ident_start(c)) {
            size_t j = i;
            while (j < n && ident_char((unsigned char)s[j])) ++j;
            size_t len = j - i;
            int raw = u->raw_strings && j < n && s[j] == '"' && s[j - 1] == 'R' &&
                      (len == 1 || (len == 2 && strchr("LuU", s[i])) || (len == 3 && s[i] == 'u' && s[i + 1] == '8'));
            if (raw) {
                /* R"delim( ... )delim" */
                size_t d0 = j + 1, d1 = d0;
                while (d1 < n && d1 - d0 <= 16 && s[d1] != '(' && s[d1] != '"' && s[d1] != '\\' && s[d1] != ' ' &&
                       s[d1] != '\n')
                    ++d1;
                if (d1 < n && s[d1] == '(') {
                    size_t dl = d1 - d0, k = d1 + 1;
                    for (; k < n; ++k) {
                        if (s[k] == '\n') ++line;
                        if (s[k] == ')' && k + 1 + dl < n && memcmp(s + k + 1, s + d0, dl) == 0 && s[k + 1 + dl] == '"')
                            break;
                    }
                    j = k < n ? k + dl + 2 : n;
                    t.kind = T_STR;
                    t.len = j - i;
                    i = j;
                    toks_push(in_dir ? &u->pp : &u->code, t);
                    if (!in_dir && L.skip) --u->code.n;
                    continue;
                }
            }
            t.kind = T_IDENT;
            t.len = len;
            i = j;
        } else if (isdigit(c) || (c == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1]))) {
            size_t j = i + 1;
            while (j < n) {
                char d = s[j];
                if ((d == '+' || d == '-') && strchr("eEpP", s[j - 1])) ++j;
                else if (ident_char((unsigned char)d) || d == '.') ++j;
                else if (d == '\'' && j + 1 < n && ident_char((unsigned char)s[j + 1])) ++j; /* 1'000 */
                else break;
            }
            t.kind = T_NUM;
            t.len = j - i;
            i = j;
        } else if (c == '"' || c == '\'') {
            size_t j = i + 1;
            while (j < n && s[j] != (char)c && s[j] != '\n') {
                if (s[j] == '\\' && j + 1 < n) {
                    if (s[j + 1] == '\n') ++line;
                    ++j;
                }
                ++j;
            }
            if (j < n && s[j] == (char)c) ++j; /* an unterminated literal ends at the line break */
            t.kind = c == '"' ? T_STR : T_CHAR;
            t.len = j - i;
            i = j;
        } else {
            size_t len = 1;
            for (const char *const *p = punct3; *p && len == 1; ++p)
                if (i + 3 <= n && memcmp(s + i, *p, 3) == 0) len = 3;
            for (const char *const *p = punct2; *p && len == 1; ++p)
                if (i + 2 <= n && memcmp(s + i, *p, 2) == 0) len = 2;
            t.kind = T_PUNCT;
            t.len = len;
            i += len;
        }
        if (in_dir) toks_push(&u->pp, t);
        else if (!L.skip) toks_push(&u->code, t);
    }
    free(L.cond);
}

/* ---------------------------------------------------------------------------------------------
 * token-level helpers */

static int open_kind(const unit_t *u, const tok_t *t)
{
    return is_punct(u, t, "(") || is_punct(u, t, "[") || is_punct(u, t, "{");
}

static int close_kind(const unit_t *u, const tok_t *t)
{
    return is_punct(u, t, ")") || is_punct(u, t, "]") || is_punct(u, t, "}");
}

/* Closing angle brackets in a token: '>' 1, '>>' 2, '>>>' 3; 0 otherwise. */
static int closers(const unit_t *u, const tok_t *t)
{
    if (t->kind != T_PUNCT) return 0;
    if (tis(u, t, ">")) return 1;
    if (tis(u, t, ">>")) return 2;
    if (tis(u, t, ">>>")) return 3;
    return 0;
}

/* Index of the bracket matching the opener at i, searching up to hi; hi when none. */
static size_t match_fwd(const unit_t *u, const tok_t *t, size_t i, size_t hi)
{
    int d = 0;
    for (size_t j = i; j < hi; ++j) {
        if (open_kind(u, &t[j])) ++d;
        else if (close_kind(u, &t[j]) && --d == 0) return j;
    }
    return hi;
}

/* Index of the bracket matching the closer at i, searching down to lo; (size_t)-1 when none. */
static size_t match_back(const unit_t *u, const tok_t *t, size_t i, size_t lo)
{
    int d = 0;
    for (size_t j = i + 1; j-- > lo;) {
        if (close_kind(u, &t[j])) ++d;
        else if (open_kind(u, &t[j]) && --d == 0) return j;
    }
    return (size_t)-1;
}

static int stops_angles(const unit_t *u, const tok_t *t)
{
    return is_punct(u, t, ";") || is_punct(u, t, "{") || is_punct(u, t, "}") || is_punct(u, t, "&&") ||
           is_punct(u, t, "||") || is_punct(u, t, "?") || is_punct(u, t, "<<<");
}

/* The closing angle matching the template argument list ending at closer i: index of the '<'.
 * Returns (size_t)-1 when the angles do not balance. */
static size_t angle_back(const unit_t *u, const tok_t *t, size_t i, size_t lo)
{
    int depth = closers(u, &t[i]), paren = 0;
    for (size_t j = i; j-- > lo;) {
        const tok_t *k = &t[j];
        if (close_kind(u, k)) ++paren;
        else if (open_kind(u, k)) {
            if (--paren < 0) return (size_t)-1;
        } else if (paren == 0) {
            if (is_punct(u, k, ";") || is_punct(u, k, "{") || is_punct(u, k, "}") || is_punct(u, k, "<<<"))
                return (size_t)-1;
            if (closers(u, k)) depth += closers(u, k);
            else if (is_punct(u, k, "<")) {
                if (--depth == 0) return j;
            } else if (is_punct(u, k, "<<")) {
                depth -= 2;
                if (depth <= 0) return (size_t)-1;
            }
        }
    }
    return (size_t)-1;
}

static const char *const follows_template[] = {"(", "::", "{", ",", ")", "]", ";", ">>>", NULL};

/* A '<' at i (after a name) opens a template argument list when its closer is found before
 * anything an argument list cannot hold, and what follows the closer cannot start an operand.
 * Returns the index of the closing token, or hi when it is read as "less than". */
static size_t angle_fwd(const unit_t *u, const tok_t *t, size_t i, size_t hi)
{
    int depth = 1, paren = 0;
    for (size_t j = i + 1; j < hi; ++j) {
        const tok_t *k = &t[j];
        if (open_kind(u, k)) ++paren;
        else if (close_kind(u, k)) {
            if (--paren < 0) return hi;
        } else if (paren == 0) {
            if (stops_angles(u, k) || is_punct(u, k, ">>>")) return hi;
            if (is_punct(u, k, "<")) ++depth;
            else if (closers(u, k)) {
                depth -= closers(u, k);
                if (depth < 0) return hi;
                if (depth == 0) {
                    if (j + 1 == hi || in_list(u, &t[j + 1], follows_template)) return j;
                    return hi;
                }
            }
        }
    }
    return hi;
}

/* Start of the (possibly qualified, possibly templated) name whose last token is at i:
 * ns::k, k<float, 4>, ::k, A<int>::k<T>, ~Foo. (size_t)-1 when t[i] ends no name. */
static size_t name_start(const unit_t *u, const tok_t *t, size_t i, size_t lo)
{
    size_t j = i;
    for (;;) {
        if (closers(u, &t[j])) {
            size_t a = angle_back(u, t, j, lo);
            if (a == (size_t)-1 || a == lo || t[a - 1].kind != T_IDENT) return (size_t)-1;
            j = a - 1;
        } else if (t[j].kind != T_IDENT) {
            return (size_t)-1;
        }
        if (j > lo && is_punct(u, &t[j - 1], "~")) --j;
        if (j > lo && is_punct(u, &t[j - 1], "::")) {
            if (j - 1 > lo && (t[j - 2].kind == T_IDENT || closers(u, &t[j - 2]))) {
                j -= 2;
                continue;
            }
            return j - 1; /* ::k */
        }
        return j;
    }
}

/* Split [lo, hi) on top-level commas; at most max pieces recorded, the count returned. */
static int split_args(const unit_t *u, const tok_t *t, size_t lo, size_t hi, range_t *out, int max)
{
    int n = 0, depth = 0;
    size_t a = lo;
    for (size_t j = lo; j < hi; ++j) {
        const tok_t *k = &t[j];
        if (open_kind(u, k)) ++depth;
        else if (close_kind(u, k)) --depth;
        else if (depth == 0 && is_punct(u, k, "<") && j > lo && t[j - 1].kind == T_IDENT) {
            size_t c = angle_fwd(u, t, j, hi);
            if (c < hi) j = c;
        } else if (depth == 0 && is_punct(u, k, ",")) {
            if (n < max) out[n].lo = a, out[n].hi = j;
            ++n;
            a = j + 1;
        }
    }
    if (n < max) out[n].lo = a, out[n].hi = hi;
    return n + 1;
}

/* ---------------------------------------------------------------------------------------------
 * the null stream */

static int int_literal(const unit_t *u, const tok_t *t, unsigned long long *v)
{
    if (t->kind != T_NUM || t->len >= 64) return 0;
    char b[64];
    size_t m = 0;
    for (size_t k = 0; k < t->len; ++k)
        if (u->s[t->off + k] != '\'') b[m++] = u->s[t->off + k];
    b[m] = '\0';
    while (m > 0 && strchr("uUlLzZ", b[m - 1])) b[--m] = '\0';
    if (m == 0) return 0;
    int base = 10;
    const char *p = b;
    if (b[0] == '0' && (b[1] == 'x' || b[1] == 'X')) base = 16, p = b + 2;
    else if (b[0] == '0' && (b[1] == 'b' || b[1] == 'B')) base = 2, p = b + 2;
    else if (b[0] == '0') base = 8;
    if (*p == '\0') return 0;
    char *end;
    errno = 0;
    *v = strtoull(p, &end, base);
    return *end == '\0' && errno == 0;
}

static const char *const stream_types[] = {"cudaStream_t", "CUstream", "CUstream_st", NULL};

/* Tokens [a, b) name a stream handle type: cudaStream_t, CUstream, struct CUstream_st *, void *. */
static int stream_type(const unit_t *u, const tok_t *t, size_t a, size_t b)
{
    int named = 0, star = 0, is_void = 0;
    if (a >= b) return 0;
    for (size_t j = a; j < b; ++j) {
        if (t[j].kind == T_IDENT) {
            if (in_list(u, &t[j], stream_types)) named = 1;
            else if (is_ident(u, &t[j], "void")) is_void = 1;
            else if (!is_ident(u, &t[j], "const") && !is_ident(u, &t[j], "struct")) return 0;
        } else if (is_punct(u, &t[j], "*")) star = 1;
        else if (!is_punct(u, &t[j], "::")) return 0;
    }
    return named || (is_void && star);
}

static const char *const null_names[] = {"NULL", "nullptr", "__null", "cudaStreamLegacy", "CU_STREAM_LEGACY", NULL};

/* Whether the stream argument [a, b) is the null (legacy default) stream. */
static int null_stream(const unit_t *u, const tok_t *t, size_t a, size_t b)
{
    int cast = 0;
    for (;;) {
        if (b - a >= 2 && is_punct(u, &t[a], "(") && match_fwd(u, t, a, b) == b - 1) {
            ++a, --b; /* (x) */
            continue;
        }
        if (b - a >= 3 && is_punct(u, &t[a], "(")) {
            size_t m = match_fwd(u, t, a, b);
            if (m < b - 1 && stream_type(u, t, a + 1, m)) {
                a = m + 1, cast = 1; /* (cudaStream_t)x */
                continue;
            }
        }
        if (b - a >= 6 && t[a].kind == T_IDENT &&
            (tis(u, &t[a], "static_cast") || tis(u, &t[a], "reinterpret_cast") || tis(u, &t[a], "const_cast")) &&
            is_punct(u, &t[a + 1], "<")) {
            size_t c = a + 2;
            while (c < b && !is_punct(u, &t[c], ">")) ++c;
            if (c + 1 < b && stream_type(u, t, a + 2, c) && is_punct(u, &t[c + 1], "(") &&
                match_fwd(u, t, c + 1, b) == b - 1) {
                a = c + 2, b = b - 1, cast = 1; /* static_cast<cudaStream_t>(x) */
                continue;
            }
        }
        if (b - a >= 3 && t[a].kind == T_IDENT && in_list(u, &t[a], stream_types) &&
            (is_punct(u, &t[a + 1], "(") || is_punct(u, &t[a + 1], "{")) && match_fwd(u, t, a + 1, b) == b - 1) {
            if (b - a == 3) return 1; /* cudaStream_t() / cudaStream_t{}: value-initialised */
            a += 2, b -= 1, cast = 1;
            continue;
        }
        break;
    }
    if (b - a != 1) return 0;
    if (t[a].kind == T_IDENT) return in_list(u, &t[a], null_names);
    unsigned long long v;
    if (int_literal(u, &t[a], &v)) return v == 0 || (cast && v == 1); /* 0x1 is cudaStreamLegacy */
    return 0;
}

/* ---------------------------------------------------------------------------------------------
 * findings */

typedef struct {
    char *file, *kernel, *grid, *block, *function, *why;
    int line;
    size_t off;
    int result;
} finding_t;

static finding_t *F;
static size_t nF, capF;

static void add_finding(finding_t f)
{
    if (nF == capF) {
        capF = capF ? 2 * capF : 64;
        F = xrealloc(F, capF * sizeof *F);
    }
    F[nF++] = f;
}

/* A launch read from the text; its result is decided once the whole unit is read. */
typedef struct {
    finding_t f;
    size_t s_lo, s_hi; /* the stream argument's tokens, when there is one */
    int has_stream;
    const tok_t *t;
} launch_t;

typedef struct {
    launch_t *v;
    size_t n, cap;
} launches_t;

static int g_warnings;

/* Read the launch whose '<<<' is t[k]; tokens [lo, hi) bound the search. */
static int read_launch(const unit_t *u, tok_t *t, size_t lo, size_t hi, size_t k, const char *function,
                       int in_macro, launches_t *out)
{
    if (k > lo && is_ident(u, &t[k - 1], "operator")) return 0;
    size_t end = k + 1;
    int depth = 0;
    for (; end < hi; ++end) {
        const tok_t *x = &t[end];
        if (open_kind(u, x)) ++depth;
        else if (close_kind(u, x)) {
            if (--depth < 0) break;
        } else if (depth == 0 && (is_punct(u, x, ";") || is_punct(u, x, "<<<"))) {
            end = hi;
            break;
        } else if (depth == 0 && is_punct(u, x, ">>>")) break;
    }
    if (end >= hi || !is_punct(u, &t[end], ">>>")) {
        fprintf(stderr, "%s:%d: warning: '<<<' without a matching '>>>'; not read as a launch\n", u->path, t[k].line);
        ++g_warnings;
        return 0;
    }
    if (!in_macro && (end + 1 >= hi || !is_punct(u, &t[end + 1], "("))) {
        fprintf(stderr, "%s:%d: warning: '<<<...>>>' not followed by an argument list; not read as a launch\n",
                u->path, t[k].line);
        ++g_warnings;
        return 0;
    }
    range_t arg[4];
    int nargs = split_args(u, t, k + 1, end, arg, 4);
    if (nargs < 2 || nargs > 4 || arg[0].lo == arg[0].hi || arg[1].lo == arg[1].hi ||
        (nargs >= 3 && arg[2].lo == arg[2].hi) || (nargs == 4 && arg[3].lo == arg[3].hi)) {
        if (!in_macro) {
            fprintf(stderr, "%s:%d: warning: execution configuration with %d argument(s); not read as a launch\n",
                    u->path, t[k].line, nargs);
            ++g_warnings;
        }
        return 0;
    }
    for (size_t j = k; j <= end; ++j) t[j].in_cfg = 1;

    launch_t L = {0};
    size_t ks = k > lo ? k - 1 : (size_t)-1;
    size_t start = (size_t)-1;
    if (ks != (size_t)-1) {
        if (is_punct(u, &t[ks], ")")) start = match_back(u, t, ks, lo); /* (*fp)<<<...>>> */
        else start = name_start(u, t, ks, lo);
    }
    if (start == (size_t)-1) {
        L.f.kernel = ks == (size_t)-1 ? xstrdup("?") : join(u, t, ks, k);
        start = ks == (size_t)-1 ? k : ks;
    } else {
        L.f.kernel = join(u, t, start, k);
    }
    L.f.file = xstrdup(u->path);
    L.f.line = t[start].line;
    L.f.off = t[start].off;
    L.f.grid = join(u, t, arg[0].lo, arg[0].hi);
    L.f.block = join(u, t, arg[1].lo, arg[1].hi);
    L.f.function = xstrdup(function);
    L.has_stream = nargs == 4;
    if (L.has_stream) L.s_lo = arg[3].lo, L.s_hi = arg[3].hi;
    L.t = t;
    if (out->n == out->cap) {
        out->cap = out->cap ? 2 * out->cap : 16;
        out->v = xrealloc(out->v, out->cap * sizeof *out->v);
    }
    out->v[out->n++] = L;
    return 1;
}

/* ---------------------------------------------------------------------------------------------
 * enclosing functions */

enum { S_NS, S_LINKAGE, S_CLASS, S_FUNC, S_BLOCK, S_OTHER, S_INNER };

typedef struct {
    int kind;
    char *name; /* S_NS, S_CLASS: the scope's name; S_FUNC: the function's full name */
    size_t stmt;
    int paren;
} scope_t;

static const char *const not_a_name[] = {
    "if", "for", "while", "switch", "catch", "return", "sizeof", "alignof", "_Alignof", "alignas", "_Alignas",
    "decltype", "typeof", "__typeof__", "__typeof", "__attribute__", "__attribute", "__declspec",
    "__launch_bounds__", "__cluster_dims__", "__maxnreg__", "__align__", "__builtin_align__", "noexcept", "throw",
    "static_assert", "_Static_assert", "_Pragma", "__pragma", "asm", "__asm__", "__asm", "requires", "defined",
    "__nv_register_params__", "__grid_constant__", NULL};

/* what may stand between a function's parameter list and its body */
static const char *const after_params[] = {"{",     ":",        "->",       "const",         "volatile", "noexcept",
                                           "throw", "override", "final",    "mutable",       "&",        "&&",
                                           "[",     "try",      "requires", "__attribute__", "constexpr", "consteval",
                                           NULL};

static const char *const class_keys[] = {"struct", "class", "union", NULL};

/* Skip "template < ... >" starting at i; returns the index after it, or i when t[i] starts none. */
static size_t skip_template_head(const unit_t *u, const tok_t *t, size_t i, size_t hi)
{
    if (!(is_ident(u, &t[i], "template") && i + 1 < hi && is_punct(u, &t[i + 1], "<"))) return i;
    int depth = 0, paren = 0;
    for (size_t j = i + 1; j < hi; ++j) {
        if (open_kind(u, &t[j])) ++paren;
        else if (close_kind(u, &t[j])) --paren;
        else if (paren == 0) {
            if (is_punct(u, &t[j], "<")) ++depth;
            else if (closers(u, &t[j])) {
                depth -= closers(u, &t[j]);
                if (depth <= 0) return j + 1;
            }
        }
    }
    return hi;
}

/* The declarator name whose '(' is at p (p > lo); returns its start or (size_t)-1, sets *lambda. */
static size_t declarator(const unit_t *u, const tok_t *t, size_t lo, size_t p, int *lambda)
{
    size_t q = p - 1; /* the token before '(' */
    *lambda = 0;
    if (is_punct(u, &t[q], "]")) {
        if (q >= lo + 2 && is_punct(u, &t[q - 1], "[") && is_ident(u, &t[q - 2], "operator")) q -= 2;
        else {
            *lambda = 1;
            return q;
        }
    } else if (t[q].kind == T_PUNCT && q > lo && is_ident(u, &t[q - 1], "operator")) {
        q -= 1;
    } else if (t[q].kind == T_IDENT && q > lo && is_ident(u, &t[q - 1], "operator")) {
        q -= 1;
    } else if (t[q].kind == T_IDENT) {
        if (in_list(u, &t[q], not_a_name) || is_ident(u, &t[q], "operator")) return (size_t)-1;
        return name_start(u, t, q, lo);
    } else if (closers(u, &t[q])) {
        return name_start(u, t, q, lo);
    } else {
        return (size_t)-1;
    }
    /* operator names: extend over a qualification */
    if (q > lo + 1 && is_punct(u, &t[q - 1], "::") && (t[q - 2].kind == T_IDENT || closers(u, &t[q - 2]))) {
        size_t s = name_start(u, t, q - 2, lo);
        if (s != (size_t)-1) return s;
    }
    return q;
}

/* The full name of the enclosing namespaces and classes, joined with "::". */
static void scope_prefix(scope_t *st, size_t nst, sbuf_t *o)
{
    for (size_t k = 0; k < nst; ++k)
        if ((st[k].kind == S_NS || st[k].kind == S_CLASS) && st[k].name && st[k].name[0]) {
            sb_puts(o, st[k].name);
            sb_puts(o, "::");
        }
}

/* Classify the '{' that ends the declaration tokens [lo, hi). */
static scope_t classify(const unit_t *u, const tok_t *t, size_t lo, size_t hi, scope_t *st, size_t nst)
{
    scope_t r = {S_OTHER, NULL, 0, 0};
    size_t cand = (size_t)-1, cand_end = 0, first = (size_t)-1, first_end = 0;
    int cand_lambda = 0, first_lambda = 0, eq_before_cand = 0, eq_before_first = 0, eq = 0;
    int depth = 0;
    for (size_t j = lo; j < hi; ++j) {
        size_t after = skip_template_head(u, t, j, hi);
        if (after != j) {
            j = after - 1;
            continue;
        }
        if (is_punct(u, &t[j], "(") && depth == 0 && j > lo) {
            int lambda = 0;
            size_t s, name_end = j, m = match_fwd(u, t, j, hi);
            if (is_ident(u, &t[j - 1], "operator") && m == j + 1 && m + 1 < hi && is_punct(u, &t[m + 1], "(")) {
                /* operator()(params) */
                s = j - 1;
                if (s > lo + 1 && is_punct(u, &t[s - 1], "::") && (t[s - 2].kind == T_IDENT || closers(u, &t[s - 2]))) {
                    size_t q = name_start(u, t, s - 2, lo);
                    if (q != (size_t)-1) s = q;
                }
                name_end = m + 1;
                m = match_fwd(u, t, m + 1, hi);
            } else {
                s = declarator(u, t, lo, j, &lambda);
            }
            if (s != (size_t)-1) {
                if (first == (size_t)-1) first = s, first_end = name_end, first_lambda = lambda, eq_before_first = eq;
                if (cand == (size_t)-1 && (m + 1 >= hi || in_list(u, &t[m + 1], after_params)))
                    cand = s, cand_end = name_end, cand_lambda = lambda, eq_before_cand = eq;
            }
            if (m >= hi) break;
            j = m;
            continue;
        }
        if (open_kind(u, &t[j])) ++depth;
        else if (close_kind(u, &t[j])) --depth;
        else if (depth == 0 && is_punct(u, &t[j], "=") && !(j > lo && is_ident(u, &t[j - 1], "operator")))
            eq = 1;
    }
    if (cand == (size_t)-1) cand = first, cand_end = first_end, cand_lambda = first_lambda, eq_before_cand = eq_before_first;
    if (cand != (size_t)-1 && (!eq_before_cand || cand_lambda)) {
        sbuf_t o = {0};
        if (cand_lambda) {
            sb_puts(&o, "<lambda>");
        } else {
            scope_prefix(st, nst, &o);
            char *nm = join(u, t, cand, cand_end);
            sb_puts(&o, nm);
            free(nm);
        }
        r.kind = S_FUNC;
        r.name = sb_take(&o);
        return r;
    }
    /* namespace a::b {   inline namespace v1 {   MACRO namespace a {   namespace { */
    depth = 0;
    size_t ns = (size_t)-1;
    for (size_t j = lo; j < hi; ++j) {
        if (open_kind(u, &t[j])) ++depth;
        else if (close_kind(u, &t[j])) --depth;
        else if (depth == 0 && is_ident(u, &t[j], "namespace")) ns = j;
    }
    if (ns != (size_t)-1) {
        size_t a = ns + 1, e;
        while (a < hi && is_punct(u, &t[a], "[")) a = match_fwd(u, t, a, hi) + 1; /* [[attributes]] */
        for (e = a; e < hi && (t[e].kind == T_IDENT || is_punct(u, &t[e], "::")) && !is_ident(u, &t[e], "inline"); ++e)
            ;
        r.kind = S_NS;
        r.name = a < hi ? join(u, t, a, e) : xstrdup("");
        return r;
    }
    if (hi > lo + 1 && is_ident(u, &t[lo], "extern") && t[lo + 1].kind == T_STR) {
        r.kind = S_LINKAGE;
        return r;
    }
    depth = 0;
    for (size_t j = lo; j < hi; ++j) {
        size_t after = skip_template_head(u, t, j, hi);
        if (after != j) {
            j = after - 1;
            continue;
        }
        if (open_kind(u, &t[j])) ++depth;
        else if (close_kind(u, &t[j])) --depth;
        else if (depth == 0 && is_punct(u, &t[j], "=")) break;
        else if (depth == 0 && t[j].kind == T_IDENT && in_list(u, &t[j], class_keys)) {
            /* the name is the last one before the base clause, past attributes, macros and "final":
             * struct __align__(16) MACRO Name<int> final : Base { */
            size_t e = j + 1;
            int d = 0;
            for (; e < hi; ++e) {
                if (open_kind(u, &t[e])) ++d;
                else if (close_kind(u, &t[e])) --d;
                else if (d == 0 && is_punct(u, &t[e], ":")) break;
            }
            size_t k = e;
            while (k > j + 1) {
                const tok_t *x = &t[k - 1];
                if (is_ident(u, x, "final")) --k;
                else if (is_punct(u, x, ")") || is_punct(u, x, "]")) {
                    size_t m = match_back(u, t, k - 1, j + 1);
                    if (m == (size_t)-1) break;
                    k = m;
                    if (k > j + 1 && t[k - 1].kind == T_IDENT && is_punct(u, x, ")")) --k; /* alignas(8) */
                } else break;
            }
            r.kind = S_CLASS;
            if (k > j + 1 && (t[k - 1].kind == T_IDENT || closers(u, &t[k - 1]))) {
                size_t a = name_start(u, t, k - 1, j + 1);
                if (a != (size_t)-1) r.name = join(u, t, a, k);
            }
            return r;
        }
    }
    return r;
}

/* The '{' at i opens a braced initialiser in a constructor's initialiser list, as in
 * "A() : x_{0}, base<T>{} {", rather than a body: the declaration has ") :" at the top level
 * and a member or base name comes right before the brace. */
static int ctor_init_brace(const unit_t *u, const tok_t *t, size_t lo, size_t i)
{
    if (i == lo || !(t[i - 1].kind == T_IDENT || closers(u, &t[i - 1]))) return 0;
    int depth = 0;
    for (size_t j = lo; j + 1 < i; ++j) {
        if (open_kind(u, &t[j])) ++depth;
        else if (close_kind(u, &t[j])) {
            --depth;
            if (depth == 0 && is_punct(u, &t[j], ")") && is_punct(u, &t[j + 1], ":")) return 1;
        }
    }
    return 0;
}

/* Walk the code tokens: track scopes, read every launch with its enclosing function. */
static void read_code(unit_t *u, launches_t *out)
{
    tok_t *t = u->code.v;
    size_t n = u->code.n, nst = 0, capst = 0, stmt = 0;
    scope_t *st = NULL;
    int paren = 0;
    const char *func = NULL;

    for (size_t i = 0; i < n; ++i) {
        const tok_t *k = &t[i];
        if (is_punct(u, k, "<<<")) {
            read_launch(u, t, 0, n, i, func ? func : "(file scope)", 0, out);
            continue;
        }
        if (is_punct(u, k, "{")) {
            scope_t s;
            if (func) s = (scope_t){S_BLOCK, NULL, 0, 0};
            else if (paren > 0 || ctor_init_brace(u, t, stmt, i)) s = (scope_t){S_INNER, NULL, 0, 0};
            else s = classify(u, t, stmt, i, st, nst);
            s.stmt = stmt;
            s.paren = paren;
            if (nst == capst) {
                capst = capst ? 2 * capst : 32;
                st = xrealloc(st, capst * sizeof *st);
            }
            st[nst++] = s;
            if (s.kind == S_FUNC) func = s.name;
            if (s.kind != S_INNER && s.kind != S_BLOCK) stmt = i + 1, paren = 0;
            continue;
        }
        if (is_punct(u, k, "}")) {
            if (nst == 0) continue; /* unbalanced (conditional compilation): ignore */
            scope_t s = st[--nst];
            if (s.kind == S_INNER) stmt = s.stmt, paren = s.paren;
            else if (s.kind != S_BLOCK) stmt = i + 1, paren = 0;
            if (s.kind == S_FUNC) func = NULL;
            free(s.name);
            continue;
        }
        if (func) continue;
        if (is_punct(u, k, "(") || is_punct(u, k, "[")) ++paren;
        else if ((is_punct(u, k, ")") || is_punct(u, k, "]")) && paren > 0) --paren;
        else if (is_punct(u, k, ";")) stmt = i + 1, paren = 0;
    }
    while (nst) free(st[--nst].name);
    free(st);
}

/* Launches written in directives, e.g. #define LAUNCH(n) k<<<n, 256>>>(x). */
static void read_directives(unit_t *u, launches_t *out)
{
    tok_t *t = u->pp.v;
    for (size_t d = 0; d < u->ndirs; ++d) {
        size_t lo = u->dirs[d].lo, hi = u->dirs[d].hi;
        if (directive_is(u, lo, hi, "include") || directive_is(u, lo, hi, "pragma")) continue;
        char *fn = NULL;
        if (directive_is(u, lo, hi, "define") && hi > lo + 2) {
            sbuf_t o = {0};
            sb_puts(&o, "(macro ");
            char *nm = join(u, t, lo + 2, lo + 3);
            sb_puts(&o, nm);
            sb_puts(&o, ")");
            free(nm);
            fn = sb_take(&o);
        }
        size_t body = directive_is(u, lo, hi, "define") ? lo + 3 : lo + 1;
        for (size_t i = body; i < hi; ++i)
            if (is_punct(u, &t[i], "<<<")) read_launch(u, t, body, hi, i, fn ? fn : "(directive)", 1, out);
        free(fn);
    }
}

static const char *const stream_work[] = {"cudaStream_t", "cudaStreamCreate", "cudaStreamCreateWithFlags",
                                          "cudaStreamCreateWithPriority", "CUstream", "cuStreamCreate",
                                          "cuStreamCreateWithPriority", NULL};

/* The unit takes part in stream work: it creates a stream or names a stream type, in code
 * outside any launch's execution configuration. */
static int takes_part_in_streams(const unit_t *u)
{
    for (size_t i = 0; i < u->code.n; ++i)
        if (!u->code.v[i].in_cfg && u->code.v[i].kind == T_IDENT && in_list(u, &u->code.v[i], stream_work)) return 1;
    for (size_t d = 0; d < u->ndirs; ++d) {
        size_t lo = u->dirs[d].lo, hi = u->dirs[d].hi;
        if (directive_is(u, lo, hi, "include")) continue;
        for (size_t i = lo; i < hi; ++i)
            if (!u->pp.v[i].in_cfg && u->pp.v[i].kind == T_IDENT && in_list(u, &u->pp.v[i], stream_work)) return 1;
    }
    return 0;
}

static int g_per_thread; /* --per-thread */

static int cmp_launch(const void *a, const void *b)
{
    const launch_t *x = a, *y = b;
    if (x->f.line != y->f.line) return x->f.line < y->f.line ? -1 : 1;
    return x->f.off < y->f.off ? -1 : x->f.off > y->f.off;
}

static void lint_text(const char *path, const char *text, size_t len, int raw_strings)
{
    unit_t u = {0};
    u.path = path;
    u.s = text;
    u.n = len;
    u.raw_strings = raw_strings;
    lex(&u);
    launches_t L = {0};
    read_code(&u, &L);
    read_directives(&u, &L);
    int streams = takes_part_in_streams(&u);
    if (L.n) qsort(L.v, L.n, sizeof *L.v, cmp_launch);
    for (size_t i = 0; i < L.n; ++i) {
        launch_t *l = &L.v[i];
        int is_null = !l->has_stream || null_stream(&u, l->t, l->s_lo, l->s_hi);
        char *expr = l->has_stream ? join(&u, l->t, l->s_lo, l->s_hi) : NULL;
        sbuf_t why = {0};
        if (!is_null) {
            sb_puts(&why, "stream argument ");
            sb_puts(&why, expr);
        } else {
            if (expr) {
                sb_puts(&why, "null stream ");
                sb_puts(&why, expr);
            } else {
                sb_puts(&why, "no stream argument");
            }
            if (g_per_thread || u.per_thread) sb_puts(&why, ", but per-thread default stream: rule off");
            else if (!streams) sb_puts(&why, ", but the unit takes no part in stream work");
            else sb_puts(&why, " in a unit that takes part in stream work");
        }
        free(expr);
        l->f.result = is_null && streams && !g_per_thread && !u.per_thread;
        l->f.why = sb_take(&why);
        add_finding(l->f);
    }
    free(L.v);
    free(u.code.v);
    free(u.pp.v);
    free(u.dirs);
}

/* ---------------------------------------------------------------------------------------------
 * files and directories */

static int g_errors;
static char **g_excl;
static size_t g_nexcl;

static int excluded(const char *path)
{
    if (!g_nexcl) return 0;
    char *r = realpath(path, NULL);
    if (!r) return 0;
    int hit = 0;
    for (size_t k = 0; k < g_nexcl && !hit; ++k) {
        size_t m = strlen(g_excl[k]);
        hit = strncmp(r, g_excl[k], m) == 0 && (r[m] == '\0' || r[m] == '/' || (m == 1 && g_excl[k][0] == '/'));
    }
    free(r);
    return hit;
}

static int wanted_ext(const char *name)
{
    static const char *const ext[] = {".cu", ".cuh", ".c", ".cpp", ".h", NULL};
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name) return 0;
    for (const char *const *e = ext; *e; ++e)
        if (strcmp(dot, *e) == 0) return 1;
    return 0;
}

static void lint_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cu-launch-lint: cannot read %s: %s\n", path, strerror(errno));
        ++g_errors;
        return;
    }
    sbuf_t b = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) sb_putn(&b, chunk, got);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "cu-launch-lint: cannot read %s\n", path);
        ++g_errors;
        free(b.s);
        return;
    }
    size_t len = b.n;
    char *text = sb_take(&b);
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    int is_c = dot && (!slash || dot > slash) && strcmp(dot, ".c") == 0;
    lint_text(path, text, len, !is_c);
    free(text);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void walk(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cu-launch-lint: cannot read directory %s: %s\n", dir, strerror(errno));
        ++g_errors;
        return;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue; /* ., .., hidden entries (.git) */
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            names = xrealloc(names, cap * sizeof *names);
        }
        names[n++] = xstrdup(e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_str);
    size_t dl = strlen(dir);
    int slash = dl > 0 && dir[dl - 1] == '/';
    for (size_t k = 0; k < n; ++k) {
        sbuf_t p = {0};
        sb_puts(&p, dir);
        if (!slash) sb_puts(&p, "/");
        sb_puts(&p, names[k]);
        char *path = sb_take(&p);
        struct stat ls, fs;
        if (lstat(path, &ls) != 0) {
            fprintf(stderr, "cu-launch-lint: cannot read %s: %s\n", path, strerror(errno));
            ++g_errors;
        } else if (S_ISDIR(ls.st_mode)) {
            if (!excluded(path)) walk(path);
        } else if (wanted_ext(names[k]) && !excluded(path)) {
            if (S_ISLNK(ls.st_mode) && stat(path, &fs) != 0) {
                fprintf(stderr, "cu-launch-lint: cannot read %s: %s\n", path, strerror(errno));
                ++g_errors;
            } else if (S_ISREG(ls.st_mode) || (S_ISLNK(ls.st_mode) && S_ISREG(fs.st_mode))) {
                lint_file(path);
            }
            /* symbolic links to directories are not followed */
        }
        free(path);
        free(names[k]);
    }
    free(names);
}

static void lint_path(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "cu-launch-lint: cannot read %s: %s\n", path, strerror(errno));
        ++g_errors;
        return;
    }
    if (excluded(path)) return;
    if (S_ISDIR(sb.st_mode)) walk(path);
    else lint_file(path);
}

/* ---------------------------------------------------------------------------------------------
 * output */

static void json_string(const char *s)
{
    putchar('"');
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        if (c == '"' || c == '\\') {
            putchar('\\');
            putchar(c);
            ++p;
        } else if (c < 0x20 || c == 0x7f) {
            printf("\\u%04x", c);
            ++p;
        } else if (c < 0x80) {
            putchar(c);
            ++p;
        } else {
            /* pass valid UTF-8 through; anything else becomes U+FFFD */
            int len = c >= 0xf5 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
            int ok = len > 0;
            for (int k = 1; ok && k < len; ++k) ok = (p[k] & 0xc0) == 0x80;
            if (ok && len == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0))) ok = 0;
            if (ok && len == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))) ok = 0;
            if (ok) {
                fwrite(p, 1, (size_t)len, stdout);
                p += len;
            } else {
                fputs("\\ufffd", stdout);
                ++p;
            }
        }
    }
    putchar('"');
}

static void print_json(void)
{
    if (nF == 0) {
        puts("[]");
        return;
    }
    puts("[");
    for (size_t i = 0; i < nF; ++i) {
        const finding_t *f = &F[i];
        fputs("  {\"file\": ", stdout);
        json_string(f->file);
        printf(", \"line\": %d, \"kernel\": ", f->line);
        json_string(f->kernel);
        fputs(", \"grid\": ", stdout);
        json_string(f->grid);
        fputs(", \"block\": ", stdout);
        json_string(f->block);
        fputs(", \"function\": ", stdout);
        json_string(f->function);
        printf(", \"result\": %s}%s\n", f->result ? "true" : "false", i + 1 < nF ? "," : "");
    }
    puts("]");
}

static void print_text(void)
{
    for (size_t i = 0; i < nF; ++i) {
        const finding_t *f = &F[i];
        printf("%s:%d: kernel %s<<<%s, %s>>> in %s: default stream: %s (%s)\n", f->file, f->line, f->kernel, f->grid,
               f->block, f->function, f->result ? "true" : "false", f->why);
    }
}

static void short_usage(void)
{
    fputs("usage: cu-launch-lint [--json] [--per-thread] [--exclude DIR]... PATH...  (--help for more)\n", stderr);
}

static void usage(FILE *o)
{
    fputs("usage: cu-launch-lint [--json] [--per-thread] [--exclude DIR]... PATH...\n"
          "\n"
          "Rule CU-LAUN0002 (default_stream_kernel_launch): evaluates every <<<...>>> kernel launch in\n"
          "the given files and, recursively, in the .cu, .cuh, .c, .cpp and .h files under the given\n"
          "directories (hidden entries and links to directories skipped). A launch's result is true when\n"
          "it takes the default stream (no fourth configuration argument, or 0, NULL, nullptr,\n"
          "cudaStreamLegacy, or such a value cast to cudaStream_t) in a file that takes part in stream\n"
          "work (creates a stream, or names cudaStream_t or CUstream). A file that defines\n"
          "CUDA_API_PER_THREAD_DEFAULT_STREAM gets false for all its launches.\n"
          "\n"
          "  --json          print a JSON array, one object per launch: file, line, kernel, grid,\n"
          "                  block, function, result\n"
          "  --per-thread    the sources are built with per-thread default streams\n"
          "                  (-DCUDA_API_PER_THREAD_DEFAULT_STREAM, nvcc --default-stream per-thread):\n"
          "                  the rule is off and every result is false\n"
          "  --exclude DIR   skip DIR and everything under it (repeatable)\n"
          "  -h, --help      this text\n"
          "\n"
          "Without --json: one line per launch,\n"
          "  FILE:LINE: kernel KERNEL<<<GRID, BLOCK>>> in FUNCTION: default stream: true|false (why)\n"
          "Exit status: 1 when any result is true, 0 when none is, 2 on bad usage or an unreadable path.\n",
          o);
}

int main(int argc, char **argv)
{
    int json = 0, npaths = 0, opts = 1;
    char **paths = xrealloc(NULL, (size_t)argc * sizeof *paths);
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (opts && a[0] == '-' && a[1] != '\0') {
            if (strcmp(a, "--") == 0) opts = 0;
            else if (strcmp(a, "--json") == 0) json = 1;
            else if (strcmp(a, "--per-thread") == 0) g_per_thread = 1;
            else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
                usage(stdout);
                free(paths);
                return 0;
            } else if (strcmp(a, "--exclude") == 0 || strncmp(a, "--exclude=", 10) == 0) {
                const char *d = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
                if (!d || !*d) {
                    fprintf(stderr, "cu-launch-lint: --exclude needs a directory\n");
                    short_usage();
                    free(paths);
                    return 2;
                }
                char *r = realpath(d, NULL);
                if (!r) {
                    fprintf(stderr, "cu-launch-lint: --exclude %s: %s\n", d, strerror(errno));
                    free(paths);
                    return 2;
                }
                g_excl = xrealloc(g_excl, (g_nexcl + 1) * sizeof *g_excl);
                g_excl[g_nexcl++] = r;
            } else {
                fprintf(stderr, "cu-launch-lint: unknown option %s\n", a);
                short_usage();
                free(paths);
                return 2;
            }
        } else {
            paths[npaths++] = argv[i];
        }
    }
    if (npaths == 0) {
        fprintf(stderr, "cu-launch-lint: no file or directory given\n");
        short_usage();
        free(paths);
        return 2;
    }
    for (int i = 0; i < npaths; ++i) lint_path(paths[i]);

    int any = 0;
    for (size_t i = 0; i < nF; ++i) any |= F[i].result;
    if (json) print_json();
    else {
        print_text();
        size_t ntrue = 0;
        for (size_t i = 0; i < nF; ++i) ntrue += (size_t)F[i].result;
        fprintf(stderr, "cu-launch-lint: %zu launch(es) read, %zu with result true", nF, ntrue);
        if (g_warnings) fprintf(stderr, ", %d '<<<' not read as a launch (see the warnings)", g_warnings);
        fputc('\n', stderr);
    }
    if (fflush(stdout) != 0) return 2;
    for (size_t i = 0; i < nF; ++i) {
        free(F[i].file), free(F[i].kernel), free(F[i].grid), free(F[i].block), free(F[i].function), free(F[i].why);
    }
    free(F);
    for (size_t k = 0; k < g_nexcl; ++k) free(g_excl[k]);
    free(g_excl);
    free(paths);
    if (g_errors) return 2;
    return any ? 1 : 0;
}
