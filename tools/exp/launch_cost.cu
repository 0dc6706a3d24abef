// launch_cost.cu - what a device-side launch (CDP2) costs: the launching thread's time in the launch
// (<<<>>> into cudaStreamTailLaunch or cudaStreamFireAndForget), with the rest of the launching grid
// idle or streaming memory (as a level step's teams do), and a tail launch's gap (the parent's last
// block end to the child's first block start), and a launch of the running kernel itself against one
// of another function, and (session 35) the launch against its parameter bytes and dynamic shared memory.
// Session 34 (tools/exp/README.md). Build and run:
//   nvcc -arch=sm_90 -rdc=true -O2 tools/exp/launch_cost.cu -o launch_cost -lcudadevrt && ./launch_cost
#include <cstdio>
#include <cuda_runtime.h>

#define CK(x)                                                                                               \
    do {                                                                                                    \
        cudaError_t e_ = (x);                                                                               \
        if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); return 1; }                \
    } while (0)

__device__ __forceinline__ unsigned long long gt()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
struct big { long long a[64]; }; // 512 bytes of parameters, about refineStep's (dmesh_t, level_scans_t, ...)
__global__ void child(big b, unsigned long long *out)
{
    if (threadIdx.x == 0) atomicMin(&out[8], gt()); // the child's first block start
    if (b.a[threadIdx.x & 63] < 0) out[9] = 1;
}

// out[0..3] the launches' times (ns), [4..7] their errors, [8] child start, [10] parent's last block end
__global__ void __launch_bounds__(1024, 1) parent(int ff, int nlaunch, int busy, const float4 *src, float4 *dst,
                                                  long long n4, unsigned long long *out)
{
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
        big b;
        for (int j = 0; j < 64; ++j) b.a[j] = j + nlaunch;
        for (int i = 0; i < nlaunch; ++i) {
            const unsigned long long t0 = gt();
            if (ff) child<<<132, 1024, 0, cudaStreamFireAndForget>>>(b, out);
            else child<<<132, 1024, 0, cudaStreamTailLaunch>>>(b, out);
            out[i] = gt() - t0;
            out[4 + i] = cudaGetLastError();
        }
    } else if (busy) { // the others stream memory meanwhile (a copy of n4 float4s, grid-stride)
        for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x)
            dst[i] = src[i];
    }
    __syncthreads();
    if (threadIdx.x == 0) atomicMax(&out[10], gt());
}

// The same launch of the launching kernel itself (as the level chain's steps launch the next): does a
// launch of the running grid's own function cost what a launch of another function costs? (patch 19's
// grids launched a second instance and ran 9-22 us longer: tools/exp/README.md)
__global__ void __launch_bounds__(1024, 1) self(int depth, unsigned long long *out)
{
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0 && depth < 3) {
        if (depth == 0) { // the grid's first launch is of another function (each depth's first launch is timed)
            big b = {};
            const unsigned long long t1 = gt();
            child<<<gridDim.x, 1024, 0, cudaStreamTailLaunch>>>(b, out);
            out[3] = gt() - t1;
        }
        const unsigned long long t0 = gt();
        self<<<gridDim.x, 1024, 0, cudaStreamTailLaunch>>>(depth + 1, out);
        out[depth] = gt() - t0;
        out[4 + depth] = cudaGetLastError();
    }
}

// Does the launch's cost grow with its parameters or its dynamic shared memory (refineStep passes
// about 600 bytes and 8-30 KB)? Four tail launches in a row from an idle grid, a child of N bytes of
// parameters and smem bytes of dynamic shared memory (session 35).
template <int N> struct pb { long long a[N / 8]; };
template <int N> __global__ void childn(pb<N> b, unsigned long long *out)
{
    extern __shared__ long long sm[];
    if (threadIdx.x == 0) atomicMin(&out[8], gt());
    if (b.a[threadIdx.x % (N / 8)] < 0) { sm[0] = 1; out[9] = sm[0]; }
}
template <int N> __global__ void __launch_bounds__(1024, 1) parentn(unsigned smem, unsigned long long *out)
{
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
        pb<N> b;
        for (int j = 0; j < N / 8; ++j) b.a[j] = j;
        for (int i = 0; i < 4; ++i) {
            const unsigned long long t0 = gt();
            childn<N><<<132, 1024, smem, cudaStreamTailLaunch>>>(b, out);
            out[i] = gt() - t0;
            out[4 + i] = cudaGetLastError();
        }
    }
}
template <int N> static int sweep_params(cudaStream_t s, int sms, unsigned long long *d)
{
    for (unsigned smem = 0; smem <= 16384; smem += 16384)
        for (int rep = 0; rep < 4; ++rep) {
            unsigned long long init[16] = { 0 }, h[16];
            init[8] = ~0ull;
            CK(cudaMemcpyAsync(d, init, sizeof init, cudaMemcpyHostToDevice, s));
            parentn<N><<<sms, 1024, 0, s>>>(smem, d);
            CK(cudaGetLastError());
            CK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            if (rep == 0) continue;
            printf("tail idle, %4d B of parameters, %5u B of dynamic shared memory: %6.2f %6.2f %6.2f %6.2f us  errors %llu %llu %llu %llu\n",
                   N, smem, h[0] * 1e-3, h[1] * 1e-3, h[2] * 1e-3, h[3] * 1e-3, h[4], h[5], h[6], h[7]);
        }
    return 0;
}

int main()
{
    unsigned long long *d, h[16];
    float4 *src, *dst;
    const long long n4 = (256ll << 20) / 16; // 256 MB copied
    cudaStream_t s;
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&d, sizeof h));
    CK(cudaMalloc(&src, n4 * 16));
    CK(cudaMalloc(&dst, n4 * 16));
    CK(cudaMemset(src, 0, n4 * 16));
    CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 32));
    printf("launching grid: %d blocks of 1024 (one per SM); child: 132 blocks of 1024, 512 B of parameters\n", sms);
    for (int ff = 0; ff < 2; ++ff)
        for (int busy = 0; busy < 2; ++busy)
            for (int nl = 1; nl <= 4; nl += 3)
                for (int rep = 0; rep < 4; ++rep) {
                    unsigned long long init[16] = { 0 };
                    init[8] = ~0ull;
                    CK(cudaMemcpyAsync(d, init, sizeof init, cudaMemcpyHostToDevice, s));
                    parent<<<sms, 1024, 0, s>>>(ff, nl, busy, src, dst, n4, d);
                    CK(cudaGetLastError());
                    CK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s));
                    CK(cudaStreamSynchronize(s));
                    if (rep == 0) continue; // warm-up
                    printf("%-15s %-6s %d launch%s: %6.2f %6.2f %6.2f %6.2f us  errors %llu %llu %llu %llu  child start - parent end %7.2f us\n",
                           ff ? "fire-and-forget" : "tail", busy ? "busy" : "idle", nl, nl > 1 ? "es" : "  ",
                           h[0] * 1e-3, h[1] * 1e-3, h[2] * 1e-3, h[3] * 1e-3, h[4], h[5], h[6], h[7],
                           ((long long)h[8] - (long long)h[10]) * 1e-3);
                }
    for (int rep = 0; rep < 4; ++rep) {
        unsigned long long init[16] = { 0 };
        init[8] = ~0ull;
        CK(cudaMemcpyAsync(d, init, sizeof init, cudaMemcpyHostToDevice, s));
        self<<<sms, 1024, 0, s>>>(0, d);
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        if (rep == 0) continue;
        printf("tail, another function first (depth 0): %6.2f us; own function, first of depths 1-2: %6.2f %6.2f us "
               "(depth 0's second: %6.2f)  errors %llu %llu %llu\n",
               h[3] * 1e-3, h[1] * 1e-3, h[2] * 1e-3, h[0] * 1e-3, h[4], h[5], h[6]);
    }
    if (sweep_params<8>(s, sms, d) || sweep_params<512>(s, sms, d) || sweep_params<2048>(s, sms, d)) return 1;
    return 0;
}
