/* local: not written yet; registered so that its name, usage and install link exist.
 *
 * exit: 69 (EX_UNAVAILABLE) until it is written. */
#include "common.h"

const char local_usage[] = "usage: local [-C FILE] ...\n(not written yet)\n";

int local_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_unwritten("local");
}
