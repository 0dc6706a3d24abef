// A stream created only under #if 0 (nested conditionals inside it included) does not count.
// expect: {"line": 15, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect-exit: 0
__global__ void k(float *x) {}

void f(float *x, dim3 g, dim3 b)
{
#if 0
#ifdef USE_STREAMS
    cudaStream_t s;
#endif
    cudaStreamCreate(&s);
    k<<<g, b, 0, s>>>(x);
#endif
    k<<<g, b>>>(x);
}
