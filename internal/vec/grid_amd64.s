//go:build amd64 && !purego

#include "textflag.h"

// func addGridAVX2(acc *int64, x *float32, n int, k float32) (done int, sq, or uint64)
//
// For whole groups of 8 values from the start of x[0:n]: v = fl32(x[j]·k);
// if any |v| of the group is not < 2³¹ (or is NaN), stop before the group.
// Otherwise n_j = trunc(v) (32-bit truncation, exact in that range),
// acc[j] += n_j (64-bit), Σ n_j² (VPMULDQ: exact 64-bit squares of 32-bit
// integers) and the OR of |n_j| are accumulated. Returns the number of
// values done (a multiple of 8), the sum of squares and the OR.
TEXT ·addGridAVX2(SB), NOSPLIT, $0-56
	MOVQ         acc+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS k+24(FP), Y15
	MOVL         $0x7fffffff, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14              // |·| mask
	MOVL         $0x4f000000, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13              // 2³¹ as float32
	VPXOR        Y10, Y10, Y10         // Σ n² (4 × uint64)
	VPXOR        Y11, Y11, Y11         // OR |n| (8 × uint32)
	XORQ         BX, BX

loop8:
	LEAQ         8(BX), DX
	CMPQ         DX, CX
	JGT          out
	VMULPS       (SI)(BX*4), Y15, Y0
	VANDPS       Y14, Y0, Y1
	VCMPPS       $1, Y13, Y1, Y2       // |v| < 2³¹ (ordered: NaN fails)
	VMOVMSKPS    Y2, AX
	CMPL         AX, $0xff
	JNE          out
	VCVTTPS2DQ   Y0, Y0
	VPABSD       Y0, Y1
	VPOR         Y1, Y11, Y11
	VEXTRACTI128 $1, Y0, X2
	VPMOVSXDQ    X0, Y3
	VPMOVSXDQ    X2, Y4
	VPADDQ       (DI)(BX*8), Y3, Y5
	VMOVDQU      Y5, (DI)(BX*8)
	VPADDQ       32(DI)(BX*8), Y4, Y6
	VMOVDQU      Y6, 32(DI)(BX*8)
	VPMULDQ      Y3, Y3, Y3
	VPMULDQ      Y4, Y4, Y4
	VPADDQ       Y3, Y10, Y10
	VPADDQ       Y4, Y10, Y10
	MOVQ         DX, BX
	JMP          loop8

out:
	VEXTRACTI128 $1, Y10, X0
	VPADDQ       X0, X10, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDQ       X1, X0, X0
	VMOVQ        X0, AX
	VEXTRACTI128 $1, Y11, X1
	VPOR         X1, X11, X1
	VPSHUFD      $0x4e, X1, X2
	VPOR         X2, X1, X1
	VPSHUFD      $0xb1, X1, X2
	VPOR         X2, X1, X1
	VMOVD        X1, DX
	MOVQ         BX, done+32(FP)
	MOVQ         AX, sq+40(FP)
	MOVQ         DX, or+48(FP)
	VZEROUPPER
	RET

// func addGridAVX512(acc *int64, x *float32, n int, k float32) (done int, sq, or uint64)
//
// addGridAVX2 with groups of 16 values, AVX-512 F only.
TEXT ·addGridAVX512(SB), NOSPLIT, $0-56
	MOVQ          acc+0(FP), DI
	MOVQ          x+8(FP), SI
	MOVQ          n+16(FP), CX
	VBROADCASTSS  k+24(FP), Z15
	MOVL          $0x7fffffff, AX
	VMOVD         AX, X14
	VPBROADCASTD  X14, Z14
	MOVL          $0x4f000000, AX
	VMOVD         AX, X13
	VPBROADCASTD  X13, Z13
	VPXORQ        Z10, Z10, Z10
	VPXORD        Z11, Z11, Z11
	XORQ          BX, BX

loop16:
	LEAQ          16(BX), DX
	CMPQ          DX, CX
	JGT           out512
	VMULPS        (SI)(BX*4), Z15, Z0
	VPANDD        Z14, Z0, Z1
	VCMPPS        $1, Z13, Z1, K1
	KMOVW         K1, AX
	CMPL          AX, $0xffff
	JNE           out512
	VCVTTPS2DQ    Z0, Z0
	VPABSD        Z0, Z1
	VPORD         Z1, Z11, Z11
	VEXTRACTI64X4 $1, Z0, Y2
	VPMOVSXDQ     Y0, Z3
	VPMOVSXDQ     Y2, Z4
	VPADDQ        (DI)(BX*8), Z3, Z5
	VMOVDQU64     Z5, (DI)(BX*8)
	VPADDQ        64(DI)(BX*8), Z4, Z6
	VMOVDQU64     Z6, 64(DI)(BX*8)
	VPMULDQ       Z3, Z3, Z3
	VPMULDQ       Z4, Z4, Z4
	VPADDQ        Z3, Z10, Z10
	VPADDQ        Z4, Z10, Z10
	MOVQ          DX, BX
	JMP           loop16

out512:
	VEXTRACTI64X4 $1, Z10, Y0
	VPADDQ        Y0, Y10, Y0
	VEXTRACTI128  $1, Y0, X1
	VPADDQ        X1, X0, X0
	VPSHUFD       $0x4e, X0, X1
	VPADDQ        X1, X0, X0
	VMOVQ         X0, AX
	VEXTRACTI64X4 $1, Z11, Y1
	VPOR          Y1, Y11, Y1
	VEXTRACTI128  $1, Y1, X2
	VPOR          X2, X1, X1
	VPSHUFD       $0x4e, X1, X2
	VPOR          X2, X1, X1
	VPSHUFD       $0xb1, X1, X2
	VPOR          X2, X1, X1
	VMOVD         X1, DX
	MOVQ          BX, done+32(FP)
	MOVQ          AX, sq+40(FP)
	MOVQ          DX, or+48(FP)
	VZEROUPPER
	RET
