// Parentheses, brackets, braces and template argument lists inside the configuration: commas
// inside them do not separate the configuration's arguments.
// expect: {"line": 20, "kernel": "k", "grid": "dim3((n + 255) / 256, 1)", "block": "dim3(256, 1)", "function": "f", "result": true}
// expect: {"line": 21, "kernel": "k", "grid": "dim3(div_up(n, 256), std::max(m, 1))", "block": "dim3{16, 16}", "function": "f", "result": false}
// expect: {"line": 22, "kernel": "k", "grid": "blocks_for<int, 2>(n)", "block": "256", "function": "f", "result": true}
// expect: {"line": 23, "kernel": "k", "grid": "n < 256 ? 1 : n / 256", "block": "256", "function": "f", "result": true}
// expect: {"line": 24, "kernel": "k", "grid": "g[(i + 1) % 2]", "block": "b", "function": "f", "result": false}
// expect: {"line": 25, "kernel": "k", "grid": "dim3(a, b)", "block": "dim3(c, (d, e))", "function": "f", "result": true}
// expect: {"line": 26, "kernel": "k", "grid": "pick(n, [](int v) { return v, 1; })", "block": "256", "function": "f", "result": false}
// expect-exit: 1
#include <algorithm>
__global__ void k(int *x) {}
int div_up(int a, int b);
template <typename T, int N> int blocks_for(int n);
int pick(int n, int (*fn)(int));

void f(int *x, int n, int m, int i, int a, int b, int c, int d, int e, dim3 *g, cudaStream_t *s)
{
    const size_t smem = 0;
    k<<<dim3((n + 255) / 256, 1), dim3(256, 1)>>>(x);
    k<<<dim3(div_up(n, 256), std::max(m, 1)), dim3{16, 16}, smem, s[0]>>>(x);
    k<<<blocks_for<int, 2>(n), 256, 0>>>(x);
    k<<<n < 256 ? 1 : n / 256, 256>>>(x);
    k<<<g[(i + 1) % 2], b, sizeof(int) * 4, s[(i + 1) % 2]>>>(x);
    k<<<dim3(a, b), dim3(c, (d, e)), 0, (0)>>>(x);
    k<<<pick(n, [](int v) { return v, 1; }), 256, 0, *s>>>(x);
}
