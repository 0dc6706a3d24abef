// String and character literals: launches, stream names and comment markers inside them are not
// read; a literal inside the configuration is kept as written (and escaped in JSON).
// expect: {"line": 21, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": true}
// expect: {"line": 22, "kernel": "k", "grid": "pick(\"a\\\"b\\\\c\", ',')", "block": "b", "function": "f", "result": true}
// expect: {"line": 23, "kernel": "k", "grid": "g", "block": "b", "function": "f", "result": false}
// expect-exit: 1
#include <cstdio>
__global__ void k(int *x) {}
dim3 pick(const char *, char);

void f(int *x, dim3 g, dim3 b)
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    const char *a = "k<<<g, b>>>(x); /* not a comment";
    const char *c = "\"k<<<g, b>>>(x);\" // \\";
    char q = '"', r = '\'', t = '<';
    const char *raw = R"x(k<<<g, b>>>(x); )" " /* )x";
    const char *raw2 = u8R"(k<<<g, b>>>(x);
    "still raw" k<<<g, b>>>(x);)";
    k<<<g, b>>>(x);
    k<<<pick("a\"b\\c", ','), b>>>(x);
    k<<<g, b, 0, s>>>(x); printf("<<<%s>>>\n", "'");
}
