#ifndef CSESAME_SHIMS_H
#define CSESAME_SHIMS_H

#include <stddef.h>
#include <stdint.h>
#include "../../CMicroHTTPD/shim.h"

/// Opens a close-on-exec TCP listening socket bound to a numeric IPv4 or IPv6 address (IPv6 sockets are IPv6-only).
///
/// - Parameters:
///   - host: a numeric address such as "127.0.0.1", "0.0.0.0", "::1" or "::" (no names are resolved).
///   - port: TCP port (0 lets the kernel choose one).
///   - backlog: the `listen(2)` backlog.
///   - out_errno: on failure, the `errno` of the step that failed (`EINVAL` for an unparsable host).
///   - out_port: on success, the port actually bound (read back with `getsockname`).
/// - Returns: the socket, or -1 on failure (nothing is left open then).
int csesame_listen(const char *host, uint16_t port, int backlog, int *out_errno, uint16_t *out_port);

/// Sets glibc's `M_TRIM_THRESHOLD` (`mallopt`, which malloc.h declares and Swift's Glibc module does not export):
/// how much freed memory at the top of a heap is kept before it goes back to the kernel.
/// - Returns: 1 on success, 0 on failure.
int csesame_set_malloc_trim_threshold(int bytes);

/// Closes a file descriptor; no retry on `EINTR`, since Linux releases the descriptor even then.
void csesame_close(int fd);

/// A libmicrohttpd daemon and the thread that accepts its connections.
typedef struct csesame_server csesame_server;

/// Starts a libmicrohttpd daemon without a listening socket of its own, and a thread (`sesame-accept`) that accepts
/// on `listen_fd` and hands each connection to it (`MHD_add_connection`, since `MHD_start_daemon` is variadic).
///
/// Each connection goes to the worker with the fewest open connections. (A daemon accepting by itself lets the first
/// worker to wake take up to ten waiting connections in a row: a few clients connecting at once shared one or two
/// workers and waited on each other's requests.) While `connection_limit` connections are open the thread accepts
/// nothing, so further connections wait in the kernel's accept queue; a connection over its address's limit is
/// accepted and closed.
///
/// - Parameters:
///   - flags: `MHD_FLAG` bits (internal polling thread, epoll, and ITC, which an added connection needs to wake its
///     worker); `MHD_USE_NO_LISTEN_SOCKET` is added.
///   - listen_fd: a blocking listening socket from `csesame_listen`; on success the server owns it.
///   - handler: the access handler, a plain C function.
///   - context: passed back to every callback untouched.
///   - completed: called once per finished request (MHD_OPTION_NOTIFY_COMPLETED).
///   - connection_notify: called when a connection starts and when it closes (MHD_OPTION_NOTIFY_CONNECTION).
///   - request_line_received: called with the raw request target once the request line is in
///     (MHD_OPTION_URI_LOG_CALLBACK); its result becomes the request's `*con_cls`.
///   - thread_pool_size: worker threads (0 or 1 for the single internal polling thread).
///   - connection_limit: the most simultaneous connections.
///   - per_ip_connection_limit: the most simultaneous connections from one IP address; 0 for no limit.
///   - connection_timeout: seconds of inactivity before a connection is closed.
///   - memory_limit: bytes of per-connection memory (bounds the request line plus headers).
/// - Returns: the server, or NULL if the daemon or the thread could not start (the socket is then still the caller's).
csesame_server *csesame_server_start(unsigned int flags, int listen_fd,
                                     MHD_AccessHandlerCallback handler, void *context,
                                     MHD_RequestCompletedCallback completed,
                                     MHD_NotifyConnectionCallback connection_notify,
                                     void *(*request_line_received)(void *, const char *,
                                                                    struct MHD_Connection *),
                                     unsigned int thread_pool_size, unsigned int connection_limit,
                                     unsigned int per_ip_connection_limit,
                                     unsigned int connection_timeout, size_t memory_limit);

/// Stops accepting: shuts the listening socket down (Linux resets its accept queue and wakes the blocked `accept`),
/// waits for the thread to end and closes the socket. Connections already open go on. Idempotent.
void csesame_server_stop_accepting(csesame_server *server);

/// Stops accepting (if not done yet), stops the daemon (closing its connections) and frees the server.
void csesame_server_stop(csesame_server *server);

/// Keeps libmicrohttpd from splitting the query string of `target` into its memory pool.
///
/// Only for the URI log callback of libmicrohttpd 0.9.75, whose `target` points into the connection's writable
/// read buffer: it ends the string right after the first '?', so the library stores no query arguments (the caller
/// copies the target first and parses the query itself). Does nothing with any other libmicrohttpd version.
void csesame_mhd_drop_query(const char *target);

/// Adds an empty placeholder Cookie header before any real one, so libmicrohttpd parses no cookies into its pool.
///
/// - Returns: 1 if it was added, 0 if the pool had no room or this is not libmicrohttpd 0.9.75 (the library then
///   parses the real Cookie header).
int csesame_mhd_mask_cookies(struct MHD_Connection *connection);

/// Whether `value` is the placeholder header value of `csesame_mhd_mask_cookies` (compared by address).
int csesame_mhd_is_placeholder(const char *value);

/// The connection's socket, or -1 if libmicrohttpd does not say.
int csesame_mhd_connection_fd(struct MHD_Connection *connection);

/// The connection's socket context (set through MHD_OPTION_NOTIFY_CONNECTION), or NULL.
void *csesame_mhd_socket_context(struct MHD_Connection *connection);

/// Bytes of the request line plus headers (through the blank line), or 0 before the headers are complete.
size_t csesame_mhd_header_size(struct MHD_Connection *connection);

/// Shuts a socket down in both directions (the owner still closes it); the peer sees the connection end.
void csesame_shutdown_socket(int fd);

/// Raises the soft limit on open files to `wanted` (at most the hard limit) if it is lower.
///
/// - Returns: the soft limit afterwards (0x7fffffff for unlimited), or -1 if it cannot be read.
long csesame_raise_open_file_limit(long wanted);

/// Writes the client's numeric IP address (NUL-terminated) into `buffer`.
///
/// - Returns: 1 on success, 0 if the address is unknown or not IPv4/IPv6 (then `buffer` holds "").
int csesame_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length);

#endif
