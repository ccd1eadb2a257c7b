/*
 * bare-mhd: the ceiling for Sesame's loopback HTTP benchmark.
 *
 * A minimal libmicrohttpd daemon that answers every request with a fixed 200 `{"status":"pass"}`
 * (Content-Type: application/json), using the same threading flags as SesameHTTP's HTTPServer
 * (internal polling thread + epoll + ITC, thread pool). Compare `wrk` against it with `wrk` against
 * Sesame's GET /health on the same machine in the same run.
 *
 * Build: cc -O2 -Wall -o bare-mhd bare-mhd.c -lmicrohttpd
 * Run:   ./bare-mhd PORT [THREADS]     (listens on 127.0.0.1:PORT; THREADS defaults to max(4, 2 x cores),
 *                                       matching HTTPServer.Configuration.threadCount; stops on SIGINT/SIGTERM)
 */
#include <microhttpd.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char body[] = "{\"status\":\"pass\"}";
static struct MHD_Response *reply;
static volatile sig_atomic_t stop_requested = 0;

static void on_signal(int signal_number) {
    (void)signal_number;
    stop_requested = 1;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **con_cls) {
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    static int first_call_marker;
    if (*con_cls == NULL) {            /* headers are in; wait for the (empty) body like HTTPServer does */
        *con_cls = &first_call_marker;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {      /* discard body chunks; libmicrohttpd 0.9.75 refuses to queue a */
        *upload_data_size = 0;         /* response until the whole body has been received             */
        return MHD_YES;
    }
    return MHD_queue_response(connection, MHD_HTTP_OK, reply);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s PORT [THREADS]\n", argv[0]);
        return 2;
    }
    int port = atoi(argv[1]);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned int threads = argc > 2 ? (unsigned int)atoi(argv[2]) : (unsigned int)(cores * 2 > 4 ? cores * 2 : 4);
    if (port <= 0 || port > 65535 || threads < 1) {
        fprintf(stderr, "invalid port or thread count\n");
        return 2;
    }

    reply = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (reply == NULL || MHD_add_response_header(reply, "Content-Type", "application/json") != MHD_YES) {
        fprintf(stderr, "cannot build the response\n");
        return 1;
    }

    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC, (uint16_t)port, NULL, NULL, answer, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_LIMIT, 1024u,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384,
        MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "cannot start on 127.0.0.1:%d (in use?)\n", port);
        return 1;
    }

    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    fprintf(stderr, "bare-mhd listening on 127.0.0.1:%d with %u threads\n", port, threads);
    while (!stop_requested) {
        pause();
    }
    MHD_stop_daemon(daemon);
    MHD_destroy_response(reply);
    return 0;
}
