#define _GNU_SOURCE
#include <malloc.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "CLinux.h"

int clinux_accept4(int descriptor, struct sockaddr *address, socklen_t *length, int flags) {
    return accept4(descriptor, address, length, flags);
}

int clinux_set_malloc_trim_threshold(size_t bytes) {
    return mallopt(M_TRIM_THRESHOLD, (int)bytes);
}

/// One flag per signal number; a handler may only touch lock-free atomics.
static int recorded_signals[65];

static void record_signal(int number) {
    if (number > 0 && number < 65) __atomic_store_n(&recorded_signals[number], 1, __ATOMIC_SEQ_CST);
}

int clinux_record_signal(int number) {
    struct sigaction action = {0};
    action.sa_handler = record_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(number, &action, NULL);
}

int clinux_take_recorded_signal(int number) {
    if (number <= 0 || number >= 65) return 0;
    return __atomic_exchange_n(&recorded_signals[number], 0, __ATOMIC_SEQ_CST);
}

int clinux_signal_after_exit(pid_t target, int number) {
    pid_t parent = getpid();
    pid_t child = fork();
    if (child != 0) return child < 0 ? -1 : 0;
    // In the child only async-signal-safe calls: the parent's other threads may have held locks at the fork.
#ifdef SYS_close_range
    syscall(SYS_close_range, 0U, ~0U, 0U);
#endif
    // getppid() changes once every thread of the parent has begun to exit, so none runs code any more.
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 1000000};
    for (int waited = 0; waited < 10000 && getppid() == parent; waited++) nanosleep(&pause, NULL);
    kill(target, number);
    _exit(0);
}
