/* calibrate.c — synthetic shift plans, their measurement, the fit and the topology file. */
#include "exec/calibrate.h"

#include <math.h>
#include <string.h>

#include "exec/transport-private.h"

#include "base/mesh.h"
#include "base/stats.h"

static const guint64 default_sizes[] = {4 << 10, 64 << 10, 4 << 20, 32 << 20};
/* From single elements (where per-run work dominates) to runs long enough that a copy
 * streams at memory bandwidth. */
static const guint64 default_copy_runs[] = {1,   4,       16,      32,      64,       128,
                                            256, 512,     1 << 10, 4 << 10, 64 << 10, 1 << 20};

double
rs_measure_memcpy_bytes_per_s(guint64 size_bytes, guint n_runs)
{
    guint8 *a = g_malloc(size_bytes), *b = g_malloc(size_bytes);
    memset(a, 1, size_bytes);
    memset(b, 2, size_bytes);
    g_autofree double *t = g_new(double, MAX(n_runs, 1));
    for (guint i = 0; i < MAX(n_runs, 1); i++) {
        double t0 = rs_transport_clock_s();
        memcpy(b, a, size_bytes);
        t[i] = rs_transport_clock_s() - t0;
        a[i % size_bytes] = b[(i * 4099) % size_bytes]; /* keep the copy observable */
    }
    double median = rs_stats_median(t, MAX(n_runs, 1));
    g_free(a);
    g_free(b);
    return median > 0 ? (double)size_bytes / median : 0.0;
}

/* Adds a tensor every rank of the world holds on both sides: it moves nothing (a local
 * copy of one byte) but makes every rank take part, so an mpi world of n_ranks processes
 * matches the plan whatever the number of active ranks. */
static gboolean
add_presence(RsRefit *refit, guint n_ranks, GError **error)
{
    g_autofree guint32 *ranks = g_new(guint32, n_ranks);
    for (guint r = 0; r < n_ranks; r++)
        ranks[r] = r;
    const gint64 shape[] = {1};
    g_autoptr(RsLayout) all = rs_layout_new_replicated(1, shape, ranks, n_ranks);
    return rs_refit_add_tensor(refit, "presence", RS_DTYPE_U8, all, all, error);
}

/* P tensors of A·S bytes. With @own_senders, tensor p is Shard(0) over ranks A..2A-1 on
 * the source and over ranks 0..A-1 rotated by p on the destination, so rank A+i sends S
 * bytes to rank i+p mod A; otherwise Shard(0) over ranks 0..A-1 on both sides, rotated by
 * p+1 on the destination, so rank i sends to rank i+p+1 mod A. */
static RsRefit *
shift_refit(guint n_ranks, guint active, gboolean own_senders, guint peers, guint64 size,
            GError **error)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    const gint64 shape[] = {(gint64)(active * size)};
    const RsPlacement s0 = {.kind = RS_PLACEMENT_SHARD, .dim = 0};
    guint size_mesh = active;
    g_autofree guint32 *src_ranks = g_new(guint32, active);
    g_autofree guint32 *dst_ranks = g_new(guint32, active);
    for (guint i = 0; i < active; i++)
        src_ranks[i] = own_senders ? active + i : i;
    g_autoptr(RsMesh) src_mesh = rs_mesh_new(1, &size_mesh, NULL, src_ranks, active, error);
    if (src_mesh == NULL)
        return NULL;
    g_autoptr(RsLayout) src = rs_layout_new_dtensor(1, shape, src_mesh, &s0, 1, error);
    if (src == NULL)
        return NULL;
    for (guint p = 0; p < peers; p++) {
        for (guint i = 0; i < active; i++)
            dst_ranks[i] = (i + p + (own_senders ? 0 : 1)) % active;
        g_autoptr(RsMesh) dst_mesh = rs_mesh_new(1, &size_mesh, NULL, dst_ranks, active, error);
        if (dst_mesh == NULL)
            return NULL;
        g_autoptr(RsLayout) dst = rs_layout_new_dtensor(1, shape, dst_mesh, &s0, 1, error);
        g_autofree char *name = g_strdup_printf("shift%u", p + 1);
        if (dst == NULL || !rs_refit_add_tensor(refit, name, RS_DTYPE_U8, src, dst, error))
            return NULL;
    }
    if ((own_senders ? 2 * active : active) < n_ranks && !add_presence(refit, n_ranks, error))
        return NULL;
    return g_steal_pointer(&refit);
}

/* One tensor of @size bytes held by rank 0 and wanted by rank 1: one message. */
static RsRefit *
one_message_refit(guint n_ranks, guint64 size, GError **error)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    const gint64 shape[] = {(gint64)size};
    const guint32 r0 = 0, r1 = 1;
    g_autoptr(RsLayout) src = rs_layout_new_replicated(1, shape, &r0, 1);
    g_autoptr(RsLayout) dst = rs_layout_new_replicated(1, shape, &r1, 1);
    if (!rs_refit_add_tensor(refit, "large", RS_DTYPE_U8, src, dst, error))
        return NULL;
    if (n_ranks > 2 && !add_presence(refit, n_ranks, error))
        return NULL;
    return g_steal_pointer(&refit);
}

/* A u8 tensor [rows, run] that one side holds with its rows padded to @stride_runs·run
 * bytes (so its bytes are runs of @run, one in every @stride_runs, as one rank's columns
 * of a row split over that many ranks) and the other side holds contiguous: the padded
 * side is the source for RS_COPY_READ, the destination for RS_COPY_WRITE; the padding is
 * never read or written. One rank: rank 0 sends it all to rank 1. Node: @receivers ranks
 * receive at once (the concurrency of the refits to predict), both sides Shard(0): from
 * @receivers other ranks (receiver i from rank @receivers + i) when there are that many,
 * else from each other (the destination's rows rotated by one rank). Each receiving rank
 * copies @bytes (rounded down to whole rows, at least one). With @local, every copying
 * rank holds its own rows on both sides: rank i copies them from its source buffer into
 * its destination buffer (a local copy, no message). */
static RsRefit *
copy_refit(guint n_ranks, guint receivers, gboolean local, RsCopySide side, RsCopyScope scope,
           guint64 run, guint64 bytes, guint stride_runs, GError **error)
{
    g_autoptr(RsRefit) refit = rs_refit_new();
    guint n_copying = scope == RS_COPY_NODE ? MAX(receivers, 1u) : 1u;
    gboolean own_senders = !local && scope == RS_COPY_NODE && 2 * n_copying <= n_ranks;
    guint64 rows_per_rank = MAX(bytes / run, 1);
    const gint64 shape[] = {(gint64)(rows_per_rank * n_copying), (gint64)run};
    const RsPlacement s0 = {.kind = RS_PLACEMENT_SHARD, .dim = 0};
    const RsPlacement r = {.kind = RS_PLACEMENT_REPLICATE};
    /* Mesh [n, 1]: rows split over the ranks, the padded dim over a mesh dim of one. */
    RsSplit padded_splits[2] = {rs_split_placement(s0), {0}};
    padded_splits[1].kind = RS_SPLIT_PADDED;
    padded_splits[1].dim = 1;
    padded_splits[1].multiple = (gint64)(stride_runs * run);
    const RsPlacement plain_placements[] = {s0, r};
    g_autofree guint32 *send_ranks = g_new(guint32, n_copying);
    g_autofree guint32 *recv_ranks = g_new(guint32, n_copying);
    for (guint i = 0; i < n_copying; i++) {
        send_ranks[i] = own_senders ? n_copying + i : i;
        recv_ranks[i] = own_senders || local ? i : (i + 1) % MAX(n_copying, 2);
    }
    const guint mesh_dims[] = {n_copying, 1};
    g_autoptr(RsMesh) send_mesh = rs_mesh_new(2, mesh_dims, NULL, send_ranks, n_copying, error);
    g_autoptr(RsMesh) recv_mesh =
        send_mesh ? rs_mesh_new(2, mesh_dims, NULL, recv_ranks, n_copying, error) : NULL;
    if (recv_mesh == NULL)
        return NULL;
    g_autoptr(RsLayout) padded = rs_layout_new_split(
        2, shape, side == RS_COPY_READ ? send_mesh : recv_mesh, padded_splits, 2, error);
    g_autoptr(RsLayout) plain =
        padded ? rs_layout_new_dtensor(2, shape, side == RS_COPY_READ ? recv_mesh : send_mesh,
                                       plain_placements, 2, error)
               : NULL;
    if (plain == NULL ||
        !rs_refit_add_tensor(refit, "runs", RS_DTYPE_U8, side == RS_COPY_READ ? padded : plain,
                             side == RS_COPY_READ ? plain : padded, error))
        return NULL;
    guint n_used = own_senders ? 2 * n_copying : local ? n_copying : MAX(n_copying, 2u);
    if (n_used < n_ranks && !add_presence(refit, n_ranks, error))
        return NULL;
    return g_steal_pointer(&refit);
}

/* Median measured time of the direct plan of @refit. */
static gboolean
measure(RsTransport *transport, const RsRefit *refit, const RsCalibrateOptions *options,
        guint n_runs, double *median_s, GError **error)
{
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, error);
    if (plan == NULL)
        return FALSE;
    RsExecOptions eo = options->exec;
    eo.n_runs = n_runs + 1; /* the first run warms up buffers, queues and threads */
    eo.no_validate = TRUE;
    RsExecResult res;
    if (!rs_exec_run(transport, plan, refit, &eo, &res, error)) {
        rs_exec_result_clear(&res);
        return FALSE;
    }
    if (res.run_s != NULL && res.run_s->len > 1) {
        *median_s = rs_stats_median(&g_array_index(res.run_s, double, 1), res.run_s->len - 1);
    } else {
        *median_s = 0.0;
    }
    rs_exec_result_clear(&res);
    return TRUE;
}

guint
rs_calibrate_point_get_messages(const RsCalibratePoint *p)
{
    return p->receivers == 1 || p->own_senders ? p->peers : 2 * p->peers;
}

guint64
rs_calibrate_point_get_chunks(const RsCalibratePoint *p, guint64 chunk_bytes)
{
    guint64 c = chunk_bytes ? chunk_bytes : RS_EXEC_DEFAULT_CHUNK_BYTES;
    guint64 per_message = p->size_bytes == 0 ? 0 : (p->size_bytes + c - 1) / c;
    return (guint64)rs_calibrate_point_get_messages(p) * per_message;
}

/* The features of point @p: messages, chunk operations and bytes per rank. */
static void
point_features(const RsCalibratePoint *p, guint64 chunk_bytes, double x[3])
{
    x[0] = rs_calibrate_point_get_messages(p);
    x[1] = (double)rs_calibrate_point_get_chunks(p, chunk_bytes);
    x[2] = (double)p->peers * (double)p->size_bytes;
}

/* Solves the n × n system @a·x = @b (n <= 3) by Gaussian elimination with partial
 * pivoting; FALSE when it is singular (a pivot below 1e-12 of the largest entry). */
static gboolean
solve_small(guint n, double a[3][3], double b[3], double x[3])
{
    double scale = 0;
    for (guint i = 0; i < n; i++)
        for (guint j = 0; j < n; j++)
            scale = MAX(scale, fabs(a[i][j]));
    if (!(scale > 0))
        return FALSE;
    for (guint col = 0; col < n; col++) {
        guint piv = col;
        for (guint r = col + 1; r < n; r++)
            if (fabs(a[r][col]) > fabs(a[piv][col]))
                piv = r;
        if (fabs(a[piv][col]) <= 1e-12 * scale)
            return FALSE;
        for (guint j = 0; j < n; j++) {
            double t = a[col][j];
            a[col][j] = a[piv][j];
            a[piv][j] = t;
        }
        double t = b[col];
        b[col] = b[piv];
        b[piv] = t;
        for (guint r = col + 1; r < n; r++) {
            double f = a[r][col] / a[col][col];
            for (guint j = col; j < n; j++)
                a[r][j] -= f * a[col][j];
            b[r] -= f * b[col];
        }
    }
    for (gint r = (gint)n - 1; r >= 0; r--) {
        double v = b[r];
        for (guint j = (guint)r + 1; j < n; j++)
            v -= a[r][j] * x[j];
        x[r] = v / a[r][r];
    }
    return TRUE;
}

/* Fits the points of concurrency @k; fills @fit and their fitted_s. Non-negative least
 * squares over the three terms by enumerating their subsets (rs_calibration_fit()). */
static void
fit_one(RsCalibration *cal, guint k, gboolean with_chunk_term, RsCalibrateFit *fit)
{
    /* Weighted normal equations over all three features: G = Σ w x xᵀ, h = Σ w x t, and
     * Σ w t² for the error, w = 1/t². */
    double g[3][3] = {{0}}, h[3] = {0}, tt = 0;
    for (guint i = 0; i < cal->points->len; i++) {
        const RsCalibratePoint *p = &g_array_index(cal->points, RsCalibratePoint, i);
        if (p->receivers != k || p->measured_s <= 0)
            continue;
        double x[3];
        point_features(p, cal->chunk_bytes, x);
        double w = 1.0 / (p->measured_s * p->measured_s);
        for (guint a = 0; a < 3; a++) {
            for (guint b = 0; b < 3; b++)
                g[a][b] += w * x[a] * x[b];
            h[a] += w * x[a] * p->measured_s;
        }
        tt += w * p->measured_s * p->measured_s;
    }
    /* Subsets in the order ties prefer: fewer terms first; the per-message term before the
     * per-chunk one. Bit 0: overhead, 1: chunk overhead, 2: seconds per byte. */
    static const guint subsets[] = {1, 4, 2, 5, 6, 3, 7};
    double best[3] = {0}, best_err = INFINITY;
    for (guint si = 0; si < G_N_ELEMENTS(subsets); si++) {
        if (!with_chunk_term && (subsets[si] & 2u))
            continue;
        guint idx[3], n = 0;
        for (guint f = 0; f < 3; f++)
            if (subsets[si] & (1u << f))
                idx[n++] = f;
        /* Each feature scaled to a unit diagonal: messages (~1), chunks and bytes (~10^7)
         * differ by orders of magnitude, which would read as singular. */
        double a[3][3], b[3], x[3], d[3];
        gboolean empty = FALSE;
        for (guint r = 0; r < n; r++) {
            d[r] = sqrt(g[idx[r]][idx[r]]);
            empty = empty || !(d[r] > 0);
        }
        if (empty)
            continue;
        for (guint r = 0; r < n; r++) {
            for (guint c = 0; c < n; c++)
                a[r][c] = g[idx[r]][idx[c]] / (d[r] * d[c]);
            b[r] = h[idx[r]] / d[r];
        }
        if (!solve_small(n, a, b, x))
            continue;
        for (guint r = 0; r < n; r++)
            x[r] /= d[r];
        gboolean feasible = TRUE;
        for (guint r = 0; r < n; r++)
            feasible = feasible && x[r] >= 0;
        if (!feasible)
            continue;
        double coef[3] = {0};
        for (guint r = 0; r < n; r++)
            coef[idx[r]] = x[r];
        /* Weighted squared error Σ w (t − coef·x)² = tt − 2 coef·h + coefᵀ G coef. */
        double err = tt;
        for (guint a2 = 0; a2 < 3; a2++) {
            err -= 2 * coef[a2] * h[a2];
            for (guint b2 = 0; b2 < 3; b2++)
                err += coef[a2] * g[a2][b2] * coef[b2];
        }
        if (err < best_err - 1e-12 * MAX(tt, 1e-300)) {
            best_err = err;
            memcpy(best, coef, sizeof best);
        }
    }
    memset(fit, 0, sizeof *fit);
    fit->receivers = k;
    fit->overhead_s = best[0];
    fit->chunk_overhead_s = best[1];
    fit->bw_bytes_per_s = best[2] > 0 ? 1.0 / best[2] : INFINITY;
    double sum2 = 0;
    guint n = 0;
    for (guint i = 0; i < cal->points->len; i++) {
        RsCalibratePoint *p = &g_array_index(cal->points, RsCalibratePoint, i);
        if (p->receivers != k)
            continue;
        double x[3];
        point_features(p, cal->chunk_bytes, x);
        p->fitted_s = best[0] * x[0] + best[1] * x[1] + best[2] * x[2];
        if (p->measured_s <= 0)
            continue;
        double e = (p->fitted_s - p->measured_s) / p->measured_s;
        sum2 += e * e;
        n++;
        fit->max_error = MAX(fit->max_error, fabs(e));
    }
    fit->rms_error = n ? sqrt(sum2 / n) : 0;
}

void
rs_calibration_fit(RsCalibration *cal)
{
    rs_calibration_fit_terms(cal, TRUE);
}

void
rs_calibration_fit_terms(RsCalibration *cal, gboolean with_chunk_term)
{
    if (cal->fits == NULL)
        cal->fits = g_array_new(FALSE, TRUE, sizeof(RsCalibrateFit));
    g_array_set_size(cal->fits, 0);
    for (guint i = 0; i < cal->points->len; i++) {
        guint k = g_array_index(cal->points, RsCalibratePoint, i).receivers;
        gboolean seen = FALSE;
        for (guint f = 0; f < cal->fits->len; f++)
            seen = seen || g_array_index(cal->fits, RsCalibrateFit, f).receivers == k;
        if (seen)
            continue;
        RsCalibrateFit fit;
        fit_one(cal, k, with_chunk_term, &fit);
        guint at = 0;
        while (at < cal->fits->len && g_array_index(cal->fits, RsCalibrateFit, at).receivers < k)
            at++;
        g_array_insert_val(cal->fits, at, fit);
    }
    /* The chosen concurrency, or the nearest one measured. */
    const RsCalibrateFit *best = NULL;
    for (guint f = 0; f < cal->fits->len; f++) {
        const RsCalibrateFit *fit = &g_array_index(cal->fits, RsCalibrateFit, f);
        if (best == NULL || ABS((gint)fit->receivers - (gint)cal->concurrency) <
                                ABS((gint)best->receivers - (gint)cal->concurrency))
            best = fit;
    }
    if (best != NULL) {
        cal->concurrency = best->receivers;
        cal->overhead_s = best->overhead_s;
        cal->chunk_overhead_s = best->chunk_overhead_s;
        cal->bw_bytes_per_s = best->bw_bytes_per_s;
        cal->rms_error = best->rms_error;
        cal->max_error = best->max_error;
    }
}

/* Stage: the options are usable (at least 2 ranks, positive sizes). */
static gboolean
calibrate_check_options(const RsCalibrateOptions *options, const guint64 *sizes, guint n_sizes,
                        GError **error)
{
    if (options->n_ranks < 2 || options->n_ranks > RS_MAX_RANKS) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "calibration needs 2 to %u ranks (RS_MAX_RANKS), not %u", RS_MAX_RANKS,
                    options->n_ranks);
        return FALSE;
    }
    for (guint i = 0; i < n_sizes; i++) {
        if (sizes[i] == 0) {
            g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                        "calibration message sizes must be positive");
            return FALSE;
        }
    }
    return TRUE;
}

/* Stage: the shift points. Concurrency K: 1, then doubling up to every rank, and the
 * concurrency to write (options->concurrency) where that is none of them (it was fitted at
 * the nearest measured K, silently); P = 1 and, where K allows, 2; every size at each.
 * Appends to out->points. */
static gboolean
calibrate_shift_points(RsTransport *transport, const RsCalibrateOptions *options,
                       const guint64 *sizes, guint n_sizes, guint n_runs, RsCalibration *out,
                       GError **error)
{
    guint n = options->n_ranks;
    g_autoptr(GArray) ks = g_array_new(FALSE, FALSE, sizeof(guint));
    for (guint k = 1; k < n; k *= 2)
        g_array_append_val(ks, k);
    g_array_append_val(ks, n);
    guint chosen = options->concurrency;
    if (chosen > 0 && chosen < n && (chosen & (chosen - 1)) != 0) {
        guint at = 0;
        while (g_array_index(ks, guint, at) < chosen)
            at++;
        g_array_insert_val(ks, at, chosen);
    }
    for (guint ki = 0; ki < ks->len; ki++) {
        guint k = g_array_index(ks, guint, ki);
        gboolean own = k > 1 && 2 * k <= n;
        /* P = 2 needs two distinct peers: other senders, or at least 3 ranks sending to
         * each other. */
        guint n_peers = (own ? k >= 2 : k > 2) ? 2u : 1u;
        for (guint peers = 1; peers <= n_peers; peers++) {
            for (guint si = 0; si < n_sizes; si++) {
                RsCalibratePoint p = {k, own || k == 1, peers, sizes[si], 0, 0};
                g_autoptr(RsRefit) refit =
                    k == 1 ? one_message_refit(n, p.size_bytes, error)
                           : shift_refit(n, k, own, p.peers, p.size_bytes, error);
                if (refit == NULL || !measure(transport, refit, options, n_runs, &p.measured_s,
                                              error))
                    return FALSE;
                g_array_append_val(out->points, p);
            }
        }
    }
    return TRUE;
}

/* One point of the copy sweep: runs of @run_bytes, @local or over the transport, on
 * @side and @scope; stores its rate (bytes per second) in @rate. */
static gboolean
calibrate_copy_point(RsTransport *transport, const RsCalibrateOptions *options,
                     const RsCalibration *out, guint n_runs, guint64 run_bytes,
                     guint64 copy_bytes, guint point, RsCopyRate *rate, GError **error)
{
    gboolean local = point / (RS_COPY_SIDE_N * RS_COPY_SCOPE_N);
    guint side = point / RS_COPY_SCOPE_N % RS_COPY_SIDE_N;
    guint scope = point % RS_COPY_SCOPE_N;
    g_autoptr(RsRefit) refit = copy_refit(out->n_ranks, out->concurrency, local, side, scope,
                                          run_bytes, copy_bytes, out->copy_stride_runs, error);
    double t_s = 0;
    if (refit == NULL || !measure(transport, refit, options, n_runs, &t_s, error))
        return FALSE;
    /* Bytes written into destination shards, not the presence byte. */
    double copied = (double)rs_layout_get_n_elems(rs_refit_get_tensor(refit, 0)->dst);
    /* Only rank 0's process gathers the times (mpi). */
    if (!(t_s > 0) && rs_transport_is_root(transport)) {
        g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                    "copy point of %" G_GUINT64_FORMAT " B runs measured no time "
                    "(clock too coarse?): give a larger --copy-bytes",
                    run_bytes);
        return FALSE;
    }
    double *value =
        local ? &rate->local_bytes_per_s[side][scope] : &rate->bytes_per_s[side][scope];
    *value = t_s > 0 ? copied / t_s : 0.0;
    return TRUE;
}

/* Stage: the copy sweep, every run length at every point; fills out->copy_rates. */
static gboolean
calibrate_copy_sweep(RsTransport *transport, const RsCalibrateOptions *options, guint n_runs,
                     RsCalibration *out, GError **error)
{
    const guint64 *runs = options->copy_run_bytes ? options->copy_run_bytes : default_copy_runs;
    guint n_copy = options->copy_run_bytes ? options->n_copy_runs : G_N_ELEMENTS(default_copy_runs);
    guint64 copy_bytes = options->copy_bytes ? options->copy_bytes : 32 << 20;
    out->copy_stride_runs = options->copy_stride_runs ? options->copy_stride_runs : 4;
    out->copy_rates = g_array_new(FALSE, TRUE, sizeof(RsCopyRate));
    for (guint i = 0; i < n_copy; i++) {
        if (runs[i] == 0 || (i > 0 && runs[i] <= runs[i - 1])) {
            g_set_error(error, RS_EXEC_ERROR, RS_EXEC_ERROR_INVALID,
                        "copy run lengths must be positive and increasing");
            return FALSE;
        }
        RsCopyRate rate = {.run_bytes = runs[i]};
        for (guint point = 0; point < 2 * RS_COPY_SIDE_N * RS_COPY_SCOPE_N; point++)
            if (!calibrate_copy_point(transport, options, out, n_runs, runs[i], copy_bytes,
                                      point, &rate, error))
                return FALSE;
        g_array_append_val(out->copy_rates, rate);
    }
    return TRUE;
}

/* Stage: the references, one large message from rank 0 to rank 1 and memcpy on one
 * thread. */
static gboolean
calibrate_references(RsTransport *transport, const RsCalibrateOptions *options, guint n_runs,
                     RsCalibration *out, GError **error)
{
    g_autoptr(RsRefit) large = one_message_refit(out->n_ranks, out->reference_bytes, error);
    double large_s = 0;
    if (large == NULL || !measure(transport, large, options, n_runs, &large_s, error))
        return FALSE;
    out->large_bytes_per_s = large_s > 0 ? (double)out->reference_bytes / large_s : 0;
    if (!rs_transport_is_root(transport))
        return TRUE;
    if (transport->klass->measure_copy != NULL) {
        /* GPU ranks: the reference is a device-to-device cudaMemcpy of the same bytes. */
        out->memcpy_bytes_per_s =
            transport->klass->measure_copy(transport, out->reference_bytes, n_runs);
        out->device_memcpy = TRUE;
    } else {
        out->memcpy_bytes_per_s = rs_measure_memcpy_bytes_per_s(out->reference_bytes, n_runs);
    }
    return TRUE;
}

gboolean
rs_calibrate_run(RsTransport *transport, const RsCalibrateOptions *options, RsCalibration *out,
                 GError **error)
{
    memset(out, 0, sizeof *out);
    const guint64 *sizes = options->sizes_bytes ? options->sizes_bytes : default_sizes;
    guint n_sizes = options->sizes_bytes ? options->n_sizes : G_N_ELEMENTS(default_sizes);
    guint n_runs = options->n_runs ? options->n_runs : 5;
    if (!calibrate_check_options(options, sizes, n_sizes, error))
        return FALSE;
    out->n_ranks = options->n_ranks;
    out->points = g_array_new(FALSE, TRUE, sizeof(RsCalibratePoint));
    out->reference_bytes = options->reference_bytes ? options->reference_bytes : 64 << 20;
    if (!calibrate_shift_points(transport, options, sizes, n_sizes, n_runs, out, error))
        return FALSE;
    out->concurrency = options->concurrency ? options->concurrency : options->n_ranks;
    out->chunk_bytes =
        options->exec.chunk_bytes ? options->exec.chunk_bytes : RS_EXEC_DEFAULT_CHUNK_BYTES;
    rs_calibration_fit(out);
    return calibrate_copy_sweep(transport, options, n_runs, out, error) &&
           calibrate_references(transport, options, n_runs, out, error);
}

void
rs_calibration_clear(RsCalibration *cal)
{
    if (cal->points)
        g_array_unref(cal->points);
    if (cal->fits)
        g_array_unref(cal->fits);
    if (cal->copy_rates)
        g_array_unref(cal->copy_rates);
    memset(cal, 0, sizeof *cal);
}

char *
rs_calibration_to_topology(const RsCalibration *cal, const char *name, const char *command)
{
    GString *s = g_string_new(NULL);
    g_autoptr(GDateTime) now = g_date_time_new_now_local();
    g_autofree char *date = g_date_time_format(now, "%Y-%m-%d %H:%M");
    g_string_append_printf(s, "# This machine (%s) as reshard's executor sees it: %u ranks on "
                              "one node, measured %s\n",
                           g_get_host_name(), cal->n_ranks, date);
    if (command != NULL)
        g_string_append_printf(s, "# by: %s\n", command);
    g_string_append_printf(
        s,
        "# Fit of the first-order cost model (sim/cost.h) to executor runs of shifted Shard(0)\n"
        "# reshards: time = overhead x messages per rank + chunk overhead x chunks of %" G_GUINT64_FORMAT " B\n"
        "# per rank + bytes per rank / bandwidth, per number of ranks receiving at once (K):\n",
        cal->chunk_bytes ? cal->chunk_bytes : RS_EXEC_DEFAULT_CHUNK_BYTES);
    for (guint f = 0; f < cal->fits->len; f++) {
        const RsCalibrateFit *fit = &g_array_index(cal->fits, RsCalibrateFit, f);
        g_string_append_printf(s,
                               "#   K=%-3u overhead %8.3f us  chunk %8.3f us  bandwidth %8.3f GB/s  "
                               "error RMS %5.1f%% max %5.1f%%%s\n",
                               fit->receivers, fit->overhead_s * 1e6, fit->chunk_overhead_s * 1e6,
                               fit->bw_bytes_per_s / 1e9, 100 * fit->rms_error,
                               100 * fit->max_error,
                               fit->receivers == cal->concurrency ? "  <- written below" : "");
    }
    g_string_append_printf(
        s,
        "# Every rank is a \"GPU\" of one NVLink domain; the NIC section is unused on one node\n"
        "# and repeats the same figures. References in the same run: %s\n"
        "# %.2f GB/s; one %.0f MiB message from rank 0 to rank 1 %.2f GB/s.\n",
        cal->device_memcpy ? "device-to-device cudaMemcpy" : "single-thread memcpy",
        cal->memcpy_bytes_per_s / 1e9, cal->reference_bytes / 1048576.0,
        cal->large_bytes_per_s / 1e9);
    g_string_append_printf(s, "name: %s\n", name);
    g_string_append_printf(s, "description: %u ranks of the reshard executor on %s\n",
                           cal->n_ranks, g_get_host_name());
    g_string_append(s, "nodes: 1\n");
    g_string_append_printf(s, "gpus_per_node: %u\n", cal->n_ranks);
    g_string_append(s, "nodes_per_nvlink_domain: 1\n");
    g_string_append(s, "gpu:\n  model: CPU rank\n");
    double bw = isfinite(cal->bw_bytes_per_s) ? cal->bw_bytes_per_s : 1e15;
    char bw_text[64], overhead_text[64];
    g_ascii_formatd(bw_text, sizeof bw_text, "%.6g", bw / 1e9);
    g_ascii_formatd(overhead_text, sizeof overhead_text, "%.6g", cal->overhead_s * 1e6);
    const char *sections[] = {"nvlink", "nic"};
    for (guint i = 0; i < 2; i++)
        g_string_append_printf(s,
                               "%s:\n"
                               "  bandwidth: %s GB/s       # measured: fitted per rank and "
                               "direction\n"
                               "  efficiency: 1.0\n"
                               "  latency: 0 us\n",
                               sections[i], bw_text);
    g_string_append_printf(s,
                           "software:\n"
                           "  message_overhead: %s us  # measured: fitted per message sent or "
                           "received\n",
                           overhead_text);
    if (cal->chunk_overhead_s > 0) {
        char chunk_text[64];
        g_ascii_formatd(chunk_text, sizeof chunk_text, "%.6g", cal->chunk_overhead_s * 1e6);
        g_string_append_printf(s,
                               "  chunk_overhead: %s us  # measured: fitted per chunk operation "
                               "sent or received\n"
                               "  chunk_size: %" G_GUINT64_FORMAT " B  # the chunk of those runs\n",
                               chunk_text,
                               cal->chunk_bytes ? cal->chunk_bytes : RS_EXEC_DEFAULT_CHUNK_BYTES);
    }
    if (cal->copy_rates != NULL && cal->copy_rates->len > 0) {
        g_string_append_printf(s,
                               "copy:  # measured: bytes copied into shards per second when the "
                               "bytes read (read_)\n"
                               "       # or written (write_) are runs of this length, one run in "
                               "every %u;\n"
                               "       # one rank alone, and K=%u ranks of the node at once "
                               "(their sum); local_: a rank's\n"
                               "       # own bytes copied from its source into its destination "
                               "buffer\n"
                               "  runs:\n",
                               cal->copy_stride_runs, cal->concurrency);
        for (guint i = 0; i < cal->copy_rates->len; i++) {
            const RsCopyRate *r = &g_array_index(cal->copy_rates, RsCopyRate, i);
            g_string_append_printf(s, "    - {bytes: %" G_GUINT64_FORMAT " B", r->run_bytes);
            for (guint local = 0; local < 2; local++) {
                for (guint side = 0; side < RS_COPY_SIDE_N; side++) {
                    for (guint scope = 0; scope < RS_COPY_SCOPE_N; scope++) {
                        char text[64];
                        g_ascii_formatd(text, sizeof text, "%.4g",
                                        rs_copy_rate_get(r, local, side, scope) / 1e9);
                        g_string_append_printf(s, ", %s: %s GB/s",
                                               rs_copy_rate_get_key(local, side, scope), text);
                    }
                }
            }
            g_string_append(s, "}\n");
        }
    }
    return g_string_free(s, FALSE);
}

RsTopology *
rs_calibration_load_topology(const RsCalibration *cal, const char *name, const char *command,
                             GError **error)
{
    g_autofree char *yaml = rs_calibration_to_topology(cal, name, command);
    return rs_topology_load_string(yaml, name, NULL, error);
}
