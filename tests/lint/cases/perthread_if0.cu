// Only code that is compiled counts: a per-thread define and a stream under #if 0 are not read,
// nor is a launch there; the #else branch is read.
// expect: {"line": 17, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": true}
// expect-exit: 1
#if 0
#define CUDA_API_PER_THREAD_DEFAULT_STREAM
#endif
__global__ void k(float *x) {}

void f(float *x, dim3 g, dim3 b)
{
#if 0
    k<<<g, b>>>(x);
#else
    cudaStream_t s;
    cudaStreamCreate(&s);
    k<<<g, b>>>(x);
#endif
}
