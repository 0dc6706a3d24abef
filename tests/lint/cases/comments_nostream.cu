// Stream names that appear only in comments do not make the file take part in stream work:
// cudaStream_t, cudaStreamCreate(&s)
// expect: {"line": 8, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect-exit: 0
__global__ void k(int *x) {}
void f(int *x, dim3 g, dim3 b)
{
    k<<<g, b>>>(x); /* cudaStream_t s; cudaStreamCreate(&s); */
}
