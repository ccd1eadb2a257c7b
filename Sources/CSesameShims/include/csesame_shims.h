#ifndef CSESAME_SHIMS_H
#define CSESAME_SHIMS_H

#include <stdint.h>
#include "../../CMicroHTTPD/shim.h"

/// Starts a libmicrohttpd daemon with one fixed set of options, since `MHD_start_daemon` is variadic.
///
/// - Parameters:
///   - flags: `MHD_FLAG` bits (for example internal polling thread and epoll).
///   - port: TCP port to listen on (0 lets the kernel choose one).
///   - handler: the access handler, a plain C function.
///   - context: passed back to `handler` untouched.
///   - thread_pool_size: worker threads (0 for the library default).
///   - connection_limit: the most simultaneous connections.
///   - connection_timeout: seconds of inactivity before a connection is closed.
///   - memory_limit: bytes of per-connection memory (bounds the request header size).
/// - Returns: the daemon, or NULL if it could not start.
struct MHD_Daemon *csesame_mhd_start(unsigned int flags, uint16_t port,
                                     MHD_AccessHandlerCallback handler, void *context,
                                     unsigned int thread_pool_size, unsigned int connection_limit,
                                     unsigned int connection_timeout, size_t memory_limit);

#endif
