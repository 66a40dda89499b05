/* hash.c — the splitmix64 finaliser as a GHashFunc for 64-bit keys; see hash.h. */
#include "base/hash.h"

guint64
rs_hash_mix_u64(guint64 key)
{
    /* splitmix64's output function (Vigna, https://prng.di.unimi.it/splitmix64.c). */
    key ^= key >> 30;
    key *= G_GUINT64_CONSTANT(0xbf58476d1ce4e5b9);
    key ^= key >> 27;
    key *= G_GUINT64_CONSTANT(0x94d049bb133111eb);
    key ^= key >> 31;
    return key;
}

guint
rs_hash_u64(gconstpointer key)
{
    return (guint)(rs_hash_mix_u64(*(const guint64 *)key) >> 32);
}

gboolean
rs_hash_u64_equal(gconstpointer a, gconstpointer b)
{
    return *(const guint64 *)a == *(const guint64 *)b;
}
