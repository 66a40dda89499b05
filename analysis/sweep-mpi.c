/* sweep-mpi.c — the MPI build (sweep-mpi.h). Each rank serialises its results, one
 * GVariant array of (index, result), and sends it to rank 0, which unpacks every array
 * into the result slots; the points themselves are the same on every rank (made from the
 * same flags), so only results travel. */
#include "analysis/sweep-mpi.h"

#include <mpi.h>
#include <string.h>

static gboolean initialised_here;

static gboolean
mpi_check(int code, const char *what, GError **error)
{
    if (code == MPI_SUCCESS)
        return TRUE;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    g_set_error(error, RS_SWEEP_ERROR, RS_SWEEP_ERROR_FAILED, "%s: %.*s", what, len, text);
    return FALSE;
}

gboolean
rs_sweep_mpi_start(guint *rank, guint *n_ranks, GError **error)
{
    *rank = 0;
    *n_ranks = 1;
    if (!rs_sweep_mpi_is_launched())
        return TRUE;
    int initialised = 0, provided = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
        /* Only the main thread calls MPI; the pool's threads never do. */
        if (!mpi_check(MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided),
                       "MPI_Init_thread", error))
            return FALSE;
        initialised_here = TRUE;
    }
    int r = 0, n = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    *rank = (guint)r;
    *n_ranks = (guint)n;
    return TRUE;
}

/* Each rank's header to rank 0: failed (0 or 1), the caller's failure code, the bytes of
 * the payload that follows (the results as a GVariant, or the failure's message). */
enum { HEADER_FAILED, HEADER_CODE, HEADER_SIZE, HEADER_N };

gboolean
rs_sweep_mpi_gather(RsSweepResult *results, guint n, guint rank, guint n_ranks,
                    const GError *failure, guint failure_code, guint *code_out, GError **error)
{
    if (code_out != NULL)
        *code_out = failure ? failure_code : 0;
    if (n_ranks <= 1) {
        if (failure != NULL) {
            g_propagate_error(error, g_error_copy(failure));
            return FALSE;
        }
        return TRUE;
    }
    if (rank != 0) {
        g_autoptr(GVariant) v = NULL;
        const void *payload;
        gsize size;
        if (failure != NULL) {
            payload = failure->message;
            size = strlen(failure->message) + 1;
        } else {
            GVariantBuilder b;
            g_variant_builder_init(&b, G_VARIANT_TYPE("a(uv)"));
            for (guint i = rank; i < n; i += n_ranks)
                g_variant_builder_add(&b, "(uv)", i, rs_sweep_result_to_variant(&results[i]));
            v = g_variant_ref_sink(g_variant_builder_end(&b));
            payload = g_variant_get_data(v);
            size = g_variant_get_size(v);
        }
        guint64 header[HEADER_N] = {failure != NULL, failure_code, size};
        if (!mpi_check(MPI_Send(header, HEADER_N, MPI_UINT64_T, 0, 1, MPI_COMM_WORLD), "MPI_Send",
                       error))
            return FALSE;
        /* One message per rank; a sweep's results are kilobytes per point. */
        if (!mpi_check(MPI_Send(payload, (int)size, MPI_BYTE, 0, 2, MPI_COMM_WORLD), "MPI_Send",
                       error))
            return FALSE;
        if (failure != NULL) {
            g_propagate_error(error, g_error_copy(failure));
            return FALSE;
        }
        return TRUE;
    }
    /* Rank 0 hears every rank out, failed ones included, then reports the first failure. */
    GError *remote = NULL;
    guint remote_code = 0;
    for (guint src = 1; src < n_ranks; src++) {
        guint64 header[HEADER_N] = {0};
        if (!mpi_check(MPI_Recv(header, HEADER_N, MPI_UINT64_T, (int)src, 1, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE),
                       "MPI_Recv", error)) {
            g_clear_error(&remote);
            return FALSE;
        }
        guint64 size64 = header[HEADER_SIZE];
        if (size64 > G_MAXINT) {
            g_clear_error(&remote);
            g_set_error(error, RS_SWEEP_ERROR, RS_SWEEP_ERROR_FAILED,
                        "rank %u: %" G_GUINT64_FORMAT " bytes of results are too many to gather",
                        src, size64);
            return FALSE;
        }
        gpointer data = g_malloc(MAX(size64, 1));
        if (!mpi_check(MPI_Recv(data, (int)size64, MPI_BYTE, (int)src, 2, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE),
                       "MPI_Recv", error)) {
            g_free(data);
            g_clear_error(&remote);
            return FALSE;
        }
        if (header[HEADER_FAILED]) {
            if (remote == NULL) {
                ((char *)data)[MAX(size64, 1) - 1] = '\0';
                remote = g_error_new(RS_SWEEP_ERROR, RS_SWEEP_ERROR_FAILED, "rank %u: %s", src,
                                     (const char *)data);
                remote_code = (guint)header[HEADER_CODE];
            }
            g_free(data);
            continue;
        }
        g_autoptr(GVariant) v = g_variant_ref_sink(
            g_variant_new_from_data(G_VARIANT_TYPE("a(uv)"), data, size64, FALSE, g_free, data));
        GVariantIter it;
        g_variant_iter_init(&it, v);
        guint32 index;
        GVariant *item;
        while (g_variant_iter_next(&it, "(uv)", &index, &item)) {
            if (index < n) {
                rs_sweep_result_clear(&results[index]);
                rs_sweep_result_from_variant(item, &results[index]);
            }
            g_variant_unref(item);
        }
    }
    if (failure != NULL) {
        g_clear_error(&remote);
        g_propagate_error(error, g_error_copy(failure));
        return FALSE;
    }
    if (remote != NULL) {
        if (code_out != NULL)
            *code_out = remote_code;
        g_propagate_error(error, remote);
        return FALSE;
    }
    return TRUE;
}

void
rs_sweep_mpi_finish(void)
{
    if (initialised_here) {
        MPI_Finalize();
        initialised_here = FALSE;
    }
}
