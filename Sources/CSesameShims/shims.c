#include "csesame_shims.h"

struct MHD_Daemon *csesame_mhd_start(unsigned int flags, uint16_t port,
                                     MHD_AccessHandlerCallback handler, void *context,
                                     unsigned int thread_pool_size, unsigned int connection_limit,
                                     unsigned int connection_timeout, size_t memory_limit) {
    return MHD_start_daemon(flags, port, NULL, NULL, handler, context,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                            MHD_OPTION_END);
}
