#include "csesame_shims.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

int csesame_listen(const char *host, uint16_t port, int backlog,
                   int *out_errno, uint16_t *out_port, int *out_is_ipv6) {
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
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
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
    *out_is_ipv6 = family == AF_INET6;
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

void csesame_stop_listening(int fd) {
    if (fd >= 0) {
        (void)shutdown(fd, SHUT_RDWR);
    }
}

struct MHD_Daemon *csesame_mhd_start(unsigned int flags, int listen_fd,
                                     MHD_AccessHandlerCallback handler, void *context,
                                     MHD_RequestCompletedCallback completed,
                                     MHD_NotifyConnectionCallback connection_notify,
                                     void *(*request_line_received)(void *, const char *,
                                                                    struct MHD_Connection *),
                                     unsigned int thread_pool_size, unsigned int connection_limit,
                                     unsigned int per_ip_connection_limit,
                                     unsigned int connection_timeout, size_t memory_limit) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, context,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, context,
                            MHD_OPTION_NOTIFY_CONNECTION, connection_notify, context,
                            MHD_OPTION_URI_LOG_CALLBACK, request_line_received, context,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                            MHD_OPTION_END);
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
