//go:build amd64 && !purego

#include "textflag.h"

// func addRowsAVX2(dst, m *float32, c, n, rows int)
//
// For columns j < n (n a multiple of 8), in blocks of 32 then of 8:
// dst[j] += m[r·c + j] for r = 0..rows−1 in order (VADDPS: one rounding per
// addition, as the scalar loop). rows ≥ 1.
TEXT ·addRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ m+8(FP), SI
	MOVQ c+16(FP), R8
	SHLQ $2, R8                  // row stride in bytes
	MOVQ n+24(FP), CX
	MOVQ rows+32(FP), R9

blk32:
	CMPQ    CX, $32
	JLT     blk8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	MOVQ    SI, AX
	MOVQ    R9, DX

r32:
	VADDPS (AX), Y0, Y0
	VADDPS 32(AX), Y1, Y1
	VADDPS 64(AX), Y2, Y2
	VADDPS 96(AX), Y3, Y3
	ADDQ   R8, AX
	DECQ   DX
	JNZ    r32
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DI
	ADDQ    $128, SI
	SUBQ    $32, CX
	JMP     blk32

blk8:
	TESTQ   CX, CX
	JZ      done
	VMOVUPS (DI), Y0
	MOVQ    SI, AX
	MOVQ    R9, DX

r8:
	VADDPS (AX), Y0, Y0
	ADDQ   R8, AX
	DECQ   DX
	JNZ    r8
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	SUBQ    $8, CX
	JMP     blk8

done:
	VZEROUPPER
	RET
