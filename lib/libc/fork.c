/* spoolbox's fork for the static build, linked as an object like setxid.c so that musl's is never
 * pulled. musl's fork() is _Fork() (the system call, the child's thread data reset) wrapped in
 * what a threaded process needs: pthread_atfork handlers, and every internal lock taken across
 * the call when threads exist (need_locks). That wrapper brings the rwlocks, __timedwait and
 * cancellation state of libc (1.5 KiB). spoolbox never starts a thread nor registers an atfork
 * handler, so for it musl's fork() does exactly what _Fork() does (musl >= 1.2.3; glibc 2.34). */
#include <unistd.h>

pid_t _Fork(void);

pid_t fork(void)
{
	return _Fork();
}
