/* schedsim: the scheduling simulator's command line (lib/sched_sim.c, docs/simulate.md).
 *   schedsim WORKLOAD [TMPDIR]     figures on stdout; exit 0, 65 bad workload, 66 unreadable
 * The spool lives under TMPDIR (default $TMPDIR, then /dev/shm, then /tmp) and is removed. */
#include "fileio.h"
#include "log.h"
#include "sched_sim.h"
#include "sysexits.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: schedsim WORKLOAD [TMPDIR]\n");
		return EX_USAGE;
	}
	log_init("schedsim", 0, LOG_ERR);
	char *text = NULL;
	size_t len = 0;
	if (fio_slurp(argv[1], SIM_TEXT_MAX, &text, &len) < 0) {
		fprintf(stderr, "schedsim: cannot read %s (or larger than 64 KiB)\n", argv[1]);
		return EX_NOINPUT;
	}
	static struct sim_work w;
	char err[300];
	if (sim_parse(text, len, &w, err, sizeof err) < 0) {
		fprintf(stderr, "schedsim: %s:%s\n", argv[1], err + 4);
		free(text);
		return EX_DATAERR;
	}
	free(text);
	const char *tmp = argc > 2 ? argv[2] : getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	int rc = sim_run(&w, tmp, stdout, err, sizeof err);
	if (rc)
		fprintf(stderr, "schedsim: %s\n", err);
	return rc;
}
