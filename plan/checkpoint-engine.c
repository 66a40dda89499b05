/* checkpoint-engine.c — MoonshotAI checkpoint-engine's broadcast update
 * (checkpoint_engine/ps.py, ParameterServer._update_per_bucket with ranks empty, "the
 * fastest way ... should be used as the default update method", README "Broadcast").
 *
 * Each owner rank holds its shards of the checkpoint in pinned host memory (ps.py
 * register_checkpoint / pin_memory.py); here the owner of a distinct source box is its
 * first holder, a training GPU whose host holds the box. The shards of each owner are cut
 * into buckets in tensor order: a new bucket starts when the next tensor would take the
 * bucket past bucket_size (ps.py _gen_h2d_buckets). For bucket i of every owner, in turn
 * (ps.py: "for i in range(max_len): for receiver_rank, _buckets in
 * buckets_by_receiver_rank.items()"), the owner copies the bucket host-to-device
 * (_copy_to_buffer; RS_PACK_HOST_H2D), then dist.broadcast(buffer, src=owner) sends it to
 * every rank of the group, every inference rank keeps its slice ("reload": the inference
 * engine copies what it needs out of the broadcast buffer), then an all_reduce of the
 * return code and a device synchronise close the bucket (a world barrier). Each bucket is
 * one phase; the broadcast is NCCL's ring, one channel per rail (nccl-broadcast.c).
 *
 * The bucket size (ps.py _detect_bucket_size): bucket = min(max(PS_MAX_BUCKET_SIZE_GB = 8
 * GiB, the largest tensor), free) with free = 0.9 (PS_MEM_FRACTION) × the GPU's free
 * memory / 3 (the H2D buffer plus the two broadcast buffers), the free memory being the
 * GPU's memory less the largest inference rank's weights; without a topology's GPU
 * memory, 8 GiB.
 */
#include "plan/plan-private.h"

#define CKPT_MAX_BUCKET_BYTES (G_GUINT64_CONSTANT(8) << 30) /* ps.py PS_MAX_BUCKET_SIZE_GB 8 */
#define CKPT_MEM_FRACTION 0.9                                /* ps.py PS_MEM_FRACTION 0.9 */

guint64
rs_plan_checkpoint_engine_bucket_bytes(const RsRefit *refit, const RsTopology *topo)
{
    guint64 largest = 0;
    GHashTable *per_rank = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint i = 0; i < rs_refit_get_n_tensors(refit); i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        RsBox full;
        rs_box_init_full(&full, t->n_dims, t->shape);
        largest = MAX(largest, rs_refit_tensor_get_n_bytes(t, rs_box_get_n_elems(&full)));
        for (guint r = 0; r < rs_layout_get_n_ranks(t->dst); r++) {
            guint n_boxes;
            const RsLocalBox *boxes = rs_layout_get_boxes(t->dst, r, &n_boxes);
            guint64 sum = 0;
            for (guint k = 0; k < n_boxes; k++)
                sum += rs_refit_tensor_get_n_bytes(t, rs_box_get_n_elems(&boxes[k].box));
            gpointer key = GUINT_TO_POINTER(rs_layout_get_rank(t->dst, r) + 1);
            guint64 *acc = g_hash_table_lookup(per_rank, key);
            if (acc == NULL) {
                acc = g_new0(guint64, 1);
                g_hash_table_insert(per_rank, key, acc);
            }
            *acc += sum;
        }
    }
    guint64 weights = 0;
    GHashTableIter it;
    gpointer k, v;
    g_hash_table_iter_init(&it, per_rank);
    while (g_hash_table_iter_next(&it, &k, &v)) {
        weights = MAX(weights, *(guint64 *)v);
        g_free(v);
    }
    g_hash_table_unref(per_rank);
    guint64 bucket = MAX(CKPT_MAX_BUCKET_BYTES, largest);
    guint64 memory = topo != NULL ? rs_topology_get_gpu_memory_bytes(topo) : 0;
    if (memory > weights) {
        guint64 free_bytes = (guint64)(CKPT_MEM_FRACTION * (double)(memory - weights)) / 3;
        bucket = MIN(bucket, MAX(free_bytes, largest));
    }
    return bucket;
}

static gint
cmp_rank(gconstpointer a, gconstpointer b)
{
    guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
    return x < y ? -1 : x > y;
}

gboolean
rs_plan_checkpoint_engine_build(RsPlanBuilder *b, const RsRefit *refit, const RsTopology *topo,
                                GError **error)
{
    /* The owner's bytes come from pinned host memory (_copy_to_buffer), and each bucket
     * ends with an all_reduce and a device synchronise on every rank. */
    b->pack_method = RS_PACK_HOST_H2D;
    b->round_sync = RS_ROUND_SYNC_WORLD_BARRIER;
    /* dist.broadcast is NCCL's ring broadcast: its steps pipeline the bucket. */
    b->relay_chunk_bytes = RS_NCCL_BROADCAST_STEP_BYTES;
    guint64 bucket_bytes = rs_plan_checkpoint_engine_bucket_bytes(refit, topo);
    /* Per owner (keyed rank + 1): its current bucket index and fill. */
    g_autoptr(GHashTable) fill = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free);
    g_autoptr(GArray) owners = g_array_new(FALSE, FALSE, sizeof(guint32));
    guint n = rs_refit_get_n_tensors(refit);
    /* Pass 1: each (tensor, source group)'s bucket index within its owner. */
    g_autoptr(GArray) items = g_array_new(FALSE, FALSE, sizeof(guint64) * 3);
    for (guint i = 0; i < n; i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        RsSourceGroups sg;
        rs_source_groups_build(&sg, t->src);
        if (!rs_plan_check_sources_cover(t, &sg, error)) {
            rs_source_groups_clear(&sg);
            return FALSE;
        }
        for (guint g = 0; g < sg.groups->len; g++) {
            const RsSourceGroup *group = &g_array_index(sg.groups, RsSourceGroup, g);
            guint32 owner = g_array_index(sg.holders, guint32, group->first_holder);
            guint64 bytes = rs_refit_tensor_get_n_bytes(t, rs_box_get_n_elems(&group->box));
            guint64 *f = g_hash_table_lookup(fill, GUINT_TO_POINTER(owner + 1));
            if (f == NULL) {
                f = g_new0(guint64, 2); /* [bucket index, bytes in it] */
                g_hash_table_insert(fill, GUINT_TO_POINTER(owner + 1), f);
                g_array_append_val(owners, owner);
            }
            if (f[1] > 0 && f[1] + bytes > bucket_bytes) {
                f[0]++;
                f[1] = 0;
            }
            f[1] += bytes;
            guint64 item[3] = {i, g, ((guint64)f[0] << 32) | owner};
            g_array_append_vals(items, item, 1);
        }
        rs_source_groups_clear(&sg);
    }
    /* Owners in rank order; bucket i of every owner in turn: phase = i·n_owners + owner's
     * position. */
    g_array_sort(owners, cmp_rank);
    g_autoptr(GHashTable) position = g_hash_table_new(g_direct_hash, g_direct_equal);
    for (guint o = 0; o < owners->len; o++)
        g_hash_table_insert(position, GUINT_TO_POINTER(g_array_index(owners, guint32, o) + 1),
                            GUINT_TO_POINTER(o));
    guint cur_tensor = G_MAXUINT;
    RsSourceGroups sg = {0};
    for (guint k = 0; k < items->len; k++) {
        const guint64 *item = (const guint64 *)items->data + 3 * k;
        guint i = (guint)item[0];
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        if (i != cur_tensor) {
            rs_source_groups_clear(&sg);
            rs_source_groups_build(&sg, t->src);
            cur_tensor = i;
        }
        const RsSourceGroup *group = &g_array_index(sg.groups, RsSourceGroup, (guint)item[1]);
        guint32 owner = (guint32)(item[2] & 0xffffffffu);
        guint bucket = (guint)(item[2] >> 32);
        guint pos = GPOINTER_TO_UINT(g_hash_table_lookup(position, GUINT_TO_POINTER(owner + 1)));
        guint32 phase = bucket * owners->len + pos;
        rs_plan_ring_broadcast(b, t, i, topo, owner, &group->box, phase, FALSE);
    }
    rs_source_groups_clear(&sg);
    return TRUE;
}
