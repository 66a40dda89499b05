/* transport.c — the registry of transports and the checks shared by every backend.
 *
 * The public functions validate arguments once here and dispatch through the backend's
 * table, so a backend only implements the moving of bytes. */
#include "exec/transport-private.h"

#include <string.h>
#include <time.h>

G_DEFINE_QUARK(rs-transport-error-quark, rs_transport_error)

static const RsTransportClass *const registry[] = {
    &rs_transport_host_class,
    &rs_transport_mpi_class,
    &rs_transport_cuda_local_class,
    &rs_transport_nccl_class,
};

double
rs_transport_clock_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *
rs_transport_list(void)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < G_N_ELEMENTS(registry); i++)
        g_string_append_printf(s, "%s%s%s", i ? ", " : "", registry[i]->name,
                               registry[i]->available ? "" : " (not built)");
    return g_string_free(s, FALSE);
}

RsTransport *
rs_transport_open(const char *name, const RsTransportConfig *config, GError **error)
{
    g_return_val_if_fail(name != NULL, NULL);
    const RsTransportClass *klass = NULL;
    for (guint i = 0; i < G_N_ELEMENTS(registry); i++)
        if (strcmp(registry[i]->name, name) == 0)
            klass = registry[i];
    if (klass == NULL) {
        g_autofree char *list = rs_transport_list();
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_UNKNOWN,
                    "unknown transport \"%s\" (known: %s)", name, list);
        return NULL;
    }
    RsTransportConfig c = {0};
    if (config != NULL)
        c = *config;
    if (c.eager_bytes == 0)
        c.eager_bytes = RS_TRANSPORT_DEFAULT_EAGER_BYTES;
    if (c.queue_depth == 0)
        c.queue_depth = RS_TRANSPORT_DEFAULT_QUEUE_DEPTH;
    if (c.eager_bytes > RS_TRANSPORT_MAX_EAGER_BYTES || c.queue_depth > RS_TRANSPORT_MAX_QUEUE_DEPTH) {
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_INVALID,
                    "%s above its largest, %s", c.eager_bytes > RS_TRANSPORT_MAX_EAGER_BYTES
                                                    ? "eager size"
                                                    : "queue depth",
                    c.eager_bytes > RS_TRANSPORT_MAX_EAGER_BYTES ? "1 MiB" : "1024 messages");
        return NULL;
    }
    RsTransport *t = klass->open(&c, error);
    if (t == NULL)
        return NULL;
    t->klass = klass;
    t->config = c;
    return t;
}

void
rs_transport_close(RsTransport *transport)
{
    if (transport != NULL)
        transport->klass->close(transport);
}

const char *
rs_transport_get_name(const RsTransport *transport)
{
    return transport->klass->name;
}

guint
rs_transport_get_world_size(const RsTransport *transport)
{
    return transport->world_size;
}

gboolean
rs_transport_is_root(const RsTransport *transport)
{
    return transport->is_root;
}

void
rs_transport_abort(RsTransport *transport, int exit_code)
{
    if (transport->klass->abort != NULL)
        transport->klass->abort(transport, exit_code);
}

gboolean
rs_transport_launch(RsTransport *transport, guint n_ranks, RsRankFunc fn, gpointer user_data,
                    GError **error)
{
    g_return_val_if_fail(n_ranks >= 1 && fn != NULL, FALSE);
    if (transport->world_size != 0 && transport->world_size != n_ranks) {
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_WORLD,
                    "the work needs %u ranks but the %s transport has %u (start it with "
                    "mpirun -np %u)",
                    n_ranks, transport->klass->name, transport->world_size, n_ranks);
        return FALSE;
    }
    return transport->klass->launch(transport, n_ranks, fn, user_data, error);
}

guint32
rs_endpoint_get_rank(const RsEndpoint *endpoint)
{
    return endpoint->rank;
}

guint
rs_endpoint_get_n_ranks(const RsEndpoint *endpoint)
{
    return endpoint->n_ranks;
}

static gboolean
check_p2p(const RsEndpoint *ep, guint32 peer, guint32 tag, gsize size, GError **error)
{
    if (peer >= ep->n_ranks || peer == ep->rank || tag > 32767 || size > (gsize)G_MAXINT32) {
        g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED,
                    "rank %u: invalid operation (peer %u of %u, tag %u, %" G_GSIZE_FORMAT
                    " bytes)",
                    ep->rank, peer, ep->n_ranks, tag, size);
        return FALSE;
    }
    return TRUE;
}

/* Checks a point-to-point operation and fills the caller's request; FALSE with @error. */
static gboolean
begin_p2p(RsEndpoint *ep, guint32 peer, guint32 tag, gsize size, RsTransportRequest *req,
          GError **error)
{
    if (!check_p2p(ep, peer, tag, size, error))
        return FALSE;
    memset(req, 0, sizeof *req);
    req->peer = peer;
    req->tag = tag;
    req->size_bytes = size;
    return TRUE;
}

gboolean
rs_endpoint_isend(RsEndpoint *endpoint, guint32 peer, guint32 tag, const void *buf,
                  gsize size_bytes, RsTransportRequest *req, GError **error)
{
    return begin_p2p(endpoint, peer, tag, size_bytes, req, error) &&
           endpoint->transport->klass->isend(endpoint, peer, tag, buf, size_bytes, req, error);
}

gboolean
rs_endpoint_irecv(RsEndpoint *endpoint, guint32 peer, guint32 tag, void *buf, gsize size_bytes,
                  RsTransportRequest *req, GError **error)
{
    return begin_p2p(endpoint, peer, tag, size_bytes, req, error) &&
           endpoint->transport->klass->irecv(endpoint, peer, tag, buf, size_bytes, req, error);
}

gboolean
rs_transport_has_device_buffers(const RsTransport *transport)
{
    return transport->klass->device_buffers;
}

guint64
rs_transport_get_launch_bytes(const RsTransport *transport, guint n_ranks, guint64 n_pairs)
{
    if (transport->klass->launch_bytes == NULL)
        return 0;
    return transport->klass->launch_bytes(transport, n_ranks, n_pairs);
}

gboolean
rs_transport_has_iov(const RsTransport *transport)
{
    return transport->klass->isendv != NULL && transport->klass->irecvv != NULL;
}

static gsize
iov_total(const RsIovec *iov, guint n_iov)
{
    gsize total = 0;
    for (guint i = 0; i < n_iov; i++)
        total += iov[i].len;
    return total;
}

gboolean
rs_endpoint_isendv(RsEndpoint *endpoint, guint32 peer, guint32 tag, const RsIovec *iov,
                   guint n_iov, RsTransportRequest *req, GError **error)
{
    g_return_val_if_fail(rs_transport_has_iov(endpoint->transport) && n_iov >= 1, FALSE);
    return begin_p2p(endpoint, peer, tag, iov_total(iov, n_iov), req, error) &&
           endpoint->transport->klass->isendv(endpoint, peer, tag, iov, n_iov, req, error);
}

gboolean
rs_endpoint_irecvv(RsEndpoint *endpoint, guint32 peer, guint32 tag, const RsIovec *iov,
                   guint n_iov, RsTransportRequest *req, GError **error)
{
    g_return_val_if_fail(rs_transport_has_iov(endpoint->transport) && n_iov >= 1, FALSE);
    return begin_p2p(endpoint, peer, tag, iov_total(iov, n_iov), req, error) &&
           endpoint->transport->klass->irecvv(endpoint, peer, tag, iov, n_iov, req, error);
}

gboolean
rs_endpoint_progress(RsEndpoint *endpoint, double timeout_s, GError **error)
{
    return endpoint->transport->klass->progress(endpoint, timeout_s, error);
}

gboolean
rs_endpoint_check_no_stray(RsEndpoint *endpoint, GError **error)
{
    if (endpoint->transport->klass->check_no_stray == NULL)
        return TRUE;
    return endpoint->transport->klass->check_no_stray(endpoint, error);
}

gboolean
rs_transport_can_check_stray(const RsTransport *transport)
{
    return transport->klass->check_no_stray != NULL;
}

gboolean
rs_endpoint_barrier(RsEndpoint *endpoint, GError **error)
{
    return endpoint->transport->klass->barrier(endpoint, error);
}

gboolean
rs_endpoint_gather(RsEndpoint *endpoint, GBytes *data, GPtrArray **all_out, GError **error)
{
    *all_out = NULL;
    return endpoint->transport->klass->gather(endpoint, data, all_out, error);
}

gboolean
rs_endpoint_bcast(RsEndpoint *endpoint, GBytes *data, GBytes **data_out, GError **error)
{
    *data_out = NULL;
    return endpoint->transport->klass->bcast(endpoint, data, data_out, error);
}

double
rs_endpoint_now_s(const RsEndpoint *endpoint)
{
    return rs_transport_clock_s();
}
