// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A loader that walks a program's list through the arena's mmap with
 * ak_list_next_copy: it has the list and the lock its writers hold, and
 * nothing of the allocator (no ak_allocator, no page source; they belong to
 * whoever allocates). tests/host/user_reader_host.c builds and links it at
 * -O0, -Og and -O2; it is never run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <arenakit/list_user.h>

struct event {
	unsigned long long when;
	struct ak_list_node node;
	unsigned int pid;
	char comm[16];
};

/* The program's arena globals, as the skeleton would map them. */
struct events_shared {
	struct ak_lock lock;
	struct ak_list events;
};

/*
 * The events on the list, by one complete walk (begun again when a writer
 * changed the list meanwhile), and the pid of the last: the count, or -errno.
 */
static long count_events(struct events_shared *shared, unsigned int *last_pid)
{
	struct ak_list_cursor cursor = {};
	struct event ev;
	long n = 0;
	int err, calls;

	for (calls = 0; calls < 1000000; calls++) {
		err = ak_list_next_copy(&shared->events, &shared->lock, &cursor, &ev, node);
		if (err == -ENOENT)
			return n;
		if (err == -AK_ESTALE) {
			n = 0;		/* the cursor is reset: begin again */
			continue;
		}
		if (err == -EBUSY)
			continue;	/* a writer held the lock: call again */
		if (err)
			return err;
		*last_pid = ev.pid;
		n++;
	}
	return -EBUSY;
}

int main(int argc, char **argv)
{
	/* The globals would be skel->arena; here there are none. */
	struct events_shared *shared =
		argc > 1 ? (struct events_shared *)strtoull(argv[1], NULL, 0) : NULL;

	unsigned int pid = 0;
	long n;

	if (!shared)
		return 0;
	n = count_events(shared, &pid);
	if (n < 0)
		return 1;
	printf("%ld events, the last from pid %u\n", n, pid);
	return 0;
}
