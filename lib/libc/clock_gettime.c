/* spoolbox's clock_gettime for the static build on x86-64 and arm64, linked as an object like
 * setxid.c so that musl's is never pulled: musl's code compiled with our flags (libc.a's
 * clock_gettime and its vDSO symbol lookup are -O2 with a stack protector, 0.9 KiB). The clock
 * is still read through the kernel's vDSO, with no system call (docs/size.md: a clock_gettime
 * that made the system call every time was tried and reverted); the lookup is musl's
 * __vdsosym's walk of the vDSO's dynamic symbol table for the defined symbol of that name, found
 * once. What this leaves out: musl's check of the symbol's type, binding and version (the
 * kernel's vDSO has exported this one name, a function of version LINUX_2.6 on x86-64 and
 * LINUX_2.6.39 on arm64, since it has had it: part of the kernel's ABI), musl's atomic swap of
 * the pointer (spoolbox starts no thread) and the gettimeofday fallback for kernels without
 * clock_gettime (before 2.6). 32-bit ARM keeps musl's member (musl reads no vDSO there). */
#if defined(__x86_64__) || defined(__aarch64__)
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#define CGT_SYM "__vdso_clock_gettime"
#else
#define CGT_SYM "__kernel_clock_gettime"
#endif

typedef int cgt_fn(clockid_t, struct timespec *);

static cgt_fn *vdso_cgt(void)
{
	Elf64_Ehdr *eh = (void *)getauxval(AT_SYSINFO_EHDR);
	if (!eh)
		return NULL;
	Elf64_Phdr *ph = (void *)((char *)eh + eh->e_phoff);
	size_t *dynv = NULL, base = (size_t)-1;
	for (size_t i = 0; i < eh->e_phnum; i++, ph = (void *)((char *)ph + eh->e_phentsize)) {
		if (ph->p_type == PT_LOAD)
			base = (size_t)eh + ph->p_offset - ph->p_vaddr;
		else if (ph->p_type == PT_DYNAMIC)
			dynv = (void *)((char *)eh + ph->p_offset);
	}
	if (!dynv || base == (size_t)-1)
		return NULL;
	char *strings = NULL;
	Elf64_Sym *syms = NULL;
	uint32_t *hashtab = NULL;
	for (size_t i = 0; dynv[i]; i += 2) {
		void *p = (void *)(base + dynv[i + 1]);
		switch (dynv[i]) {
		case DT_STRTAB: strings = p; break;
		case DT_SYMTAB: syms = p; break;
		case DT_HASH: hashtab = p; break;
		}
	}
	if (!strings || !syms || !hashtab)
		return NULL;
	for (size_t i = 0; i < hashtab[1]; i++) {
		if (syms[i].st_shndx && !strcmp(CGT_SYM, strings + syms[i].st_name))
			return (cgt_fn *)(base + syms[i].st_value);
	}
	return NULL;
}

static cgt_fn *vdso_fn;
static char vdso_looked;

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	if (!vdso_looked) {
		vdso_looked = 1;
		vdso_fn = vdso_cgt();
	}
	if (vdso_fn) {
		int r = vdso_fn(clk, ts);
		if (!r)
			return 0;
		if (r == -EINVAL) {
			errno = EINVAL;
			return -1;
		}
		/* musl: some vDSOs give ENOSYS for clocks they do not handle; the call does */
	}
	return (int)syscall(SYS_clock_gettime, clk, ts);
}
#endif
typedef int clock_gettime_is_64bit; /* an empty file is not ISO C */
