// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Bounded line reading for `arenakit glob`: input goes through one fixed
 * buffer straight into the caller's slot (the arena), so a 400 MB line or
 * /dev/zero costs no more memory than a short line; a line over the limit
 * is an error, not an allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "glob_cli_tool.h"

/* Open @path for reading; "-" is standard input. Returns 0 or -errno. */
int glob_input_open(struct glob_input *in, const char *path)
{
	struct stat st;

	in->pos = in->end = 0;
	in->eof = in->binary = false;
	in->line_no = 0;
	if (!strcmp(path, "-")) {
		in->name = GLOB_STDIN_NAME;
		in->fd = STDIN_FILENO;
	} else {
		in->name = path;
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0)
			return -errno;
	}
	/* Only a pipe or a terminal makes a read wait for more input. */
	in->slow = fstat(in->fd, &st) || S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) ||
		   S_ISSOCK(st.st_mode);
	return 0;
}

void glob_input_close(struct glob_input *in)
{
	if (in->fd > STDIN_FILENO)
		close(in->fd);
	in->fd = -1;
}

/* Refill the empty buffer. Returns 0 (maybe at end of input) or -errno. */
static int refill(struct glob_input *in)
{
	ssize_t n;

	do
		n = read(in->fd, in->buf, sizeof(in->buf));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	in->pos = 0;
	in->end = n;
	in->eof = !n;
	/* As grep does: from the buffer that shows a NUL on, the file is binary. */
	if (memchr(in->buf, '\0', n))
		in->binary = true;
	return 0;
}

/* Is a whole line buffered, so reading it cannot wait? */
bool glob_input_has_line(const struct glob_input *in)
{
	return memchr(in->buf + in->pos, '\n', in->end - in->pos) != NULL;
}

/**
 * glob_input_line - read the next line into @dst, without its newline
 * @in: the input
 * @dst: where the line goes; it is not NUL-terminated
 * @cap: the most bytes a line may have
 * @len: the line's length
 *
 * A last line without a newline is a line. @in->line_no counts lines,
 * the one that failed included.
 *
 * Return: 1 with a line, 0 at the end of input, -EOVERFLOW for a line over
 * @cap bytes (what was read of it is dropped), or -errno from read(2).
 */
int glob_input_line(struct glob_input *in, char *dst, size_t cap, size_t *len)
{
	size_t n = 0, chunk;
	char *nl;
	int err = 0;

	for (;;) {
		if (in->pos == in->end) {
			if (in->eof)
				break;
			err = refill(in);
			if (err)
				break;
			continue;
		}
		nl = memchr(in->buf + in->pos, '\n', in->end - in->pos);
		chunk = (nl ? (size_t)(nl - in->buf) : in->end) - in->pos;
		if (chunk > cap - n) {
			in->line_no++;
			return -EOVERFLOW;
		}
		memcpy(dst + n, in->buf + in->pos, chunk);
		n += chunk;
		in->pos += chunk + !!nl;
		if (nl)
			goto line;
	}
	if (!in->eof) {
		in->line_no++;
		return err;
	}
	if (!n)
		return 0;
line:
	in->line_no++;
	*len = n;
	return 1;
}
