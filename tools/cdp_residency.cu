/* cdp_residency.cu - how many blocks of one grid are resident per SM at once, for grids launched
 * from the host and from the device (CDP2), with the features of dpamr's regridStep one at a time
 * (dynamic and static shared memory, a large __grid_constant__ parameter, a device launch in the
 * kernel's code, PDL calls, the shared-memory carveout attribute, 1024-thread blocks), and for a
 * one-node graph launched from the host and relaunched from the device (a device graph launch, as
 * dpamr's cdp chains since session 36: does such a grid still get one block per SM?). A research
 * probe (docs/results.md, "Session 14"; docs/gpu.md), not part of dpamr's build:
 *   nvcc -arch=sm_90 -rdc=true -O3 tools/cdp_residency.cu -o cdp_residency -lcudadevrt && ./cdp_residency
 * Every block notes its SM (%smid), raises that SM's counter, records the peak, spins ~50 us, lowers
 * it. Printed per case: the largest per-SM peak, the mean over SMs of the per-SM peaks, the occupancy
 * calculator's blocks per SM. Grids of 4 blocks per SM, so 4 is the most a case can show. */
#include <cstdio>
#include <cstdlib>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

struct counters { int cur[256], peak[256]; };
struct big { double pad[80]; counters *c; };  /* a 648-byte parameter, as regridStep's rg_t */

static __device__ __forceinline__ unsigned smid()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

static __device__ __forceinline__ void probe(counters *c, int spin_us)
{
    __shared__ float buf[64]; /* (the dynamic shared memory is allocated, not used) */
    __shared__ int id;
    if (threadIdx.x < 64) buf[threadIdx.x] = 0.f;
    if (threadIdx.x == 0) {
        id = (int)smid();
        const int now = atomicAdd(&c->cur[id], 1) + 1;
        atomicMax(&c->peak[id], now);
    }
    __syncthreads();
    long long t0 = clock64();
    float acc = 0.f;
    while (clock64() - t0 < (long long)spin_us * 1980) acc += buf[threadIdx.x & 63]; /* ~1.98 GHz */
    if (acc == 12345.f) buf[0] = acc;
    __syncthreads();
    if (threadIdx.x == 0) atomicSub(&c->cur[id], 1);
}

/* plain */
__global__ void __launch_bounds__(256, 4) kPlain(counters *c, int spin) { probe(c, spin); }
/* 1024 threads, one block per SM */
__global__ void __launch_bounds__(1024, 1) kWide(counters *c, int spin) { probe(c, spin); }
/* a big __grid_constant__ parameter */
__global__ void __launch_bounds__(256, 4) kBig(const __grid_constant__ big b, int spin) { probe(b.c, spin); }
/* a kernel whose code holds a device launch of itself (never taken: depth < 0) */
__global__ void __launch_bounds__(256, 4) kSelf(counters *c, int spin, int depth)
{
    probe(c, spin);
    if (depth > 0 && blockIdx.x == 0 && threadIdx.x == 0) kSelf<<<1, 256, 0, cudaStreamTailLaunch>>>(c, spin, depth - 1);
}
/* the same with PDL calls (regridStep calls them) */
__global__ void __launch_bounds__(256, 4) kPdl(counters *c, int spin)
{
    cudaGridDependencySynchronize();
    probe(c, spin);
    cudaTriggerProgrammaticLaunchCompletion();
}

/* 8 KB of static shared memory instead of dynamic */
__global__ void __launch_bounds__(256, 4) kStatic(counters *c, int spin)
{
    __shared__ float big8k[2048];
    big8k[threadIdx.x * 8] = (float)threadIdx.x;
    probe(c, spin);
    if (big8k[(threadIdx.x * 8 + 8) & 2047] == -1.f) c->cur[0] = 0;
}
/* plain, its carveout attribute set to 100 (max shared) */
__global__ void __launch_bounds__(256, 4) kCarve(counters *c, int spin) { probe(c, spin); }
/* plain, its maximum dynamic shared memory attribute set to 64 KB */
__global__ void __launch_bounds__(256, 4) kMaxDyn(counters *c, int spin) { probe(c, spin); }
/* plain, cache config prefer shared */
__global__ void __launch_bounds__(256, 4) kPrefer(counters *c, int spin) { probe(c, spin); }

/* a one-node device-launchable graph of this kernel: generation 0 (host-launched) launches the next
 * generation from its last block, its own graph again as a tail launch (next NULL) or another
 * instance of it fire and forget (*next: as dpamr's step_chain since session 38); each block's
 * generation by ticket (the graph's parameters are fixed), generation g counting into c[g] */
__global__ void __launch_bounds__(256, 4) kGraph(counters *c, unsigned *gen, int spin, cudaGraphExec_t *next)
{
    __shared__ unsigned g;
    if (threadIdx.x == 0) g = atomicAdd(gen, 1u) / gridDim.x;
    __syncthreads();
    probe(c + (g ? 1 : 0), spin);
    if (g == 0 && blockIdx.x == gridDim.x - 1 && threadIdx.x == 0 &&
        (next ? cudaGraphLaunch(*next, cudaStreamGraphFireAndForget)
              : cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch)) != cudaSuccess)
        printf("device graph launch failed\n");
}

enum { PLAIN, WIDE, BIG, SELF, PDL, STATIC, CARVE, MAXDYN, PREFER };

/* the parent: its block 0 thread 0 launches the case's grid (tail or fire-and-forget) */
__global__ void parent(int which, int tail, unsigned grid, unsigned smem, counters *c, int spin)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    cudaStream_t s = tail ? cudaStreamTailLaunch : cudaStreamFireAndForget;
    big b;
    b.c = c;
    switch (which) {
    case PLAIN: kPlain<<<grid, 256, smem, s>>>(c, spin); break;
    case WIDE: kWide<<<grid, 1024, smem, s>>>(c, spin); break;
    case BIG: kBig<<<grid, 256, smem, s>>>(b, spin); break;
    case SELF: kSelf<<<grid, 256, smem, s>>>(c, spin, 0); break;
    case PDL: kPdl<<<grid, 256, smem, s>>>(c, spin); break;
    case STATIC: kStatic<<<grid, 256, smem, s>>>(c, spin); break;
    case CARVE: kCarve<<<grid, 256, smem, s>>>(c, spin); break;
    case MAXDYN: kMaxDyn<<<grid, 256, smem, s>>>(c, spin); break;
    case PREFER: kPrefer<<<grid, 256, smem, s>>>(c, spin); break;
    }
    if (cudaGetLastError() != cudaSuccess) printf("device launch failed\n");
}

/* a grid like regridStep's: every block spins; the last block launches the case's grid (tail) */
__global__ void __launch_bounds__(256, 4) parentGrid(int which, unsigned grid, unsigned smem, counters *c, int spin)
{
    probe(c + 1, spin);
    if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) {
        if (which == PLAIN) kPlain<<<grid, 256, smem, cudaStreamTailLaunch>>>(c, spin);
        else kSelf<<<grid, 256, smem, cudaStreamTailLaunch>>>(c, spin, 0);
        if (cudaGetLastError() != cudaSuccess) printf("device launch failed\n");
    }
}

static const void *fn(int which)
{
    switch (which) {
    case PLAIN: return (const void *)kPlain;
    case WIDE: return (const void *)kWide;
    case BIG: return (const void *)kBig;
    case SELF: return (const void *)kSelf;
    case PDL: return (const void *)kPdl;
    case STATIC: return (const void *)kStatic;
    case CARVE: return (const void *)kCarve;
    case MAXDYN: return (const void *)kMaxDyn;
    default: return (const void *)kPrefer;
    }
}

int main()
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    counters *c;
    CK(cudaMalloc(&c, 2 * sizeof(counters)));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    const char *names[] = { "plain 256x4", "wide 1024x1", "grid_constant 648 B", "holds a self-launch", "PDL calls",
                            "8 KB static smem", "carveout 100", "max dynamic 64 KB", "prefer shared" };
    CK(cudaFuncSetAttribute((const void *)kCarve, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    CK(cudaFuncSetAttribute((const void *)kMaxDyn, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
    CK(cudaFuncSetCacheConfig((const void *)kPrefer, cudaFuncCachePreferShared));
    const unsigned smems[] = { 0, 1024, 2048, 4096, 8192, 30000 };
    const int spin = 50;
    printf("%-22s %6s %-28s %6s %9s %9s %5s\n", "kernel", "smem", "launched", "grid", "max/SM", "mean/SM", "occ");
    for (int which = PLAIN; which <= PREFER; ++which)
        for (int si = 0; si < 6; ++si) {
            const unsigned smem = smems[si];
            const int threads = which == WIDE ? 1024 : 256;
            int occ = 0;
            CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn(which), threads, smem));
            const unsigned grid = (unsigned)(sms * 4);
            for (int how = 0; how < 4 + (which == PLAIN || which == SELF); ++how) {
                if (how == 4 && smem != 8192) continue;
                CK(cudaMemsetAsync(c, 0, 2 * sizeof(counters), st));
                big b;
                b.c = c;
                const char *hn = "";
                if (how == 0) {
                    hn = "host";
                    switch (which) {
                    case PLAIN: kPlain<<<grid, 256, smem, st>>>(c, spin); break;
                    case WIDE: kWide<<<grid, 1024, smem, st>>>(c, spin); break;
                    case BIG: kBig<<<grid, 256, smem, st>>>(b, spin); break;
                    case SELF: kSelf<<<grid, 256, smem, st>>>(c, spin, 0); break;
                    case PDL: kPdl<<<grid, 256, smem, st>>>(c, spin); break;
                    case STATIC: kStatic<<<grid, 256, smem, st>>>(c, spin); break;
                    case CARVE: kCarve<<<grid, 256, smem, st>>>(c, spin); break;
                    case MAXDYN: kMaxDyn<<<grid, 256, smem, st>>>(c, spin); break;
                    case PREFER: kPrefer<<<grid, 256, smem, st>>>(c, spin); break;
                    }
                } else if (how == 1 || how == 2) {
                    hn = how == 1 ? "device, tail" : "device, fire-and-forget";
                    parent<<<1, 32, 0, st>>>(which, how == 1, grid, smem, c, spin);
                } else if (how == 3) {
                    hn = "device, tail, parent 1 blk";
                    parent<<<1, 256, 0, st>>>(which, 1, grid, smem, c, spin);
                } else {
                    hn = "device, tail from a grid";
                    parentGrid<<<grid, 256, 8192, st>>>(which, grid, smem, c, spin);
                }
                CK(cudaGetLastError());
                CK(cudaStreamSynchronize(st));
                counters h;
                CK(cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost));
                int mx = 0;
                double sum = 0;
                for (int i = 0; i < sms; ++i) {
                    mx = h.peak[i] > mx ? h.peak[i] : mx;
                    sum += h.peak[i];
                }
                printf("%-22s %6u %-28s %6u %9d %9.2f %5d\n", names[which], smem, hn, grid, mx, sum / sms, occ);
            }
        }
    /* the device graph launch: generation 0 from the host (c[0]), generation 1 from the device (c[1]),
     * as a tail launch of the same graph (ff 0) or fire and forget of a second instance (ff 1) */
    unsigned *gen;
    cudaGraphExec_t *d_next;
    CK(cudaMalloc(&gen, sizeof *gen));
    CK(cudaMalloc(&d_next, sizeof *d_next));
    for (int ff = 0; ff < 2; ++ff)
    for (int si = 0; si < 6; ++si) {
        unsigned smem = smems[si];
        int occ = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, (const void *)kGraph, 256, smem));
        const unsigned grid = (unsigned)(sms * 4);
        int spin_ = spin;
        cudaGraphExec_t *next = ff ? d_next : NULL;
        void *args[] = { &c, &gen, &spin_, &next };
        cudaKernelNodeParams kp = {};
        kp.func = (void *)kGraph;
        kp.gridDim = dim3(grid);
        kp.blockDim = dim3(256);
        kp.sharedMemBytes = smem;
        kp.kernelParams = args;
        cudaGraph_t gr;
        cudaGraphNode_t node;
        cudaGraphExec_t ex, ex1 = NULL;
        CK(cudaGraphCreate(&gr, 0));
        CK(cudaGraphAddKernelNode(&node, gr, NULL, 0, &kp));
        CK(cudaGraphInstantiate(&ex, gr, cudaGraphInstantiateFlagDeviceLaunch));
        CK(cudaGraphUpload(ex, st));
        if (ff) { /* generation 1: a second instance (a running graph's fire-and-forget child) */
            CK(cudaGraphInstantiate(&ex1, gr, cudaGraphInstantiateFlagDeviceLaunch));
            CK(cudaGraphUpload(ex1, st));
            CK(cudaMemcpyAsync(d_next, &ex1, sizeof ex1, cudaMemcpyHostToDevice, st));
        }
        CK(cudaMemsetAsync(c, 0, 2 * sizeof(counters), st));
        CK(cudaMemsetAsync(gen, 0, sizeof *gen, st));
        CK(cudaGraphLaunch(ex, st));
        CK(cudaStreamSynchronize(st));
        counters h[2];
        CK(cudaMemcpy(h, c, sizeof h, cudaMemcpyDeviceToHost));
        for (int k = 0; k < 2; ++k) {
            int mx = 0;
            double sum = 0;
            for (int i = 0; i < sms; ++i) {
                mx = h[k].peak[i] > mx ? h[k].peak[i] : mx;
                sum += h[k].peak[i];
            }
            printf("%-22s %6u %-28s %6u %9d %9.2f %5d\n", "graph 256x4", smem,
                   k ? (ff ? "device graph fire and forget" : "device graph launch") : "graph, host launch", grid, mx,
                   sum / sms, occ);
        }
        CK(cudaGraphExecDestroy(ex));
        if (ex1) CK(cudaGraphExecDestroy(ex1));
        CK(cudaGraphDestroy(gr));
    }
    CK(cudaFree(gen));
    CK(cudaFree(d_next));
    return 0;
}
