/* xfer.c - the host side of long transfers (xfer.h): parallel memcpy. */
#include "xfer.h"

#include <string.h>


#define XFER_PIECE ((size_t)1 << 20)

void xfer_copy(void *dst, const void *src, size_t n)
{
    if (n < 4 * XFER_PIECE) {
        memcpy(dst, src, n);
        return;
    }
    const long long pieces = (long long)((n + XFER_PIECE - 1) / XFER_PIECE);
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < pieces; ++i) {
        const size_t a = (size_t)i * XFER_PIECE, k = n - a < XFER_PIECE ? n - a : XFER_PIECE;
        memcpy((char *)dst + a, (const char *)src + a, k);
    }
}
