/* mesh.h — device meshes and DTensor placements.
 *
 * A device mesh is an N-D array of global ranks with named dims, laid out row-major: the
 * flat index of coordinate (c0, c1, …) is c0·s1·s2·… + c1·s2·… + …, and flat index i holds
 * global rank ranks[i]. Global ranks are GPU indices in the cluster (topology), so the
 * training and inference meshes of one refit share one rank space.
 *
 * A placement per mesh dim says how the tensor is spread over that dim, as in PyTorch
 * DTensor (torch/distributed/tensor/placement_types.py): Replicate, Shard(d), Partial, and
 * _StridedShard(d, split_factor), the placement FSDP2 gives a parameter that tensor
 * parallelism already sharded on the same dim (see rs_layout_new_dtensor for its rule).
 */
#pragma once

#include <glib.h>

#include "base/box.h"

G_BEGIN_DECLS

#define RS_MAX_MESH_DIMS RS_MAX_DIMS

/* The most GPUs (global ranks) anything of reshard describes: a mesh's positions, a rank
 * list, a topology's GPUs, a convention's world. 2^18 = 262,144 is above the largest
 * training clusters built to date (about 200,000 GPUs, 2025), and keeps the per-rank
 * tables of a plan within a few GiB; a count from outside is checked against it before
 * anything proportional to it is allocated. Rank values are below it too. */
#define RS_MAX_RANKS (1u << 18)

#define RS_MESH_ERROR (rs_mesh_error_quark())
GQuark rs_mesh_error_quark(void);

typedef enum {
    RS_MESH_ERROR_INVALID,   /* sizes, ranks or names that do not form a mesh */
    RS_MESH_ERROR_PLACEMENT, /* a placement string that does not parse */
} RsMeshError;

typedef struct _RsMesh RsMesh;

/**
 * rs_mesh_new:
 * @n_dims: 1..RS_MAX_MESH_DIMS
 * @sizes: (array length=n_dims): size of each mesh dim, >= 1
 * @names: (array length=n_dims) (nullable): a name per dim ("dp", "tp"…); NULL names them
 *   "d0", "d1", …
 * @ranks: (array) (nullable): the global rank at each flat index, prod(@sizes) entries, no
 *   rank twice; NULL means 0..prod(@sizes)-1
 * @n_ranks: number of entries in @ranks (ignored when @ranks is NULL)
 * @error: RS_MESH_ERROR_INVALID when a size is 0, the product exceeds RS_MAX_RANKS, @n_ranks differs
 *   from the product ("mesh [2,4] has 8 positions but 6 ranks were given"), or a rank
 *   repeats
 *
 * Returns: (transfer full): the mesh, or NULL on error.
 */
RsMesh *rs_mesh_new(guint n_dims, const guint *sizes, const char *const *names,
                    const guint32 *ranks, guint n_ranks, GError **error);

/**
 * rs_mesh_parse:
 * @shape: "2x4" or "8" (sizes joined by 'x' or ',')
 * @ranks: (nullable): "0-7", "0,2,4,6", "0-3,8-11"; NULL is 0..N-1
 * @error: RS_MESH_ERROR_INVALID as rs_mesh_new(), or when the text does not parse
 *
 * Returns: (transfer full): the mesh, dims named "d0", "d1", …; NULL on error.
 */
RsMesh *rs_mesh_parse(const char *shape, const char *ranks, GError **error);

void rs_mesh_free(RsMesh *mesh);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsMesh, rs_mesh_free)

/** rs_mesh_dup: Returns: (transfer full): a copy of @mesh. */
RsMesh *rs_mesh_dup(const RsMesh *mesh);

guint rs_mesh_get_n_dims(const RsMesh *mesh);
/** rs_mesh_get_size: Returns: the size of mesh dim @dim. */
guint rs_mesh_get_size(const RsMesh *mesh, guint dim);
/** rs_mesh_get_dim_name: Returns: (transfer none): the name of @dim, alive as @mesh. */
const char *rs_mesh_get_dim_name(const RsMesh *mesh, guint dim);
/** rs_mesh_get_n_ranks: Returns: the number of positions (= ranks) of the mesh. */
guint rs_mesh_get_n_ranks(const RsMesh *mesh);
/** rs_mesh_get_rank: Returns: the global rank at flat index @index. */
guint32 rs_mesh_get_rank(const RsMesh *mesh, guint index);
/**
 * rs_mesh_get_coords:
 * @index: flat index, < n_ranks
 * @coords: (out caller-allocates) (array fixed-size=6): the coordinate per mesh dim
 */
void rs_mesh_get_coords(const RsMesh *mesh, guint index, guint *coords);

/** rs_mesh_format: Returns: (transfer full): "[dp=2, tp=4] ranks 0-7". */
char *rs_mesh_format(const RsMesh *mesh);

/**
 * rs_ranks_parse:
 * @text: "0-7", "0,2,4", "0-3,8-11" (ranges inclusive)
 * @ranks_out: (out) (transfer full) (element-type guint32): the ranks in the given order
 * @error: RS_MESH_ERROR_INVALID for text that does not parse, a range with hi < lo, a rank
 *   of RS_MAX_RANKS or more, or more than RS_MAX_RANKS ranks in all (counted before any
 *   is stored: "0-2000000000" fails at once, naming the limit)
 *
 * Returns: TRUE on success.
 */
gboolean rs_ranks_parse(const char *text, GArray **ranks_out, GError **error);

/**
 * rs_ranks_format:
 * @ranks: (array length=n_ranks): ranks
 *
 * Returns: (transfer full): compact text with runs as ranges ("0-7,16-23").
 */
char *rs_ranks_format(const guint32 *ranks, guint n_ranks);

typedef enum {
    RS_PLACEMENT_REPLICATE,
    RS_PLACEMENT_SHARD,
    RS_PLACEMENT_PARTIAL,
    RS_PLACEMENT_STRIDED_SHARD, /* PyTorch _StridedShard(dim, split_factor) */
} RsPlacementKind;

typedef struct {
    RsPlacementKind kind;
    gint dim;          /* tensor dim for SHARD and STRIDED_SHARD; 0 otherwise */
    gint split_factor; /* STRIDED_SHARD: >= 1 (1 behaves as Shard); 0 otherwise */
} RsPlacement;

/**
 * rs_placements_parse:
 * @text: comma-separated placements, one per mesh dim: "R", "S(0)", "SS(0,2)", "P", or
 *   PyTorch's spellings "Replicate()", "Shard(dim=0)", "_StridedShard(dim=0,
 *   split_factor=2)" (also its repr "_StridedShard(dim=0, sf=2)" and str "_S(0, 2)"),
 *   "Partial()"; white space ignored. A dim may be negative, counting from the last as
 *   PyTorch does ("S(-1)", "SS(-2,2)"; rs_placements_normalize() resolves it against a
 *   tensor's dims). The list may be enclosed in parentheses or brackets, as PyTorch prints
 *   a DTensor's placements: "(Shard(dim=0), Replicate())", one trailing comma allowed
 *   inside ("(Shard(dim=0),)").
 * @placements: (out caller-allocates) (array fixed-size=6): the placements
 * @n_placements_out: (out): how many were parsed
 * @error: RS_MESH_ERROR_PLACEMENT naming the item that does not parse
 *
 * Returns: TRUE on success. Partial parses here; layouts reject it for weights.
 */
gboolean rs_placements_parse(const char *text, RsPlacement *placements, guint *n_placements_out,
                             GError **error);

/**
 * rs_placements_normalize:
 * @placements: (array length=n_placements) (inout): placements from rs_placements_parse()
 * @n_dims: the tensor's dims, 1..RS_MAX_DIMS
 * @error: RS_MESH_ERROR_PLACEMENT when a negative dim is below -@n_dims
 *
 * Resolves negative shard dims as PyTorch does (dim + @n_dims: S(-1) of a 2-dim tensor is
 * S(1)); other placements and dims >= 0 are left as they are (a dim past the tensor's is
 * the layout's error).
 *
 * Returns: TRUE on success.
 */
gboolean rs_placements_normalize(RsPlacement *placements, guint n_placements, guint n_dims,
                                 GError **error);

/** rs_placements_format: Returns: (transfer full): "S(0),R" or "SS(0,2),S(0)". */
char *rs_placements_format(const RsPlacement *placements, guint n_placements);

G_END_DECLS
