// Scopes around the enclosing function: a macro that opens a namespace (not expanded, so its
// namespace is not named), attributes, macros and "final" around class names, partial
// specialisations, an unnamed struct and an unnamed namespace.
// expect: {"line": 19, "kernel": "k", "grid": "1", "block": "2", "function": "outer::inner::Engine::a", "result": true}
// expect: {"line": 21, "kernel": "k", "grid": "3", "block": "4", "function": "outer::inner::Holder<T *>::b", "result": true}
// expect: {"line": 22, "kernel": "k", "grid": "5", "block": "6", "function": "outer::inner::c", "result": true}
// expect: {"line": 23, "kernel": "k", "grid": "7", "block": "8", "function": "outer::inner::d", "result": true}
// expect-exit: 1
#include <cuda_runtime.h>
#define LIB_BEGIN namespace lib {
#define LIB_END }
#define API __attribute__((visibility("default")))
__global__ void k(float *x) {}

LIB_BEGIN
namespace [[deprecated]] outer::inner {
struct __align__(16) API Engine final : public Base<int> {
    cudaStream_t s;
    void a(float *x) { k<<<1, 2>>>(x); }
};
template <class T> class alignas(8) Holder<T *> { void b(float *x) { k<<<3, 4>>>(x); } };
struct { void c(float *x) { k<<<5, 6>>>(x); } } anonymous_value;
namespace { void d(float *x) { k<<<7, 8>>>(x); } }
} // namespace outer::inner
LIB_END
