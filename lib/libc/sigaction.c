/* spoolbox's sigaction and signal for the static build, linked as objects like setxid.c so that
 * musl's are never pulled. musl's sigaction keeps state for threads and abort() (a set of
 * signals with handlers for posix_spawn, a flag for EINTR of thread waits, the abort lock taken
 * around any change to SIGABRT: 0.8 KiB with signal); spoolbox has no threads and never calls
 * abort or posix_spawn. What stays is musl's system call: the kernel's struct with musl's
 * return trampolines (__restore_rt, __restore: libc.a's restore.s), the libc-internal signals
 * 32-34 refused, and their 33 and 34 unblocked when the first handler is installed, as musl does
 * so that a handler never sees them blocked. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* the kernel's struct sigaction on x86-64, ARM and AArch64 (musl's ksigaction.h) */
struct k_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned mask[2];
};

void __restore_rt(void);
#if defined(__x86_64__)
#define __restore __restore_rt /* x86-64 has the one */
#else
void __restore(void);
#endif

/* (the unit test names it own_sigaction: a macro for the name would rename the struct too) */
#ifndef SIGACTION
#define SIGACTION sigaction
#endif

int SIGACTION(int sig, const struct sigaction *restrict sa, struct sigaction *restrict old)
{
	static int unmasked;
	struct k_sigaction k, ko;
	if (sig - 32U < 3 || sig - 1U >= _NSIG - 1) {
		errno = EINVAL;
		return -1;
	}
	if (sa) {
		if ((uintptr_t)sa->sa_handler > 1 && !unmasked) {
			unsigned long long pt = 3ULL << 32; /* signals 33 and 34 */
			syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &pt, 0, _NSIG / 8);
			unmasked = 1;
		}
		k.handler = sa->sa_handler;
		k.flags = (unsigned long)sa->sa_flags | SA_RESTORER;
		k.restorer = sa->sa_flags & SA_SIGINFO ? __restore_rt : __restore;
		memcpy(k.mask, &sa->sa_mask, _NSIG / 8);
	}
	long r = syscall(SYS_rt_sigaction, sig, sa ? &k : NULL, old ? &ko : NULL, _NSIG / 8);
	if (old && !r) {
		old->sa_handler = ko.handler;
		old->sa_flags = (int)ko.flags;
		memcpy(&old->sa_mask, ko.mask, _NSIG / 8);
	}
	return (int)r;
}

void (*signal(int sig, void (*func)(int)))(int)
{
	struct sigaction old, sa = {.sa_handler = func, .sa_flags = SA_RESTART};
	return SIGACTION(sig, &sa, &old) < 0 ? SIG_ERR : old.sa_handler;
}
