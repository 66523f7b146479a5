/* smtp: not written yet; registered so that its name, usage and install link exist.
 *
 * exit: 69 (EX_UNAVAILABLE) until it is written. */
#include "common.h"

const char smtp_usage[] = "usage: smtp [-C FILE] ...\n(not written yet)\n";

int smtp_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return applet_unwritten("smtp");
}
