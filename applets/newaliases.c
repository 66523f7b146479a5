/* newaliases: not written yet; registered so that its name, usage and install link exist.
 *
 * exit: 69 (EX_UNAVAILABLE) until it is written. */
#include "common.h"

const char newaliases_usage[] = "usage: newaliases [-C FILE] ...\n(not written yet)\n";

int newaliases_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_unwritten("newaliases");
}
