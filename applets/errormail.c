/* errormail: not written yet; registered so that its name, usage and install link exist.
 *
 * exit: 69 (EX_UNAVAILABLE) until it is written. */
#include "common.h"

const char errormail_usage[] = "usage: errormail [-C FILE] ...\n(not written yet)\n";

int errormail_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_unwritten("errormail");
}
