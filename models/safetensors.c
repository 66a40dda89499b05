/* safetensors.c — safetensors headers and sharded-checkpoint indexes (see safetensors.h).
 *
 * Only the 8-byte length and the JSON header of each file are read; the data section is
 * known by its size (file size − 8 − header length). Every check the reference
 * implementation makes on load is made here, so that a header this reader accepts is one
 * PyTorch would load: known dtype, byte range = elements × element size, ranges inside the
 * data section, sorted ranges that tile it without holes or overlaps. Every complaint names
 * the byte offset in the file where the fault is, so a user can look at it with `xxd`. */
#include "models/safetensors.h"

#include "base/text.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

/* clang-format off */
G_DEFINE_QUARK(rs-safetensors-error-quark, rs_safetensors_error)
/* clang-format on */

typedef struct {
    const char *name;
    RsDtype dtype;
    gboolean e8m0;
} DtypeName;

/* The safetensors dtype spellings (safetensors/src/tensor.rs Dtype) this toolkit models. */
static const DtypeName dtype_names[] = {
    {"F64", RS_DTYPE_F64, FALSE},
    {"F32", RS_DTYPE_F32, FALSE},
    {"BF16", RS_DTYPE_BF16, FALSE},
    {"F16", RS_DTYPE_F16, FALSE},
    {"F8_E4M3", RS_DTYPE_FP8_E4M3, FALSE},
    {"F8_E5M2", RS_DTYPE_FP8_E5M2, FALSE},
    {"I64", RS_DTYPE_I64, FALSE},
    {"I32", RS_DTYPE_I32, FALSE},
    {"I8", RS_DTYPE_I8, FALSE},
    {"U8", RS_DTYPE_U8, FALSE},
    {"U32", RS_DTYPE_U32, FALSE},
    {"U64", RS_DTYPE_U64, FALSE},
    {"C64", RS_DTYPE_C64, FALSE},
    {"F8_E8M0", RS_DTYPE_U8, TRUE},
};

const char *
rs_safetensors_dtype_name(RsDtype dtype)
{
    for (guint i = 0; i < G_N_ELEMENTS(dtype_names); i++)
        if (dtype_names[i].dtype == dtype && !dtype_names[i].e8m0)
            return dtype_names[i].name;
    return "?";
}

static void
tensor_free(gpointer p)
{
    RsSafetensorsTensor *t = p;
    g_free(t->name);
    g_free(t->file);
    g_free(t);
}

static void set_malformed(GError **error, const char *path, guint64 offset, const char *format, ...)
    G_GNUC_PRINTF(4, 5);

static void
set_malformed(GError **error, const char *path, guint64 offset, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    g_autofree char *message = g_strdup_vprintf(format, args);
    va_end(args);
    g_set_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_MALFORMED,
                "%s: byte offset %" G_GUINT64_FORMAT ": %s", path, offset, message);
}

/* The byte offset in @text of line @line, column @column (both 1-based; columns count
 * characters as json-glib does, which for the ASCII of real headers are bytes). */
static guint64
line_col_to_offset(const char *text, gsize len, guint line, guint column)
{
    gsize i = 0;
    for (guint l = 1; l < line && i < len; i++)
        if (text[i] == '\n')
            l++;
    gsize col_bytes = column > 0 ? column - 1 : 0;
    return MIN(i + col_bytes, len);
}

/* The offset in @text of every top-level key (its opening quote), in one pass: a string
 * at depth 1 that follows '{' or ',' is a key. */
static GHashTable *
scan_top_level_keys(const char *text, gsize len)
{
    GHashTable *keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    gint depth = 0;
    gboolean expect_key = FALSE;
    for (gsize i = 0; i < len; i++) {
        char ch = text[i];
        if (ch == '"') {
            gsize start = i;
            GString *s = g_string_new(NULL);
            for (i++; i < len && text[i] != '"'; i++) {
                if (text[i] == '\\' && i + 1 < len)
                    i++;
                g_string_append_c(s, text[i]);
            }
            if (depth == 1 && expect_key && !g_hash_table_contains(keys, s->str))
                g_hash_table_insert(keys, g_strdup(s->str), GSIZE_TO_POINTER(start + 1));
            expect_key = FALSE;
            g_string_free(s, TRUE);
        } else if (ch == '{' || ch == '[') {
            depth++;
            expect_key = ch == '{' && depth == 1;
        } else if (ch == '}' || ch == ']') {
            depth--;
        } else if (ch == ',' && depth == 1) {
            expect_key = TRUE;
        }
    }
    return keys;
}

/* The offset of @name's key in the header, from the scan (stored + 1 so 0 means absent). */
static guint64
key_offset(GHashTable *keys, const char *name)
{
    gsize v = GPOINTER_TO_SIZE(g_hash_table_lookup(keys, name));
    return v > 0 ? v - 1 : 0;
}

static gboolean
node_is_uint(JsonNode *node, guint64 *out)
{
    if (node == NULL || !JSON_NODE_HOLDS_VALUE(node) ||
        json_node_get_value_type(node) != G_TYPE_INT64)
        return FALSE;
    gint64 v = json_node_get_int(node);
    if (v < 0)
        return FALSE;
    *out = (guint64)v;
    return TRUE;
}

static gint
compare_by_offset(gconstpointer a, gconstpointer b)
{
    const RsSafetensorsTensor *x = *(RsSafetensorsTensor *const *)a;
    const RsSafetensorsTensor *y = *(RsSafetensorsTensor *const *)b;
    if (x->data_begin != y->data_begin)
        return x->data_begin < y->data_begin ? -1 : 1;
    if (x->data_end != y->data_end)
        return x->data_end < y->data_end ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* --- one header entry --- */

/* Reads @obj's dtype into @t; *@dtype_out borrows its spelling from @obj. */
static gboolean
read_entry_dtype(const char *path, const char *name, JsonObject *obj, guint64 key_offset,
                 RsSafetensorsTensor *t, const char **dtype_out, GError **error)
{
    JsonNode *dtype_node = json_object_get_member(obj, "dtype");
    if (dtype_node == NULL || !JSON_NODE_HOLDS_VALUE(dtype_node) ||
        json_node_get_value_type(dtype_node) != G_TYPE_STRING) {
        set_malformed(error, path, key_offset, "tensor \"%s\": dtype: expected a string", name);
        return FALSE;
    }
    const char *dtype = json_node_get_string(dtype_node);
    gboolean known = FALSE;
    for (guint i = 0; i < G_N_ELEMENTS(dtype_names); i++) {
        if (strcmp(dtype, dtype_names[i].name) == 0) {
            t->dtype = dtype_names[i].dtype;
            t->e8m0 = dtype_names[i].e8m0;
            known = TRUE;
        }
    }
    if (!known) {
        g_set_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_DTYPE,
                    "%s: byte offset %" G_GUINT64_FORMAT ": tensor \"%s\": dtype \"%s\" is "
                    "not supported (supported: F64, F32, BF16, F16, F8_E4M3, F8_E5M2, "
                    "F8_E8M0, I64, I32, I8, U8)",
                    path, key_offset, name, dtype);
        return FALSE;
    }
    *dtype_out = dtype;
    return TRUE;
}

/* Reads @obj's shape into @t (its dtype already read) and sets *@n_bytes_out to the bytes
 * that shape holds; fails when the count overflows 64 bits. */
static gboolean
read_entry_shape(const char *path, const char *name, JsonObject *obj, guint64 key_offset,
                 RsSafetensorsTensor *t, guint64 *n_bytes_out, GError **error)
{
    JsonNode *shape_node = json_object_get_member(obj, "shape");
    if (shape_node == NULL || !JSON_NODE_HOLDS_ARRAY(shape_node)) {
        set_malformed(error, path, key_offset, "tensor \"%s\": shape: expected an array", name);
        return FALSE;
    }
    JsonArray *shape = json_node_get_array(shape_node);
    guint n_dims = json_array_get_length(shape);
    if (n_dims > RS_MAX_DIMS) {
        set_malformed(error, path, key_offset,
                      "tensor \"%s\": shape has %u dims, at most %d "
                      "are supported",
                      name, n_dims, RS_MAX_DIMS);
        return FALSE;
    }
    guint64 n_elems = 1;
    gboolean overflow = FALSE;
    t->n_dims = n_dims;
    for (guint d = 0; d < n_dims; d++) {
        guint64 extent;
        if (!node_is_uint(json_array_get_element(shape, d), &extent) ||
            extent > (guint64)G_MAXINT64) {
            set_malformed(error, path, key_offset,
                          "tensor \"%s\": shape[%u]: expected a "
                          "non-negative integer",
                          name, d);
            return FALSE;
        }
        t->shape[d] = (gint64)extent;
        if (extent != 0 && n_elems > G_MAXUINT64 / extent)
            overflow = TRUE;
        n_elems *= extent;
    }
    guint elem_bytes = rs_dtype_get_size_bytes(t->dtype);
    if (overflow || n_elems > G_MAXUINT64 / elem_bytes) {
        set_malformed(error, path, key_offset, "tensor \"%s\": shape overflows 64 bits", name);
        return FALSE;
    }
    *n_bytes_out = n_elems * elem_bytes;
    return TRUE;
}

/* Reads @obj's data_offsets into @t and checks they hold @n_bytes (its shape in @dtype)
 * inside the @data_bytes of the data section. */
static gboolean
read_entry_offsets(const char *path, const char *name, JsonObject *obj, guint64 key_offset,
                   const char *dtype, guint64 n_bytes, guint64 data_bytes,
                   RsSafetensorsTensor *t, GError **error)
{
    JsonNode *offsets_node = json_object_get_member(obj, "data_offsets");
    JsonArray *offsets = offsets_node && JSON_NODE_HOLDS_ARRAY(offsets_node)
                             ? json_node_get_array(offsets_node)
                             : NULL;
    if (offsets == NULL || json_array_get_length(offsets) != 2 ||
        !node_is_uint(json_array_get_element(offsets, 0), &t->data_begin) ||
        !node_is_uint(json_array_get_element(offsets, 1), &t->data_end) ||
        t->data_end < t->data_begin) {
        set_malformed(error, path, key_offset,
                      "tensor \"%s\": data_offsets: expected "
                      "[begin, end] with 0 <= begin <= end",
                      name);
        return FALSE;
    }
    if (t->data_end - t->data_begin != n_bytes) {
        set_malformed(error, path, key_offset,
                      "tensor \"%s\": data_offsets [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                      "] hold %" G_GUINT64_FORMAT " bytes, but shape × %s is %" G_GUINT64_FORMAT
                      " bytes",
                      name, t->data_begin, t->data_end, t->data_end - t->data_begin, dtype,
                      n_bytes);
        return FALSE;
    }
    if (t->data_end > data_bytes) {
        set_malformed(error, path, key_offset,
                      "tensor \"%s\": data_offsets end %" G_GUINT64_FORMAT " lies beyond the "
                      "data section of %" G_GUINT64_FORMAT " bytes (the file is truncated?)",
                      name, t->data_end, data_bytes);
        return FALSE;
    }
    return TRUE;
}

/* Checks one header entry and fills @t. @key_offset is the entry's offset in the file. */
static gboolean
read_entry(const char *path, const char *name, JsonNode *value, guint64 key_offset,
           guint64 data_bytes, RsSafetensorsTensor *t, GError **error)
{
    if (!JSON_NODE_HOLDS_OBJECT(value)) {
        set_malformed(error, path, key_offset,
                      "tensor \"%s\": expected an object with dtype, "
                      "shape and data_offsets",
                      name);
        return FALSE;
    }
    JsonObject *obj = json_node_get_object(value);
    const char *dtype;
    guint64 n_bytes;
    return read_entry_dtype(path, name, obj, key_offset, t, &dtype, error) &&
           read_entry_shape(path, name, obj, key_offset, t, &n_bytes, error) &&
           read_entry_offsets(path, name, obj, key_offset, dtype, n_bytes, data_bytes, t, error);
}

/* --- one file's header --- */

/* Reads the 8-byte little-endian header length from @f (a file of @file_bytes bytes) and
 * checks it against the limit and the file. */
static gboolean
read_header_length(FILE *f, const char *path, guint64 file_bytes, guint64 *header_bytes_out,
                   GError **error)
{
    guint8 len_bytes[8];
    if (file_bytes < 8 || fread(len_bytes, 1, 8, f) != 8) {
        set_malformed(error, path, 0,
                      "the file is %" G_GUINT64_FORMAT " bytes, shorter than "
                      "the 8-byte header length",
                      file_bytes);
        return FALSE;
    }
    guint64 header_bytes = 0;
    for (gint i = 7; i >= 0; i--)
        header_bytes = (header_bytes << 8) | len_bytes[i];
    if (header_bytes > RS_SAFETENSORS_MAX_HEADER_BYTES) {
        set_malformed(error, path, 0,
                      "header length %" G_GUINT64_FORMAT " exceeds the %" G_GUINT64_FORMAT
                      "-byte limit (not a safetensors file?)",
                      header_bytes, RS_SAFETENSORS_MAX_HEADER_BYTES);
        return FALSE;
    }
    if (header_bytes > file_bytes - 8) {
        set_malformed(error, path, 0,
                      "header length %" G_GUINT64_FORMAT " exceeds the %" G_GUINT64_FORMAT
                      " bytes after the length field",
                      header_bytes, file_bytes - 8);
        return FALSE;
    }
    *header_bytes_out = header_bytes;
    return TRUE;
}

/* Reads the 8-byte length and the header of @path. Returns: (transfer full): the header
 * text, NUL-terminated, with *@file_bytes_out the file's size and *@header_bytes_out the
 * header's length; NULL on error. */
static char *
read_header_text(const char *path, guint64 *file_bytes_out, guint64 *header_bytes_out,
                 GError **error)
{
    GStatBuf st;
    if (g_stat(path, &st) != 0) {
        g_set_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_IO, "%s: %s", path,
                    g_strerror(errno));
        return NULL;
    }
    /* A FIFO (or device) named by an index would block the read for ever. */
    if (!S_ISREG(st.st_mode)) {
        g_set_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_IO,
                    "%s: is not a regular file", path);
        return NULL;
    }
    FILE *f = g_fopen(path, "rb");
    if (f == NULL) {
        g_set_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_IO, "%s: %s", path,
                    g_strerror(errno));
        return NULL;
    }
    guint64 file_bytes = (guint64)st.st_size;
    guint64 header_bytes = 0;
    char *text = NULL;
    if (!read_header_length(f, path, file_bytes, &header_bytes, error))
        goto close_file;
    text = g_malloc(header_bytes + 1);
    if (fread(text, 1, header_bytes, f) != header_bytes) {
        g_set_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_IO,
                    "%s: could not read the %" G_GUINT64_FORMAT "-byte header", path, header_bytes);
        g_clear_pointer(&text, g_free);
        goto close_file;
    }
    text[header_bytes] = '\0';
    *file_bytes_out = file_bytes;
    *header_bytes_out = header_bytes;
close_file:
    fclose(f);
    return text;
}

/* Parses the JSON header @text of @header_bytes bytes. Returns: (transfer full): the
 * parser, its root an object; NULL with the byte offset of the fault in the file. */
static JsonParser *
parse_header_json(const char *path, const char *text, guint64 header_bytes, GError **error)
{
    /* A NUL inside the header would end the text json-glib sees early. */
    gsize nul = strlen(text);
    if (nul < header_bytes) {
        set_malformed(error, path, 8 + nul, "a NUL byte inside the JSON header");
        return NULL;
    }
    /* json-glib says only "must be UTF-8 encoded": name the byte. */
    gsize bad_offset;
    guint bad_line, bad_column;
    guchar bad_byte;
    gboolean bad_utf8;
    if (rs_text_find_bad(text, header_bytes, &bad_offset, &bad_line, &bad_column, &bad_byte,
                         &bad_utf8)) {
        set_malformed(error, path, 8 + bad_offset, "byte 0x%02x in the JSON header is not %s",
                      bad_byte, bad_utf8 ? "valid UTF-8" : "text (a control character)");
        return NULL;
    }
    RsJsonScanResult scan;
    if (!rs_json_scan(text, header_bytes, NULL, NULL, &scan)) {
        g_autofree char *what = rs_json_scan_describe(&scan, "JSON header");
        set_malformed(error, path, 8 + scan.offset, "%s", what);
        rs_json_scan_result_clear(&scan);
        return NULL;
    }
    rs_json_scan_result_clear(&scan);
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) json_error = NULL;
    if (!json_parser_load_from_data(parser, text, (gssize)header_bytes, &json_error)) {
        /* json-glib reports "<data>:LINE:COL: Parse error: …". */
        guint line = 1, column = 1;
        const char *at = strstr(json_error->message, "<data>:");
        if (at != NULL)
            sscanf(at, "<data>:%u:%u", &line, &column);
        const char *what = strstr(json_error->message, "Parse error: ");
        set_malformed(error, path, 8 + line_col_to_offset(text, header_bytes, line, column),
                      "the JSON header does not parse: %s",
                      what ? what + strlen("Parse error: ") : json_error->message);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root)) {
        set_malformed(error, path, 8, "the JSON header is not an object");
        return NULL;
    }
    return g_steal_pointer(&parser);
}

/* Returns: (transfer full) (element-type RsSafetensorsTensor): the entries of the header
 * object @obj (its text @text of @header_bytes, for key offsets) in header order, each
 * checked against the @data_bytes of the data section; NULL on error. */
static GPtrArray *
read_entries(const char *path, JsonObject *obj, const char *text, guint64 header_bytes,
             guint64 data_bytes, GError **error)
{
    g_autofree char *base = g_path_get_basename(path);
    g_autoptr(GPtrArray) tensors = g_ptr_array_new_with_free_func(tensor_free);
    g_autoptr(GList) members = json_object_get_members(obj);
    g_autoptr(GHashTable) keys = scan_top_level_keys(text, header_bytes);
    for (GList *l = members; l != NULL; l = l->next) {
        const char *name = l->data;
        JsonNode *value = json_object_get_member(obj, name);
        guint64 offset = 8 + key_offset(keys, name);
        if (strcmp(name, "__metadata__") == 0) {
            if (!JSON_NODE_HOLDS_OBJECT(value)) {
                set_malformed(error, path, offset, "__metadata__: expected an object");
                return NULL;
            }
            continue;
        }
        RsSafetensorsTensor *t = g_new0(RsSafetensorsTensor, 1);
        t->name = g_strdup(name);
        t->file = g_strdup(base);
        t->header_offset_bytes = offset;
        g_ptr_array_add(tensors, t);
        if (!read_entry(path, name, value, offset, data_bytes, t, error))
            return NULL;
    }
    return g_steal_pointer(&tensors);
}

/* Checks that @tensors, sorted by offset, tile the @data_bytes of the data section: sorted,
 * contiguous, no overlap, no holes (safetensors/src/tensor.rs validate(): InvalidOffset,
 * MetadataIncompleteBuffer). */
static gboolean
check_tiling(const char *path, GPtrArray *tensors, guint64 header_bytes, guint64 data_bytes,
             GError **error)
{
    guint64 expected = 0;
    for (guint i = 0; i < tensors->len; i++) {
        RsSafetensorsTensor *t = g_ptr_array_index(tensors, i);
        if (t->data_begin != expected) {
            set_malformed(error, path, t->header_offset_bytes,
                          "tensor \"%s\": data_offsets begin %" G_GUINT64_FORMAT " %s the "
                          "previous tensor's end %" G_GUINT64_FORMAT,
                          t->name, t->data_begin,
                          t->data_begin < expected ? "overlaps" : "leaves a hole after", expected);
            return FALSE;
        }
        expected = t->data_end;
    }
    if (expected != data_bytes) {
        set_malformed(error, path, 8 + header_bytes + expected,
                      "the data section has %" G_GUINT64_FORMAT " bytes, but the tensors "
                      "cover %" G_GUINT64_FORMAT,
                      data_bytes, expected);
        return FALSE;
    }
    return TRUE;
}

GPtrArray *
rs_safetensors_read_header(const char *path, GError **error)
{
    guint64 file_bytes = 0, header_bytes = 0;
    g_autofree char *text = read_header_text(path, &file_bytes, &header_bytes, error);
    if (text == NULL)
        return NULL;
    g_autoptr(JsonParser) parser = parse_header_json(path, text, header_bytes, error);
    if (parser == NULL)
        return NULL;
    guint64 data_bytes = file_bytes - 8 - header_bytes;
    JsonObject *obj = json_node_get_object(json_parser_get_root(parser));
    g_autoptr(GPtrArray) tensors =
        read_entries(path, obj, text, header_bytes, data_bytes, error);
    if (tensors == NULL)
        return NULL;
    g_ptr_array_sort(tensors, compare_by_offset);
    if (!check_tiling(path, tensors, header_bytes, data_bytes, error))
        return NULL;
    return g_steal_pointer(&tensors);
}

static gint
compare_strings(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --- a sharded checkpoint's index --- */

/* Returns: (transfer full): the parser of the index @path, its root holding a weight_map
 * object, which *@map_out borrows; NULL on error. */
static JsonParser *
parse_index(const char *path, JsonObject **map_out, GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) local = NULL;
    g_autofree char *text = NULL;
    gsize len = 0;
    if (g_file_get_contents(path, &text, &len, NULL) &&
        (!rs_text_check(text, len, path, "safetensors index", RS_SAFETENSORS_ERROR,
                        RS_SAFETENSORS_ERROR_MALFORMED, error) ||
         !rs_json_check(text, len, path, "safetensors index", RS_SAFETENSORS_ERROR,
                        RS_SAFETENSORS_ERROR_MALFORMED, error)))
        return NULL;
    if (!json_parser_load_from_file(parser, path, &local)) {
        gint code = g_error_matches(local, G_FILE_ERROR, G_FILE_ERROR_NOENT) ||
                            local->domain == G_FILE_ERROR
                        ? RS_SAFETENSORS_ERROR_IO
                        : RS_SAFETENSORS_ERROR_MALFORMED;
        g_set_error(error, RS_SAFETENSORS_ERROR, code, "%s: %s", path, local->message);
        return NULL;
    }
    JsonNode *root = json_parser_get_root(parser);
    JsonObject *obj = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
    JsonNode *map_node = obj ? json_object_get_member(obj, "weight_map") : NULL;
    if (map_node == NULL || !JSON_NODE_HOLDS_OBJECT(map_node)) {
        g_set_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_MALFORMED,
                    "%s: weight_map: expected an object mapping tensor names to shard files", path);
        return NULL;
    }
    *map_out = json_node_get_object(map_node);
    return g_steal_pointer(&parser);
}

/* Fills @shard_of (tensor name → shard file) from the weight map @map, whose member names
 * @names lists; keys and values borrow from @map. Fails for a shard that is not a plain file
 * name in the index's folder. Returns: (transfer container): the shard names, sorted. */
static GPtrArray *
map_shards(const char *path, JsonObject *map, GList *names, GHashTable *shard_of,
           GError **error)
{
    g_autoptr(GHashTable) shards = g_hash_table_new(g_str_hash, g_str_equal);
    for (GList *l = names; l != NULL; l = l->next) {
        JsonNode *file = json_object_get_member(map, l->data);
        if (!JSON_NODE_HOLDS_VALUE(file) || json_node_get_value_type(file) != G_TYPE_STRING) {
            g_set_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_MALFORMED,
                        "%s: weight_map: \"%s\": expected a shard file name", path,
                        (const char *)l->data);
            return NULL;
        }
        const char *shard = json_node_get_string(file);
        if (*shard == '\0' || g_path_is_absolute(shard) || strstr(shard, "..") != NULL) {
            g_set_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_MALFORMED,
                        "%s: weight_map: \"%s\": shard \"%s\" must be a file name in the "
                        "index's folder",
                        path, (const char *)l->data, shard);
            return NULL;
        }
        g_hash_table_insert(shard_of, l->data, (gpointer)shard);
        g_hash_table_add(shards, (gpointer)shard);
    }
    GPtrArray *shard_list = g_ptr_array_new();
    GHashTableIter iter;
    gpointer key;
    g_hash_table_iter_init(&iter, shards);
    while (g_hash_table_iter_next(&iter, &key, NULL))
        g_ptr_array_add(shard_list, key);
    g_ptr_array_sort(shard_list, compare_strings);
    return shard_list;
}

/* Reads the header of @shard (in @dir) and checks that the weight map places each of its
 * tensors there, removing them from @shard_of. Returns: (transfer full): its tensors. */
static GPtrArray *
read_shard(const char *path, const char *dir, const char *shard, GHashTable *shard_of,
           GError **error)
{
    g_autofree char *shard_path = g_build_filename(dir, shard, NULL);
    g_autoptr(GPtrArray) tensors = rs_safetensors_read_header(shard_path, error);
    if (tensors == NULL) {
        g_prefix_error(error, "%s: ", path);
        return NULL;
    }
    for (guint i = 0; i < tensors->len; i++) {
        RsSafetensorsTensor *t = g_ptr_array_index(tensors, i);
        const char *listed = g_hash_table_lookup(shard_of, t->name);
        if (listed == NULL || strcmp(listed, shard) != 0) {
            g_set_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_INDEX,
                        "%s: shard %s holds tensor \"%s\", which the weight map %s%s", path,
                        shard, t->name, listed ? "places in " : "does not list",
                        listed ? listed : "");
            return NULL;
        }
        g_hash_table_remove(shard_of, t->name);
    }
    return g_steal_pointer(&tensors);
}

/* An index parsed and its weight map checked: the shard of each tensor, the tensor names in
 * index order and the distinct shards, sorted. shard_of's and shard_list's strings live in
 * parser's document. */
typedef struct {
    JsonParser *parser;
    GHashTable *shard_of; /* tensor name → shard file name */
    GList *names;         /* tensor names, index order */
    GPtrArray *shard_list;
    char *dir; /* the index's folder */
} IndexMap;

static void
index_map_clear(IndexMap *im)
{
    g_clear_pointer(&im->shard_list, g_ptr_array_unref);
    g_clear_pointer(&im->names, g_list_free);
    g_clear_pointer(&im->shard_of, g_hash_table_unref);
    g_clear_object(&im->parser);
    g_clear_pointer(&im->dir, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(IndexMap, index_map_clear)

static gboolean
index_map_load(const char *path, IndexMap *im, GError **error)
{
    JsonObject *map = NULL;
    im->parser = parse_index(path, &map, error);
    if (im->parser == NULL)
        return FALSE;
    im->shard_of = g_hash_table_new(g_str_hash, g_str_equal);
    im->names = json_object_get_members(map);
    im->shard_list = map_shards(path, map, im->names, im->shard_of, error);
    im->dir = g_path_get_dirname(path);
    return im->shard_list != NULL;
}

GPtrArray *
rs_safetensors_read_index(const char *path, GError **error)
{
    g_auto(IndexMap) im = {0};
    if (!index_map_load(path, &im, error))
        return NULL;
    g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func(tensor_free);
    for (guint s = 0; s < im.shard_list->len; s++) {
        GPtrArray *tensors =
            read_shard(path, im.dir, g_ptr_array_index(im.shard_list, s), im.shard_of, error);
        if (tensors == NULL)
            return NULL;
        g_ptr_array_extend_and_steal(all, tensors);
    }
    /* Name the first missing tensor in index order, so the message is stable. */
    for (GList *l = im.names; l != NULL && g_hash_table_size(im.shard_of) > 0; l = l->next) {
        const char *shard = g_hash_table_lookup(im.shard_of, l->data);
        if (shard != NULL) {
            g_set_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_INDEX,
                        "%s: tensor \"%s\" of the weight map is missing from shard %s", path,
                        (const char *)l->data, shard);
            return NULL;
        }
    }
    return g_steal_pointer(&all);
}

char **
rs_safetensors_index_list_shards(const char *path, GError **error)
{
    g_auto(IndexMap) im = {0};
    if (!index_map_load(path, &im, error))
        return NULL;
    char **out = g_new0(char *, im.shard_list->len + 1);
    for (guint s = 0; s < im.shard_list->len; s++)
        out[s] = g_build_filename(im.dir, g_ptr_array_index(im.shard_list, s), NULL);
    return out;
}

GPtrArray *
rs_safetensors_read(const char *path, GError **error)
{
    if (g_str_has_suffix(path, ".json"))
        return rs_safetensors_read_index(path, error);
    return rs_safetensors_read_header(path, error);
}
