/* deck.c - input decks in the style of AMReX ParmParse.
 *
 * A deck is `key = value` lines; `#` starts a comment; values are whitespace-separated lists.
 * `key=value` arguments after the deck path override the file. Every key is checked: an unknown
 * key, a duplicate, a wrong type or a value out of range is one error naming where it came from
 * (file and line, or the command line), the key, the value and what is valid.
 */
#include "src/deck.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char *key;
    char *val;
    int line;      /* 0 for a command-line override */
    int used;
    int quoted;    /* 1: the value was given in double quotes (it may hold spaces; rendered quoted) */
} entry_t;

typedef struct {
    entry_t *e;
    int n, cap;
    const char *origin; /* file name for messages */
    char *err;
    size_t errlen;
    int *slot;          /* open-addressing index of e by key (-1: empty), nslot a power of 2 */
    int nslot;
    int user;           /* 1: a deck and overrides from the user (deck_load), 0: a deck stored in a file
                           (deck_parse_text), held to the rules of the version that wrote it */
} kv_t;

/* s, or its first 200 characters and how long it is, into buf: a message names the value and still
 * has room to say what is wrong with it. */
static const char *clip(const char *s, char *buf, size_t n)
{
    const size_t len = strlen(s);
    size_t w = 0, i = 0;
    /* at most 200 characters of s, control characters written \xNN so that a message shows them */
    for (; i < len && i < 200 && w + 8 + 40 < n; ++i) { /* 40: room for the suffix below */
        const unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f) w += (size_t)snprintf(buf + w, n - w, "\\x%02x", c);
        else buf[w++] = (char)c;
    }
    buf[w] = '\0';
    if (i < len) snprintf(buf + w, n - w, "... (%zu characters)", len);
    return buf;
}

/* The command line's overrides, for an error on a line of the file that one of them may have caused
 * (an override of dim makes the file's root line wrong): " (the command line sets k=v, ...)", or "". */
static const char *overrides_note(const kv_t *kv, char *buf, size_t n)
{
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < kv->n && w + 1 < n; ++i) {
        if (kv->e[i].line != 0) continue;
        char v[260];
        const int k = snprintf(buf + w, n - w, "%s%s=%s", w ? ", " : " (the command line sets ", kv->e[i].key,
                               clip(kv->e[i].val, v, sizeof v));
        if (k < 0 || (size_t)k >= n - w) break;
        w += (size_t)k;
    }
    if (w && w + 1 < n) snprintf(buf + w, n - w, ")");
    return buf;
}

static int fail(kv_t *kv, const entry_t *e, const char *fmt, ...)
{
    char what[1024], key[260], val[260], note[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (!e)
        snprintf(kv->err, kv->errlen, "%s: %s%s", kv->origin, what, overrides_note(kv, note, sizeof note));
    else if (e->line > 0)
        snprintf(kv->err, kv->errlen, "%s:%d: key '%s' = '%s': %s%s", kv->origin, e->line, clip(e->key, key, sizeof key),
                 clip(e->val, val, sizeof val), what, overrides_note(kv, note, sizeof note));
    else
        snprintf(kv->err, kv->errlen, "command line: override '%s=%s': %s", clip(e->key, key, sizeof key),
                 clip(e->val, val, sizeof val), what);
    return -1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) ++s;
    char *end = s + strlen(s);
    while (end > s && isspace((unsigned char)end[-1])) *--end = '\0';
    return s;
}

/* FNV-1a of a key: the lookup is a hash table, so a deck of n keys parses in O(n) */
static unsigned key_hash(const char *k)
{
    unsigned h = 2166136261u;
    for (; *k; ++k) h = (h ^ (unsigned char)*k) * 16777619u;
    return h;
}

/* The slot of key: where it is, or the empty slot where it would go. */
static int *slot_of(const kv_t *kv, const char *key)
{
    for (unsigned i = key_hash(key) & (unsigned)(kv->nslot - 1);; i = (i + 1) & (unsigned)(kv->nslot - 1))
        if (kv->slot[i] < 0 || strcmp(kv->e[kv->slot[i]].key, key) == 0) return &kv->slot[i];
}

static entry_t *find(kv_t *kv, const char *key)
{
    if (kv->nslot == 0) return NULL;
    const int i = *slot_of(kv, key);
    return i < 0 ? NULL : &kv->e[i];
}

/* Make room in the index for n entries (load at most 1/2). 0 or -1. */
static int index_reserve(kv_t *kv, int n)
{
    if (2 * n <= kv->nslot) return 0;
    int ns = kv->nslot ? kv->nslot : 64;
    while (2 * n > ns) ns *= 2;
    int *slot = malloc((size_t)ns * sizeof *slot);
    if (!slot) return -1;
    for (int i = 0; i < ns; ++i) slot[i] = -1;
    free(kv->slot);
    kv->slot = slot;
    kv->nslot = ns;
    for (int i = 0; i < kv->n; ++i) *slot_of(kv, kv->e[i].key) = i;
    return 0;
}

static int valid_key_syntax(const char *k)
{
    if (!*k) return 0;
    for (; *k; ++k)
        if (!isalnum((unsigned char)*k) && *k != '_' && *k != '.') return 0;
    return 1;
}

/* Add one key/value. Duplicates inside the file are errors; an override replaces. */
static int add(kv_t *kv, const char *key, const char *val, int line, int quoted)
{
    entry_t tmp = { (char *)key, (char *)val, line, 0, quoted };
    if (!valid_key_syntax(key))
        return fail(kv, &tmp, "a key is letters, digits, '_' and '.' only");
    if (!*val && !quoted) return fail(kv, &tmp, "empty value");
    if (!*val) return fail(kv, &tmp, "empty value (\"\")");
    /* the effective deck is stored in every file and read back line by line: a newline, carriage
     * return or other control character (possible in a command-line override) would break it */
    for (const unsigned char *c = (const unsigned char *)val; *c; ++c)
        if ((*c < 0x20 && *c != '\t') || *c == 0x7f)
            return fail(kv, &tmp, "holds the control character 0x%02x at position %d (a value is one line of text; "
                        "a tab is the only control character allowed)", *c, (int)(c - (const unsigned char *)val) + 1);
    entry_t *old = find(kv, key);
    if (old && line > 0)
        return fail(kv, &tmp, "duplicate key (first set on line %d)", old->line);
    if (old && old->line == 0) return fail(kv, &tmp, "given twice on the command line (give each key once)");
    if (old) {
        free(old->val);
        old->val = strdup(val);
        old->line = 0;
        old->quoted = quoted;
        return 0;
    }
    if (index_reserve(kv, kv->n + 1) != 0) return fail(kv, NULL, "out of memory");
    if (kv->n == kv->cap) {
        kv->cap = kv->cap ? 2 * kv->cap : 32;
        entry_t *ne = realloc(kv->e, (size_t)kv->cap * sizeof *ne);
        if (!ne) return fail(kv, NULL, "out of memory");
        kv->e = ne;
    }
    kv->e[kv->n].key = strdup(key);
    kv->e[kv->n].val = strdup(val);
    kv->e[kv->n].line = line;
    kv->e[kv->n].used = 0;
    kv->e[kv->n].quoted = quoted;
    *slot_of(kv, key) = kv->n;
    kv->n++;
    return 0;
}

/* The value part of a line or override (trimmed, in place): a value in double quotes loses them and
 *  keeps its spaces (*quoted = 1). NULL with err set when a quote is not closed or there is more
 *  after it. */
static char *unquote(kv_t *kv, const char *key, char *v, int line, int *quoted)
{
    *quoted = 0;
    if (*v != '"') return v;
    char *close = strchr(v + 1, '"');
    entry_t tmp = { (char *)key, v, line, 0, 0 };
    if (!close) {
        fail(kv, &tmp, "the opening double quote is not closed on the line (a quoted value is \"...\", no \" inside)");
        return NULL;
    }
    if (close[1]) {
        fail(kv, &tmp, "text after the closing double quote (a quoted value is \"...\", no \" inside)");
        return NULL;
    }
    *close = '\0';
    *quoted = 1;
    return v + 1;
}

/* The first '#' of s outside double quotes (a comment), or NULL. */
static char *comment_start(char *s)
{
    int in = 0;
    for (; *s; ++s) {
        if (*s == '"') in = !in;
        else if (*s == '#' && !in) return s;
    }
    return NULL;
}

static int parse_text(kv_t *kv, const char *text)
{
    char *buf = strdup(text);
    int line = 0, rc = 0;
    if (!buf) return fail(kv, NULL, "out of memory");
    /* split by hand: strtok would merge empty lines and lose line numbers. A line ends at LF, CR
     * or CRLF (decks from any system); a UTF-8 byte-order mark that some editors put first is skipped. */
    char *start = strncmp(buf, "\xef\xbb\xbf", 3) == 0 ? buf + 3 : buf;
    for (char *s = start; s && rc == 0;) {
        char *nl = s + strcspn(s, "\r\n");
        char *next = NULL;
        if (*nl) next = nl + (nl[0] == '\r' && nl[1] == '\n' ? 2 : 1);
        *nl = '\0';
        ++line;
        char *hash = comment_start(s);
        if (hash) *hash = '\0';
        char *t = trim(s);
        if (*t) {
            char *eq = strchr(t, '=');
            if (!eq) {
                char v[260];
                snprintf(kv->err, kv->errlen, "%s:%d: '%s' is not 'key = value'", kv->origin, line, clip(t, v, sizeof v));
                rc = -1;
                break;
            }
            *eq = '\0';
            int quoted = 0;
            char *key = trim(t), *val = unquote(kv, key, trim(eq + 1), line, &quoted);
            rc = val ? add(kv, key, val, line, quoted) : -1;
        }
        s = next;
    }
    free(buf);
    return rc;
}

/* ---- typed getters: each marks the entry used ---------------------------------------------- */

static int split(char *v, char **tok, int max)
{
    int n = 0;
    for (char *s = strtok(v, " \t"); s; s = strtok(NULL, " \t")) {
        if (n == max) return max + 1;
        tok[n++] = s;
    }
    return n;
}

/* The value of key split into words (64 at most): their count, 0 when key is absent, or -1 with the
 * message when there are not nmin..nmax of them (noun: "value", "number"). *v is the malloc'd copy
 * the words point into (the caller frees it). */
static int get_words(kv_t *kv, const char *key, int nmin, int nmax, const char *noun, const char *what, entry_t **e,
                     char **v, char **tok)
{
    *v = NULL;
    *e = find(kv, key);
    if (!*e) return 0;
    (*e)->used = 1;
    *v = strdup((*e)->val);
    if (!*v) return fail(kv, *e, "out of memory");
    const int n = split(*v, tok, nmax < 64 ? nmax : 64);
    if (n >= nmin && n <= nmax) return n;
    return nmin == nmax ? fail(kv, *e, "expected %d %s%s (%s)", nmin, noun, nmin > 1 ? "s" : "", what)
                        : fail(kv, *e, "expected %d to %d %ss (%s)", nmin, nmax, noun, what);
}

/* Read a list of `lo..hi` integers of length nmin..nmax. Returns count, or -1 on error. */
static int get_ints(kv_t *kv, const char *key, long long *out, int nmin, int nmax, long long lo, long long hi,
                    const char *what)
{
    entry_t *e;
    char *v, *tok[64], t[260];
    const int n = get_words(kv, key, nmin, nmax, "value", what, &e, &v, tok);
    int rc = n;
    for (int i = 0; rc >= 0 && i < n; ++i) {
        char *end;
        errno = 0;
        const long long x = strtoll(tok[i], &end, 10);
        if (*end || end == tok[i] || (errno && errno != ERANGE))
            rc = fail(kv, e, "'%s' is not an integer (%s)", clip(tok[i], t, sizeof t), what);
        else if (errno == ERANGE) rc = fail(kv, e, "'%s' is out of range (%s)", clip(tok[i], t, sizeof t), what);
        else if (x < lo || x > hi) rc = fail(kv, e, "%lld is out of range (%s)", x, what);
        else out[i] = x;
    }
    free(v);
    return rc;
}

static int get_doubles(kv_t *kv, const char *key, double *out, int nmin, int nmax, const char *what)
{
    entry_t *e;
    char *v, *tok[64], t[260];
    const int n = get_words(kv, key, nmin, nmax, "number", what, &e, &v, tok);
    int rc = n;
    for (int i = 0; rc >= 0 && i < n; ++i) {
        char *end;
        errno = 0;
        const double x = strtod(tok[i], &end);
        /* strtod reads hex (0x10 = 16): refused from the user; a stored deck of an earlier version may hold it */
        if (kv->user && strpbrk(tok[i], "xX"))
            rc = fail(kv, e, "'%s' is not a decimal number (%s)", clip(tok[i], t, sizeof t), what);
        else if (*end || end == tok[i] || (errno && errno != ERANGE) || !isfinite(x))
            rc = fail(kv, e, "'%s' is not a finite number (%s)", clip(tok[i], t, sizeof t), what);
        else if (errno == ERANGE && x == 0.0) /* an underflow to zero; a subnormal result is a number */
            rc = fail(kv, e, "'%s' is too small: it rounds to 0 (the smallest positive double is about 4.9e-324) (%s)",
                      clip(tok[i], t, sizeof t), what);
        else out[i] = x;
    }
    free(v);
    return rc;
}

/* A single word from a fixed set. Returns the index, -1 (absent: *out untouched) or -2 (error). */
static int get_choice(kv_t *kv, const char *key, const char *const *names, int nnames, int *out)
{
    entry_t *e = find(kv, key);
    if (!e) return -1;
    e->used = 1;
    for (int i = 0; i < nnames; ++i)
        if (strcmp(e->val, names[i]) == 0) {
            *out = i;
            return i;
        }
    char valid[256] = "";
    for (int i = 0; i < nnames; ++i) {
        strcat(valid, i ? ", " : "");
        strcat(valid, names[i]);
    }
    fail(kv, e, "valid values are %s", valid);
    return -2;
}

static int get_string(kv_t *kv, const char *key, char *out, size_t outlen)
{
    entry_t *e = find(kv, key);
    if (!e) return 0;
    e->used = 1;
    if (strlen(e->val) >= outlen) return fail(kv, e, "longer than %zu characters", outlen - 1);
    if (strpbrk(e->val, " \t") && !e->quoted && e->line > 0)
        return fail(kv, e, "a single word is expected (a value with spaces goes in double quotes: \"my file.hdf\")");
    if (strpbrk(e->val, " \t\"#")) { /* an override is one argument: its spaces are the value's */
        if (strchr(e->val, '"')) return fail(kv, e, "a path cannot hold a double quote");
        e->quoted = 1; /* rendered in quotes, so the stored deck reads back the same */
    }
    strcpy(out, e->val);
    return 1;
}

/* A path key: from the deck file, a relative path resolves from the deck's folder `dir`; from the
 * command line (or the default) it stays as given, relative to the current directory. Returns 1 when
 * set, 0 when absent, -1 on error. */
static int get_path(kv_t *kv, const char *key, char *out, size_t outlen, const char *dir)
{
    char given[4096] = "";
    const int r = get_string(kv, key, given, sizeof given);
    if (r <= 0) return r;
    const entry_t *e = find(kv, key);
    if (e->line > 0 && given[0] != '/' && dir[0]) {
        char dbuf[260];
        if ((size_t)snprintf(out, outlen, "%s/%s", dir, given) >= outlen)
            return fail(kv, e, "longer than %zu characters once joined to the deck's folder %s", outlen - 1,
                        clip(dir, dbuf, sizeof dbuf));
    } else {
        snprintf(out, outlen, "%s", given);
    }
    return 1;
}

/* A list of names (identifiers) of length nmin..nmax, unique. Returns the count (0: absent) or -1. */
static int get_names(kv_t *kv, const char *key, char (*out)[64], int nmin, int nmax)
{
    entry_t *e;
    char *v, *tok[64];
    const int n = get_words(kv, key, nmin, nmax, "name", "identifiers, unique", &e, &v, tok);
    int rc = n;
    for (int i = 0; rc >= 0 && i < n; ++i) {
        size_t len = strlen(tok[i]);
        int ok = len > 0 && len < 64 && (isalpha((unsigned char)tok[i][0]) || tok[i][0] == '_');
        for (size_t c = 0; ok && c < len; ++c) ok = isalnum((unsigned char)tok[i][c]) || tok[i][c] == '_';
        char t[260];
        if (!ok) rc = fail(kv, e, "'%s' is not a name (a letter or '_', then letters, digits, '_'; < 64 chars)",
                           clip(tok[i], t, sizeof t));
        for (int j = 0; rc >= 0 && j < i; ++j)
            if (strcmp(tok[i], tok[j]) == 0) rc = fail(kv, e, "'%s' is named twice", clip(tok[i], t, sizeof t));
        if (rc >= 0) strcpy(out[i], tok[i]);
    }
    free(v);
    return rc;
}

/* ---- the key table: the one source of the keys' types, defaults and valid values ---------------
 * The schema below validates with these rows (get_*_k), `dpamr help KEY` and `dpamr --man` print
 * them, and the unknown-key message lists them. Counts: DK_DIM = one per dimension, DK_NF = one per
 * field. `note` adds what the row's numbers cannot say (checked in the schema). */
#define DK_DIM (-1)
#define DK_NF (-2)
#define LL(x) ((long long)(x))
static const deck_key_t k_keys[] = {
    { "dim", "int", "2", NULL, "dimension", 'i', 1, 1, 2, 3, "2 or 3", { NULL } },
    { "root", "dim ints", "4 per axis", NULL, "root tiles per axis (level 0)", 'i', DK_DIM, DK_DIM, 1, 65536,
      "root tiles per axis, 1 to 65536 each", { NULL } },
    { "tile_size", "int", "8", "a power of two: 4, 8, 16, 32", "B: cells per tile side; a tile has B^dim cells", 'i', 1,
      1, 4, 32, "a power of two from 4 to 32", { NULL } },
    { "max_level", "int", "4", "and root x 2^max_level <= 2^29 (2D) / 2^19 (3D) tiles per axis, and < 2^31 / tile_size",
      "the depth cap: no tile beyond it", 'i', 1, 1, 0, DP_MAX_LEVELS - 1, "0 to 23", { NULL } },
    { "origin", "dim floats", "0", "finite", "domain corner", 'f', DK_DIM, DK_DIM, 0, 0,
      "domain corner, one per dimension", { NULL } },
    { "cell_size", "float", "1 / (B x max root)", "> 0",
      "level-0 cell spacing h0 (level L: h0 / 2^L); the default makes the longest side 1", 'f', 1, 1, 0, 0,
      "level-0 cell spacing", { NULL } },
    { "fields", "1-8 names", "rho", "identifiers, unique", "cell-centred float32 fields", 'n', 1, DP_MAX_FIELDS, 0, 0,
      NULL, { NULL } },
    { "fill", "word", "prolong", NULL, "how a new tile's cells are made: prolongation from the parent, or the model",
      'c', 1, 1, 0, 0, NULL, { "prolong", "model", NULL } },
    { "balance", "word", "none", NULL,
      "2:1: tiles that touch (across a face, an edge or a corner) differ by at most one level; the tiles this needs "
      "are added after the criterion's (every variant; one rank)", 'c', 1, 1, 0, 0, NULL, { "none", "2:1", NULL } },
    { "criterion", "word", "jump", NULL, "refinement criterion: |u_c - u_n| > threshold (jump) or > threshold x h (gradient)",
      'c', 1, 1, 0, 0, NULL, { "jump", "gradient", NULL } },
    { "criterion_field", "name", "first field", "one of fields", "the field the criterion reads", 's', 1, 1, 0, 0, NULL,
      { NULL } },
    { "threshold", "float", "0.1", "> 0", "criterion threshold", 'f', 1, 1, 0, 0, "a number > 0", { NULL } },
    { "model.objects", "names", "none", "identifiers, unique, up to 16",
      "analytic objects, each with the model.NAME.* keys", 'n', 0, DP_MAX_OBJECTS, 0, 0, NULL, { NULL } },
    { "model.NAME.type", "word", "required", NULL, "shape of object NAME", 'c', 1, 1, 0, 0, NULL,
      { "ellipsoid", "box", "gaussian", "sphere", NULL } },
    { "model.NAME.center", "dim floats", "required", "finite", "centre of object NAME", 'f', DK_DIM, DK_DIM, 0, 0,
      "one coordinate per dimension", { NULL } },
    { "model.NAME.radius", "1 or dim floats", "required", "> 0 (sphere: one)",
      "semi-axes, half-widths, or gaussian width of object NAME", 'f', 1, DK_DIM, 0, 0,
      "one radius for all axes, or one per axis", { NULL } },
    { "model.NAME.velocity", "dim floats", "0", "finite",
      "velocity of object NAME: with steps > 0 its centre at time t is center + velocity x t", 'f', DK_DIM, DK_DIM, 0,
      0, "one component per dimension", { NULL } },
    { "model.NAME.inside", "1 or nf floats", "1", "finite", "value inside (gaussian: at the peak), per field", 'f', 1,
      DK_NF, 0, 0, "one value for all fields, or one per field", { NULL } },
    { "model.NAME.outside", "1 or nf floats", "0", "finite", "value outside, per field", 'f', 1, DK_NF, 0, 0,
      "one value for all fields, or one per field", { NULL } },
    { "mesh_file", "path", "deck name with .mesh.hdf, beside the deck", "an HDF5 mesh (docs/format.md)",
      "what run loads and mesh writes; in the deck relative to the deck's folder, on the command line to the "
      "current directory", 'p', 1, 1, 0, 0, NULL, { NULL } },
    { "output", "path", "deck name with .hdf (steps > 0: _%05d.hdf), in the current directory", "must end in .hdf, a name before it; with steps > 0 a pattern with one %d (e.g. run_%05d.hdf), with "
      "steps = 0 not one (dpamr run)",
      "what run writes; in the deck relative to the deck's folder, on the command line to the current directory. "
      "With steps > 0 the name of each output step's file: the pattern's %d (or %0Nd) in the file name is the "
      "step index, and the series NAME.hdf.series (the pattern without its number) lists the files for ParaView",
      'p', 1, 1, 0, 0, NULL, { NULL } },
    { "steps", "int", "0", NULL,
      "time steps after the first build: each moves the model objects by velocity x dt and regrids (refines and "
      "coarsens) every regrid_every steps; 0 = one build, as without steps", 'i', 1, 1, 0, 1000000, "0 to 1000000",
      { NULL } },
    { "dt", "float", "required with steps > 0", "> 0", "time step: step k is at time k x dt", 'f', 1, 1, 0, 0,
      "a number > 0", { NULL } },
    { "regrid_every", "int", "1", NULL, "regrid every this many steps (the steps between only advance the time)", 'i',
      1, 1, 1, 1000000, "1 to 1000000", { NULL } },
    { "output_every", "int", "1", "a multiple of regrid_every",
      "write a file every this many steps (step 0 included): step k when k is a multiple of output_every", 'i', 1, 1, 1,
      1000000, "1 to 1000000, a multiple of regrid_every", { NULL } },
    { "overwrite", "word", "own", NULL,
      "own: replace a file dpamr wrote earlier (and say so); never: refuse any existing file. A file dpamr did not "
      "write is never replaced", 'c', 1, 1, 0, 0, NULL, { "own", "never", NULL } },
    { "verbosity", "word", "normal", NULL,
      "what dpamr run prints: quiet = warnings, errors and the written file only; normal = the run's lines and "
      "the summary of phases; verbose = also the build and machine", 'c', 1, 1, 0, 0, NULL,
      { "quiet", "normal", "verbose", NULL } },
    { "progress", "word", "auto", NULL,
      "progress of long phases (the GPU variants' upload and download, the CPU validator, the write of the file; the refinement "
      "prints a line per level): auto = one line rewritten in place when stdout is a terminal (GB done, rate, time "
      "left), else a plain line every 10 s once a phase has run 5 s; off = none (verbosity = quiet: none)", 'c',
      1, 1, 0, 0, NULL, { "off", "auto", NULL } },
    { "validate", "word", "auto", NULL,
      "where run validates a GPU variant's result: gpu = on the device's tile store while it downloads (the report "
      "is the CPU validator's bit for bit; any failure is described by the CPU validator), cpu = on the host after "
      "the download (the reference), auto = gpu for cdp and hostlaunch. The cpu variant always validates on the CPU",
      'c', 1, 1, 0, 0, NULL, { "auto", "gpu", "cpu", NULL } },
    { "variant", "word", "auto", NULL,
      "engine: cpu (the reference), cdp (device-launched grids), hostlaunch (host-launched kernels per level; host, its "
      "old name, is accepted); auto takes cdp when a GPU is usable, else cpu (and says so)", 'c', 1, 1, 0,
      0, NULL, { "auto", "cpu", "cdp", "hostlaunch", "host", NULL } },
    { "pdl", "word", "on", NULL, "the PDL launch attribute of the GPU variants' chained kernels", 'c', 1, 1, 0, 0, NULL,
      { "off", "on", NULL } },
    { "pdl_trigger", "word", "late", NULL,
      "where PDL primaries trigger: after their work, or right after their own wait", 'c', 1, 1, 0, 0, NULL,
      { "late", "early", NULL } },
    { "max_tiles", "int", "0 (computed)", NULL,
      "tile store capacity (per rank); 0: as many tiles as memory holds (the device's free memory with the "
      "engine's scratch on the GPU variants, and the host's available memory for the result), at most every tile a "
      "refinement of the input can reach up to max_level", 'i', 1, 1, 0, LL(1) << 40,
      "0 (computed) or a tile count, 1 to 1099511627776 (2^40)", { NULL } },
    { "pool", "int", "0 (computed)", NULL, "force the CDP pending-launch pool size", 'i', 1, 1, 0, LL(1) << 26,
      "0 (computed bound) or a pending-launch count, 1 to 67108864 (2^26)", { NULL } },
    { "cdp_grain", "word", "level", NULL,
      "what one device-side launch of the cdp variant covers: one tile's children, a block of cdp_group tiles', or "
      "a whole level's", 'c', 1, 1, 0, 0, NULL, { "tile", "group", "level", NULL } },
    { "cdp_group", "int", "32", NULL, "tiles per launching block (and per child block) of cdp_grain=group", 'i', 1, 1, 1,
      DP_MAX_GROUP, "parent tiles per child grid, 1 to 1024", { NULL } },
    { "trace", "path", "none", NULL,
      "write the GPU kernels' device timeline as a Chrome/Perfetto trace JSON (GPU variants)", 'p', 1, 1, 0, 0, NULL,
      { NULL } },
    { "threads", "int", "0 (OpenMP default)", NULL, "OpenMP threads of the cpu engine", 'i', 1, 1, 0, 4096,
      "0 (OpenMP default) or a thread count, 1 to 4096", { NULL } },
    { "mpi_write", "word", "auto", NULL,
      "how an MPI run writes its file: collective (parallel HDF5), gather (to rank 0); auto = collective when "
      "possible. Without MPI: ignored", 'c', 1, 1, 0, 0, NULL, { "auto", "collective", "gather", NULL } },
    { "bench_repeats", "int", "5", NULL, "timed runs per variant (medians reported)", 'i', 1, 1, 1, 1000, "1 to 1000",
      { NULL } },
    { "bench_warmup", "int", "1", NULL, "untimed runs per variant first", 'i', 1, 1, 0, 100, "0 to 100", { NULL } },
    { "bench_cpu", "word", "on", NULL, "time the cpu variant too (off for large decks)", 'c', 1, 1, 0, 0, NULL,
      { "off", "on", NULL } },
    { "bench_out", "path prefix", "bench", "a prefix with a name, not a folder", "dpamr bench writes PREFIX.csv and PREFIX.json", 'p', 1, 1, 0, 0, NULL,
      { NULL } },
    { "bench_groups", "ints", "8 64 512", NULL,
      "the cdp_group sizes dpamr bench sweeps between cdp_grain=tile and level", 'i', 1, DP_MAX_BENCH_GROUPS, 1,
      DP_MAX_GROUP, "1 to 8 group sizes for the cdp grain sweep, each 1 to 1024", { NULL } },
};
#define NKEYS ((int)(sizeof k_keys / sizeof k_keys[0]))

int deck_key_count(void) { return NKEYS; }
const deck_key_t *deck_key_at(int i) { return i >= 0 && i < NKEYS ? &k_keys[i] : NULL; }

const deck_key_t *deck_key_find(const char *key)
{
    char generic[96];
    /* model.disc.radius -> model.NAME.radius */
    if (!strncmp(key, "model.", 6) && strcmp(key, "model.objects") != 0) {
        const char *last = strrchr(key, '.');
        if (last > key + 6 && !memchr(key + 6, '.', (size_t)(last - (key + 6)))) { /* one NAME, no dots */
            snprintf(generic, sizeof generic, "model.NAME%.80s", last);
            key = generic;
        }
    }
    for (int i = 0; i < NKEYS; ++i)
        if (!strcmp(k_keys[i].key, key)) return &k_keys[i];
    return NULL;
}

int deck_nearest(const char *word, const char *const *choices, int n)
{
    /* Edit distance with adjacent transpositions (optimal string alignment: 'rnu' is one edit from
     * 'run'), letters compared without case; a word is near a choice within 2 edits and a third of
     * the longer of the two (so 'dim' is not offered for 'xyz', and 'run' is for 'rn') */
    const size_t lw = strlen(word);
    if (lw == 0 || lw > 120) return -1;
    int best = -1, bestd = 3;
#define LOW(s, i) tolower((unsigned char)(s)[(i)])
    for (int c = 0; c < n; ++c) {
        const char *t = choices[c];
        const size_t lt = strlen(t);
        if (lt > 120) continue;
        int prev2[122], prev[122], cur[122];
        for (size_t j = 0; j <= lt; ++j) prev[j] = (int)j;
        for (size_t i = 1; i <= lw; ++i) {
            cur[0] = (int)i;
            for (size_t j = 1; j <= lt; ++j) {
                int v = prev[j - 1] + (LOW(word, i - 1) != LOW(t, j - 1));
                if (prev[j] + 1 < v) v = prev[j] + 1;
                if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
                if (i > 1 && j > 1 && LOW(word, i - 1) == LOW(t, j - 2) && LOW(word, i - 2) == LOW(t, j - 1) &&
                    prev2[j - 2] + 1 < v)
                    v = prev2[j - 2] + 1;
                cur[j] = v;
            }
            memcpy(prev2, prev, (lt + 1) * sizeof *prev);
            memcpy(prev, cur, (lt + 1) * sizeof *prev);
        }
        const int dist = prev[lt];
        if (dist < bestd && (size_t)dist * 3 <= (lw > lt ? lw : lt)) best = c, bestd = dist;
    }
#undef LOW
    return best;
}

const char *deck_key_suggest(const char *key, char *buf, size_t n)
{
    const char *names[NKEYS];
    int nn = 0;
    const char *last = strrchr(key, '.');
    const int is_obj = !strncmp(key, "model.", 6) && last > key + 6 && strcmp(key, "model.objects") != 0 &&
                       !memchr(key + 6, '.', (size_t)(last - (key + 6)));
    for (int i = 0; i < NKEYS; ++i) {
        const char *k = k_keys[i].key;
        const int obj = !strncmp(k, "model.NAME.", 11);
        if (obj == is_obj) names[nn++] = obj ? k + 10 : k; /* model.NAME.radius: compare ".radius" */
    }
    const int i = deck_nearest(is_obj ? last : key, names, nn);
    if (i < 0) return NULL;
    if (is_obj) snprintf(buf, n, "%.*s%s", (int)(last - key), key, names[i]);
    else snprintf(buf, n, "%s", names[i]);
    return strcmp(buf, key) ? buf : NULL;
}

/** The table row of key; every caller names a key of the table. */
static const deck_key_t *row(const char *key)
{
    const deck_key_t *k = deck_key_find(key);
    if (!k) abort(); /* a schema key missing from the table: a programming error */
    return k;
}

static int count_of(int c, int dim, int nf) { return c == DK_DIM ? dim : c == DK_NF ? nf : c; }

/** The valid values of a row as text: "a, b, c" for a choice, "lo..hi[ each]" for ints. */
const char *deck_key_valid(const deck_key_t *k, char *buf, size_t n)
{
    buf[0] = '\0';
    if (k->kind == 'c') {
        for (int i = 0; k->choices[i]; ++i) {
            strncat(buf, i ? ", " : "", n - strlen(buf) - 1);
            strncat(buf, k->choices[i], n - strlen(buf) - 1);
        }
    } else if (k->kind == 'i') {
        if (k->nmax > 1 && k->nmin >= 1) /* a list of a given length: bench_groups */
            snprintf(buf, n, "%d to %d values, %lld..%lld each", k->nmin, k->nmax, k->lo, k->hi);
        else snprintf(buf, n, "%lld..%lld%s", k->lo, k->hi, k->nmax != 1 ? " each" : "");
    }
    if (k->range) {
        const size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s", l ? "; " : "", k->range);
    }
    return buf;
}

void deck_key_help(FILE *fp, const deck_key_t *k)
{
    char valid[512];
    fprintf(fp, "%s\n  type:    %s\n  default: %s\n", k->key, k->type, k->def);
    deck_key_valid(k, valid, sizeof valid);
    if (valid[0]) fprintf(fp, "  valid:   %s\n", valid);
    fprintf(fp, "  %s\n", k->meaning);
}

/** The unknown-key message's list: the table's keys, the model.NAME.* rows as one. */
static const char *keys_help(char *buf, size_t n)
{
    buf[0] = '\0';
    for (int i = 0; i < NKEYS; ++i) {
        const char *k = k_keys[i].key;
        if (!strncmp(k, "model.NAME.", 11)) {
            if (strcmp(k, "model.NAME.type") != 0) continue;
            k = "model.NAME.{type,center,radius,velocity,inside,outside}";
        }
        strncat(buf, i ? ", " : "", n - strlen(buf) - 1);
        strncat(buf, k, n - strlen(buf) - 1);
    }
    return buf;
}

/* typed getters by the table row */
static int get_ints_k(kv_t *kv, const char *key, long long *out, int dim)
{
    const deck_key_t *k = row(key);
    return get_ints(kv, key, out, count_of(k->nmin, dim, 0), count_of(k->nmax, dim, 0), k->lo, k->hi, k->what);
}

static int get_doubles_k(kv_t *kv, const char *key, double *out, int dim, int nf)
{
    const deck_key_t *k = row(key);
    return get_doubles(kv, key, out, count_of(k->nmin, dim, nf), count_of(k->nmax, dim, nf), k->what);
}

static int get_choice_k(kv_t *kv, const char *key, int *out)
{
    const deck_key_t *k = row(key);
    int n = 0;
    while (k->choices[n]) ++n;
    return get_choice(kv, key, k->choices, n, out);
}

static int get_names_k(kv_t *kv, const char *key, char (*out)[64])
{
    const deck_key_t *k = row(key);
    return get_names(kv, key, out, k->nmin, k->nmax);
}

/* ---- the schema ------------------------------------------------------------------------------ */

static int is_pow2(long long x) { return x > 0 && (x & (x - 1)) == 0; }

static int parse_objects(kv_t *kv, deck_t *d)
{
    dp_params *p = &d->p;
    p->nobj = 0;
    int n = get_names_k(kv, "model.objects", d->object_name);
    if (n < 0) return -1;
    p->nobj = n;
    for (int o = 0; o < n; ++o) {
        dp_object *ob = &p->obj[o];
        char key[160];
        const char *nm = d->object_name[o];
        int kind = 0;
        snprintf(key, sizeof key, "model.%s.type", nm);
        int r = get_choice_k(kv, key, &kind);
        if (r == -2) return -1;
        if (r == -1) return fail(kv, NULL, "object '%s' needs '%s' (ellipsoid, sphere, box or gaussian)", nm, key);
        ob->kind = kind == 3 ? DP_OBJ_ELLIPSOID : kind;
        snprintf(key, sizeof key, "model.%s.center", nm);
        r = get_doubles_k(kv, key, ob->center, p->dim, p->nf);
        if (r < 0) return -1;
        if (r == 0) return fail(kv, NULL, "object '%s' needs '%s' (%d numbers)", nm, key, p->dim);
        snprintf(key, sizeof key, "model.%s.radius", nm);
        double rad[3];
        r = get_doubles_k(kv, key, rad, p->dim, p->nf);
        if (r < 0) return -1;
        if (r == 0) return fail(kv, NULL, "object '%s' needs '%s' (1 or %d positive numbers)", nm, key, p->dim);
        if (r != 1 && r != p->dim)
            return fail(kv, find(kv, key), "expected 1 or %d numbers (one radius for all axes, or one per axis)", p->dim);
        for (int a = 0; a < 3; ++a) {
            ob->radius[a] = a < p->dim ? rad[r == 1 ? 0 : a] : 1.0;
            if (!(ob->radius[a] > 0)) return fail(kv, find(kv, key), "radii must be > 0");
        }
        if (kind == 3 && r != 1) return fail(kv, find(kv, key), "a sphere has one radius (use ellipsoid for several)");
        if (p->dim == 2) ob->center[2] = 0.0;
        snprintf(key, sizeof key, "model.%s.velocity", nm);
        for (int a = 0; a < 3; ++a) ob->velocity[a] = 0.0;
        if (get_doubles_k(kv, key, ob->velocity, p->dim, p->nf) < 0) return -1;
        if (p->dim == 2) ob->velocity[2] = 0.0;
        for (int side = 0; side < 2; ++side) {
            double v[DP_MAX_FIELDS];
            double *dst = side ? ob->outside : ob->inside;
            snprintf(key, sizeof key, "model.%s.%s", nm, side ? "outside" : "inside");
            r = get_doubles_k(kv, key, v, p->dim, p->nf);
            if (r < 0) return -1;
            if (r > 1 && r != p->nf)
                return fail(kv, find(kv, key), "expected 1 or %d numbers (one value for all fields, or one per field)",
                            p->nf);
            for (int f = 0; f < p->nf; ++f) dst[f] = r == 0 ? (side ? 0.0 : 1.0) : v[r == 1 ? 0 : f];
        }
    }
    /* a cell's model value is the sum over the objects of a value between outside and inside, stored
     * as float32: the sum of the largest magnitudes must stay within float's range, or a cell may
     * be infinite (and validation would fail after the whole run) */
    for (int f = 0; f < p->nf; ++f) {
        double bound = 0.0, top = -1.0; /* the sum, and the largest value (the key the message names) */
        int at = 0, side = 0;
        for (int o = 0; o < p->nobj; ++o) {
            const double in = fabs(p->obj[o].inside[f]), out = fabs(p->obj[o].outside[f]);
            bound += fmax(in, out);
            if (in > top) top = in, at = o, side = 0;
            if (out > top) top = out, at = o, side = 1;
        }
        if (bound > FLT_MAX) {
            char key[128];
            snprintf(key, sizeof key, "model.%s.%s", d->object_name[at], side ? "outside" : "inside");
            return fail(kv, find(kv, key), "field '%s': the objects' values can add up to %.17g in a cell, past "
                        "float32's largest %.9g (the cells are float32): make the values smaller",
                        d->field_name[f], bound, (double)FLT_MAX);
        }
    }
    return 0;
}

void deck_default_output(const char *deck_path, int steps, char *out, size_t n)
{
    const char *base = strrchr(deck_path, '/');
    base = base ? base + 1 : deck_path;
    char name[4096];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strrchr(name, '.');
    if (dot && dot != name) *dot = '\0';
    for (char *c = name; *c; ++c)
        if (*c == '%') *c = '_'; /* a pattern holds one %d only */
    snprintf(out, n, steps ? "%s_%%05d.hdf" : "%s.hdf", name);
}

/* The step number conversion of an output pattern: exactly one %d, %Nd or %0Nd (width up to 9), in
 * the file name (after the last '/'), no other '%'. Returns its start offset, or -1 with what is wrong
 * in why. */
int deck_pattern_check(const char *pat, size_t *len, char *why, size_t n)
{
    const char *slash = strrchr(pat, '/'), *conv = NULL;
    size_t clen = 0;
    for (const char *s = pat; *s; ++s) {
        if (*s != '%') continue;
        const char *q = s + 1;
        if (*q == '0') ++q;
        int digits = 0;
        while (*q >= '0' && *q <= '9') ++q, ++digits;
        if (*q != 'd' || digits > 1 || (q > s + 1 && s[1] == '0' && digits == 0))
            return snprintf(why, n, "'%%' at character %d is not %%d or %%0Nd (N one digit)", (int)(s - pat) + 1), -1;
        if (conv) return snprintf(why, n, "more than one %%d (one step number per name)"), -1;
        conv = s;
        clen = (size_t)(q - s) + 1;
        s = q;
    }
    if (!conv) return snprintf(why, n, "no %%d: with steps > 0 output names one file per output step, e.g. run_%%05d.hdf"), -1;
    if (slash && conv < slash) return snprintf(why, n, "the %%d must be in the file name, not in a folder"), -1;
    *len = clen;
    return (int)(conv - pat);
}

/* steps, dt, regrid_every, output_every: the time-step keys (after output, whose pattern they check). */
static int parse_steps(kv_t *kv, deck_t *d, const char *deck_path)
{
    char obuf[260];
    long long v[2];
    int r;
    d->steps = 0;
    if ((r = get_ints_k(kv, "steps", v, d->p.dim)) < 0) return -1;
    if (r) d->steps = v[0];
    d->dt = 0.0;
    if ((r = get_doubles_k(kv, "dt", &d->dt, d->p.dim, 0)) < 0) return -1;
    if (r && !(d->dt > 0)) return fail(kv, find(kv, "dt"), "must be > 0");
    d->regrid_every = 1;
    if ((r = get_ints_k(kv, "regrid_every", v, d->p.dim)) < 0) return -1;
    if (r) d->regrid_every = (int)v[0];
    d->output_every = 1;
    if ((r = get_ints_k(kv, "output_every", v, d->p.dim)) < 0) return -1;
    if (r) d->output_every = (int)v[0];
    if (d->output_every % d->regrid_every != 0)
        return fail(kv, find(kv, "output_every"), "must be a multiple of regrid_every = %d (a file shows a regridded "
                    "mesh; the steps between regrids only advance the time)", d->regrid_every);
    size_t len = 0;
    char why[256];
    if (d->steps == 0) return 0; /* output is a name, '%' and all (run_output_name refuses a step pattern) */
    if (!find(kv, "dt"))
        return fail(kv, find(kv, "steps"), "steps > 0 needs dt (the time step, a number > 0)");
    if (d->p.nobj == 0)
        return fail(kv, find(kv, "steps"), "steps > 0 needs model.objects: the steps move the model's objects and "
                    "sample them again");
    /* the last step's time and every object's centre then, as the steps compute them (k x dt,
     * dp_object_at): finite, or the objects would vanish (0 x inf) and the series hold no number */
    const double tmax = (double)d->steps * d->dt;
    if (!isfinite(tmax))
        return fail(kv, find(kv, "dt"), "steps x dt = %lld x %g is not a finite number: the last step's time must be "
                    "one", d->steps, d->dt);
    for (int o = 0; o < d->p.nobj; ++o)
        for (int a = 0; a < d->p.dim; ++a) {
            const dp_object *ob = &d->p.obj[o];
            if (isfinite(ob->center[a] + ob->velocity[a] * tmax)) continue;
            char key[160];
            snprintf(key, sizeof key, "model.%s.velocity", d->object_name[o]);
            entry_t *e = find(kv, key);
            return fail(kv, e ? e : find(kv, "dt"), "object '%s' would be at a coordinate that is not a finite number "
                        "by the last step (t = %g, axis %d): lower its velocity, dt or steps", d->object_name[o], tmax, a);
        }
    if (d->output_default) deck_default_output(deck_path, 1, d->output, sizeof d->output);
    const int at = deck_pattern_check(d->output, &len, why, sizeof why);
    const int spaces = at >= 0 && len == 3 && d->output[at + 1] != '0'; /* %Nd: printf pads it with spaces */
    if (spaces)
        snprintf(why, sizeof why, "'%.3s' at character %d pads the step number with spaces (a file name with blanks): "
                 "write %%0%cd (zeros) or %%d", d->output + at, at + 1, d->output[at + 1]);
    if (at < 0 || spaces) {
        entry_t *e = find(kv, "output");
        return e ? fail(kv, e, "%s", why)
                 : fail(kv, NULL, "output = %s (the default) with steps = %lld: %s", clip(d->output, obuf, sizeof obuf),
                        d->steps, why);
    }
    return 0;
}

static int schema(kv_t *kv, deck_t *d, const char *deck_path)
{
    dp_params *p = &d->p;
    long long v[8];
    int r;

    p->dim = 2;
    if ((r = get_ints_k(kv, "dim", v, 0)) < 0) return -1;
    if (r) p->dim = (int)v[0];

    d->root[0] = d->root[1] = d->root[2] = 1;
    for (int a = 0; a < p->dim; ++a) d->root[a] = 4;
    if ((r = get_ints_k(kv, "root", v, p->dim)) < 0) return -1;
    for (int a = 0; a < r; ++a) d->root[a] = (int)v[a];

    p->B = 8;
    if ((r = get_ints_k(kv, "tile_size", v, p->dim)) < 0) return -1;
    if (r) {
        if (!is_pow2(v[0])) return fail(kv, find(kv, "tile_size"), "not a power of two (valid: 4, 8, 16, 32)");
        p->B = (int)v[0];
    }

    p->max_level = 4;
    if ((r = get_ints_k(kv, "max_level", v, p->dim)) < 0) return -1;
    if (r) p->max_level = (int)v[0];
    /* Tile coordinates at the finest level must fit the sort key (dim * bits + 5 <= 64) and cell
     * indices an int32: root x 2^max_level <= 2^29 (2D) or 2^19 (3D) and x tile_size < 2^31. */
    {
        const int bits = p->dim == 2 ? 29 : 19;
        int rmax = 0;
        for (int a = 0; a < p->dim; ++a) rmax = d->root[a] > rmax ? d->root[a] : rmax;
        const long long span = (long long)rmax << p->max_level;
        long long limit = 1ll << bits;
        if (limit * p->B > 2147483647ll) limit = 2147483647ll / p->B;
        if (span > limit) {
            entry_t *e = find(kv, "max_level");
            return fail(kv, e, "root tiles x 2^max_level = %lld tiles per axis exceeds %lld, the most %dD with "
                               "tile_size %d allows (Morton sort key and 32-bit cell indices); lower max_level or root",
                        span, limit, p->dim, p->B);
        }
    }

    for (int a = 0; a < 3; ++a) p->origin[a] = 0.0;
    if ((r = get_doubles_k(kv, "origin", p->origin, p->dim, 0)) < 0) return -1;

    int rmax = 0;
    for (int a = 0; a < p->dim; ++a) rmax = d->root[a] > rmax ? d->root[a] : rmax;
    p->h0 = 1.0 / ((double)rmax * p->B);
    if ((r = get_doubles_k(kv, "cell_size", &p->h0, p->dim, 0)) < 0) return -1;
    if (!(p->h0 > 0)) return fail(kv, find(kv, "cell_size"), "must be > 0");
    /* the domain's far corner and the finest spacing are numbers: cell centres are origin + (i + 0.5) x h
     * (the user's decks; one stored by an earlier version is held to that version's rules) */
    for (int a = 0; a < p->dim && kv->user; ++a) {
        const double far = p->origin[a] + (double)d->root[a] * p->B * p->h0;
        if (!isfinite(far))
            return fail(kv, find(kv, "cell_size") ? find(kv, "cell_size") : find(kv, "origin"),
                        "the domain's far corner on axis %d, origin + root x tile_size x cell_size = %g + %d x %d x %g, "
                        "is not a finite number", a, p->origin[a], d->root[a], p->B, p->h0);
    }
    if (kv->user && !(ldexp(p->h0, -p->max_level) > 0))
        return fail(kv, find(kv, "cell_size"), "cell_size / 2^max_level = %g / 2^%d rounds to 0: the finest cells "
                    "would have no size", p->h0, p->max_level);

    p->nf = 1;
    strcpy(d->field_name[0], "rho");
    if ((r = get_names_k(kv, "fields", d->field_name)) < 0) return -1;
    for (int f = 0; f < r; ++f) /* the files' /VTKHDF CellData holds the fields and the ghost array */
        if (strcmp(d->field_name[f], "vtkGhostType") == 0)
            return fail(kv, find(kv, "fields"), "'vtkGhostType' is reserved (the ghost array ParaView reads beside "
                                                "the fields); choose another name");
    if (r > 0) p->nf = r;

    p->fill = DP_FILL_PROLONG;
    if (get_choice_k(kv, "fill", &p->fill) == -2) return -1;

    p->crit = DP_CRIT_JUMP;
    if (get_choice_k(kv, "criterion", &p->crit) == -2) return -1;

    p->balance = DP_BALANCE_NONE;
    if (get_choice_k(kv, "balance", &p->balance) == -2) return -1;

    p->crit_field = 0;
    entry_t *cf = find(kv, "criterion_field");
    if (cf) {
        cf->used = 1;
        int found = -1;
        for (int f = 0; f < p->nf; ++f)
            if (strcmp(cf->val, d->field_name[f]) == 0) found = f;
        if (found < 0) {
            char names[DP_MAX_FIELDS * 65] = "";
            for (int f = 0; f < p->nf; ++f) {
                const size_t k = strlen(names);
                snprintf(names + k, sizeof names - k, "%s%s", f ? " " : "", d->field_name[f]);
            }
            return fail(kv, cf, "not one of the names in 'fields' (%s)", names);
        }
        p->crit_field = found;
    }

    p->threshold = 0.1;
    if ((r = get_doubles_k(kv, "threshold", &p->threshold, p->dim, 0)) < 0) return -1;
    if (!(p->threshold > 0)) return fail(kv, find(kv, "threshold"), "must be > 0");
    p->threshold_f = (float)p->threshold;

    if (parse_objects(kv, d) < 0) return -1;
    if (p->fill == DP_FILL_MODEL && p->nobj == 0) /* every new cell would be 0 */
        return fail(kv, find(kv, "fill"), "fill = model makes the new tiles' cells from model.objects, and the deck "
                    "names none: give model.objects, or fill = prolong");

    /* Paths: set in the deck file, relative to the deck's folder; on the command line, relative to
     * the current directory (get_path). mesh_file's default, the deck's name with .mesh.hdf, lies
     * beside the deck; output's default in the current directory. */
    if ((r = get_path(kv, "mesh_file", d->mesh_file, sizeof d->mesh_file, d->dir)) < 0) return -1;
    if (r == 0) {
        char mf[4096];
        const char *base = strrchr(deck_path, '/');
        base = base ? base + 1 : deck_path;
        snprintf(mf, sizeof mf, "%s", base);
        char *dot = strrchr(mf, '.');
        if (dot && dot != mf) *dot = '\0';
        strncat(mf, ".mesh.hdf", sizeof mf - strlen(mf) - 1);
        if (!d->dir[0]) snprintf(d->mesh_file, sizeof d->mesh_file, "%s", mf);
        else snprintf(d->mesh_file, sizeof d->mesh_file, "%s/%s", d->dir, mf);
    }

    /* output's default: the deck's name with .hdf (with steps > 0, _%05d.hdf: parse_steps) in the
     * current directory, so a shipped or shared deck writes where the user runs it */
    deck_default_output(deck_path, 0, d->output, sizeof d->output);
    if ((r = get_path(kv, "output", d->output, sizeof d->output, d->dir)) < 0) return -1;
    d->output_default = r == 0;
    const char *oname = strrchr(d->output, '/');
    oname = oname ? oname + 1 : d->output;
    const size_t ol = strlen(oname);
    if (ol < 4 || strcmp(oname + ol - 4, ".hdf") != 0)
        return fail(kv, find(kv, "output"), "must end in .hdf (the extension ParaView 5.11 opens as VTKHDF)");
    if (ol == 4 && kv->user) /* (a deck stored by an earlier version is held to that version's rules) */
        return fail(kv, find(kv, "output"), "has no name before .hdf (give one, e.g. run.hdf)");

    if (parse_steps(kv, d, deck_path) < 0) return -1;

    d->variant = DP_VARIANT_AUTO;
    if (get_choice_k(kv, "variant", &d->variant) == -2) return -1;
    if (d->variant == DP_VARIANT_HOSTLAUNCH + 1) d->variant = DP_VARIANT_HOSTLAUNCH; /* "host", the old name */

    d->pdl = 1;
    if (get_choice_k(kv, "pdl", &d->pdl) == -2) return -1;

    d->pdl_trigger_early = 0;
    if (get_choice_k(kv, "pdl_trigger", &d->pdl_trigger_early) == -2) return -1;

    d->mpi_write = DP_MPI_WRITE_AUTO;
    if (get_choice_k(kv, "mpi_write", &d->mpi_write) == -2) return -1;

    d->max_tiles = 0;
    if ((r = get_ints_k(kv, "max_tiles", v, p->dim)) < 0) return -1;
    if (r) d->max_tiles = v[0];
    d->pool = 0;
    if ((r = get_ints_k(kv, "pool", v, p->dim)) < 0) return -1;
    if (r) d->pool = v[0];
    d->cdp_grain = DP_GRAIN_LEVEL;
    if (get_choice_k(kv, "cdp_grain", &d->cdp_grain) == -2) return -1;
    d->cdp_group = 32;
    if ((r = get_ints_k(kv, "cdp_group", v, p->dim)) < 0)
        return -1;
    if (r) d->cdp_group = (int)v[0];
    d->trace[0] = '\0';
    if (get_path(kv, "trace", d->trace, sizeof d->trace, d->dir) < 0) return -1;
    d->threads = 0;
    if ((r = get_ints_k(kv, "threads", v, p->dim)) < 0) return -1;
    if (r) d->threads = (int)v[0];

    d->bench_repeats = 5;
    if ((r = get_ints_k(kv, "bench_repeats", v, p->dim)) < 0) return -1;
    if (r) d->bench_repeats = (int)v[0];
    d->bench_warmup = 1;
    if ((r = get_ints_k(kv, "bench_warmup", v, p->dim)) < 0) return -1;
    if (r) d->bench_warmup = (int)v[0];
    d->bench_cpu = 1;
    if (get_choice_k(kv, "bench_cpu", &d->bench_cpu) == -2) return -1;
    {
        static const int def[] = { 8, 64, 512 };
        d->nbench_groups = 3;
        for (int i = 0; i < 3; ++i) d->bench_groups[i] = def[i];
        if ((r = get_ints_k(kv, "bench_groups", v, p->dim)) < 0)
            return -1;
        if (r) {
            d->nbench_groups = r;
            for (int i = 0; i < r; ++i) d->bench_groups[i] = (int)v[i];
        }
    }
    snprintf(d->bench_out, sizeof d->bench_out, "bench");
    if (get_path(kv, "bench_out", d->bench_out, sizeof d->bench_out, d->dir) < 0) return -1;
    const char *bname = strrchr(d->bench_out, '/');
    bname = bname ? bname + 1 : d->bench_out;
    if (!*bname || strcmp(bname, ".") == 0 || strcmp(bname, "..") == 0)
        return fail(kv, find(kv, "bench_out"), "names a folder, not a prefix (give one, e.g. out/bench: "
                                               "out/bench.csv and out/bench.json)");

    d->overwrite = DP_OVERWRITE_OWN;
    if (get_choice_k(kv, "overwrite", &d->overwrite) == -2) return -1;
    d->verbosity = DP_VERBOSITY_NORMAL;
    if (get_choice_k(kv, "verbosity", &d->verbosity) == -2) return -1;
    d->progress = 1;
    if (get_choice_k(kv, "progress", &d->progress) == -2) return -1;
    d->validate = DP_VALIDATE_AUTO;
    if (get_choice_k(kv, "validate", &d->validate) == -2) return -1;

    for (int i = 0; i < kv->n; ++i)
        if (!kv->e[i].used) {
            char list[1024], generic[128];
            /* model.NAME.type and the like, for a NAME that model.objects does not list */
            const char *k = kv->e[i].key, *last = strrchr(k, '.');
            if (!strncmp(k, "model.", 6) && last > k + 6 && strchr(k + 6, '.') == last) {
                snprintf(generic, sizeof generic, "model.NAME%.80s", last);
                if (deck_key_find(generic)) {
                    const entry_t *objs = find(kv, "model.objects");
                    char name[128], hint[200] = "";
                    snprintf(name, sizeof name, "%.*s", (int)(last - (k + 6)) < 127 ? (int)(last - (k + 6)) : 127, k + 6);
                    const char *names[DP_MAX_OBJECTS];
                    for (int o = 0; o < d->p.nobj; ++o) names[o] = d->object_name[o];
                    const int near = deck_nearest(name, names, d->p.nobj); /* a misspelt object: its nearest */
                    if (near >= 0) snprintf(hint, sizeof hint, "did you mean '%s'? ", names[near]);
                    return fail(kv, &kv->e[i], "object '%s' is not in model.objects (%s): %sadd it there, or remove "
                                "its keys", name, objs ? clip(objs->val, list, sizeof list) : "not set", hint);
                }
            }
            char near[160];
            if (deck_key_suggest(k, near, sizeof near))
                return fail(kv, &kv->e[i], "unknown key; did you mean '%s'? (`dpamr help keys` lists every key)", near);
            return fail(kv, &kv->e[i], "unknown key (valid keys: %s)", keys_help(list, sizeof list));
        }
    return 0;
}

/* The effective deck as text: one `key = value` line per entry, overrides applied. */
static char *render(const kv_t *kv)
{
    size_t len = 64;
    for (int i = 0; i < kv->n; ++i) len += strlen(kv->e[i].key) + strlen(kv->e[i].val) + 6;
    char *s = malloc(len), *w = s;
    if (!s) return NULL;
    w += sprintf(w, "# effective deck (file plus overrides)\n");
    for (int i = 0; i < kv->n; ++i) {
        const char *q = kv->e[i].quoted ? "\"" : "";
        w += sprintf(w, "%s = %s%s%s\n", kv->e[i].key, q, kv->e[i].val, q);
    }
    return s;
}

static void kv_free(kv_t *kv)
{
    for (int i = 0; i < kv->n; ++i) {
        free(kv->e[i].key);
        free(kv->e[i].val);
    }
    free(kv->e);
    free(kv->slot);
}

static int finish(deck_t *d, kv_t *kv, int rc)
{
    if (rc == 0) d->text = render(kv);
    kv_free(kv);
    return rc;
}

int deck_parse_text(deck_t *d, const char *origin, const char *text, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    snprintf(d->path, sizeof d->path, "%s", origin);
    kv_t kv = { NULL, 0, 0, origin, err, errlen, NULL, 0, 0 };
    int rc = parse_text(&kv, text);
    if (rc == 0) rc = schema(&kv, d, origin);
    return finish(d, &kv, rc);
}

int deck_load(deck_t *d, const char *path, int noverride, char **overrides, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    snprintf(d->path, sizeof d->path, "%s", path);
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(d->dir, sizeof d->dir, "%.*s", (int)(slash - path), path);
    if (slash == path) strcpy(d->dir, "/");

    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below like a directory
     * or a device (only a regular file is a deck) */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *fp = fd < 0 ? NULL : fdopen(fd, "rb");
    struct stat st;
    if (!fp || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const int e = errno;
        snprintf(err, errlen, "%s: cannot open deck: %s", path,
                 fp ? "not a regular file (a directory, FIFO or device is not a deck)" : strerror(e));
        if (fp) fclose(fp);
        else if (fd >= 0) close(fd);
        return -1;
    }
    size_t cap = 4096, n = 0;
    char *text = malloc(cap);
    for (size_t got; text && (got = fread(text + n, 1, cap - n - 1, fp)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *grown = realloc(text, cap *= 2);
            if (!grown) free(text);
            text = grown;
        }
    }
    const int bad = !text || ferror(fp);
    fclose(fp);
    if (bad) {
        free(text);
        snprintf(err, errlen, "%s: cannot read deck (%s)", path, text ? "read error" : "out of memory");
        return -1;
    }
    text[n] = '\0';
    if (strlen(text) != n) {
        free(text);
        snprintf(err, errlen, "%s: not a text deck (contains a NUL byte)", path);
        return -1;
    }
    kv_t kv = { NULL, 0, 0, path, err, errlen, NULL, 0, 1 };
    int rc = parse_text(&kv, text);
    free(text);
    for (int i = 0; rc == 0 && i < noverride; ++i) {
        char *o = strdup(overrides[i]);
        char *eq = strchr(o, '=');
        if (!eq) {
            char v[260];
            snprintf(err, errlen, "command line: '%s' is not key=value", clip(overrides[i], v, sizeof v));
            rc = -1;
        } else {
            *eq = '\0';
            kv.origin = path;
            int quoted = 0;
            char *key = trim(o), *val = unquote(&kv, key, trim(eq + 1), 0, &quoted);
            rc = val ? add(&kv, key, val, 0, quoted) : -1;
        }
        free(o);
    }
    if (rc == 0) rc = schema(&kv, d, path);
    d->noverrides = noverride;
    return finish(d, &kv, rc);
}

static int same_doubles(const double *a, const double *b, int n) { return memcmp(a, b, (size_t)n * sizeof *a) == 0; }

/* deck_same_refinement's comparison; levels_only: the keys that shaped the levels a file already
 * holds (not max_level; the model only where fill = model makes the cells from it; no velocity). */
static int same_refinement(const deck_t *a, const deck_t *b, int levels_only, char *key, size_t n)
{
    const dp_params *p = &a->p, *q = &b->p;
#define DIFFERS(...) return snprintf(key, n, __VA_ARGS__), 0
    if (p->dim != q->dim) DIFFERS("dim");
    if (memcmp(a->root, b->root, sizeof a->root) != 0) DIFFERS("root");
    if (p->B != q->B) DIFFERS("tile_size");
    if (!same_doubles(p->origin, q->origin, 3)) DIFFERS("origin");
    if (!same_doubles(&p->h0, &q->h0, 1)) DIFFERS("cell_size");
    if (!levels_only && p->max_level != q->max_level) DIFFERS("max_level");
    if (p->nf != q->nf) DIFFERS("fields");
    for (int f = 0; f < p->nf; ++f)
        if (strcmp(a->field_name[f], b->field_name[f]) != 0) DIFFERS("fields");
    if (p->fill != q->fill) DIFFERS("fill");
    if (p->balance != q->balance) DIFFERS("balance");
    if (p->crit != q->crit) DIFFERS("criterion");
    if (p->crit_field != q->crit_field) DIFFERS("criterion_field");
    if (!same_doubles(&p->threshold, &q->threshold, 1) || p->threshold_f != q->threshold_f) DIFFERS("threshold");
    if (levels_only && p->fill != DP_FILL_MODEL) return 1;
    if (p->nobj != q->nobj) DIFFERS("model.objects");
    for (int o = 0; o < p->nobj; ++o) {
        const dp_object *u = &p->obj[o], *v = &q->obj[o];
        const char *nm = a->object_name[o];
        if (strcmp(nm, b->object_name[o]) != 0) DIFFERS("model.objects");
        if (u->kind != v->kind) DIFFERS("model.%s.type", nm);
        if (!same_doubles(u->center, v->center, 3)) DIFFERS("model.%s.center", nm);
        if (!same_doubles(u->radius, v->radius, 3)) DIFFERS("model.%s.radius", nm);
        if (!levels_only && !same_doubles(u->velocity, v->velocity, 3)) DIFFERS("model.%s.velocity", nm);
        if (!same_doubles(u->inside, v->inside, p->nf)) DIFFERS("model.%s.inside", nm);
        if (!same_doubles(u->outside, v->outside, p->nf)) DIFFERS("model.%s.outside", nm);
    }
#undef DIFFERS
    return 1;
}

int deck_same_refinement(const deck_t *a, const deck_t *b, char *key, size_t n) { return same_refinement(a, b, 0, key, n); }

int deck_same_levels(const deck_t *a, const deck_t *b, char *key, size_t n) { return same_refinement(a, b, 1, key, n); }

void deck_free(deck_t *d)
{
    free(d->text);
    d->text = NULL;
}

const char *deck_variant_name(int v)
{
    static const char *const names[] = { "auto", "cpu", "cdp", "hostlaunch" };
    return v >= 0 && v < 4 ? names[v] : "?";
}

const char *deck_grain_name(int g)
{
    static const char *const names[] = { "tile", "group", "level" };
    return g >= 0 && g < 3 ? names[g] : "?";
}

const char *deck_engine_label(const deck_t *d, int variant, char *buf, size_t n)
{
    if (variant == DP_VARIANT_CPU) snprintf(buf, n, "cpu");
    else if (variant == DP_VARIANT_CDP && d->cdp_grain == DP_GRAIN_GROUP)
        snprintf(buf, n, "cdp cdp_grain=group cdp_group=%d pdl=%s", d->cdp_group, d->pdl ? "on" : "off");
    else if (variant == DP_VARIANT_CDP)
        snprintf(buf, n, "cdp cdp_grain=%s pdl=%s", deck_grain_name(d->cdp_grain), d->pdl ? "on" : "off");
    else snprintf(buf, n, "%s pdl=%s", deck_variant_name(variant), d->pdl ? "on" : "off");
    return buf;
}
