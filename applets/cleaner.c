/* cleaner: not written yet; registered so that its name, usage and install link exist.
 *
 * exit: 69 (EX_UNAVAILABLE) until it is written. */
#include "common.h"

const char cleaner_usage[] = "usage: cleaner [-C FILE] ...\n(not written yet)\n";

int cleaner_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_unwritten("cleaner");
}
