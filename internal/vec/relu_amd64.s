//go:build amd64 && !purego

#include "textflag.h"

// func reluAVX2(y, x *float32, n int)
//
// y[i] = x[i] where x[i] > 0 or x[i] is NaN (compare "not less or equal",
// true for unordered operands), else +0; n a multiple of 8.
TEXT ·reluAVX2(SB), NOSPLIT, $0-24
	MOVQ   y+0(FP), DI
	MOVQ   x+8(FP), SI
	MOVQ   n+16(FP), CX
	VXORPS Y15, Y15, Y15

loop16:
	CMPQ    CX, $16
	JLT     loop8
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VCMPPS  $6, Y15, Y0, Y2
	VCMPPS  $6, Y15, Y1, Y3
	VANDPS  Y0, Y2, Y2
	VANDPS  Y1, Y3, Y3
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     loop16

loop8:
	TESTQ   CX, CX
	JZ      done
	VMOVUPS (SI), Y0
	VCMPPS  $6, Y15, Y0, Y2
	VANDPS  Y0, Y2, Y2
	VMOVUPS Y2, (DI)

done:
	VZEROUPPER
	RET

// func reluAVX512(y, x *float32, n int)
//
// reluAVX2 with AVX-512 F, n a multiple of 16: the compare sets an opmask
// and a zeroing move keeps the selected values.
TEXT ·reluAVX512(SB), NOSPLIT, $0-24
	MOVQ    y+0(FP), DI
	MOVQ    x+8(FP), SI
	MOVQ    n+16(FP), CX
	VPXORD  Z15, Z15, Z15

loop32:
	CMPQ      CX, $32
	JLT       loop16b
	VMOVUPS   (SI), Z0
	VMOVUPS   64(SI), Z1
	VCMPPS    $6, Z15, Z0, K1
	VCMPPS    $6, Z15, Z1, K2
	VMOVUPS.Z Z0, K1, Z2
	VMOVUPS.Z Z1, K2, Z3
	VMOVUPS   Z2, (DI)
	VMOVUPS   Z3, 64(DI)
	ADDQ      $128, SI
	ADDQ      $128, DI
	SUBQ      $32, CX
	JMP       loop32

loop16b:
	TESTQ     CX, CX
	JZ        done512
	VMOVUPS   (SI), Z0
	VCMPPS    $6, Z15, Z0, K1
	VMOVUPS.Z Z0, K1, Z2
	VMOVUPS   Z2, (DI)

done512:
	VZEROUPPER
	RET

// func reluBackAVX2(dx, y, dy *float32, n int)
//
// dx[i] = dy[i] & ((0 − bits(y[i])) >> 31) (32-bit integer negation and
// arithmetic shift, as the Go loop computes the mask); n a multiple of 8.
TEXT ·reluBackAVX2(SB), NOSPLIT, $0-32
	MOVQ  dx+0(FP), DI
	MOVQ  y+8(FP), SI
	MOVQ  dy+16(FP), DX
	MOVQ  n+24(FP), CX
	VPXOR Y15, Y15, Y15

bloop16:
	CMPQ    CX, $16
	JLT     bloop8
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y1
	VPSUBD  Y0, Y15, Y0
	VPSUBD  Y1, Y15, Y1
	VPSRAD  $31, Y0, Y0
	VPSRAD  $31, Y1, Y1
	VPAND   (DX), Y0, Y0
	VPAND   32(DX), Y1, Y1
	VMOVDQU Y0, (DI)
	VMOVDQU Y1, 32(DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	SUBQ    $16, CX
	JMP     bloop16

bloop8:
	TESTQ   CX, CX
	JZ      bdone
	VMOVDQU (SI), Y0
	VPSUBD  Y0, Y15, Y0
	VPSRAD  $31, Y0, Y0
	VPAND   (DX), Y0, Y0
	VMOVDQU Y0, (DI)

bdone:
	VZEROUPPER
	RET

// func reluBackAVX512(dx, y, dy *float32, n int)
//
// reluBackAVX2 with AVX-512 F, n a multiple of 16.
TEXT ·reluBackAVX512(SB), NOSPLIT, $0-32
	MOVQ   dx+0(FP), DI
	MOVQ   y+8(FP), SI
	MOVQ   dy+16(FP), DX
	MOVQ   n+24(FP), CX
	VPXORD Z15, Z15, Z15

bloop32:
	CMPQ      CX, $32
	JLT       bloop16b
	VMOVDQU32 (SI), Z0
	VMOVDQU32 64(SI), Z1
	VPSUBD    Z0, Z15, Z0
	VPSUBD    Z1, Z15, Z1
	VPSRAD    $31, Z0, Z0
	VPSRAD    $31, Z1, Z1
	VPANDD    (DX), Z0, Z0
	VPANDD    64(DX), Z1, Z1
	VMOVDQU32 Z0, (DI)
	VMOVDQU32 Z1, 64(DI)
	ADDQ      $128, SI
	ADDQ      $128, DX
	ADDQ      $128, DI
	SUBQ      $32, CX
	JMP       bloop32

bloop16b:
	TESTQ     CX, CX
	JZ        bdone512
	VMOVDQU32 (SI), Z0
	VPSUBD    Z0, Z15, Z0
	VPSRAD    $31, Z0, Z0
	VPANDD    (DX), Z0, Z0
	VMOVDQU32 Z0, (DI)

bdone512:
	VZEROUPPER
	RET
