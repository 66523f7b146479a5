/* submit: not written yet; registered so that its name, usage and install link exist.
 *
 * exit: 69 (EX_UNAVAILABLE) until it is written. */
#include "common.h"

const char submit_usage[] = "usage: submit [-C FILE] ...\n(not written yet)\n";

int submit_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_unwritten("submit");
}
