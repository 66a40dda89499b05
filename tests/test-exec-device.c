/* test-exec-device.c — the executor's device path (device buffers, pack, unpack, copies,
 * pattern and checks through RsDeviceOps) on a machine without a GPU.
 *
 * The transport here is the host transport with one difference: its class says that
 * buffers live in device memory, and every endpoint carries device operations that run the
 * CUDA kernels' bodies on the CPU (the address arithmetic of exec/region-index.h, unit by
 * unit and element by element, as cuda-kernels.cu does). So the executor takes exactly the
 * branches it takes on cuda-local and nccl — no host pack, no host pattern, no host check —
 * and the test compares its results with the host transport's: every case validates, a
 * corrupted byte is reported at the same element with the same bytes, and the operations
 * counted show that the device path ran. */
#include "exec/pattern.h"
#include "exec/region-index.h"
#include "exec/transport-private.h"

#include "exec-cases.h"

#include <string.h>

/* Counts of the device operations the executor called, over all ranks. */
typedef struct {
    gint alloc, free, zero, fill, check, padding, move, copy, flip, sync;
} OpCounts;

static OpCounts counts;

/* Fault injection: the operation named here fails once its count reaches fail_at. */
static const char *fail_op;
static gint fail_at;

static gboolean
injected(const char *op, gint count, GError **error)
{
    if (g_strcmp0(fail_op, op) != 0 || count < fail_at)
        return FALSE;
    g_set_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED,
                "rank ?: the %s kernel: injected fault", op);
    return TRUE;
}

typedef struct {
    RsTransport base;
    RsTransport *inner;
} FakeTransport;

typedef struct {
    RsEndpoint base;
    RsEndpoint *inner;
} FakeEndpoint;

static RsEndpoint *
inner_of(RsEndpoint *ep)
{
    return ((FakeEndpoint *)ep)->inner;
}

static gboolean
fake_alloc(RsEndpoint *ep, gsize size_bytes, guint8 **ptr_out, GError **error)
{
    g_atomic_int_inc(&counts.alloc);
    /* 256-byte aligned, as cudaMalloc. */
    *ptr_out = g_aligned_alloc0(MAX(size_bytes, 1), 1, 256);
    return TRUE;
}

static void
fake_free(RsEndpoint *ep, guint8 *ptr)
{
    if (ptr == NULL)
        return;
    g_atomic_int_inc(&counts.free);
    g_aligned_free(ptr);
}

static gboolean
fake_zero(RsEndpoint *ep, guint8 *ptr, gsize size_bytes, GError **error)
{
    g_atomic_int_inc(&counts.zero);
    memset(ptr, 0, size_bytes);
    return TRUE;
}

static void
store_elem(guint8 *p, guint64 v, guint e)
{
    for (guint b = 0; b < e; b++)
        p[b] = (guint8)(v >> (8 * b));
}

static guint64
load_elem(const guint8 *p, guint e)
{
    guint64 v = 0;
    for (guint b = 0; b < e; b++)
        v |= (guint64)p[b] << (8 * b);
    return v;
}

static gboolean
fake_fill_box(RsEndpoint *ep, guint64 seed, const RsBoxIndex *box, guint e, guint8 *buffer,
              GError **error)
{
    g_atomic_int_inc(&counts.fill);
    for (guint64 k = 0; k < box->n_elems; k++) {
        guint64 g, l;
        rs_box_index_elem(box, k, &g, &l);
        store_elem(buffer + l * e, rs_pattern_elem_value(seed, g, e), e);
    }
    return TRUE;
}

static gboolean
fake_check_box(RsEndpoint *ep, guint64 seed, const RsBoxIndex *box, guint e,
               const guint8 *buffer, guint64 *n_bad_out, guint64 *first_out, guint8 *got_out,
               GError **error)
{
    if (injected("check", g_atomic_int_add(&counts.check, 1) + 1, error))
        return FALSE;
    *n_bad_out = 0;
    *first_out = G_MAXUINT64;
    for (guint64 k = 0; k < box->n_elems; k++) {
        guint64 g, l;
        rs_box_index_elem(box, k, &g, &l);
        if (load_elem(buffer + l * e, e) != rs_pattern_elem_value(seed, g, e)) {
            (*n_bad_out)++;
            *first_out = MIN(*first_out, k);
        }
    }
    if (*n_bad_out > 0) {
        guint64 g, l;
        rs_box_index_elem(box, *first_out, &g, &l);
        memcpy(got_out, buffer + l * e, e);
    }
    return TRUE;
}

static gboolean
fake_check_padding(RsEndpoint *ep, const RsBoxIndex *boxes, guint n_boxes, guint e,
                   const guint8 *buffer, guint64 n_elems, guint64 *n_bad_out,
                   guint64 *first_out, guint8 *got_out, GError **error)
{
    g_atomic_int_inc(&counts.padding);
    g_autofree guint8 *covered = g_malloc0(MAX(n_elems, 1));
    for (guint b = 0; b < n_boxes; b++)
        for (guint64 k = 0; k < boxes[b].n_elems; k++) {
            guint64 g, l;
            rs_box_index_elem(&boxes[b], k, &g, &l);
            covered[l] = 1;
        }
    *n_bad_out = 0;
    for (guint64 i = 0; i < n_elems; i++)
        if (!covered[i] && load_elem(buffer + i * e, e) != 0 && (*n_bad_out)++ == 0) {
            *first_out = i;
            memcpy(got_out, buffer + i * e, e);
        }
    return TRUE;
}

static gboolean
fake_move(RsEndpoint *ep, const RsRegion *r, guint64 from, guint64 to, guint8 *wire,
          gboolean pack, GError **error)
{
    if (injected("move", g_atomic_int_add(&counts.move, 1) + 1, error))
        return FALSE;
    guint32 u = rs_region_index_unit_bytes(r, from, to, (uintptr_t)wire);
    for (guint64 k = 0; k < (to - from) / u; k++) {
        guint8 *mem = r->base + rs_region_index_wire_offset(r, from + k * u);
        if (pack)
            memcpy(wire + k * u, mem, u);
        else
            memcpy(mem, wire + k * u, u);
    }
    return TRUE;
}

static gboolean
fake_copy(RsEndpoint *ep, const RsRegion *dst, const RsRegion *src, GError **error)
{
    if (injected("copy", g_atomic_int_add(&counts.copy, 1) + 1, error))
        return FALSE;
    guint32 u = rs_region_index_copy_unit_bytes(dst, src);
    for (guint64 k = 0; k < dst->n_bytes / u; k++)
        memcpy(dst->base + rs_region_index_wire_offset(dst, k * u),
               src->base + rs_region_index_wire_offset(src, k * u), u);
    return TRUE;
}

static gboolean
fake_flip_byte(RsEndpoint *ep, guint8 *ptr, GError **error)
{
    g_atomic_int_inc(&counts.flip);
    *ptr ^= 0xff;
    return TRUE;
}

static gboolean
fake_sync(RsEndpoint *ep, GError **error)
{
    g_atomic_int_inc(&counts.sync);
    return TRUE;
}

static const RsDeviceOps fake_ops = {
    .alloc = fake_alloc,
    .free = fake_free,
    .zero = fake_zero,
    .fill_box = fake_fill_box,
    .check_box = fake_check_box,
    .check_padding = fake_check_padding,
    .move = fake_move,
    .copy = fake_copy,
    .flip_byte = fake_flip_byte,
    .sync = fake_sync,
};

typedef struct {
    FakeTransport *t;
    RsRankFunc fn;
    gpointer user_data;
} LaunchData;

static gboolean
fake_rank(RsEndpoint *inner, gpointer data, GError **error)
{
    LaunchData *ld = data;
    FakeEndpoint ep = {{.transport = &ld->t->base, .rank = rs_endpoint_get_rank(inner),
                        .n_ranks = rs_endpoint_get_n_ranks(inner), .device = &fake_ops},
                       inner};
    return ld->fn(&ep.base, ld->user_data, error);
}

static gboolean
fake_launch(RsTransport *transport, guint n_ranks, RsRankFunc fn, gpointer user_data,
            GError **error)
{
    LaunchData ld = {(FakeTransport *)transport, fn, user_data};
    return rs_transport_launch(((FakeTransport *)transport)->inner, n_ranks, fake_rank, &ld,
                               error);
}

static gboolean
fake_isend(RsEndpoint *ep, guint32 peer, guint32 tag, const void *buf, gsize size,
           RsTransportRequest *req, GError **error)
{
    return rs_endpoint_isend(inner_of(ep), peer, tag, buf, size, req, error);
}

static gboolean
fake_irecv(RsEndpoint *ep, guint32 peer, guint32 tag, void *buf, gsize size,
           RsTransportRequest *req, GError **error)
{
    return rs_endpoint_irecv(inner_of(ep), peer, tag, buf, size, req, error);
}

static gboolean
fake_progress(RsEndpoint *ep, double timeout_s, GError **error)
{
    return rs_endpoint_progress(inner_of(ep), timeout_s, error);
}

static gboolean
fake_barrier(RsEndpoint *ep, GError **error)
{
    return rs_endpoint_barrier(inner_of(ep), error);
}

static gboolean
fake_gather(RsEndpoint *ep, GBytes *data, GPtrArray **all_out, GError **error)
{
    return rs_endpoint_gather(inner_of(ep), data, all_out, error);
}

static gboolean
fake_bcast(RsEndpoint *ep, GBytes *data, GBytes **data_out, GError **error)
{
    return rs_endpoint_bcast(inner_of(ep), data, data_out, error);
}

static const RsTransportClass fake_class = {
    .name = "emulated-device",
    .description = "the host transport with device operations emulated on the CPU",
    .available = TRUE,
    .launch = fake_launch,
    .isend = fake_isend,
    .irecv = fake_irecv,
    .progress = fake_progress,
    .barrier = fake_barrier,
    .gather = fake_gather,
    .bcast = fake_bcast,
    .device_buffers = TRUE,
};

static FakeTransport *
fake_open(void)
{
    g_autoptr(GError) error = NULL;
    FakeTransport *t = g_new0(FakeTransport, 1);
    t->inner = rs_transport_open("host", NULL, &error);
    g_assert_no_error(error);
    t->base.klass = &fake_class;
    t->base.config = t->inner->config;
    t->base.is_root = TRUE;
    return t;
}

static void
fake_close(FakeTransport *t)
{
    rs_transport_close(t->inner);
    g_free(t);
}

static void
run_on(RsTransport *t, const RsRefit *refit, RsStrategy strategy, const RsExecOptions *opts,
       RsExecResult *res)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(RsPlan) plan = rs_plan_build(refit, strategy, &error);
    g_assert_no_error(error);
    if (!rs_exec_run(t, plan, refit, opts, res, &error))
        g_error("%s on %s: %s", rs_strategy_get_name(strategy), rs_transport_get_name(t),
                error->message);
}

/* Every planner case under every strategy validates on the emulated device, with chunks cut
 * inside elements, a window of 3 and two runs (the second after a reset of the buffers). */
static void
test_case_row(gconstpointer data)
{
    const CaseRow *row = data;
    g_autoptr(RsRefit) refit = rs_refit_new();
    add_tensor(refit, &row->tensor);
    FakeTransport *t = fake_open();
    for (guint s = 0; s < RS_STRATEGY_N; s++) {
        memset(&counts, 0, sizeof counts);
        RsExecOptions opts = {.chunk_bytes = 24, .window = 3, .n_runs = 2};
        RsExecResult res;
        run_on(&t->base, refit, (RsStrategy)s, &opts, &res);
        if (res.n_bad_elems != 0) {
            g_autofree char *what = rs_exec_mismatch_format(&res.first_bad, refit);
            g_error("%s: %" G_GUINT64_FORMAT " bad elements, first %s",
                    rs_strategy_get_name((RsStrategy)s), res.n_bad_elems, what);
        }
        g_assert_cmpuint(res.n_runs, ==, 2);
        g_assert_cmpuint(res.n_ranks, ==, row->n_ranks);
        /* The device path ran: fills, checks, syncs; each chunk between ranks packed or
         * unpacked by the device (or sent in place); every allocation freed. */
        g_assert_cmpint(counts.fill, >, 0);
        g_assert_cmpint(counts.check, >, 0);
        g_assert_cmpint(counts.sync, >, 0);
        if (res.bytes_moved > 0)
            g_assert_cmpuint(counts.move + res.n_zero_copy, >, 0);
        if (res.local_bytes > 0)
            g_assert_cmpint(counts.copy, >, 0);
        g_assert_cmpint(counts.alloc, ==, counts.free);
        rs_exec_result_clear(&res);
    }
    fake_close(t);
}

/* A byte flipped on arrival is reported at the same element, with the same bytes, as on the
 * host transport; chunks of 16 bytes (packed) and 3 (cut inside elements). */
static void
test_corrupt_byte(void)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    TensorSpec spec = {"w", "8x8", RS_DTYPE_F32, "2", "S(0)", "0,1", "2", "S(1)", "0,1"};
    add_tensor(refit, &spec);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    guint m01 = G_MAXUINT;
    for (guint m = 0; m < rs_plan_get_n_messages(plan); m++)
        if (rs_plan_get_message(plan, m)->src == 0 && rs_plan_get_message(plan, m)->dst == 1)
            m01 = m;
    g_assert_cmpuint(m01, !=, G_MAXUINT);
    g_autoptr(RsTransport) host = rs_transport_open("host", NULL, &error);
    FakeTransport *t = fake_open();
    const guint64 chunks[] = {0, 16, 3};
    for (guint c = 0; c < G_N_ELEMENTS(chunks); c++) {
        RsExecOptions opts = {.chunk_bytes = chunks[c], .corrupt = TRUE, .corrupt_message = m01,
                              .corrupt_byte = 21, .n_runs = 3};
        RsExecResult on_host, on_device;
        memset(&counts, 0, sizeof counts);
        g_assert_true(rs_exec_run(host, plan, refit, &opts, &on_host, &error));
        g_assert_true(rs_exec_run(&t->base, plan, refit, &opts, &on_device, &error));
        g_assert_no_error(error);
        g_assert_cmpint(counts.flip, ==, 1);
        g_assert_cmpuint(on_device.n_bad_elems, ==, 1);
        g_assert_cmpuint(on_device.n_runs, ==, 1);
        g_assert_cmpuint(on_device.first_bad.rank, ==, 1);
        g_assert_cmpint(on_device.first_bad.global_index[0], ==, 1);
        g_assert_cmpint(on_device.first_bad.global_index[1], ==, 5);
        g_assert_cmpuint(on_device.first_bad.flat_index, ==, 13);
        g_autofree char *a = rs_exec_mismatch_format(&on_host.first_bad, refit);
        g_autofree char *b = rs_exec_mismatch_format(&on_device.first_bad, refit);
        g_assert_cmpstr(b, ==, a);
        rs_exec_result_clear(&on_host);
        rs_exec_result_clear(&on_device);
    }
    fake_close(t);
}

/* A byte corrupted on the first hop of a relay chain is forwarded from the device buffer it
 * was unpacked into: every later rank of the chain sees it, as on the host. */
static void
test_relay_chain(void)
{
    g_autoptr(RsRefit) chain = rs_refit_new();
    TensorSpec tc = {"w", "4x4", RS_DTYPE_U8, "1", "R", "0", "3", "R", "1-3"};
    add_tensor(chain, &tc);
    g_autoptr(GError) error = NULL;
    g_autoptr(RsPlan) gb = rs_plan_build(chain, RS_STRATEGY_GATHER_BROADCAST, &error);
    guint first = G_MAXUINT;
    for (guint m = 0; m < rs_plan_get_n_messages(gb); m++)
        if (rs_plan_get_message(gb, m)->src == 0 && rs_plan_get_message(gb, m)->dst == 1)
            first = m;
    FakeTransport *t = fake_open();
    RsExecOptions opts = {.chunk_bytes = 5, .corrupt = TRUE, .corrupt_message = first,
                          .corrupt_byte = 6};
    RsExecResult res;
    g_assert_true(rs_exec_run(&t->base, gb, chain, &opts, &res, &error));
    g_assert_cmpuint(res.n_bad_elems, ==, 3);
    g_assert_cmpuint(res.first_bad.rank, ==, 1);
    g_assert_cmpint(res.first_bad.global_index[0], ==, 1);
    g_assert_cmpint(res.first_bad.global_index[1], ==, 2);
    rs_exec_result_clear(&res);
    fake_close(t);
}

/* Layouts beyond the cases: strided columns, several mesh dims on one tensor dim, 3-D
 * tensors, every element size; each compared with the host transport's counts. */
static const TensorSpec layout_specs[] = {
    {"cols-u8", "16x33", RS_DTYPE_U8, "3", "S(1)", "0-2", "2", "S(0)", "0,1"},
    {"cols-bf16", "12x40", RS_DTYPE_BF16, "2", "S(0)", "0,1", "4", "S(1)", "2-5"},
    {"nested-f32", "24x8", RS_DTYPE_F32, "2x2", "S(0),S(0)", "0-3", "3", "S(1)", "0-2"},
    {"three-d-f64", "4x6x10", RS_DTYPE_F64, "2x2", "S(1),S(2)", "0-3", "2", "S(2)", "4,5"},
};

static void
test_layout(gconstpointer data)
{
    const TensorSpec *spec = data;
    g_autoptr(RsRefit) refit = rs_refit_new();
    add_tensor(refit, spec);
    FakeTransport *t = fake_open();
    const guint64 chunks[] = {0, 40, 7};
    for (guint s = 0; s < RS_STRATEGY_N; s++)
        for (guint c = 0; c < G_N_ELEMENTS(chunks); c++) {
            RsExecOptions opts = {.chunk_bytes = chunks[c], .window = 2};
            RsExecResult res;
            run_on(&t->base, refit, (RsStrategy)s, &opts, &res);
            g_assert_true(res.validated);
            g_assert_cmpuint(res.n_bad_elems, ==, 0);
            rs_exec_result_clear(&res);
        }
    fake_close(t);
}

/* A failing pack, unpack, local copy or check ends the run with that error (never a silent
 * success), and every rank stops. */
static void
test_faults(void)
{
    static const char *const ops[] = {"move", "copy", "check"};
    g_autoptr(RsRefit) refit = rs_refit_new();
    /* Colocated ranks: network messages (packed: columns) and local copies. */
    TensorSpec spec = {"w", "16x12", RS_DTYPE_BF16, "2", "S(0)", "0,1", "2", "S(1)", "0,1"};
    add_tensor(refit, &spec);
    FakeTransport *t = fake_open();
    for (guint i = 0; i < G_N_ELEMENTS(ops); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
        g_assert_no_error(error);
        memset(&counts, 0, sizeof counts);
        fail_op = ops[i];
        fail_at = 1;
        RsExecOptions opts = {.chunk_bytes = 16};
        RsExecResult res;
        g_assert_false(rs_exec_run(&t->base, plan, refit, &opts, &res, &error));
        g_assert_error(error, RS_TRANSPORT_ERROR, RS_TRANSPORT_ERROR_FAILED);
        g_assert_nonnull(strstr(error->message, "injected fault"));
        fail_op = NULL;
        rs_exec_result_clear(&res);
    }
    fake_close(t);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    for (guint i = 0; i < G_N_ELEMENTS(case_rows); i++) {
        g_autofree char *path = g_strdup_printf("/exec-device/cases/%s", case_rows[i].id);
        g_test_add_data_func(path, &case_rows[i], test_case_row);
    }
    for (guint i = 0; i < G_N_ELEMENTS(layout_specs); i++) {
        g_autofree char *path = g_strdup_printf("/exec-device/layouts/%s", layout_specs[i].name);
        g_test_add_data_func(path, &layout_specs[i], test_layout);
    }
    g_test_add_func("/exec-device/corrupt-byte", test_corrupt_byte);
    g_test_add_func("/exec-device/faults", test_faults);
    g_test_add_func("/exec-device/relay-chain", test_relay_chain);
    return g_test_run();
}
