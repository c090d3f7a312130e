# toolgate-contain: the helper between the gateway and a command.
#   argv: NAME REPORT_FD AS_BYTES PROGRAM ARGV0 [ARGS...]
# Marks REPORT_FD close-on-exec, forks; the child sets RLIMIT_AS (soft and
# hard, when AS_BYTES > 0) and executes PROGRAM with ARGV0 ARGS and the
# helper's own environment; the parent waits for it. Report records, 8
# bytes each (tag, value; little-endian 32-bit) on REPORT_FD:
#   1 errno  execve failed (written by the child, which exits 127)
#   2 status the command's wait status (written by the parent, which exits 0)
#   3 errno  setting RLIMIT_AS failed (child, exits 126)
#   4 errno  wait4 failed (parent, exits 125)
# A bad command line exits 125 without a report.
	.globl _start
	.text
_start:
	mov	(%rsp), %rbx		# argc
	lea	8(%rsp), %rbp		# argv
	lea	8(%rbp,%rbx,8), %r15	# envp
	cmp	$5, %rbx
	jl	bad
	mov	8(%rbp), %rdi
	call	atou
	mov	%rax, %r12		# report fd
	mov	16(%rbp), %rdi
	call	atou
	mov	%rax, %r13		# address-space bound
	mov	$72, %eax		# fcntl(fd, F_SETFD, FD_CLOEXEC)
	mov	%r12, %rdi
	mov	$2, %esi
	mov	$1, %edx
	syscall
	test	%rax, %rax
	js	bad
	mov	$57, %eax		# fork
	syscall
	test	%rax, %rax
	js	bad
	jz	child
	mov	%rax, %r14		# the command's pid
	sub	$16, %rsp
wait:
	mov	$61, %eax		# wait4(pid, &status, 0, NULL)
	mov	%r14, %rdi
	lea	4(%rsp), %rsi
	xor	%edx, %edx
	xor	%r10d, %r10d
	syscall
	cmp	$-4, %rax		# EINTR
	je	wait
	test	%rax, %rax
	js	waitfail
	movl	$2, (%rsp)
	mov	$0, %r13d
	jmp	report
waitfail:
	neg	%eax
	movl	$4, (%rsp)
	mov	%eax, 4(%rsp)
	mov	$125, %r13d
report:
	mov	$1, %eax		# write(fd, rsp, 8)
	mov	%r12, %rdi
	mov	%rsp, %rsi
	mov	$8, %edx
	syscall
	mov	%r13, %rdi
	jmp	exit
child:
	sub	$16, %rsp
	test	%r13, %r13
	jz	exec
	mov	%r13, (%rsp)		# rlim_cur
	mov	%r13, 8(%rsp)		# rlim_max
	mov	$302, %eax		# prlimit64(0, RLIMIT_AS, &lim, NULL)
	xor	%edi, %edi
	mov	$9, %esi
	mov	%rsp, %rdx
	xor	%r10d, %r10d
	syscall
	test	%rax, %rax
	js	limitfail
exec:
	mov	$59, %eax		# execve(argv[3], &argv[4], envp)
	mov	24(%rbp), %rdi
	lea	32(%rbp), %rsi
	mov	%r15, %rdx
	syscall
	neg	%eax
	movl	$1, (%rsp)
	mov	%eax, 4(%rsp)
	mov	$127, %r13d
	jmp	report
limitfail:
	neg	%eax
	movl	$3, (%rsp)
	mov	%eax, 4(%rsp)
	mov	$126, %r13d
	jmp	report
bad:
	mov	$125, %edi
exit:
	mov	$231, %eax		# exit_group
	syscall
# atou: %rdi a decimal string; %rax its value. Anything else is bad.
atou:
	xor	%eax, %eax
	movzbl	(%rdi), %ecx
	test	%ecx, %ecx
	jz	bad
1:	movzbl	(%rdi), %ecx
	test	%ecx, %ecx
	jz	2f
	sub	$48, %ecx
	cmp	$9, %ecx
	ja	bad
	imul	$10, %rax, %rax
	add	%rcx, %rax
	inc	%rdi
	jmp	1b
2:	ret
	.section .note.GNU-stack,"",@progbits
