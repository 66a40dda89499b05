/* direct.c — the direct strategy: every destination receives exactly the elements of its
 * boxes it does not already hold, each piece from one source replica; the replicas of a
 * source box serve its requesting destinations round-robin, in destination rank order,
 * and with a topology round-robin per destination rail, rail r starting at replica r: with
 * PXN a source's bytes leave through its node's NIC on the destination's rail, so a plain
 * rotation that aliases with the rails (2 replicas, 4 rails: replica 0 serving rails 0 and
 * 2 only) would pile a node's traffic on half its NICs. */
#include "plan/plan-private.h"

#include "topologies/topology.h"

/* The replica of @group that serves destination @rank next. @cursors: [groups × rails]
 * when a topology is known, else NULL (the group's own cursor). */
static guint
next_replica(RsPlanBuilder *b, RsSourceGroup *group, guint g, guint *cursors, guint32 rank)
{
    if (cursors == NULL)
        return group->next_replica++ % group->n_holders;
    guint n_rails = rs_topology_get_n_rails(b->topology);
    guint rail = rank < rs_topology_get_n_gpus(b->topology) ? rs_topology_get_rail(b->topology, rank)
                                                           : rank % n_rails;
    guint *cursor = &cursors[(gsize)g * n_rails + rail];
    return (rail + (*cursor)++) % group->n_holders;
}

gboolean
rs_plan_direct_tensor(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx, GError **error)
{
    RsSourceGroups sg;
    rs_source_groups_build(&sg, t->src);
    g_autofree guint *cursors =
        b->topology != NULL
            ? g_new0(guint, (gsize)MAX(sg.groups->len, 1) * rs_topology_get_n_rails(b->topology))
            : NULL;
    gboolean ok = TRUE;
    g_autoptr(GArray) remaining = g_array_new(FALSE, FALSE, sizeof(RsBox));
    for (guint i = 0; ok && i < rs_layout_get_n_ranks(t->dst); i++) {
        guint32 rank = rs_layout_get_rank(t->dst, i);
        guint n_dst;
        const RsLocalBox *dst_boxes = rs_layout_get_boxes(t->dst, i, &n_dst);
        gint src_idx = rs_layout_find_rank(t->src, rank);
        for (guint db = 0; ok && db < n_dst; db++) {
            const RsBox *want = &dst_boxes[db].box;
            rs_plan_builder_emit_own(b, t, tensor_idx, rank, src_idx, want, remaining);
            for (guint g = 0; g < sg.groups->len && remaining->len > 0; g++) {
                RsSourceGroup *group = &g_array_index(sg.groups, RsSourceGroup, g);
                gboolean used = FALSE;
                for (guint r = 0; r < remaining->len; r++) {
                    RsBox inter;
                    if (!rs_box_intersect(&g_array_index(remaining, RsBox, r), &group->box, &inter))
                        continue;
                    guint replica = next_replica(b, group, g, cursors, rank);
                    guint32 src = g_array_index(sg.holders, guint32, group->first_holder + replica);
                    rs_plan_builder_emit_split(b, t, tensor_idx, src, rank, 0, 0, NULL, &inter,
                                               NULL);
                    used = TRUE;
                }
                if (used)
                    rs_box_list_subtract(remaining, &group->box);
            }
            if (remaining->len > 0) {
                rs_plan_set_uncovered_error(error, t, rank, &g_array_index(remaining, RsBox, 0));
                ok = FALSE;
            }
        }
    }
    rs_source_groups_clear(&sg);
    return ok;
}
