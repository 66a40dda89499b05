/* test-hash.c — the 64-bit key hash of base/hash.h: splitmix64's reference outputs, and no
 * collisions on the (high << 32 | low) + 1 keys the executor's staging set uses, where the
 * XOR fold it replaces gives every pair with the same high ^ low one hash value. */
#include "base/hash.h"

/* splitmix64 seeded with 0 (https://prng.di.unimi.it/splitmix64.c): the state advances by
 * the golden ratio 0x9e3779b97f4a7c15 and the n-th output is the finaliser of n × that. */
static void
test_reference_outputs(void)
{
    const guint64 golden = G_GUINT64_CONSTANT(0x9e3779b97f4a7c15);
    g_assert_cmphex(rs_hash_mix_u64(golden), ==, G_GUINT64_CONSTANT(0xe220a8397b1dcdaf));
    g_assert_cmphex(rs_hash_mix_u64(2 * golden), ==, G_GUINT64_CONSTANT(0x6e789e6aa1b965f4));
    g_assert_cmphex(rs_hash_mix_u64(3 * golden), ==, G_GUINT64_CONSTANT(0x06c45d188009454f));
    g_assert_cmphex(rs_hash_mix_u64(0), ==, 0);
    guint64 key = golden;
    g_assert_cmpuint(rs_hash_u64(&key), ==, 0xe220a839u);
}

#define N_TENSORS 256
#define N_GPUS 64
#define N_BUCKETS 16381 /* a prime near N_TENSORS × N_GPUS */

/* The hash the executor used before: the halves folded with XOR. */
static guint
xor_fold_hash(gconstpointer p)
{
    guint64 v = *(const guint64 *)p;
    return (guint)(v ^ (v >> 32));
}

/* Distinct hash values and the fullest of N_BUCKETS buckets (hash modulo N_BUCKETS) over
 * the staging keys (tensor << 32 | gpu) + 1 of N_TENSORS tensors on N_GPUS GPUs. */
static void
count_staging_keys(GHashFunc hash, guint *n_distinct, guint *max_load)
{
    g_autoptr(GHashTable) values = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_autofree guint *load = g_new0(guint, N_BUCKETS);
    *max_load = 0;
    for (guint64 t = 0; t < N_TENSORS; t++)
        for (guint64 g = 0; g < N_GPUS; g++) {
            guint64 key = (t << 32 | g) + 1;
            guint h = hash(&key);
            g_hash_table_add(values, GUINT_TO_POINTER(h));
            guint in_bucket = ++load[h % N_BUCKETS];
            *max_load = MAX(*max_load, in_bucket);
        }
    *n_distinct = g_hash_table_size(values);
}

static void
test_staging_keys(void)
{
    guint n_distinct, max_load;
    count_staging_keys(rs_hash_u64, &n_distinct, &max_load);
    g_assert_cmpuint(n_distinct, ==, N_TENSORS * N_GPUS); /* zero collisions */
    g_assert_cmpuint(max_load, ==, 7);
    /* The XOR fold: t ^ (g + 1) < 256, so 16384 keys share 256 values, 64 per bucket. */
    count_staging_keys(xor_fold_hash, &n_distinct, &max_load);
    g_assert_cmpuint(n_distinct, ==, 256);
    g_assert_cmpuint(max_load, ==, 64);
}

static void
test_equal(void)
{
    guint64 a = G_GUINT64_CONSTANT(1) << 40, b = G_GUINT64_CONSTANT(1) << 40, c = 1;
    g_assert_true(rs_hash_u64_equal(&a, &b));
    g_assert_false(rs_hash_u64_equal(&a, &c));
}

int
main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/hash/splitmix64-reference", test_reference_outputs);
    g_test_add_func("/hash/staging-keys-no-collisions", test_staging_keys);
    g_test_add_func("/hash/equal", test_equal);
    return g_test_run();
}
