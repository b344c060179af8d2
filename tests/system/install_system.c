// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * make install under a DESTDIR puts the headers and arenakit.pc where
 * PREFIX says, pkg-config finds them there, and make uninstall removes
 * exactly those files.
 *
 * A system test (tests/system/ checks the machinery around the library by
 * running what make and users run): it runs make install and uninstall,
 * and pkg-config.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <criterion/criterion.h>

#include "command.h"

/* The regular files under @dir. */
static int count_files(const char *dir)
{
	char command[512], out[64];

	snprintf(command, sizeof(command), "find '%s' -type f | wc -l", dir);
	run_command(command, out, sizeof(out));
	return atoi(out);
}

Test(install, destdir_install_pkg_config_and_uninstall)
{
	char root[] = "/tmp/arenakit-install.XXXXXX", command[1024], path[512];
	static char out[1 << 14];
	glob_t headers;
	size_t i;
	int status;

	cr_assert(mkdtemp(root));
	cr_assert_eq(glob("include/arenakit/*.h", 0, NULL, &headers), 0);
	snprintf(command, sizeof(command),
		 "make -s --no-print-directory install DESTDIR=%s PREFIX=/opt/ak 2>&1", root);
	status = run_command(command, out, sizeof(out));
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "make install:\n%s", out);
	for (i = 0; i < headers.gl_pathc; i++) {
		snprintf(path, sizeof(path), "%s/opt/ak/include/arenakit/%s", root,
			 strrchr(headers.gl_pathv[i], '/') + 1);
		cr_expect_eq(access(path, R_OK), 0, "%s is not installed", path);
	}
	cr_expect_eq(count_files(root), (int)headers.gl_pathc + 1,
		     "files other than the headers and arenakit.pc were installed");

	snprintf(command, sizeof(command),
		 "PKG_CONFIG_LIBDIR=%s/opt/ak/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=%s "
		 "pkg-config --cflags arenakit 2>&1", root, root);
	run_command(command, out, sizeof(out));
	snprintf(path, sizeof(path), "-I%s/opt/ak/include -mcpu=v3", root);
	cr_expect(strstr(out, path), "pkg-config --cflags: %s (want %s)", out, path);

	snprintf(command, sizeof(command),
		 "make -s --no-print-directory uninstall DESTDIR=%s PREFIX=/opt/ak 2>&1", root);
	status = run_command(command, out, sizeof(out));
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "make uninstall:\n%s", out);
	cr_expect_eq(count_files(root), 0, "make uninstall left files in %s", root);
	snprintf(path, sizeof(path), "%s/opt/ak/include/arenakit", root);
	cr_expect_neq(access(path, F_OK), 0, "%s is still there", path);
	globfree(&headers);
	snprintf(command, sizeof(command), "rm -rf '%s'", root);
	run_command(command, out, sizeof(out));
}
