/* deck.h - input decks: `key = value` lines, `#` comments, `key=value` overrides. */
#ifndef DPAMR_DECK_H
#define DPAMR_DECK_H

#include <stddef.h>
#include <stdio.h>
#include "src/core.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { DP_VARIANT_AUTO = 0, DP_VARIANT_CPU, DP_VARIANT_CDP, DP_VARIANT_HOSTLAUNCH };
/* cdp launch grain: one child grid per refining tile, per group of tiles, or per level */
enum { DP_GRAIN_TILE = 0, DP_GRAIN_GROUP, DP_GRAIN_LEVEL };
#define DP_MAX_GROUP 1024     /* cdp_group: tiles per block and per child grid, at most */
#define DP_MAX_BENCH_GROUPS 8
/* mpi_write: auto = collective when HDF5 has parallel I/O, else gather to rank 0 */
enum { DP_MPI_WRITE_AUTO = 0, DP_MPI_WRITE_COLLECTIVE, DP_MPI_WRITE_GATHER };
/* overwrite: own = replace a file dpamr wrote earlier (saying so), never = refuse any existing file.
 * A file dpamr did not write is never replaced. */
enum { DP_OVERWRITE_OWN = 0, DP_OVERWRITE_NEVER };
enum { DP_VERBOSITY_QUIET = 0, DP_VERBOSITY_NORMAL, DP_VERBOSITY_VERBOSE };
/* validate: where a GPU variant's result is validated (auto = gpu for the GPU variants) */
enum { DP_VALIDATE_AUTO = 0, DP_VALIDATE_GPU, DP_VALIDATE_CPU };

/** A parsed, checked deck. Keys, defaults and valid values are documented in docs/decks.md. */
typedef struct {
    char path[4096];        /* the deck file as given */
    char dir[4096];         /* its directory: relative paths set in the deck file resolve from here */
    char *text;             /* the deck text plus overrides, as stored in output files */
    int noverrides;         /* command-line overrides given (deck_load) */
    dp_params p;            /* numerics shared with the kernels */
    int root[3];
    char field_name[DP_MAX_FIELDS][64];
    char object_name[DP_MAX_OBJECTS][64];
    char mesh_file[8192];   /* resolved path */
    char output[8192];      /* resolved path (steps > 0: a pattern with one %d, deck_pattern_check) */
    int output_default;     /* output not given: the deck's name (deck_default_output) */
    long long steps;        /* time steps after the first build (0: one build) */
    double dt;              /* time step: step k is at time k * dt */
    int regrid_every;       /* regrid every this many steps */
    int output_every;       /* write a file every this many steps (a multiple of regrid_every) */
    int overwrite;          /* DP_OVERWRITE_* */
    int verbosity;          /* DP_VERBOSITY_*: what dpamr run prints */
    int variant;            /* DP_VARIANT_* */
    int pdl;                /* 1 on, 0 off */
    int mpi_write;          /* DP_MPI_WRITE_*: how an MPI run writes its file */
    int pdl_trigger_early;  /* 1: primaries trigger right after their wait; 0: after their work */
    long long max_tiles;    /* 0: computed */
    long long pool;         /* 0: computed bound; >0 forces the pending-launch pool size */
    int cdp_grain;          /* DP_GRAIN_*: what one device-side launch covers (cdp) */
    int cdp_group;          /* grain group: parent tiles per block, one child grid per block */
    int bench_groups[DP_MAX_BENCH_GROUPS]; /* the group sizes `dpamr bench` sweeps */
    int nbench_groups;
    char trace[8192];       /* Chrome trace output path ("" = none) */
    int threads;            /* OpenMP threads for the cpu engine, 0 = default */
    int progress;           /* 1: progress lines of long phases (auto), 0: none (off) */
    int validate;           /* DP_VALIDATE_*: where a GPU variant's result is validated */
    int bench_repeats;      /* timed repeats per variant (median reported) */
    int bench_warmup;       /* untimed runs per variant before timing */
    int bench_cpu;          /* 1: time the cpu variant too */
    char bench_out[8192];   /* prefix of the bench CSV and JSON files */
    int quiet;              /* not a key: engines print no per-level lines (bench) */
    int share_device;       /* not a key: processes splitting this device's memory (MPI ranks on it); 0 = 1 */
    int share_host;         /* not a key: processes splitting this host's memory (MPI ranks on the node); 0 = 1 */
} deck_t;

/** One row of the key table in deck.c: the one source of a key's type, default and valid values, used
 *  to validate decks, by `dpamr help KEY` and by the man page. */
typedef struct {
    const char *key;          /* model.NAME.x for the keys of every model object */
    const char *type, *def;   /* as documented */
    const char *range;        /* what the numbers below cannot say, or NULL */
    const char *meaning;
    char kind;                /* i ints, f floats, c choice, n names, s a field name, p path */
    int nmin, nmax;           /* value count; -1: one per dimension, -2: one per field */
    long long lo, hi;         /* ints: the valid range */
    const char *what;         /* what is valid, as the error messages say it */
    const char *choices[6];   /* a choice's values, NULL-terminated */
} deck_key_t;

int deck_key_count(void);
const deck_key_t *deck_key_at(int i);
/** The row of key (model.disc.radius finds model.NAME.radius), or NULL. */
const deck_key_t *deck_key_find(const char *key);
/** The choice nearest to word (within 2 edits and a third of its length, case ignored): its index,
 *  or -1. For "did you mean" in messages. */
int deck_nearest(const char *word, const char *const *choices, int n);
/** The deck key nearest to an unknown key (model.disc.radiu -> model.disc.radius) into buf, or NULL. */
const char *deck_key_suggest(const char *key, char *buf, size_t n);
/** The valid values as text ("a, b", "lo..hi" and the row's range note) into buf. */
const char *deck_key_valid(const deck_key_t *k, char *buf, size_t n);
/** `dpamr help KEY`: the key, type, default, valid values and meaning. */
void deck_key_help(FILE *fp, const deck_key_t *k);

/** Parse a deck file plus overrides ("key=value" strings). On error writes one message naming the
 *  file, line, key, value and what is valid into err and returns -1. */
int deck_load(deck_t *d, const char *path, int noverride, char **overrides, char *err, size_t errlen);
/** Parse deck text (as stored in an output file); `origin` names it in messages. */
int deck_parse_text(deck_t *d, const char *origin, const char *text, char *err, size_t errlen);
void deck_free(deck_t *d);
/** Do decks a and b make the same hierarchy from the same mesh: the same dim, root, tile_size,
 *  origin, cell_size, max_level, fields, fill, balance, criterion, criterion_field, threshold and
 *  model (objects, kinds, centres, radii, velocities, values), to the bit? 1, or 0 with the first key
 *  that differs in key (a continued series must use its run's deck). */
int deck_same_refinement(const deck_t *a, const deck_t *b, char *key, size_t n);
/** Were the levels of a file written with deck b made as deck a would make them: deck_same_refinement
 *  without max_level (a refinement may go on deeper) and without the velocities, and without the
 *  model unless a's fill is model (prolong takes the cells from the parents). 1, or 0 with the key. */
int deck_same_levels(const deck_t *a, const deck_t *b, char *key, size_t n);
/** The step-number conversion of an output pattern (steps > 0): exactly one %d, %Nd or %0Nd in the
 *  file name and no other '%' (the deck refuses %Nd, which pads with spaces). Returns its offset (its
 *  length in *len), or -1 with why. */
int deck_pattern_check(const char *pat, size_t *len, char *why, size_t n);

/* output's default for the deck at deck_path: its file name without the extension, '%' replaced by
 * '_', then ".hdf", or "_%05d.hdf" with steps > 0 (a series); in the current directory. */
void deck_default_output(const char *deck_path, int steps, char *out, size_t n);
const char *deck_variant_name(int v);
const char *deck_grain_name(int g);
/** "cpu", "host pdl=on", "cdp cdp_grain=level pdl=on", ...: what a run used, for its header line. */
const char *deck_engine_label(const deck_t *d, int variant, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
