/* Fuzz target: the scheduling simulator's workload parser (lib/sched_sim.c, docs/simulate.md). */
#include "sched_sim.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sim_work w;
	char err[300];
	if (sim_parse((const char *)data, size, &w, err, sizeof err) == 0) {
		/* what the simulator relies on */
		if (w.total < 1 || w.total > SIM_MSGS_MAX || w.ndest < 1 || w.nmail < 1 || w.rcpts < w.total ||
		    w.rcpts > SIM_RCPTS_ALL || w.files < w.total || w.files > w.rcpts || w.queuehi < 1)
			__builtin_trap();
		for (int i = 0; i < w.nmail; i++)
			if (w.mail[i].dest < 0 || w.mail[i].dest >= w.ndest || w.mail[i].cls < 0 || w.mail[i].cls >= w.ncls ||
			    w.mail[i].domains < 0 || w.mail[i].domains > SIM_DOMAINS_MAX || w.mail[i].rcpts < 1 ||
			    w.mail[i].rcpts > SIM_RCPTS_MAX)
				__builtin_trap();
	} else if (!memchr(err, 0, sizeof err)) {
		__builtin_trap();
	}
	return 0;
}
