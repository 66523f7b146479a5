/* spoolbox's fork for the static build, linked as an object like setxid.c so that musl's is never
 * pulled. musl's fork() is _Fork() wrapped in what a threaded process needs: pthread_atfork
 * handlers, and every internal lock taken across the call when threads exist (need_locks), which
 * brings the rwlocks, __timedwait and cancellation state of libc (1.5 KiB). musl's _Fork() in
 * turn blocks every signal and takes the abort lock around the call, so that the child can set
 * its thread's tid and empty the thread list before any handler runs (0.5 KiB with __lock and
 * __block_all_sigs). spoolbox never starts a thread nor registers an atfork handler, and nothing
 * it links reads the thread's tid (no raise, pthread_kill or mutex: check the link map before
 * adding one), so fork() is the system call: clone with SIGCHLD where there is no fork call
 * (arm64), as musl's. */
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_fork
#define FORK_CALL SYS_fork
#else
#define FORK_CALL SYS_clone, SIGCHLD, 0
#endif

pid_t fork(void)
{
	return (pid_t)syscall(FORK_CALL);
}
