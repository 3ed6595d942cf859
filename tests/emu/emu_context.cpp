/* The fibers' context switch (emu_context.h). */
#include "emu_context.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)

/* emu_switch(from_sp, to_sp): pushes the callee-saved registers and the SSE and x87 control
 * words, saves the stack pointer into *from_sp, loads to_sp and pops the same from there. */
extern "C" void emu_switch(void **from_sp, void *to_sp);
asm(R"(
    .text
    .globl emu_switch
    .type emu_switch, @function
emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_switch, .-emu_switch
    .section .note.GNU-stack, "", @progbits
    .text
)");

/* The frame emu_switch pops on a fresh stack: control words, six registers (rbp 0 ends frame
 * pointer walks), entry as the return address, then a null return address for entry, so that
 * entry starts with the stack aligned as after a call. */
void emu_context_make(emu_context *c, char *stack, size_t bytes, void (*entry)())
{
    uintptr_t top = ((uintptr_t)stack + bytes) & ~(uintptr_t)15;
    uint64_t *sp = (uint64_t *)(top - 72);
    const uint32_t mxcsr = 0x1f80, fpcw = 0x037f; /* the ABI's defaults */
    std::memcpy(sp, &mxcsr, 4);
    std::memcpy((char *)sp + 4, &fpcw, 4);
    for (int r = 1; r <= 6; r++)
        sp[r] = 0;
    sp[7] = (uint64_t)(uintptr_t)entry;
    sp[8] = 0;
    c->sp = sp;
}

void emu_context_switch(emu_context *from, emu_context *to)
{
    emu_switch(&from->sp, to->sp);
}

#else

void emu_context_make(emu_context *c, char *stack, size_t bytes, void (*entry)())
{
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = stack;
    c->uc.uc_stack.ss_size = bytes;
    c->uc.uc_link = nullptr;
    makecontext(&c->uc, entry, 0);
}

void emu_context_switch(emu_context *from, emu_context *to)
{
    swapcontext(&from->uc, &to->uc);
}

#endif
