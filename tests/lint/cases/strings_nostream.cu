// Stream names that appear only in string literals do not make the file take part in stream work.
// expect: {"line": 8, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect-exit: 0
__global__ void k(int *x) {}
void f(int *x, dim3 g, dim3 b)
{
    puts("cudaStream_t s; cudaStreamCreate(&s);");
    k<<<g, b>>>(x);
}
