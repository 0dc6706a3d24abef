/* xfer.h - the host side of long transfers (core layer): a memcpy spread over the OpenMP threads
 * (the GPU variants' pinned staging buffers to and from the mesh arrays). */
#ifndef DPAMR_XFER_H
#define DPAMR_XFER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** memcpy(dst, src, n), in 1 MiB pieces over the OpenMP threads when n is 4 MiB or more. */
void xfer_copy(void *dst, const void *src, size_t n);

#ifdef __cplusplus
}
#endif
#endif
