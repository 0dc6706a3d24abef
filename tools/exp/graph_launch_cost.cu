// graph_launch_cost.cu - a level chain launched from the device as CUDA graphs (device graph launch,
// cudaGraphInstantiateFlagDeviceLaunch) against the same chain of kernel tail launches (CDP2, what
// cdp's level and regrid chains do): each grid of one 1024-thread block per SM, optionally streaming
// memory, relaunches itself for the next depth from one thread of its last block, 4 grids in all.
// Printed per depth: the launching thread's time in the launch, the grid's span, and the gap from a
// grid's last block end to the next grid's first block start. Session 35 (tools/exp/README.md):
// docs/gpu.md measured a kernel tail launch at 5-10 us of its thread and 3-6 us of gap, against about
// 1 us for hostlaunch's PDL chain. Session 37 adds the chain launched early, as PDL would: each grid,
// once the grid before it has ended (a counter of its finished blocks), launches the next as a
// device graph launch into cudaStreamGraphFireAndForget (MODE 2: a child) or
// cudaStreamGraphFireAndForgetAsSibling (MODE 3), whose blocks wait on that counter before their work
// ("full": blocks of 120 KB of shared memory, one per SM, so that the waiting blocks cannot sit beside):
// three one-node graphs in turn, since a graph may not be launched while it runs (a fire-and-forget
// child may keep its parent running: then only one graph per depth works, the second row of each). "gap" is then from
// a grid's last block end to the next grid's first block passing its wait. Build and run:
//   nvcc -arch=sm_90 -rdc=true -O2 tools/exp/graph_launch_cost.cu -o graph_launch_cost -lcudadevrt && ./graph_launch_cost
#include <cstdio>
#include <cuda_runtime.h>

#define CK(x)                                                                                               \
    do {                                                                                                    \
        cudaError_t e_ = (x);                                                                               \
        if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; }                \
    } while (0)

enum { DEPTHS = 4, EXECS = DEPTHS };
// out: [d] launch time of depth d's launch (ns), [4 + d] its error, [8] blocks started (the depth),
// [9 + e] blocks of graph e started (MODES 2, 3), [16 + d] depth d's first block start (past the wait
// in MODES 2, 3), [24 + d] depth d's last block end, [32 + d] depth d's blocks finished
__device__ cudaGraphExec_t g_exec[EXECS]; // MODES 2, 3: the graphs in turn, depth d in graph d % g_nex
__device__ int g_nex;
__device__ __forceinline__ unsigned long long gt()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// MODE 0: the next depth as a kernel tail launch (<<<>>> into cudaStreamTailLaunch);
// MODE 1: the running graph relaunched as its own tail (cudaGetCurrentGraphExec, cudaStreamGraphTailLaunch).
// Two instances: a kernel node of a device graph may not use dynamic parallelism's <<<>>>.
template <int MODE>
__global__ void __launch_bounds__(1024, 1) step(int busy, const float4 *src, float4 *dst, long long n4,
                                                unsigned long long *out, int ex, unsigned smem)
{
    __shared__ int depth, last;
    if (threadIdx.x == 0) { // a graph's parameters are fixed: the depth from a ticket per block
        if constexpr (MODE >= 2) {
            const unsigned long long t = atomicAdd(&out[9 + ex], 1ull);
            const int dd = ex + g_nex * (int)(t / gridDim.x);
            last = t % gridDim.x == gridDim.x - 1; // every block of this grid has started
            const unsigned long long t0 = gt();
            if (dd > 0) // the grid before: every block finished (a hang guard of 200 ms: out[44])
                while (atomicAdd(&out[32 + dd - 1], 0ull) < gridDim.x)
                    if (gt() - t0 > 200000000ull) {
                        out[44] = 1;
                        break;
                    }
            __threadfence();
            depth = dd;
        } else {
            depth = (int)(atomicAdd(&out[8], 1ull) / gridDim.x);
        }
        atomicMin(&out[16 + depth], gt());
    }
    __syncthreads();
    const int d = depth;
    if constexpr (MODE >= 2) if (last && threadIdx.x == 0 && d + 1 < DEPTHS) {
        // the next grid once every block of this one is resident (its blocks wait for this one's end)
        const unsigned long long t0 = gt();
        out[4 + d] = cudaGraphLaunch(g_exec[(d + 1) % g_nex],
                                     MODE == 2 ? cudaStreamGraphFireAndForget : cudaStreamGraphFireAndForgetAsSibling);
        out[d] = gt() - t0;
    }
    if (MODE < 2 && blockIdx.x == gridDim.x - 1 && threadIdx.x == 0 && d + 1 < DEPTHS) {
        const unsigned long long t0 = gt();
        cudaError_t e = cudaSuccess;
        if constexpr (MODE == 0) {
            step<0><<<gridDim.x, 1024, smem, cudaStreamTailLaunch>>>(busy, src, dst, n4, out, 0, smem);
            e = cudaGetLastError();
        } else if constexpr (MODE == 1) {
            e = cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
        }
        out[d] = gt() - t0;
        out[4 + d] = e;
    } else if (busy) {
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x)
            dst[i] = src[i];
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicMax(&out[24 + d], gt());
        __threadfence();
        atomicAdd(&out[32 + d], 1ull);
    }
}

int main()
{
    unsigned long long *d;
    float4 *src, *dst;
    const long long n4 = (64ll << 20) / 16; // 64 MB copied per grid when busy
    cudaStream_t s;
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&d, 48 * sizeof(unsigned long long)));
    CK(cudaMalloc(&src, n4 * 16));
    CK(cudaMalloc(&dst, n4 * 16));
    CK(cudaMemset(src, 0, n4 * 16));
    CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 32));
    printf("a chain of %d grids of %d blocks of 1024 (one per SM), each launching the next from its last block\n",
           DEPTHS, sms);
    static const char *names[4] = { "kernel tail launch", "graph tail launch", "graph f&f, early", "graph sibling, early" };
    // (mode, graphs in turn): the tail launches, then the early chains with 3 graphs and with one per depth
    static const int cfg[6][2] = { { 0, 0 }, { 1, 1 }, { 2, 3 }, { 2, DEPTHS }, { 3, 3 }, { 3, DEPTHS } };
    // full: 120 KB of dynamic shared memory per block, so that a block fills its SM (as dpamr's waves
    // of 256 x 4 at their register bound do) and the early chain's waiting blocks cannot sit beside it
    const unsigned full_smem = 120u << 10;
    CK(cudaFuncSetAttribute(step<0>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)full_smem));
    CK(cudaFuncSetAttribute(step<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)full_smem));
    CK(cudaFuncSetAttribute(step<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)full_smem));
    CK(cudaFuncSetAttribute(step<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)full_smem));
    for (int c = 0; c < 6; ++c)
        for (int fb = 0; fb < 4; ++fb) {
            const int mode = cfg[c][0], nex = cfg[c][1], busy = fb & 1, full = fb >> 1;
            const unsigned smem = full ? full_smem : 0u;
            cudaGraphExec_t exec[EXECS] = {};
            for (int e = 0; e < nex; ++e) { // the step as one-node graphs
                cudaGraph_t g;
                CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
                if (mode == 1) step<1><<<sms, 1024, smem, s>>>(busy, src, dst, n4, d, e, smem);
                else if (mode == 2) step<2><<<sms, 1024, smem, s>>>(busy, src, dst, n4, d, e, smem);
                else step<3><<<sms, 1024, smem, s>>>(busy, src, dst, n4, d, e, smem);
                CK(cudaStreamEndCapture(s, &g));
                CK(cudaGraphInstantiate(&exec[e], g, cudaGraphInstantiateFlagDeviceLaunch));
                CK(cudaGraphUpload(exec[e], s));
                CK(cudaGraphDestroy(g));
            }
            if (mode >= 2) {
                CK(cudaMemcpyToSymbolAsync(g_exec, exec, sizeof exec, 0, cudaMemcpyHostToDevice, s));
                CK(cudaMemcpyToSymbolAsync(g_nex, &nex, sizeof nex, 0, cudaMemcpyHostToDevice, s));
            }
            for (int rep = 0; rep < 5; ++rep) {
                unsigned long long init[48] = { 0 }, h[48];
                for (int k = 16; k < 24; ++k) init[k] = ~0ull;
                CK(cudaMemcpyAsync(d, init, sizeof init, cudaMemcpyHostToDevice, s));
                if (mode == 0) step<0><<<sms, 1024, smem, s>>>(busy, src, dst, n4, d, 0, smem);
                else CK(cudaGraphLaunch(exec[0], s));
                CK(cudaGetLastError());
                CK(cudaStreamSynchronize(s));
                if (mode == 3) CK(cudaDeviceSynchronize()); // (a sibling may outlive the host's graph launch)
                CK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s));
                CK(cudaStreamSynchronize(s));
                if (rep == 0) continue; // warm-up
                printf("%-20s %d %-4s %-4s launch us:", names[mode], nex, busy ? "busy" : "idle", full ? "full" : "");
                for (int k = 0; k + 1 < DEPTHS; ++k) printf(" %6.2f", h[k] * 1e-3);
                printf("  grid us:");
                for (int k = 0; k < DEPTHS; ++k) printf(" %7.2f", ((long long)h[24 + k] - (long long)h[16 + k]) * 1e-3);
                printf("  gap us:");
                for (int k = 0; k + 1 < DEPTHS; ++k) printf(" %6.2f", ((long long)h[17 + k] - (long long)h[24 + k]) * 1e-3);
                printf("  errors %llu %llu %llu%s\n", h[4], h[5], h[6], h[44] ? "  WAIT TIMED OUT" : "");
            }
            for (int e = 0; e < EXECS; ++e)
                if (exec[e]) CK(cudaGraphExecDestroy(exec[e]));
        }
    return 0;
}
