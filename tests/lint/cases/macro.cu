// A launch written in a macro body is read where the macro is defined; its function is the macro.
// expect: {"line": 7, "kernel": "k", "grid": "n", "block": "256", "function": "(macro LAUNCH)", "result": true}
// expect: {"line": 9, "kernel": "k", "grid": "n", "block": "256", "function": "(macro LAUNCH_ON)", "result": false}
// expect: {"line": 14, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect-exit: 1
__global__ void k(float *x) {}
#define LAUNCH(n, x) k<<<n, 256>>>(x)
#define LAUNCH_ON(n, x, s) \
    k<<<n, 256, 0, s>>>(x)

void f(float *x, dim3 g, dim3 b, cudaStream_t s)
{
    LAUNCH(4, x);
    k<<<g, b, 0, s>>>(x);
}
