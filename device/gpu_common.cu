/* gpu_common.cu - device tile store, canonical sort (CUB), PDL launch helper, timeline, dispatch. */
#include <dlfcn.h>
#include <cub/device/device_radix_sort.cuh>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "gpu_common.cuh"

__constant__ dp_params c_params;

extern "C" void gpu_versions(int *runtime, int *driver)
{
    *runtime = *driver = 0;
    cudaRuntimeGetVersion(runtime);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); /* not through the runtime: no driver, no error */
    if (!lib) return;
    typedef int (*get_version_t)(int *);
    get_version_t get = (get_version_t)dlsym(lib, "cuDriverGetVersion");
    if (get) get(driver);
    dlclose(lib);
}

/** Why cudaGetDeviceCount found no device, in the user's terms: no NVIDIA driver at all, a driver
 *  older than this build's CUDA runtime, or a driver without a visible device are different fixes. */
static void why_no_device(cudaError_t e, char *why, size_t whylen)
{
    int rt = 0, drv = 0;
    gpu_versions(&rt, &drv);
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, whylen, "no NVIDIA driver is installed (libcuda.so.1 not found)");
        return;
    }
    dlclose(lib);
    if (e == cudaErrorInsufficientDriver || (drv > 0 && drv < rt))
        snprintf(why, whylen, "the NVIDIA driver supports CUDA %d.%d, older than this build's CUDA runtime %d.%d: "
                 "update the driver", drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
    else if (e == cudaSuccess || e == cudaErrorNoDevice)
        snprintf(why, whylen, "the NVIDIA driver (CUDA %d.%d) sees no device (check CUDA_VISIBLE_DEVICES and "
                 "nvidia-smi)", drv / 1000, drv % 1000 / 10);
    else
        snprintf(why, whylen, "the CUDA runtime cannot use the driver: %s", cudaGetErrorString(e));
}

extern "C" int gpu_available(char *why, size_t whylen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        why_no_device(e, why, whylen);
        return 0;
    }
    int dev = 0;
    cudaDeviceProp prop;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        snprintf(why, whylen, "cannot query CUDA device %d", dev);
        return 0;
    }
    if (prop.major < 9) {
        snprintf(why, whylen, "device %d (%s) is sm_%d%d; dpamr's GPU engines need sm_90 or newer (PDL)", dev,
                 prop.name, prop.major, prop.minor);
        return 0;
    }
    snprintf(why, whylen, "%s", prop.name);
    return 1;
}

extern "C" int gpu_select(int index, char *why, size_t whylen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        why_no_device(e, why, whylen);
        return -1;
    }
    const int dev = (index % n + n) % n;
    e = cudaSetDevice(dev);
    if (e != cudaSuccess) {
        snprintf(why, whylen, "cudaSetDevice(%d) failed: %s", dev, cudaGetErrorString(e));
        return -1;
    }
    return dev;
}

extern "C" int gpu_refine(int variant, const deck_t *d, mesh_t *m, refine_report_t *r, char *err, size_t errlen)
{
    char why[256];
    if (!gpu_available(why, sizeof why)) {
        snprintf(err, errlen, "variant=%s needs a CUDA device: %s", deck_variant_name(variant), why);
        return -1;
    }
    if (variant == DP_VARIANT_CDP) return refine_cdp(d, m, r, err, errlen);
    if (variant == DP_VARIANT_HOST) return refine_host(d, m, r, err, errlen);
    snprintf(err, errlen, "gpu_refine: variant %d is not a GPU variant", variant);
    return -1;
}

extern "C" int gpu_copy_bandwidth(double *gbps, char *err, size_t errlen)
{
    const size_t bytes = (size_t)1 << 30;
    void *a = NULL, *b = NULL;
    cudaStream_t s = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    float best = 1e30f;
    *gbps = 0.0;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemsetAsync(a, 1, bytes, s));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int i = 0; i < 6; ++i) {
        float ms = 0.0f;
        CK(cudaEventRecord(e0, s));
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms, e0, e1));
        if (i > 0 && ms < best) best = ms; /* first copy is the warm-up */
    }
    *gbps = 2.0 * (double)bytes / (best * 1e-3) / 1e9;
fail:
    cudaFree(a);
    cudaFree(b);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s) cudaStreamDestroy(s);
    return *gbps > 0.0 ? 0 : -1;
}

size_t dmesh_tile_bytes(const dp_params *p)
{
    /* level, coord, key, parent, childmask + fields; twice over for the sort's second buffers */
    return 2 * (4 + 12 + 8 + 8 + 1 + (size_t)p->nf * dp_cells(p->dim, p->B) * sizeof(float));
}

long long gpu_tile_capacity(const deck_t *d, const mesh_t *m, size_t reserve_bytes, size_t *free_bytes, char *err,
                            size_t errlen)
{
    size_t fr = 0, total = 0;
    const cudaError_t e = cudaMemGetInfo(&fr, &total);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "CUDA error in cudaMemGetInfo: %s", cudaGetErrorString(e));
        return -1;
    }
    *free_bytes = fr;
    if (d->max_tiles > 0) return d->max_tiles;
    /* leave 10% and what the caller reserves (the launch pool) for the runtime */
    const double usable = (double)fr * 0.9 - (double)reserve_bytes;
    const long long fit = usable > 0 ? (long long)(usable / (double)dmesh_tile_bytes(&d->p)) : 0;
    return (long long)tile_capacity(d, m, fit > 0 ? fit : 1);
}

cudaError_t upload_params(const dp_params *p, cudaStream_t s)
{
    return cudaMemcpyToSymbolAsync(c_params, p, sizeof *p, 0, cudaMemcpyHostToDevice, s);
}

cudaError_t launch_pdl(const void *kernel, dim3 grid, dim3 block, cudaStream_t s, int pdl, void **args)
{
    return launch_pdl_smem(kernel, grid, block, 0, s, pdl, args);
}

cudaError_t launch_pdl_smem(const void *kernel, dim3 grid, dim3 block, size_t smem, cudaStream_t s, int pdl,
                            void **args)
{
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[0].val.programmaticStreamSerializationAllowed = pdl ? 1 : 0;
    cudaLaunchConfig_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cudaLaunchKernelExC(&cfg, kernel, args);
}

static void dmesh_zero(dmesh_t *M) { memset(M, 0, sizeof *M); }

void dmesh_destroy(dmesh_t *M)
{
    cudaFree(M->level);
    cudaFree(M->coord);
    cudaFree(M->key);
    cudaFree(M->parent);
    cudaFree(M->childmask);
    for (int f = 0; f < DP_MAX_FIELDS; ++f) cudaFree(M->field[f]);
    cudaFree(M->stats);
    cudaFree(M->stamps);
    dmesh_zero(M);
}

int dmesh_create(dmesh_t *M, const mesh_t *m, long long cap, int timeline_slots, cudaStream_t s, char *err,
                 size_t errlen)
{
    const size_t n = (size_t)cap, cells = (size_t)mesh_cells(m), nt = (size_t)m->ntiles;
    dmesh_zero(M);
    M->cap = cap;
    const size_t need = n * (4 + 12 + 8 + 8 + 1 + (size_t)m->nf * cells * 4);
    size_t fr = 0, tot = 0;
    CK(cudaMemGetInfo(&fr, &tot));
    if (need > fr) {
        snprintf(err, errlen,
                 "the device lacks memory for the tile store: %lld tiles need %.3f GiB, %.3f GiB free of %.3f GiB "
                 "(lower max_tiles or max_level)",
                 cap, need / 1073741824.0, fr / 1073741824.0, tot / 1073741824.0);
        return -1;
    }
    CK(cudaMalloc((void **)&M->level, n * 4));
    CK(cudaMalloc((void **)&M->coord, n * 12));
    CK(cudaMalloc((void **)&M->key, n * 8));
    CK(cudaMalloc((void **)&M->parent, n * 8));
    CK(cudaMalloc((void **)&M->childmask, n));
    for (int f = 0; f < m->nf; ++f) CK(cudaMalloc((void **)&M->field[f], n * cells * 4));
    CK(cudaMalloc((void **)&M->stats, ST_COUNT * sizeof(unsigned long long)));
    CK(cudaMemsetAsync(M->stats, 0, ST_COUNT * sizeof(unsigned long long), s));
    if (timeline_slots > 0) {
        CK(cudaMalloc((void **)&M->stamps, 2 * (size_t)timeline_slots * sizeof(unsigned long long)));
        /* start = max (0xff..), end = 0: every slot's min/max fold starts empty */
        CK(cudaMemsetAsync(M->stamps, 0xff, 2 * (size_t)timeline_slots * sizeof(unsigned long long), s));
        for (int i = 0; i < timeline_slots; ++i)
            CK(cudaMemsetAsync(M->stamps + 2 * i + 1, 0, sizeof(unsigned long long), s));
    }
    CK(cudaMemcpyAsync(M->level, m->level, nt * 4, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(M->coord, m->coord, nt * 12, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(M->key, m->key, nt * 8, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(M->parent, m->parent, nt * 8, cudaMemcpyHostToDevice, s));
    CK(cudaMemcpyAsync(M->childmask, m->childmask, nt, cudaMemcpyHostToDevice, s));
    for (int f = 0; f < m->nf; ++f)
        CK(cudaMemcpyAsync(M->field[f], m->field[f], nt * cells * 4, cudaMemcpyHostToDevice, s));
    {
        const unsigned long long n0 = (unsigned long long)m->ntiles;
        CK(cudaMemcpyAsync(M->stats + ST_NTILES, &n0, sizeof n0, cudaMemcpyHostToDevice, s));
        CK(cudaStreamSynchronize(s)); /* n0 lives on this stack frame */
    }
    return 0;
fail:
    dmesh_destroy(M);
    return -1;
}

int dmesh_download(const dmesh_t *M, mesh_t *m, long long from, long long ntiles, cudaStream_t s, char *err,
                   size_t errlen)
{
    const size_t cells = (size_t)mesh_cells(m), a = (size_t)from, n = (size_t)(ntiles - from);
    if (mesh_reserve(m, ntiles) != 0) {
        snprintf(err, errlen, "out of host memory for %lld tiles", ntiles);
        return -1;
    }
    CK(cudaMemcpyAsync(m->level + a, M->level + a, n * 4, cudaMemcpyDeviceToHost, s));
    CK(cudaMemcpyAsync(m->coord + 3 * a, M->coord + 3 * a, n * 12, cudaMemcpyDeviceToHost, s));
    CK(cudaMemcpyAsync(m->key + a, M->key + a, n * 8, cudaMemcpyDeviceToHost, s));
    CK(cudaMemcpyAsync(m->parent + a, M->parent + a, n * 8, cudaMemcpyDeviceToHost, s));
    CK(cudaMemcpyAsync(m->childmask + a, M->childmask + a, n, cudaMemcpyDeviceToHost, s));
    for (int f = 0; f < m->nf; ++f)
        CK(cudaMemcpyAsync(m->field[f] + a * cells, M->field[f] + a * cells, n * cells * 4, cudaMemcpyDeviceToHost,
                           s));
    CK(cudaStreamSynchronize(s));
    m->ntiles = ntiles;
    mesh_index_levels(m);
    return 0;
fail:
    return -1;
}

/* ---- canonical sort ---------------------------------------------------------------------------
 * Tiles appended concurrently (cdp) are sorted by (level, Morton key). Three passes:
 *   sortKeys    builds (composite key, old index) pairs,
 *   CUB radix sort orders them,
 *   gatherTiles moves every tile to its sorted slot in second buffers, remapping parent indices
 *               through the inverse permutation written by invertPerm.
 * gatherTiles and invertPerm are launched through launch_pdl: their prologue (index arithmetic)
 * may overlap the previous kernel's tail; everything they read comes after the grid dependency
 * wait. CUB's radix sort kernels launch without the attribute. */

__global__ void sortKeys(dmesh_t M, long long first, long long n, uint64_t *keys, long long *idx)
{
    stamp_start(M.stamps, 0);
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
    if (i < n) {
        keys[i] = dp_sort_key(M.level[first + i], M.key[first + i]);
        idx[i] = first + i;
    }
    stamp_end(M.stamps, 0);
}

__global__ void invertPerm(unsigned long long *stamps, long long first, long long n, const long long *sorted_idx,
                           long long *newpos)
{
    stamp_start(stamps, 1);
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
    if (i < n) newpos[sorted_idx[i] - first] = first + i;
    stamp_end(stamps, 1);
}

/* One block per tile: metadata by thread 0, cells by all threads (coalesced). */
__global__ void gatherTiles(dmesh_t M, dmesh_t Out, long long first, long long n, const long long *sorted_idx,
                            const long long *newpos)
{
    stamp_start(M.stamps, 2);
    const int nf = c_params.nf, cells = dp_cells(c_params.dim, c_params.B);
    cudaGridDependencySynchronize();
    cudaTriggerProgrammaticLaunchCompletion();
    for (long long i = blockIdx.x; i < n; i += gridDim.x) {
        const long long src = sorted_idx[i], dst = first + i;
        if (threadIdx.x == 0) {
            Out.level[dst] = M.level[src];
            Out.coord[3 * dst] = M.coord[3 * src];
            Out.coord[3 * dst + 1] = M.coord[3 * src + 1];
            Out.coord[3 * dst + 2] = M.coord[3 * src + 2];
            Out.key[dst] = M.key[src];
            Out.childmask[dst] = M.childmask[src];
            const long long par = M.parent[src];
            Out.parent[dst] = par >= first ? newpos[par - first] : par;
        }
        for (int f = 0; f < nf; ++f) {
            const float *a = M.field[f] + (size_t)src * cells;
            float *b = Out.field[f] + (size_t)dst * cells;
            for (int c = threadIdx.x; c < cells; c += blockDim.x) b[c] = a[c];
        }
    }
    stamp_end(M.stamps, 2);
}

int dmesh_sort(dmesh_t *M, long long first, long long n, int pdl, cudaStream_t s, float *ms, char *err,
               size_t errlen)
{
    uint64_t *k_in = NULL, *k_out = NULL;
    long long *v_in = NULL, *v_out = NULL, *newpos = NULL;
    void *tmp = NULL;
    size_t tmp_bytes = 0;
    dmesh_t Out;
    dmesh_zero(&Out);
    cudaEvent_t e0 = NULL, e1 = NULL;
    int rc = -1;
    const size_t nn = (size_t)n;
    if (n <= 0) {
        *ms = 0.0f;
        return 0;
    }
    nvtxRangePushA("sort to canonical order");
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaMalloc((void **)&k_in, nn * 8));
    CK(cudaMalloc((void **)&k_out, nn * 8));
    CK(cudaMalloc((void **)&v_in, nn * 8));
    CK(cudaMalloc((void **)&v_out, nn * 8));
    CK(cudaMalloc((void **)&newpos, nn * 8));
    CK(cub::DeviceRadixSort::SortPairs(NULL, tmp_bytes, k_in, k_out, v_in, v_out, (int64_t)n, 0, 64, s));
    CK(cudaMalloc(&tmp, tmp_bytes));
    {
        /* second buffers hold only the sorted range; the tiles before `first` stay where they are */
        dp_params p;
        CK(cudaMemcpyFromSymbol(&p, c_params, sizeof p));
        const size_t cl = (size_t)dp_cells(p.dim, p.B), tot = (size_t)(first + n);
        CK(cudaMalloc((void **)&Out.level, tot * 4));
        CK(cudaMalloc((void **)&Out.coord, tot * 12));
        CK(cudaMalloc((void **)&Out.key, tot * 8));
        CK(cudaMalloc((void **)&Out.parent, tot * 8));
        CK(cudaMalloc((void **)&Out.childmask, tot));
        for (int f = 0; f < p.nf; ++f) CK(cudaMalloc((void **)&Out.field[f], tot * cl * 4));
        Out.cap = (long long)tot;

        CK(cudaEventRecord(e0, s));
        const unsigned threads = 256, blocks = (unsigned)((nn + threads - 1) / threads);
        void *a1[] = { (void *)M, &first, &n, &k_in, &v_in };
        CK(launch_pdl((const void *)sortKeys, dim3(blocks), dim3(threads), s, pdl, a1));
        CK(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, k_in, k_out, v_in, v_out, (int64_t)n, 0, 64, s));
        void *a2[] = { &M->stamps, &first, &n, &v_out, &newpos };
        CK(launch_pdl((const void *)invertPerm, dim3(blocks), dim3(threads), s, pdl, a2));
        const unsigned gblocks = (unsigned)(nn < 65536 ? nn : 65536);
        void *a3[] = { (void *)M, &Out, &first, &n, &v_out, &newpos };
        CK(launch_pdl((const void *)gatherTiles, dim3(gblocks), dim3(tile_threads(p.dim, p.B)), s, pdl, a3));
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(ms, e0, e1));
        /* copy the unsorted prefix [0, first) over, then swap buffers */
        const size_t f0 = (size_t)first;
        CK(cudaMemcpyAsync(Out.level, M->level, f0 * 4, cudaMemcpyDeviceToDevice, s));
        CK(cudaMemcpyAsync(Out.coord, M->coord, f0 * 12, cudaMemcpyDeviceToDevice, s));
        CK(cudaMemcpyAsync(Out.key, M->key, f0 * 8, cudaMemcpyDeviceToDevice, s));
        CK(cudaMemcpyAsync(Out.parent, M->parent, f0 * 8, cudaMemcpyDeviceToDevice, s));
        CK(cudaMemcpyAsync(Out.childmask, M->childmask, f0, cudaMemcpyDeviceToDevice, s));
        for (int f = 0; f < p.nf; ++f)
            CK(cudaMemcpyAsync(Out.field[f], M->field[f], f0 * cl * 4, cudaMemcpyDeviceToDevice, s));
        CK(cudaStreamSynchronize(s));
        Out.stats = M->stats;
        Out.stamps = M->stamps;
        M->stats = NULL;
        M->stamps = NULL;
        dmesh_destroy(M);
        *M = Out;
        dmesh_zero(&Out);
    }
    rc = 0;
fail: /* success falls through: one cleanup path */
    cudaFree(k_in);
    cudaFree(k_out);
    cudaFree(v_in);
    cudaFree(v_out);
    cudaFree(newpos);
    cudaFree(tmp);
    dmesh_destroy(&Out);
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    nvtxRangePop();
    return rc;
}

int timeline_write(const char *path, const char *const *names, const unsigned long long *stamps, int n, char *err,
                   size_t errlen)
{
    if (!path || !path[0]) return 0;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%.4000s.tmp.%ld", path, (long)getpid());
    FILE *fp = fopen(tmp, "w");
    if (!fp) {
        snprintf(err, errlen, "trace %s: cannot write", path);
        return -1;
    }
    unsigned long long t0 = ~0ull;
    for (int i = 0; i < n; ++i)
        if (stamps[2 * i + 1] && stamps[2 * i] < t0) t0 = stamps[2 * i];
    fprintf(fp, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    int prev = -1;
    for (int i = 0; i < n; ++i) {
        if (!stamps[2 * i + 1]) continue; /* kernel did not run */
        /* gap to the previous kernel in stream order: negative = the two overlapped */
        char args[96] = "";
        if (prev >= 0)
            snprintf(args, sizeof args, ",\"args\":{\"gap_from_previous_ns\":%lld}",
                     (long long)stamps[2 * i] - (long long)stamps[2 * prev + 1]);
        fprintf(fp, "%s{\"name\":\"%s\",\"ph\":\"X\",\"pid\":0,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f%s}",
                prev < 0 ? "" : ",\n", names[i], i % 2, (stamps[2 * i] - t0) / 1e3,
                (stamps[2 * i + 1] - stamps[2 * i]) / 1e3, args);
        prev = i;
    }
    fprintf(fp, "\n]}\n");
    const int bad = ferror(fp);
    if (fclose(fp) != 0 || bad || rename(tmp, path) != 0) {
        remove(tmp);
        snprintf(err, errlen, "trace %s: write failed", path);
        return -1;
    }
    return 0;
}

int timeline_write_named(const char *path, void (*name)(int i, char *buf, size_t n, const void *ctx), const void *ctx,
                         const unsigned long long *stamps, int n, char *err, size_t errlen)
{
    if (!path || !path[0]) return 0;
    const char **names = (const char **)malloc((size_t)n * sizeof *names);
    char(*buf)[64] = (char(*)[64])malloc((size_t)n * 64);
    int rc = -1;
    if (names && buf) {
        for (int i = 0; i < n; ++i) {
            name(i, buf[i], 64, ctx);
            names[i] = buf[i];
        }
        rc = timeline_write(path, names, stamps, n, err, errlen);
    } else {
        snprintf(err, errlen, "out of host memory for the trace");
    }
    free(names);
    free(buf);
    return rc;
}
