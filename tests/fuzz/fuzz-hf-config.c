/* fuzz-hf-config.c — a Hugging Face config.json as reshard reads it from a model folder
 * (models/model-load.h): the input is written as PATH/config.json and loaded with
 * rs_model_load_file() into every weight tensor of its family, once as published and once
 * as the checkpoint stores it; each loads or fails with an error. Seeds: the configs of
 * tests/data/zoo. */
#include "fuzz-common.h"
#include "models/model-load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size > 256 << 10)
        return 0;
    char *path = fuzz_write_file("config.json", data, size);
    for (guint k = 0; k < 2; k++) {
        GError *error = NULL;
        RsModelOptions options = {0};
        options.include_mtp = k == 1;
        options.storage = k == 1 ? RS_MODEL_STORAGE_CHECKPOINT : options.storage;
        RsModel *model = rs_model_load_file(path, &options, &error);
        if (model == NULL)
            g_assert_nonnull(error);
        g_clear_error(&error);
        rs_model_free(model);
    }
    fuzz_remove(path);
    return 0;
}
