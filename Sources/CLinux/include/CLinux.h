// The Linux interfaces Swift's Glibc module leaves out: epoll, eventfd, accept4 and mallopt.
#ifndef CLINUX_H
#define CLINUX_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <stddef.h>
#include <sys/socket.h>

/// accept4(2): glibc declares it only under _GNU_SOURCE, which the Glibc module is built without.
int clinux_accept4(int descriptor, struct sockaddr *address, socklen_t *length, int flags);

/// mallopt(M_TRIM_THRESHOLD, bytes): how much free memory at the top of a malloc arena is kept rather
/// than returned to the kernel. Returns 1 on success, like mallopt.
int clinux_set_malloc_trim_threshold(size_t bytes);

#endif
