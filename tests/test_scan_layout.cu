/* test_scan_layout.cu - the level scans' region sizes (device/level_scan.cuh, level_scans_layout), host
 * code only: it runs without a GPU (label unit). CUB's ScanTileState<long long>::AllocationSize (CUDA
 * 13.0) multiplies (n + 32) x 16 bytes in int, which wraps from about 1.34e8 groups to a size too
 * small for the tile states initLevelScans writes; level_scans_layout must refuse such a step (-1,
 * naming it in *bad_k) and lay out every step below it with a region of at least 8 bytes a group,
 * 256-byte aligned, one after the other. */
#include <stdio.h>

#include "device/level_scan.cuh"

/* (gpu_common.cuh's c_params: without relocatable device code its declaration defines it here;
 * nothing in this program reads it) */

static int fails = 0;
#define EXPECT(cond, ...)                                                                         \
    do {                                                                                          \
        if (!(cond)) {                                                                            \
            ++fails;                                                                              \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                           \
            printf(__VA_ARGS__);                                                                  \
            printf("\n");                                                                         \
        }                                                                                         \
    } while (0)

int main(void)
{
    /* sizes a device holds: laid out in order, each region large enough and aligned */
    const long long ok[4] = { 1, 1000, 1 << 20, 100000000 };
    level_scans_t S;
    int maxnb = 0, bad = -1;
    const double total = level_scans_layout(&S, ok, 4, &maxnb, &bad);
    EXPECT(total > 0 && bad == -1, "valid sizes refused (total %g, step %d)", total, bad);
    EXPECT(maxnb == 100000000, "largest step %d", maxnb);
    for (int k = 0; k < 4 && total > 0; ++k) {
        const double end = k < 3 ? (double)S.off[k + 1] : total;
        EXPECT(S.off[k] % 256 == 0, "step %d's region at %lld: not 256-byte aligned", k, S.off[k]);
        EXPECT(end - (double)S.off[k] >= 8.0 * (double)ok[k], "step %d: %g bytes for %lld groups", k,
               end - (double)S.off[k], ok[k]);
        EXPECT(S.nb[k] == (int)ok[k], "step %d holds %d groups, asked %lld", k, S.nb[k], ok[k]);
    }
    /* the largest that fits: (n + 32) x 16 bytes within INT_MAX */
    const long long edge[1] = { 134217695 };
    bad = -1;
    const double e = level_scans_layout(NULL, edge, 1, &maxnb, &bad);
    EXPECT(e >= 16.0 * 134217695 && bad == -1, "134217695 groups: %g bytes (step %d)", e, bad);
    /* where CUB's int product wraps, and past int: refused, the step named (an optimising compiler
       removed a check made after the wrap: the bound is checked before CUB is asked) */
    const long long wraps[3] = { 1000, 134217696, 5 };
    bad = -1;
    EXPECT(level_scans_layout(NULL, wraps, 3, &maxnb, &bad) < 0 && bad == 1, "a wrapping size passed (step %d)", bad);
    const long long huge[2] = { 268435456, 1 };
    bad = -1;
    EXPECT(level_scans_layout(NULL, huge, 2, &maxnb, &bad) < 0 && bad == 0, "2^28 groups passed (step %d)", bad);
    const long long past_int[1] = { 3000000000ll };
    bad = -1;
    EXPECT(level_scans_layout(NULL, past_int, 1, &maxnb, &bad) < 0 && bad == 0, "3e9 groups passed (step %d)", bad);
    printf("test_scan_layout: %s (%d failure%s)\n", fails ? "FAILED" : "passed", fails, fails == 1 ? "" : "s");
    return fails ? 1 : 0;
}
