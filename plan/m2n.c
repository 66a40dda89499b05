/* m2n.c — NCCL M2N's reshard (NVIDIA/nccl-extensions, nccl_m2n), as the strategies `m2n`
 * (its hierarchical path: NCCL_RESHARD_LB_MODE=NODE_AWARE, the published "--algorithm ring
 * --lb-mode node") and `m2n-direct` (its direct point-to-point path, "--algorithm direct
 * --lb-mode uniform").
 *
 * M2N's tensors are 2-D meshes (replica axis, shard axis) on each side, exactly one shard
 * axis (README "Placement"; src/reshard_mesh.cc computeMeshGroupInfo). Here a source
 * replica is a holder of a distinct source box (rs_source_groups_build), a destination
 * shard is a distinct destination box and its replicas the ranks holding it, in rank
 * order. The rules, each from nccl_m2n/src/reshard_loadbalance.cc and reshard_prepare.cc:
 *  - UNIFORM (getSourceRepForDest, UNIFORM branch): destination replica r of R is served by
 *    one source replica of K: K == R: r; K > R: the first of r's block of K/R (the extra
 *    K mod R blocks one longer); K < R: blocks of R/K destination replicas per source
 *    replica, the first R mod K blocks one longer. Every destination rank then receives
 *    its shard straight from that replica's shards (prepareDirectReshardParams).
 *  - NODE_AWARE (getTargetRepRange, getSourceRepForDest, NODE_AWARE branch): destination
 *    replicas are grouped by NVLink domain ("node" = rank / dstGpusPerDomain, the NCCL
 *    DevComm's LSA team size: src/m2n_config.cc resolveReshardDomainSizes); with K >=
 *    domains, source replica i serves domain i; else each serves a block of consecutive
 *    domains (the first domains mod K blocks one longer). In the first domain of a block,
 *    the source shards overlapping a destination shard are split over that shard's local
 *    replicas in blocks (prepareReshardParams, "Distribute sources across local reps";
 *    collapsed to the fewest local replicas any domain of the chain has), so each local
 *    replica is the leader of some source shards; a leader forwards what it received to
 *    the other replicas of its domain over NVLink (its local followers) and to the leader
 *    of the same local index in the next domain of the block ("A ring hop connects the
 *    leader at localRepIdx i on one NVL domain to the leader at the same localRepIdx on
 *    the next domain in the chain", reshardPlanHasCrossRailRingHop): a linear chain.
 *  - One ncclReshard call per tensor (README "Model transfer": one transfer descriptor per
 *    parameter, expert weights grouped into one 3-D tensor per layer), every rank of the
 *    communicator in each call ("every rank in comm ... must call the same reshard
 *    operation in the same collective order"); the benchmark's communicator per pipeline
 *    stage pair runs its calls one after another on its stream while the stages' streams
 *    run side by side, pattern group by pattern group (benchmarks/reshard_model_bench.cu:
 *    patternGroups keyed by the name with layers.N -> layers.X, in std::map order; each
 *    group's transfers launched, then every stream synchronised). Each call is one phase
 *    here: phase = (pattern group, k-th call of the group on its stage), so the k-th calls
 *    of every stage share a phase and phases run one after another.
 * Pack: the PACK transport (README "Tuning", NCCL_RESHARD_COPY_ALGORITHM=PACK, the
 * default) copies each piece into and out of staging slots with the copy engines
 * (RS_PACK_COPY_ENGINE; the pool NCCL_RESHARD_PACK_BUFFSIZES = 2147483648:4, 4 slots of
 * 2 GiB: src/reshard_internal.h kDefaultStagingBucketBytes, kDefaultStagingBucketSlots).
 * Not modelled: the kernel's 8 CTAs (src/reshard_limits.h DEFAULT_NUM_CTAS) and the RING
 * path's 256 KiB chunks (CHUNK_SIZE_BYTES) set how fast one call moves its bytes on the
 * real machine; here a call's messages go at the links' rates, and relays pipeline at the
 * flow model's chunk size; the staging bound stays the planner's (every M2N call here is
 * below 2 GiB per rank pair on the shipped scenarios).
 * M2N needs disjoint source and destination ranks (README "Preconditions"); a destination
 * rank that holds part of its shard as a source here keeps it by a local copy and takes
 * the rest by the UNIFORM rule, outside the chains.
 */
#include "plan/plan-private.h"

#include <string.h>

/* getSourceRepForDest, UNIFORM: the source replica (of @k) serving destination replica
 * @r (of @n). */
static guint
uniform_source_rep(guint k, guint n, guint r)
{
    if (k > n) {
        guint per = k / n, extra = k % n;
        return r < extra ? r * (per + 1) : extra * (per + 1) + (r - extra) * per;
    }
    if (k == n)
        return r;
    guint per = n / k, extra = n % k;
    guint threshold = extra * (per + 1);
    return r < threshold ? r / (per + 1) : extra + (r - threshold) / per;
}

/* getTargetRepRange, NODE_AWARE (non-strided): the domains [first, last] (indices into the
 * destination shard's domain list of @n_domains) source replica @i of @k serves; FALSE
 * when it serves none. */
static gboolean
node_aware_domains(guint k, guint n_domains, guint i, guint *first, guint *last)
{
    if (k >= n_domains) {
        if (i >= n_domains)
            return FALSE;
        *first = *last = i;
        return TRUE;
    }
    guint per = n_domains / k, extra = n_domains % k;
    if (i < extra) {
        *first = i * (per + 1);
        *last = *first + per;
    } else {
        *first = extra * (per + 1) + (i - extra) * per;
        *last = *first + per - 1;
    }
    return TRUE;
}

/* The block of @n items over @slots that item @pos falls in ("sourcesPerRep",
 * "extraSources" of prepareReshardParams). */
static guint
block_slot(guint pos, guint n, guint slots)
{
    guint per = n / slots, extra = n % slots;
    guint threshold = extra * (per + 1);
    guint s = per == 0 ? pos : pos < threshold ? pos / (per + 1) : extra + (pos - threshold) / per;
    return MIN(s, slots - 1);
}

/* Emits what destination rank @rank (replica @r of @n_reps of its shard) still needs,
 * @remaining, from the UNIFORM source replica of each source group. */
static gboolean
emit_uniform(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx, RsSourceGroups *sg,
             guint32 rank, guint r, guint n_reps, guint32 phase, GArray *remaining, GError **error)
{
    for (guint g = 0; g < sg->groups->len && remaining->len > 0; g++) {
        RsSourceGroup *group = &g_array_index(sg->groups, RsSourceGroup, g);
        gboolean used = FALSE;
        guint rep = uniform_source_rep(group->n_holders, n_reps, r);
        guint32 src = g_array_index(sg->holders, guint32, group->first_holder + rep);
        for (guint i = 0; i < remaining->len; i++) {
            RsBox inter;
            if (!rs_box_intersect(&g_array_index(remaining, RsBox, i), &group->box, &inter))
                continue;
            rs_plan_builder_emit_split(b, t, tensor_idx, src, rank, phase, 0, NULL, &inter, NULL);
            used = TRUE;
        }
        if (used)
            rs_box_list_subtract(remaining, &group->box);
    }
    if (remaining->len > 0) {
        rs_plan_set_uncovered_error(error, t, rank, &g_array_index(remaining, RsBox, 0));
        return FALSE;
    }
    return TRUE;
}

/* A destination shard's replicas that take part in the chains, grouped by NVLink domain in
 * order of first appearance. */
typedef struct {
    GArray *reps;          /* guint32 ranks, rank order */
    GArray *domain_of_rep; /* guint: index into the domain list */
    GArray *domain_first;  /* guint: first rep index of each domain (reps are grouped) */
    GArray *domain_count;  /* guint */
} ChainReps;

static void
chain_reps_init(ChainReps *c)
{
    c->reps = g_array_new(FALSE, FALSE, sizeof(guint32));
    c->domain_of_rep = g_array_new(FALSE, FALSE, sizeof(guint));
    c->domain_first = g_array_new(FALSE, FALSE, sizeof(guint));
    c->domain_count = g_array_new(FALSE, FALSE, sizeof(guint));
}

static void
chain_reps_clear(ChainReps *c)
{
    g_array_unref(c->reps);
    g_array_unref(c->domain_of_rep);
    g_array_unref(c->domain_first);
    g_array_unref(c->domain_count);
}

/* Fills @c from @ranks (ascending) by domain; the replicas of one domain are contiguous
 * after a stable sort by domain. */
static void
chain_reps_build(ChainReps *c, const RsTopology *topo, const guint32 *ranks, guint n)
{
    g_array_set_size(c->reps, 0);
    g_array_set_size(c->domain_of_rep, 0);
    g_array_set_size(c->domain_first, 0);
    g_array_set_size(c->domain_count, 0);
    g_autofree guint *dom = g_new(guint, n);
    g_autofree gboolean *taken = g_new0(gboolean, n);
    for (guint i = 0; i < n; i++)
        dom[i] = rs_topology_get_nvlink_domain(topo, ranks[i]);
    for (guint i = 0; i < n; i++) {
        if (taken[i])
            continue;
        guint di = c->domain_first->len;
        guint first = c->reps->len, count = 0;
        for (guint j = i; j < n; j++) {
            if (taken[j] || dom[j] != dom[i])
                continue;
            taken[j] = TRUE;
            g_array_append_val(c->reps, ranks[j]);
            g_array_append_val(c->domain_of_rep, di);
            count++;
        }
        g_array_append_val(c->domain_first, first);
        g_array_append_val(c->domain_count, count);
    }
}

/* Emits the transfers of tensor @t in phase @phase: M2N's hierarchical path when
 * @node_aware, else its direct one. */
static gboolean
m2n_tensor(RsPlanBuilder *b, const RsRefitTensor *t, guint32 tensor_idx, const RsTopology *topo,
           gboolean node_aware, guint32 phase, GError **error)
{
    RsSourceGroups sg, dg;
    rs_source_groups_build(&sg, t->src);
    rs_source_groups_build(&dg, t->dst);
    gboolean ok = TRUE;
    g_autoptr(GArray) remaining = g_array_new(FALSE, FALSE, sizeof(RsBox));
    g_autoptr(GArray) chain_ranks = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_autoptr(GArray) prev = g_array_new(FALSE, FALSE, sizeof(gint64));
    g_autoptr(GArray) cur = g_array_new(FALSE, FALSE, sizeof(gint64));
    ChainReps cr;
    chain_reps_init(&cr);
    for (guint d = 0; ok && d < dg.groups->len; d++) {
        const RsSourceGroup *dshard = &g_array_index(dg.groups, RsSourceGroup, d);
        const guint32 *reps = &g_array_index(dg.holders, guint32, dshard->first_holder);
        guint n_reps = dshard->n_holders;
        g_array_set_size(chain_ranks, 0);
        /* Replicas holding part of the shard themselves keep it and take the rest as
         * M2N's UNIFORM path would; the others form the chains (NODE_AWARE) or follow
         * UNIFORM too (direct). */
        for (guint r = 0; ok && r < n_reps; r++) {
            gint src_idx = rs_layout_find_rank(t->src, reps[r]);
            rs_plan_builder_emit_own(b, t, tensor_idx, reps[r], src_idx, &dshard->box, remaining);
            gboolean holds_part = remaining->len != 1 ||
                                  !rs_box_is_equal(&g_array_index(remaining, RsBox, 0),
                                                   &dshard->box);
            if (node_aware && !holds_part && remaining->len > 0)
                g_array_append_val(chain_ranks, reps[r]);
            else if (remaining->len > 0)
                ok = emit_uniform(b, t, tensor_idx, &sg, reps[r], r, n_reps, phase, remaining,
                                  error);
        }
        if (!ok || chain_ranks->len == 0)
            continue;
        chain_reps_build(&cr, topo, (const guint32 *)chain_ranks->data, chain_ranks->len);
        guint n_domains = cr.domain_first->len;
        /* The source shards overlapping this destination shard, in group order. */
        g_autoptr(GArray) overlapping = g_array_new(FALSE, FALSE, sizeof(guint));
        g_autoptr(GArray) covered = g_array_new(FALSE, FALSE, sizeof(RsBox));
        g_array_append_val(covered, dshard->box);
        for (guint g = 0; g < sg.groups->len; g++) {
            RsBox inter;
            if (rs_box_intersect(&g_array_index(sg.groups, RsSourceGroup, g).box, &dshard->box,
                                 &inter)) {
                g_array_append_val(overlapping, g);
                rs_box_list_subtract(covered, &inter);
            }
        }
        if (covered->len > 0) {
            rs_plan_set_uncovered_error(error, t, g_array_index(chain_ranks, guint32, 0),
                                        &g_array_index(covered, RsBox, 0));
            ok = FALSE;
            break;
        }
        for (guint o = 0; o < overlapping->len; o++) {
            const RsSourceGroup *group =
                &g_array_index(sg.groups, RsSourceGroup, g_array_index(overlapping, guint, o));
            RsBox piece;
            rs_box_intersect(&group->box, &dshard->box, &piece);
            for (guint i = 0; i < group->n_holders; i++) {
                guint first, last;
                if (!node_aware_domains(group->n_holders, n_domains, i, &first, &last))
                    continue;
                guint slots = G_MAXUINT;
                for (guint dm = first; dm <= last; dm++)
                    slots = MIN(slots, g_array_index(cr.domain_count, guint, dm));
                guint slot = block_slot(o, overlapping->len, slots);
                guint32 sender = g_array_index(sg.holders, guint32, group->first_holder + i);
                guint32 flags = 0;
                g_array_set_size(prev, 0);
                for (guint dm = first; dm <= last; dm++) {
                    guint base = g_array_index(cr.domain_first, guint, dm);
                    guint count = g_array_index(cr.domain_count, guint, dm);
                    guint32 leader = g_array_index(cr.reps, guint32, base + slot);
                    g_array_set_size(cur, 0);
                    rs_plan_builder_emit_split(b, t, tensor_idx, sender, leader, phase, flags,
                                               prev->len ? (const gint64 *)prev->data : NULL,
                                               &piece, cur);
                    /* The leader's local followers, over NVLink. */
                    for (guint f = 0; f < count; f++) {
                        guint32 follower = g_array_index(cr.reps, guint32, base + f);
                        if (follower != leader)
                            rs_plan_builder_emit_split(b, t, tensor_idx, leader, follower, phase,
                                                       RS_TRANSFER_FROM_DESTINATION,
                                                       (const gint64 *)cur->data, &piece, NULL);
                    }
                    sender = leader;
                    flags = RS_TRANSFER_FROM_DESTINATION;
                    g_array_set_size(prev, 0);
                    g_array_append_vals(prev, cur->data, cur->len);
                }
            }
        }
    }
    chain_reps_clear(&cr);
    rs_source_groups_clear(&sg);
    rs_source_groups_clear(&dg);
    return ok;
}

/* The pattern of a tensor name: every "layers.<digits>" becomes "layers.X"
 * (reshard_model_bench.cu, layerDigitRe). (transfer full) */
static char *
name_pattern(const char *name)
{
    GString *s = g_string_new(NULL);
    const char *p = name;
    while (*p) {
        if (strncmp(p, "layers.", 7) == 0 && g_ascii_isdigit(p[7])) {
            g_string_append(s, "layers.X");
            p += 7;
            while (g_ascii_isdigit(*p))
                p++;
        } else {
            g_string_append_c(s, *p++);
        }
    }
    return g_string_free(s, FALSE);
}

/* The lowest source rank of @t: its pipeline stage's communicator. */
static guint32
stage_key(const RsRefitTensor *t)
{
    guint32 k = G_MAXUINT32;
    for (guint i = 0; i < rs_layout_get_n_ranks(t->src); i++)
        k = MIN(k, rs_layout_get_rank(t->src, i));
    return k;
}

typedef struct {
    const char *pattern;
    guint32 stage;
    guint tensor;
} CallKey;

static gint
call_key_cmp(gconstpointer pa, gconstpointer pb)
{
    const CallKey *a = pa, *b = pb;
    gint c = strcmp(a->pattern, b->pattern);
    if (c != 0)
        return c;
    if (a->stage != b->stage)
        return a->stage < b->stage ? -1 : 1;
    return a->tensor < b->tensor ? -1 : a->tensor > b->tensor;
}

void
rs_plan_m2n_call_phases(const RsRefit *refit, guint32 *phase_out)
{
    guint n = rs_refit_get_n_tensors(refit);
    g_autoptr(GPtrArray) patterns = g_ptr_array_new_with_free_func(g_free);
    g_autofree CallKey *keys = g_new(CallKey, n);
    for (guint i = 0; i < n; i++) {
        const RsRefitTensor *t = rs_refit_get_tensor(refit, i);
        char *p = name_pattern(t->name);
        g_ptr_array_add(patterns, p);
        keys[i] = (CallKey){p, stage_key(t), i};
    }
    qsort(keys, n, sizeof *keys, (int (*)(const void *, const void *))call_key_cmp);
    /* Within a pattern group, the k-th call of each stage shares phase base + k; the next
     * group starts after the group's longest stage. */
    guint32 base = 0;
    for (guint i = 0; i < n;) {
        guint j = i;
        guint32 longest = 0;
        while (j < n && strcmp(keys[j].pattern, keys[i].pattern) == 0) {
            guint s = j;
            guint32 k = 0;
            while (s < n && strcmp(keys[s].pattern, keys[i].pattern) == 0 &&
                   keys[s].stage == keys[j].stage)
                phase_out[keys[s++].tensor] = base + k++;
            longest = MAX(longest, k);
            j = s;
        }
        base += longest;
        i = j;
    }
}

gboolean
rs_plan_m2n_build(RsPlanBuilder *b, const RsRefit *refit, const RsTopology *topo,
                  gboolean node_aware, GError **error)
{
    /* The PACK transport copies each piece into (out of) its staging slots with
     * cudaMemcpyAsync on the copy engines (README "Tuning": NCCL_RESHARD_COPY_ALGORITHM=PACK
     * default; NCCL_RESHARD_PACK_BUFFSIZES 2147483648:4, reshard_internal.h
     * kDefaultStagingBucketBytes, kDefaultStagingBucketSlots), and every call ends for the
     * whole communicator before the next (one phase per call). */
    b->pack_method = RS_PACK_COPY_ENGINE;
    b->round_sync = RS_ROUND_SYNC_WORLD_BARRIER;
    guint n = rs_refit_get_n_tensors(refit);
    g_autofree guint32 *phase = g_new0(guint32, MAX(n, 1));
    rs_plan_m2n_call_phases(refit, phase);
    for (guint i = 0; i < n; i++)
        if (!m2n_tensor(b, rs_refit_get_tensor(refit, i), i, topo, node_aware, phase[i], error))
            return FALSE;
    return TRUE;
}
