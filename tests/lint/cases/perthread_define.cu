// A unit built for the per-thread default stream turns the rule off: every result is false.
// expect: {"line": 14, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect: {"line": 15, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect-exit: 0
#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1
#include <cuda_runtime.h>

__global__ void k(float *x) {}

void f(float *x, dim3 g, dim3 b)
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    k<<<g, b>>>(x);
    k<<<g, b, 0, 0>>>(x);
}
