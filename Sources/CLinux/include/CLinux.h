// The Linux interfaces Swift's Glibc module leaves out: epoll, eventfd and accept4.
#ifndef CLINUX_H
#define CLINUX_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

/// accept4(2): glibc declares it only under _GNU_SOURCE, which the Glibc module is built without.
int clinux_accept4(int descriptor, struct sockaddr *address, socklen_t *length, int flags);

#endif
