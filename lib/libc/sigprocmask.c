/* spoolbox's sigprocmask for the static build, linked as an object like setxid.c so that musl's
 * is never pulled. musl's goes through pthread_sigmask, the per-thread call, and turns its error
 * number back into errno; spoolbox starts no thread, so this is the rt_sigprocmask call itself,
 * with what musl's adds: the signals musl keeps for itself (32 to 34: sigfillset leaves them
 * out, sigaction refuses them) never show in the old mask. A bad how is EINVAL from the kernel
 * too. */
#include <limits.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigprocmask(int how, const sigset_t *restrict set, sigset_t *restrict old)
{
	int r = (int)syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
	if (!r && old) {
		unsigned long *w = (unsigned long *)old;
#if ULONG_MAX > 0xffffffff
		w[0] &= ~0x380000000UL;
#else
		w[0] &= ~0x80000000UL;
		w[1] &= ~3UL;
#endif
	}
	return r;
}
