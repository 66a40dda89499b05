/* memory.c — weights per GPU from the layouts' local buffers (see memory.h). A hash set of
 * (rank, buffer name) counts each fused buffer once per rank; the per-GPU sums live in
 * arrays over the topology's GPUs. */
#include "analysis/memory.h"

#include "base/dtype.h"
#include "layout/layout.h"

#include <string.h>

const char *
rs_memory_side_get_name(RsMemorySide side)
{
    return side == RS_MEMORY_TRAIN ? "train" : "infer";
}

/* Adds the local buffers of @layout to @bytes (per GPU), once per (rank, buffer). */
static void
add_layout(const RsLayout *layout, const char *buffer, RsDtype dtype, GHashTable *seen,
           guint64 *bytes, gboolean *on_side, guint n_gpus)
{
    guint n = rs_layout_get_n_ranks(layout);
    for (guint i = 0; i < n; i++) {
        guint32 rank = rs_layout_get_rank(layout, i);
        if (rank >= n_gpus)
            continue;
        on_side[rank] = TRUE;
        char *key = g_strdup_printf("%u/%s", rank, buffer);
        if (!g_hash_table_add(seen, key))
            continue;
        bytes[rank] += rs_dtype_get_n_bytes(dtype, rs_layout_get_local_n_elems(layout, i));
    }
}

void
rs_memory_compute(const RsRefit *refit, const RsTopology *topology, const RsMemoryOptions *options,
                  RsMemoryResult *out)
{
    g_return_if_fail(refit != NULL && topology != NULL && options != NULL && out != NULL);
    memset(out, 0, sizeof *out);
    guint n_gpus = rs_topology_get_n_gpus(topology);
    guint64 *bytes[RS_MEMORY_SIDE_N];
    gboolean *on[RS_MEMORY_SIDE_N];
    GHashTable *seen[RS_MEMORY_SIDE_N];
    for (guint s = 0; s < RS_MEMORY_SIDE_N; s++) {
        bytes[s] = g_new0(guint64, MAX(n_gpus, 1));
        on[s] = g_new0(gboolean, MAX(n_gpus, 1));
        seen[s] = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    }
    for (guint t = 0; t < rs_refit_get_n_tensors(refit); t++) {
        const RsRefitTensor *rt = rs_refit_get_tensor(refit, t);
        /* Block scales are computed at the source while converting: only the destination
         * holds them. */
        if (rt->scale_of < 0)
            add_layout(rt->src, rs_refit_tensor_get_src_buffer(rt), rt->src_dtype,
                       seen[RS_MEMORY_TRAIN], bytes[RS_MEMORY_TRAIN], on[RS_MEMORY_TRAIN], n_gpus);
        add_layout(rt->dst, rs_refit_tensor_get_dst_buffer(rt), rt->dtype, seen[RS_MEMORY_INFER],
                   bytes[RS_MEMORY_INFER], on[RS_MEMORY_INFER], n_gpus);
    }
    guint64 capacity = rs_topology_get_gpu_memory_bytes(topology);
    out->feasible = TRUE;
    for (guint s = 0; s < RS_MEMORY_SIDE_N; s++) {
        RsMemorySideResult *r = &out->side[s];
        r->capacity_bytes = capacity;
        r->feasible = TRUE;
        gboolean found = FALSE;
        for (guint32 g = 0; g < n_gpus; g++) {
            if (!on[s][g])
                continue;
            r->n_gpus++;
            guint64 w = bytes[0][g] + bytes[1][g];
            guint64 reserve = (on[0][g] ? options->reserve_bytes[0] : 0) +
                              (on[1][g] ? options->reserve_bytes[1] : 0);
            guint64 total = w + options->staging_bytes + reserve;
            if (!found || total > r->total_bytes) {
                found = TRUE;
                r->max_gpu = g;
                r->weights_bytes = w;
                r->staging_bytes = options->staging_bytes;
                r->reserve_bytes = reserve;
                r->total_bytes = total;
            }
        }
        if (found && capacity > 0 && r->total_bytes > capacity)
            r->feasible = FALSE;
        out->feasible = out->feasible && r->feasible;
    }
    for (guint s = 0; s < RS_MEMORY_SIDE_N; s++) {
        g_free(bytes[s]);
        g_free(on[s]);
        g_hash_table_unref(seen[s]);
    }
}

char *
rs_memory_format_lines(const RsMemoryResult *memory)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < RS_MEMORY_SIDE_N; i++) {
        const RsMemorySideResult *r = &memory->side[i];
        if (r->n_gpus == 0)
            continue;
        g_string_append_printf(s,
                               "memory     %s GPU %u: %.2f GB weights + %.2f GB staging + "
                               "%.2f GB reserve = %.2f GB",
                               rs_memory_side_get_name(i), r->max_gpu, r->weights_bytes / 1e9,
                               r->staging_bytes / 1e9, r->reserve_bytes / 1e9,
                               r->total_bytes / 1e9);
        if (r->capacity_bytes == 0)
            g_string_append(s, " (GPU memory unknown)\n");
        else
            g_string_append_printf(s, " of %.2f GB: %s\n", r->capacity_bytes / 1e9,
                                   r->feasible ? "fits" : "INFEASIBLE, does not fit");
    }
    return g_string_free(s, FALSE);
}
