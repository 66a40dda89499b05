/* test-transport.c — the host transport: bytes arrive intact and in order through the
 * bounded queues (eager and rendezvous sizes, more sends than the queue holds), a tag or
 * size mismatch is an error and not a silent delivery, a failing rank aborts the others
 * with its own error reported, and the bookkeeping collectives; the registry's errors. */
#include "exec/transport.h"

#include <string.h>

/* Waits for @req, failing the rank on a transport error. */
static gboolean
wait_req(RsEndpoint *ep, RsTransportRequest *req, GError **error)
{
    while (!g_atomic_int_get(&req->done))
        if (!rs_endpoint_progress(ep, 0, error))
            return FALSE;
    return TRUE;
}

static void
fill(guint8 *buf, gsize n, guint seed)
{
    for (gsize i = 0; i < n; i++)
        buf[i] = (guint8)((i * 131 + seed * 7919) >> 3);
}

/* Sizes around the eager limit, and bigger than it. */
static const gsize sizes[] = {0, 1, 100, RS_TRANSPORT_DEFAULT_EAGER_BYTES,
                              RS_TRANSPORT_DEFAULT_EAGER_BYTES + 1, 1 << 20};

typedef struct {
    guint n_messages; /* per size */
    gboolean late_receiver;
    gint bad_bytes; /* messages that arrived wrong */
} PingData;

/* Rank 0 posts every send at once (more than the queue holds), rank 1 receives. */
static gboolean
ping_rank(RsEndpoint *ep, gpointer user_data, GError **error)
{
    PingData *pd = user_data;
    guint n = pd->n_messages * G_N_ELEMENTS(sizes);
    g_autofree RsTransportRequest *reqs = g_new0(RsTransportRequest, n);
    g_autoptr(GPtrArray) bufs = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < n; i++) {
        gsize size = sizes[i % G_N_ELEMENTS(sizes)];
        guint8 *buf = g_malloc0(MAX(size, 1));
        g_ptr_array_add(bufs, buf);
        if (rs_endpoint_get_rank(ep) == 0) {
            fill(buf, size, i);
            if (!rs_endpoint_isend(ep, 1, i % 32768, buf, size, &reqs[i], error))
                return FALSE;
        }
    }
    if (rs_endpoint_get_rank(ep) == 1) {
        if (pd->late_receiver)
            g_usleep(20000);
        for (guint i = 0; i < n; i++) {
            gsize size = sizes[i % G_N_ELEMENTS(sizes)];
            if (!rs_endpoint_irecv(ep, 0, i % 32768, g_ptr_array_index(bufs, i), size, &reqs[i],
                                   error))
                return FALSE;
        }
    }
    for (guint i = 0; i < n; i++)
        if (!wait_req(ep, &reqs[i], error))
            return FALSE;
    if (rs_endpoint_get_rank(ep) == 1) {
        for (guint i = 0; i < n; i++) {
            gsize size = sizes[i % G_N_ELEMENTS(sizes)];
            g_autofree guint8 *want = g_malloc(MAX(size, 1));
            fill(want, size, i);
            if (memcmp(want, g_ptr_array_index(bufs, i), size) != 0)
                g_atomic_int_inc(&pd->bad_bytes);
        }
    }
    return TRUE;
}

static void
test_ping(gconstpointer data)
{
    PingData pd = {*(const guint *)data, TRUE, 0};
    g_autoptr(GError) error = NULL;
    RsTransportConfig config = {.queue_depth = 4};
    g_autoptr(RsTransport) t = rs_transport_open("host", &config, &error);
    g_assert_no_error(error);
    g_assert_true(rs_transport_launch(t, 2, ping_rank, &pd, &error));
    g_assert_no_error(error);
    g_assert_cmpint(pd.bad_bytes, ==, 0);
}

typedef struct {
    guint32 recv_tag;
    gsize recv_size;
} MismatchData;

static gboolean
mismatch_rank(RsEndpoint *ep, gpointer user_data, GError **error)
{
    const MismatchData *md = user_data;
    guint8 buf[64] = {0};
    RsTransportRequest req;
    if (rs_endpoint_get_rank(ep) == 0) {
        if (!rs_endpoint_isend(ep, 1, 5, buf, 32, &req, error))
            return FALSE;
    } else if (!rs_endpoint_irecv(ep, 0, md->recv_tag, buf, md->recv_size, &req, error)) {
        return FALSE;
    }
    return wait_req(ep, &req, error);
}

static void
test_mismatch(void)
{
    const MismatchData cases[] = {{6, 32}, {5, 31}};
    const char *fragments[] = {"expected a message with tag 6 and 32 bytes from rank 0, but the "
                               "next one has tag 5 and 32 bytes",
                               "tag 5 and 31 bytes from rank 0, but the next one has tag 5 and 32"};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(RsTransport) t = rs_transport_open("host", NULL, &error);
        g_assert_false(rs_transport_launch(t, 2, mismatch_rank, (gpointer)&cases[i], &error));
        g_assert_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_MISMATCH);
        if (strstr(error->message, fragments[i]) == NULL)
            g_error("\"%s\" lacks \"%s\"", error->message, fragments[i]);
    }
}

/* Rank 2 fails at once; ranks 0 and 1 wait for messages that never come. The launch
 * reports rank 2's error, not the others' "aborted". */
static gboolean
abort_rank(RsEndpoint *ep, gpointer user_data, GError **error)
{
    if (rs_endpoint_get_rank(ep) == 2) {
        g_usleep(10000);
        g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "rank 2 broke on purpose");
        return FALSE;
    }
    guint8 buf[8];
    RsTransportRequest req;
    if (!rs_endpoint_irecv(ep, 2, 0, buf, sizeof buf, &req, error))
        return FALSE;
    return wait_req(ep, &req, error);
}

static void
test_abort(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTransport) t = rs_transport_open("host", NULL, &error);
    g_assert_false(rs_transport_launch(t, 3, abort_rank, NULL, &error));
    g_assert_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED);
    g_assert_cmpstr(error->message, ==, "rank 2 broke on purpose");
}

typedef struct {
    GPtrArray *gathered;
    gint bcast_ok;
} CollData;

static gboolean
coll_rank(RsEndpoint *ep, gpointer user_data, GError **error)
{
    CollData *cd = user_data;
    guint32 rank = rs_endpoint_get_rank(ep);
    g_autofree char *text = g_strdup_printf("rank %u of %u", rank, rs_endpoint_get_n_ranks(ep));
    g_autoptr(GBytes) mine = g_bytes_new(text, strlen(text));
    GPtrArray *all = NULL;
    if (!rs_endpoint_gather(ep, mine, &all, error))
        return FALSE;
    if (rank == 0)
        cd->gathered = all;
    else
        g_assert_null(all);
    g_autoptr(GBytes) root = g_bytes_new_static("from zero", 9);
    g_autoptr(GBytes) got = NULL;
    if (!rs_endpoint_bcast(ep, rank == 0 ? root : NULL, &got, error))
        return FALSE;
    if (g_bytes_equal(got, root))
        g_atomic_int_inc(&cd->bcast_ok);
    return rs_endpoint_barrier(ep, error);
}

static void
test_collectives(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTransport) t = rs_transport_open("host", NULL, &error);
    CollData cd = {NULL, 0};
    g_assert_true(rs_transport_launch(t, 5, coll_rank, &cd, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(cd.gathered->len, ==, 5);
    for (guint r = 0; r < 5; r++) {
        g_autofree char *want = g_strdup_printf("rank %u of 5", r);
        gsize n;
        const char *got = g_bytes_get_data(g_ptr_array_index(cd.gathered, r), &n);
        g_assert_cmpmem(got, n, want, strlen(want));
    }
    g_ptr_array_unref(cd.gathered);
    g_assert_cmpint(cd.bcast_ok, ==, 5);
}

/* The executor's pattern: one non-blocking pass, look at the requests, then block. A send
 * the receiver completes between the look and the block must end the block (it used to be
 * lost, and the rank slept forever). The sender pauses between the look and the block so
 * that the completion lands there; a 2 s limit turns a lost wake-up into a failure. */
typedef struct {
    gint lost;
} WakeData;

static gboolean
wake_rank(RsEndpoint *ep, gpointer user_data, GError **error)
{
    WakeData *wd = user_data;
    gboolean sender = rs_endpoint_get_rank(ep) == 0;
    guint8 buf[64 << 10];
    memset(buf, 7, sizeof buf);
    for (guint i = 0; i < 40 && !g_atomic_int_get(&wd->lost); i++) {
        RsTransportRequest req;
        gboolean ok = sender ? rs_endpoint_isend(ep, 1, i, buf, sizeof buf, &req, error)
                             : rs_endpoint_irecv(ep, 0, i, buf, sizeof buf, &req, error);
        if (!ok)
            return FALSE;
        while (!g_atomic_int_get(&req.done) && !g_atomic_int_get(&wd->lost)) {
            if (!rs_endpoint_progress(ep, -1, error))
                return FALSE;
            if (g_atomic_int_get(&req.done))
                break;
            if (sender)
                g_usleep(2000);
            double t0 = rs_endpoint_now_s(ep);
            if (!rs_endpoint_progress(ep, 2.0, error))
                return FALSE;
            if (!g_atomic_int_get(&req.done) && rs_endpoint_now_s(ep) - t0 >= 1.9)
                g_atomic_int_inc(&wd->lost);
        }
    }
    return TRUE;
}

static void
test_no_lost_wakeup(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsTransport) t = rs_transport_open("host", NULL, &error);
    WakeData wd = {0};
    g_assert_true(rs_transport_launch(t, 2, wake_rank, &wd, &error));
    g_assert_no_error(error);
    g_assert_cmpint(wd.lost, ==, 0);
}

static void
test_registry(void)
{
    g_autoptr(GError) error = NULL;
    g_assert_null(rs_transport_open("carrier-pigeon", NULL, &error));
    g_assert_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_UNKNOWN);
    g_assert_nonnull(strstr(error->message, "known: host, mpi"));
    g_clear_error(&error);
    g_autofree char *list = rs_transport_list();
    /* Without MPI the unavailable backend names the cause; with MPI, opening is exercised by the
     * mpirun test of test-cli (a second MPI_Init in this process is not allowed). */
    if (strstr(list, "mpi (not built)") != NULL) {
        g_assert_null(rs_transport_open("mpi", NULL, &error));
        g_assert_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_UNAVAILABLE);
        g_assert_nonnull(strstr(error->message, "libopenmpi-dev"));
    }
    g_autoptr(RsTransport) t = rs_transport_open("host", NULL, &error);
    g_assert_cmpuint(rs_transport_get_world_size(t), ==, 0);
    g_assert_true(rs_transport_is_root(t));
    g_assert_cmpstr(rs_transport_get_name(t), ==, "host");
}

/* Settings past the limits are refused when the transport opens (an 8 GiB eager size or a
 * queue of 2^31 messages aborted on allocation); the limits themselves open. */
static void
test_config_limits(void)
{
    const RsTransportConfig bad[] = {{.eager_bytes = RS_TRANSPORT_MAX_EAGER_BYTES + 1},
                                     {.queue_depth = RS_TRANSPORT_MAX_QUEUE_DEPTH + 1}};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) error = NULL;
        RsTransport *t = rs_transport_open("host", &bad[i], &error);
        g_assert_null(t);
        g_assert_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_INVALID);
        g_assert_nonnull(strstr(error->message, i == 0 ? "eager size" : "queue depth"));
    }
    RsTransportConfig top = {.eager_bytes = RS_TRANSPORT_MAX_EAGER_BYTES,
                             .queue_depth = RS_TRANSPORT_MAX_QUEUE_DEPTH};
    g_autoptr(GError) error = NULL;
    RsTransport *t = rs_transport_open("host", &top, &error);
    g_assert_no_error(error);
    rs_transport_close(t);
}

/* rs_transport_get_launch_bytes() for host, from its structs on x86-64 (LP64): a channel
 * (32 bytes) and two GQueues (24 each) per ordered pair of ranks; per pair that exchanges
 * messages a ring of queue_depth entries (56 bytes each) and queue_depth eager slots. */
static void
test_launch_bytes(void)
{
    if (sizeof(gpointer) != 8) {
        g_test_skip("the figures are those of an LP64 ABI");
        return;
    }
    g_autoptr(GError) error = NULL;
    RsTransportConfig config = {.eager_bytes = 4096, .queue_depth = 4};
    g_autoptr(RsTransport) t = rs_transport_open("host", &config, &error);
    g_assert_no_error(error);
    guint64 one = rs_transport_get_launch_bytes(t, 1, 0);
    guint64 two = rs_transport_get_launch_bytes(t, 2, 0);
    guint64 three = rs_transport_get_launch_bytes(t, 3, 0);
    /* n² × 80 + n × per_rank: the second difference is 2 × 80. */
    g_assert_cmpuint(three - 2 * two + one, ==, 160);
    guint64 per_rank = one - 80;
    g_assert_cmpuint(rs_transport_get_launch_bytes(t, 2000, 0), ==,
                     2000ull * 2000 * 80 + 2000 * per_rank);
    g_assert_cmpuint(rs_transport_get_launch_bytes(t, 3, 5) - three, ==, 5 * 4 * (56 + 4096));
    /* More pairs than exist count as all of them; the largest world does not overflow. */
    g_assert_cmpuint(rs_transport_get_launch_bytes(t, 2, G_MAXUINT64), ==,
                     two + 4 * 4 * (56 + 4096));
    g_assert_cmpuint(rs_transport_get_launch_bytes(t, 1u << 18, 0), ==,
                     (1ull << 36) * 80 + (1ull << 18) * per_rank);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    static const guint one = 1, many = 12;
    g_test_add_data_func("/transport/host/ping-each-size", &one, test_ping);
    g_test_add_data_func("/transport/host/more-sends-than-the-queue-holds", &many, test_ping);
    g_test_add_func("/transport/host/mismatch-is-an-error", test_mismatch);
    g_test_add_func("/transport/host/abort-reports-the-cause", test_abort);
    g_test_add_func("/transport/host/collectives", test_collectives);
    g_test_add_func("/transport/host/config-limits", test_config_limits);
    g_test_add_func("/transport/host/no-lost-wakeup", test_no_lost_wakeup);
    g_test_add_func("/transport/registry", test_registry);
    g_test_add_func("/transport/host/launch-bytes", test_launch_bytes);
    return g_test_run();
}
