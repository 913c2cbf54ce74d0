// The Linux interfaces Swift's Glibc module leaves out: epoll, eventfd, accept4 and mallopt; and what must
// run in C (a forked child of a multithreaded process, a signal handler).
#ifndef CLINUX_H
#define CLINUX_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

/// accept4(2): glibc declares it only under _GNU_SOURCE, which the Glibc module is built without.
int clinux_accept4(int descriptor, struct sockaddr *address, socklen_t *length, int flags);

/// mallopt(M_TRIM_THRESHOLD, bytes): how much free memory at the top of a malloc arena is kept rather
/// than returned to the kernel. Returns 1 on success, like mallopt.
int clinux_set_malloc_trim_threshold(size_t bytes);

/// Sends signal `number` to process `target` once this process has exited: none of its threads runs any
/// more. A child forked for it waits for that (its parent changes), sends the signal and exits; it keeps
/// no descriptor of this process open, and sends the signal after 10 s if this process is still there.
/// Returns 0 once the child runs, -1 (errno set) if it could not be started: then nothing is sent.
int clinux_signal_after_exit(pid_t target, int number);

/// Catches signal `number` with a handler that only records its arrival, for `clinux_take_recorded_signal`.
/// A caught signal, unlike an ignored one, is never discarded: a handler installed later (libdispatch's, for
/// a signal source) replaces this one, and what arrived before it stays readable. Returns sigaction's result.
int clinux_record_signal(int number);

/// Whether signal `number` arrived since `clinux_record_signal` (or the last call), clearing the record.
int clinux_take_recorded_signal(int number);

#endif
