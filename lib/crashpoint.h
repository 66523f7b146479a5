/* Test-only crash points (issue 11 point 11; docs/spool.md 7.2). A process started with
 * SPOOLBOX_TEST_CRASH=N (or N:APPLET, or N:APPLET:FLAGFILE) kills itself with SIGKILL right after
 * its Nth durable step: an fsync, a rename, link or unlink of the queue, a control-file record.
 * The crash test loops N over every step of a path and checks what each crash leaves.
 *
 * Contract: inert (one getenv per process, then a counter) unless the variable is set, and
 * always inert in a set-id process (a setgid submit never acts on it). APPLET limits it to that
 * applet (agents and DSNs inherit the scheduler's environment); FLAGFILE makes it fire once
 * across processes: only the process that creates FLAGFILE (O_EXCL) crashes, so the agent
 * started after a crashed one gets through. */
#ifndef SPOOLBOX_CRASHPOINT_H
#define SPOOLBOX_CRASHPOINT_H

/* Reads the variable for the applet now running; called once, at dispatch. */
void crash_point_init(const char *applet);
/* One durable step done: what it was and on which path (named on stderr when it fires). */
void crash_point(const char *step, const char *path);
/* Forgets the setting and the count (unit tests). */
void crash_point_reset(void);
#endif
