//go:build amd64 && !purego

#include "textflag.h"

DATA iota8<>+0(SB)/4, $0
DATA iota8<>+4(SB)/4, $1
DATA iota8<>+8(SB)/4, $2
DATA iota8<>+12(SB)/4, $3
DATA iota8<>+16(SB)/4, $4
DATA iota8<>+20(SB)/4, $5
DATA iota8<>+24(SB)/4, $6
DATA iota8<>+28(SB)/4, $7
GLOBL iota8<>(SB), RODATA|NOPTR, $32

// func poolMaxAVX2(x *float32, first int, offs *int, noffs int, c int, y *float32, arg *int32)
TEXT ·poolMaxAVX2(SB), NOSPLIT, $0-56
	MOVQ    x+0(FP), SI
	MOVQ    first+8(FP), AX
	MOVQ    offs+16(FP), R8
	MOVQ    noffs+24(FP), R9
	MOVQ    c+32(FP), CX
	MOVQ    y+40(FP), DI
	MOVQ    arg+48(FP), DX
	VMOVDQU iota8<>(SB), Y15
	XORQ    BX, BX

cloop:
	// Best values and indices start at the window's first element.
	LEAQ         (AX)(BX*1), R10
	VMOVUPS      (SI)(R10*4), Y0
	VMOVQ        R10, X1
	VPBROADCASTD X1, Y1
	VPADDD       Y15, Y1, Y1
	XORQ         R11, R11

oloop:
	CMPQ         R11, R9
	JGE          odone
	MOVQ         (R8)(R11*8), R12
	ADDQ         R10, R12
	VMOVUPS      (SI)(R12*4), Y2
	VCMPPS       $0x1e, Y0, Y2, Y3 // Y3 = Y2 > Y0 (ordered, quiet)
	VBLENDVPS    Y3, Y2, Y0, Y0    // Y0 = Y3 ? Y2 : Y0
	VMOVQ        R12, X4
	VPBROADCASTD X4, Y4
	VPADDD       Y15, Y4, Y4
	VBLENDVPS    Y3, Y4, Y1, Y1
	INCQ         R11
	JMP          oloop

odone:
	VMOVUPS Y0, (DI)(BX*4)
	VMOVDQU Y1, (DX)(BX*4)
	ADDQ    $8, BX
	CMPQ    BX, CX
	JL      cloop
	VZEROUPPER
	RET
