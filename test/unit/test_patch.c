/* Unit tests for backend/x86.c (instruction lengths, rip-relative operands, branches, refusals),
 * backend/patch.c's resolution of PLT entries and backend/reach.c's look through this test
 * program's own code for paths into an allocator's free functions. The patching itself, of real allocators, runs
 * in test/profiling/cases/linked.sh and preloaded-first.sh. */
#include "unit_support.h"

#include "backend/backend.h"
#include "backend/patch_internal.h"
#include "backend/x86_internal.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

struct want {
    const char *what;
    uint8_t code[16];
    int n;   /* bytes given */
    int len; /* expected length, 0: refused */
    enum hp_x86_kind kind;
    int rip_disp;
};

static const struct want cases[] = {
    {"push rbp", {0x55}, 1, 1, HP_X86_PLAIN, -1},
    {"push r15", {0x41, 0x57}, 2, 2, HP_X86_PLAIN, -1},
    {"mov rbp,rsp", {0x48, 0x89, 0xe5}, 3, 3, HP_X86_PLAIN, -1},
    {"endbr64", {0xf3, 0x0f, 0x1e, 0xfa}, 4, 4, HP_X86_PLAIN, -1},
    {"cmp rdi,0x1000", {0x48, 0x81, 0xff, 0x00, 0x10, 0x00, 0x00}, 7, 7, HP_X86_PLAIN, -1},
    {"sub rsp,8", {0x48, 0x83, 0xec, 0x08}, 4, 4, HP_X86_PLAIN, -1},
    {"sub rsp,0x198", {0x48, 0x81, 0xec, 0x98, 0x01, 0x00, 0x00}, 7, 7, HP_X86_PLAIN, -1},
    {"lea rdx,[rip+x]", {0x48, 0x8d, 0x15, 0x4c, 0x5f, 0x2c, 0x00}, 7, 7, HP_X86_PLAIN, 3},
    {"mov rax,[rip+x]", {0x48, 0x8b, 0x05, 0x59, 0x96, 0x00, 0x00}, 7, 7, HP_X86_PLAIN, 3},
    {"cmp byte [rip+x],0", {0x80, 0x3d, 0x10, 0x00, 0x00, 0x00, 0x00}, 7, 7, HP_X86_PLAIN, 2},
    {"mov rax,fs:0x28", {0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00}, 9, 9, HP_X86_PLAIN, -1},
    {"mov r8,fs:[rax]", {0x64, 0x4c, 0x8b, 0x00}, 4, 4, HP_X86_PLAIN, -1},
    {"mov [rsp+8],1", {0xc7, 0x44, 0x24, 0x08, 0x01, 0x00, 0x00, 0x00}, 8, 8, HP_X86_PLAIN, -1},
    {"mov ax,0x1234", {0x66, 0xb8, 0x34, 0x12}, 4, 4, HP_X86_PLAIN, -1},
    {"movabs rax,imm64", {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, 10, 10, HP_X86_PLAIN, -1},
    {"test cl,1", {0xf6, 0xc1, 0x01}, 3, 3, HP_X86_PLAIN, -1},
    {"test ecx,imm32", {0xf7, 0xc1, 0x01, 0x00, 0x00, 0x00}, 6, 6, HP_X86_PLAIN, -1},
    {"neg rax", {0x48, 0xf7, 0xd8}, 3, 3, HP_X86_PLAIN, -1},
    {"movzx eax,byte [rdi]", {0x0f, 0xb6, 0x07}, 3, 3, HP_X86_PLAIN, -1},
    {"nopw [rax+rax]", {0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00}, 6, 6, HP_X86_PLAIN, -1},
    {"mov rax,[rsp+rbx*8+0x100]", {0x48, 0x8b, 0x84, 0xdc, 0x00, 0x01, 0x00, 0x00}, 8, 8, HP_X86_PLAIN, -1},
    {"mov rax,[rbx*8+disp32]", {0x48, 0x8b, 0x04, 0xdd, 0x00, 0x01, 0x00, 0x00}, 8, 8, HP_X86_PLAIN, -1},
    {"pxor xmm0,xmm0", {0x66, 0x0f, 0xef, 0xc0}, 4, 4, HP_X86_PLAIN, -1},
    {"palignr", {0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x08}, 6, 6, HP_X86_PLAIN, -1},
    {"pshufb", {0x66, 0x0f, 0x38, 0x00, 0xc1}, 5, 5, HP_X86_PLAIN, -1},
    {"xor ecx,ecx", {0x31, 0xc9}, 2, 2, HP_X86_PLAIN, -1},
    {"mul rsi", {0x48, 0xf7, 0xe6}, 3, 3, HP_X86_PLAIN, -1},
    {"call rax", {0xff, 0xd0}, 2, 2, HP_X86_PLAIN, -1},
    {"ret", {0xc3}, 1, 1, HP_X86_END, -1},
    {"ud2", {0x0f, 0x0b}, 2, 2, HP_X86_END, -1},
    {"jmp [rip+x]", {0xff, 0x25, 0x00, 0x10, 0x00, 0x00}, 6, 6, HP_X86_END, 2},
    {"jne rel8", {0x75, 0x10}, 2, 2, HP_X86_JCC, -1},
    {"ja rel32", {0x0f, 0x87, 0x93, 0x00, 0x00, 0x00}, 6, 6, HP_X86_JCC, -1},
    {"jmp rel8", {0xeb, 0xfe}, 2, 2, HP_X86_JMP, -1},
    {"jmp rel32", {0xe9, 0x00, 0x01, 0x00, 0x00}, 5, 5, HP_X86_JMP, -1},
    {"call rel32", {0xe8, 0x00, 0x01, 0x00, 0x00}, 5, 5, HP_X86_CALL, -1},
    /* Refused. */
    {"vzeroupper (VEX)", {0xc5, 0xf8, 0x77}, 3, 0, HP_X86_PLAIN, -1},
    {"EVEX", {0x62, 0xf1, 0x7c, 0x48, 0x10, 0x00}, 6, 0, HP_X86_PLAIN, -1},
    {"addr32 prefix", {0x67, 0x8b, 0x00}, 3, 0, HP_X86_PLAIN, -1},
    {"jrcxz", {0xe3, 0x05}, 2, 0, HP_X86_PLAIN, -1},
    {"mov eax,moffs", {0xa1, 1, 2, 3, 4, 5, 6, 7, 8}, 9, 0, HP_X86_PLAIN, -1},
    {"xbegin", {0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00}, 6, 0, HP_X86_PLAIN, -1},
    {"far jmp", {0xff, 0x2d, 0, 0, 0, 0}, 6, 0, HP_X86_PLAIN, -1},
    {"truncated", {0x48, 0x8b, 0x05, 0x59}, 4, 0, HP_X86_PLAIN, -1},
};

START_TEST(test_decode)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct want *w = &cases[i];
        struct hp_x86_insn in;
        int len = hp_x86_decode(w->code, w->n, &in);
        ck_assert_msg(len == w->len, "%s: length %d, expected %d", w->what, len, w->len);
        if (!len)
            continue;
        ck_assert_msg(in.len == len, "%s: in.len", w->what);
        ck_assert_msg(in.kind == w->kind, "%s: kind %d, expected %d", w->what, in.kind, w->kind);
        ck_assert_msg(in.rip_disp == w->rip_disp, "%s: rip_disp %d, expected %d", w->what, in.rip_disp,
                      w->rip_disp);
    }
}
END_TEST

START_TEST(test_branch_targets)
{
    struct hp_x86_insn in;
    const uint8_t jne[] = {0x75, 0x10};
    ck_assert_int_eq(hp_x86_decode(jne, 2, &in), 2);
    ck_assert_int_eq(in.cc, 5);
    ck_assert(in.target == (uint64_t)(uintptr_t)jne + 2 + 0x10);
    const uint8_t back[] = {0xeb, 0xfe}; /* jmp to itself */
    ck_assert_int_eq(hp_x86_decode(back, 2, &in), 2);
    ck_assert(in.target == (uint64_t)(uintptr_t)back);
    const uint8_t ja[] = {0x0f, 0x87, 0xf0, 0xff, 0xff, 0xff}; /* -16 */
    ck_assert_int_eq(hp_x86_decode(ja, 6, &in), 6);
    ck_assert_int_eq(in.cc, 7);
    ck_assert(in.target == (uint64_t)(uintptr_t)ja + 6 - 16);
    const uint8_t call[] = {0xe8, 0x00, 0x01, 0x00, 0x00};
    ck_assert_int_eq(hp_x86_decode(call, 5, &in), 5);
    ck_assert(in.target == (uint64_t)(uintptr_t)call + 5 + 0x100);
    ck_assert_int_eq(in.indirect, 0);
    /* Through a pointer: call *%rax, jmp *0x40(%rax), jmp *x(%rip); not inc (ff /0). */
    const uint8_t call_rax[] = {0xff, 0xd0}, jmp_mem[] = {0xff, 0x60, 0x40}, jmp_rip[] = {0xff, 0x25, 0, 0, 0, 0};
    const uint8_t inc[] = {0xff, 0xc0};
    ck_assert_int_eq(hp_x86_decode(call_rax, 2, &in), 2);
    ck_assert(in.indirect && in.kind == HP_X86_PLAIN);
    ck_assert_int_eq(hp_x86_decode(jmp_mem, 3, &in), 3);
    ck_assert(in.indirect && in.kind == HP_X86_END);
    ck_assert_int_eq(hp_x86_decode(jmp_rip, 6, &in), 6);
    ck_assert(in.indirect && in.kind == HP_X86_END);
    ck_assert_int_eq(hp_x86_decode(inc, 2, &in), 2);
    ck_assert_int_eq(in.indirect, 0);
}
END_TEST

/* Every prefix combination stays within the 15-byte limit and the bytes given. */
START_TEST(test_limits)
{
    uint8_t many[16];
    memset(many, 0x66, sizeof many);
    struct hp_x86_insn in;
    ck_assert_int_eq(hp_x86_decode(many, 16, &in), 0);
    const uint8_t rex_only[] = {0x48};
    ck_assert_int_eq(hp_x86_decode(rex_only, 1, &in), 0);
    const uint8_t imm_cut[] = {0x48, 0x81, 0xff, 0x00, 0x10};
    ck_assert_int_eq(hp_x86_decode(imm_cut, 5, &in), 0);
}
END_TEST

/* A PLT entry stands for the function it jumps to; a function is itself. */
static void *slot_target;
static uint8_t fake_plt[16];

START_TEST(test_resolve_plt)
{
    void *self = (void *)&hp_x86_decode;
    ck_assert_ptr_eq(hp_patch_resolve(self), self);
    slot_target = self;
    /* endbr64; bnd jmp *slot_target(%rip) */
    const uint8_t head[] = {0xf3, 0x0f, 0x1e, 0xfa, 0xf2, 0xff, 0x25};
    memcpy(fake_plt, head, sizeof head);
    int32_t d = (int32_t)((intptr_t)&slot_target - (intptr_t)(fake_plt + 11));
    memcpy(fake_plt + 7, &d, 4);
    ck_assert_ptr_eq(hp_patch_resolve(fake_plt), self);
    ck_assert_ptr_eq(hp_patch_resolve(NULL), NULL);
}
END_TEST

/* The next definition after the caller: found once, kept in the slot. */
START_TEST(test_next_sym)
{
    static void *slot;
    void *f = hp_next_sym(&slot, "getpid");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_eq(slot, f);
    ck_assert_int_eq(((pid_t(*)(void))f)(), getpid());
    ck_assert_ptr_eq(hp_next_sym(&slot, "no_such_function_anywhere"), f); /* found once, kept */
    static void *none;
    ck_assert_ptr_null(hp_next_sym(&none, "no_such_function_anywhere"));
}
END_TEST

/* The way into the shim from a patched entry point (keep_regs.c) keeps the caller's registers.
 * t_call(fn, routine, regs) loads rax, rcx, rdx, rsi, rdi, r8, r9, r10 from regs[0..7],
 * xmm0-15 from regs[8..23] (each value in both halves) and r11 from regs[24], calls a stub
 * made as patch.c makes them (a frame, r11 saved, fn in r11, a jump to the routine), stores
 * the same registers back into regs and returns rax. t_clobber overwrites all of them. */
void t_clobber(void);
uint64_t t_call(void (*fn)(void), void (*routine)(void), uint64_t *regs);
__asm__(".text\n"
        "t_clobber:\n"
        "  mov $-1, %rcx\n mov $-1, %rdx\n mov $-1, %rsi\n mov $-1, %rdi\n"
        "  mov $-1, %r8\n mov $-1, %r9\n mov $-1, %r10\n mov $-1, %r11\n"
        "  pcmpeqd %xmm0, %xmm0\n pcmpeqd %xmm1, %xmm1\n pcmpeqd %xmm2, %xmm2\n pcmpeqd %xmm3, %xmm3\n"
        "  pcmpeqd %xmm4, %xmm4\n pcmpeqd %xmm5, %xmm5\n pcmpeqd %xmm6, %xmm6\n pcmpeqd %xmm7, %xmm7\n"
        "  pcmpeqd %xmm8, %xmm8\n pcmpeqd %xmm9, %xmm9\n pcmpeqd %xmm10, %xmm10\n pcmpeqd %xmm11, %xmm11\n"
        "  pcmpeqd %xmm12, %xmm12\n pcmpeqd %xmm13, %xmm13\n pcmpeqd %xmm14, %xmm14\n pcmpeqd %xmm15, %xmm15\n"
        "  mov $77, %eax\n"
        "  ret\n"
        "t_stub:\n" /* patch.c's stub with fn in r13 and the routine in r12 */
        "  push %rbp\n mov %rsp, %rbp\n push %r11\n mov %r13, %r11\n jmp *%r12\n"
        ".globl t_call\n"
        "t_call:\n"
        "  push %rbx\n push %r12\n push %r13\n"
        "  mov %rdx, %rbx\n mov %rsi, %r12\n mov %rdi, %r13\n"
        "  mov 0(%rbx), %rax\n mov 8(%rbx), %rcx\n mov 16(%rbx), %rdx\n mov 24(%rbx), %rsi\n"
        "  mov 32(%rbx), %rdi\n mov 40(%rbx), %r8\n mov 48(%rbx), %r9\n mov 56(%rbx), %r10\n"
        "  mov 192(%rbx), %r11\n"
        "  movddup 64(%rbx), %xmm0\n movddup 72(%rbx), %xmm1\n movddup 80(%rbx), %xmm2\n"
        "  movddup 88(%rbx), %xmm3\n movddup 96(%rbx), %xmm4\n movddup 104(%rbx), %xmm5\n"
        "  movddup 112(%rbx), %xmm6\n movddup 120(%rbx), %xmm7\n movddup 128(%rbx), %xmm8\n"
        "  movddup 136(%rbx), %xmm9\n movddup 144(%rbx), %xmm10\n movddup 152(%rbx), %xmm11\n"
        "  movddup 160(%rbx), %xmm12\n movddup 168(%rbx), %xmm13\n movddup 176(%rbx), %xmm14\n"
        "  movddup 184(%rbx), %xmm15\n"
        "  call t_stub\n"
        "  mov %rax, 0(%rbx)\n mov %rcx, 8(%rbx)\n mov %rdx, 16(%rbx)\n mov %rsi, 24(%rbx)\n"
        "  mov %rdi, 32(%rbx)\n mov %r8, 40(%rbx)\n mov %r9, 48(%rbx)\n mov %r10, 56(%rbx)\n"
        "  mov %r11, 192(%rbx)\n"
        "  movhlps %xmm0, %xmm0\n" /* the high half, where both halves are one value */
        "  movq %xmm0, 64(%rbx)\n movq %xmm1, 72(%rbx)\n movq %xmm2, 80(%rbx)\n movq %xmm3, 88(%rbx)\n"
        "  movq %xmm4, 96(%rbx)\n movq %xmm5, 104(%rbx)\n movq %xmm6, 112(%rbx)\n movq %xmm7, 120(%rbx)\n"
        "  movq %xmm8, 128(%rbx)\n movq %xmm9, 136(%rbx)\n movq %xmm10, 144(%rbx)\n"
        "  movq %xmm11, 152(%rbx)\n movq %xmm12, 160(%rbx)\n movq %xmm13, 168(%rbx)\n"
        "  movq %xmm14, 176(%rbx)\n movq %xmm15, 184(%rbx)\n"
        "  pop %r13\n pop %r12\n pop %rbx\n"
        "  ret\n");

START_TEST(test_keep_regs)
{
    for (int v = 0; v < 2; v++) {
        uint64_t regs[25];
        for (int i = 0; i < 25; i++)
            regs[i] = 0x1000 + (uint64_t)i * 0x111;
        uint64_t r = t_call(t_clobber, v ? hp_patch_call_void : hp_patch_call_value, regs);
        /* A function with a result gives it; one without gives the caller's rax back. */
        ck_assert_uint_eq(r, v ? 0x1000 : 77);
        for (int i = 1; i < 25; i++)
            ck_assert_msg(regs[i] == 0x1000 + (uint64_t)i * 0x111, "%s slot %d: %#lx",
                          v ? "void" : "value", i, (unsigned long)regs[i]);
    }
}
END_TEST

/* Three small "allocators" in this program, for reach.c. Each free entry point calls an internal
 * free function; only the second's is also called from elsewhere (t_past, which a test below
 * calls: reachable from main through the test table); the third's free calls only through a
 * pointer. The bodies store to volatile globals so that nothing is folded. */
void *volatile t_sink_a, *volatile t_sink_b, *volatile t_sink_c;
static __attribute__((noinline)) void t_internal_a(void *p) { t_sink_a = p; }
static __attribute__((noinline)) void t_internal_b(void *p) { t_sink_b = p; }
static __attribute__((noinline)) void t_internal_c(void *p) { t_sink_c = p; }
__attribute__((noinline)) void t_free_a(void *p) { t_internal_a(p); __asm__ volatile(""); }
__attribute__((noinline)) void t_free_b(void *p) { t_internal_b(p); __asm__ volatile(""); }
void (*volatile t_table)(void *) = t_internal_c;
__attribute__((noinline)) void t_free_c(void *p) { t_table(p); __asm__ volatile(""); }
__attribute__((noinline)) void t_past(void *p) { t_internal_b(p); __asm__ volatile(""); }

/* A fourth: t_internal_d is called by t_free_d and by t_ft_b, which nothing calls or names; it
 * lies right after t_ft_a, whose last instruction calls a function that does not return, then
 * padding (in assembly, for the layout). t_ft_a is reachable (the test reads its address). */
void *volatile t_sink_d, *volatile t_sink_e;
__attribute__((noinline, used)) void t_internal_d(void *p) { t_sink_d = p; }
__attribute__((noinline)) void t_free_d(void *p) { t_internal_d(p); __asm__ volatile(""); }
__attribute__((noinline, noreturn, used)) void t_stop(void) { abort(); }
void t_ft_a(void);
__asm__(".text\n"
        ".p2align 4\n"
        ".type t_ft_a, @function\n"
        "t_ft_a:\n"
        ".cfi_startproc\n"
        "    call t_stop\n"
        ".cfi_endproc\n"
        ".size t_ft_a, .-t_ft_a\n"
        ".p2align 4, 0x90\n"
        ".type t_ft_b, @function\n"
        "t_ft_b:\n"
        ".cfi_startproc\n"
        "    jmp t_internal_d\n"
        ".cfi_endproc\n"
        ".size t_ft_b, .-t_ft_b\n");
void (*volatile t_ft_ref)(void) = t_ft_a;

/* A fifth: t_internal_e is called by t_free_e and by a constructor, which the test reaches
 * only through the init array (it takes the array's address, as the crt of glibc before 2.34
 * does): initialisers are not walked. */
static __attribute__((noinline)) void t_internal_e(void *p) { t_sink_e = p; }
__attribute__((noinline)) void t_free_e(void *p) { t_internal_e(p); __asm__ volatile(""); }
__attribute__((constructor)) static void t_ctor_e(void) { t_internal_e(NULL); }
extern void (*__init_array_start[])(void) __attribute__((weak));
extern void (*__init_array_end[])(void) __attribute__((weak));
void (**volatile t_init_ref)(void);

static int reach(void (*fn)(void *), const char **why, int *bypass)
{
    struct hp_reach_entry e = {(uintptr_t)fn, 0, HP_REACH_FREE};
    *why = "";
    return hp_reach_check(&e, 1, 1, why, bypass);
}

START_TEST(test_reach)
{
    const char *why;
    t_free_a(&why);
    t_free_b(&why);
    t_free_c(&why);
    t_past(&why); /* the path past t_free_b's entry */
    int bypass = -1;
    ck_assert_msg(reach(t_free_a, &why, &bypass) == 0, "t_free_a: %s", why);
    ck_assert_int_eq(bypass, 0);
    /* A path past the entry point: no for headers, but patching is safe (bypass). */
    ck_assert_int_eq(reach(t_free_b, &why, &bypass), -1);
    ck_assert_msg(strstr(why, "calls one of its internal free functions"), "t_free_b: %s", why);
    ck_assert_int_eq(bypass, 1);
    bypass = -1;
    ck_assert_int_eq(reach(t_free_c, &why, &bypass), -1);
    ck_assert_msg(strstr(why, "dispatches through a table"), "t_free_c: %s", why);
    ck_assert_int_eq(bypass, 1);
    /* Code the reader cannot follow is no bypass: nothing is known. */
    struct hp_reach_entry none = {0, 0, HP_REACH_FREE};
    ck_assert_int_eq(hp_reach_check(&none, 1, 1, &why, &bypass), -1);
    ck_assert_int_eq(bypass, 0);
    /* Without the walk (a sanitizer's runtime): only the entry points are looked at. */
    struct hp_reach_entry e = {(uintptr_t)t_free_b, 0, HP_REACH_FREE};
    ck_assert_int_eq(hp_reach_check(&e, 1, 0, &why, &bypass), 0);
    /* t_internal_b also called by an allocation entry point: not a free function of its own. */
    struct hp_reach_entry both[] = {{(uintptr_t)t_free_b, 0, HP_REACH_FREE}, {(uintptr_t)t_past, 0, HP_REACH_ALLOC}};
    ck_assert_msg(hp_reach_check(both, 2, 1, &why, &bypass) == 0, "%s", why);
    /* A call that does not come back, last in its function: what follows is not reached. */
    t_free_d(&why);
    ck_assert_ptr_nonnull(t_ft_ref);
    ck_assert_msg(reach(t_free_d, &why, &bypass) == 0, "t_free_d: %s", why);
    /* The initialisers, named by the init array's address: not walked. */
    t_free_e(&why);
    t_init_ref = __init_array_start;
    ck_assert_msg(reach(t_free_e, &why, &bypass) == 0, "t_free_e: %s", why);
}
END_TEST

static int main_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(struct dl_phdr_info *)arg = *info;
    return 1; /* the first is the program */
}

/* objcode.c: function starts from .eh_frame_hdr, the init array from the dynamic section. */
START_TEST(test_obj_code)
{
    struct dl_phdr_info info;
    struct hp_obj_code oc;
    ck_assert_int_eq(dl_iterate_phdr(main_object, &info), 1);
    hp_obj_code_read(&info, &oc);
    ck_assert_uint_gt(oc.fn_count, 10);
    ck_assert_int_eq(hp_obj_fn_start(&oc, (uintptr_t)t_free_a), 1);
    ck_assert_int_eq(hp_obj_fn_start(&oc, (uintptr_t)t_ft_a), 1);
    ck_assert_int_eq(hp_obj_fn_start(&oc, (uintptr_t)t_free_a + 1), 0);
    ck_assert_int_eq(hp_obj_fn_start(&oc, (uintptr_t)&t_sink_a), 0);
    /* (t_ctor_e is among them; naming it here would make it reachable for test_reach.) */
    ck_assert((uintptr_t)__init_array_start < (uintptr_t)__init_array_end);
    for (void (**f)(void) = __init_array_start; f < __init_array_end; f++)
        ck_assert_int_eq(hp_obj_init_data(&oc, (uintptr_t)f), 1);
    ck_assert_int_eq(hp_obj_init_data(&oc, (uintptr_t)&t_sink_a), 0);
    ck_assert_int_eq(hp_obj_init_fn(&oc, (uintptr_t)t_free_a), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("patch");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_decode);
    tcase_add_test(tc, test_branch_targets);
    tcase_add_test(tc, test_limits);
    tcase_add_test(tc, test_resolve_plt);
    tcase_add_test(tc, test_next_sym);
    tcase_add_test(tc, test_reach);
    tcase_add_test(tc, test_obj_code);
    tcase_add_test(tc, test_keep_regs);
    suite_add_tcase(s, tc);
    return hp_unit_run(s);
}
