/* layout/ — what each rank holds of each tensor, on both sides of a refit. It owns:
 *   layout.h      placements and splits resolved to layouts: a tensor's boxes per rank and
 *                 where each sits in the rank's local buffer (this header)
 *   convention.h  the frameworks' parallel conventions (megatron, fsdp2, vllm, sglang):
 *                 a model and an ordered GPU list to one layout per tensor; convention.c
 *                 holds the registry, parameters and shared resolver, convention-NAME.c
 *                 one framework's rules with their sources, convention-private.h what
 *                 they share
 *   refit.h       a refit: every tensor with its source and destination layouts, dtypes
 *                 and fused buffers, and the checks on them
 *   scenario.h    a scenario file (model, topology, both conventions and their GPUs)
 *                 bound into a refit
 * It uses base/, models/ and topologies/; plan/ and the folders above take its refits and
 * layouts, which are boxes: a planner never reasons about placements or frameworks.
 *
 * layout.h — how one logical tensor is spread over ranks, resolved to explicit boxes.
 *
 * A layout lists the ranks that take part (including ranks whose shard is empty) and, for
 * each, the boxes of global indices it holds and where each box sits in the rank's local
 * buffer. Nothing downstream looks at placements: planner, simulator and executor only see
 * boxes, so every layout the toolkit supports is as exact as its box list.
 *
 * Local buffers. Each rank's local buffer is a dense row-major array whose shape (in
 * elements, one extent per tensor dim) is rs_layout_get_buffer_shape(). A box of that
 * rank sits at a position (one index per dim) in the buffer: its element (k0, k1, …) is at
 * buffer coordinates (pos_d + k_d), i.e. local index offset_elems + Σ k_d·strides_elems[d]
 * with strides the row-major strides of the buffer shape. Elements of the buffer that no
 * box covers are padding (vocabulary padding): they exist, are zero and never move.
 *
 * Fused buffers. Frameworks fuse several canonical (Hugging Face) tensors into one local
 * buffer (vLLM qkv_proj, gate_up_proj, w13; Megatron linear_qkv, linear_fc1). Each
 * canonical tensor then has its own layout whose boxes sit at their offsets in the shared
 * buffer; the layouts of the tensors of one fused buffer have the same buffer shape on
 * every rank, and their boxes never overlap in it (rs_layout_new_fused_set builds them,
 * rs_refit_check_buffers verifies them). Which tensors share a buffer is recorded by the
 * refit (RsRefitTensor.src_buffer / dst_buffer), because a layout is shared by the layers
 * of a model while buffer names are not.
 *
 * Layouts are immutable once built and shared by reference (rs_layout_ref/unref): the
 * layers of a model with the same shape and split share one layout.
 */
#pragma once

#include <glib.h>

#include "base/box.h"
#include "base/dtype.h"
#include "base/mesh.h"

G_BEGIN_DECLS

#define RS_LAYOUT_ERROR (rs_layout_error_quark())
GQuark rs_layout_error_quark(void);

typedef enum {
    RS_LAYOUT_ERROR_INVALID,     /* placements that do not fit the tensor or the mesh */
    RS_LAYOUT_ERROR_UNSUPPORTED, /* a placement that is legal in DTensor but not for weights */
    RS_LAYOUT_ERROR_OVERFLOW,    /* a shape whose element count does not fit in 63 bits */
    RS_LAYOUT_ERROR_HEADS,       /* attention heads or groups that the split cannot keep whole */
} RsLayoutError;

/* One box a rank holds, and where it lives in the rank's local buffer: the element with
 * position (k0, k1, …) in the box (global index lo[d] + k_d·step[d] in each dim d,
 * 0 <= k_d < count[d]) is at local index offset_elems + Σ_d k_d · strides_elems[d]. */
typedef struct {
    RsBox box;
    guint64 offset_elems;
    gint64 strides_elems[RS_MAX_DIMS];
} RsLocalBox;

typedef struct _RsLayout RsLayout;

/**
 * rs_layout_new_dtensor:
 * @n_dims: tensor rank, 0..RS_MAX_DIMS
 * @shape: (array length=n_dims): the global shape in elements, each >= 0
 * @mesh: the device mesh (copied)
 * @placements: (array length=n_placements): one placement per mesh dim
 * @n_placements: must equal the mesh's n_dims
 * @error: RS_LAYOUT_ERROR_INVALID naming the placement (count ≠ mesh dims, a shard dim
 *   out of range, a split factor < 1), RS_LAYOUT_ERROR_UNSUPPORTED (Partial: a weight is
 *   never a pending sum), RS_LAYOUT_ERROR_OVERFLOW (element count over 2^62)
 *
 * Resolves a PyTorch DTensor layout. For every mesh position the mesh dims are applied
 * left to right to the ordered list of global indices the position holds in each tensor
 * dim (initially 0..n−1), as PyTorch does (torch/distributed/tensor/_utils.py,
 * compute_local_shape_and_global_offset):
 * - Shard(d) on a mesh dim of size k splits the current list of dim d as torch.chunk
 *   does: chunk = ceil(n / k), coordinate c takes list positions [c·chunk, min((c+1)·chunk,
 *   n)), so trailing shards may be empty (placement_types.py, Shard._split_tensor).
 * - StridedShard(d, f) splits the list first into f pieces with torch.chunk (missing
 *   pieces empty), then each piece into k pieces with torch.chunk; coordinate c holds the
 *   concatenation of the c-th sub-piece of every piece (placement_types.py,
 *   _StridedShard._split_tensor, PyTorch 2.7 and later; earlier releases required even
 *   sizes, where both rules agree). Example from its docstring: 9 rows, f = 2, k = 4 →
 *   rows {0,1,5}, {2,3,6}, {4,7}, {8}.
 * Several mesh dims may split one tensor dim; they nest. A position's local buffer is
 * the cartesian product of its index lists, row-major; each maximal run of the list that
 * is an arithmetic progression becomes one box (so a StridedShard position may hold
 * several boxes). An empty shard has no box and a 0-element buffer, so it never reports
 * an offset. O(n_ranks × (n_mesh_dims + boxes)).
 *
 * Returns: (transfer full): the layout, or NULL on error.
 */
RsLayout *rs_layout_new_dtensor(guint n_dims, const gint64 *shape, const RsMesh *mesh,
                                const RsPlacement *placements, guint n_placements, GError **error);

/* --- framework splits beyond DTensor placements --- */

/* How a fused dim is made of segments and split (RS_SPLIT_FUSED). Rows below are indices
 * of the fused dim in the concatenated coordinates [segment 0; segment 1; …]. */
typedef enum {
    /* Per position [seg0_local; seg1_local; …]: each segment chunked on its own as
     * torch.chunk does (vLLM MergedColumnParallelLinear gate_up_proj, FusedMoE w13;
     * Megatron linear_fc1; replicated concatenations such as fused_qkv_a_proj). */
    RS_FUSION_CONCAT,
    /* vLLM / SGLang QKVParallelLinear: segments q, k, v of n_heads, n_kv and n_kv heads of
     * `unit` rows. Per position [q_local; k_local; v_local]; query heads split evenly (k must
     * divide them); KV heads split evenly when k divides them, else each KV head is held by
     * k / n_kv consecutive positions (position c holds head c / (k / n_kv)); a KV head
     * count that neither divides nor is divided by k is an error
     * (vllm/model_executor/layers/linear.py, QKVParallelLinear.__init__ and
     * weight_loader: num_kv_head_replicas, shard_id = tp_rank // num_kv_head_replicas). */
    RS_FUSION_QKV,
    /* Megatron-Core linear_qkv: the same q, k, v segments, laid out per query group
     * [q heads of the group; k head; v head]; groups (= KV heads) split evenly over the
     * positions, k must divide them (megatron/core/transformer/attention.py,
     * SelfAttention.get_query_key_value_tensors; num_query_groups % tp == 0 is asserted in
     * megatron/training/arguments.py). */
    RS_FUSION_QKV_GROUPED,
    /* One segment whose rows alternate between `unit` parts (gpt-oss gate_up_proj: even
     * rows gate, odd rows up). Each part is chunked on its own as torch.chunk does and a
     * position holds [part0_local; part1_local; …], each part a strided run (step unit).
     * This is how Megatron-style [gate; up] training layouts see the interleaved
     * checkpoint tensor. */
    RS_FUSION_INTERLEAVED,
} RsFusionKind;

#define RS_MAX_SEGMENTS 8

typedef struct {
    RsFusionKind kind;
    guint n_segments;                    /* CONCAT 1..8; QKV kinds 3; INTERLEAVED 1 */
    gint64 segment_len[RS_MAX_SEGMENTS]; /* extent of each segment along the fused dim */
    gint64 unit; /* QKV kinds: rows per head (head_dim); INTERLEAVED: parts (2); CONCAT: 1 */
} RsFusion;

typedef enum {
    RS_SPLIT_PLACEMENT, /* the DTensor placement in .placement (R, S(d), SS(d,f)) */
    /* Vocabulary padding: dim .dim is padded to a multiple of .multiple (which must then
     * be divisible by the mesh dim size k); position c holds padded/k rows of buffer, the
     * real rows [c·padded/k, min((c+1)·padded/k, n)) and padding after them. vLLM:
     * multiple 64 (vocab_parallel_embedding.py, pad_vocab_size and
     * vocab_range_from_global_vocab_size); Megatron: 128·tp
     * (megatron/training/tokenizer/tokenizer.py, _vocab_size_with_padding). */
    RS_SPLIT_PADDED,
    /* Dim .dim in k contiguous runs of floor(n/k) or ceil(n/k) elements, the longer ones
     * first: vLLM's expert map, strategy "linear" (vllm/model_executor/layers/fused_moe/
     * layer.py, determine_expert_map: start = c·base + min(c, n mod k)). */
    RS_SPLIT_BALANCED,
    RS_SPLIT_FUSED, /* dim .dim is fused: .fusion says how it is split */
} RsSplitKind;

typedef struct {
    RsSplitKind kind;
    RsPlacement placement; /* RS_SPLIT_PLACEMENT */
    gint dim;              /* the tensor dim of the other kinds */
    gint64 multiple;       /* RS_SPLIT_PADDED: >= 1 */
    RsFusion fusion;       /* RS_SPLIT_FUSED */
} RsSplit;

/**
 * rs_split_placement: Returns: a split that applies @placement.
 */
RsSplit rs_split_placement(RsPlacement placement);

/**
 * rs_split_format: Returns: (transfer full): "R", "S(0)", "SS(0,2)", "pad64(0)",
 * "balanced(0)", "qkv(0: 32+8+8 heads of 128)", "concat(0: 14336+14336)", …
 */
char *rs_split_format(const RsSplit *split);

/**
 * rs_layout_new_split:
 * @n_dims, @shape: as rs_layout_new_dtensor()
 * @mesh: the device mesh (copied)
 * @splits: (array length=n_splits): one split per mesh dim, applied left to right as in
 *   rs_layout_new_dtensor(); a PADDED or FUSED split must be the only split of its
 *   tensor dim and see it whole
 * @error: RS_LAYOUT_ERROR_INVALID naming the split (dim out of range, a fused dim whose
 *   extent is not the sum of its segments, a padded extent not divisible by the mesh
 *   size, a second split of a padded or fused dim), RS_LAYOUT_ERROR_HEADS ("tp=3 does not
 *   divide the 32 query heads"; "KV heads 8 and tp=12: neither divides the other"),
 *   RS_LAYOUT_ERROR_UNSUPPORTED (Partial), RS_LAYOUT_ERROR_OVERFLOW
 *
 * The general resolver: DTensor placements plus the framework splits above. A FUSED split
 * of one tensor describes a canonical tensor that is itself the concatenation of its
 * segments (a checkpoint's fused qkv [Q;K;V]); to lay out separate canonical tensors in
 * one fused buffer use rs_layout_new_fused_set(). O(n_ranks × (n_mesh_dims + boxes)).
 *
 * Returns: (transfer full): the layout, or NULL on error.
 */
RsLayout *rs_layout_new_split(guint n_dims, const gint64 *shape, const RsMesh *mesh,
                              const RsSplit *splits, guint n_splits, GError **error);

/**
 * rs_layout_new_fused_set:
 * @n_dims: rank of every tensor of the set
 * @shape: (array length=n_dims): their common shape; the entry of @fuse_dim is ignored
 * @n_tensors: tensors fused into one buffer, 1..RS_MAX_SEGMENTS
 * @fuse_dim: the dim along which they are concatenated (0 for [out, in] linears, 1 for
 *   grouped experts [E, out, in])
 * @extents: (array length=n_tensors): each tensor's extent along @fuse_dim
 * @mesh, @splits, @n_splits: as rs_layout_new_split(), for the virtual tensor that
 *   concatenates the set along @fuse_dim (its extent there is Σ @extents); a FUSED split
 *   of @fuse_dim must have one segment per tensor with these extents, in order; without
 *   one the set is concatenated whole on every position (a replicated fused buffer)
 * @layouts_out: (out caller-allocates) (array length=n_tensors): the layout of each
 *   tensor, its boxes in its own global coordinates, all sharing the buffer shapes of
 *   the virtual tensor
 * @error: as rs_layout_new_split(), or RS_LAYOUT_ERROR_INVALID when @extents disagree
 *   with the fusion's segments
 *
 * Returns: TRUE on success (then every @layouts_out entry is set, transfer full).
 */
gboolean rs_layout_new_fused_set(guint n_dims, const gint64 *shape, guint n_tensors, guint fuse_dim,
                                 const gint64 *extents, const RsMesh *mesh, const RsSplit *splits,
                                 guint n_splits, RsLayout **layouts_out, GError **error);

/**
 * rs_layout_new_replicated:
 * @ranks: (array length=n_ranks): ranks that each hold the whole tensor, no rank twice
 *
 * Same as a 1-D mesh over @ranks with placement R. Returns: (transfer full).
 */
RsLayout *rs_layout_new_replicated(guint n_dims, const gint64 *shape, const guint32 *ranks,
                                   guint n_ranks);

/**
 * rs_layout_new_union:
 * @layouts: (array length=n_layouts): layouts of one shape over disjoint rank sets
 * @error: RS_LAYOUT_ERROR_INVALID when shapes differ or a rank appears in two of them
 *
 * The layout in which every rank keeps what it holds in its own layout: the pipeline
 * stages that each hold a copy of a tied embedding, for instance. Boxes several ranks
 * hold are replicas.
 *
 * Returns: (transfer full): the layout, or NULL.
 */
RsLayout *rs_layout_new_union(RsLayout *const *layouts, guint n_layouts, GError **error);

/* --- explicit layouts --- */

typedef struct _RsLayoutBuilder RsLayoutBuilder;

/**
 * rs_layout_builder_new:
 * @n_dims, @shape: the global shape, as rs_layout_new_dtensor()
 *
 * Starts an explicit layout: ranks with their buffer shapes, and boxes at positions in
 * them. Returns: (transfer full).
 */
RsLayoutBuilder *rs_layout_builder_new(guint n_dims, const gint64 *shape);
void rs_layout_builder_free(RsLayoutBuilder *builder);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsLayoutBuilder, rs_layout_builder_free)

/**
 * rs_layout_builder_add_rank:
 * @rank: a global rank, not added before
 * @buffer_shape: (array length=n_dims): extents of its local buffer, row-major
 */
void rs_layout_builder_add_rank(RsLayoutBuilder *builder, guint32 rank, const gint64 *buffer_shape);

/**
 * rs_layout_builder_add_box:
 * @box: global indices held by the rank added last (empty boxes are ignored)
 * @position: (array length=n_dims): the buffer coordinates of the box's first element;
 *   its element k sits at position + k in every dim
 */
void rs_layout_builder_add_box(RsLayoutBuilder *builder, const RsBox *box, const gint64 *position);

/** rs_layout_builder_set_description: @text shown by rs_layout_format() (copied). */
void rs_layout_builder_set_description(RsLayoutBuilder *builder, const char *text);

/**
 * rs_layout_builder_finish:
 * @error: RS_LAYOUT_ERROR_INVALID naming the rank and box: a box outside the tensor or
 *   outside its buffer, two boxes of one rank sharing elements or buffer positions, a
 *   rank added twice, a box before any rank
 *
 * Consumes @builder (free it only when this is not called). Returns: (transfer full):
 * the layout, or NULL.
 */
RsLayout *rs_layout_builder_finish(RsLayoutBuilder *builder, GError **error);

/**
 * rs_layout_check_packed:
 * @layout: a layout of a tensor stored in @dtype
 * @dtype: its dtype; only a packed one (rs_dtype_get_elems_per_byte() > 1: MXFP4) is
 *   checked, every other passes
 * @error: RS_LAYOUT_ERROR_INVALID naming the rank and its box (or the shape) when some
 *   shard would split a byte
 *
 * A packed dtype's elements are moved and stored by whole bytes, p = elems_per_byte of
 * them each, along the last dim (gpt-oss *_blocks [E, rows, cols/32, 16] u8; safetensors
 * has no 4-bit dtype). So a layout is accepted when every box of every rank either is the
 * whole tensor at a local offset that is a multiple of p, or has a last dim of step 1
 * that starts and ends on multiples of p (the tensor's last extent being one), at a
 * local offset and outer-dim strides that are multiples of p and a last-dim stride of 1.
 * Then every box is whole bytes and its bytes are exactly its elements / p.
 *
 * Returns: TRUE when no shard splits a byte.
 */
gboolean rs_layout_check_packed(const RsLayout *layout, RsDtype dtype, GError **error);

/**
 * rs_box_rows_share_bytes:
 * @box: a box of a @dtype tensor (extents in elements)
 * Returns: TRUE when @dtype is packed (rs_dtype_get_elems_per_byte() > 1) and @box has
 * rows (n_dims > 1) whose last-dim count is not a multiple of it: consecutive rows share
 * bytes, so the box can only move as one piece (only a whole replica holds such a tensor,
 * rs_layout_check_packed()).
 */
gboolean rs_box_rows_share_bytes(const RsBox *box, RsDtype dtype);

/* --- block-quantised derivations --- */

/**
 * rs_layout_new_blocked:
 * @layout: the layout of a weight
 * @block: (array length=n_dims): block extent per dim, >= 1 (FP8 e4m3 block scales:
 *   1…, 128, 128; MXFP4: 1…, 1, 32)
 * @whole_blocks: TRUE for a source side: keep only the blocks a rank holds entirely,
 *   since a block is quantised where all of it is (a block split over source ranks is
 *   held by none); FALSE for a destination side: every box must start on a block
 *   boundary and end on one or at the tensor's end, with step 1 in blocked dims
 * @in_blocks: TRUE: the result is the layout of the scales, in block coordinates (shape
 *   ceil(shape / block)); FALSE: in element coordinates (the weight restricted to whole
 *   blocks), with the same buffers as @layout
 * @error: RS_LAYOUT_ERROR_INVALID naming the rank and box that is not block-aligned
 *
 * Scale buffers: on a destination they mirror the weight's buffer (buffer shape
 * ceil(extent / block), positions divided by the block; a position not on a block
 * boundary is an error), so a fused weight has a fused scale buffer; on a source they
 * are what the conversion computes, the rank's scale boxes stacked along dim 0.
 *
 * Returns: (transfer full): the derived layout, or NULL.
 */
RsLayout *rs_layout_new_blocked(const RsLayout *layout, const gint64 *block, gboolean whole_blocks,
                                gboolean in_blocks, GError **error);

RsLayout *rs_layout_ref(RsLayout *layout);
void rs_layout_unref(RsLayout *layout);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsLayout, rs_layout_unref)

guint rs_layout_get_n_dims(const RsLayout *layout);
/** rs_layout_get_shape: Returns: (transfer none) (array length=n_dims): global shape. */
const gint64 *rs_layout_get_shape(const RsLayout *layout);
/** rs_layout_get_n_elems: Returns: elements of the global tensor. */
guint64 rs_layout_get_n_elems(const RsLayout *layout);

/** rs_layout_get_n_ranks: Returns: how many ranks take part, empty shards included. */
guint rs_layout_get_n_ranks(const RsLayout *layout);
/** rs_layout_get_rank: Returns: the global rank of entry @index (entries sorted by rank). */
guint32 rs_layout_get_rank(const RsLayout *layout, guint index);
/** rs_layout_find_rank: Returns: the entry index of global rank @rank, or -1 when @rank
 * does not take part. O(log n_ranks). */
gint rs_layout_find_rank(const RsLayout *layout, guint32 rank);

/**
 * rs_layout_get_boxes:
 * @index: entry index (see rs_layout_find_rank)
 * @n_boxes_out: (out): number of boxes (0 for an empty shard)
 *
 * Returns: (transfer none) (array length=n_boxes_out): the boxes of that rank, pairwise
 * disjoint, alive as @layout.
 */
const RsLocalBox *rs_layout_get_boxes(const RsLayout *layout, guint index, guint *n_boxes_out);

/**
 * rs_layout_get_local_n_elems:
 * Returns: size of entry @index's local buffer in elements: the product of its buffer
 * shape, padding and (for a fused buffer) the other tensors' parts included.
 */
guint64 rs_layout_get_local_n_elems(const RsLayout *layout, guint index);

/** rs_layout_get_held_n_elems: Returns: elements of this tensor entry @index holds. */
guint64 rs_layout_get_held_n_elems(const RsLayout *layout, guint index);

/**
 * rs_layout_get_buffer_shape:
 * Returns: (transfer none) (array length=n_dims): the row-major shape of entry @index's
 * local buffer, alive as @layout.
 */
const gint64 *rs_layout_get_buffer_shape(const RsLayout *layout, guint index);

/**
 * rs_local_box_get_position:
 * @lb: a box of entry @index of @layout
 * @position: (out caller-allocates) (array fixed-size=6): buffer coordinates of its first
 *   element
 */
void rs_local_box_get_position(const RsLayout *layout, guint index, const RsLocalBox *lb,
                               gint64 *position);

/**
 * rs_layout_get_mesh:
 * Returns: (transfer none) (nullable): the mesh a DTensor or split layout was built from.
 */
const RsMesh *rs_layout_get_mesh(const RsLayout *layout);

/**
 * rs_layout_get_placements:
 * @n_out: (out): number of placements
 * Returns: (transfer none) (nullable): the placements of a DTensor layout (NULL for
 * framework splits and explicit layouts).
 */
const RsPlacement *rs_layout_get_placements(const RsLayout *layout, guint *n_out);

/**
 * rs_layout_count_held:
 * @rank: a global rank
 * @box: a box of the tensor
 *
 * Returns: how many elements of @box @rank holds (0 when it does not take part).
 */
guint64 rs_layout_count_held(const RsLayout *layout, guint32 rank, const RsBox *box);

/**
 * rs_layout_has_disjoint_shards:
 * Returns: TRUE when any two distinct boxes of the layout (over all ranks) are disjoint,
 * so every box is either a replica of another or shares nothing with it, as for every
 * DTensor layout; planners then need not refine overlapping boxes. Computed when the
 * layout is built.
 */
gboolean rs_layout_has_disjoint_shards(const RsLayout *layout);

/** rs_layout_format: Returns: (transfer full): "mesh [dp=2, tp=4] ranks 0-7, R,S(0)". */
char *rs_layout_format(const RsLayout *layout);

/**
 * rs_local_box_init_row_major:
 * @local: (out caller-allocates): the local box
 * @n_dims: 0..RS_MAX_DIMS
 * @shape: (array length=n_dims): the global shape in elements
 *
 * The whole tensor in one buffer, row-major, from offset 0: how a staging buffer holds a
 * tensor it relays.
 */
void rs_local_box_init_row_major(RsLocalBox *local, guint n_dims, const gint64 *shape);

/**
 * rs_local_box_get_run_elems:
 * @local: a rank's local box
 * @piece: a non-empty box within @local->box
 *
 * The memory image of @piece in the buffer of @local is a set of equally long runs of
 * adjacent elements (rows, after merging dims that are contiguous in memory, as a copy
 * walks them: exec/region.h).
 *
 * Returns: the elements of one such run, >= 1; rs_box_get_n_elems(@piece) when the piece is
 * one contiguous run.
 */
guint64 rs_local_box_get_run_elems(const RsLocalBox *local, const RsBox *piece);

G_END_DECLS
