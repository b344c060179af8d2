// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <string.h>

#include "guest/guest.h"

struct bpf_program *guest_load_one(const void *elf, size_t size, const char *object,
				   const char *program, struct bpf_object **obj)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = object);
	struct bpf_program *prog, *wanted = NULL;
	int err;

	*obj = bpf_object__open_mem(elf, size, &opts);
	cr_assert(*obj, "cannot open BPF object %s: %s", object, strerror(errno));
	bpf_object__for_each_program(prog, *obj) {
		int is_wanted = !strcmp(bpf_program__name(prog), program);

		bpf_program__set_autoload(prog, is_wanted);
		if (is_wanted)
			wanted = prog;
	}
	cr_assert(wanted, "object %s has no program %s", object, program);
	err = arenakit_load_object(*obj);
	cr_assert_eq(err, 0, "%s/%s does not load: %s (the verifier's log is above)",
		     object, program, strerror(-err));
	return wanted;
}

void guest_run_test_program(const void *elf, size_t size, const char *object,
			    const char *program)
{
	struct bpf_object *obj;
	struct bpf_program *prog = guest_load_one(elf, size, object, program, &obj);
	int err, retval = -1;

	err = arenakit_run(prog, &retval);
	cr_assert_eq(err, 0, "%s/%s: BPF_PROG_TEST_RUN failed: %s", object, program,
		     strerror(-err));
	cr_expect_eq(retval, 0, "%s/%s returned %d, not 0", object, program, retval);
	bpf_object__close(obj);
}
