/* test-safetensors.c — safetensors headers and checkpoint imports.
 *
 * Files are written here: the 8-byte little-endian header length, the JSON header, and zero
 * data (sparse, so a checkpoint of a scaled model costs no disk). Malformed headers must be
 * rejected with the byte offset of the fault; a checkpoint written from each family's
 * generated tensors (experts split per expert, as checkpoints store them) must import to
 * the same tensor list, roles and totals. */
#include "layout/convention.h"
#include "base/data.h"
#include "models/model-load.h"
#include "plan/plan.h"
#include "layout/refit.h"
#include "models/safetensors.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h> /* mallinfo2() */
#endif

typedef struct {
    const char *name;
    const char *dtype; /* safetensors spelling */
    guint n_dims;
    gint64 shape[RS_MAX_DIMS];
} Entry;

static guint
dtype_bytes(const char *dtype)
{
    if (strcmp(dtype, "F64") == 0 || strcmp(dtype, "I64") == 0)
        return 8;
    if (strcmp(dtype, "F32") == 0 || strcmp(dtype, "I32") == 0)
        return 4;
    if (strcmp(dtype, "BF16") == 0 || strcmp(dtype, "F16") == 0)
        return 2;
    return 1;
}

/* Writes @header_json after its length, then @data_bytes zero bytes (a sparse tail). */
static void
write_raw(const char *path, const char *header_json, guint64 data_bytes)
{
    FILE *f = g_fopen(path, "wb");
    g_assert_nonnull(f);
    guint64 n = strlen(header_json);
    guint8 len[8];
    for (guint i = 0; i < 8; i++)
        len[i] = (guint8)(n >> (8 * i));
    g_assert_cmpuint(fwrite(len, 1, 8, f), ==, 8);
    g_assert_cmpuint(fwrite(header_json, 1, n, f), ==, n);
    g_assert_cmpint(fflush(f), ==, 0);
    g_assert_cmpint(ftruncate(fileno(f), (off_t)(8 + n + data_bytes)), ==, 0);
    fclose(f);
}

/* Builds the header of @entries laid out back to back, and writes the file. */
static void
write_safetensors(const char *path, const Entry *entries, guint n)
{
    GString *json = g_string_new("{\"__metadata__\": {\"format\": \"pt\"}");
    guint64 offset = 0;
    for (guint i = 0; i < n; i++) {
        guint64 elems = 1;
        g_string_append_printf(json, ", \"%s\": {\"dtype\": \"%s\", \"shape\": [", entries[i].name,
                               entries[i].dtype);
        for (guint d = 0; d < entries[i].n_dims; d++) {
            g_string_append_printf(json, "%s%" G_GINT64_FORMAT, d ? ", " : "", entries[i].shape[d]);
            elems *= (guint64)entries[i].shape[d];
        }
        guint64 end = offset + elems * dtype_bytes(entries[i].dtype);
        g_string_append_printf(
            json, "], \"data_offsets\": [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "]}", offset,
            end);
        offset = end;
    }
    g_string_append_c(json, '}');
    write_raw(path, json->str, offset);
    g_string_free(json, TRUE);
}

static char *
temp_dir(void)
{
    g_autoptr(GError) error = NULL;
    char *dir = g_dir_make_tmp("rs-st-XXXXXX", &error);
    g_assert_no_error(error);
    return dir;
}

static void
remove_tree(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;
    while (d != NULL && (name = g_dir_read_name(d)) != NULL) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        if (g_file_test(path, G_FILE_TEST_IS_DIR))
            remove_tree(path);
        else
            g_unlink(path);
    }
    g_rmdir(dir);
}

static void
assert_contains(const char *haystack, const char *needle)
{
    if (strstr(haystack, needle) == NULL)
        g_error("\"%s\" does not contain \"%s\"", haystack, needle);
}

/* --- the header reader --- */

static void
test_read_header(void)
{
    g_autofree char *dir = temp_dir();
    g_autofree char *path = g_build_filename(dir, "model.safetensors", NULL);
    const Entry entries[] = {
        {"b.weight", "BF16", 2, {4, 3}},    {"a.bias", "F32", 1, {2}},
        {"c.weight", "F8_E4M3", 2, {2, 2}}, {"c.weight_scale_inv", "F32", 2, {1, 1}},
        {"d.blocks", "U8", 3, {2, 1, 16}},  {"d.scales", "F8_E8M0", 2, {2, 1}},
        {"e.empty", "BF16", 2, {0, 5}},
    };
    write_safetensors(path, entries, G_N_ELEMENTS(entries));
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) tensors = rs_safetensors_read(path, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(tensors->len, ==, G_N_ELEMENTS(entries));
    /* In storage order, each with its exact dtype, shape and byte range. */
    const struct {
        RsDtype dtype;
        gboolean e8m0;
        guint64 begin, end;
    } expected[] = {
        {RS_DTYPE_BF16, FALSE, 0, 24},      {RS_DTYPE_F32, FALSE, 24, 32},
        {RS_DTYPE_FP8_E4M3, FALSE, 32, 36}, {RS_DTYPE_F32, FALSE, 36, 40},
        {RS_DTYPE_U8, FALSE, 40, 72},       {RS_DTYPE_U8, TRUE, 72, 74},
        {RS_DTYPE_BF16, FALSE, 74, 74},
    };
    for (guint i = 0; i < tensors->len; i++) {
        const RsSafetensorsTensor *t = g_ptr_array_index(tensors, i);
        g_assert_cmpstr(t->name, ==, entries[i].name);
        g_assert_cmpint(t->dtype, ==, expected[i].dtype);
        g_assert_cmpint(t->e8m0, ==, expected[i].e8m0);
        g_assert_cmpuint(t->n_dims, ==, entries[i].n_dims);
        for (guint d = 0; d < t->n_dims; d++)
            g_assert_cmpint(t->shape[d], ==, entries[i].shape[d]);
        g_assert_cmpuint(t->data_begin, ==, expected[i].begin);
        g_assert_cmpuint(t->data_end, ==, expected[i].end);
        g_assert_cmpstr(t->file, ==, "model.safetensors");
    }
    remove_tree(dir);
}

typedef struct {
    const char *what;
    const guint8 *bytes; /* a whole file, when header is NULL */
    gsize n_bytes;
    const char *header; /* else: this header after a correct length */
    guint64 data_bytes;
    gint code;
    const char *fragments[3];
} MalformedCase;

static const guint8 short_file[] = {1, 0, 0, 0, 0};
static const guint8 long_length[] = {0xe8, 0x03, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' '};
static const guint8 huge_length[] = {0, 0, 0, 0, 0, 1, 0, 0, '{', '}'};

static const MalformedCase malformed[] = {
    {"short",
     short_file,
     sizeof short_file,
     NULL,
     0,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 0:", "the file is 5 bytes, shorter than the 8-byte header length", NULL}},
    {"length past the end",
     long_length,
     sizeof long_length,
     NULL,
     0,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 0:", "header length 1000 exceeds the 4 bytes after the length field", NULL}},
    {"length over the limit",
     huge_length,
     sizeof huge_length,
     NULL,
     0,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 0:", "header length 1099511627776 exceeds the 100000000-byte limit", NULL}},
    /* The parser stops at the '}' where a value should be: byte 8 + 6. */
    {"bad JSON",
     NULL,
     0,
     "{\"t\": }",
     0,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 14:", "does not parse", NULL}},
    /* On the second line: the trailing comma at line 2, column 12 is byte 8 + 9 + 11. */
    {"bad JSON line 2",
     NULL,
     0,
     "{\"a\": 1,\n \"b\": [1, 2,]}",
     0,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 28:", NULL}},
    /* Nested past the limit: json-glib's recursive parser overflowed the stack at 100,000
     * levels (SIGSEGV); refused before it runs. */
    {"nested too deep",
     NULL,
     0,
     "{\"t\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
     0,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"the JSON header nests deeper than 64 levels", NULL}},
    /* json-glib keeps the last of a key given twice: the first tensor's bytes were then
     * reported as a hole. Byte 8 + 62: the second "t". */
    {"tensor given twice",
     NULL,
     0,
     "{\"t\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}, "
     "\"t\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}",
     8,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 70: t: field given twice (first at line 1, column 2)", NULL}},
    /* json-glib's scanner wraps integers past 64 bits: 2^64 + 4 read as 4, a valid end.
     * Byte 8 + 57: the number. */
    {"offset past 64 bits",
     NULL,
     0,
     "{\"t\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 18446744073709551620]}}",
     4,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 65: t.data_offsets.1: the integer 18446744073709551620 is outside the "
      "64-bit range",
      NULL}},
    {"root not an object",
     NULL,
     0,
     "[1, 2]",
     0,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 8: the JSON header is not an object", NULL}},
    {"unknown dtype",
     NULL,
     0,
     "{\"t\": {\"dtype\": \"F4\", \"shape\": [2], \"data_offsets\": [0, 1]}}",
     1,
     RS_SAFETENSORS_ERROR_DTYPE,
     {"byte offset 9: tensor \"t\": dtype \"F4\" is not supported", NULL}},
    {"negative shape",
     NULL,
     0,
     "{\"t\": {\"dtype\": \"F32\", \"shape\": [-2], \"data_offsets\": [0, 8]}}",
     8,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 9: tensor \"t\": shape[0]: expected a non-negative integer", NULL}},
    {"no dtype",
     NULL,
     0,
     "{\"t\": {\"shape\": [2], \"data_offsets\": [0, 8]}}",
     8,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 9: tensor \"t\": dtype: expected a string", NULL}},
    {"wrong byte count",
     NULL,
     0,
     "{\"t\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 5]}}",
     5,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 9:", "hold 5 bytes, but shape × F32 is 4 bytes", NULL}},
    {"beyond the file",
     NULL,
     0,
     "{\"t\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}",
     8,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 9:", "end 16 lies beyond the data section of 8 bytes", NULL}},
    {"hole",
     NULL,
     0,
     "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]},\n"
     " \"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [8, 12]}}",
     12,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 71: tensor \"b\": data_offsets begin 8 leaves a hole after the previous "
      "tensor's end 4",
      NULL}},
    {"overlap",
     NULL,
     0,
     "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 8]},\n"
     " \"b\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}",
     8,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 71: tensor \"b\":", "overlaps", NULL}},
    /* 4 bytes of tensor data, 8 in the file: the first stray byte is 8 + 61 + 4. */
    {"trailing bytes",
     NULL,
     0,
     "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}",
     8,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 73: the data section has 8 bytes, but the tensors cover 4", NULL}},
    {"entry not an object",
     NULL,
     0,
     "{\"t\": 3}",
     0,
     RS_SAFETENSORS_ERROR_MALFORMED,
     {"byte offset 9: tensor \"t\": expected an object", NULL}},
};

static void
test_malformed(gconstpointer data)
{
    const MalformedCase *c = data;
    g_autofree char *dir = temp_dir();
    g_autofree char *path = g_build_filename(dir, "bad.safetensors", NULL);
    if (c->header != NULL)
        write_raw(path, c->header, c->data_bytes);
    else
        g_assert_true(g_file_set_contents(path, (const char *)c->bytes, (gssize)c->n_bytes, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) tensors = rs_safetensors_read(path, &error);
    g_assert_null(tensors);
    g_assert_error(error, RS_SAFETENSORS_ERROR, c->code);
    assert_contains(error->message, path);
    for (guint i = 0; i < G_N_ELEMENTS(c->fragments) && c->fragments[i] != NULL; i++)
        assert_contains(error->message, c->fragments[i]);
    /* The model loader reports the same error. */
    g_clear_error(&error);
    g_autoptr(RsModel) m = rs_model_load_file(path, NULL, &error);
    g_assert_null(m);
    g_assert_error(error, RS_SAFETENSORS_ERROR, c->code);
    remove_tree(dir);
}

/* --- sharded checkpoints --- */

static void
test_index(void)
{
    g_autofree char *dir = temp_dir();
    g_autofree char *s1 = g_build_filename(dir, "model-00001-of-00002.safetensors", NULL);
    g_autofree char *s2 = g_build_filename(dir, "model-00002-of-00002.safetensors", NULL);
    g_autofree char *index = g_build_filename(dir, "model.safetensors.index.json", NULL);
    const Entry e1[] = {{"model.embed_tokens.weight", "BF16", 2, {16, 8}},
                        {"model.layers.0.input_layernorm.weight", "BF16", 1, {8}}};
    const Entry e2[] = {{"model.norm.weight", "BF16", 1, {8}},
                        {"lm_head.weight", "BF16", 2, {16, 8}}};
    write_safetensors(s1, e1, 2);
    write_safetensors(s2, e2, 2);
    const char *map =
        "{\"metadata\": {\"total_size\": 544}, \"weight_map\": {\n"
        " \"lm_head.weight\": \"model-00002-of-00002.safetensors\",\n"
        " \"model.embed_tokens.weight\": \"model-00001-of-00002.safetensors\",\n"
        " \"model.layers.0.input_layernorm.weight\": \"model-00001-of-00002.safetensors\",\n"
        " \"model.norm.weight\": \"model-00002-of-00002.safetensors\"}}";
    g_assert_true(g_file_set_contents(index, map, -1, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) tensors = rs_safetensors_read(index, &error);
    g_assert_no_error(error);
    const char *order[] = {"model.embed_tokens.weight", "model.layers.0.input_layernorm.weight",
                           "model.norm.weight", "lm_head.weight"};
    g_assert_cmpuint(tensors->len, ==, 4);
    for (guint i = 0; i < 4; i++) {
        const RsSafetensorsTensor *t = g_ptr_array_index(tensors, i);
        g_assert_cmpstr(t->name, ==, order[i]);
        g_assert_cmpstr(t->file, ==,
                        i < 2 ? "model-00001-of-00002.safetensors"
                              : "model-00002-of-00002.safetensors");
    }

    /* Checkpoint names are paths for rs_data_find, with or without a folder. */
    g_autofree char *found = rs_data_find("models", index, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(found, ==, index);
    g_autofree char *shard = rs_data_find("models", s1, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(shard, ==, s1);
    g_autofree char *nosuch = rs_data_find("models", "nosuch.safetensors", &error);
    g_assert_null(nosuch);
    g_assert_error(error, RS_DATA_ERROR, RS_DATA_ERROR_NOT_FOUND);
    assert_contains(error->message, "model file \"nosuch.safetensors\": not found");
    g_clear_error(&error);
    g_autofree char *nosuch_index = rs_data_find("models", "m.safetensors.index.json", &error);
    g_assert_null(nosuch_index);
    g_assert_error(error, RS_DATA_ERROR, RS_DATA_ERROR_NOT_FOUND);
    g_clear_error(&error);

    /* A weight map that names a tensor no shard holds, and a shard tensor it does not list. */
    const char *missing =
        "{\"weight_map\": {\"model.norm.weight\": \"model-00002-of-00002.safetensors\",\n"
        " \"lm_head.weight\": \"model-00002-of-00002.safetensors\",\n"
        " \"model.extra.weight\": \"model-00002-of-00002.safetensors\"}}";
    g_assert_true(g_file_set_contents(index, missing, -1, NULL));
    g_autoptr(GPtrArray) none = rs_safetensors_read(index, &error);
    g_assert_null(none);
    g_assert_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_INDEX);
    assert_contains(error->message, "tensor \"model.extra.weight\" of the weight map is missing "
                                    "from shard model-00002-of-00002.safetensors");
    g_clear_error(&error);
    const char *unlisted =
        "{\"weight_map\": {\"model.norm.weight\": \"model-00002-of-00002.safetensors\"}}";
    g_assert_true(g_file_set_contents(index, unlisted, -1, NULL));
    g_autoptr(GPtrArray) none2 = rs_safetensors_read(index, &error);
    g_assert_null(none2);
    g_assert_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_INDEX);
    assert_contains(error->message, "holds tensor \"lm_head.weight\", which the weight map does "
                                    "not list");
    g_clear_error(&error);
    /* A shard that is not there: the index names it. */
    const char *gone = "{\"weight_map\": {\"x\": \"model-00003-of-00003.safetensors\"}}";
    g_assert_true(g_file_set_contents(index, gone, -1, NULL));
    g_autoptr(GPtrArray) none3 = rs_safetensors_read(index, &error);
    g_assert_null(none3);
    g_assert_error(error, RS_SAFETENSORS_ERROR, RS_SAFETENSORS_ERROR_IO);
    assert_contains(error->message, index);
    assert_contains(error->message, "model-00003-of-00003.safetensors");
    remove_tree(dir);
}

/* --- imports --- */

typedef struct {
    const char *name;
    guint n_dims;
    gint64 shape[RS_MAX_DIMS];
    RsDtype dtype;
    RsTensorRole role;
    gint layer;
    guint64 params;
    guint n_heads;
    gboolean kv;
} ImportedTensor;

/* A small DeepSeek-style checkpoint: FP8 layer linears with block scales, per-expert
 * tensors, a score bias, an MTP layer, a rotary buffer; config.json beside it. */
static void
test_import(void)
{
    g_autofree char *dir = temp_dir();
    g_autofree char *path = g_build_filename(dir, "model.safetensors", NULL);
    g_autofree char *config = g_build_filename(dir, "config.json", NULL);
    GArray *entries = g_array_new(FALSE, TRUE, sizeof(Entry));
    const Entry fixed[] = {
        {"model.embed_tokens.weight", "BF16", 2, {32, 16}},
        {"model.layers.0.input_layernorm.weight", "BF16", 1, {16}},
        {"model.layers.0.self_attn.q_proj.weight", "F8_E4M3", 2, {16, 16}},
        {"model.layers.0.self_attn.q_proj.weight_scale_inv", "F32", 2, {1, 1}},
        {"model.layers.0.self_attn.k_proj.weight", "BF16", 2, {8, 16}},
        {"model.layers.0.self_attn.v_proj.weight", "BF16", 2, {8, 16}},
        {"model.layers.0.self_attn.o_proj.weight", "BF16", 2, {16, 16}},
        {"model.layers.0.self_attn.rotary_emb.inv_freq", "F32", 1, {2}},
        {"model.layers.0.mlp.gate.weight", "BF16", 2, {4, 16}},
        {"model.layers.0.mlp.gate.e_score_correction_bias", "F32", 1, {4}},
    };
    g_array_append_vals(entries, fixed, G_N_ELEMENTS(fixed));
    /* Experts 0..3, stored in shuffled order: 2, 0, 3, 1. */
    const gint order[] = {2, 0, 3, 1};
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    for (guint k = 0; k < 4; k++) {
        const char *proj[] = {"gate_proj", "up_proj", "down_proj"};
        for (guint p = 0; p < 3; p++) {
            char *w = g_strdup_printf("model.layers.0.mlp.experts.%d.%s.weight", order[k], proj[p]);
            char *s = g_strdup_printf("model.layers.0.mlp.experts.%d.%s.weight_scale_inv", order[k],
                                      proj[p]);
            g_ptr_array_add(names, w);
            g_ptr_array_add(names, s);
            Entry ew = {w, "F8_E4M3", 2, {p < 2 ? 8 : 16, p < 2 ? 16 : 8}};
            Entry es = {s, "F32", 2, {1, 1}};
            g_array_append_val(entries, ew);
            g_array_append_val(entries, es);
        }
    }
    const Entry tail[] = {
        {"model.layers.0.post_attention_layernorm.weight", "BF16", 1, {16}},
        {"model.layers.1.eh_proj.weight", "BF16", 2, {16, 32}},
        {"model.layers.1.embed_tokens.weight", "BF16", 2, {32, 16}},
        {"model.norm.weight", "BF16", 1, {16}},
        {"lm_head.weight", "BF16", 2, {32, 16}},
    };
    g_array_append_vals(entries, tail, G_N_ELEMENTS(tail));
    write_safetensors(path, (const Entry *)entries->data, entries->len);
    g_array_unref(entries);
    g_assert_true(
        g_file_set_contents(config,
                            "{\"model_type\": \"deepseek_v3\", \"num_hidden_layers\": 1,\n"
                            " \"num_attention_heads\": 4, \"num_key_value_heads\": 2,\n"
                            " \"num_experts_per_tok\": 2, \"torch_dtype\": \"bfloat16\"}",
                            -1, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(RsModel) m = rs_model_load_file(path, NULL, &error);
    g_assert_no_error(error);
    const ImportedTensor expected[] = {
        {"model.embed_tokens.weight",
         2,
         {32, 16},
         RS_DTYPE_BF16,
         RS_ROLE_VOCAB_PARALLEL,
         -1,
         512,
         0,
         FALSE},
        {"model.layers.0.input_layernorm.weight",
         1,
         {16},
         RS_DTYPE_BF16,
         RS_ROLE_NORM,
         0,
         16,
         0,
         FALSE},
        {"model.layers.0.self_attn.q_proj.weight",
         2,
         {16, 16},
         RS_DTYPE_FP8_E4M3,
         RS_ROLE_COLUMN_PARALLEL,
         0,
         256,
         4,
         FALSE},
        {"model.layers.0.self_attn.q_proj.weight_scale_inv",
         2,
         {1, 1},
         RS_DTYPE_F32,
         RS_ROLE_COLUMN_PARALLEL,
         0,
         0,
         4,
         FALSE},
        {"model.layers.0.self_attn.k_proj.weight",
         2,
         {8, 16},
         RS_DTYPE_BF16,
         RS_ROLE_COLUMN_PARALLEL,
         0,
         128,
         2,
         TRUE},
        {"model.layers.0.self_attn.v_proj.weight",
         2,
         {8, 16},
         RS_DTYPE_BF16,
         RS_ROLE_COLUMN_PARALLEL,
         0,
         128,
         2,
         TRUE},
        {"model.layers.0.self_attn.o_proj.weight",
         2,
         {16, 16},
         RS_DTYPE_BF16,
         RS_ROLE_ROW_PARALLEL,
         0,
         256,
         0,
         FALSE},
        {"model.layers.0.mlp.gate.weight",
         2,
         {4, 16},
         RS_DTYPE_BF16,
         RS_ROLE_ROUTER,
         0,
         64,
         0,
         FALSE},
        {"model.layers.0.mlp.gate.e_score_correction_bias",
         1,
         {4},
         RS_DTYPE_F32,
         RS_ROLE_ROUTER,
         0,
         4,
         0,
         FALSE},
        {"model.layers.0.mlp.experts.gate_proj.weight",
         3,
         {4, 8, 16},
         RS_DTYPE_FP8_E4M3,
         RS_ROLE_EXPERT_COLUMN,
         0,
         512,
         0,
         FALSE},
        {"model.layers.0.mlp.experts.gate_proj.weight_scale_inv",
         3,
         {4, 1, 1},
         RS_DTYPE_F32,
         RS_ROLE_EXPERT_COLUMN,
         0,
         0,
         0,
         FALSE},
        {"model.layers.0.mlp.experts.up_proj.weight",
         3,
         {4, 8, 16},
         RS_DTYPE_FP8_E4M3,
         RS_ROLE_EXPERT_COLUMN,
         0,
         512,
         0,
         FALSE},
        {"model.layers.0.mlp.experts.up_proj.weight_scale_inv",
         3,
         {4, 1, 1},
         RS_DTYPE_F32,
         RS_ROLE_EXPERT_COLUMN,
         0,
         0,
         0,
         FALSE},
        {"model.layers.0.mlp.experts.down_proj.weight",
         3,
         {4, 16, 8},
         RS_DTYPE_FP8_E4M3,
         RS_ROLE_EXPERT_ROW,
         0,
         512,
         0,
         FALSE},
        {"model.layers.0.mlp.experts.down_proj.weight_scale_inv",
         3,
         {4, 1, 1},
         RS_DTYPE_F32,
         RS_ROLE_EXPERT_ROW,
         0,
         0,
         0,
         FALSE},
        {"model.layers.0.post_attention_layernorm.weight",
         1,
         {16},
         RS_DTYPE_BF16,
         RS_ROLE_NORM,
         0,
         16,
         0,
         FALSE},
        {"model.norm.weight", 1, {16}, RS_DTYPE_BF16, RS_ROLE_NORM, 1, 16, 0, FALSE},
        {"lm_head.weight", 2, {32, 16}, RS_DTYPE_BF16, RS_ROLE_VOCAB_PARALLEL, 1, 512, 0, FALSE},
    };
    g_assert_cmpuint(rs_model_get_n_tensors(m), ==, G_N_ELEMENTS(expected));
    for (guint i = 0; i < G_N_ELEMENTS(expected); i++) {
        const RsTensorSpec *t = rs_model_get_tensor(m, i);
        g_assert_cmpstr(t->name, ==, expected[i].name);
        g_assert_cmpuint(t->n_dims, ==, expected[i].n_dims);
        for (guint d = 0; d < t->n_dims; d++)
            g_assert_cmpint(t->shape[d], ==, expected[i].shape[d]);
        g_assert_cmpint(t->dtype, ==, expected[i].dtype);
        g_assert_cmpint(t->role, ==, expected[i].role);
        g_assert_cmpint(t->layer, ==, expected[i].layer);
        g_assert_cmpuint(rs_tensor_spec_get_n_params(t), ==, expected[i].params);
        g_assert_cmpuint(t->n_heads, ==, expected[i].n_heads);
        g_assert_cmpint(t->kv_heads, ==, expected[i].kv);
    }
    g_autofree char *base = g_path_get_basename(dir);
    g_assert_cmpstr(rs_model_get_name(m), ==, base);
    g_assert_cmpstr(rs_model_get_family(m), ==, "deepseek_v3");
    g_assert_cmpint(rs_model_get_storage(m), ==, RS_MODEL_STORAGE_CHECKPOINT);
    g_assert_cmpuint(rs_model_get_n_layers(m), ==, 1);
    /* 3,444 parameters, scales and the rotary buffer not counted; the experts hold
     * 3 × 4 × 128, of which 2 experts of 4 (3 × 128 each) are active. */
    g_assert_cmpuint(rs_model_get_n_params(m), ==, 3444);
    g_assert_cmpuint(rs_model_get_n_active_params(m), ==, 3444 - 2 * 3 * 128);

    /* With MTP: layer 1 (beyond num_hidden_layers) joins. */
    RsModelOptions mtp = {.include_mtp = TRUE};
    g_autoptr(RsModel) with_mtp = rs_model_load_file(path, &mtp, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_model_get_n_tensors(with_mtp), ==, G_N_ELEMENTS(expected) + 2);
    const RsTensorSpec *eh = rs_model_get_tensor(
        with_mtp, (guint)rs_model_find_tensor(with_mtp, "model.layers.1.eh_proj.weight"));
    g_assert_cmpint(eh->layer, ==, 1);
    g_assert_cmpint(eh->role, ==, RS_ROLE_REPLICATED);

    /* A layer range keeps layer 0 only. */
    RsModelOptions range = {.has_layer_range = TRUE, .first_layer = 0, .last_layer = 0};
    g_autoptr(RsModel) layer0 = rs_model_load_file(path, &range, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_model_get_n_tensors(layer0), ==, G_N_ELEMENTS(expected) - 3);
    remove_tree(dir);
}

static void
write_one(const char *dir, const Entry *entries, guint n)
{
    g_autofree char *path = g_build_filename(dir, "model.safetensors", NULL);
    write_safetensors(path, entries, n);
}

/* A fused gate_up_proj imports as [gate; up] halves of its output dim: the last of
 * Llama-4's [E, in, out], dim 1 of Qwen3.5's [E, out, in]; an odd extent there cannot be
 * halves and is held whole over tp (expert-replicated). */
static void
test_import_gate_up_fused(void)
{
    g_autofree char *dir = temp_dir();
    g_autofree char *path = g_build_filename(dir, "model.safetensors", NULL);
    const Entry entries[] = {
        {"language_model.model.layers.0.feed_forward.experts.gate_up_proj", "BF16", 3, {4, 2, 6}},
        {"model.language_model.layers.0.mlp.experts.gate_up_proj", "BF16", 3, {4, 10, 2}},
        {"model.language_model.layers.1.mlp.experts.gate_up_proj", "BF16", 3, {4, 3, 2}},
    };
    write_one(dir, entries, G_N_ELEMENTS(entries));
    g_autoptr(GError) error = NULL;
    g_autoptr(RsModel) m = rs_model_load_file(path, NULL, &error);
    g_assert_no_error(error);
    const guint dims[] = {2, 1, 0};
    const gint64 halves[] = {3, 5, 0};
    for (guint i = 0; i < G_N_ELEMENTS(entries); i++) {
        const RsTensorSpec *t =
            rs_model_get_tensor(m, (guint)rs_model_find_tensor(m, entries[i].name));
        if (dims[i] == 0) {
            g_assert_cmpint(t->role, ==, RS_ROLE_EXPERT_REPLICATED);
            g_assert_cmpuint(t->n_segments, ==, 0);
            continue;
        }
        g_assert_cmpint(t->role, ==, RS_ROLE_EXPERT_GATE_UP_FUSED);
        g_assert_cmpuint(t->segment_dim, ==, dims[i]);
        g_assert_cmpuint(t->n_segments, ==, 2);
        g_assert_cmpint(t->segments[0], ==, halves[i]);
        g_assert_cmpint(t->segments[1], ==, halves[i]);
    }
    remove_tree(dir);
}

static void
test_import_errors(void)
{
    g_autofree char *dir = temp_dir();
    g_autofree char *path = g_build_filename(dir, "model.safetensors", NULL);
    struct {
        Entry entries[3];
        guint n;
        gint code;
        const char *fragment;
    } cases[] = {
        {{{"model.layers.0.mlp.experts.0.w1.weight", "BF16", 2, {2, 2}},
          {"model.layers.0.mlp.experts.2.w1.weight", "BF16", 2, {2, 2}}},
         2,
         RS_MODEL_ERROR_CONFIG,
         "experts of \"model.layers.0.mlp.experts.w1.weight\": ids run to 2 but expert 1 is "
         "missing"},
        {{{"model.layers.0.mlp.experts.0.w1.weight", "BF16", 2, {2, 2}},
          {"model.layers.0.mlp.experts.1.w1.weight", "BF16", 2, {2, 3}}},
         2,
         RS_MODEL_ERROR_CONFIG,
         "tensor \"model.layers.0.mlp.experts.1.w1.weight\": its shape or dtype differs"},
        {{{"model.layers.0.mixer.in_proj.weight", "BF16", 2, {2, 2}}},
         1,
         RS_MODEL_ERROR_ROLE,
         "tensor \"model.layers.0.mixer.in_proj.weight\": no rule gives it a role"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        write_one(dir, cases[i].entries, cases[i].n);
        g_autoptr(GError) error = NULL;
        g_autoptr(RsModel) m = rs_model_load_file(path, NULL, &error);
        g_assert_null(m);
        g_assert_error(error, RS_MODEL_ERROR, cases[i].code);
        assert_contains(error->message, cases[i].fragment);
        assert_contains(error->message, path);
    }
    remove_tree(dir);
}

/* This binary, for tests that rerun one of their cases in a fresh process. */
static const char *self_path;

/* Importing a checkpoint whose experts are stacked, then freeing the model, gives back
 * every byte: the sets of expert ids once kept their keys (8 bytes an expert tensor)
 * forever. Measured with glibc's count of bytes in use (mallinfo2), in a copy of this binary
 * started with the per-thread cache off (GLIBC_TUNABLES, read at start-up), since cached
 * free chunks count as in use; a warm-up load makes the one-time allocations (GLib types,
 * quarks). g_spawn_sync, unlike g_test_trap_subprocess, starts no helper thread, so the
 * binary stays clean under valgrind. */
static void
test_import_frees_memory(void)
{
#ifdef __GLIBC__
    if (g_getenv("RS_TEST_MEASURE_MEMORY") == NULL) {
        g_auto(GStrv) env = g_get_environ();
        env = g_environ_setenv(env, "GLIBC_TUNABLES", "glibc.malloc.tcache_count=0", TRUE);
        env = g_environ_setenv(env, "RS_TEST_MEASURE_MEMORY", "1", TRUE);
        const char *argv[] = {self_path, "-p", "/safetensors/import-frees-memory", NULL};
        g_autofree char *out = NULL, *err = NULL;
        gint status = 0;
        g_autoptr(GError) error = NULL;
        g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                     &error);
        g_assert_no_error(error);
        if (!g_spawn_check_wait_status(status, &error))
            g_error("the measuring run failed: %s\n%s%s", error->message, out, err);
        return;
    }
    g_autofree char *dir = temp_dir();
    g_autofree char *path = g_build_filename(dir, "model.safetensors", NULL);
    const Entry entries[] = {
        {"model.layers.0.mlp.experts.0.w1.weight", "BF16", 2, {2, 2}},
        {"model.layers.0.mlp.experts.1.w1.weight", "BF16", 2, {2, 2}},
        {"model.layers.0.mlp.experts.2.w1.weight", "BF16", 2, {2, 2}},
        {"model.layers.0.mlp.experts.3.w1.weight", "BF16", 2, {2, 2}},
    };
    write_one(dir, entries, G_N_ELEMENTS(entries));
    g_autoptr(GError) error = NULL;
    RsModel *m = rs_model_load_file(path, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_model_get_n_tensors(m), ==, 1);
    rs_model_free(m);
    struct mallinfo2 before = mallinfo2();
    for (guint i = 0; i < 8; i++) {
        m = rs_model_load_file(path, NULL, &error);
        g_assert_no_error(error);
        rs_model_free(m);
    }
    struct mallinfo2 after = mallinfo2();
    g_assert_cmpuint(after.uordblks, ==, before.uordblks);
    remove_tree(dir);
#else
    g_test_skip("needs glibc's mallinfo2()");
#endif
}

/* A model YAML that points at a checkpoint and overrides the rules. */
static void
test_yaml_roles(void)
{
    g_autofree char *dir = temp_dir();
    g_autofree char *ckpt_dir = g_build_filename(dir, "ckpt", NULL);
    g_assert_cmpint(g_mkdir(ckpt_dir, 0700), ==, 0);
    const Entry entries[] = {
        {"model.layers.0.mixer.in_proj.weight", "BF16", 2, {8, 4}},
        {"model.layers.0.mixer.out_proj.weight", "BF16", 2, {4, 8}},
        {"model.layers.0.mixer.dt_scale", "F32", 1, {2}},
        {"model.layers.0.mlp.down_proj.weight", "BF16", 2, {4, 8}},
    };
    write_one(ckpt_dir, entries, G_N_ELEMENTS(entries));
    g_autofree char *yaml = g_build_filename(dir, "m.yaml", NULL);
    g_assert_true(g_file_set_contents(yaml,
                                      "name: Mixer\n"
                                      "safetensors: ckpt/model.safetensors\n"
                                      "num_hidden_layers: 1\n"
                                      "roles:\n"
                                      "  \"*.mixer.in_proj.weight\": column-parallel heads=2\n"
                                      "  \"*.mixer.dt_scale\": skip\n"
                                      "  \"*.mlp.down_proj.weight\": replicated\n",
                                      -1, NULL));
    g_autoptr(GError) error = NULL;
    g_autoptr(RsModel) m = rs_model_load_file(yaml, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpstr(rs_model_get_name(m), ==, "Mixer");
    g_assert_cmpuint(rs_model_get_n_tensors(m), ==, 3);
    const RsTensorSpec *in = rs_model_get_tensor(m, 0);
    g_assert_cmpstr(in->name, ==, "model.layers.0.mixer.in_proj.weight");
    g_assert_cmpint(in->role, ==, RS_ROLE_COLUMN_PARALLEL);
    g_assert_cmpuint(in->n_heads, ==, 2);
    /* The built-in rule for out_proj still applies; the user rule beats the one for
     * down_proj. */
    g_assert_cmpint(rs_model_get_tensor(m, 1)->role, ==, RS_ROLE_ROW_PARALLEL);
    g_assert_cmpint(rs_model_get_tensor(m, 2)->role, ==, RS_ROLE_REPLICATED);
    for (guint i = 0; i < rs_model_get_n_warnings(m); i++)
        g_assert_null(strstr(rs_model_get_warning(m, i), "roles."));

    /* A rule that no tensor matches did nothing, silently: a warning names it. */
    g_assert_true(g_file_set_contents(yaml,
                                      "name: Mixer\nsafetensors: ckpt/model.safetensors\n"
                                      "num_hidden_layers: 1\n"
                                      "roles:\n"
                                      "  \"*.mixer.in_proj.weight\": column-parallel heads=2\n"
                                      "  \"*.mixer.dt_scale\": skip\n"
                                      "  \"*.mlp.down_projj.weight\": replicated\n",
                                      -1, NULL));
    g_autoptr(RsModel) typo = rs_model_load_file(yaml, NULL, &error);
    g_assert_no_error(error);
    gboolean warned = FALSE;
    for (guint i = 0; i < rs_model_get_n_warnings(typo); i++)
        warned |= g_str_has_suffix(rs_model_get_warning(typo, i),
                                   "m.yaml:7:30: roles.*.mlp.down_projj.weight: matches no "
                                   "tensor of the checkpoint (a typo?)");
    g_assert_true(warned);

    g_assert_true(g_file_set_contents(yaml,
                                      "name: Mixer\nsafetensors: ckpt/model.safetensors\n"
                                      "roles:\n  \"*.mixer.in_proj.weight\": diagonal\n",
                                      -1, NULL));
    g_autoptr(RsModel) bad = rs_model_load_file(yaml, NULL, &error);
    g_assert_null(bad);
    g_assert_error(error, RS_MODEL_ERROR, RS_MODEL_ERROR_CONFIG);
    assert_contains(error->message, "m.yaml:4:29: roles.*.mixer.in_proj.weight: unknown role "
                                    "\"diagonal\"");
    remove_tree(dir);
}

/* --- a checkpoint of each family imports to the generated model --- */

/* Writes @m as a checkpoint: grouped experts split into experts.{e}.NAME as the published
 * checkpoints hold them (gpt-oss keeps its fused per-layer tensors). */
static void
write_model_checkpoint(const RsModel *m, const char *path)
{
    GArray *entries = g_array_new(FALSE, TRUE, sizeof(Entry));
    g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
    for (guint i = 0; i < rs_model_get_n_tensors(m); i++) {
        const RsTensorSpec *t = rs_model_get_tensor(m, i);
        const char *dtype = t->dtype == RS_DTYPE_U8 && t->format == RS_TENSOR_FORMAT_SCALE &&
                                    strstr(t->name, "weight_scale") != NULL
                                ? "F8_E8M0"
                                : rs_safetensors_dtype_name(t->dtype);
        const char *experts = strstr(t->name, ".experts.");
        const char *rest = experts ? experts + strlen(".experts.") : NULL;
        if (rest != NULL && strchr(rest, '.') != NULL) {
            for (gint64 e = 0; e < t->shape[0]; e++) {
                char *name = g_strdup_printf("%.*s.experts.%" G_GINT64_FORMAT ".%s",
                                             (int)(experts - t->name), t->name, e, rest);
                g_ptr_array_add(names, name);
                Entry entry = {name, dtype, t->n_dims - 1, {0}};
                memcpy(entry.shape, t->shape + 1, sizeof(gint64) * (t->n_dims - 1));
                g_array_append_val(entries, entry);
            }
            continue;
        }
        Entry entry = {t->name, dtype, t->n_dims, {0}};
        memcpy(entry.shape, t->shape, sizeof(gint64) * t->n_dims);
        g_array_append_val(entries, entry);
    }
    write_safetensors(path, (const Entry *)entries->data, entries->len);
    g_array_unref(entries);
}

typedef struct {
    const char *id;
    guint scale;
    gint last_layer; /* -1: the whole model (embedding, head and MTP layers included) */
} RoundTrip;

static void
test_round_trip(gconstpointer data)
{
    const RoundTrip *c = data;
    g_autoptr(GError) error = NULL;
    g_autofree char *yaml = rs_data_find("models", c->id, &error);
    RsModelOptions options = {
        .scale = c->scale, .include_mtp = TRUE, .storage = RS_MODEL_STORAGE_CHECKPOINT};
    if (c->last_layer >= 0) {
        options.has_layer_range = TRUE;
        options.first_layer = 0;
        options.last_layer = c->last_layer;
    }
    g_autoptr(RsModel) generated = rs_model_load_file(yaml, &options, &error);
    g_assert_no_error(error);
    g_autofree char *dir = temp_dir();
    g_autofree char *path = g_build_filename(dir, "model.safetensors", NULL);
    write_model_checkpoint(generated, path);
    g_autofree char *config = g_build_filename(dir, "config.json", NULL);
    g_autofree char *config_text = g_strdup_printf(
        "{\"num_hidden_layers\": %u, \"num_experts_per_tok\": %u}",
        rs_model_get_n_layers(generated), rs_model_get_n_experts_per_token(generated));
    g_assert_true(g_file_set_contents(config, config_text, -1, NULL));

    RsModelOptions import = {.include_mtp = TRUE};
    g_autoptr(RsModel) imported = rs_model_load_file(path, &import, &error);
    g_assert_no_error(error);
    guint64 padded_params = 0;
    g_assert_cmpuint(rs_model_get_n_tensors(imported), ==, rs_model_get_n_tensors(generated));
    for (guint i = 0; i < rs_model_get_n_tensors(generated); i++) {
        const RsTensorSpec *g = rs_model_get_tensor(generated, i);
        const RsTensorSpec *t = rs_model_get_tensor(imported, i);
        g_assert_cmpstr(t->name, ==, g->name);
        g_assert_cmpuint(t->n_dims, ==, g->n_dims);
        for (guint d = 0; d < g->n_dims; d++)
            g_assert_cmpint(t->shape[d], ==, g->shape[d]);
        g_assert_cmpint(t->dtype, ==, g->dtype);
        if (t->role != g->role)
            g_error("%s: imported as %s, generated as %s", t->name,
                    rs_tensor_role_get_name(t->role), rs_tensor_role_get_name(g->role));
        g_assert_cmpint(t->layer, ==, g->layer);
        g_assert_cmpint(t->format, ==, g->format);
        /* Segments: a fused gate/up's halves and their dim (conv1d's from the config,
         * which this test does not write, are not compared). */
        if (g->role == RS_ROLE_EXPERT_GATE_UP_FUSED) {
            g_assert_cmpuint(t->n_segments, ==, 2);
            g_assert_cmpuint(t->segment_dim, ==, g->segment_dim);
            g_assert_cmpint(t->segments[0], ==, g->segments[0]);
            g_assert_cmpint(t->segments[1], ==, g->segments[1]);
        }
        /* Padding (Kimi-K3's A_log) is not marked in a header: a padded vector counts its
         * whole length when read back. */
        guint64 unpadded = g->format == RS_TENSOR_FORMAT_MXFP4   ? 2 * rs_tensor_spec_get_n_elems(g)
                           : g->format == RS_TENSOR_FORMAT_INT4  ? 8 * rs_tensor_spec_get_n_elems(g)
                           : g->format == RS_TENSOR_FORMAT_SCALE ? 0
                                                                 : rs_tensor_spec_get_n_elems(g);
        g_assert_cmpuint(t->n_params, ==, unpadded);
        padded_params += unpadded - g->n_params;
    }
    g_assert_cmpuint(rs_model_get_n_params(imported), ==,
                     rs_model_get_n_params(generated) + padded_params);
    g_assert_cmpuint(rs_model_get_size_bytes(imported), ==, rs_model_get_size_bytes(generated));
    remove_tree(dir);
}

/* Scales that keep MXFP4 rows whole groups of 32 (gpt-oss 2880 / 45 = 64, Kimi-K3
 * 3584 / 16 and 3072 / 16); the models with the most experts keep their first layers (dense,
 * MoE, both attention kinds) so that the headers stay small. */
static const RoundTrip round_trips[] = {
    {"llama-3.1-8b", 64, -1},  {"qwen3-8b", 64, -1},    {"qwen3-30b-a3b", 64, -1},
    {"mixtral-8x22b", 64, -1}, {"gpt-oss-20b", 45, -1}, {"glm-4.5", 64, 3},
    {"deepseek-v3", 64, -1},   {"kimi-k3", 16, 3},      {"qwen3.8-2.4t-a95b", 64, 3},
    /* This year's: the DeepSeek-V3.2 indexer, Kimi-K2.5's int4 experts (i32 weight_packed,
     * bf16 weight_scale, weight_shape), and whole Llama-4 and Qwen3.5 with their vision
     * towers and fused experts. */
    {"deepseek-v3.2", 64, 3},  {"kimi-k2.5", 16, 1},    {"llama-4-scout-17b-16e", 64, -1},
    {"qwen3.5-397b-a17b", 64, -1},
};

/* An imported checkpoint plans a correct refit. */
static void
test_import_refit(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *yaml = rs_data_find("models", "qwen3-30b-a3b", &error);
    RsModelOptions options = {.scale = 64};
    g_autoptr(RsModel) generated = rs_model_load_file(yaml, &options, &error);
    g_assert_no_error(error);
    g_autofree char *dir = temp_dir();
    g_autofree char *path = g_build_filename(dir, "model.safetensors", NULL);
    write_model_checkpoint(generated, path);
    g_autofree char *config = g_build_filename(dir, "config.json", NULL);
    g_assert_true(g_file_set_contents(config,
                                      "{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 48,"
                                      " \"num_attention_heads\": 32, \"num_key_value_heads\": 4,"
                                      " \"num_experts_per_tok\": 8}",
                                      -1, NULL));
    g_autoptr(RsModel) m = rs_model_load_file(path, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_model_get_n_params(m), ==, rs_model_get_n_params(generated));
    g_assert_cmpuint(rs_model_get_n_active_params(m), ==, rs_model_get_n_active_params(generated));
    guint32 train_gpus[8], infer_gpus[8];
    for (guint i = 0; i < 8; i++) {
        train_gpus[i] = i;
        infer_gpus[i] = 8 + i;
    }
    g_autoptr(RsConvention) train = rs_convention_parse("megatron:tp=2,pp=2,ep=2,etp=1", &error);
    g_autoptr(RsConvention) infer = rs_convention_parse("vllm:tp=8", &error);
    g_autoptr(GPtrArray) src = NULL, dst = NULL;
    g_assert_true(rs_convention_resolve(train, m, train_gpus, 8, &src, NULL, &error));
    g_assert_true(rs_convention_resolve(infer, m, infer_gpus, 8, &dst, NULL, &error));
    g_assert_no_error(error);
    g_autoptr(RsRefit) refit = rs_refit_new_from_model(m, src, dst, &error);
    g_assert_no_error(error);
    g_autoptr(RsPlan) plan = rs_plan_build(refit, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    g_assert_true(rs_plan_check(plan, refit, &error));
    g_assert_no_error(error);
    /* The 4 KV heads are replicated over tp 8 (as generated): the same refit bytes. */
    g_autoptr(GPtrArray) gsrc = NULL, gdst = NULL;
    g_assert_true(rs_convention_resolve(train, generated, train_gpus, 8, &gsrc, NULL, &error));
    g_assert_true(rs_convention_resolve(infer, generated, infer_gpus, 8, &gdst, NULL, &error));
    g_autoptr(RsRefit) grefit = rs_refit_new_from_model(generated, gsrc, gdst, &error);
    g_autoptr(RsPlan) gplan = rs_plan_build(grefit, RS_STRATEGY_DIRECT, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(rs_plan_get_bytes_moved(plan), ==, rs_plan_get_bytes_moved(gplan));
    remove_tree(dir);
}

static void
test_rules_describe(void)
{
    const char *text = rs_model_role_rules_describe();
    assert_contains(text, "*embed_tokens.weight|*lm_head.weight|*shared_head.head.weight -> "
                          "vocab-parallel");
    assert_contains(text, "*.experts.down_proj_bias -> expert-replicated");
}

/* The error domain's name is the one GLib code and messages use ("rs-…-error-quark");
 * clang-format once spaced it into "rs - safetensors - error - quark". */
static void
test_error_quark(void)
{
    g_assert_cmpstr(g_quark_to_string(RS_SAFETENSORS_ERROR), ==, "rs-safetensors-error-quark");
    g_assert_cmpstr(g_quark_to_string(RS_MODEL_ERROR), ==, "rs-model-error-quark");
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    self_path = argv[0];
    g_test_add_func("/safetensors/error-quark", test_error_quark);
    g_test_add_func("/safetensors/read-header", test_read_header);
    for (guint i = 0; i < G_N_ELEMENTS(malformed); i++) {
        g_autofree char *path = g_strdup_printf("/safetensors/malformed/%s", malformed[i].what);
        g_test_add_data_func(path, &malformed[i], test_malformed);
    }
    g_test_add_func("/safetensors/index", test_index);
    g_test_add_func("/safetensors/import", test_import);
    g_test_add_func("/safetensors/import-errors", test_import_errors);
    g_test_add_func("/safetensors/import-gate-up-fused", test_import_gate_up_fused);
    g_test_add_func("/safetensors/import-frees-memory", test_import_frees_memory);
    g_test_add_func("/safetensors/yaml-roles", test_yaml_roles);
    for (guint i = 0; i < G_N_ELEMENTS(round_trips); i++) {
        g_autofree char *path = g_strdup_printf("/safetensors/round-trip/%s", round_trips[i].id);
        g_test_add_data_func(path, &round_trips[i], test_round_trip);
    }
    g_test_add_func("/safetensors/import-refit", test_import_refit);
    g_test_add_func("/safetensors/rules", test_rules_describe);
    return g_test_run();
}
