/* safetensors.h — reading the headers of safetensors checkpoints (no tensor data).
 *
 * A .safetensors file is an 8-byte little-endian unsigned header length N, then N bytes of
 * UTF-8 JSON, then the data section. The JSON maps each tensor name to
 * {"dtype": "BF16", "shape": [rows, cols], "data_offsets": [begin, end]} (offsets relative
 * to the data section, end exclusive) and may hold "__metadata__" (a string map). A sharded
 * checkpoint adds model.safetensors.index.json: {"metadata": {"total_size": bytes},
 * "weight_map": {tensor name: shard file name}}, shards in the index's folder.
 * Format: huggingface/safetensors docs ("Format") and safetensors/src/tensor.rs; index:
 * transformers modeling_utils.py (SAFE_WEIGHTS_INDEX_NAME).
 */
#pragma once

#include <glib.h>

#include "base/box.h"
#include "base/dtype.h"

G_BEGIN_DECLS

#define RS_SAFETENSORS_ERROR (rs_safetensors_error_quark())
GQuark rs_safetensors_error_quark(void);

typedef enum {
    RS_SAFETENSORS_ERROR_IO,        /* a file that cannot be opened or read */
    RS_SAFETENSORS_ERROR_MALFORMED, /* a header that breaks the format; names the byte offset */
    RS_SAFETENSORS_ERROR_DTYPE,     /* a dtype this toolkit does not model (BOOL, U16, …) */
    RS_SAFETENSORS_ERROR_INDEX,     /* an index whose weight map disagrees with its shards */
} RsSafetensorsError;

/* The largest header accepted, as the safetensors reference implementation
 * (safetensors/src/tensor.rs MAX_HEADER_SIZE). */
#define RS_SAFETENSORS_MAX_HEADER_BYTES ((guint64)100 * 1000 * 1000)

typedef struct {
    char *name;
    RsDtype dtype;
    /* TRUE for F8_E8M0 (MX scales), read as one byte per element (RS_DTYPE_U8). */
    gboolean e8m0;
    guint n_dims;
    gint64 shape[RS_MAX_DIMS];
    char *file;                  /* the shard's base name ("model-00001-of-00002.safetensors") */
    guint64 data_begin;          /* bytes, relative to the data section of its file */
    guint64 data_end;            /* exclusive */
    guint64 header_offset_bytes; /* where the tensor's key sits in its file, for messages */
} RsSafetensorsTensor;

/**
 * rs_safetensors_read_header:
 * @path: a .safetensors file
 * @error: RS_SAFETENSORS_ERROR_IO; RS_SAFETENSORS_ERROR_MALFORMED "PATH: byte offset N: …"
 *   for a file shorter than 8 bytes (offset 0), a header length beyond the file or above
 *   RS_SAFETENSORS_MAX_HEADER_BYTES (offset 0), JSON that does not parse (the offset of
 *   the offending character), a root that is not an object (offset 8), an entry without a
 *   valid dtype, shape or data_offsets, or whose byte range does not match its shape × dtype
 *   size or lies beyond the file (the offset of the entry's key), entries that overlap or
 *   leave holes in the data section (offset of the later entry);
 *   RS_SAFETENSORS_ERROR_DTYPE naming the tensor and the dtype
 *
 * Reads only the 8-byte length and the header, never the data. Tensors are returned sorted
 * by data offset (the order they are stored in). O(n_tensors log n_tensors).
 *
 * Returns: (transfer full) (element-type RsSafetensorsTensor): the tensors, or NULL.
 */
GPtrArray *rs_safetensors_read_header(const char *path, GError **error);

/**
 * rs_safetensors_read_index:
 * @path: a model.safetensors.index.json
 * @error: RS_SAFETENSORS_ERROR_IO; RS_SAFETENSORS_ERROR_MALFORMED for JSON that does not
 *   parse or lacks weight_map; RS_SAFETENSORS_ERROR_INDEX when a tensor of the weight map is
 *   missing from its shard or a shard holds a tensor the weight map does not list; any error
 *   of rs_safetensors_read_header() for a shard, prefixed with the index path
 *
 * Reads the header of every shard named in the weight map (shards in the index's folder).
 * Tensors are returned shard by shard (shards in name order), each sorted by data offset.
 *
 * Returns: (transfer full) (element-type RsSafetensorsTensor): the tensors, or NULL.
 */
GPtrArray *rs_safetensors_read_index(const char *path, GError **error);

/**
 * rs_safetensors_index_list_shards:
 * @path: a model.safetensors.index.json
 * @error: as rs_safetensors_read_index() for the index itself (its shards are not read)
 *
 * Returns: (transfer full): the paths of the shard files its weight map names (in the
 *   index's folder), sorted, NULL-terminated; NULL on error.
 */
char **rs_safetensors_index_list_shards(const char *path, GError **error);

/**
 * rs_safetensors_read:
 * @path: a .safetensors file or a .safetensors.index.json
 *
 * Returns: (transfer full): rs_safetensors_read_index() for an index, else
 * rs_safetensors_read_header().
 */
GPtrArray *rs_safetensors_read(const char *path, GError **error);

/**
 * rs_safetensors_dtype_name:
 * Returns: (transfer none): the safetensors spelling of @dtype ("BF16", "F8_E4M3", …).
 */
const char *rs_safetensors_dtype_name(RsDtype dtype);

G_END_DECLS
