/* spoolbox's syscall() for the static build (every lib/libc wrapper makes its call through it),
 * linked as an object like setxid.c so that musl's is never pulled. musl's is C reading six
 * variadic arguments (0.1 KiB, a stack protector); on x86-64 and arm64 the variadic arguments
 * are where the call's registers are, so here they are moved into the system call's registers
 * and musl's __syscall_ret makes a failure -1 and errno, as in musl's. 32-bit ARM keeps musl's.
 * (The unit test assembles it under other names.) */
#ifndef SYSCALL_NAME
#define SYSCALL_NAME "syscall"
#define SYSCALL_RET "__syscall_ret"
#endif
#if defined(__x86_64__)
__asm__(".text\n.global " SYSCALL_NAME "\n.type " SYSCALL_NAME ",@function\n" SYSCALL_NAME ":\n"
        "\tmov %rdi,%rax\n\tmov %rsi,%rdi\n\tmov %rdx,%rsi\n\tmov %rcx,%rdx\n"
        "\tmov %r8,%r10\n\tmov %r9,%r8\n\tmov 8(%rsp),%r9\n\tsyscall\n"
        "\tmov %rax,%rdi\n\tjmp " SYSCALL_RET "\n.size " SYSCALL_NAME ",.-" SYSCALL_NAME "\n");
#elif defined(__aarch64__)
__asm__(".text\n.global " SYSCALL_NAME "\n.type " SYSCALL_NAME ",%function\n" SYSCALL_NAME ":\n"
        "\tmov x8,x0\n\tmov x0,x1\n\tmov x1,x2\n\tmov x2,x3\n\tmov x3,x4\n\tmov x4,x5\n\tmov x5,x6\n"
        "\tsvc 0\n\tb " SYSCALL_RET "\n.size " SYSCALL_NAME ",.-" SYSCALL_NAME "\n");
#endif
typedef int syscall_is_asm; /* an empty file is not ISO C */
