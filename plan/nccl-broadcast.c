/* nccl-broadcast.c — the framework baseline: what RL frameworks do without a reshard
 * collective, and the broadcast helpers checkpoint-engine shares (ring_broadcast below).
 *
 * Per tensor (its pipeline stage's tensors under Megatron), phase 0 all-gathers the tensor
 * inside the training group that holds it: each distinct source box, taken from the
 * replica nearest the root in rank order, goes to every other member of that group (the
 * TP/EP ranks of the root's replica, as verl's and NeMo-RL's Megatron weight export
 * all-gather each bucket over TP and EP). Phase 1 broadcasts the whole tensor from the root
 * (the lowest source rank holding part of it) to every inference rank, which keeps its
 * slice by a local copy from the broadcast buffer.
 *
 * The broadcast is NCCL's: ring is its only broadcast algorithm (NVIDIA/nccl
 * src/graph/tuning.cc, ncclTopoTuneModel: "if ((coll == ncclFuncBroadcast || coll ==
 * ncclFuncReduce) && a != NCCL_ALGO_RING) continue"), run by src/device/broadcast.h
 * runRing: the root sends, every other rank receives, copies and sends on
 * (directRecvCopyDirectSend), the last receives, chunk by chunk, so the ring is a
 * pipelined chain. NCCL splits the bytes over its channels, each a ring of its own; on a
 * rail-optimised fabric each channel leaves a node through its own NIC, so a channel per
 * rail: the tensor is cut into one slice per rail (rs_topology_get_n_rails), and the ring
 * of slice c enters every NVLink domain at its GPU on rail c (the NIC of rail c receives),
 * runs through the domain's ranks over NVLink, and leaves from the last one towards the
 * next domain's rail-c GPU (through rail c's NIC, over NVLink first, with PXN). The
 * pipelining granularity is NCCL's step: NCCL_BUFFSIZE 4 MiB (src/init.cc,
 * DEFAULT_BUFFSIZE) over NCCL_STEPS 8 (src/include/device.h) with BROADCAST_CHUNKSTEPS 1
 * (src/include/collectives.h): 512 KiB chunks (RS_NCCL_BROADCAST_STEP_BYTES), the plan's
 * relay chunk (rs_plan_get_relay_chunk_bytes()), which the flow model runs unless told
 * otherwise (RsFlowSimOptions.plan_relays). Frameworks broadcast bucket by bucket: verl
 * (verl/workers/config/rollout.py, CheckpointEngineConfig.update_weights_bucket_megabytes
 * = 2048), NeMo-RL (nemo_rl/utils/packed_tensor.py, get_target_packed_tensor_size:
 * min(0.02 × GPU memory, 5 GiB), get_num_buffers: 2 buffers in flight), slime (its
 * --update-weight-buffer-size, 536870912 in its example scripts); here the planner's
 * staging bound is the bucket (--staging-bytes; each piece of a tensor at most that, the
 * pieces of one bucket pipelined along the ring). */
#include "plan/plan-private.h"

#include <string.h>

/* The root: the lowest source rank holding any part of the tensor. */
static guint32
broadcast_root(const RsSourceGroups *sg)
{
    guint32 root = G_MAXUINT32;
    for (guint g = 0; g < sg->groups->len; g++) {
        const RsSourceGroup *group = &g_array_index(sg->groups, RsSourceGroup, g);
        root = MIN(root, g_array_index(sg->holders, guint32, group->first_holder));
    }
    return root;
}

/* The replica of @group nearest @root in rank order (the root itself when it holds the
 * box; ties to the lower rank): the member of the root's model-parallel group. */
static guint32
nearest_holder(const RsSourceGroups *sg, const RsSourceGroup *group, guint32 root)
{
    const guint32 *holders = &g_array_index(sg->holders, guint32, group->first_holder);
    guint32 best = holders[0];
    for (guint h = 1; h < group->n_holders; h++) {
        guint64 d = holders[h] > root ? holders[h] - root : root - holders[h];
        guint64 db = best > root ? best - root : root - best;
        if (d < db)
            best = holders[h];
    }
    return best;
}

/* Phase 0: every member of the root's group receives every box it does not hold from the
 * member holding it (an all-gather); the root's copy is what phase 1 broadcasts. */
static gboolean
all_gather_phase(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                 const RsSourceGroups *sg, guint32 root, GError **error)
{
    RsBox full;
    rs_box_init_full(&full, t->n_dims, t->shape);
    g_autoptr(GArray) missing = g_array_new(FALSE, FALSE, sizeof(RsBox));
    g_array_append_val(missing, full);
    guint n_groups = sg->groups->len;
    g_autofree guint32 *sender = g_new(guint32, n_groups);
    g_autoptr(GArray) members = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_array_append_val(members, root);
    for (guint g = 0; g < n_groups; g++) {
        const RsSourceGroup *group = &g_array_index(sg->groups, RsSourceGroup, g);
        sender[g] = nearest_holder(sg, group, root);
        gboolean seen = FALSE;
        for (guint m = 0; m < members->len; m++)
            seen = seen || g_array_index(members, guint32, m) == sender[g];
        if (!seen)
            g_array_append_val(members, sender[g]);
    }
    for (guint g = 0; g < n_groups; g++) {
        const RsSourceGroup *group = &g_array_index(sg->groups, RsSourceGroup, g);
        for (guint m = 0; m < members->len; m++) {
            guint32 to = g_array_index(members, guint32, m);
            /* The root stages its own box by a local copy; other members keep theirs. */
            if (to != root && to == sender[g])
                continue;
            rs_plan_builder_emit_split(b, t, tensor_idx, sender[g], to, 0, RS_TRANSFER_TO_STAGING,
                                       NULL, &group->box, NULL);
        }
        rs_box_list_subtract(missing, &group->box);
    }
    if (missing->len > 0) {
        rs_plan_set_uncovered_error(error, t, root, &g_array_index(missing, RsBox, 0));
        return FALSE;
    }
    return TRUE;
}

guint
rs_plan_split_channels(const RsBox *box, RsDtype dtype, guint n_channels, RsBox *out)
{
    gint64 pack = (gint64)rs_dtype_get_elems_per_byte(dtype);
    if (n_channels <= 1 || box->n_dims == 0 || rs_box_rows_share_bytes(box, dtype)) {
        out[0] = *box;
        return 1;
    }
    /* The outermost dim with at least n_channels indices, else the longest one. */
    guint d = 0;
    gint64 best = -1;
    for (guint k = 0; k < box->n_dims; k++) {
        gint64 c = rs_box_get_count(box, k);
        if (c >= (gint64)n_channels) {
            d = k;
            best = c;
            break;
        }
        if (c > best) {
            d = k;
            best = c;
        }
    }
    gint64 count = rs_box_get_count(box, d);
    guint n = (guint)MIN((gint64)n_channels, count);
    if (n <= 1) {
        out[0] = *box;
        return 1;
    }
    /* torch.chunk-style: chunk = ceil(count / n); trailing slices may be shorter. A
     * packed dtype's slices of the last dim keep whole bytes (rs_layout_check_packed). */
    gint64 chunk = (count + n - 1) / n;
    if (d + 1 == box->n_dims && pack > 1)
        chunk = (chunk + pack - 1) / pack * pack;
    guint made = 0;
    for (gint64 start = 0; start < count; start += chunk) {
        RsBox slice = *box;
        rs_box_set_dim(&slice, d, rs_box_get_index(box, d, start), MIN(chunk, count - start),
                       box->step[d]);
        out[made++] = slice;
    }
    return made;
}

/* The order of channel @channel's ring after the root: NVLink domains in index order (the
 * root's own first), inside each the ranks starting at rail @channel and going round the
 * rails, ties by rank. @ranks: the receivers, ascending. */
static void
ring_order(const RsTopology *topo, const guint32 *ranks, guint n_ranks, guint32 root,
           guint channel, guint32 *out)
{
    guint n_rails = MAX(rs_topology_get_n_rails(topo), 1);
    guint root_domain = rs_topology_get_nvlink_domain(topo, root);
    typedef struct {
        guint64 key;
        guint32 rank;
    } Entry;
    g_autofree Entry *e = g_new(Entry, n_ranks);
    for (guint i = 0; i < n_ranks; i++) {
        guint domain = rs_topology_get_nvlink_domain(topo, ranks[i]);
        guint dkey = domain == root_domain ? 0 : domain + 1;
        guint rail = (rs_topology_get_rail(topo, ranks[i]) + n_rails - channel % n_rails) % n_rails;
        e[i].key = ((guint64)dkey << 40) | ((guint64)rail << 32) | ranks[i];
        e[i].rank = ranks[i];
    }
    /* Insertion sort: a ring has at most a few thousand ranks, sorted once per slice. */
    for (guint i = 1; i < n_ranks; i++) {
        Entry x = e[i];
        guint j = i;
        while (j > 0 && e[j - 1].key > x.key) {
            e[j] = e[j - 1];
            j--;
        }
        e[j] = x;
    }
    for (guint i = 0; i < n_ranks; i++)
        out[i] = e[i].rank;
}

void
rs_plan_ring_broadcast(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                       const RsTopology *topo, guint32 root, const RsBox *box, guint32 phase,
                       gboolean root_from_staging)
{
    guint n_dst = rs_layout_get_n_ranks(t->dst);
    if (n_dst == 0 || rs_box_is_empty(box))
        return;
    g_autofree guint32 *ranks = g_new(guint32, n_dst);
    guint n_recv = 0;
    for (guint i = 0; i < n_dst; i++)
        ranks[n_recv++] = rs_layout_get_rank(t->dst, i);
    g_autofree guint32 *order = g_new(guint32, n_recv);
    guint n_channels = topo != NULL ? MAX(rs_topology_get_n_rails(topo), 1) : 1;
    g_autofree RsBox *slices = g_new(RsBox, n_channels);
    guint n_slices = rs_plan_split_channels(box, t->dtype, n_channels, slices);
    g_autoptr(GArray) pieces = g_array_new(FALSE, FALSE, sizeof(RsBox));
    for (guint c = 0; c < n_slices; c++) {
        if (topo != NULL)
            ring_order(topo, ranks, n_recv, root, c, order);
        else
            memcpy(order, ranks, n_recv * sizeof *ranks);
        g_array_set_size(pieces, 0);
        guint n_pieces = rs_plan_split_box(&slices[c], t, b->max_transfer_bytes, pieces);
        g_autofree gint64 *prev_arrival = g_new(gint64, n_pieces);
        g_autofree gint64 *arrival = g_new(gint64, n_pieces);
        for (guint p = 0; p < n_pieces; p++)
            prev_arrival[p] = -1;
        guint32 prev = root;
        gboolean prev_staged = root_from_staging;
        for (guint i = 0; i < n_recv; i++) {
            guint32 rank = order[i];
            gint dst_idx = rs_layout_find_rank(t->dst, rank);
            for (guint p = 0; p < n_pieces; p++) {
                arrival[p] = -1;
                if (rank != root)
                    arrival[p] = rs_plan_builder_emit(
                        b, t, tensor_idx, prev, rank, phase,
                        RS_TRANSFER_TO_STAGING | (prev_staged ? RS_TRANSFER_FROM_STAGING : 0),
                        prev_arrival[p], &g_array_index(pieces, RsBox, p));
            }
            guint n_boxes;
            const RsLocalBox *dst_boxes = rs_layout_get_boxes(t->dst, (guint)dst_idx, &n_boxes);
            for (guint db = 0; db < n_boxes; db++) {
                for (guint p = 0; p < n_pieces; p++) {
                    RsBox keep;
                    if (!rs_box_intersect(&dst_boxes[db].box, &g_array_index(pieces, RsBox, p),
                                          &keep))
                        continue;
                    /* The root keeps the box from where it sends it: its staging buffer, or
                     * its source shard. */
                    gboolean from_shard = rank == root && !root_from_staging;
                    rs_plan_builder_emit(b, t, tensor_idx, rank, rank, phase,
                                         from_shard ? 0 : RS_TRANSFER_FROM_STAGING, arrival[p],
                                         &keep);
                }
            }
            if (rank != root) {
                prev = rank;
                prev_staged = TRUE;
                memcpy(prev_arrival, arrival, n_pieces * sizeof *arrival);
            }
        }
    }
}

gboolean
rs_plan_nccl_broadcast_tensor(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx,
                              const RsTopology *topo, GError **error)
{
    /* A collective: every rank of the communicator takes part in each bucket's broadcast,
     * which the frameworks follow by loading the bucket before the next one. */
    b->round_sync = RS_ROUND_SYNC_WORLD_BARRIER;
    b->relay_chunk_bytes = RS_NCCL_BROADCAST_STEP_BYTES; /* NCCL's ring pipelines its steps */
    if (rs_layout_get_n_elems(t->src) == 0)
        return TRUE;
    RsSourceGroups sg;
    rs_source_groups_build(&sg, t->src);
    if (!rs_plan_check_sources_cover(t, &sg, error)) {
        rs_source_groups_clear(&sg);
        return FALSE;
    }
    if (sg.groups->len == 0) {
        rs_source_groups_clear(&sg);
        return TRUE; /* nothing held, nothing needed */
    }
    guint32 root = broadcast_root(&sg);
    gboolean ok = all_gather_phase(b, t, tensor_idx, &sg, root, error);
    rs_source_groups_clear(&sg);
    if (ok) {
        RsBox full;
        rs_box_init_full(&full, t->n_dims, t->shape);
        rs_plan_ring_broadcast(b, t, tensor_idx, topo, root, &full, 1, TRUE);
    }
    return ok;
}
