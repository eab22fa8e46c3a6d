//go:build amd64 && !purego

#include "textflag.h"

// func addScaledAVX2(y, x *float32, n int, s float32, store bool) float64
//
// v[i] = fl32(s·x[i]); y[i] = fl32(y[i] + v[i]) (store: y[i] = v[i]) for
// i < n; returns Σ v[i]² with the lanes and order of sumSquaresAVX2 (16
// float64 lanes over blocks of 16, combined in a fixed order, then the
// tail in order). No fused multiply-add touches y: the product is rounded
// to float32 before the addition.
TEXT ·addScaledAVX2(SB), NOSPLIT, $0-40
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS s+24(FP), Y8
	MOVBLZX      store+28(FP), DX
	VXORPD       Y0, Y0, Y0
	VXORPD       Y1, Y1, Y1
	VXORPD       Y2, Y2, Y2
	VXORPD       Y3, Y3, Y3

loop16:
	CMPQ         CX, $16
	JLT          reduce
	VMULPS       (SI), Y8, Y4
	VMULPS       32(SI), Y8, Y5
	TESTQ        DX, DX
	JNZ          st16
	VADDPS       (DI), Y4, Y6
	VADDPS       32(DI), Y5, Y7
	VMOVUPS      Y6, (DI)
	VMOVUPS      Y7, 32(DI)
	JMP          sq16

st16:
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, 32(DI)

sq16:
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
	ADDQ         $64, DI
	SUBQ         $16, CX
	JMP          loop16

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
	VMULSS      (SI), X8, X1
	TESTQ       DX, DX
	JNZ         st1
	VADDSS      (DI), X1, X2
	VMOVSS      X2, (DI)
	JMP         sq1

st1:
	VMOVSS X1, (DI)

sq1:
	VCVTSS2SD   X1, X1, X1
	VFMADD231SD X1, X1, X0
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         tail

done:
	VMOVSD     X0, ret+32(FP)
	VZEROUPPER
	RET

// func addScaledAVX512(y, x *float32, n int, s float32, store bool) float64
//
// addScaledAVX2 with 16-wide float32 operations: the same 16 float64 lanes
// (Z0 holds lanes 0–7, Z1 lanes 8–15, one FMA chain each as in the AVX2
// kernel), reduced in the same order, so the result is bit-identical.
TEXT ·addScaledAVX512(SB), NOSPLIT, $0-40
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS s+24(FP), Z8
	MOVBLZX      store+28(FP), DX
	VXORPD       Z0, Z0, Z0
	VXORPD       Z1, Z1, Z1

zloop16:
	CMPQ   CX, $16
	JLT    zreduce
	VMULPS (SI), Z8, Z4
	TESTQ  DX, DX
	JNZ    zst16
	VADDPS  (DI), Z4, Z6
	VMOVUPS Z6, (DI)
	JMP     zsq16

zst16:
	VMOVUPS Z4, (DI)

zsq16:
	VCVTPS2PD     Y4, Z6
	VEXTRACTF64X4 $1, Z4, Y4
	VCVTPS2PD     Y4, Z4
	VFMADD231PD   Z6, Z6, Z0
	VFMADD231PD   Z4, Z4, Z1
	ADDQ          $64, SI
	ADDQ          $64, DI
	SUBQ          $16, CX
	JMP           zloop16

zreduce:
	// Lanes 0–3, 4–7, 8–11, 12–15 are the AVX2 kernel's Y0–Y3.
	VEXTRACTF64X4 $1, Z0, Y2
	VEXTRACTF64X4 $1, Z1, Y3
	VADDPD        Y2, Y0, Y0
	VADDPD        Y3, Y1, Y1
	VADDPD        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPD        X1, X0, X0
	VPERMILPD     $1, X0, X1
	VADDSD        X1, X0, X0

ztail:
	TESTQ  CX, CX
	JZ     zdone
	VMULSS (SI), X8, X1
	TESTQ  DX, DX
	JNZ    zst1
	VADDSS (DI), X1, X2
	VMOVSS X2, (DI)
	JMP    zsq1

zst1:
	VMOVSS X1, (DI)

zsq1:
	VCVTSS2SD   X1, X1, X1
	VFMADD231SD X1, X1, X0
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JMP         ztail

zdone:
	VMOVSD     X0, ret+32(FP)
	VZEROUPPER
	RET
