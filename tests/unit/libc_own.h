/* lib/libc/ compiled into a test under other names (own_strtol, own_getopt, own_setuid, ...): the sanitizer
 * build links glibc, whose functions the tests compare ours with. Include after the system
 * headers; the standard names mean glibc's again afterwards. */
#ifndef SPOOLBOX_LIBC_OWN_H
#define SPOOLBOX_LIBC_OWN_H
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <wchar.h>
#include <stdarg.h>
#include <stdio.h>
#include <grp.h>
#include <resolv.h>
#include <pwd.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define strtol own_strtol
#define strtoll own_strtoll
#define strtoul own_strtoul
#define strtoull own_strtoull
#define strtoimax own_strtoimax
#define strtoumax own_strtoumax
#define getopt own_getopt
#define optarg own_optarg
#define optind own_optind
#define opterr own_opterr
#define optopt own_optopt
#define qsort own_qsort
#define strstr own_strstr
#define mbstowcs own_mbstowcs
#define setuid own_setuid
#define setgid own_setgid
#define setresuid own_setresuid
#define setresgid own_setresgid
#define seteuid own_seteuid
#define setegid own_setegid
#define setgroups own_setgroups
#define setrlimit own_setrlimit
#define getrlimit own_getrlimit
#define getpwnam own_getpwnam
#define getpwuid own_getpwuid
#define getgrnam own_getgrnam
#define getgrgid own_getgrgid
#define getgrouplist own_getgrouplist
#define initgroups own_initgroups
/* the files pwd.c reads: a test may point them elsewhere */
#define PWD_PASSWD_FILE own_passwd_file
#define PWD_GROUP_FILE own_group_file
const char *own_passwd_file = "/etc/passwd", *own_group_file = "/etc/group";
#define malloc own_malloc
#define free own_free
#define calloc own_calloc
#define realloc own_realloc
#define __libc_malloc own___libc_malloc /* glibc exports these: never interposed by a test */
#define __libc_free own___libc_free
#define __libc_calloc own___libc_calloc
#define __libc_realloc own___libc_realloc
/* resolv.c's file and port, for a test server */
#define res_query own_res_query
#define dn_expand own_dn_expand
#define RES_CONF_FILE own_resolv_conf
#define RES_PORT own_res_port
const char *own_resolv_conf = "/etc/resolv.conf";
unsigned short own_res_port = 53;
long strtol(const char *restrict, char **restrict, int);
long long strtoll(const char *restrict, char **restrict, int);
unsigned long strtoul(const char *restrict, char **restrict, int);
unsigned long long strtoull(const char *restrict, char **restrict, int);
intmax_t strtoimax(const char *restrict, char **restrict, int);
uintmax_t strtoumax(const char *restrict, char **restrict, int);
int getopt(int, char *const[], const char *);
extern char *optarg;
extern int optind, opterr, optopt;
void qsort(void *, size_t, size_t, int (*)(const void *, const void *));
char *strstr(const char *, const char *);
size_t mbstowcs(wchar_t *restrict, const char *restrict, size_t);
int setuid(uid_t);
int setgid(gid_t);
int setresuid(uid_t, uid_t, uid_t);
int setresgid(gid_t, gid_t, gid_t);
int seteuid(uid_t);
int setegid(gid_t);
int setgroups(size_t, const gid_t *);
int setrlimit(int, const struct rlimit *);
int getrlimit(int, struct rlimit *);
struct passwd *getpwnam(const char *);
struct passwd *getpwuid(uid_t);
struct group *getgrnam(const char *);
struct group *getgrgid(gid_t);
int getgrouplist(const char *, gid_t, gid_t *, int *);
int initgroups(const char *, gid_t);
int res_query(const char *, int, int, unsigned char *, int);
void *malloc(size_t);
void free(void *);
void *calloc(size_t, size_t);
void *realloc(void *, size_t);
int dn_expand(const unsigned char *, const unsigned char *, const unsigned char *, char *, int);
#include "../../lib/libc/getopt.c"
#include "../../lib/libc/strtol.c"
#include "../../lib/libc/qsort.c"
#include "../../lib/libc/strstr.c"
#include "../../lib/libc/mbstowcs.c"
#include "../../lib/libc/setxid.c"
#include "../../lib/libc/pwd.c"
#include "../../lib/libc/resolv.c"
#include "../../lib/libc/malloc.c"
/* stat.c and fchmod.c: function-like names, so that struct stat stays glibc's (the kernel's
 * layout, as musl's on x86-64) */
#define fstat(f, s) own_fstat(f, s)
#define fstatat(d, p, s, f) own_fstatat(d, p, s, f)
#define stat(p, s) own_stat(p, s)
#define lstat(p, s) own_lstat(p, s)
#define fchmod(f, m) own_fchmod(f, m)
#define fchown(f, u, g) own_fchown(f, u, g)
struct stat;
int fstat(int, struct stat *);
int fstatat(int, const char *restrict, struct stat *restrict, int);
int stat(const char *restrict, struct stat *restrict);
int lstat(const char *restrict, struct stat *restrict);
int fchmod(int, mode_t);
int fchown(int, uid_t, gid_t);
#include "../../lib/libc/stat.c"
#include "../../lib/libc/fchmod.c"
#undef fstat
#undef fstatat
#undef stat
#undef lstat
#undef fchmod
#undef fchown
/* stdio.c's FILE is its own struct, named apart from glibc's, with its functions (and the
 * vfprintf they print through) */
#undef stdout
#undef stderr
#undef putc
#undef putchar
#define _IO_FILE own_IO_FILE
#define FILE struct own_IO_FILE
#define stdout own_stdout
#define stderr own_stderr
#define fflush own_fflush
#define fwrite own_fwrite
#define fputc own_fputc
#define putc own_putc
#define putchar own_putchar
#define fputs own_fputs
#define puts own_puts
#define ferror own_ferror
#define fgets own_fgets
#define fdopen own_fdopen
#define fopen own_fopen
#define fclose own_fclose
#define vdprintf own_vdprintf
#define dprintf own_dprintf
#define printf own_printf
#define fprintf own_fprintf
#define vprintf own_vprintf
#define vfprintf own_vfprintf
#define __stdio_exit own___stdio_exit
struct own_IO_FILE;
extern FILE *const stdout, *const stderr;
int fflush(FILE *);
size_t fwrite(const void *restrict, size_t, size_t, FILE *restrict);
int fputc(int, FILE *);
int putc(int, FILE *);
int putchar(int);
int fputs(const char *restrict, FILE *restrict);
int puts(const char *);
int ferror(FILE *);
char *fgets(char *restrict, int, FILE *restrict);
FILE *fdopen(int, const char *);
FILE *fopen(const char *restrict, const char *restrict);
int fclose(FILE *);
int vdprintf(int, const char *restrict, va_list);
int dprintf(int, const char *restrict, ...);
int printf(const char *restrict, ...);
int fprintf(FILE *restrict, const char *restrict, ...);
int vprintf(const char *restrict, va_list);
int vfprintf(FILE *restrict, const char *restrict, va_list);
#include "../../lib/libc/stdio.c"
#include "../../lib/libc/vfprintf.c"
#undef _IO_FILE
#undef FILE
#undef stdout
#undef stderr
#define stdout stdout /* glibc's own definitions again */
#define stderr stderr
#undef fflush
#undef fwrite
#undef fputc
#undef putc
#undef putchar
#undef fputs
#undef puts
#undef ferror
#undef fgets
#undef fdopen
#undef fopen
#undef fclose
#undef vdprintf
#undef dprintf
#undef printf
#undef fprintf
#undef vprintf
#undef vfprintf
#undef __stdio_exit
#undef strtol
#undef strtoll
#undef strtoul
#undef strtoull
#undef strtoimax
#undef strtoumax
#undef getopt
#undef qsort
#undef strstr
#undef mbstowcs
#undef setuid
#undef setgid
#undef setresuid
#undef setresgid
#undef seteuid
#undef setegid
#undef setgroups
#undef setrlimit
#undef getrlimit
#undef getpwnam
#undef getpwuid
#undef getgrnam
#undef getgrgid
#undef getgrouplist
#undef initgroups
#undef res_query
#undef dn_expand
#undef malloc
#undef free
#undef calloc
#undef realloc
#undef __libc_malloc
#undef __libc_free
#undef __libc_calloc
#undef __libc_realloc
/* the functions below, each under its own name, and glibc's again right after */
#define fork own_fork
pid_t fork(void);
#include "../../lib/libc/fork.c"
#undef fork
#define strchrnul own_strchrnul
#define __strchrnul own___strchrnul
#define strchr own_strchr
#define strspn own_strspn
#define strcspn own_strcspn
#define strcpy own_strcpy
#define strncasecmp own_strncasecmp
#define strcasecmp own_strcasecmp
#define stpcpy own_stpcpy
#define strlen own_strlen
#define memchr own_memchr
#define memrchr own_memrchr
#define strrchr own_strrchr
#define strnlen own_strnlen
#define memcmp own_memcmp
#define strncmp own_strncmp
#define strcmp own_strcmp
#define strdup own_strdup
#define memset own_memset
#define memcpy own_memcpy
#define memmove own_memmove
char *strchrnul(const char *, int);
char *strchr(const char *, int);
size_t strspn(const char *, const char *);
size_t strcspn(const char *, const char *);
char *strcpy(char *restrict, const char *restrict);
int strncasecmp(const char *, const char *, size_t);
int strcasecmp(const char *, const char *);
char *stpcpy(char *restrict, const char *restrict);
size_t strlen(const char *);
void *memchr(const void *, int, size_t);
void *memrchr(const void *, int, size_t);
char *strrchr(const char *, int);
size_t strnlen(const char *, size_t);
int memcmp(const void *, const void *, size_t);
int strncmp(const char *, const char *, size_t);
int strcmp(const char *, const char *);
char *strdup(const char *);
void *memset(void *, int, size_t);
void *memcpy(void *restrict, const void *restrict, size_t);
void *memmove(void *, const void *, size_t);
#include "../../lib/libc/string.c"
#undef strchrnul
#undef __strchrnul
#undef strchr
#undef strspn
#undef strcspn
#undef strcpy
#undef strncasecmp
#undef strcasecmp
#undef stpcpy
#undef strlen
#undef memchr
#undef memrchr
#undef strrchr
#undef strnlen
#undef memcmp
#undef strncmp
#undef strcmp
#undef strdup
#undef memset
#undef memcpy
#undef memmove
#define getenv own_getenv
#define setenv own_setenv
#define putenv own_putenv
#define unsetenv own_unsetenv
char *getenv(const char *);
int setenv(const char *, const char *, int);
int putenv(char *);
int unsetenv(const char *);
#include "../../lib/libc/env.c"
#undef getenv
#undef setenv
#undef putenv
#undef unsetenv
#define inet_pton own_inet_pton
#define inet_ntop own_inet_ntop
int inet_pton(int, const char *restrict, void *restrict);
const char *inet_ntop(int, const void *restrict, char *restrict, socklen_t);
#include "../../lib/libc/inet.c"
#undef inet_pton
#undef inet_ntop
#include <dirent.h>
#define opendir own_opendir
#define readdir own_readdir
#define closedir own_closedir
#define dirfd own_dirfd
DIR *opendir(const char *);
struct dirent *readdir(DIR *);
int closedir(DIR *);
int dirfd(DIR *);
#include "../../lib/libc/dirent.c"
#undef opendir
#undef readdir
#undef closedir
#undef dirfd
#define fcntl own_fcntl
int fcntl(int, int, ...);
#include "../../lib/libc/fcntl.c"
#undef fcntl
#define open own_open
#define openat own_openat
int open(const char *, int, ...);
int openat(int, const char *, int, ...);
#include "../../lib/libc/open.c"
#undef open
#undef openat
/* sigaction.c's return trampoline is musl's; here an x86-64 one of the same two instructions */
#define SIGACTION own_sigaction
#define SA_RESTORER 0x04000000 /* the kernel's; glibc keeps it to itself */
#define signal own_signal
#define __restore_rt own_restore_rt
__asm__(".text\n.type own_restore_rt,@function\nown_restore_rt:\n\tmov $15, %rax\n\tsyscall\n");
int own_sigaction(int, const struct sigaction *restrict, struct sigaction *restrict);
void (*signal(int, void (*)(int)))(int);
#include "../../lib/libc/sigaction.c"
#undef SIGACTION
#undef signal
#undef __restore_rt
#undef __restore
#define __secs_to_tm own___secs_to_tm
#define __year_to_secs own___year_to_secs
#define __month_to_secs own___month_to_secs
#include "../../lib/libc/secs_to_tm.c"
/* tz.c under own_ names, with its variables */
#define __secs_to_zone own___secs_to_zone
#define __tm_to_tzname own___tm_to_tzname
#define __utc own___utc
#define __tzname own___tzname
#define __timezone own___timezone
#define __daylight own___daylight
#define __tzset own___tzset
#define tzname own_tzname
#define timezone own_timezone
#define daylight own_daylight
#define tzset own_tzset
#define localtime_r own_localtime_r
#define gmtime_r own_gmtime_r
struct tm *localtime_r(const time_t *restrict, struct tm *restrict);
struct tm *gmtime_r(const time_t *restrict, struct tm *restrict);
#include "../../lib/libc/tz.c"
#undef localtime_r
#undef gmtime_r
#undef __secs_to_zone
#undef __tm_to_tzname
#undef __utc
#undef __tzname
#undef __timezone
#undef __daylight
#undef __tzset
#undef tzname
#undef timezone
#undef daylight
#undef tzset
#undef __secs_to_tm
#undef __year_to_secs
#undef __month_to_secs
#define execvp own_execvp
int execvp(const char *, char *const[]);
#include "../../lib/libc/execvp.c"
#undef execvp
#define socket own_socket
#define socketpair own_socketpair
#define accept4 own_accept4
int socket(int, int, int);
int socketpair(int, int, int, int[2]);
int accept4(int, struct sockaddr *restrict, socklen_t *restrict, int);
#include "../../lib/libc/socket.c"
#undef socket
#undef socketpair
#undef accept4
#define futimens own_futimens
int futimens(int, const struct timespec[2]);
#include "../../lib/libc/futimens.c"
#undef futimens
#define sigprocmask own_sigprocmask
int sigprocmask(int, const sigset_t *restrict, sigset_t *restrict);
#include "../../lib/libc/sigprocmask.c"
#undef sigprocmask
#define isatty own_isatty
int isatty(int);
#include "../../lib/libc/isatty.c"
#undef isatty
#define strerror own_strerror
char *strerror(int);
#include "../../lib/libc/strerror.c"
#undef strerror
#define nanosleep own_nanosleep
int nanosleep(const struct timespec *, struct timespec *);
#include "../../lib/libc/nanosleep.c"
#undef nanosleep
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#define read own_read
#define write own_write
#define close own_close
#define pread own_pread
#define pwrite own_pwrite
#define fsync own_fsync
#define fdatasync own_fdatasync
#define waitpid own_waitpid
#define connect own_connect
#define sendto own_sendto
#define recvfrom own_recvfrom
#define poll own_poll
#define ppoll own_ppoll
#define getrandom own_getrandom
ssize_t read(int, void *, size_t);
ssize_t write(int, const void *, size_t);
int close(int);
ssize_t pread(int, void *, size_t, off_t);
ssize_t pwrite(int, const void *, size_t, off_t);
int fsync(int);
int fdatasync(int);
pid_t waitpid(pid_t, int *, int);
int connect(int, const struct sockaddr *, socklen_t);
ssize_t sendto(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
ssize_t recvfrom(int, void *restrict, size_t, int, struct sockaddr *restrict, socklen_t *restrict);
int poll(struct pollfd *, nfds_t, int);
int ppoll(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
ssize_t getrandom(void *, size_t, unsigned);
#include "../../lib/libc/cancel.c"
#undef read
#undef write
#undef close
#undef pread
#undef pwrite
#undef fsync
#undef fdatasync
#undef waitpid
#undef connect
#undef sendto
#undef recvfrom
#undef poll
#undef ppoll
#undef getrandom
#include <sys/mman.h>
#define mmap own_mmap
#define mremap own_mremap
#define munmap own_munmap
void *mmap(void *, size_t, int, int, int, off_t);
void *mremap(void *, size_t, size_t, int, ...);
int munmap(void *, size_t);
#include "../../lib/libc/mmap.c"
#undef mmap
#undef mremap
#undef munmap
#include <sys/time.h>
#define gettimeofday own_gettimeofday
#define time own_time
int gettimeofday(struct timeval *restrict, void *restrict);
time_t time(time_t *);
#include "../../lib/libc/gettimeofday.c"
#undef gettimeofday
#undef time
#define clock_gettime own_clock_gettime
int clock_gettime(clockid_t, struct timespec *);
#include "../../lib/libc/clock_gettime.c"
#undef clock_gettime
/* syscall.c's assembly under another name, with musl's __syscall_ret written out */
#define SYSCALL_NAME "own_syscall"
#define SYSCALL_RET "own_syscall_ret"
long own_syscall(long, ...);
long own_syscall_ret(unsigned long);
long own_syscall_ret(unsigned long r)
{
	if (r > -4096UL) {
		errno = (int)-r;
		return -1;
	}
	return (long)r;
}
#include "../../lib/libc/syscall.c"
#endif
