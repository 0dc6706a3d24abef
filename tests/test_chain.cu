/* test_chain.cu - cdp's early step chain (step_chain, device/level_scan.cuh) on its own: a chain of
 * steps, each a one-node device-launchable graph of its own and a wave of blocks, in which the last
 * block of a step to start launches the next step's graph fire and forget and the next step's blocks
 * wait for every block of the step before (step_chain_wait, step_chain_finish), as cdp level's
 * refineStep and cdp's regridStep chain their levels.
 *
 * Every step reads every item the step before wrote, in another block's share (a mapping rotated per
 * step, so the reads cross blocks and SMs), expects the value it wrote, and writes its own; so a
 * step that started reading before the step before had finished, or saw a stale value, is counted.
 * Chains of 2, 8 and DP_MAX_LEVELS - 1 steps (the deepest a refinement can chain: the nested
 * fire-and-forget generations of a deep deck), blocks with no and with 48 KB of dynamic shared
 * memory (one wave either way, by the occupancy calculator), each chain run twice on the same graphs
 * (the counters reset, as initLevelScans resets them); and each with its last step a grid of its own,
 * as cdp level's last refineStep is (another instance, no ticket, its step in its parameters, with
 * the other amount of shared memory): a wave of that instance, whose launch bounds allow 6 blocks per
 * SM against the chain's 4 (registers: session 44's H100 gave the chain's instance 4 blocks per SM
 * with or without shared memory; with 48 KB the last's wave is the chain's, without it 6 blocks per
 * SM, a larger grid), and a third of that wave (a smaller grid).
 * Checked: no mismatch, every step's every block counted in S.done, the tickets taken, exactly
 * steps - 1 device launches and none failed, the final values.
 *
 * test_chain [-q]: a line per configuration (-q: only failures); exit 0 when all pass, 1 on a
 * failure, 77 (skip) without a CUDA device. Built with relocatable device code (the device graph
 * launch needs the device runtime) and linked with dpamr's device library (chain_graphs_create). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/gpu_common.cuh"
#include "device/level_scan.cuh"

#define TCK(call)                                                                                    \
    do {                                                                                             \
        cudaError_t e_ = (call);                                                                     \
        if (e_ != cudaSuccess) {                                                                     \
            printf("FAIL CUDA error in %s (line %d): %s\n", #call, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                                 \
        }                                                                                            \
    } while (0)

#define CHAIN_THREADS 256

/* One step: item i of step k is handled by the thread at position (i + k * shift) mod n of the grid's
 * stride, so that most items are read by another block than the one that wrote them. LAST: the
 * chain's last step as a grid of its own, step klast, launching nothing (else klast is unused and the
 * step comes from the block's ticket). */
template <int LAST>
__global__ void __launch_bounds__(CHAIN_THREADS, LAST ? 6 : 1) chainStep(level_scans_t S, int nsteps, int klast, unsigned *data,
                                                           long long n, unsigned long long *st, unsigned long long *bad)
{
    /* (the launch's dynamic shared memory only occupies the SM, as a level step's tables do) */
    int k = klast;
    if constexpr (!LAST) {
        const step_chain ch(S);
        k = ch.k;
        step_chain_wait(S, k);
        if (ch.last && threadIdx.x == 0 && k + 1 < nsteps) step_chain_launch(S, k, st);
    } else {
        step_chain_wait(S, k);
    }
    const long long stride = (long long)gridDim.x * blockDim.x, shift = 977 * (long long)blockDim.x + 13;
    unsigned long long wrong = 0;
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j < n; j += stride) {
        const long long i = (j + k * shift) % n;
        if (data[i] != (unsigned)k) ++wrong;
        data[i] = (unsigned)(k + 1);
    }
    if (wrong) atomicAdd(bad, wrong);
    step_chain_finish(S, k);
}

/* One wave of func's blocks of CHAIN_THREADS with smem bytes of dynamic shared memory. */
static unsigned wave_of(const void *func, size_t smem, int sms)
{
    int occ = 0;
    TCK(cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    TCK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, func, CHAIN_THREADS, smem));
    return (unsigned)(occ * sms);
}

/* own_last: 0 every step on the chain's grid; 1 the last step a grid of its own (chainStep<1>, with the
 * other amount of shared memory), a wave; 2 the same, a third of a wave. */
static int run(int nsteps, size_t smem, int own_last, int sms, int quiet)
{
    const long long n = 3000017; /* items: a few per thread, not a multiple of the grid */
    if (smem > 48 * 1024) return 1;
    const size_t smem_last = smem ? 0 : 48 * 1024;
    const unsigned grid = wave_of((const void *)chainStep<0>, smem, sms);
    const unsigned wave_last = wave_of((const void *)chainStep<1>, smem_last, sms);
    const unsigned grid_last = own_last == 0 ? grid : own_last == 1 ? wave_last : (wave_last + 2) / 3;
    cudaStream_t s;
    TCK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    level_scans_t S;
    memset(&S, 0, sizeof S);
    unsigned *data;
    unsigned long long *st, *bad;
    TCK(cudaMalloc((void **)&S.started, sizeof(unsigned long long)));
    TCK(cudaMalloc((void **)&S.done, (size_t)nsteps * sizeof(unsigned long long)));
    TCK(cudaMalloc((void **)&S.execs, (size_t)nsteps * sizeof(cudaGraphExec_t)));
    S.chain_grid = grid;
    TCK(cudaMalloc((void **)&data, (size_t)n * sizeof(unsigned)));
    TCK(cudaMalloc((void **)&st, ST_COUNT * sizeof(unsigned long long)));
    TCK(cudaMalloc((void **)&bad, sizeof(unsigned long long)));
    /* the steps' graphs, by dpamr's chain_graphs_create (device/launch.cu) */
    int k0 = 0, klast = nsteps - 1;
    void *args[] = { &S, &nsteps, &k0, &data, (void *)&n, &st, &bad };
    void *args_last[] = { &S, &nsteps, &klast, &data, (void *)&n, &st, &bad };
    const cudaKernelNodeParams kp = chain_node((const void *)chainStep<0>, grid, CHAIN_THREADS, smem, args);
    const cudaKernelNodeParams kpl = chain_node((const void *)chainStep<1>, grid_last, CHAIN_THREADS, smem_last, args_last);
    chain_graphs_t cg;
    TCK(chain_graphs_create(&cg, &kp, own_last ? &kpl : NULL, NULL, 0, nsteps, S.execs, s));
    int ok = 1;
    for (int round = 0; round < 2; ++round) {
        TCK(cudaMemsetAsync(S.started, 0, sizeof(unsigned long long), s));
        TCK(cudaMemsetAsync(S.done, 0, (size_t)nsteps * sizeof(unsigned long long), s));
        TCK(cudaMemsetAsync(data, 0, (size_t)n * sizeof(unsigned), s));
        TCK(cudaMemsetAsync(st, 0, ST_COUNT * sizeof(unsigned long long), s));
        TCK(cudaMemsetAsync(bad, 0, sizeof(unsigned long long), s));
        cudaEvent_t e0, e1;
        TCK(cudaEventCreate(&e0));
        TCK(cudaEventCreate(&e1));
        TCK(cudaEventRecord(e0, s));
        TCK(cudaGraphLaunch(cg.exec[0], s));
        TCK(cudaEventRecord(e1, s));
        TCK(cudaStreamSynchronize(s)); /* the stream's work ends with the whole chain */
        float ms = 0;
        TCK(cudaEventElapsedTime(&ms, e0, e1));
        TCK(cudaEventDestroy(e0));
        TCK(cudaEventDestroy(e1));
        unsigned long long hst[ST_COUNT], hbad = 0, hdone[DP_MAX_LEVELS], started = 0;
        TCK(cudaMemcpy(hst, st, sizeof hst, cudaMemcpyDeviceToHost));
        TCK(cudaMemcpy(&hbad, bad, sizeof hbad, cudaMemcpyDeviceToHost));
        TCK(cudaMemcpy(hdone, S.done, (size_t)nsteps * sizeof *hdone, cudaMemcpyDeviceToHost));
        TCK(cudaMemcpy(&started, S.started, sizeof started, cudaMemcpyDeviceToHost));
        unsigned *h = (unsigned *)malloc((size_t)n * sizeof *h);
        if (!h) return 0;
        TCK(cudaMemcpy(h, data, (size_t)n * sizeof *h, cudaMemcpyDeviceToHost));
        long long final_wrong = 0;
        for (long long i = 0; i < n; ++i) final_wrong += h[i] != (unsigned)nsteps;
        free(h);
        int steps_done = 0;
        for (int k = 0; k < nsteps; ++k) steps_done += hdone[k] == (k == nsteps - 1 ? grid_last : grid);
        const unsigned long long failed = hst[ST_FAIL_PENDING] + hst[ST_FAIL_RESOURCES] + hst[ST_FAIL_OTHER];
        const unsigned long long tickets = (unsigned long long)(own_last ? nsteps - 1 : nsteps) * grid;
        const int good = hbad == 0 && final_wrong == 0 && steps_done == nsteps && started == tickets &&
                         hst[ST_LAUNCHES] == (unsigned long long)(nsteps - 1) && failed == 0;
        if (!good || !quiet)
            printf("%s %2d steps, %5zu B of shared memory, %4u blocks of %d, last step %4u blocks%s (round %d): %llu "
                   "stale reads, %lld wrong at the end, %d of %d steps with every block done, %llu tickets, %llu "
                   "launches, %llu failed, %.3f ms\n",
                   good ? "ok  " : "FAIL", nsteps, smem, grid, CHAIN_THREADS, grid_last, own_last ? " (its own grid)" : "",
                   round + 1, hbad, final_wrong, steps_done, nsteps, started, hst[ST_LAUNCHES], failed, ms);
        fflush(stdout);
        ok &= good;
    }
    chain_graphs_destroy(&cg);
    TCK(cudaFree(S.started));
    TCK(cudaFree(S.done));
    TCK(cudaFree(S.execs));
    TCK(cudaFree(data));
    TCK(cudaFree(st));
    TCK(cudaFree(bad));
    TCK(cudaStreamDestroy(s));
    return ok;
}

int main(int argc, char **argv)
{
    int quiet = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "-q") == 0) quiet = 1;
        else {
            fprintf(stderr, "usage: test_chain [-q]\n");
            return 2;
        }
    }
    int ndev = 0, sms = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        printf("SKIPPED: no CUDA device\n");
        return 77;
    }
    TCK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    /* the pending-launch pool as dpamr sets it for a chain (its bound: a launch per step after the
       first; the runtime grants 32 at least) */
    TCK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, DP_MAX_LEVELS));
    int ok = 1;
    const int steps[] = { 2, 8, DP_MAX_LEVELS - 1 };
    const size_t smems[] = { 0, 48 * 1024 };
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 2; ++b)
            for (int own = 0; own < 3; ++own) ok &= run(steps[a], smems[b], own, sms, quiet);
    printf("test_chain: %s\n", ok ? "all passed" : "FAILED");
    return ok ? 0 : 1;
}
