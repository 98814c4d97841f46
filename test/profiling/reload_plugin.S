/* A plugin whose one function allocates SIZE bytes from a stack frame of FRAME bytes, for
 * reload.c. Built twice with different FRAME: the code has the same length and layout, so when
 * one is closed and the other opened at the same address, the return address from malloc is the
 * same pc with a different call frame rule. */
        .text
        .globl  reload_alloc
        .type   reload_alloc, @function
reload_alloc:
        .cfi_startproc
        subq    $FRAME, %rsp            /* FRAME >= 128: the same (imm32) encoding for both */
        .cfi_adjust_cfa_offset FRAME
        movl    $SIZE, %edi
        call    malloc@PLT
        movq    %rax, (%rsp)
        addq    $FRAME, %rsp
        .cfi_adjust_cfa_offset -FRAME
        ret
        .cfi_endproc
        .size   reload_alloc, .-reload_alloc
        .section .note.GNU-stack,"",@progbits
