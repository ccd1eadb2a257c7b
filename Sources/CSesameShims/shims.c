#define _GNU_SOURCE  /* accept4, pthread_setname_np */
#include "csesame_shims.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int csesame_listen(const char *host, uint16_t port, int backlog, int *out_errno, uint16_t *out_port) {
    struct sockaddr_storage storage;
    socklen_t length;
    int family;
    memset(&storage, 0, sizeof storage);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&storage;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&storage;
    if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
        family = AF_INET;
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        length = sizeof *v4;
    } else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
        family = AF_INET6;
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        length = sizeof *v6;
    } else {
        *out_errno = EINVAL;
        return -1;
    }
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *out_errno = errno;
        return -1;
    }
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) != 0) ||
        bind(fd, (struct sockaddr *)&storage, length) != 0 ||
        listen(fd, backlog) != 0) {
        *out_errno = errno;
        close(fd);
        return -1;
    }
    struct sockaddr_storage bound;
    socklen_t bound_length = sizeof bound;
    if (getsockname(fd, (struct sockaddr *)&bound, &bound_length) != 0) {
        *out_errno = errno;
        close(fd);
        return -1;
    }
    *out_port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&bound)->sin_port
                                        : ((struct sockaddr_in6 *)&bound)->sin6_port);
    return fd;
}

int csesame_set_malloc_trim_threshold(int bytes) {
    return mallopt(M_TRIM_THRESHOLD, bytes);
}

void csesame_close(int fd) {
    if (fd >= 0) {
        close(fd);
    }
}

struct csesame_server {
    struct MHD_Daemon *daemon;
    int listen_fd;
    pthread_t acceptor;
    unsigned int connection_limit;
    MHD_NotifyConnectionCallback connection_notify;
    void *context;
    pthread_mutex_t lock;
    pthread_cond_t slot_freed;
    /* The daemon's worker threads (1 without a pool). */
    unsigned int workers;
    /* Under `lock`: connections handed to the daemon and not closed yet, in all and on each worker, and whether
     * accepting stopped. */
    unsigned int open;
    unsigned int *open_on;
    int stopping;
};

/* The worker libmicrohttpd 0.9.75 gives a connection added with descriptor `fd` (MHD_add_connection,
 * internal_add_connection): the pool's worker numbered by the descriptor modulo the pool size, when that worker has
 * room, which the acceptor's limit guarantees. */
static unsigned int csesame_worker_of(const struct csesame_server *server, int fd) {
    return (unsigned int)fd % server->workers;
}

/* Counts the connections that close (so that the acceptor can keep to the limit), then tells the caller's callback.
 * A connection handed over is counted open until this reports it closed; as libmicrohttpd's source reads
 * (new_connection_process_), it reports every one it registered, and drops one unreported only when it cannot
 * allocate the connection's memory pool (its slot then stays taken). */
static void csesame_connection_notify(void *cls, struct MHD_Connection *connection, void **socket_context,
                                      enum MHD_ConnectionNotificationCode code) {
    struct csesame_server *server = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        int fd = csesame_mhd_connection_fd(connection);
        pthread_mutex_lock(&server->lock);
        if (server->open > 0) {
            server->open--;
        }
        if (fd >= 0 && server->open_on[csesame_worker_of(server, fd)] > 0) {
            server->open_on[csesame_worker_of(server, fd)]--;
        }
        pthread_cond_signal(&server->slot_freed);
        pthread_mutex_unlock(&server->lock);
    }
    server->connection_notify(server->context, connection, socket_context, code);
}

/* Waits while the limit's connections are open; 0 once accepting stopped. */
static int csesame_wait_for_slot(struct csesame_server *server) {
    pthread_mutex_lock(&server->lock);
    while (!server->stopping && server->open >= server->connection_limit) {
        pthread_cond_wait(&server->slot_freed, &server->lock);
    }
    int go_on = !server->stopping;
    pthread_mutex_unlock(&server->lock);
    return go_on;
}

/* The worker with the fewest open connections (the first of them). Call it with `lock` held. */
static unsigned int csesame_least_loaded(const struct csesame_server *server) {
    unsigned int best = 0;
    for (unsigned int worker = 1; worker < server->workers; worker++) {
        if (server->open_on[worker] < server->open_on[best]) {
            best = worker;
        }
    }
    return best;
}

/* `fd`, or a duplicate of it (the original closed), that libmicrohttpd gives to `worker` (`csesame_worker_of`).
 * Returns `fd` itself when no such number is free within 64 tries. */
static int csesame_place(const struct csesame_server *server, int fd, unsigned int worker) {
    unsigned int workers = server->workers;
    if (csesame_worker_of(server, fd) == worker) {
        return fd;
    }
    int base = fd + (int)((worker + workers - csesame_worker_of(server, fd)) % workers);
    for (int attempt = 0; attempt < 64; attempt++, base += (int)workers) {
        int duplicate = fcntl(fd, F_DUPFD_CLOEXEC, base);
        if (duplicate < 0) {
            return fd;
        }
        if (csesame_worker_of(server, duplicate) == worker) {
            close(fd);
            return duplicate;
        }
        close(duplicate);
    }
    return fd;
}

/* Hands the accepted connection `fd` to the worker with the fewest connections (only the acceptor adds to the
 * counts). It is counted before the hand-off, since the worker may report it closed before MHD_add_connection
 * returns; refused over its address's limit, it is closed unreported and uncounted again. */
static void csesame_hand_off(struct csesame_server *server, int fd, const struct sockaddr_storage *address,
                             socklen_t length) {
    pthread_mutex_lock(&server->lock);
    unsigned int worker = csesame_least_loaded(server);
    pthread_mutex_unlock(&server->lock);
    fd = csesame_place(server, fd, worker);
    unsigned int placed = csesame_worker_of(server, fd);
    pthread_mutex_lock(&server->lock);
    server->open++;
    server->open_on[placed]++;
    pthread_mutex_unlock(&server->lock);
    if (MHD_add_connection(server->daemon, fd, (const struct sockaddr *)address, length) != MHD_YES) {
        pthread_mutex_lock(&server->lock);
        server->open--;
        server->open_on[placed]--;
        pthread_mutex_unlock(&server->lock);
    }
}

/* Accepts until the listening socket is shut down (accept then fails with EINVAL). An error of the connection being
 * accepted (it was reset, the network went away) is skipped, as accept(2) advises; running out of descriptors or
 * memory is waited out, 10 ms at a time, with the connection left in the accept queue. */
static void *csesame_accept_loop(void *argument) {
    struct csesame_server *server = argument;
    (void)pthread_setname_np(pthread_self(), "sesame-accept");
    while (csesame_wait_for_slot(server)) {
        struct sockaddr_storage address;
        socklen_t length = sizeof address;
        int fd = accept4(server->listen_fd, (struct sockaddr *)&address, &length, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            csesame_hand_off(server, fd, &address, length);
            continue;
        }
        switch (errno) {
        case EMFILE: case ENFILE: case ENOBUFS: case ENOMEM: {
            struct timespec pause = {0, 10 * 1000 * 1000};
            (void)nanosleep(&pause, NULL);
            continue;
        }
        case EINVAL: case EBADF: case ENOTSOCK: case EOPNOTSUPP:
            return NULL;
        default:
            continue;
        }
    }
    return NULL;
}

/* Frees what `csesame_server_start` allocated besides the daemon and the thread. */
static void csesame_server_free(struct csesame_server *server) {
    pthread_cond_destroy(&server->slot_freed);
    pthread_mutex_destroy(&server->lock);
    free(server->open_on);
    free(server);
}

struct csesame_server *csesame_server_start(unsigned int flags, int listen_fd,
                                            MHD_AccessHandlerCallback handler, void *context,
                                            MHD_RequestCompletedCallback completed,
                                            MHD_NotifyConnectionCallback connection_notify,
                                            void *(*request_line_received)(void *, const char *,
                                                                           struct MHD_Connection *),
                                            unsigned int thread_pool_size, unsigned int connection_limit,
                                            unsigned int per_ip_connection_limit,
                                            unsigned int connection_timeout, size_t memory_limit) {
    struct csesame_server *server = calloc(1, sizeof *server);
    if (server == NULL) {
        return NULL;
    }
    server->listen_fd = listen_fd;
    server->connection_limit = connection_limit;
    server->connection_notify = connection_notify;
    server->context = context;
    server->workers = thread_pool_size > 1 ? thread_pool_size : 1;
    server->open_on = calloc(server->workers, sizeof *server->open_on);
    if (server->open_on == NULL) {
        free(server);
        return NULL;
    }
    pthread_mutex_init(&server->lock, NULL);
    pthread_cond_init(&server->slot_freed, NULL);
    /* libmicrohttpd's own limit, split over the workers, is set out of reach: a connection added while its worker
     * is at its share is refused on a path of 0.9.75 that leaves the worker's cleanup mutex locked, and the daemon
     * then never stops. The acceptor keeps to `connection_limit` instead. */
    unsigned long long share = 2ULL * connection_limit * server->workers;
    unsigned int daemon_limit = share > 0x7fffffffULL ? 0x7fffffffU : (unsigned int)share;
    server->daemon = MHD_start_daemon(flags | MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, handler, context,
                                      MHD_OPTION_NOTIFY_COMPLETED, completed, context,
                                      MHD_OPTION_NOTIFY_CONNECTION, csesame_connection_notify, server,
                                      MHD_OPTION_URI_LOG_CALLBACK, request_line_received, context,
                                      MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                                      MHD_OPTION_CONNECTION_LIMIT, daemon_limit,
                                      MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_connection_limit,
                                      MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
                                      MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                                      MHD_OPTION_END);
    if (server->daemon == NULL) {
        csesame_server_free(server);
        return NULL;
    }
    if (pthread_create(&server->acceptor, NULL, csesame_accept_loop, server) != 0) {
        MHD_stop_daemon(server->daemon);
        csesame_server_free(server);
        return NULL;
    }
    return server;
}

void csesame_server_stop_accepting(struct csesame_server *server) {
    if (server->listen_fd < 0) {
        return;
    }
    pthread_mutex_lock(&server->lock);
    server->stopping = 1;
    pthread_cond_signal(&server->slot_freed);
    pthread_mutex_unlock(&server->lock);
    (void)shutdown(server->listen_fd, SHUT_RDWR);
    (void)pthread_join(server->acceptor, NULL);
    close(server->listen_fd);
    server->listen_fd = -1;
}

void csesame_server_stop(struct csesame_server *server) {
    csesame_server_stop_accepting(server);
    MHD_stop_daemon(server->daemon);
    csesame_server_free(server);
}

/* Whether this is the libmicrohttpd whose internals the two functions below rely on (Debian 12's 0.9.75). With any
 * other version they do nothing: the library then stores query arguments and cookies itself, as documented, and no
 * buffer it owns is written to. Computed once; concurrent first calls store the same value. */
static int csesame_mhd_internals_known(void) {
    static volatile int known = -1;
    if (known < 0) {
        const char *version = MHD_get_version();
        known = version != NULL && strcmp(version, "0.9.75") == 0;
    }
    return known;
}

void csesame_mhd_drop_query(const char *target) {
    if (!csesame_mhd_internals_known()) {
        return;
    }
    /* libmicrohttpd 0.9.75 (connection.c, parse_initial_message_line) calls the URI log callback with `target`
     * pointing into its own writable read buffer, after it found the first '?' and before it splits the arguments
     * after that '?' into its memory pool. Ending the string right after the '?' leaves it nothing to split.
     * The caller has already copied the target. */
    char *question = strchr((char *)target, '?');
    if (question != NULL && question[1] != '\0') {
        question[1] = '\0';
    }
}

/* The value of the placeholder Cookie header; recognised by address, never by content. */
static const char csesame_cookie_placeholder[] = "";

int csesame_mhd_mask_cookies(struct MHD_Connection *connection) {
    if (!csesame_mhd_internals_known()) {
        return 0;
    }
    /* libmicrohttpd parses the first Cookie header it finds (parse_cookie_header); an empty one added before any
     * real header is that first one, so the real headers are never copied and split into the pool. */
    return MHD_set_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_COOKIE,
                                    csesame_cookie_placeholder) == MHD_YES;
}

int csesame_mhd_is_placeholder(const char *value) {
    return value == csesame_cookie_placeholder;
}

int csesame_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : (int)info->connect_fd;
}

void *csesame_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

size_t csesame_mhd_header_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info == NULL ? 0 : info->header_size;
}

void csesame_shutdown_socket(int fd) {
    if (fd >= 0) {
        (void)shutdown(fd, SHUT_RDWR);
    }
}

long csesame_raise_open_file_limit(long wanted) {
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        return -1;
    }
    if (wanted > 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (rlim_t)wanted) {
        rlim_t target = (rlim_t)wanted;
        if (limit.rlim_max != RLIM_INFINITY && target > limit.rlim_max) {
            target = limit.rlim_max;
        }
        struct rlimit raised = limit;
        raised.rlim_cur = target;
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
            limit = raised;
        }
    }
    return limit.rlim_cur == RLIM_INFINITY ? (long)0x7fffffff : (long)limit.rlim_cur;
}

int csesame_mhd_client_address(struct MHD_Connection *connection, char *buffer, size_t length) {
    if (length == 0) {
        return 0;
    }
    buffer[0] = '\0';
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) {
        return 0;
    }
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        // Dotted quad by hand: glibc's inet_ntop formats IPv4 with sprintf, a cost on every request.
        if (length < INET_ADDRSTRLEN) {
            return 0;
        }
        const unsigned char *bytes = (const unsigned char *)&((const struct sockaddr_in *)address)->sin_addr;
        char *out = buffer;
        for (int i = 0; i < 4; i++) {
            unsigned value = bytes[i];
            if (value >= 100) {
                *out++ = (char)('0' + value / 100);
            }
            if (value >= 10) {
                *out++ = (char)('0' + value / 10 % 10);
            }
            *out++ = (char)('0' + value % 10);
            if (i < 3) {
                *out++ = '.';
            }
        }
        *out = '\0';
        return 1;
    }
    if (address->sa_family != AF_INET6) {
        return 0;
    }
    const void *raw = &((const struct sockaddr_in6 *)address)->sin6_addr;
    if (inet_ntop(AF_INET6, raw, buffer, (socklen_t)length) == NULL) {
        buffer[0] = '\0';
        return 0;
    }
    return 1;
}
