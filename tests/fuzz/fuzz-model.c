/* fuzz-model.c — model descriptions as reshard reads them from a path (models/model-load.h):
 * the input is written as a model YAML, a Hugging Face config.json and a safetensors file
 * (its 8-byte header length, JSON header) in turn; each loads or fails with an error. */
#include "fuzz-common.h"
#include "models/model-load.h"
#include "models/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size > 256 << 10)
        return 0;
    static const char *const names[] = {"m.yaml", "config.json", "m.safetensors"};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        char *path = fuzz_write_file(names[i], data, size);
        GError *error = NULL;
        RsModelOptions options = {0};
        RsModel *model = rs_model_load_file(path, &options, &error);
        if (model == NULL)
            g_assert_nonnull(error);
        g_clear_error(&error);
        rs_model_free(model);
        if (i == 2) {
            GPtrArray *entries = rs_safetensors_read_header(path, &error);
            if (entries == NULL)
                g_assert_nonnull(error);
            else
                g_ptr_array_unref(entries);
            g_clear_error(&error);
        }
        fuzz_remove(path);
    }
    return 0;
}
