// Template arguments before the chevrons: the kernel is reported with its arguments as written.
// expect: {"line": 19, "kernel": "k<float>", "grid": "g", "block": "b", "function": "run", "result": true}
// expect: {"line": 20, "kernel": "k<float, 4>", "grid": "g", "block": "b", "function": "run", "result": false}
// expect: {"line": 21, "kernel": "k<T, N>", "grid": "g", "block": "b", "function": "run", "result": true}
// expect: {"line": 22, "kernel": "ns::k2<Pair<T, int>>", "grid": "g", "block": "b", "function": "run", "result": true}
// expect: {"line": 23, "kernel": "ns::k2<Pair<Pair<T, int>, int>>", "grid": "g", "block": "b", "function": "run", "result": false}
// expect: {"line": 24, "kernel": "k<(N > 2) ? 1 : 2, 3>", "grid": "g", "block": "b", "function": "run", "result": true}
// expect: {"line": 25, "kernel": "::ns::k2<float>", "grid": "g", "block": "b", "function": "run", "result": true}
// expect-exit: 1
template <typename T, int N> __global__ void k(T *x) {}
template <typename T> struct Pair { T a; };
namespace ns {
template <typename T> __global__ void k2(void *x) {}
}

template <typename T, int N = 4>
void run(T *x, dim3 g, dim3 b, cudaStream_t s)
{
    k<float><<<g, b>>>(x);
    k<float, 4><<<g, b, 0, s>>>(x);
    k<T, N> <<<g, b>>>(x);
    ns::k2<Pair<T, int>><<<g, b>>>(x);
    ns::k2<Pair<Pair<T, int>, int>><<<g, b, 0, s>>>(x);
    k<(N > 2) ? 1 : 2, 3><<<g, b>>>(x);
    ::ns::k2<float><<<g, b, 0>>>(x);
}
