// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A loader that reads a program's hash table through the arena's mmap, as
 * README's "Start here" shows: it has the table and nothing of the
 * allocator (no ak_allocator, no page source; they belong to whoever
 * allocates). tests/host/user_reader_host.c builds and links it at -O0, -Og
 * and -O2; it is never run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <arenakit/htab.h>

struct flow_key {
	unsigned int addr;
	unsigned short port, proto;
};

struct flow_stats {
	unsigned long long packets, bytes;
};

/* The stats of @key, copied under the bucket's lock: 0 or -errno. */
static int read_stats(struct ak_htab *flows, const struct flow_key *key,
		      struct flow_stats *stats)
{
	return ak_htab_lookup_copy(flows, key, stats);
}

/* The same through the lock-free lookup (for a table no program writes now). */
static int peek_packets(struct ak_htab *flows, const struct flow_key *key,
			unsigned long long *packets)
{
	struct flow_stats *stats;
	int err = 0;

	stats = ak_htab_lookup(flows, key, &err);
	if (!stats)
		return err;
	*packets = stats->packets;
	return 0;
}

int main(int argc, char **argv)
{
	/* The table would be skel->arena->flows; here there is none. */
	struct ak_htab *flows = argc > 1 ? (struct ak_htab *)strtoull(argv[1], NULL, 0) : NULL;
	struct flow_key key = { .addr = 0x7f000001, .port = 80, .proto = 6 };
	struct flow_stats stats;
	unsigned long long packets = 0;

	if (!flows)
		return 0;
	if (!read_stats(flows, &key, &stats) && !peek_packets(flows, &key, &packets))
		printf("%llu packets, %llu bytes\n", stats.packets, stats.bytes);
	return 0;
}
