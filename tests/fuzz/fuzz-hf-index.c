/* fuzz-hf-index.c — a sharded Hugging Face checkpoint as reshard reads it from a folder
 * (models/safetensors.h, models/model-load.h): the input is cut at each line "--8<--" into
 * model.safetensors.index.json, two shard files model-0000{1,2}-of-00002.safetensors and,
 * when a fourth part is there, the config.json beside them. The index is read with
 * rs_safetensors_read_index() and loaded as a model with rs_model_load_file(); each reads
 * or fails with an error. */
#include "fuzz-common.h"
#include "models/model-load.h"
#include "models/safetensors.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SEPARATOR "\n--8<--\n"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size > 256 << 10)
        return 0;
    static const char *const names[] = {"model.safetensors.index.json",
                                        "model-00001-of-00002.safetensors",
                                        "model-00002-of-00002.safetensors", "config.json"};
    char *paths[G_N_ELEMENTS(names)] = {NULL};
    const uint8_t *part = data;
    size_t left = size;
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        const uint8_t *cut = memmem(part, left, SEPARATOR, strlen(SEPARATOR));
        size_t n = cut != NULL ? (size_t)(cut - part) : left;
        paths[i] = fuzz_write_file(names[i], part, n);
        if (cut == NULL)
            break;
        part = cut + strlen(SEPARATOR);
        left -= n + strlen(SEPARATOR);
    }
    GError *error = NULL;
    GPtrArray *tensors = rs_safetensors_read_index(paths[0], &error);
    if (tensors == NULL)
        g_assert_nonnull(error);
    else
        g_ptr_array_unref(tensors);
    g_clear_error(&error);
    RsModelOptions options = {0};
    RsModel *model = rs_model_load_file(paths[0], &options, &error);
    if (model == NULL)
        g_assert_nonnull(error);
    g_clear_error(&error);
    rs_model_free(model);
    for (guint i = 0; i < G_N_ELEMENTS(names); i++)
        if (paths[i] != NULL)
            fuzz_remove(paths[i]);
    return 0;
}
