#define _GNU_SOURCE
#include <malloc.h>
#include <sys/socket.h>
#include "CLinux.h"

int clinux_accept4(int descriptor, struct sockaddr *address, socklen_t *length, int flags) {
    return accept4(descriptor, address, length, flags);
}

int clinux_set_malloc_trim_threshold(size_t bytes) {
    return mallopt(M_TRIM_THRESHOLD, (int)bytes);
}
