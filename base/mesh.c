/* mesh.c — device meshes (row-major arrays of global ranks) and placement strings. */
#include "base/mesh.h"

#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-mesh-error-quark, rs_mesh_error)
/* clang-format on */

struct _RsMesh {
    guint n_dims;
    guint sizes[RS_MAX_MESH_DIMS];
    char *names[RS_MAX_MESH_DIMS];
    guint n_ranks;
    guint32 *ranks;
};

RsMesh *
rs_mesh_new(guint n_dims, const guint *sizes, const char *const *names, const guint32 *ranks,
            guint n_ranks, GError **error)
{
    if (n_dims < 1 || n_dims > RS_MAX_MESH_DIMS) {
        g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID,
                    "a mesh has 1 to %d dims, not %u", RS_MAX_MESH_DIMS, n_dims);
        return NULL;
    }
    guint64 total = 1;
    for (guint d = 0; d < n_dims; d++) {
        if (sizes[d] == 0) {
            g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID,
                        "mesh dim %u has size 0", d);
            return NULL;
        }
        total *= sizes[d];
        if (total > RS_MAX_RANKS) {
            g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID,
                        "mesh has more than %u positions, the limit (RS_MAX_RANKS)",
                        RS_MAX_RANKS);
            return NULL;
        }
    }
    if (ranks != NULL && n_ranks != total) {
        g_autoptr(GString) shape = g_string_new(NULL);
        for (guint d = 0; d < n_dims; d++)
            g_string_append_printf(shape, "%s%u", d ? "," : "", sizes[d]);
        g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID,
                    "mesh [%s] has %" G_GUINT64_FORMAT " positions but %u ranks were given",
                    shape->str, total, n_ranks);
        return NULL;
    }
    if (ranks != NULL) {
        g_autoptr(GHashTable) seen = g_hash_table_new(g_direct_hash, g_direct_equal);
        for (guint i = 0; i < n_ranks; i++) {
            if (ranks[i] >= RS_MAX_RANKS) {
                g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID,
                            "rank %u is above the limit of %u GPUs (ranks 0-%u)", ranks[i],
                            RS_MAX_RANKS, RS_MAX_RANKS - 1);
                return NULL;
            }
            if (!g_hash_table_add(seen, GUINT_TO_POINTER(ranks[i] + 1))) {
                g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID,
                            "rank %u appears twice in the mesh", ranks[i]);
                return NULL;
            }
        }
    }
    RsMesh *mesh = g_new0(RsMesh, 1);
    mesh->n_dims = n_dims;
    for (guint d = 0; d < n_dims; d++) {
        mesh->sizes[d] = sizes[d];
        mesh->names[d] = names && names[d] ? g_strdup(names[d]) : g_strdup_printf("d%u", d);
    }
    mesh->n_ranks = (guint)total;
    mesh->ranks = g_new(guint32, total);
    for (guint i = 0; i < total; i++)
        mesh->ranks[i] = ranks ? ranks[i] : i;
    return mesh;
}

void
rs_mesh_free(RsMesh *mesh)
{
    if (mesh == NULL)
        return;
    for (guint d = 0; d < mesh->n_dims; d++)
        g_free(mesh->names[d]);
    g_free(mesh->ranks);
    g_free(mesh);
}

RsMesh *
rs_mesh_dup(const RsMesh *mesh)
{
    return rs_mesh_new(mesh->n_dims, mesh->sizes, (const char *const *)mesh->names, mesh->ranks,
                       mesh->n_ranks, NULL);
}

guint
rs_mesh_get_n_dims(const RsMesh *mesh)
{
    return mesh->n_dims;
}

guint
rs_mesh_get_size(const RsMesh *mesh, guint dim)
{
    g_return_val_if_fail(dim < mesh->n_dims, 0);
    return mesh->sizes[dim];
}

const char *
rs_mesh_get_dim_name(const RsMesh *mesh, guint dim)
{
    g_return_val_if_fail(dim < mesh->n_dims, NULL);
    return mesh->names[dim];
}

guint
rs_mesh_get_n_ranks(const RsMesh *mesh)
{
    return mesh->n_ranks;
}

guint32
rs_mesh_get_rank(const RsMesh *mesh, guint index)
{
    g_return_val_if_fail(index < mesh->n_ranks, 0);
    return mesh->ranks[index];
}

void
rs_mesh_get_coords(const RsMesh *mesh, guint index, guint *coords)
{
    for (gint d = (gint)mesh->n_dims - 1; d >= 0; d--) {
        coords[d] = index % mesh->sizes[d];
        index /= mesh->sizes[d];
    }
}

char *
rs_mesh_format(const RsMesh *mesh)
{
    GString *s = g_string_new("[");
    for (guint d = 0; d < mesh->n_dims; d++)
        g_string_append_printf(s, "%s%s=%u", d ? ", " : "", mesh->names[d], mesh->sizes[d]);
    g_autofree char *ranks = rs_ranks_format(mesh->ranks, mesh->n_ranks);
    g_string_append_printf(s, "] ranks %s", ranks);
    return g_string_free(s, FALSE);
}

gboolean
rs_ranks_parse(const char *text, GArray **ranks_out, GError **error)
{
    g_autoptr(GArray) ranks = g_array_new(FALSE, FALSE, sizeof(guint32));
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    guint64 n_total = 0;
    for (guint i = 0; items[i] != NULL; i++) {
        char *item = g_strstrip(items[i]);
        if (*item == '\0')
            goto bad;
        char *dash = strchr(item, '-');
        guint64 lo, hi;
        if (dash != NULL) {
            *dash = '\0';
            if (!g_ascii_string_to_unsigned(g_strstrip(item), 10, 0, G_MAXINT32, &lo, NULL) ||
                !g_ascii_string_to_unsigned(g_strstrip(dash + 1), 10, 0, G_MAXINT32, &hi, NULL))
                goto bad;
            if (hi < lo) {
                g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID,
                            "rank range \"%s\": %" G_GUINT64_FORMAT "-%" G_GUINT64_FORMAT
                            " ends before it starts",
                            text, lo, hi);
                return FALSE;
            }
        } else {
            if (!g_ascii_string_to_unsigned(item, 10, 0, G_MAXINT32, &lo, NULL))
                goto bad;
            hi = lo;
        }
        /* Bounded before anything is stored: a short text may name billions of ranks. */
        n_total += hi - lo + 1;
        if (hi >= RS_MAX_RANKS || n_total > RS_MAX_RANKS) {
            g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID,
                        "ranks \"%s\": %s, above the limit of %u GPUs (ranks 0-%u)", text,
                        hi >= RS_MAX_RANKS ? "names a rank" : "names more ranks", RS_MAX_RANKS,
                        RS_MAX_RANKS - 1);
            return FALSE;
        }
        for (guint64 r = lo; r <= hi; r++) {
            guint32 v = (guint32)r;
            g_array_append_val(ranks, v);
        }
    }
    *ranks_out = g_steal_pointer(&ranks);
    return TRUE;
bad:
    g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID,
                "ranks \"%s\": expected a list like 0-7 or 0,2,4 or 0-3,8-11", text);
    return FALSE;
}

char *
rs_ranks_format(const guint32 *ranks, guint n_ranks)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < n_ranks;) {
        guint j = i;
        while (j + 1 < n_ranks && ranks[j + 1] == ranks[j] + 1)
            j++;
        if (s->len > 0)
            g_string_append_c(s, ',');
        if (j == i)
            g_string_append_printf(s, "%u", ranks[i]);
        else
            g_string_append_printf(s, "%u-%u", ranks[i], ranks[j]);
        i = j + 1;
    }
    return g_string_free(s, FALSE);
}

RsMesh *
rs_mesh_parse(const char *shape, const char *ranks_text, GError **error)
{
    g_auto(GStrv) parts = g_strsplit_set(shape, "x,", -1);
    guint sizes[RS_MAX_MESH_DIMS];
    guint n_dims = 0;
    for (guint i = 0; parts[i] != NULL; i++) {
        guint64 v;
        if (n_dims == RS_MAX_MESH_DIMS ||
            !g_ascii_string_to_unsigned(g_strstrip(parts[i]), 10, 1, G_MAXINT32, &v, NULL)) {
            g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_INVALID,
                        "mesh \"%s\": expected 1 to %d positive sizes like 2x4", shape,
                        RS_MAX_MESH_DIMS);
            return NULL;
        }
        sizes[n_dims++] = (guint)v;
    }
    g_autoptr(GArray) ranks = NULL;
    if (ranks_text != NULL && !rs_ranks_parse(ranks_text, &ranks, error))
        return NULL;
    return rs_mesh_new(n_dims, sizes, NULL, ranks ? (const guint32 *)ranks->data : NULL,
                       ranks ? ranks->len : 0, error);
}

/* Reads an integer argument, optionally spelled "key=value" with one of @keys. */
static gboolean
parse_int_arg(char *arg, const char *const *keys, gint64 min, gint64 max, gint *out)
{
    arg = g_strstrip(arg);
    for (guint i = 0; keys != NULL && keys[i] != NULL; i++) {
        gsize len = strlen(keys[i]);
        if (strncmp(arg, keys[i], len) != 0)
            continue;
        char *rest = arg + len;
        while (g_ascii_isspace(*rest))
            rest++;
        if (*rest != '=')
            continue;
        arg = g_strstrip(rest + 1);
        break;
    }
    gint64 v;
    if (!g_ascii_string_to_signed(arg, 10, min, max, &v, NULL))
        return FALSE;
    *out = (gint)v;
    return TRUE;
}

/* Parses one placement item such as "S(0)", "Shard(dim=1)", "R", "Replicate()",
 * "SS(0,2)", "_StridedShard(dim=0, split_factor=2)". */
static gboolean
parse_placement(const char *item, RsPlacement *out)
{
    g_autofree char *s = g_strdup(item);
    g_strstrip(s);
    char *open = strchr(s, '(');
    char *arg = NULL;
    if (open != NULL) {
        char *close = strrchr(s, ')');
        if (close == NULL || close < open || close[1] != '\0')
            return FALSE;
        *close = '\0';
        *open = '\0';
        arg = g_strstrip(open + 1);
        g_strstrip(s);
    }
    if (strcmp(s, "R") == 0 || strcmp(s, "Replicate") == 0) {
        if (arg != NULL && *arg != '\0')
            return FALSE;
        *out = (RsPlacement){RS_PLACEMENT_REPLICATE, 0, 0};
        return TRUE;
    }
    if (strcmp(s, "P") == 0 || strcmp(s, "Partial") == 0) {
        *out = (RsPlacement){RS_PLACEMENT_PARTIAL, 0, 0};
        return TRUE;
    }
    static const char *const dim_keys[] = {"dim", NULL};
    if (strcmp(s, "S") == 0 || strcmp(s, "Shard") == 0) {
        gint dim;
        if (arg == NULL || !parse_int_arg(arg, dim_keys, -RS_MAX_DIMS, RS_MAX_DIMS - 1, &dim))
            return FALSE;
        *out = (RsPlacement){RS_PLACEMENT_SHARD, dim, 0};
        return TRUE;
    }
    if (strcmp(s, "SS") == 0 || strcmp(s, "_S") == 0 || strcmp(s, "StridedShard") == 0 ||
        strcmp(s, "_StridedShard") == 0) {
        static const char *const factor_keys[] = {"split_factor", "sf", NULL};
        if (arg == NULL)
            return FALSE;
        g_auto(GStrv) args = g_strsplit(arg, ",", -1);
        gint dim, factor;
        if (g_strv_length(args) != 2 ||
            !parse_int_arg(args[0], dim_keys, -RS_MAX_DIMS, RS_MAX_DIMS - 1, &dim) ||
            !parse_int_arg(args[1], factor_keys, 1, G_MAXINT32, &factor))
            return FALSE;
        *out = (RsPlacement){RS_PLACEMENT_STRIDED_SHARD, dim, factor};
        return TRUE;
    }
    return FALSE;
}

gboolean
rs_placements_parse(const char *text, RsPlacement *placements, guint *n_placements_out,
                    GError **error)
{
    /* The tuple PyTorch prints, "(Shard(dim=0), Replicate())", or a list in brackets: the
     * outer pair is dropped when it encloses the whole text, and one trailing comma inside
     * it is allowed ("(Shard(dim=0),)", Python's one-tuple). */
    g_autofree char *body = g_strstrip(g_strdup(text));
    gsize len = strlen(body);
    if (len >= 2 && ((body[0] == '(' && body[len - 1] == ')') ||
                     (body[0] == '[' && body[len - 1] == ']'))) {
        int d = 0;
        gsize close = 0;
        for (gsize i = 0; i < len; i++) {
            if (body[i] == '(' || body[i] == '[')
                d++;
            else if ((body[i] == ')' || body[i] == ']') && --d == 0) {
                close = i;
                break;
            }
        }
        if (close == len - 1) {
            body[len - 1] = '\0';
            memmove(body, body + 1, len - 1);
            g_strstrip(body);
            gsize blen = strlen(body);
            if (blen > 0 && body[blen - 1] == ',')
                body[blen - 1] = '\0';
        }
    }
    /* Split on commas that are not inside parentheses. */
    guint n = 0;
    const char *start = body;
    int depth = 0;
    for (const char *p = body;; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')')
            depth--;
        if ((*p == ',' && depth == 0) || *p == '\0') {
            g_autofree char *item = g_strndup(start, (gsize)(p - start));
            if (n == RS_MAX_MESH_DIMS || !parse_placement(item, &placements[n])) {
                g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_PLACEMENT,
                            "placements \"%s\": \"%s\" is not R, S(dim), SS(dim,split_factor) or P "
                            "(at most %d items)",
                            text, g_strstrip(item), RS_MAX_MESH_DIMS);
                return FALSE;
            }
            n++;
            if (*p == '\0')
                break;
            start = p + 1;
        }
    }
    *n_placements_out = n;
    return TRUE;
}

gboolean
rs_placements_normalize(RsPlacement *placements, guint n_placements, guint n_dims,
                        GError **error)
{
    for (guint m = 0; m < n_placements; m++) {
        RsPlacement *p = &placements[m];
        if ((p->kind != RS_PLACEMENT_SHARD && p->kind != RS_PLACEMENT_STRIDED_SHARD) ||
            p->dim >= 0)
            continue;
        if (p->dim + (gint)n_dims < 0) {
            g_set_error(error, RS_MESH_ERROR, RS_MESH_ERROR_PLACEMENT,
                        "placement %u: dim %d of a %u-dim tensor (negative dims count from the "
                        "last, -1 to -%u)",
                        m, p->dim, n_dims, n_dims);
            return FALSE;
        }
        p->dim += (gint)n_dims;
    }
    return TRUE;
}

char *
rs_placements_format(const RsPlacement *placements, guint n_placements)
{
    GString *s = g_string_new(NULL);
    for (guint i = 0; i < n_placements; i++) {
        if (i)
            g_string_append_c(s, ',');
        switch (placements[i].kind) {
        case RS_PLACEMENT_REPLICATE:
            g_string_append(s, "R");
            break;
        case RS_PLACEMENT_SHARD:
            g_string_append_printf(s, "S(%d)", placements[i].dim);
            break;
        case RS_PLACEMENT_PARTIAL:
            g_string_append(s, "P");
            break;
        case RS_PLACEMENT_STRIDED_SHARD:
            g_string_append_printf(s, "SS(%d,%d)", placements[i].dim, placements[i].split_factor);
            break;
        }
    }
    return g_string_free(s, FALSE);
}
