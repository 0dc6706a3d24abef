// The enclosing function through namespaces, extern "C" blocks, classes, qualified and templated
// definitions, constructor initialiser lists, attributes, macros before the name, lambdas, blocks.
// expect: {"line": 31, "kernel": "k", "grid": "1", "block": "1", "function": "host_c", "result": true}
// expect: {"line": 37, "kernel": "k", "grid": "2", "block": "1", "function": "amr::launch_all", "result": true}
// expect: {"line": 39, "kernel": "k", "grid": "3", "block": "1", "function": "amr::launch_all", "result": true}
// expect: {"line": 41, "kernel": "k", "grid": "4", "block": "1", "function": "amr::launch_all", "result": true}
// expect: {"line": 48, "kernel": "k", "grid": "5", "block": "1", "function": "amr::detail::Pipeline::Pipeline", "result": true}
// expect: {"line": 52, "kernel": "k", "grid": "6", "block": "1", "function": "amr::detail::Pipeline::run", "result": false}
// expect: {"line": 55, "kernel": "k", "grid": "7", "block": "1", "function": "amr::detail::Pipeline::operator()", "result": true}
// expect: {"line": 63, "kernel": "k", "grid": "8", "block": "1", "function": "amr::detail::Pipeline::drain", "result": true}
// expect: {"line": 68, "kernel": "k", "grid": "9", "block": "1", "function": "amr::step", "result": true}
// expect: {"line": 72, "kernel": "k", "grid": "10", "block": "1", "function": "amr::step<float>", "result": true}
// expect: {"line": 77, "kernel": "k", "grid": "11", "block": "1", "function": "bounded", "result": true}
// expect: {"line": 82, "kernel": "k", "grid": "12", "block": "1", "function": "parent", "result": true}
// expect: {"line": 87, "kernel": "k", "grid": "13", "block": "1", "function": "<lambda>", "result": true}
// expect: {"line": 91, "kernel": "k", "grid": "14", "block": "1", "function": "after_struct", "result": true}
// expect-exit: 1
#include <cuda_runtime.h>
#include <vector>
__global__ void k(float *x) { if (x) { x[0] = 1.0f; } }

struct Config {
    int n = 4;
    float scale{1.0f};
};
static const int table[] = {1, 2, 3};

extern "C" {
void host_c(float *x, cudaStream_t s)
{
    k<<<1, 1>>>(x);
}
}
namespace amr {
void launch_all(float *x, const std::vector<int> &v = {1, 2})
{
    k<<<2, 1>>>(x);
    for (int i : v) {
        if (i > 0) { k<<<3, 1>>>(x); }
    }
    do { k<<<4, 1>>>(x); } while (0);
}
namespace detail {
class Pipeline {
  public:
    Pipeline(float *x) : x_(x), n_{0}, s_(nullptr)
    {
        k<<<5, 1>>>(x_);
    }
    [[nodiscard]] int run() const noexcept
    {
        k<<<6, 1, 0, s_>>>(x_);
        return 0;
    }
    void operator()(int) { k<<<7, 1>>>(x_); }
    void drain();
  private:
    float *x_; int n_; cudaStream_t s_;
};
} // namespace detail
void detail::Pipeline::drain()
{
    k<<<8, 1>>>(x_);
}
template <typename T, typename = void>
void step(T *x)
{
    k<<<9, 1>>>(x);
}
template <> void step<float>(float *x)
{
    k<<<10, 1>>>(x);
}
} // namespace amr
__global__ void __launch_bounds__(256, 2) bounded(float *x)
{
    k<<<11, 1>>>(x);
}
API_EXPORT(int) parent(float *x)
{
    auto go = [&](int n) {
        k<<<12, 1>>>(x);
    };
    go(1);
    return 0;
}
auto file_lambda = [](float *x) { k<<<13, 1>>>(x); };
struct After { int a; } after_value;
void after_struct(float *x)
{
    k<<<14, 1>>>(x);
}
