/* hash.h — hashing of 64-bit keys for GHashTable.
 *
 * Keys built as (high << 32 | low), such as (tensor, rank) or (round, rank), must not be
 * hashed by folding the halves together with XOR (as g_int64_hash does): every pair with the
 * same high ^ low lands on one hash value, so a grid of n × n keys takes only about n
 * distinct values. Here every key goes through the finaliser of splitmix64 (Steele, Lea and
 * Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014; the constants of
 * Vigna's reference splitmix64.c, https://prng.di.unimi.it/splitmix64.c), a bijection of
 * 64-bit words in which every input bit affects every output bit.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/**
 * rs_hash_mix_u64:
 * @key: any 64-bit value
 *
 * The splitmix64 finaliser: x ^= x >> 30; x *= 0xbf58476d1ce4e5b9; x ^= x >> 27;
 * x *= 0x94d049bb133111eb; x ^= x >> 31. A bijection (distinct keys give distinct results).
 *
 * Returns: the mixed value.
 */
guint64 rs_hash_mix_u64(guint64 key);

/**
 * rs_hash_u64:
 * @key: pointer to a guint64
 *
 * A GHashFunc for keys that point to a guint64: the high 32 bits of rs_hash_mix_u64().
 *
 * Returns: the hash value.
 */
guint rs_hash_u64(gconstpointer key);

/**
 * rs_hash_u64_equal:
 * @a: pointer to a guint64
 * @b: pointer to a guint64
 *
 * The GEqualFunc matching rs_hash_u64().
 *
 * Returns: TRUE when *a == *b.
 */
gboolean rs_hash_u64_equal(gconstpointer a, gconstpointer b);

G_END_DECLS
