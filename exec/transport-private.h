/* transport-private.h — the table every transport backend fills in, and the base structs
 * the backends extend (their own struct starts with RsTransport / RsEndpoint). */
#pragma once

#include "exec/device-private.h"
#include "exec/transport.h"

G_BEGIN_DECLS

typedef struct {
    const char *name;
    const char *description;
    /* FALSE for a backend built without its library (it only reports how to get it). */
    gboolean available;
    RsTransport *(*open)(const RsTransportConfig *config, GError **error);
    void (*close)(RsTransport *transport);
    void (*abort)(RsTransport *transport, int exit_code);
    gboolean (*launch)(RsTransport *transport, guint n_ranks, RsRankFunc fn,
                       gpointer user_data, GError **error);
    gboolean (*isend)(RsEndpoint *ep, guint32 peer, guint32 tag, const void *buf, gsize size,
                      RsTransportRequest *req, GError **error);
    gboolean (*irecv)(RsEndpoint *ep, guint32 peer, guint32 tag, void *buf, gsize size,
                      RsTransportRequest *req, GError **error);
    /* Optional: scatter-gather; NULL when the backend needs contiguous buffers. */
    gboolean (*isendv)(RsEndpoint *ep, guint32 peer, guint32 tag, const RsIovec *iov,
                       guint n_iov, RsTransportRequest *req, GError **error);
    gboolean (*irecvv)(RsEndpoint *ep, guint32 peer, guint32 tag, const RsIovec *iov,
                       guint n_iov, RsTransportRequest *req, GError **error);
    gboolean (*progress)(RsEndpoint *ep, double timeout_s, GError **error);
    gboolean (*barrier)(RsEndpoint *ep, GError **error);
    gboolean (*gather)(RsEndpoint *ep, GBytes *data, GPtrArray **all_out, GError **error);
    gboolean (*bcast)(RsEndpoint *ep, GBytes *data, GBytes **data_out, GError **error);
    /* Optional: fails when a message arrived for this endpoint that no receive took, or a
     * send of it waits for a receiver (rs_endpoint_check_no_stray); NULL: cannot tell. */
    gboolean (*check_no_stray)(RsEndpoint *ep, GError **error);
    /* TRUE when the ranks' buffers live in device memory (RsEndpoint.device is set). */
    gboolean device_buffers;
    /* Optional: the bandwidth of one copy of @size_bytes in the memory the ranks use
     * (device to device on GPU 0 for the CUDA backends), bytes/s, median of @n_runs; 0 when
     * it cannot be measured. NULL: host memcpy (rs_measure_memcpy_bytes_per_s). */
    double (*measure_copy)(RsTransport *transport, guint64 size_bytes, guint n_runs);
    /* Optional: the bytes of this process's memory launching @n_ranks ranks takes, with
     * @n_pairs ordered pairs of ranks that exchange messages (rs_transport_get_launch_bytes());
     * NULL: 0 (its state does not grow with the ranks hosted here). */
    guint64 (*launch_bytes)(const RsTransport *transport, guint n_ranks, guint64 n_pairs);
} RsTransportClass;

struct _RsTransport {
    const RsTransportClass *klass;
    RsTransportConfig config; /* defaults filled in */
    guint world_size;         /* 0: any */
    gboolean is_root;
};

struct _RsEndpoint {
    RsTransport *transport;
    guint32 rank;
    guint n_ranks;
    /* Device transports: the operations on the rank's device buffers and the backend's
     * per-rank state they use; NULL for host memory (host, mpi). */
    const RsDeviceOps *device;
    gpointer device_ctx;
};

/* The backends; transport-mpi.c or transport-mpi-unavailable.c provides rs_transport_mpi_class;
 * transport-cuda-local.c or transport-cuda-unavailable.c rs_transport_cuda_local_class;
 * transport-nccl.c, transport-nccl-unavailable.c (CUDA without NCCL) or
 * transport-cuda-unavailable.c rs_transport_nccl_class. */
extern const RsTransportClass rs_transport_host_class;
extern const RsTransportClass rs_transport_mpi_class;
extern const RsTransportClass rs_transport_cuda_local_class;
extern const RsTransportClass rs_transport_nccl_class;

/* The monotonic clock every backend uses, seconds. */
double rs_transport_clock_s(void);

G_END_DECLS
