/* The fibers' context switch (emu_context.cpp), for emu_launch.cpp's scheduler: on x86-64 a
 * switch of the callee-saved registers and the stack pointer, without the signal-mask system
 * call that swapcontext makes at every switch (which took most of an emulation's time: a CUDA
 * thread switches at least twice); elsewhere ucontext. */
#ifndef KBENCH_EMU_CONTEXT_H
#define KBENCH_EMU_CONTEXT_H

#include <cstddef>

#if defined(__x86_64__)
struct emu_context {
    void *sp; /* the saved stack pointer, the registers above it */
};
#else
#include <ucontext.h>
struct emu_context {
    ucontext_t uc;
};
#endif

/* Makes *c start entry (which must never return) on the stack [stack, stack + bytes). */
void emu_context_make(emu_context *c, char *stack, size_t bytes, void (*entry)());
/* Saves the running context into *from and continues *to. */
void emu_context_switch(emu_context *from, emu_context *to);

#endif
