/* test_teams.cu - the group primitives of the GPU engines on their own (device/gpu_common.cuh: cta_team;
 * device/level_scan.cuh: group_order, group_scan, team_lookback), in a program built without
 * relocatable device code, so that compute-sanitizer's racecheck and synccheck accept it (they refuse
 * a binary with dynamic parallelism, such as dpamr).
 *
 * teamScan<T> is refineStep's and regridStep's skeleton: blocks of T threads take groups of P items in
 * the kernels' order (group_order: each block's own group, then tickets), scan the items' counts over
 * the whole array through group_scan (the level-wide single-pass scan with its look-back across
 * blocks), then run a block-local shared-memory pass: every thread writes its offset to shared
 * memory, the block syncs, every thread reads its neighbour's; a wrong or missing barrier shows as a
 * wrong value here and as a hazard under racecheck. Checked against a CPU scan: every item's offset,
 * every group's span, no neighbour mismatch. Configurations: blocks of 256 (the engines' kernels) and
 * of 1024; small and large groups, a grid of one block and of many; groups whose prefix group_scan
 * sums directly and groups that look back, in one level.
 * Before them team_lookback alone (run_lookback): predecessors published as partial totals so that it
 * must slide back window by window, or stop at an inclusive one, checked against the sums.
 *
 * test_teams [-q] [-s]: prints a line per configuration (-q: only failures; -s: large levels of 200,003
 * items instead of 1,000,003 and the single block of 1024 over 1,500, for compute-sanitizer); exit 0
 * when all pass, 1 on a mismatch, 77 (skip) without a CUDA device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu_common.cuh"
#include "device/level_scan.cuh"

/* (gpu_common.cuh's c_params: without relocatable device code its declaration defines it here;
 * nothing in this program reads it) */

#define TCK(call)                                                                                 \
    do {                                                                                          \
        cudaError_t e_ = (call);                                                                  \
        if (e_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "test_teams: %s failed: %s\n", #call, cudaGetErrorString(e_));       \
            exit(1);                                                                              \
        }                                                                                         \
    } while (0)

/* Reset the ticket and the scan's tile states of ng groups (as initLevelScans). */
__global__ void initScan(char *region, int ng, unsigned long long *ticket)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) *ticket = 0;
    scan_state_t st;
    st.Init(ng, region, 0);
    st.InitializeStatus(ng);
}

/* group_scan's counts of the items before a group (its direct prefix): the array's. */
struct int_counts {
    const int *c;
    __device__ __forceinline__ long long operator()(long long i) const { return c[i]; }
};

/* (the bound makes the tests' grids, 4 x SMs blocks of 256 and SMs blocks of 1024, at most one wave:
   a first-round group's look-back waits on blocks that run) */
template <int T>
__global__ void __launch_bounds__(T, 1024 / T) teamScan(char *region, unsigned long long *ticket, const int *cnt, long long n,
                                              int P, long long *off, long long *span, unsigned long long *bad)
{
    __shared__ team_scan_smem<T / 32> S;
    __shared__ long long vs, c0, c1;
    __shared__ long long mine[T];
    const cta_team tm;
    const int r = tm.rank();
    const long long ng = (n + P - 1) / P;
    scan_state_t st;
    st.Init((int)ng, region, 0);
    const group_order order; /* the kernels' order: the block's own group, then tickets */
    long long v = order.first(tm);
    for (;;) {
        if (v >= ng) break; /* the same for the whole block */
        const long long i = v * P + r;
        const int in = r < P && i < n;
        const long long c = in ? cnt[i] : 0;
        const long long o = group_scan(tm, st, S, v, c, int_counts{cnt}, v * P, &c0, &c1);
        tm.sync();
        if (in) off[i] = o;
        if (r == 0) {
            span[2 * v] = c0;
            span[2 * v + 1] = c1;
        }
        /* the block-local pass: my offset out, the barrier, my neighbour's in */
        mine[r] = o;
        tm.sync();
        if (r + 1 < T && mine[r + 1] != o + c) atomicAdd(bad, 1ull);
        tm.sync(); /* mine and S are rewritten by the next group */
        if (ng <= order.round) break; /* one round: every group had its block */
        v = order.ticket(tm, ticket, &vs);
    }
}

/* team_lookback on its own, deterministically: group 0 inclusive and groups 1..v-1 only partial
 * (published by setStates before), so the look-back slides back over every window of 32 to group 0;
 * with mid > 0, group mid is inclusive too and the look-back stops there. The warp that looks back is
 * the second of its block (its lanes are not threadIdx.x). */
__global__ void setStates(char *region, int ng, const long long *agg, int v, int mid)
{
    scan_state_t st;
    st.Init(ng, region, 0);
    if (threadIdx.x != 0) return;
    long long acc = 0;
    for (int g = 0; g < v; ++g) {
        acc += agg[g];
        if (g == 0 || g == mid) st.SetInclusive(g, acc);
        else st.SetPartial(g, agg[g]);
    }
}
__global__ void lookbackProbe(char *region, int ng, int v, long long total, long long *out)
{
    scan_state_t st;
    st.Init(ng, region, 0);
    if (threadIdx.x < 32) return; /* warp 1 only */
    const long long ex = team_lookback(st, v, total, (int)threadIdx.x & 31);
    if ((threadIdx.x & 31) == 7) out[0] = ex; /* any lane holds it */
    __syncwarp();
    scan_state_t::StatusWord status; /* (WaitForValid is warp-collective: every lane) */
    long long incl;
    st.WaitForValid(v, status, incl);
    if ((threadIdx.x & 31) == 0) out[1] = status == scan_state_t::StatusWord(cub::SCAN_TILE_INCLUSIVE) ? incl : -1;
}

static int run_lookback(int v, int mid, int quiet)
{
    const int ng = v + 1;
    long long *h = (long long *)malloc((size_t)ng * sizeof(long long)), want = 0, got[2] = { -2, -2 };
    if (!h) exit(1);
    for (int g = 0; g < ng; ++g) h[g] = 1 + (g * 7919) % 13;
    for (int g = 0; g < v; ++g) want += h[g];
    size_t bytes = 0;
    TCK(scan_state_t::AllocationSize(ng, bytes));
    char *region;
    long long *agg, *out;
    unsigned long long *ticket;
    cudaStream_t st;
    TCK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    TCK(cudaMalloc((void **)&region, bytes));
    TCK(cudaMalloc((void **)&agg, (size_t)ng * sizeof(long long)));
    TCK(cudaMalloc((void **)&out, 2 * sizeof(long long)));
    TCK(cudaMalloc((void **)&ticket, sizeof *ticket));
    TCK(cudaMemcpyAsync(agg, h, (size_t)ng * sizeof(long long), cudaMemcpyHostToDevice, st));
    initScan<<<(unsigned)((ng + 255) / 256), 256, 0, st>>>(region, ng, ticket);
    TCK(cudaGetLastError());
    setStates<<<1, 32, 0, st>>>(region, ng, agg, v, mid);
    TCK(cudaGetLastError());
    lookbackProbe<<<1, 64, 0, st>>>(region, ng, v, h[v], out);
    TCK(cudaGetLastError());
    TCK(cudaMemcpyAsync(got, out, sizeof got, cudaMemcpyDeviceToHost, st));
    TCK(cudaStreamSynchronize(st));
    const int ok = got[0] == want && got[1] == want + h[v];
    if (!ok || !quiet)
        printf("%s team_lookback, group %d after %d partial predecessors%s: prefix %lld (want %lld), inclusive %lld "
               "(want %lld)\n", ok ? "ok  " : "FAIL", v, mid > 0 ? v - 1 - mid : v - 1, mid > 0 ? " (an inclusive one in between)" : "",
               got[0], want, got[1], want + h[v]);
    cudaFree(region);
    cudaFree(agg);
    cudaFree(out);
    cudaFree(ticket);
    cudaStreamDestroy(st);
    free(h);
    return ok;
}

typedef void (*kernel_t)(char *, unsigned long long *, const int *, long long, int, long long *, long long *,
                         unsigned long long *);

static int run(const char *name, kernel_t k, int T, long long n, int P, int blocks, int quiet)
{
    const long long ng = (n + P - 1) / P;
    int *h_cnt = (int *)malloc((size_t)n * sizeof(int));
    long long *h_off = (long long *)malloc((size_t)n * sizeof(long long));
    long long *h_span = (long long *)malloc((size_t)ng * 2 * sizeof(long long));
    if (!h_cnt || !h_off || !h_span) {
        fprintf(stderr, "test_teams: out of host memory\n");
        exit(1);
    }
    unsigned s = 12345u + (unsigned)n;
    for (long long i = 0; i < n; ++i) { /* 0..8 children, as a parent's octants in 3D; many zeros */
        s = s * 1664525u + 1013904223u;
        const unsigned x = s >> 24;
        h_cnt[i] = x < 96 ? 0 : (int)(x % 9);
    }
    size_t bytes = 0;
    TCK(scan_state_t::AllocationSize((int)ng, bytes));
    char *region;
    int *cnt;
    long long *off, *span;
    unsigned long long *ticket, *bad, h_bad = 0;
    cudaStream_t st;
    TCK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    TCK(cudaMalloc((void **)&region, bytes));
    TCK(cudaMalloc((void **)&cnt, (size_t)n * sizeof(int)));
    TCK(cudaMalloc((void **)&off, (size_t)n * sizeof(long long)));
    TCK(cudaMalloc((void **)&span, (size_t)ng * 2 * sizeof(long long)));
    TCK(cudaMalloc((void **)&ticket, sizeof *ticket));
    TCK(cudaMalloc((void **)&bad, sizeof *bad));
    TCK(cudaMemcpyAsync(cnt, h_cnt, (size_t)n * sizeof(int), cudaMemcpyHostToDevice, st));
    TCK(cudaMemsetAsync(bad, 0, sizeof *bad, st));
    initScan<<<(unsigned)((ng + 255) / 256), 256, 0, st>>>(region, (int)ng, ticket);
    TCK(cudaGetLastError());
    k<<<(unsigned)blocks, (unsigned)T, 0, st>>>(region, ticket, cnt, n, P, off, span, bad);
    TCK(cudaGetLastError());
    TCK(cudaMemcpyAsync(h_off, off, (size_t)n * sizeof(long long), cudaMemcpyDeviceToHost, st));
    TCK(cudaMemcpyAsync(h_span, span, (size_t)ng * 2 * sizeof(long long), cudaMemcpyDeviceToHost, st));
    TCK(cudaMemcpyAsync(&h_bad, bad, sizeof h_bad, cudaMemcpyDeviceToHost, st));
    TCK(cudaStreamSynchronize(st));
    long long acc = 0, wrong = 0, first = -1;
    for (long long g = 0; g < ng; ++g) {
        if (h_span[2 * g] != acc && wrong++ == 0) first = -2 - g;
        for (long long i = g * P; i < n && i < (g + 1) * P; ++i) {
            if (h_off[i] != acc && wrong++ == 0) first = i;
            acc += h_cnt[i];
        }
        if (h_span[2 * g + 1] != acc && wrong++ == 0) first = -2 - g;
    }
    const int ok = wrong == 0 && h_bad == 0;
    if (!ok || !quiet)
        printf("%s %-34s T %4d, %8lld items in groups of %4d, %4d blocks: total %lld, %lld wrong "
               "offsets or spans%s, %llu neighbour mismatches\n", ok ? "ok  " : "FAIL", name, T, n, P, blocks, acc,
               wrong, first >= 0 ? " (item)" : first < -1 ? " (group span)" : "", h_bad);
    fflush(stdout); /* a run cut by a time limit (under compute-sanitizer) shows where it was */
    cudaFree(region);
    cudaFree(cnt);
    cudaFree(off);
    cudaFree(span);
    cudaFree(ticket);
    cudaFree(bad);
    cudaStreamDestroy(st);
    free(h_cnt);
    free(h_off);
    free(h_span);
    return ok;
}

int main(int argc, char **argv)
{
    int quiet = 0, small = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-q") == 0) quiet = 1;
        else if (strcmp(argv[i], "-s") == 0) small = 1;
        else {
            fprintf(stderr, "test_teams: unknown option %s (valid: -q, -s)\n", argv[i]);
            return 2;
        }
    }
    /* the large levels' items: fewer under compute-sanitizer (-s), still more groups than blocks */
    const long long big = small ? 200003 : 1000003;
    int ndev = 0, sms = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIPPED: no CUDA device\n");
        return 77;
    }
    TCK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    int ok = 1;
    ok &= run_lookback(100, 0, quiet);  /* slides back over four windows to group 0 */
    ok &= run_lookback(100, 60, quiet); /* stops at group 60 in the second window */
    ok &= run_lookback(5, 0, quiet);    /* group 0 in the first window, padding beyond it */
    /* small: a grid of one block, one item per group (many groups per block; in blocks of 256 the
     * first 4096 groups sum their prefix directly, the later ones look back within the block; in
     * blocks of 1024 all 6000 sum it directly); large: a wave of blocks, groups of a block's threads
     * (look-back across blocks) */
    ok &= run("blocks of 256", teamScan<256>, 256, 6000, 1, 1, quiet);
    ok &= run("blocks of 256", teamScan<256>, 256, 777, 7, 2, quiet);
    ok &= run("blocks of 256", teamScan<256>, 256, big, 256, 4 * sms, quiet);
    /* (-s: 1,500 items, still more groups than threads: racecheck did not get through 6,000 groups of
       a block of 1024 in 60 s, H100, session 38) */
    ok &= run("blocks of 1024", teamScan<1024>, 1024, small ? 1500 : 6000, 1, 1, quiet);
    ok &= run("blocks of 1024", teamScan<1024>, 1024, big, 1024, sms, quiet);
    /* the direct prefix (at most SCAN_DIRECT_PER_THREAD items per thread before the group) and the
     * look-back in one level: groups 1..4096 of one item sum their prefix, the later ones look back
     * and find their inclusive totals; with groups of 3 items, the direct ones up to item 4096 */
    ok &= run("blocks of 256, direct and look-back", teamScan<256>, 256, 20000, 1, 4 * sms, quiet);
    ok &= run("blocks of 256, direct and look-back", teamScan<256>, 256, 50000, 3, 4 * sms, quiet);
    /* a level of at most a group per block: one round by index, no ticket drawn */
    ok &= run("blocks of 256, one round", teamScan<256>, 256, 200, 1, 4 * sms, quiet);
    /* one round whose later groups look back (more than 4,096 items before them, no ticket): the
     * kernels' levels of a little more than 4,096 parents in groups of up to 16 */
    ok &= run("blocks of 256, one round, look-back", teamScan<256>, 256, 4LL * sms * 16, 16, 4 * sms, quiet);
    printf("%s\n", ok ? "test_teams: all passed" : "test_teams: FAILED");
    return ok ? 0 : 1;
}
