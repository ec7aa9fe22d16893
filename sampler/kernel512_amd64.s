//go:build !purego

#include "textflag.h"

// The AVX-512 forms of the sweep's row kernels: the arithmetic of
// dotGeneric and axpyGeneric with one ZMM register for the eight lanes
// of a row's dot product (lane l holds the entries i ≡ l mod 8, as the two
// YMM registers of dot4FMA do), so the results are the same bits.

// func dot4AVX512(dst *[4]float64, x []float64, stride int, y []float64)
//
// dot4FMA with one ZMM accumulator per row. The caller checks
// len(x) ≥ 3*stride + len(y).
TEXT ·dot4AVX512(SB), NOSPLIT, $0-64
	MOVQ   dst+0(FP), BX
	MOVQ   x_base+8(FP), SI
	MOVQ   stride+32(FP), R11
	MOVQ   y_base+40(FP), DI
	MOVQ   y_len+48(FP), CX
	SHLQ   $3, R11
	LEAQ   (R11)(R11*2), R12
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	MOVQ   CX, DX
	SHRQ   $3, DX
	JZ     z4tail4

z4loop8:
	VMOVUPD     (DI), Z8
	VFMADD231PD (SI), Z8, Z0
	VFMADD231PD (SI)(R11*1), Z8, Z1
	VFMADD231PD (SI)(R11*2), Z8, Z2
	VFMADD231PD (SI)(R12*1), Z8, Z3
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        DX
	JNZ         z4loop8

z4tail4:
	// Lanes 4–7 aside; a block of 4 goes into lanes 0–3.
	VEXTRACTF64X4 $1, Z0, Y4
	VEXTRACTF64X4 $1, Z1, Y5
	VEXTRACTF64X4 $1, Z2, Y6
	VEXTRACTF64X4 $1, Z3, Y7
	TESTQ         $4, CX
	JZ            z4reduce
	VMOVUPD       (DI), Y8
	VFMADD231PD   (SI), Y8, Y0
	VFMADD231PD   (SI)(R11*1), Y8, Y1
	VFMADD231PD   (SI)(R11*2), Y8, Y2
	VFMADD231PD   (SI)(R12*1), Y8, Y3
	ADDQ          $32, SI
	ADDQ          $32, DI

z4reduce:
	// v_l = a_l + a_{l+4}, then (v₀+v₂) + (v₁+v₃).
	VADDPD       Y4, Y0, Y0
	VADDPD       Y5, Y1, Y1
	VADDPD       Y6, Y2, Y2
	VADDPD       Y7, Y3, Y3
	VEXTRACTF128 $1, Y0, X4
	VEXTRACTF128 $1, Y1, X5
	VEXTRACTF128 $1, Y2, X6
	VEXTRACTF128 $1, Y3, X7
	VADDPD       X4, X0, X0
	VADDPD       X5, X1, X1
	VADDPD       X6, X2, X2
	VADDPD       X7, X3, X3
	VPERMILPD    $1, X0, X4
	VPERMILPD    $1, X1, X5
	VPERMILPD    $1, X2, X6
	VPERMILPD    $1, X3, X7
	VADDSD       X4, X0, X0
	VADDSD       X5, X1, X1
	VADDSD       X6, X2, X2
	VADDSD       X7, X3, X3
	ANDQ         $3, CX
	JZ           z4done

z4loop1:
	VMOVSD      (DI), X8
	VFMADD231SD (SI), X8, X0
	VFMADD231SD (SI)(R11*1), X8, X1
	VFMADD231SD (SI)(R11*2), X8, X2
	VFMADD231SD (SI)(R12*1), X8, X3
	ADDQ        $8, SI
	ADDQ        $8, DI
	DECQ        CX
	JNZ         z4loop1

z4done:
	VMOVSD X0, 0(BX)
	VMOVSD X1, 8(BX)
	VMOVSD X2, 16(BX)
	VMOVSD X3, 24(BX)
	VZEROUPPER
	RET

// func axpy4AVX512(alpha *[4]float64, x []float64, stride int, y []float64)
//
// axpy4FMA eight entries at a time. The caller checks
// len(x) ≥ 3*stride + len(y).
TEXT ·axpy4AVX512(SB), NOSPLIT, $0-64
	MOVQ         alpha+0(FP), BX
	MOVQ         x_base+8(FP), SI
	MOVQ         stride+32(FP), R11
	MOVQ         y_base+40(FP), DI
	MOVQ         y_len+48(FP), CX
	VBROADCASTSD 0(BX), Z12
	VBROADCASTSD 8(BX), Z13
	VBROADCASTSD 16(BX), Z14
	VBROADCASTSD 24(BX), Z15
	SHLQ         $3, R11
	LEAQ         (R11)(R11*2), R12
	MOVQ         CX, DX
	SHRQ         $3, DX
	JZ           y4tail4

y4loop8:
	VMOVUPD     (DI), Z0
	VFMADD231PD (SI), Z12, Z0
	VFMADD231PD (SI)(R11*1), Z13, Z0
	VFMADD231PD (SI)(R11*2), Z14, Z0
	VFMADD231PD (SI)(R12*1), Z15, Z0
	VMOVUPD     Z0, (DI)
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        DX
	JNZ         y4loop8

y4tail4:
	TESTQ       $4, CX
	JZ          y4tail1
	VMOVUPD     (DI), Y0
	VFMADD231PD (SI), Y12, Y0
	VFMADD231PD (SI)(R11*1), Y13, Y0
	VFMADD231PD (SI)(R11*2), Y14, Y0
	VFMADD231PD (SI)(R12*1), Y15, Y0
	VMOVUPD     Y0, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI

y4tail1:
	ANDQ $3, CX
	JZ   y4done

y4loop1:
	VMOVSD      (DI), X0
	VFMADD231SD (SI), X12, X0
	VFMADD231SD (SI)(R11*1), X13, X0
	VFMADD231SD (SI)(R11*2), X14, X0
	VFMADD231SD (SI)(R12*1), X15, X0
	VMOVSD      X0, (DI)
	ADDQ        $8, SI
	ADDQ        $8, DI
	DECQ        CX
	JNZ         y4loop1

y4done:
	VZEROUPPER
	RET

// func dot4F32AVX512(dst *[4]float64, x []float32, stride int, y []float64)
//
// dot4AVX512 on float32 rows: each block of eight entries of a row is
// widened to float64 (VCVTPS2PD, exact) and then used as in dot4AVX512.
// The caller checks len(x) ≥ 3*stride + len(y).
TEXT ·dot4F32AVX512(SB), NOSPLIT, $0-64
	MOVQ   dst+0(FP), BX
	MOVQ   x_base+8(FP), SI
	MOVQ   stride+32(FP), R11
	MOVQ   y_base+40(FP), DI
	MOVQ   y_len+48(FP), CX
	SHLQ   $2, R11
	LEAQ   (R11)(R11*2), R12
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	MOVQ   CX, DX
	SHRQ   $3, DX
	JZ     s4tail4

s4loop8:
	VMOVUPD     (DI), Z8
	VCVTPS2PD   (SI), Z4
	VCVTPS2PD   (SI)(R11*1), Z5
	VCVTPS2PD   (SI)(R11*2), Z6
	VCVTPS2PD   (SI)(R12*1), Z7
	VFMADD231PD Z4, Z8, Z0
	VFMADD231PD Z5, Z8, Z1
	VFMADD231PD Z6, Z8, Z2
	VFMADD231PD Z7, Z8, Z3
	ADDQ        $32, SI
	ADDQ        $64, DI
	DECQ        DX
	JNZ         s4loop8

s4tail4:
	VEXTRACTF64X4 $1, Z0, Y4
	VEXTRACTF64X4 $1, Z1, Y5
	VEXTRACTF64X4 $1, Z2, Y6
	VEXTRACTF64X4 $1, Z3, Y7
	TESTQ         $4, CX
	JZ            s4reduce
	VMOVUPD       (DI), Y8
	VCVTPS2PD     (SI), Y9
	VCVTPS2PD     (SI)(R11*1), Y10
	VCVTPS2PD     (SI)(R11*2), Y11
	VCVTPS2PD     (SI)(R12*1), Y12
	VFMADD231PD   Y9, Y8, Y0
	VFMADD231PD   Y10, Y8, Y1
	VFMADD231PD   Y11, Y8, Y2
	VFMADD231PD   Y12, Y8, Y3
	ADDQ          $16, SI
	ADDQ          $32, DI

s4reduce:
	VADDPD       Y4, Y0, Y0
	VADDPD       Y5, Y1, Y1
	VADDPD       Y6, Y2, Y2
	VADDPD       Y7, Y3, Y3
	VEXTRACTF128 $1, Y0, X4
	VEXTRACTF128 $1, Y1, X5
	VEXTRACTF128 $1, Y2, X6
	VEXTRACTF128 $1, Y3, X7
	VADDPD       X4, X0, X0
	VADDPD       X5, X1, X1
	VADDPD       X6, X2, X2
	VADDPD       X7, X3, X3
	VPERMILPD    $1, X0, X4
	VPERMILPD    $1, X1, X5
	VPERMILPD    $1, X2, X6
	VPERMILPD    $1, X3, X7
	VADDSD       X4, X0, X0
	VADDSD       X5, X1, X1
	VADDSD       X6, X2, X2
	VADDSD       X7, X3, X3
	ANDQ         $3, CX
	JZ           s4done

s4loop1:
	VMOVSD      (DI), X8
	VCVTSS2SD   (SI), X9, X9
	VCVTSS2SD   (SI)(R11*1), X10, X10
	VCVTSS2SD   (SI)(R11*2), X11, X11
	VCVTSS2SD   (SI)(R12*1), X12, X12
	VFMADD231SD X9, X8, X0
	VFMADD231SD X10, X8, X1
	VFMADD231SD X11, X8, X2
	VFMADD231SD X12, X8, X3
	ADDQ        $4, SI
	ADDQ        $8, DI
	DECQ        CX
	JNZ         s4loop1

s4done:
	VMOVSD X0, 0(BX)
	VMOVSD X1, 8(BX)
	VMOVSD X2, 16(BX)
	VMOVSD X3, 24(BX)
	VZEROUPPER
	RET

// func axpy4F32AVX512(alpha *[4]float64, x []float32, stride int, y []float64)
//
// axpy4AVX512 on float32 rows, widened as in dot4F32AVX512. The caller
// checks len(x) ≥ 3*stride + len(y).
TEXT ·axpy4F32AVX512(SB), NOSPLIT, $0-64
	MOVQ         alpha+0(FP), BX
	MOVQ         x_base+8(FP), SI
	MOVQ         stride+32(FP), R11
	MOVQ         y_base+40(FP), DI
	MOVQ         y_len+48(FP), CX
	VBROADCASTSD 0(BX), Z12
	VBROADCASTSD 8(BX), Z13
	VBROADCASTSD 16(BX), Z14
	VBROADCASTSD 24(BX), Z15
	SHLQ         $2, R11
	LEAQ         (R11)(R11*2), R12
	MOVQ         CX, DX
	SHRQ         $3, DX
	JZ           t4tail4

t4loop8:
	VCVTPS2PD   (SI), Z4
	VCVTPS2PD   (SI)(R11*1), Z5
	VCVTPS2PD   (SI)(R11*2), Z6
	VCVTPS2PD   (SI)(R12*1), Z7
	VMOVUPD     (DI), Z0
	VFMADD231PD Z4, Z12, Z0
	VFMADD231PD Z5, Z13, Z0
	VFMADD231PD Z6, Z14, Z0
	VFMADD231PD Z7, Z15, Z0
	VMOVUPD     Z0, (DI)
	ADDQ        $32, SI
	ADDQ        $64, DI
	DECQ        DX
	JNZ         t4loop8

t4tail4:
	TESTQ       $4, CX
	JZ          t4tail1
	VCVTPS2PD   (SI), Y4
	VCVTPS2PD   (SI)(R11*1), Y5
	VCVTPS2PD   (SI)(R11*2), Y6
	VCVTPS2PD   (SI)(R12*1), Y7
	VMOVUPD     (DI), Y0
	VFMADD231PD Y4, Y12, Y0
	VFMADD231PD Y5, Y13, Y0
	VFMADD231PD Y6, Y14, Y0
	VFMADD231PD Y7, Y15, Y0
	VMOVUPD     Y0, (DI)
	ADDQ        $16, SI
	ADDQ        $32, DI

t4tail1:
	ANDQ $3, CX
	JZ   t4done

t4loop1:
	VCVTSS2SD   (SI), X4, X4
	VCVTSS2SD   (SI)(R11*1), X5, X5
	VCVTSS2SD   (SI)(R11*2), X6, X6
	VCVTSS2SD   (SI)(R12*1), X7, X7
	VMOVSD      (DI), X0
	VFMADD231SD X4, X12, X0
	VFMADD231SD X5, X13, X0
	VFMADD231SD X6, X14, X0
	VFMADD231SD X7, X15, X0
	VMOVSD      X0, (DI)
	ADDQ        $4, SI
	ADDQ        $8, DI
	DECQ        CX
	JNZ         t4loop1

t4done:
	VZEROUPPER
	RET
