//go:build !purego

#include "textflag.h"

// NEON (ASIMD) bodies of package kernel: two float64 lanes per register.
// Each kernel performs exactly the IEEE operations of its generic twin
// (gates_generic.go, exp_generic.go), in the same order, lane by lane: FMLA
// and FMLS where the twin writes math.FMA, separate FMUL and FADD where it
// writes float64(a*b) + c. They cover n rounded down to an even number; the
// Go side (kernel_arm64.go) finishes an odd last element with the twin.
//
// The Go 1.26 arm64 assembler has no vector FADD, FMUL, FDIV, FMAX, FRINTN,
// FCMGT, BSL and the like, so they are WORD macros below, one per
// instruction, with operands (m, n, d) as in the STYLE guide; the encodings
// were checked with llvm-mc -triple=aarch64 -show-encoding, and
// TestImpl* compare every kernel with its twin bit for bit.

// Vd.2D = Vn.2D + Vm.2D (FADD)
#define FADD2D(m, n, d) WORD $(0x4e60d400 | ((m)<<16) | ((n)<<5) | (d))
// Vd.2D = Vn.2D - Vm.2D (FSUB)
#define FSUB2D(m, n, d) WORD $(0x4ee0d400 | ((m)<<16) | ((n)<<5) | (d))
// Vd.2D = Vn.2D * Vm.2D (FMUL)
#define FMUL2D(m, n, d) WORD $(0x6e60dc00 | ((m)<<16) | ((n)<<5) | (d))
// Vd.2D = Vn.2D / Vm.2D (FDIV)
#define FDIV2D(m, n, d) WORD $(0x6e60fc00 | ((m)<<16) | ((n)<<5) | (d))
// Vd.2D = max(Vn.2D, Vm.2D), NaN if either is NaN (FMAX)
#define FMAX2D(m, n, d) WORD $(0x4e60f400 | ((m)<<16) | ((n)<<5) | (d))
// Vd.2D = min(Vn.2D, Vm.2D), NaN if either is NaN (FMIN)
#define FMIN2D(m, n, d) WORD $(0x4ee0f400 | ((m)<<16) | ((n)<<5) | (d))
// Vd.2D = fma(Vn.2D, Vm.2D, Vd.2D) (FMLA)
#define FMLA2D(m, n, d) WORD $(0x4e60cc00 | ((m)<<16) | ((n)<<5) | (d))
// Vd.2D = fma(-Vn.2D, Vm.2D, Vd.2D) (FMLS)
#define FMLS2D(m, n, d) WORD $(0x4ee0cc00 | ((m)<<16) | ((n)<<5) | (d))
// Vd.2D = roundToEven(Vn.2D) (FRINTN)
#define FRINTN2D(n, d) WORD $(0x4e618800 | ((n)<<5) | (d))
// Vd.2D = floor(Vn.2D) (FRINTM)
#define FRINTM2D(n, d) WORD $(0x4e619800 | ((n)<<5) | (d))
// Vd.2D = |Vn.2D| (FABS)
#define FABS2D(n, d) WORD $(0x4ee0f800 | ((n)<<5) | (d))
// Vd.2D = -Vn.2D (FNEG)
#define FNEG2D(n, d) WORD $(0x6ee0f800 | ((n)<<5) | (d))
// Vd.2D = Vn.2D >= 0 ? all ones : 0, false for NaN (FCMGE #0.0)
#define FCMGEZ2D(n, d) WORD $(0x6ee0c800 | ((n)<<5) | (d))
// Vd.2D = Vn.2D > Vm.2D ? all ones : 0, false for NaN (FCMGT)
#define FCMGT2D(m, n, d) WORD $(0x6ee0e400 | ((m)<<16) | ((n)<<5) | (d))
// Vd = Vd ? Vn : Vm, bit by bit (BSL)
#define BSL16B(m, n, d) WORD $(0x6e601c00 | ((m)<<16) | ((n)<<5) | (d))
// Vd = Vm ? Vd : Vn, bit by bit (BIF)
#define BIF16B(m, n, d) WORD $(0x6ee01c00 | ((m)<<16) | ((n)<<5) | (d))

// Constants: the values of the named Go constants of exp_generic.go, twice
// each (one per lane). TestAsmConstants checks every line against the Go
// constant named in its comment.
DATA neonConst<>+0x00(SB)/8, $0x8000000000000000 // signMask = -0 (the sign bit)
DATA neonConst<>+0x08(SB)/8, $0x8000000000000000 // signMask = -0 (the sign bit)
DATA neonConst<>+0x10(SB)/8, $0x43300000000003ff // expMagic = 2^52 + 1023
DATA neonConst<>+0x18(SB)/8, $0x43300000000003ff // expMagic = 2^52 + 1023
DATA neonConst<>+0x20(SB)/8, $0x3fe0000000000000 // half = 0.5
DATA neonConst<>+0x28(SB)/8, $0x3fe0000000000000 // half = 0.5
DATA neonConst<>+0x30(SB)/8, $0xc087500000000000 // expMinArg = -746
DATA neonConst<>+0x38(SB)/8, $0xc087500000000000 // expMinArg = -746
DATA neonConst<>+0x40(SB)/8, $0x4086300000000000 // expMaxArg = 710
DATA neonConst<>+0x48(SB)/8, $0x4086300000000000 // expMaxArg = 710
DATA neonConst<>+0x50(SB)/8, $0x3dea39ef35793c76 // expLn2Lo = 1.90821492927058770002e-10
DATA neonConst<>+0x58(SB)/8, $0x3dea39ef35793c76 // expLn2Lo = 1.90821492927058770002e-10
DATA neonConst<>+0x60(SB)/8, $0x3fe62e42fee00000 // expLn2Hi = 6.93147180369123816490e-01
DATA neonConst<>+0x68(SB)/8, $0x3fe62e42fee00000 // expLn2Hi = 6.93147180369123816490e-01
DATA neonConst<>+0x70(SB)/8, $0x3ff71547652b82fe // expLog2E = log2(e)
DATA neonConst<>+0x78(SB)/8, $0x3ff71547652b82fe // expLog2E = log2(e)
DATA neonConst<>+0x80(SB)/8, $0x3ff0000000000000 // one = 1
DATA neonConst<>+0x88(SB)/8, $0x3ff0000000000000 // one = 1
GLOBL neonConst<>(SB), RODATA|NOPTR, $144

DATA expPoly<>+0x00(SB)/8, $0x3de6124613a86d09 // expC13 = 1/13!
DATA expPoly<>+0x08(SB)/8, $0x3de6124613a86d09 // expC13 = 1/13!
DATA expPoly<>+0x10(SB)/8, $0x3e21eed8eff8d898 // expC12 = 1/12!
DATA expPoly<>+0x18(SB)/8, $0x3e21eed8eff8d898 // expC12 = 1/12!
DATA expPoly<>+0x20(SB)/8, $0x3e5ae64567f544e4 // expC11 = 1/11!
DATA expPoly<>+0x28(SB)/8, $0x3e5ae64567f544e4 // expC11 = 1/11!
DATA expPoly<>+0x30(SB)/8, $0x3e927e4fb7789f5c // expC10 = 1/10!
DATA expPoly<>+0x38(SB)/8, $0x3e927e4fb7789f5c // expC10 = 1/10!
DATA expPoly<>+0x40(SB)/8, $0x3ec71de3a556c734 // expC9 = 1/9!
DATA expPoly<>+0x48(SB)/8, $0x3ec71de3a556c734 // expC9 = 1/9!
DATA expPoly<>+0x50(SB)/8, $0x3efa01a01a01a01a // expC8 = 1/8!
DATA expPoly<>+0x58(SB)/8, $0x3efa01a01a01a01a // expC8 = 1/8!
DATA expPoly<>+0x60(SB)/8, $0x3f2a01a01a01a01a // expC7 = 1/7!
DATA expPoly<>+0x68(SB)/8, $0x3f2a01a01a01a01a // expC7 = 1/7!
DATA expPoly<>+0x70(SB)/8, $0x3f56c16c16c16c17 // expC6 = 1/6!
DATA expPoly<>+0x78(SB)/8, $0x3f56c16c16c16c17 // expC6 = 1/6!
DATA expPoly<>+0x80(SB)/8, $0x3f81111111111111 // expC5 = 1/5!
DATA expPoly<>+0x88(SB)/8, $0x3f81111111111111 // expC5 = 1/5!
DATA expPoly<>+0x90(SB)/8, $0x3fa5555555555555 // expC4 = 1/4!
DATA expPoly<>+0x98(SB)/8, $0x3fa5555555555555 // expC4 = 1/4!
DATA expPoly<>+0xa0(SB)/8, $0x3fc5555555555555 // expC3 = 1/3!
DATA expPoly<>+0xa8(SB)/8, $0x3fc5555555555555 // expC3 = 1/3!
DATA expPoly<>+0xb0(SB)/8, $0x3fe0000000000000 // expC2 = 1/2!
DATA expPoly<>+0xb8(SB)/8, $0x3fe0000000000000 // expC2 = 1/2!
GLOBL expPoly<>(SB), RODATA|NOPTR, $192

DATA tanhPoly<>+0x00(SB)/8, $0xbfeedc5baafd6f4b // tanhP0 = -9.64399179425052238628e-1
DATA tanhPoly<>+0x08(SB)/8, $0xbfeedc5baafd6f4b // tanhP0 = -9.64399179425052238628e-1
DATA tanhPoly<>+0x10(SB)/8, $0xc058d26a0e26682d // tanhP1 = -9.92877231001918586564e1
DATA tanhPoly<>+0x18(SB)/8, $0xc058d26a0e26682d // tanhP1 = -9.92877231001918586564e1
DATA tanhPoly<>+0x20(SB)/8, $0xc0993ac030580563 // tanhP2 = -1.61468768441708447952e3
DATA tanhPoly<>+0x28(SB)/8, $0xc0993ac030580563 // tanhP2 = -1.61468768441708447952e3
DATA tanhPoly<>+0x30(SB)/8, $0x405c33f28a581b86 // tanhQ0 = 1.12811678491632931402e2
DATA tanhPoly<>+0x38(SB)/8, $0x405c33f28a581b86 // tanhQ0 = 1.12811678491632931402e2
DATA tanhPoly<>+0x40(SB)/8, $0x40a176fa0e5535fa // tanhQ1 = 2.23548839060100448583e3
DATA tanhPoly<>+0x48(SB)/8, $0x40a176fa0e5535fa // tanhQ1 = 2.23548839060100448583e3
DATA tanhPoly<>+0x50(SB)/8, $0x40b2ec102442040c // tanhQ2 = 4.84406305325125486048e3
DATA tanhPoly<>+0x58(SB)/8, $0x40b2ec102442040c // tanhQ2 = 4.84406305325125486048e3
DATA tanhPoly<>+0x60(SB)/8, $0x3fe4000000000000 // tanhSmall = 0.625
DATA tanhPoly<>+0x68(SB)/8, $0x3fe4000000000000 // tanhSmall = 0.625
DATA tanhPoly<>+0x70(SB)/8, $0xc000000000000000 // minusTwo = -2
DATA tanhPoly<>+0x78(SB)/8, $0xc000000000000000 // minusTwo = -2
GLOBL tanhPoly<>(SB), RODATA|NOPTR, $128

// Registers of the activation macros:
//
//	V16      argument and result
//	V17-V22  scratch
//	V23-V31  the constants of neonConst, in its order (LOAD_CONSTS)
//	R9       table pointer
#define LOAD_CONSTS \
	MOVD   $neonConst<>(SB), R9; \
	VLD1.P 64(R9), [V23.D2, V24.D2, V25.D2, V26.D2]; \
	VLD1.P 64(R9), [V27.D2, V28.D2, V29.D2, V30.D2]; \
	VLD1   (R9), [V31.D2]

// EXP_CORE sets V16 = expGeneric(V16) for V16 already clamped into
// [expMinArg, expMaxArg] (NaN stays NaN), step by step:
//
//	V17 = k = roundToEven(float64(x*log2e))
//	V16 = r = fma(-k, ln2lo, fma(-k, ln2hi, x))
//	V19 = p = fma(...fma(fma(C13, r, C12), r, C11)..., r, 1), Horner, alternating V18/V19
//	V18 = 2^k1, k1 = floor(k/2);  V17 = 2^k2, k2 = k - k1 (biased exponent + 2^52, shifted left 52)
//	V16 = float64(p*2^k1) * 2^k2
#define EXP_CORE \
	FMUL2D(30, 16, 17); \
	FRINTN2D(17, 17); \
	FMLS2D(29, 17, 16); \
	FMLS2D(28, 17, 16); \
	MOVD   $expPoly<>(SB), R9; \
	VLD1.P 16(R9), [V18.D2]; \
	VLD1.P 16(R9), [V19.D2]; FMLA2D(16, 18, 19); \
	VLD1.P 16(R9), [V18.D2]; FMLA2D(16, 19, 18); \
	VLD1.P 16(R9), [V19.D2]; FMLA2D(16, 18, 19); \
	VLD1.P 16(R9), [V18.D2]; FMLA2D(16, 19, 18); \
	VLD1.P 16(R9), [V19.D2]; FMLA2D(16, 18, 19); \
	VLD1.P 16(R9), [V18.D2]; FMLA2D(16, 19, 18); \
	VLD1.P 16(R9), [V19.D2]; FMLA2D(16, 18, 19); \
	VLD1.P 16(R9), [V18.D2]; FMLA2D(16, 19, 18); \
	VLD1.P 16(R9), [V19.D2]; FMLA2D(16, 18, 19); \
	VLD1.P 16(R9), [V18.D2]; FMLA2D(16, 19, 18); \
	VLD1.P 16(R9), [V19.D2]; FMLA2D(16, 18, 19); \
	VORR   V31.B16, V31.B16, V18.B16; FMLA2D(16, 19, 18); \
	VORR   V31.B16, V31.B16, V19.B16; FMLA2D(16, 18, 19); \
	FMUL2D(25, 17, 18); \
	FRINTM2D(18, 18); \
	FSUB2D(18, 17, 17); \
	FADD2D(24, 18, 18); \
	VSHL   $52, V18.D2, V18.D2; \
	FADD2D(24, 17, 17); \
	VSHL   $52, V17.D2, V17.D2; \
	FMUL2D(18, 19, 19); \
	FMUL2D(17, 19, 16)

// SIGMOID sets V16 = sigmoidGeneric(V16):
//
//	V20 = x;  V16 = z = exp(max(-|x|, expMinArg));  V21 = 1 + z
//	V20 = x >= 0 ? 1 : z;  V16 = V20 / V21
#define SIGMOID \
	VORR V16.B16, V16.B16, V20.B16; \
	FABS2D(16, 16); \
	FNEG2D(16, 16); \
	FMAX2D(26, 16, 16); \
	EXP_CORE; \
	FADD2D(31, 16, 21); \
	FCMGEZ2D(20, 20); \
	BSL16B(16, 31, 20); \
	FDIV2D(21, 20, 16)

// TANH sets V16 = tanhGeneric(V16), evaluating both branches and blending
// their operands before the one division:
//
//	V20 = x;  V21 = a = |x|;  V16 = e = exp(min(2a, expMaxArg))
//	V17 = s = a*a;  V18 = p = fma(fma(P0, s, P1), s, P2);  V19 = q = fma(fma(s+Q0, s, Q1), s, Q2)
//	V18 = (a*s)*p;  V16 = e + 1;  V17 = a < 0.625
//	small: V18/V19 = ((a*s)*p)/q, V21 = a;  large or NaN: -2/(e+1), 1
//	V21 = V21 + V18/V19;  V16 = copysign(V21, x) = signMask ? x : V21
#define TANH \
	VORR   V16.B16, V16.B16, V20.B16; \
	FABS2D(16, 21); \
	FADD2D(21, 21, 16); \
	FMIN2D(27, 16, 16); \
	EXP_CORE; \
	MOVD   $tanhPoly<>(SB), R9; \
	FMUL2D(21, 21, 17); \
	VLD1.P 16(R9), [V18.D2]; \
	VLD1.P 16(R9), [V19.D2]; FMLA2D(17, 18, 19); \
	VLD1.P 16(R9), [V18.D2]; FMLA2D(17, 19, 18); \
	VLD1.P 16(R9), [V19.D2]; FADD2D(17, 19, 19); \
	VLD1.P 16(R9), [V22.D2]; FMLA2D(17, 19, 22); \
	VLD1.P 16(R9), [V19.D2]; FMLA2D(17, 22, 19); \
	FMUL2D(17, 21, 17); \
	FMUL2D(18, 17, 18); \
	FADD2D(31, 16, 16); \
	VLD1.P 16(R9), [V17.D2]; \
	FCMGT2D(21, 17, 17); \
	VLD1   (R9), [V22.D2]; \
	BIF16B(17, 22, 18); \
	BIF16B(17, 16, 19); \
	BIF16B(17, 31, 21); \
	FDIV2D(19, 18, 18); \
	FADD2D(18, 21, 21); \
	VORR   V23.B16, V23.B16, V16.B16; \
	BSL16B(21, 20, 16)

// TC_H finishes a gate step's pair from c in V5 and o in V3: tc = tanh(c)
// stored through R7, h = o*tc through R8.
#define TC_H \
	VORR   V5.B16, V5.B16, V16.B16; \
	TANH; \
	VST1.P [V16.D2], 16(R7); \
	FMUL2D(16, 3, 6); \
	VST1.P [V6.D2], 16(R8)

// func gateStepNEON(gates []float64, zg []float64, cPrev []float64, c []float64, tc []float64, h []float64)
TEXT ·gateStepNEON(SB), NOSPLIT, $0-144
	MOVD c_len+80(FP), R11
	LSR  $1, R11, R10          // R10 = number of pairs
	CBZ  R10, gs_done
	LSL  $3, R11               // R11 = bytes per gate block
	MOVD gates_base+0(FP), R0  // i block
	ADD  R11, R0, R1           // f block
	ADD  R11, R1, R2           // g block
	ADD  R11, R2, R3           // o block
	MOVD zg_base+24(FP), R4
	MOVD cPrev_base+48(FP), R5
	MOVD c_base+72(FP), R6
	MOVD tc_base+96(FP), R7
	MOVD h_base+120(FP), R8
	LOAD_CONSTS

gs_loop:
	// Load every input of the pair before storing anything.
	VLD1   (R0), [V0.D2]
	VLD1   (R1), [V1.D2]
	VLD1   (R2), [V2.D2]
	VLD1   (R3), [V3.D2]
	VLD1.P 16(R5), [V4.D2]
	VST1.P [V2.D2], 16(R4)     // zg = z_g

	// i, f, g, o = σ(z_i), σ(z_f), tanh(z_g), σ(z_o)
	VORR V0.B16, V0.B16, V16.B16
	SIGMOID
	VORR V16.B16, V16.B16, V0.B16
	VORR V1.B16, V1.B16, V16.B16
	SIGMOID
	VORR V16.B16, V16.B16, V1.B16
	VORR V2.B16, V2.B16, V16.B16
	TANH
	VORR V16.B16, V16.B16, V2.B16
	VORR V3.B16, V3.B16, V16.B16
	SIGMOID
	VORR V16.B16, V16.B16, V3.B16

	// c = float64(f*cPrev) + float64(i*g)
	FMUL2D(4, 1, 5)
	FMUL2D(2, 0, 6)
	FADD2D(6, 5, 5)
	VST1.P [V0.D2], 16(R0)
	VST1.P [V1.D2], 16(R1)
	VST1.P [V2.D2], 16(R2)
	VST1.P [V3.D2], 16(R3)
	VST1.P [V5.D2], 16(R6)

	TC_H

	SUBS $1, R10
	BNE  gs_loop

gs_done:
	RET

// GB_LOAD loads a pair of each input of the backward step into V0-V7:
// i, f, g, o, tc, dh, dc, cPrev from R0-R7, advancing them.
#define GB_LOAD \
	VLD1.P 16(R0), [V0.D2]; \
	VLD1.P 16(R1), [V1.D2]; \
	VLD1.P 16(R2), [V2.D2]; \
	VLD1.P 16(R3), [V3.D2]; \
	VLD1.P 16(R4), [V4.D2]; \
	VLD1.P 16(R5), [V5.D2]; \
	VLD1.P 16(R6), [V6.D2]; \
	VLD1.P 16(R7), [V7.D2]

// GATE_BACKWARD computes gateBackwardBlocks' operations on a pair, from
// V0-V7 = i, f, g, o, tc, dh, dc, cPrev and V31 = 1 (V8 and V11 scratch):
//
//	V9  = dct = float64(float64(d*o)*float64(1-float64(t*t))) + dc
//	V10 = do = float64(float64(d*t)*float64(1-o)) * o
//	V12 = di = float64(float64(dct*g)*float64(1-i)) * i
//	V13 = df = float64(float64(dct*cPrev)*float64(1-f)) * f
//	V14 = dg = float64(dct*i) * float64(1-float64(g*g))
//	V15 = dcPrev = dct * f
#define GATE_BACKWARD \
	FMUL2D(4, 4, 8); \
	FSUB2D(8, 31, 8); \
	FMUL2D(3, 5, 9); \
	FMUL2D(8, 9, 9); \
	FADD2D(6, 9, 9); \
	FMUL2D(4, 5, 10); \
	FSUB2D(3, 31, 11); \
	FMUL2D(11, 10, 10); \
	FMUL2D(3, 10, 10); \
	FMUL2D(2, 9, 12); \
	FSUB2D(0, 31, 11); \
	FMUL2D(11, 12, 12); \
	FMUL2D(0, 12, 12); \
	FMUL2D(7, 9, 13); \
	FSUB2D(1, 31, 11); \
	FMUL2D(11, 13, 13); \
	FMUL2D(1, 13, 13); \
	FMUL2D(0, 9, 14); \
	FMUL2D(2, 2, 11); \
	FSUB2D(11, 31, 11); \
	FMUL2D(11, 14, 14); \
	FMUL2D(1, 9, 15)

// func gateBackwardNEON(dz []float64, dcPrev []float64, dh []float64, dc []float64, gates []float64, tc []float64, cPrev []float64)
TEXT ·gateBackwardNEON(SB), NOSPLIT, $0-168
	MOVD dh_len+56(FP), R15
	LSR  $1, R15, R14          // R14 = number of pairs
	CBZ  R14, gb_done
	LSL  $3, R15               // R15 = bytes per gate block
	MOVD gates_base+96(FP), R0 // i, f, g, o blocks
	ADD  R15, R0, R1
	ADD  R15, R1, R2
	ADD  R15, R2, R3
	MOVD tc_base+120(FP), R4
	MOVD dh_base+48(FP), R5
	MOVD dc_base+72(FP), R6
	MOVD cPrev_base+144(FP), R7
	MOVD dz_base+0(FP), R8     // di, df, dg, do blocks
	ADD  R15, R8, R10
	ADD  R15, R10, R11
	ADD  R15, R11, R12
	MOVD dcPrev_base+24(FP), R13
	FMOVD $1.0, F31
	VDUP  V31.D[0], V31.D2     // V31 = 1

gb_loop:
	GB_LOAD

	GATE_BACKWARD

	VST1.P [V10.D2], 16(R12)
	VST1.P [V12.D2], 16(R8)
	VST1.P [V13.D2], 16(R10)
	VST1.P [V14.D2], 16(R11)
	VST1.P [V15.D2], 16(R13)

	SUBS $1, R14
	BNE  gb_loop

gb_done:
	RET

// func lrpCellNEON(rcPrev []float64, qg []float64, rc []float64, gates []float64, zg []float64, c []float64, cPrev []float64, eps float64)
TEXT ·lrpCellNEON(SB), NOSPLIT, $0-176
	MOVD rc_len+56(FP), R15
	LSR  $1, R15, R14          // R14 = number of pairs
	CBZ  R14, lc_done
	LSL  $3, R15               // R15 = bytes per gate block
	MOVD gates_base+72(FP), R0 // i, f, g blocks
	ADD  R15, R0, R1
	ADD  R15, R1, R2
	MOVD rc_base+48(FP), R3
	MOVD zg_base+96(FP), R4
	MOVD c_base+120(FP), R5
	MOVD cPrev_base+144(FP), R6
	MOVD rcPrev_base+0(FP), R7
	MOVD qg_base+24(FP), R8
	MOVD $eps+168(FP), R9
	VLD1R (R9), [V7.D2]        // V7 = ε

lc_loop:
	VLD1.P 16(R0), [V0.D2]     // i
	VLD1.P 16(R1), [V1.D2]     // f
	VLD1.P 16(R2), [V2.D2]     // g
	VLD1.P 16(R3), [V3.D2]     // rc
	VLD1.P 16(R4), [V4.D2]     // zg
	VLD1.P 16(R5), [V5.D2]     // c
	VLD1.P 16(R6), [V6.D2]     // cPrev

	// V3 = s = rc / (c >= 0 ? c+ε : c-ε)
	FADD2D(7, 5, 8)
	FSUB2D(7, 5, 9)
	FCMGEZ2D(5, 10)
	BSL16B(9, 8, 10)
	FDIV2D(10, 3, 3)
	// V1 = rcPrev = float64(f*cPrev) * s
	FMUL2D(6, 1, 1)
	FMUL2D(3, 1, 1)
	// V0 = qg = float64(i*g) * s / (zg >= 0 ? zg+ε : zg-ε)
	FMUL2D(2, 0, 0)
	FMUL2D(3, 0, 0)
	FADD2D(7, 4, 8)
	FSUB2D(7, 4, 9)
	FCMGEZ2D(4, 10)
	BSL16B(9, 8, 10)
	FDIV2D(10, 0, 0)

	VST1.P [V1.D2], 16(R7)
	VST1.P [V0.D2], 16(R8)

	SUBS $1, R14
	BNE  lc_loop

lc_done:
	RET

// func lrpLinearNEON(dst []float64, acc []float64, a []float64)
TEXT ·lrpLinearNEON(SB), NOSPLIT, $0-72
	MOVD dst_len+8(FP), R3
	LSR  $1, R3                // R3 = number of pairs
	CBZ  R3, ll_done
	MOVD dst_base+0(FP), R0
	MOVD acc_base+24(FP), R1
	MOVD a_base+48(FP), R2

ll_loop:
	// dst += float64(a*acc)
	VLD1.P 16(R1), [V1.D2]
	VLD1.P 16(R2), [V2.D2]
	VLD1   (R0), [V0.D2]
	FMUL2D(1, 2, 2)
	FADD2D(2, 0, 0)
	VST1.P [V0.D2], 16(R0)
	SUBS   $1, R3
	BNE    ll_loop

ll_done:
	RET

// func axpyNEON(alpha float64, x []float64, y []float64)
TEXT ·axpyNEON(SB), NOSPLIT, $0-56
	MOVD y_len+40(FP), R3
	LSR  $1, R3                // R3 = number of pairs
	CBZ  R3, ax_done
	MOVD x_base+8(FP), R1
	MOVD y_base+32(FP), R2
	MOVD $alpha+0(FP), R9
	VLD1R (R9), [V31.D2]       // V31 = alpha

ax_loop:
	// y = fma(alpha, x, y)
	VLD1.P 16(R1), [V1.D2]
	VLD1   (R2), [V2.D2]
	VFMLA  V31.D2, V1.D2, V2.D2
	VST1.P [V2.D2], 16(R2)
	SUBS   $1, R3
	BNE    ax_loop

ax_done:
	RET

// func axpyRowsNEON(dst []float64, rows []float64, stride int, coef []float64)
//
// A chunk of dst stays in registers (8 values, then 2) while the rows go by,
// so every lane accumulates its terms in the order of j; rows whose
// coefficient is ±0 are skipped.
TEXT ·axpyRowsNEON(SB), NOSPLIT, $0-80
	MOVD dst_base+0(FP), R0
	MOVD dst_len+8(FP), R1
	LSL  $3, R1                // R1 = bytes of dst
	MOVD rows_base+24(FP), R2
	MOVD stride+48(FP), R3
	LSL  $3, R3                // R3 = bytes per row
	MOVD coef_base+56(FP), R4
	MOVD coef_len+64(FP), R5
	CBZ  R5, ar_done
	MOVD $0, R6                // R6 = byte offset of the chunk

ar_chunk8:
	// while R6+64 <= R1
	ADD  $64, R6, R7
	CMP  R1, R7
	BGT  ar_chunk2
	ADD  R6, R0, R8
	VLD1 (R8), [V0.D2, V1.D2, V2.D2, V3.D2]
	ADD  R6, R2, R10           // R10 = &rows[j*stride + i]
	MOVD R4, R11               // R11 = &coef[j]
	MOVD R5, R12               // R12 = rows left

ar_rows8:
	MOVD (R11), R13
	LSL  $1, R13               // drop the sign: zero iff coef[j] == ±0
	CBZ  R13, ar_next8
	VLD1R (R11), [V4.D2]
	VLD1  (R10), [V5.D2, V6.D2, V7.D2, V8.D2]
	VFMLA V4.D2, V5.D2, V0.D2
	VFMLA V4.D2, V6.D2, V1.D2
	VFMLA V4.D2, V7.D2, V2.D2
	VFMLA V4.D2, V8.D2, V3.D2

ar_next8:
	ADD  R3, R10
	ADD  $8, R11
	SUBS $1, R12
	BNE  ar_rows8
	VST1 [V0.D2, V1.D2, V2.D2, V3.D2], (R8)
	MOVD R7, R6
	B    ar_chunk8

ar_chunk2:
	// while R6+16 <= R1
	ADD  $16, R6, R7
	CMP  R1, R7
	BGT  ar_done
	ADD  R6, R0, R8
	VLD1 (R8), [V0.D2]
	ADD  R6, R2, R10
	MOVD R4, R11
	MOVD R5, R12

ar_rows2:
	MOVD (R11), R13
	LSL  $1, R13
	CBZ  R13, ar_next2
	VLD1R (R11), [V4.D2]
	VLD1  (R10), [V5.D2]
	VFMLA V4.D2, V5.D2, V0.D2

ar_next2:
	ADD  R3, R10
	ADD  $8, R11
	SUBS $1, R12
	BNE  ar_rows2
	VST1 [V0.D2], (R8)
	MOVD R7, R6
	B    ar_chunk2

ar_done:
	RET

// GST_GATE computes gate q of a pair: with bit q of R11 set it loads the
// activation from the act row (ract), else it loads z from the gates row
// (rg), applies ACT and stores the activation back; either way the result is
// left in Vv and both row pointers advance by a pair.
#define GST_GATE(q, rg, ract, ACT, v, lact, ldone) \
	TBNZ $q, R11, lact; \
	VLD1 (rg), [V16.D2]; \
	ACT; \
	VORR V16.B16, V16.B16, v.B16; \
	VST1 [v.D2], (rg); \
	B    ldone; \
lact: \
	VLD1 (ract), [v.D2]; \
ldone: \
	ADD  $16, rg; \
	ADD  $16, ract

// func gateStepTableNEON(gates []float64, stride int, act []float64, table int, cPrev []float64, c []float64, tc []float64, h []float64)
TEXT ·gateStepTableNEON(SB), NOSPLIT, $0-160
	MOVD c_len+96(FP), R10
	LSR  $1, R10               // R10 = number of pairs
	CBZ  R10, gst_done
	MOVD stride+24(FP), R15
	LSL  $3, R15               // R15 = bytes between gate blocks
	MOVD gates_base+0(FP), R0  // i, f, g, o blocks of gates
	ADD  R15, R0, R1
	ADD  R15, R1, R2
	ADD  R15, R2, R3
	MOVD act_base+32(FP), R12  // i, f, g, o blocks of act
	ADD  R15, R12, R13
	ADD  R15, R13, R14
	ADD  R15, R14, R15
	MOVD table+56(FP), R11
	MOVD cPrev_base+64(FP), R4
	MOVD c_base+88(FP), R6
	MOVD tc_base+112(FP), R7
	MOVD h_base+136(FP), R8
	LOAD_CONSTS

gst_loop:
	VLD1.P 16(R4), [V4.D2]     // cPrev, before anything is stored
	GST_GATE(0, R0, R12, SIGMOID, V0, gst_i_act, gst_i_done)
	GST_GATE(1, R1, R13, SIGMOID, V1, gst_f_act, gst_f_done)
	GST_GATE(2, R2, R14, TANH, V2, gst_g_act, gst_g_done)
	GST_GATE(3, R3, R15, SIGMOID, V3, gst_o_act, gst_o_done)

	// c = float64(f*cPrev) + float64(i*g)
	FMUL2D(4, 1, 5)
	FMUL2D(2, 0, 6)
	FADD2D(6, 5, 5)
	VST1.P [V5.D2], 16(R6)

	TC_H

	SUBS $1, R10
	BNE  gst_loop

gst_done:
	RET

// GBT_STORE stores Vv to the dz row rdz if bit q of R20 (need) is set, and
// advances rdz by a pair.
#define GBT_STORE(q, v, rdz, lbl) \
	TBZ  $q, R20, lbl; \
	VST1 [v.D2], (rdz); \
lbl: \
	ADD  $16, rdz

// func gateBackwardTableNEON(dz []float64, stride int, dcPrev []float64, dh []float64, dc []float64, gates []float64, act []float64, table int, need int, tc []float64, cPrev []float64)
TEXT ·gateBackwardTableNEON(SB), NOSPLIT, $0-216
	MOVD dh_len+64(FP), R14
	LSR  $1, R14               // R14 = number of pairs
	CBZ  R14, gbt_done
	MOVD stride+24(FP), R15
	LSL  $3, R15               // R15 = bytes between gate blocks
	MOVD table+152(FP), R19
	MOVD need+160(FP), R20

	// Gate q's activations: the gates block, or act's where bit q of
	// table is set.
	MOVD gates_base+104(FP), R0
	MOVD act_base+128(FP), R21
	TBZ  $0, R19, gbt_i
	MOVD R21, R0
gbt_i:
	MOVD gates_base+104(FP), R1
	ADD  R15, R1
	ADD  R15, R21
	TBZ  $1, R19, gbt_f
	MOVD R21, R1
gbt_f:
	MOVD gates_base+104(FP), R2
	ADD  R15, R2
	ADD  R15, R2
	ADD  R15, R21
	TBZ  $2, R19, gbt_g
	MOVD R21, R2
gbt_g:
	MOVD gates_base+104(FP), R3
	ADD  R15, R3
	ADD  R15, R3
	ADD  R15, R3
	ADD  R15, R21
	TBZ  $3, R19, gbt_o
	MOVD R21, R3
gbt_o:
	MOVD tc_base+168(FP), R4
	MOVD dh_base+56(FP), R5
	MOVD dc_base+80(FP), R6
	MOVD cPrev_base+192(FP), R7
	MOVD dz_base+0(FP), R8     // di, df, dg, do blocks
	ADD  R15, R8, R10
	ADD  R15, R10, R11
	ADD  R15, R11, R12
	MOVD dcPrev_base+32(FP), R13
	FMOVD $1.0, F31
	VDUP  V31.D[0], V31.D2     // V31 = 1

gbt_loop:
	GB_LOAD

	// Every gradient; those not in need are not stored.
	GATE_BACKWARD

	GBT_STORE(3, V10, R12, gbt_so)
	GBT_STORE(0, V12, R8, gbt_si)
	GBT_STORE(1, V13, R10, gbt_sf)
	GBT_STORE(2, V14, R11, gbt_sg)
	VST1.P [V15.D2], 16(R13)

	SUBS $1, R14
	BNE  gbt_loop

gbt_done:
	RET

// func gruStepNEON(gates []float64, stride int, hPrev []float64, c []float64, tc []float64, h []float64)
TEXT ·gruStepNEON(SB), NOSPLIT, $0-128
	MOVD c_len+64(FP), R10
	LSR  $1, R10, R10          // R10 = number of pairs
	CBZ  R10, grs_done
	MOVD stride+24(FP), R11
	LSL  $3, R11               // R11 = bytes between blocks
	MOVD gates_base+0(FP), R0  // r block
	ADD  R11, R0, R1           // z block
	ADD  R11, R1, R2           // n block (input part)
	ADD  R11, R2, R3           // W_hn·h + b_hn block, read only
	MOVD hPrev_base+32(FP), R4
	MOVD c_base+56(FP), R5
	MOVD tc_base+80(FP), R6
	MOVD h_base+104(FP), R7
	LOAD_CONSTS

grs_loop:
	// Load every input of the pair before storing anything.
	VLD1   (R0), [V0.D2]
	VLD1   (R1), [V1.D2]
	VLD1   (R2), [V2.D2]
	VLD1.P 16(R3), [V3.D2]
	VLD1.P 16(R4), [V4.D2]

	// r, z = σ(z_r), σ(z_z)
	VORR V0.B16, V0.B16, V16.B16
	SIGMOID
	VORR V16.B16, V16.B16, V0.B16
	VORR V1.B16, V1.B16, V16.B16
	SIGMOID
	VORR V16.B16, V16.B16, V1.B16

	// a = n_in + float64(r*hn), stored to tc; n = tanh(a)
	FMUL2D(3, 0, 5)
	FADD2D(5, 2, 5)
	VST1.P [V5.D2], 16(R6)
	VORR   V5.B16, V5.B16, V16.B16
	TANH

	// h = n + float64(z*float64(hPrev-n))
	FSUB2D(16, 4, 6)
	FMUL2D(6, 1, 6)
	FADD2D(6, 16, 6)
	VST1.P [V0.D2], 16(R0)
	VST1.P [V1.D2], 16(R1)
	VST1.P [V16.D2], 16(R2)
	VST1.P [V6.D2], 16(R5)
	VST1.P [V6.D2], 16(R7)

	SUBS $1, R10
	BNE  grs_loop

grs_done:
	RET

// func gruBackwardNEON(dz []float64, stride int, dcPrev []float64, dh []float64, dc []float64, gates []float64, hPrev []float64)
TEXT ·gruBackwardNEON(SB), NOSPLIT, $0-152
	MOVD dh_len+64(FP), R14
	LSR  $1, R14, R14          // R14 = number of pairs
	CBZ  R14, grb_done
	MOVD stride+24(FP), R15
	LSL  $3, R15               // R15 = bytes between blocks
	MOVD gates_base+104(FP), R0 // r, z, n, hn blocks
	ADD  R15, R0, R1
	ADD  R15, R1, R2
	ADD  R15, R2, R3
	MOVD dh_base+56(FP), R4
	MOVD dc_base+80(FP), R5
	MOVD hPrev_base+128(FP), R6
	MOVD dz_base+0(FP), R7     // dr, dz, dn, dhn blocks
	ADD  R15, R7, R8
	ADD  R15, R8, R10
	ADD  R15, R10, R11
	MOVD dcPrev_base+32(FP), R12
	FMOVD $1.0, F31
	VDUP  V31.D[0], V31.D2     // V31 = 1

grb_loop:
	VLD1.P 16(R0), [V0.D2]     // r
	VLD1.P 16(R1), [V1.D2]     // z
	VLD1.P 16(R2), [V2.D2]     // n
	VLD1.P 16(R3), [V3.D2]     // hn
	VLD1.P 16(R4), [V4.D2]     // dh
	VLD1.P 16(R5), [V5.D2]     // dc
	VLD1.P 16(R6), [V6.D2]     // hPrev

	FADD2D(5, 4, 4)            // d = dh + dc
	FSUB2D(1, 31, 7)           // 1 - z
	FMUL2D(7, 4, 8)            // d*(1-z)
	FMUL2D(2, 2, 9)
	FSUB2D(9, 31, 9)           // 1 - n*n
	FMUL2D(9, 8, 8)            // da
	FSUB2D(2, 6, 6)            // hPrev - n
	FMUL2D(6, 4, 6)            // dzt = d*(hPrev-n)
	FMUL2D(7, 6, 6)
	FMUL2D(1, 6, 6)            // dz_z = float64(dzt*(1-z)) * z
	FMUL2D(3, 8, 10)           // da*hn
	FSUB2D(0, 31, 11)          // 1 - r
	FMUL2D(11, 10, 10)
	FMUL2D(0, 10, 10)          // dz_r
	FMUL2D(0, 8, 12)           // dz_hn = da*r
	FMUL2D(1, 4, 13)           // dcPrev = d*z
	VST1.P [V10.D2], 16(R7)
	VST1.P [V6.D2], 16(R8)
	VST1.P [V8.D2], 16(R10)
	VST1.P [V12.D2], 16(R11)
	VST1.P [V13.D2], 16(R12)

	SUBS $1, R14
	BNE  grb_loop

grb_done:
	RET
