/* test-plan.c — the planner against a brute-force reference on random layouts, the
 * gather-broadcast closed form, and legitimate duplicates (CASES.md C11).
 *
 * The reference never uses boxes: it resolves a DTensor layout by chunking explicit index
 * lists as torch.chunk does, marks element by element who holds what, and replays every
 * transfer of a plan element by element. */
#include "sim/layout.h"
#include "sim/plan.h"

#include <string.h>

#define MAX_REF_ELEMS 4096

/* --- reference layouts --- */

typedef struct {
    guint n_dims;
    gint64 shape[RS_MAX_DIMS];
    guint64 n_elems;
    guint n_ranks;
    guint32 ranks[64];
    gboolean *holds[64]; /* per rank, per flat element */
} RefLayout;

/* torch.chunk(list, k)[c] of the list [lo, lo + len): the sub-range, possibly empty. */
static void
ref_chunk(const gint64 *list, gint64 len, gint64 k, gint64 c, gint64 *out, gint64 *out_len)
{
    gint64 chunk = (len + k - 1) / k;
    gint64 n = 0;
    for (gint64 i = c * chunk; i < (c + 1) * chunk && i < len; i++)
        out[n++] = list[i];
    *out_len = n;
}

static RefLayout *
ref_layout_new(guint n_dims, const gint64 *shape, guint n_mesh_dims, const guint *mesh_sizes,
               const guint32 *ranks, const RsPlacement *placements)
{
    RefLayout *ref = g_new0(RefLayout, 1);
    ref->n_dims = n_dims;
    ref->n_elems = 1;
    for (guint d = 0; d < n_dims; d++) {
        ref->shape[d] = shape[d];
        ref->n_elems *= (guint64)shape[d];
    }
    guint n = 1;
    for (guint m = 0; m < n_mesh_dims; m++)
        n *= mesh_sizes[m];
    ref->n_ranks = n;
    for (guint i = 0; i < n; i++) {
        ref->ranks[i] = ranks[i];
        guint coords[RS_MAX_DIMS];
        guint rest = i;
        for (gint m = (gint)n_mesh_dims - 1; m >= 0; m--) {
            coords[m] = rest % mesh_sizes[m];
            rest /= mesh_sizes[m];
        }
        gint64 idx[RS_MAX_DIMS][64], len[RS_MAX_DIMS];
        for (guint d = 0; d < n_dims; d++) {
            len[d] = shape[d];
            for (gint64 j = 0; j < shape[d]; j++)
                idx[d][j] = j;
        }
        for (guint m = 0; m < n_mesh_dims; m++) {
            if (placements[m].kind != RS_PLACEMENT_SHARD)
                continue;
            guint d = (guint)placements[m].dim;
            gint64 tmp[64], tmp_len;
            ref_chunk(idx[d], len[d], mesh_sizes[m], coords[m], tmp, &tmp_len);
            memcpy(idx[d], tmp, (gsize)tmp_len * sizeof(gint64));
            len[d] = tmp_len;
        }
        ref->holds[i] = g_new0(gboolean, MAX(ref->n_elems, 1));
        /* Mark the cartesian product of the index lists. */
        gint64 pos[RS_MAX_DIMS] = {0};
        gboolean any = TRUE;
        for (guint d = 0; d < n_dims; d++)
            any = any && len[d] > 0;
        while (any) {
            guint64 flat = 0;
            for (guint d = 0; d < n_dims; d++)
                flat = flat * (guint64)shape[d] + (guint64)idx[d][pos[d]];
            ref->holds[i][flat] = TRUE;
            gint d = (gint)n_dims - 1;
            while (d >= 0 && ++pos[d] == len[d])
                pos[d--] = 0;
            any = d >= 0;
        }
    }
    return ref;
}

static void
ref_layout_free(RefLayout *ref)
{
    for (guint i = 0; i < ref->n_ranks; i++)
        g_free(ref->holds[i]);
    g_free(ref);
}

static const gboolean *
ref_holds(const RefLayout *ref, guint32 rank)
{
    for (guint i = 0; i < ref->n_ranks; i++)
        if (ref->ranks[i] == rank)
            return ref->holds[i];
    return NULL;
}

/* Calls @fn on every flat element of @box. */
static void
for_each_elem(const RsBox *box, const gint64 *shape, void (*fn)(guint64 flat, gpointer data),
              gpointer data)
{
    if (rs_box_is_empty(box))
        return;
    gint64 k[RS_MAX_DIMS] = {0};
    for (;;) {
        guint64 flat = 0;
        for (guint d = 0; d < box->n_dims; d++)
            flat = flat * (guint64)shape[d] + (guint64)rs_box_get_index(box, d, k[d]);
        fn(flat, data);
        gint d = (gint)box->n_dims - 1;
        while (d >= 0 && ++k[d] == rs_box_get_count(box, (guint)d)) {
            k[d] = 0;
            d--;
        }
        if (d < 0)
            return;
    }
}

/* --- element-level replay of a plan (one tensor) --- */

typedef struct {
    const RefLayout *src, *dst;
    GHashTable *staging;   /* rank → gboolean[] of elements in its staging buffer */
    GHashTable *received;  /* rank → guint[] delivery count per element */
    const gboolean *check; /* array a transfer's elements must all be TRUE in */
    gboolean *mark;        /* array to set */
    guint *count;          /* array to increment */
    gboolean ok;
    guint64 n_elems;
} Replay;

static void
visit(guint64 flat, gpointer data)
{
    Replay *r = data;
    if (r->check != NULL && !r->check[flat])
        r->ok = FALSE;
    if (r->mark != NULL)
        r->mark[flat] = TRUE;
    if (r->count != NULL)
        r->count[flat]++;
}

static gpointer
table_array(GHashTable *t, guint32 rank, gsize elem_size, guint64 n)
{
    gpointer a = g_hash_table_lookup(t, GUINT_TO_POINTER(rank + 1));
    if (a == NULL) {
        a = g_malloc0(elem_size * MAX(n, 1));
        g_hash_table_insert(t, GUINT_TO_POINTER(rank + 1), a);
    }
    return a;
}

/* Replays @plan for its single tensor; returns a message on failure. */
static char *
replay_plan(const RsPlan *plan, const RefLayout *src, const RefLayout *dst, guint elem_bytes,
            gboolean expect_minimal)
{
    Replay r = {src, dst, g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free),
                g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, g_free), NULL, NULL,
                NULL, TRUE, src->n_elems};
    char *failure = NULL;
    guint n = rs_plan_get_n_transfers(plan);
    g_autofree gboolean *done = g_new0(gboolean, n);
    guint n_done = 0;
    for (guint phase = 0; phase < rs_plan_get_n_phases(plan) && failure == NULL; phase++) {
        /* Relays: repeat until every transfer of the phase whose dependency is done ran. */
        gboolean progress = TRUE;
        while (progress && failure == NULL) {
            progress = FALSE;
            for (guint i = 0; i < n && failure == NULL; i++) {
                const RsTransfer *tr = rs_plan_get_transfer(plan, i);
                if (done[i] || tr->phase != phase)
                    continue;
                if (tr->depends_on >= 0 && !done[tr->depends_on])
                    continue;
                r.check = (tr->flags & RS_TRANSFER_FROM_STAGING)
                              ? table_array(r.staging, tr->src, sizeof(gboolean), r.n_elems)
                              : ref_holds(src, tr->src);
                if (r.check == NULL) {
                    failure = g_strdup_printf("transfer %u: source %u holds nothing", i, tr->src);
                    break;
                }
                r.mark = NULL;
                r.count = NULL;
                if (tr->flags & RS_TRANSFER_TO_STAGING)
                    r.mark = table_array(r.staging, tr->dst, sizeof(gboolean), r.n_elems);
                else
                    r.count = table_array(r.received, tr->dst, sizeof(guint), r.n_elems);
                r.ok = TRUE;
                for_each_elem(&tr->box, src->shape, visit, &r);
                if (!r.ok)
                    failure = g_strdup_printf("transfer %u (%u -> %u): source lacks elements", i,
                                              tr->src, tr->dst);
                if (!(tr->flags & RS_TRANSFER_TO_STAGING) && tr->src != tr->dst) {
                    const gboolean *own = ref_holds(src, tr->dst);
                    Replay probe = r;
                    probe.check = NULL;
                    probe.mark = NULL;
                    probe.count = NULL;
                    if (own != NULL) {
                        /* A network delivery must not carry elements dst already holds. */
                        gboolean *inv = g_new0(gboolean, MAX(r.n_elems, 1));
                        for (guint64 e = 0; e < r.n_elems; e++)
                            inv[e] = !own[e];
                        probe.check = inv;
                        probe.ok = TRUE;
                        for_each_elem(&tr->box, src->shape, visit, &probe);
                        g_free(inv);
                        if (!probe.ok && failure == NULL)
                            failure = g_strdup_printf("transfer %u sends held elements", i);
                    }
                }
                done[i] = TRUE;
                n_done++;
                progress = TRUE;
            }
        }
    }
    if (failure == NULL && n_done != n)
        failure = g_strdup_printf("%u transfers never became ready", n - n_done);
    guint64 minimal_elems = 0;
    for (guint i = 0; failure == NULL && i < dst->n_ranks; i++) {
        guint32 rank = dst->ranks[i];
        const guint *count = g_hash_table_lookup(r.received, GUINT_TO_POINTER(rank + 1));
        const gboolean *own = ref_holds(src, rank);
        for (guint64 e = 0; e < dst->n_elems; e++) {
            guint expected = dst->holds[i][e] ? 1 : 0;
            guint got = count ? count[e] : 0;
            if (got != expected) {
                failure = g_strdup_printf("rank %u element %" G_GUINT64_FORMAT
                                          ": received %u times, expected %u",
                                          rank, e, got, expected);
                break;
            }
            if (dst->holds[i][e] && !(own && own[e]))
                minimal_elems++;
        }
    }
    if (failure == NULL && expect_minimal &&
        rs_plan_get_bytes_moved(plan) != minimal_elems * elem_bytes)
        failure = g_strdup_printf("moved %" G_GUINT64_FORMAT " bytes, minimum %" G_GUINT64_FORMAT,
                                  rs_plan_get_bytes_moved(plan), minimal_elems * elem_bytes);
    g_hash_table_unref(r.staging);
    g_hash_table_unref(r.received);
    return failure;
}

/* --- random cases --- */

typedef struct {
    guint n_mesh_dims;
    guint sizes[3];
    guint32 ranks[27];
    RsPlacement placements[3];
} RandomSide;

static void
random_side(GRand *rng, guint n_dims, guint32 *pool, guint pool_len, RandomSide *side)
{
    guint n;
    do {
        side->n_mesh_dims = (guint)g_rand_int_range(rng, 1, 4);
        n = 1;
        for (guint m = 0; m < side->n_mesh_dims; m++) {
            side->sizes[m] = (guint)g_rand_int_range(rng, 1, 4);
            n *= side->sizes[m];
        }
    } while (n > pool_len);
    /* A random selection of n ranks from the pool, in random order. */
    for (guint i = 0; i < pool_len; i++) {
        guint j = (guint)g_rand_int_range(rng, (gint32)i, (gint32)pool_len);
        guint32 t = pool[i];
        pool[i] = pool[j];
        pool[j] = t;
    }
    memcpy(side->ranks, pool, n * sizeof(guint32));
    for (guint m = 0; m < side->n_mesh_dims; m++) {
        if (n_dims == 0 || g_rand_boolean(rng))
            side->placements[m] = (RsPlacement){RS_PLACEMENT_REPLICATE, 0, 0};
        else
            side->placements[m] =
                (RsPlacement){RS_PLACEMENT_SHARD, g_rand_int_range(rng, 0, (gint32)n_dims), 0};
    }
}

static RsLayout *
side_layout(const RandomSide *side, guint n_dims, const gint64 *shape, RefLayout **ref_out)
{
    g_autoptr(GError) error = NULL;
    guint n = 1;
    for (guint m = 0; m < side->n_mesh_dims; m++)
        n *= side->sizes[m];
    g_autoptr(RsMesh) mesh =
        rs_mesh_new(side->n_mesh_dims, side->sizes, NULL, side->ranks, n, &error);
    g_assert_no_error(error);
    RsLayout *layout =
        rs_layout_new_dtensor(n_dims, shape, mesh, side->placements, side->n_mesh_dims, &error);
    g_assert_no_error(error);
    *ref_out = ref_layout_new(n_dims, shape, side->n_mesh_dims, side->sizes, side->ranks,
                              side->placements);
    return layout;
}

static void
test_random_cases(void)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(20261129);
    const guint n_cases = 1200;
    for (guint c = 0; c < n_cases; c++) {
        guint n_dims = (guint)g_rand_int_range(rng, 1, 5);
        gint64 shape[RS_MAX_DIMS];
        guint64 n_elems = 1;
        for (guint d = 0; d < n_dims; d++) {
            shape[d] = g_rand_int_range(rng, 1, n_dims > 2 ? 6 : 10);
            n_elems *= (guint64)shape[d];
        }
        g_assert_cmpuint(n_elems, <=, MAX_REF_ELEMS);
        /* Rank sets: disjoint (mode 0), drawn from one pool (overlapping or identical). */
        guint mode = c % 3;
        guint32 pool_a[12], pool_b[12];
        for (guint i = 0; i < 12; i++) {
            pool_a[i] = i;
            pool_b[i] = mode == 0 ? 100 + i : i;
        }
        RandomSide src_side, dst_side;
        random_side(rng, n_dims, pool_a, 12, &src_side);
        random_side(rng, n_dims, pool_b, 12, &dst_side);
        if (mode == 2) {
            /* Colocated: the same ranks in the same order. */
            guint n_src = 1, n_dst = 1;
            for (guint m = 0; m < src_side.n_mesh_dims; m++)
                n_src *= src_side.sizes[m];
            for (guint m = 0; m < dst_side.n_mesh_dims; m++)
                n_dst *= dst_side.sizes[m];
            if (n_src == n_dst)
                memcpy(dst_side.ranks, src_side.ranks, n_src * sizeof(guint32));
        }
        RefLayout *src_ref, *dst_ref;
        g_autoptr(RsLayout) src = side_layout(&src_side, n_dims, shape, &src_ref);
        g_autoptr(RsLayout) dst = side_layout(&dst_side, n_dims, shape, &dst_ref);
        g_autoptr(RsRefit) refit = rs_refit_new();
        g_autoptr(GError) error = NULL;
        RsDtype dtype = c % 2 ? RS_DTYPE_BF16 : RS_DTYPE_F32;
        g_assert_true(rs_refit_add_tensor(refit, "t", dtype, src, dst, &error));
        for (guint s = 0; s < RS_STRATEGY_N; s++) {
            g_autoptr(RsPlan) plan = rs_plan_build(refit, (RsStrategy)s, &error);
            g_assert_no_error(error);
            if (!rs_plan_check(plan, refit, &error))
                g_error("case %u %s: checker: %s", c, rs_strategy_get_name((RsStrategy)s),
                        error->message);
            g_autofree char *failure =
                replay_plan(plan, src_ref, dst_ref, rs_dtype_get_size_bytes(dtype),
                            s == RS_STRATEGY_DIRECT);
            if (failure != NULL) {
                g_autofree char *sl = rs_layout_format(src);
                g_autofree char *dl = rs_layout_format(dst);
                g_error("case %u %s (%s -> %s): %s", c, rs_strategy_get_name((RsStrategy)s), sl,
                        dl, failure);
            }
        }
        ref_layout_free(src_ref);
        ref_layout_free(dst_ref);
    }
}

/* The checker must reject wrong plans: tamper with a good one and expect failure. */
static void
test_checker_rejects(void)
{
    const gint64 shape[] = {8, 4};
    g_autoptr(GError) error = NULL;
    g_autoptr(RsMesh) src_mesh = rs_mesh_parse("2", "0,1", &error);
    g_autoptr(RsMesh) dst_mesh = rs_mesh_parse("4", "2-5", &error);
    RsPlacement s0 = {RS_PLACEMENT_SHARD, 0, 0};
    g_autoptr(RsLayout) src = rs_layout_new_dtensor(2, shape, src_mesh, &s0, 1, &error);
    g_autoptr(RsLayout) dst = rs_layout_new_dtensor(2, shape, dst_mesh, &s0, 1, &error);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "w", RS_DTYPE_F32, src, dst, &error));
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    g_assert_true(rs_plan_check(plan, refit, &error));
    g_assert_cmpuint(rs_plan_get_n_transfers(plan), ==, 4);
    /* Wrong source: rank 1 does not hold rows 0..1. */
    RsTransfer *tr = (RsTransfer *)rs_plan_get_transfer(plan, 0);
    RsTransfer saved = *tr;
    tr->src = 1;
    g_assert_false(rs_plan_check(plan, refit, &error));
    g_assert_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_INVALID);
    g_clear_error(&error);
    *tr = saved;
    /* Missing rows: shrink a box. */
    tr->box.hi[0] -= 1;
    tr->size_bytes -= 16;
    g_assert_false(rs_plan_check(plan, refit, &error));
    g_assert_error(error, RS_PLAN_ERROR, RS_PLAN_ERROR_INVALID);
    g_clear_error(&error);
    *tr = saved;
    g_assert_true(rs_plan_check(plan, refit, &error));
}

/* gather-broadcast moves Σ (bytes − bytes at the root) + (n_dst − [root ∈ dst]) · bytes. */
static void
test_gather_broadcast_closed_form(void)
{
    g_autoptr(GError) error = NULL;
    const gint64 shape_a[] = {12, 5}, shape_b[] = {7}, shape_c[] = {4, 3, 6};
    /* a: src S(0) over 4 ranks (root 0 holds 3 rows), dst 6 ranks S(1). */
    g_autoptr(RsMesh) src4 = rs_mesh_parse("4", "0-3", &error);
    g_autoptr(RsMesh) src22 = rs_mesh_parse("2x2", "0-3", &error);
    g_autoptr(RsMesh) dst6 = rs_mesh_parse("2x3", "10-15", &error);
    g_autoptr(RsMesh) dst_colo = rs_mesh_parse("3", "0,1,2", &error);
    RsPlacement s0 = {RS_PLACEMENT_SHARD, 0, 0}, s1 = {RS_PLACEMENT_SHARD, 1, 0},
                r = {RS_PLACEMENT_REPLICATE, 0, 0};
    RsPlacement dst_p[2] = {r, s1};
    RsPlacement src22_p[2] = {s0, r};
    g_autoptr(RsLayout) a_src = rs_layout_new_dtensor(2, shape_a, src4, &s0, 1, &error);
    g_autoptr(RsLayout) a_dst = rs_layout_new_dtensor(2, shape_a, dst6, dst_p, 2, &error);
    g_autoptr(RsLayout) b_src = rs_layout_new_dtensor(1, shape_b, src22, src22_p, 2, &error);
    g_autoptr(RsLayout) b_dst = rs_layout_new_dtensor(1, shape_b, dst_colo, &s0, 1, &error);
    g_autoptr(RsLayout) c_src = rs_layout_new_dtensor(3, shape_c, src4, &r, 1, &error);
    RsPlacement c_dst_p[2] = {s1, s0};
    g_autoptr(RsLayout) c_dst = rs_layout_new_dtensor(3, shape_c, dst6, c_dst_p, 2, &error);
    g_assert_no_error(error);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "a", RS_DTYPE_BF16, a_src, a_dst, &error));
    g_assert_true(rs_refit_add_tensor(refit, "b", RS_DTYPE_F32, b_src, b_dst, &error));
    g_assert_true(rs_refit_add_tensor(refit, "c", RS_DTYPE_BF16, c_src, c_dst, &error));
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_GATHER_BROADCAST, &error);
    g_assert_no_error(error);
    g_assert_true(rs_plan_check(plan, refit, &error));
    /* a: 60 elems bf16 = 120 B; root 0 holds 3 of 12 rows → gather 90 B; 6 dst → 720 B.
     * b: 7 f32 = 28 B; root 0 holds [0,4) (S(0) over mesh dim 0 of size 2) → gather 12 B;
     *    dst ranks 0,1,2 include the root → 2 · 28 = 56 B.
     * c: 72 bf16 = 144 B replicated, root holds all → 0; 6 dst → 864 B. */
    guint64 expected = (90 + 720) + (12 + 56) + (0 + 864);
    g_assert_cmpuint(rs_plan_get_bytes_moved(plan), ==, expected);
    g_assert_cmpuint(rs_plan_get_n_phases(plan), ==, 2);
}

/* C11: an embedding held by the first and the last PP stage is a legitimate duplicate;
 * exactly one replica sends it to the one inference rank: 64 bytes, not 128. */
static void
test_c11_legitimate_duplicate(void)
{
    g_autoptr(GError) error = NULL;
    const gint64 shape[] = {8, 4};
    const guint32 stages[] = {0, 12}, infer[] = {20};
    g_autoptr(RsLayout) src = rs_layout_new_replicated(2, shape, stages, 2);
    g_autoptr(RsLayout) dst = rs_layout_new_replicated(2, shape, infer, 1);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "model.embed_tokens.weight", RS_DTYPE_BF16, src, dst,
                                      &error));
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_plan_get_bytes_moved(plan), ==, 64);
    g_assert_cmpuint(rs_plan_get_n_transfers(plan), ==, 1);
    g_assert_true(rs_plan_check(plan, refit, &error));
}

/* Round-robin over replicas: 4 destinations of a tensor replicated on 2 sources take
 * replicas 0,1,0,1; messages coalesce per (src, dst). */
static void
test_direct_round_robin(void)
{
    g_autoptr(GError) error = NULL;
    const gint64 shape[] = {8, 2};
    const guint32 src_ranks[] = {0, 1};
    g_autoptr(RsLayout) src = rs_layout_new_replicated(2, shape, src_ranks, 2);
    g_autoptr(RsMesh) dst_mesh = rs_mesh_parse("4", "4-7", &error);
    RsPlacement s0 = {RS_PLACEMENT_SHARD, 0, 0};
    g_autoptr(RsLayout) dst = rs_layout_new_dtensor(2, shape, dst_mesh, &s0, 1, &error);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_true(rs_refit_add_tensor(refit, "x", RS_DTYPE_F32, src, dst, &error));
    g_assert_true(rs_refit_add_tensor(refit, "y", RS_DTYPE_F32, src, dst, &error));
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_plan_get_n_transfers(plan), ==, 8);
    g_assert_cmpuint(rs_plan_get_n_network_messages(plan), ==, 4);
    for (guint m = 0; m < rs_plan_get_n_messages(plan); m++) {
        const RsMessage *msg = rs_plan_get_message(plan, m);
        g_assert_cmpuint(msg->src, ==, (msg->dst - 4) % 2);
        g_assert_cmpuint(msg->n_transfers, ==, 2);
        g_assert_cmpuint(msg->size_bytes, ==, 2 * 2 * 2 * 4);
    }
}

static void
test_uncovered(void)
{
    g_autoptr(GError) error = NULL;
    const gint64 shape[] = {8};
    g_autoptr(RsMesh) src_mesh = rs_mesh_parse("2", "0,1", &error);
    RsPlacement s0 = {RS_PLACEMENT_SHARD, 0, 0};
    g_autoptr(RsLayout) full = rs_layout_new_dtensor(1, shape, src_mesh, &s0, 1, &error);
    /* A source layout of a different shape is refused up front. */
    const gint64 other[] = {9};
    const guint32 dst_ranks[] = {5};
    g_autoptr(RsLayout) dst = rs_layout_new_replicated(1, other, dst_ranks, 1);
    g_autoptr(RsRefit) refit = rs_refit_new();
    g_assert_false(rs_refit_add_tensor(refit, "z", RS_DTYPE_F32, full, dst, &error));
    g_assert_error(error, RS_REFIT_ERROR, RS_REFIT_ERROR_MISMATCH);
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/plan/random/1200-cases-vs-reference", test_random_cases);
    g_test_add_func("/plan/checker-rejects", test_checker_rejects);
    g_test_add_func("/plan/gather-broadcast/closed-form", test_gather_broadcast_closed_form);
    g_test_add_func("/plan/cases/C11-legitimate-duplicate", test_c11_legitimate_duplicate);
    g_test_add_func("/plan/direct/round-robin", test_direct_round_robin);
    g_test_add_func("/plan/shape-mismatch", test_uncovered);
    return g_test_run();
}
