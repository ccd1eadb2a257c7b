#include "csesame_shims.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
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
                                     unsigned int thread_pool_size, unsigned int connection_limit,
                                     unsigned int connection_timeout, size_t memory_limit) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, context,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, context,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                            MHD_OPTION_END);
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
    const void *raw;
    if (address->sa_family == AF_INET) {
        raw = &((const struct sockaddr_in *)address)->sin_addr;
    } else if (address->sa_family == AF_INET6) {
        raw = &((const struct sockaddr_in6 *)address)->sin6_addr;
    } else {
        return 0;
    }
    if (inet_ntop(address->sa_family, raw, buffer, (socklen_t)length) == NULL) {
        buffer[0] = '\0';
        return 0;
    }
    return 1;
}
