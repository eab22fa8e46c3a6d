//go:build amd64 && !purego

#include "textflag.h"

DATA iota16<>+0(SB)/4, $0
DATA iota16<>+4(SB)/4, $1
DATA iota16<>+8(SB)/4, $2
DATA iota16<>+12(SB)/4, $3
DATA iota16<>+16(SB)/4, $4
DATA iota16<>+20(SB)/4, $5
DATA iota16<>+24(SB)/4, $6
DATA iota16<>+28(SB)/4, $7
DATA iota16<>+32(SB)/4, $8
DATA iota16<>+36(SB)/4, $9
DATA iota16<>+40(SB)/4, $10
DATA iota16<>+44(SB)/4, $11
DATA iota16<>+48(SB)/4, $12
DATA iota16<>+52(SB)/4, $13
DATA iota16<>+56(SB)/4, $14
DATA iota16<>+60(SB)/4, $15
GLOBL iota16<>(SB), RODATA|NOPTR, $64

// func poolMaxAVX512(x *float32, first int, offs *int, noffs int, c int, y *float32, arg *int32)
//
// poolMaxAVX2 for 16 channels per step (c a multiple of 16): the compare
// writes an opmask and the masked moves keep the first maximum.
TEXT ·poolMaxAVX512(SB), NOSPLIT, $0-56
	MOVQ      x+0(FP), SI
	MOVQ      first+8(FP), AX
	MOVQ      offs+16(FP), R8
	MOVQ      noffs+24(FP), R9
	MOVQ      c+32(FP), CX
	MOVQ      y+40(FP), DI
	MOVQ      arg+48(FP), DX
	VMOVDQU32 iota16<>(SB), Z15
	XORQ      BX, BX

cloop:
	// Best values and indices start at the window's first element.
	LEAQ         (AX)(BX*1), R10
	VMOVUPS      (SI)(R10*4), Z0
	VPBROADCASTD R10, Z1
	VPADDD       Z15, Z1, Z1
	XORQ         R11, R11

oloop:
	CMPQ         R11, R9
	JGE          odone
	MOVQ         (R8)(R11*8), R12
	ADDQ         R10, R12
	VMOVUPS      (SI)(R12*4), Z2
	VCMPPS       $0x1e, Z0, Z2, K1 // K1 = Z2 > Z0 (ordered, quiet)
	VMOVUPS      Z2, K1, Z0
	VPBROADCASTD R12, Z4
	VPADDD       Z15, Z4, Z4
	VMOVDQU32    Z4, K1, Z1
	INCQ         R11
	JMP          oloop

odone:
	VMOVUPS   Z0, (DI)(BX*4)
	VMOVDQU32 Z1, (DX)(BX*4)
	ADDQ      $16, BX
	CMPQ      BX, CX
	JL        cloop
	VZEROUPPER
	RET
