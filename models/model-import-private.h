/* model-import-private.h — the checkpoint import (model-import.c) as model-load.c calls it:
 * a model's tensor list from the headers of a safetensors checkpoint, each tensor given its
 * role by name rules. It sits above the container, the config reader and the safetensors
 * reader; the rules' documentation is public (rs_model_role_rules_describe(), model-load.h). */
#pragma once

#include "models/model-config-private.h"
#include "models/model-load.h"
#include "models/model-private.h"

G_BEGIN_DECLS

/* Fills @model (name, family, dtype, n_layers already set from @config's keys as far as
 * known) with the tensors of the checkpoint at @path (.safetensors or .safetensors.index.json),
 * roles from the user rules under "roles." in @config, then the built-in rules; reads
 * num_hidden_layers, num_attention_heads, num_key_value_heads and the experts-per-token
 * key from @config when present, else from the config.json beside the checkpoint. Only
 * @options->include_mtp is read. Errors: RS_SAFETENSORS_ERROR, RS_MODEL_ERROR_ROLE,
 * RS_MODEL_ERROR_CONFIG. */
gboolean rs_model_import_safetensors(RsModel *model, const char *path, RsModelConfig *config,
                                     const RsModelOptions *options, GError **error);

G_END_DECLS
