#ifndef CCONTEXTBUS_LINUX_H
#define CCONTEXTBUS_LINUX_H

// The Linux calls the Swift Glibc module does not import: epoll and eventfd (their headers are not in it) and
// accept4 (declared only under _GNU_SOURCE). Swift reaches them through this module (docs/transport.md).

#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

/// `accept4(2)`; defined in shim.c, which is compiled with `_GNU_SOURCE`.
int cctxbus_accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

/// `epoll_ctl(2)` with the event's mask and its 64-bit `data.u64`, so that Swift never lays out
/// `struct epoll_event` itself (it is packed on x86_64 only).
static inline int cctxbus_epoll_ctl(int epfd, int operation, int fd, uint32_t events, uint64_t id) {
    struct epoll_event event = {.events = events, .data = {.u64 = id}};
    return epoll_ctl(epfd, operation, fd, operation == EPOLL_CTL_DEL ? NULL : &event);
}

/// The size of one `struct epoll_event`, for the buffer `epoll_wait` fills.
static inline size_t cctxbus_epoll_event_size(void) { return sizeof(struct epoll_event); }

/// `epoll_wait(2)` into a buffer of `capacity` events.
static inline int cctxbus_epoll_wait(int epfd, void *events, int capacity, int timeout) {
    return epoll_wait(epfd, (struct epoll_event *)events, capacity, timeout);
}

/// The mask of the `index`th event of a buffer `cctxbus_epoll_wait` filled.
static inline uint32_t cctxbus_epoll_event_mask(const void *events, int index) {
    return ((const struct epoll_event *)events)[index].events;
}

/// The `data.u64` of the `index`th event of a buffer `cctxbus_epoll_wait` filled.
static inline uint64_t cctxbus_epoll_event_id(const void *events, int index) {
    return ((const struct epoll_event *)events)[index].data.u64;
}

#endif
