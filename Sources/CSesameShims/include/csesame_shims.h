#ifndef CSESAME_SHIMS_H
#define CSESAME_SHIMS_H

#include <stddef.h>
#include <stdint.h>
#include "../../CMicroHTTPD/shim.h"

/// Opens a non-blocking, close-on-exec TCP listening socket bound to a numeric IPv4 or IPv6 address.
///
/// - Parameters:
///   - host: a numeric address such as "127.0.0.1", "0.0.0.0", "::1" or "::" (no names are resolved).
///   - port: TCP port (0 lets the kernel choose one).
///   - backlog: the `listen(2)` backlog.
///   - out_errno: on failure, the `errno` of the step that failed (`EINVAL` for an unparsable host).
///   - out_port: on success, the port actually bound (read back with `getsockname`).
///   - out_is_ipv6: on success, 1 if the socket is IPv6, else 0.
/// - Returns: the socket, or -1 on failure (nothing is left open then).
int csesame_listen(const char *host, uint16_t port, int backlog,
                   int *out_errno, uint16_t *out_port, int *out_is_ipv6);

/// Closes a file descriptor; no retry on `EINTR`, since Linux releases the descriptor even then.
void csesame_close(int fd);

/// Makes a listening socket refuse new connections (Linux: `shutdown(SHUT_RDWR)` resets the accept queue) while
/// keeping the descriptor number reserved until `csesame_close`.
void csesame_stop_listening(int fd);

/// Starts a libmicrohttpd daemon on an already listening socket, since `MHD_start_daemon` is variadic.
///
/// - Parameters:
///   - flags: `MHD_FLAG` bits (for example internal polling thread, epoll and ITC).
///   - listen_fd: a listening socket from `csesame_listen`; on success the daemon owns it (until quiesced).
///   - handler: the access handler, a plain C function.
///   - context: passed back to `handler` and `completed` untouched.
///   - completed: called once per finished request (MHD_OPTION_NOTIFY_COMPLETED), may be NULL.
///   - thread_pool_size: worker threads (0 or 1 for the single internal polling thread).
///   - connection_limit: the most simultaneous connections.
///   - connection_timeout: seconds of inactivity before a connection is closed.
///   - memory_limit: bytes of per-connection memory (bounds the request line plus headers).
/// - Returns: the daemon, or NULL if it could not start (the socket is then still the caller's).
struct MHD_Daemon *csesame_mhd_start(unsigned int flags, int listen_fd,
                                     MHD_AccessHandlerCallback handler, void *context,
                                     MHD_RequestCompletedCallback completed,
                                     unsigned int thread_pool_size, unsigned int connection_limit,
                                     unsigned int connection_timeout, size_t memory_limit);

/// Writes the client's numeric IP address (NUL-terminated) into `buffer`.
///
/// - Returns: 1 on success, 0 if the address is unknown or not IPv4/IPv6 (then `buffer` holds "").
int csesame_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length);

#endif
