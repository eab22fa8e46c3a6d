//go:build amd64 && !purego

#include "textflag.h"

// func sumSquaresAVX2(x *float32, n int) float64
//
// Σ x[i]² with every float32 widened to float64 (so each square is exact)
// and accumulated in float64: 16 lanes (four Y registers of four) over
// blocks of 16 elements, combined in a fixed order, then the tail in order.
TEXT ·sumSquaresAVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

loop16:
	CMPQ        CX, $16
	JLT         reduce
	VCVTPS2PD   (SI), Y4
	VCVTPS2PD   16(SI), Y5
	VCVTPS2PD   32(SI), Y6
	VCVTPS2PD   48(SI), Y7
	VFMADD231PD Y4, Y4, Y0
	VFMADD231PD Y5, Y5, Y1
	VFMADD231PD Y6, Y6, Y2
	VFMADD231PD Y7, Y7, Y3
	ADDQ        $64, SI
	SUBQ        $16, CX
	JMP         loop16

reduce:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0

tail:
	TESTQ       CX, CX
	JZ          done
	VMOVSS      (SI), X1
	VCVTSS2SD   X1, X1, X1
	VFMADD231SD X1, X1, X0
	ADDQ        $4, SI
	DECQ        CX
	JMP         tail

done:
	VMOVSD     X0, ret+16(FP)
	VZEROUPPER
	RET

// func scaleSumSquaresAVX2(x *float32, n int, s float32) float64
//
// x[i] = fl32(s·x[i]) for i < n, and returns Σ x[i]² of the stored values as
// sumSquaresAVX2 does (same lanes and order).
TEXT ·scaleSumSquaresAVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS s+16(FP), Y8
	VXORPD       Y0, Y0, Y0
	VXORPD       Y1, Y1, Y1
	VXORPD       Y2, Y2, Y2
	VXORPD       Y3, Y3, Y3

sloop16:
	CMPQ         CX, $16
	JLT          sreduce
	VMULPS       (SI), Y8, Y4
	VMULPS       32(SI), Y8, Y5
	VMOVUPS      Y4, (SI)
	VMOVUPS      Y5, 32(SI)
	VCVTPS2PD    X4, Y6
	VEXTRACTF128 $1, Y4, X4
	VCVTPS2PD    X4, Y4
	VCVTPS2PD    X5, Y7
	VEXTRACTF128 $1, Y5, X5
	VCVTPS2PD    X5, Y5
	VFMADD231PD  Y6, Y6, Y0
	VFMADD231PD  Y4, Y4, Y1
	VFMADD231PD  Y7, Y7, Y2
	VFMADD231PD  Y5, Y5, Y3
	ADDQ         $64, SI
	SUBQ         $16, CX
	JMP          sloop16

sreduce:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0

stail:
	TESTQ       CX, CX
	JZ          sdone
	VMULSS      (SI), X8, X1
	VMOVSS      X1, (SI)
	VCVTSS2SD   X1, X1, X1
	VFMADD231SD X1, X1, X0
	ADDQ        $4, SI
	DECQ        CX
	JMP         stail

sdone:
	VMOVSD     X0, ret+24(FP)
	VZEROUPPER
	RET
