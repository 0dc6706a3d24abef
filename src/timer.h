/* timer.h - wall-clock milliseconds (CLOCK_MONOTONIC). */
#ifndef DPAMR_TIMER_H
#define DPAMR_TIMER_H
#ifdef __cplusplus
extern "C" {
#endif
double timer_ms(void);
#ifdef __cplusplus
}
#endif
#endif
