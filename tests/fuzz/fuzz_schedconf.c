/* Fuzz target: the scheduler.conf parser, clause resolution, host-class matching and command
 * expansion. */
#include "schedconf.h"
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct schedconf c;
	schedconf_init(&c);
	schedconf_parse(&c, "fuzz", (const char *)data, size, NULL, NULL);
	struct sc_params p;
	static const char *const probes[][2] = {{"local", "-"}, {"smtp", "a.example"}, {"error", "x"}, {"hold", "[1.2.3.4]"}};
	for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
		if (schedconf_resolve(&c, probes[i][0], probes[i][1], &p) >= 0 && p.command) {
			char buf[2048];
			char *argv[SC_ARGV_MAX + 1], *env[SC_ARGV_MAX + 1];
			sc_command_split(p.command, probes[i][0], probes[i][1], "/var/log", buf, sizeof buf, argv, env);
		}
		int k = schedconf_hostclass(&c, probes[i][1]);
		if (k >= (int)c.nhc || (k >= 0 && c.hc[k].limit < 1))
			abort();
	}
	schedconf_free(&c);
	return 0;
}
