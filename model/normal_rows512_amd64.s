//go:build !purego

#include "textflag.h"

// Constants (consts512 in normal_rows512_amd64.go), broadcast with .BCST.
#define C_SIX ·consts512+0(SB)
#define C_M8 ·consts512+8(SB)
#define C_EIGHT ·consts512+32(SB)
#define C_FOUR ·consts512+40(SB)
#define C_NEGHALF ·consts512+48(SB)
#define C_LOGSQRT2PI ·consts512+56(SB)
#define C_SIGN ·consts512+64(SB)
#define C_ABS ·consts512+72(SB)
#define C_ONE ·consts512+80(SB)
#define C_HALF ·consts512+88(SB)
#define C_TWO ·consts512+96(SB)
#define C_500 ·consts512+104(SB)
#define C_PAD ·consts512+112(SB)
#define C_I1 ·consts512+120(SB)
#define C_ILEFT ·consts512+128(SB)
#define C_I9 ·consts512+136(SB)
#define C_I20 ·consts512+144(SB)
#define C_IBIAS ·consts512+152(SB)
#define C_LOG2E ·consts512+160(SB)
#define C_LN2U ·consts512+168(SB)
#define C_LN2L ·consts512+176(SB)
#define C_16TH ·consts512+184(SB)
#define C_T8 ·consts512+192(SB)
#define C_T7 ·consts512+200(SB)
#define C_T6 ·consts512+208(SB)
#define C_T5 ·consts512+216(SB)
#define C_T4 ·consts512+224(SB)
#define C_T3 ·consts512+232(SB)
#define C_INVSQRT2PI ·consts512+240(SB)
#define C_MANT ·consts512+248(SB)
#define C_HALFBITS ·consts512+256(SB)
#define C_I3FE ·consts512+264(SB)
#define C_HSQRT2 ·consts512+272(SB)
#define C_LN2HI ·consts512+280(SB)
#define C_LN2LO ·consts512+288(SB)
#define C_L1 ·consts512+296(SB)
#define C_L2 ·consts512+304(SB)
#define C_L3 ·consts512+312(SB)
#define C_L4 ·consts512+320(SB)
#define C_L5 ·consts512+328(SB)
#define C_L6 ·consts512+336(SB)
#define C_L7 ·consts512+344(SB)
#define C_IM60 ·consts512+368(SB)
#define C_I1022 ·consts512+376(SB)
#define C_TINY ·consts512+384(SB)
#define C_1600 ·consts512+392(SB)

// Frame of the kernels: saved arguments, each group's mask of packed
// margins, and the packed list (x, s, and the second pass's continued
// fractions f and results), 288 entries each: a chunk's 256 margins,
// padded; 11712 bytes. (The lanes' table indices go to general registers
// by extraction: reloading them from a 64-byte store waits for the store.)
#define F_LP 0(SP)
#define F_OUT 8(SP)
#define F_CNT 16(SP)
#define F_MODE 24(SP)
#define F_MASKS 128
#define F_TX 192
#define F_TS 2496
#define F_TLAM 4800
#define F_TLP 7104
#define F_TF 9408

// PAIR4 loads coefficients off/8 and off/8+1 of four lanes' pieces
// (element indices in RA, RB, RC, RD) of the table at BX into even and
// odd, as PAIR in normal_rows_amd64.s. Clobbers Y14, Y15.
#define PAIR4(off, RA, RB, RC, RD, even, odd) \
	VMOVUPD     off(BX)(RA*8), X14; \
	VINSERTF128 $1, off(BX)(RC*8), Y14, Y14; \
	VMOVUPD     off(BX)(RB*8), X15; \
	VINSERTF128 $1, off(BX)(RD*8), Y15, Y15; \
	VUNPCKLPD   Y15, Y14, even; \
	VUNPCKHPD   Y15, Y14, odd

// ESTRIN4 evaluates the degree-10 polynomials at table offset off of four
// lanes' pieces (element indices in RA–RD) at u = U, with u² in U2 and u⁴
// in U4, into Y3, by the fused multiply-adds of estrin in normal.go, in its
// order (as ESTRIN in normal_rows_amd64.s). Clobbers Y4–Y7, Y14, Y15.
#define ESTRIN4(off, RA, RB, RC, RD, U, U2, U4) \
	PAIR4(off+0, RA, RB, RC, RD, Y3, Y5); VFMADD231PD U, Y5, Y3; \
	PAIR4(off+16, RA, RB, RC, RD, Y4, Y5); VFMADD231PD U, Y5, Y4; \
	VFMADD231PD U2, Y4, Y3; \
	PAIR4(off+32, RA, RB, RC, RD, Y4, Y5); VFMADD231PD U, Y5, Y4; \
	PAIR4(off+48, RA, RB, RC, RD, Y6, Y5); VFMADD231PD U, Y5, Y6; \
	VFMADD231PD U2, Y6, Y4; \
	PAIR4(off+64, RA, RB, RC, RD, Y6, Y5); VFMADD231PD U, Y5, Y6; \
	PAIR4(off+80, RA, RB, RC, RD, Y5, Y7); VFMADD231PD U2, Y5, Y6; \
	VFMADD231PD U4, Y6, Y4; \
	VFMADD231PD U4, Y4, Y3

// ESTRIN8H is ESTRIN4 on eight lanes (element indices in R8, R9, R10, R11,
// R12, R13, R14, DI for lanes 0–7) as two halves of four: u, u², u⁴ in
// Z11, Z12, Z13, their upper halves also in Y8, Y9, Y10; the result in Z3.
// (Assembling the 16-byte loads into 512-bit registers costs twice the
// shuffles of 256-bit ones.) Clobbers Z0, Y4–Y7, Y14, Y15.
#define ESTRIN8H(off) \
	ESTRIN4(off, R8, R9, R10, R11, Y11, Y12, Y13); \
	VMOVAPD      Y3, Y0; \
	ESTRIN4(off, R12, R13, R14, DI, Y8, Y9, Y10); \
	VINSERTF64X4 $1, Y3, Z0, Z3

// NPDF8 is NPDF of normal_rows_amd64.s on eight lanes: φ(x) for x in X
// into R, for |x| < tailMax (other lanes get meaningless values; see
// NPDF8X for all x). K must
// be the zmm register of KY. Clobbers E, K, T.
#define NPDF8(X, R, E, K, KY, T) \
	VMULPD       X, X, R; \
	VMOVAPD      R, E; \
	VFMSUB231PD  X, X, E; \
	VMULPD.BCST  C_NEGHALF, R, R; \
	VMULPD.BCST  C_LOG2E, R, K; \
	VCVTPD2DQ    K, KY; \
	VCVTDQ2PD    KY, T; \
	VFNMADD231PD.BCST C_LN2U, T, R; \
	VFNMADD231PD.BCST C_LN2L, T, R; \
	VMULPD.BCST  C_16TH, R, R; \
	VBROADCASTSD C_T8, T; \
	VFMADD213PD.BCST C_T7, R, T; \
	VFMADD213PD.BCST C_T6, R, T; \
	VFMADD213PD.BCST C_T5, R, T; \
	VFMADD213PD.BCST C_T4, R, T; \
	VFMADD213PD.BCST C_T3, R, T; \
	VFMADD213PD.BCST C_HALF, R, T; \
	VFMADD213PD.BCST C_ONE, R, T; \
	VMULPD       T, R, R; \
	VADDPD.BCST  C_TWO, R, T; \
	VMULPD       T, R, R; \
	VADDPD.BCST  C_TWO, R, T; \
	VMULPD       T, R, R; \
	VADDPD.BCST  C_TWO, R, T; \
	VMULPD       T, R, R; \
	VADDPD.BCST  C_TWO, R, T; \
	VFMADD213PD.BCST C_ONE, T, R; \
	VPMOVSXDQ    KY, K; \
	VPADDQ.BCST  C_IBIAS, K, K; \
	VPSLLQ       $52, K, K; \
	VMULPD       K, R, R; \
	VMULPD.BCST  C_INVSQRT2PI, R, R; \
	VMULPD.BCST  C_HALF, E, E; \
	VBROADCASTSD C_ONE, T; \
	VSUBPD       E, T, T; \
	VMULPD       T, R, R

// NPDF8X is NPDF8 for every x but NaN, as npdf computes it: φ = 0 where
// x² > 1600, and otherwise archExp's scaling by 2^k in full — for
// k + 1023 ≤ 0 (exp(−x²/2) subnormal, 37.5 ≲ |x| ≤ 40) by 2^(k+1022)
// then 2⁻¹⁰²², which rounds to 0 below k + 1023 = −52 as archExp's
// underflow returns. Clobbers E, K, T, K7.
#define NPDF8X(X, R, E, K, KY, T) \
	VMULPD       X, X, R; \
	VMOVAPD      R, E; \
	VFMSUB231PD  X, X, E; \
	VMULPD.BCST  C_NEGHALF, R, R; \
	VMULPD.BCST  C_LOG2E, R, K; \
	VCVTPD2DQ    K, KY; \
	VCVTDQ2PD    KY, T; \
	VFNMADD231PD.BCST C_LN2U, T, R; \
	VFNMADD231PD.BCST C_LN2L, T, R; \
	VMULPD.BCST  C_16TH, R, R; \
	VBROADCASTSD C_T8, T; \
	VFMADD213PD.BCST C_T7, R, T; \
	VFMADD213PD.BCST C_T6, R, T; \
	VFMADD213PD.BCST C_T5, R, T; \
	VFMADD213PD.BCST C_T4, R, T; \
	VFMADD213PD.BCST C_T3, R, T; \
	VFMADD213PD.BCST C_HALF, R, T; \
	VFMADD213PD.BCST C_ONE, R, T; \
	VMULPD       T, R, R; \
	VADDPD.BCST  C_TWO, R, T; \
	VMULPD       T, R, R; \
	VADDPD.BCST  C_TWO, R, T; \
	VMULPD       T, R, R; \
	VADDPD.BCST  C_TWO, R, T; \
	VMULPD       T, R, R; \
	VADDPD.BCST  C_TWO, R, T; \
	VFMADD213PD.BCST C_ONE, T, R; \
	VPMOVSXDQ    KY, K; \
	VPADDQ.BCST  C_IBIAS, K, K; \
	VPMAXSQ.BCST C_IM60, K, K; \
	VPCMPQ       $2, Z31, K, K7; \
	VPADDQ.BCST  C_I1022, K, K7, K; \
	VPSLLQ       $52, K, K; \
	VMULPD       K, R, R; \
	VBROADCASTSD C_ONE, T; \
	VBROADCASTSD C_TINY, K7, T; \
	VMULPD       T, R, R; \
	VMULPD.BCST  C_INVSQRT2PI, R, R; \
	VMULPD.BCST  C_HALF, E, E; \
	VBROADCASTSD C_ONE, T; \
	VSUBPD       E, T, T; \
	VMULPD       T, R, R; \
	VMULPD       X, X, T; \
	VCMPPD.BCST  $0x1e, C_1600, T, K7; \
	VMOVAPD      Z31, K7, R

// LOG8 computes log(f) for f ≥ 8 (finite) in F into OUT as the Go
// runtime's math.Log does on amd64 (archLog, math/log_amd64.s: frexp, the
// halving at √2/2, s = f/(2+f), the polynomials in s⁴ and the
// reconstruction, product by product, without fused multiply-adds).
// Clobbers FM, KK, S, S2, S4, A, B and K7; OUT may be one of them but KK.
#define LOG8(F, OUT, FM, KK, S, S2, S4, A, B) \
	VPANDQ.BCST  C_MANT, F, FM; \
	VPORQ.BCST   C_HALFBITS, FM, FM; \
	VPSRLQ       $52, F, KK; \
	VPSUBQ.BCST  C_I3FE, KK, KK; \
	VCVTQQ2PD    KK, KK; \
	VCMPPD.BCST  $0x02, C_HSQRT2, FM, K7; \
	VSUBPD.BCST  C_ONE, KK, K7, KK; \
	VADDPD       FM, FM, K7, FM; \
	VSUBPD.BCST  C_ONE, FM, FM; \
	VADDPD.BCST  C_TWO, FM, S; \
	VDIVPD       S, FM, S; \
	VMULPD       S, S, S2; \
	VMULPD       S2, S2, S4; \
	VMULPD.BCST  C_L7, S4, A; \
	VADDPD.BCST  C_L5, A, A; \
	VMULPD       S4, A, A; \
	VADDPD.BCST  C_L3, A, A; \
	VMULPD       S4, A, A; \
	VADDPD.BCST  C_L1, A, A; \
	VMULPD       A, S2, A; \
	VMULPD.BCST  C_L6, S4, B; \
	VADDPD.BCST  C_L4, B, B; \
	VMULPD       S4, B, B; \
	VADDPD.BCST  C_L2, B, B; \
	VMULPD       B, S4, B; \
	VADDPD       B, A, A; \
	VMULPD.BCST  C_HALF, FM, S2; \
	VMULPD       FM, S2, S2; \
	VADDPD       S2, A, A; \
	VMULPD       A, S, S; \
	VMULPD.BCST  C_LN2LO, KK, B; \
	VADDPD       B, S, S; \
	VSUBPD       S, S2, S2; \
	VSUBPD       FM, S2, S2; \
	VMULPD.BCST  C_LN2HI, KK, KK; \
	VSUBPD       S2, KK, OUT

// CHAIN4 evaluates millsTail's continued fraction at t = Z0, Z4, Z8 and
// Z12 (four groups, four chains of divisions in flight): each lane's depth
// n = min(tailTerms, 9 + int(500/t²)), g = t, then g = t + k/g for
// k = 16, …, 2 where k ≤ n (n ≤ 16 for t ≥ 8; lanes with t < 8 get
// meaningless values), rem = 1/g and f = t + rem into Z1, Z5, Z9 and Z13.
// Clobbers Z2, Z3, Z6, Z7, Z10, Z11, Z14–Z16, K1–K4.
#define DEPTH(T, N, TMP) \
	VMULPD       T, T, TMP; \
	VBROADCASTSD C_500, N; \
	VDIVPD       TMP, N, N; \
	VCVTTPD2QQ   N, N; \
	VPADDQ.BCST  C_I9, N, N; \
	VPMINSQ.BCST C_I20, N, N; \
	VCVTQQ2PD    N, N

#define CSTEP1(T, G, N, TMP, KM) \
	VCMPPD $0x1d, Z16, N, KM; \
	VDIVPD G, Z16, TMP; \
	VADDPD TMP, T, KM, G

#define CSTEP(koff) \
	VBROADCASTSD ·chainK+koff(SB), Z16; \
	CSTEP1(Z0, Z1, Z2, Z3, K1); \
	CSTEP1(Z4, Z5, Z6, Z7, K2); \
	CSTEP1(Z8, Z9, Z10, Z11, K3); \
	CSTEP1(Z12, Z13, Z14, Z15, K4)

#define CEND(T, G, TMP) \
	VDIVPD G, Z16, TMP; \
	VADDPD TMP, T, G

#define CHAIN4 \
	DEPTH(Z0, Z2, Z3); \
	DEPTH(Z4, Z6, Z7); \
	DEPTH(Z8, Z10, Z11); \
	DEPTH(Z12, Z14, Z15); \
	VMOVAPD Z0, Z1; \
	VMOVAPD Z4, Z5; \
	VMOVAPD Z8, Z9; \
	VMOVAPD Z12, Z13; \
	CSTEP(128); CSTEP(120); CSTEP(112); CSTEP(104); CSTEP(96); \
	CSTEP(88); CSTEP(80); CSTEP(72); CSTEP(64); CSTEP(56); \
	CSTEP(48); CSTEP(40); CSTEP(32); CSTEP(24); CSTEP(16); \
	VBROADCASTSD C_ONE, Z16; \
	CEND(Z0, Z1, Z3); \
	CEND(Z4, Z5, Z7); \
	CEND(Z8, Z9, Z11); \
	CEND(Z12, Z13, Z15)

// CHAINPASS runs CHAIN4 over the packed list (R11 entries, padded to a
// multiple of 32), 32 margins at a time, t = |x|, and stores f at F_TF;
// when the mode in R13 has no bit 2 (log Φ), only where a margin is left
// of zero (the left tail). Clobbers R12 and what CHAIN4 does.
#define CHAINPASS \
	XORQ R12, R12; \
chainloop: \
	VMOVUPD     F_TX(SP)(R12*8), Z0; \
	VMOVUPD     F_TX+64(SP)(R12*8), Z4; \
	VMOVUPD     F_TX+128(SP)(R12*8), Z8; \
	VMOVUPD     F_TX+192(SP)(R12*8), Z12; \
	VPANDQ.BCST C_ABS, Z0, Z0; \
	VPANDQ.BCST C_ABS, Z4, Z4; \
	VPANDQ.BCST C_ABS, Z8, Z8; \
	VPANDQ.BCST C_ABS, Z12, Z12; \
	TESTQ $2, R13; \
	JNZ   chainrun; \
	VMOVUPD F_TX(SP)(R12*8), Z1; \
	VMINPD  F_TX+64(SP)(R12*8), Z1, Z1; \
	VMINPD  F_TX+128(SP)(R12*8), Z1, Z1; \
	VMINPD  F_TX+192(SP)(R12*8), Z1, Z1; \
	VCMPPD  $0x11, Z31, Z1, K1; \
	KORTESTB K1, K1; \
	JZ      chainnext; \
chainrun: \
	CHAIN4; \
	VMOVUPD Z1, F_TF(SP)(R12*8); \
	VMOVUPD Z5, F_TF+64(SP)(R12*8); \
	VMOVUPD Z9, F_TF+128(SP)(R12*8); \
	VMOVUPD Z13, F_TF+192(SP)(R12*8); \
chainnext: \
	ADDQ $32, R12; \
	CMPQ R12, R11; \
	JLT  chainloop

// PAD pads the packed list (R11 entries) with 32 right-tail margins of
// sign 0.
#define PAD \
	VBROADCASTSD C_PAD, Z0; \
	VMOVUPD      Z0, F_TX(SP)(R11*8); \
	VMOVUPD      Z0, F_TX+64(SP)(R11*8); \
	VMOVUPD      Z0, F_TX+128(SP)(R11*8); \
	VMOVUPD      Z0, F_TX+192(SP)(R11*8); \
	VMOVUPD      Z31, F_TS(SP)(R11*8); \
	VMOVUPD      Z31, F_TS+64(SP)(R11*8); \
	VMOVUPD      Z31, F_TS+128(SP)(R11*8); \
	VMOVUPD      Z31, F_TS+192(SP)(R11*8)

// CLASS sets, for the packed margins X of the second pass (each in the
// left or the right tail), KLT = x < 0 and KT = x > 0. Z31 is zero.
#define CLASS(X, KLT, KT) \
	VCMPPD $0x11, Z31, X, KLT; \
	VCMPPD $0x1e, Z31, X, KT

// func polyRowsAVX512(row, sg []float64, scale float64, lp *float64, out *uint8, mode int)
//
// Pass 1, per group of eight margins j: x = s_j·row[j]; lanes with
// 0 < x < 6 (right) or −8 < x ≤ 0 (left) are evaluated by the tables as in
// polyRowsAVX2, lanes in the band 6 ≤ x < 8 from φ(x) and M(x) as the
// scalar functions do; lanes with x ≥ 8 or x ≤ −8 are packed (x, s) into
// the list and the group's mask of them kept; out[j/8] gets a bit per
// other lane (NaN: left for the caller). Pass 2, over the packed margins:
// the continued fractions f (CHAINPASS: the left tail, and the right tail
// for log Φ), then sixteen at a time the right tail (λ = φ(x),
// log Φ = −φ(x)/f(x), which are 0 and −0 where φ underflows, as in
// LogPhiMills) and the left tail (λ = f(t),
// log Φ = ((−0.5·x)·x − ½log 2π) − log f(t), t = −x); φ and the logarithm
// only where a lane needs them. Pass 3 unpacks the results into row and
// lp. Mode bit 1: row[j] = (scale·s_j)·λ; mode bit 2: lp[j] = log Φ(x);
// evaluated lanes only.
TEXT ·polyRowsAVX512(SB), 0, $11712-80
	MOVQ         row_base+0(FP), SI
	MOVQ         row_len+8(FP), CX
	MOVQ         sg_base+24(FP), DX
	VBROADCASTSD scale+48(FP), Z30
	MOVQ         lp+56(FP), AX
	MOVQ         AX, F_LP
	MOVQ         out+64(FP), AX
	MOVQ         AX, F_OUT
	MOVQ         mode+72(FP), AX
	MOVQ         AX, F_MODE
	MOVQ         $0, F_CNT
	LEAQ         ·polyTab512(SB), BX
	VPXORQ       Z31, Z31, Z31
	SHLQ         $3, CX
	XORQ         AX, AX
	TESTQ        CX, CX
	JLE          done

loop:
	VMOVUPD (SI)(AX*1), Z0                      // m
	VMOVUPD (DX)(AX*1), Z1                      // s
	VMULPD  Z0, Z1, Z2                          // x = s·m

	// K1 = right (0 < x < 6), K5 = band (6 ≤ x < 8), K6 = either,
	// K2 = left (−8 < x ≤ 0), K3 = any of these; K4 = packed (x ≥ 8 or
	// x ≤ −8; all but NaN are in one of the ranges).
	VCMPPD      $0x1e, Z31, Z2, K1
	VCMPPD.BCST $0x11, C_SIX, Z2, K1, K1
	VCMPPD.BCST $0x1d, C_SIX, Z2, K5
	VCMPPD.BCST $0x11, C_EIGHT, Z2, K5, K5
	KORB        K1, K5, K6
	VCMPPD      $0x12, Z31, Z2, K2
	VCMPPD.BCST $0x1e, C_M8, Z2, K2, K2
	KORB        K6, K2, K3
	VCMPPD.BCST $0x1d, C_EIGHT, Z2, K4
	VCMPPD.BCST $0x12, C_M8, Z2, K2
	KORB        K4, K2, K4
	KORB        K3, K4, K2
	KNOTB       K2, K2
	KMOVB       K2, R9
	MOVQ        AX, R10
	SHRQ        $6, R10                         // group
	MOVQ        F_OUT, R8
	MOVB        R9, (R8)(R10*1)
	KMOVB       K4, R9
	MOVB        R9, F_MASKS(SP)(R10*1)
	TESTL       R9, R9
	JZ          poly
	MOVQ        F_CNT, R11
	VCOMPRESSPD Z2, K4, Z20
	VMOVUPD     Z20, F_TX(SP)(R11*8)
	VCOMPRESSPD Z1, K4, Z21
	VMOVUPD     Z21, F_TS(SP)(R11*8)
	POPCNTL     R9, R9
	ADDQ        R9, R11
	MOVQ        R11, F_CNT

poly:
	KORTESTB    K3, K3
	JZ          next

	// y = x (right, band) or t = −x (left); k = int(y·8) (right) or
	// int(y·4) (0 on the lanes outside); u = 16·y − (2k+1) or 8·y − (2k+1);
	// element index (k + leftPieces on the right lanes)·2·polyStride: the
	// band's lanes take the left tables' pieces at t = x, whose λ is M(x).
	VPXORQ.BCST  C_SIGN, Z2, Z7
	VMOVAPD      Z2, K6, Z7                     // y
	VBROADCASTSD C_FOUR, Z8
	VBROADCASTSD C_EIGHT, K1, Z8                // each lane's scale
	VMULPD       Z8, Z7, Z9
	VCVTTPD2QQ.Z Z9, K3, Z9                     // k
	VPADDQ       Z9, Z9, Z10
	VPADDQ.BCST  C_I1, Z10, Z10
	VCVTQQ2PD    Z10, Z10                       // 2k+1
	VADDPD       Z8, Z8, Z11
	VMULPD       Z7, Z11, Z11
	VSUBPD       Z10, Z11, Z11                  // u
	VMULPD       Z11, Z11, Z12                  // u²
	VMULPD       Z12, Z12, Z13                  // u⁴
	VPADDQ.BCST  C_ILEFT, Z9, K1, Z9
	VPMULLQ.BCST ·consts512+352(SB), Z9, Z9
	VMOVQ         X9, R8
	VPEXTRQ       $1, X9, R9
	VEXTRACTI64X2 $1, Z9, X10
	VMOVQ         X10, R10
	VPEXTRQ       $1, X10, R11
	VEXTRACTI64X2 $2, Z9, X10
	VMOVQ         X10, R12
	VPEXTRQ       $1, X10, R13
	VEXTRACTI64X2 $3, Z9, X10
	VMOVQ         X10, R14
	VPEXTRQ       $1, X10, DI

	VEXTRACTF64X4 $1, Z11, Y8
	VEXTRACTF64X4 $1, Z12, Y9
	VEXTRACTF64X4 $1, Z13, Y10

	// λ (M on the band's lanes) where the mode wants λ or there is a band.
	TESTQ    $1, F_MODE
	JNZ      lambda
	KORTESTB K5, K5
	JZ       logpart

lambda:
	ESTRIN8H(0)
	KORTESTB K5, K5
	JZ       lamout

	// The band: q = φ(x)/M(x), λ = φ/(1 − q) and log Φ = log1p(−q) =
	// (−q) − (−q)(−q)·½ (log1p's branch for 2⁻⁵⁴ ≤ |·| < 2⁻²⁹, which holds
	// there: 6e−16 < Q(x) < 2⁻²⁹), into Z3 and Z26.
	NPDF8(Z2, Z20, Z21, Z22, Y22, Z23)
	VDIVPD       Z3, Z20, Z24                   // q
	VBROADCASTSD C_ONE, Z25
	VSUBPD       Z24, Z25, Z25
	VDIVPD       Z25, Z20, K5, Z3               // φ/(1 − q)
	VPXORQ.BCST  C_SIGN, Z24, Z24
	VMULPD       Z24, Z24, Z25
	VMULPD.BCST  C_HALF, Z25, Z25
	VSUBPD       Z25, Z24, Z26

lamout:
	TESTQ   $1, F_MODE
	JZ      logpart
	VMULPD  Z30, Z1, Z4                         // scale·s
	VMULPD  Z3, Z4, Z4
	VMOVUPD Z4, K3, (SI)(AX*1)

logpart:
	TESTQ       $2, F_MODE
	JZ          next
	ESTRIN8H(96)                                // G (left) or −log Φ (right)
	VPXORQ.BCST C_SIGN, Z3, Z4                  // right: log Φ
	VMULPD.BCST C_NEGHALF, Z2, Z5               // left: ((−0.5·x)·x − ½log 2π) + G
	VMULPD      Z2, Z5, Z5
	VSUBPD.BCST C_LOGSQRT2PI, Z5, Z5
	VADDPD      Z3, Z5, Z5
	VMOVAPD     Z4, K1, Z5
	VMOVAPD     Z26, K5, Z5                     // the band
	MOVQ        F_LP, R8
	VMOVUPD     Z5, K3, (R8)(AX*1)

next:
	ADDQ $64, AX
	CMPQ AX, CX
	JLT  loop

	// Pass 2: the packed margins, padded with right-tail margins; the
	// continued fractions first, then sixteen margins at a time.
	MOVQ  F_CNT, R11
	TESTQ R11, R11
	JZ    done
	PAD
	MOVQ  F_MODE, R13
	CHAINPASS
	XORQ  R12, R12

tloop:
	VMOVUPD     F_TX(SP)(R12*8), Z0             // x, first group
	VMOVUPD     F_TX+64(SP)(R12*8), Z16         // x, second group
	VMOVUPD     F_TF(SP)(R12*8), Z2             // f
	VMOVUPD     F_TF+64(SP)(R12*8), Z18
	CLASS(Z0, K1, K3)
	CLASS(Z16, K4, K6)

	// φ where a lane needs it: the right tail.
	KORB     K3, K6, K7
	KORTESTB K7, K7
	JZ       nophi
	NPDF8X(Z0, Z3, Z10, Z11, Y11, Z12)
	NPDF8X(Z16, Z19, Z26, Z27, Y27, Z28)

nophi:
	// λ: φ (right tail), f (left tail); log Φ: −φ/f (right tail).
	VMOVAPD     Z3, Z4
	VMOVAPD     Z2, K1, Z4
	VMOVAPD     Z19, Z20
	VMOVAPD     Z18, K4, Z20
	TESTQ       $2, R13
	JZ          tstore
	VPXORQ.BCST C_SIGN, Z3, Z5
	VDIVPD      Z2, Z5, Z5
	VPXORQ.BCST C_SIGN, Z19, Z21
	VDIVPD      Z18, Z21, Z21

	// Left tail: log Φ = ((−0.5·x)·x − ½log 2π) − log f.
	KORTESTB K1, K1
	JZ       leftb
	LOG8(Z2, Z6, Z6, Z7, Z8, Z9, Z10, Z11, Z12)
	VMULPD.BCST C_NEGHALF, Z0, Z13
	VMULPD      Z0, Z13, Z13
	VSUBPD.BCST C_LOGSQRT2PI, Z13, Z13
	VSUBPD      Z6, Z13, K1, Z5

leftb:
	KORTESTB K4, K4
	JZ       tstore
	LOG8(Z18, Z22, Z22, Z23, Z24, Z25, Z26, Z27, Z28)
	VMULPD.BCST C_NEGHALF, Z16, Z29
	VMULPD      Z16, Z29, Z29
	VSUBPD.BCST C_LOGSQRT2PI, Z29, Z29
	VSUBPD      Z22, Z29, K4, Z21

tstore:
	VMULPD  F_TS(SP)(R12*8), Z30, Z6            // scale·s
	VMULPD  Z4, Z6, Z6
	VMOVUPD Z6, F_TLAM(SP)(R12*8)
	VMULPD  F_TS+64(SP)(R12*8), Z30, Z22
	VMULPD  Z20, Z22, Z22
	VMOVUPD Z22, F_TLAM+64(SP)(R12*8)
	VMOVUPD Z5, F_TLP(SP)(R12*8)
	VMOVUPD Z21, F_TLP+64(SP)(R12*8)
	ADDQ    $16, R12
	CMPQ    R12, R11
	JLT     tloop

	// Pass 3: unpack the results into the groups' packed lanes.
	XORQ R12, R12                               // position in the list
	XORQ R10, R10                               // group
	MOVQ CX, R11
	SHRQ $6, R11                                // groups
	MOVQ F_LP, DI

unpack:
	MOVBQZX F_MASKS(SP)(R10*1), R9
	TESTQ   R9, R9
	JZ      unext
	KMOVB   R9, K1
	MOVQ    R10, R8
	SHLQ    $6, R8                              // byte offset of the group
	TESTQ   $1, R13
	JZ      ulog
	VMOVUPD   F_TLAM(SP)(R12*8), Z0
	VEXPANDPD Z0, K1, Z1
	VMOVUPD   Z1, K1, (SI)(R8*1)

ulog:
	TESTQ     $2, R13
	JZ        ucount
	VMOVUPD   F_TLP(SP)(R12*8), Z0
	VEXPANDPD Z0, K1, Z1
	VMOVUPD   Z1, K1, (DI)(R8*1)

ucount:
	POPCNTL R9, R9
	ADDQ    R9, R12

unext:
	INCQ R10
	CMPQ R10, R11
	JLT  unpack

done:
	VZEROUPPER
	RET

// func cdfRowsAVX512(out, m []float64, flags *uint8)
//
// Pass 1, per group of eight margins: out[j] += Φ(m_j) for −8 < m ≤ 0
// (npdf(m)/M(−m)) and 0 < m < 8 (1/P(m)), as cdfRowsAVX2; lanes with
// |m| ≥ 8 are packed into the list; flags[j/8] gets a bit per other lane
// (NaN). Pass 2: the packed lanes' Φ, 1 − φ(m)/f(m) on the right and
// φ(m)/f(−m) on the left (normCDF's tails, 1 and 0 where φ underflows).
// Pass 3 adds them to out.
TEXT ·cdfRowsAVX512(SB), 0, $11712-56
	MOVQ   out_base+0(FP), DX
	MOVQ   m_base+24(FP), SI
	MOVQ   m_len+32(FP), CX
	MOVQ   flags+48(FP), AX
	MOVQ   AX, F_OUT
	MOVQ   $0, F_CNT
	LEAQ   ·cdfTab(SB), BX
	VPXORQ Z31, Z31, Z31
	SHLQ   $3, CX
	XORQ   AX, AX
	TESTQ  CX, CX
	JLE    cdone

cloop:
	VMOVUPD (SI)(AX*1), Z2                      // x = m

	// K1 = right (0 < x < 8), K2 = left (−8 < x ≤ 0), K3 = either;
	// K4 = packed (|x| ≥ 8).
	VCMPPD      $0x1e, Z31, Z2, K1
	VCMPPD.BCST $0x11, C_EIGHT, Z2, K1, K1
	VCMPPD      $0x12, Z31, Z2, K2
	VCMPPD.BCST $0x1e, C_M8, Z2, K2, K2
	KORB        K1, K2, K3
	VPANDQ.BCST C_ABS, Z2, Z7
	VCMPPD.BCST $0x1d, C_EIGHT, Z7, K4
	KORB        K3, K4, K2
	KNOTB       K2, K2
	KMOVB       K2, R9
	MOVQ        AX, R10
	SHRQ        $6, R10
	MOVQ        F_OUT, R8
	MOVB        R9, (R8)(R10*1)
	KMOVB       K4, R9
	MOVB        R9, F_MASKS(SP)(R10*1)
	TESTL       R9, R9
	JZ          cpoly
	MOVQ        F_CNT, R11
	VCOMPRESSPD Z2, K4, Z20
	VMOVUPD     Z20, F_TX(SP)(R11*8)
	POPCNTL     R9, R9
	ADDQ        R9, R11
	MOVQ        R11, F_CNT

cpoly:
	KORTESTB    K3, K3
	JZ          cnext

	// y = |x|; k = int(4y) (0 outside); u = 8y − (2k+1); element index
	// (k + leftPieces on the right lanes)·polyStride.
	VMULPD.BCST  C_FOUR, Z7, Z9
	VCVTTPD2QQ.Z Z9, K3, Z9                     // k
	VPADDQ       Z9, Z9, Z10
	VPADDQ.BCST  C_I1, Z10, Z10
	VCVTQQ2PD    Z10, Z10                       // 2k+1
	VMULPD.BCST  C_EIGHT, Z7, Z11
	VSUBPD       Z10, Z11, Z11                  // u
	VMULPD       Z11, Z11, Z12
	VMULPD       Z12, Z12, Z13
	VPADDQ.BCST  C_ILEFT, Z9, K1, Z9
	VPMULLQ.BCST ·consts512+360(SB), Z9, Z9
	VMOVQ         X9, R8
	VPEXTRQ       $1, X9, R9
	VEXTRACTI64X2 $1, Z9, X10
	VMOVQ         X10, R10
	VPEXTRQ       $1, X10, R11
	VEXTRACTI64X2 $2, Z9, X10
	VMOVQ         X10, R12
	VPEXTRQ       $1, X10, R13
	VEXTRACTI64X2 $3, Z9, X10
	VMOVQ         X10, R14
	VPEXTRQ       $1, X10, DI
	VEXTRACTF64X4 $1, Z11, Y8
	VEXTRACTF64X4 $1, Z12, Y9
	VEXTRACTF64X4 $1, Z13, Y10
	ESTRIN8H(0)                                 // M(−x) (left) or P(x) (right)
	NPDF8(Z2, Z0, Z1, Z4, Y4, Z6)               // npdf(x)
	VDIVPD       Z3, Z0, Z0                     // left: npdf(x)/M(−x)
	VBROADCASTSD C_ONE, Z6
	VDIVPD       Z3, Z6, K1, Z0                 // right: 1/P(x)
	VADDPD       (DX)(AX*1), Z0, Z0             // out[j] + Φ(x)
	VMOVUPD      Z0, K3, (DX)(AX*1)

cnext:
	ADDQ $64, AX
	CMPQ AX, CX
	JLT  cloop

	// Pass 2: the packed tails, padded; the continued fractions first,
	// then sixteen margins at a time.
	MOVQ  F_CNT, R11
	TESTQ R11, R11
	JZ    cdone
	PAD
	MOVQ  $2, R13
	CHAINPASS
	XORQ  R12, R12

ctloop:
	VMOVUPD F_TX(SP)(R12*8), Z0
	VMOVUPD F_TX+64(SP)(R12*8), Z16
	VMOVUPD F_TF(SP)(R12*8), Z2
	VMOVUPD F_TF+64(SP)(R12*8), Z18
	NPDF8X(Z0, Z3, Z10, Z11, Y11, Z12)
	NPDF8X(Z16, Z19, Z26, Z27, Y27, Z28)
	VDIVPD       Z2, Z3, Z3                     // φ/f
	VDIVPD       Z18, Z19, Z19
	VCMPPD       $0x1e, Z31, Z0, K1             // right: 1 − φ/f
	VCMPPD       $0x1e, Z31, Z16, K4
	VBROADCASTSD C_ONE, Z15
	VSUBPD       Z3, Z15, K1, Z3
	VSUBPD       Z19, Z15, K4, Z19
	VMOVUPD      Z3, F_TLAM(SP)(R12*8)
	VMOVUPD      Z19, F_TLAM+64(SP)(R12*8)
	ADDQ         $16, R12
	CMPQ         R12, R11
	JLT          ctloop

	// Pass 3: add them to out.
	XORQ R12, R12
	XORQ R10, R10
	MOVQ CX, R11
	SHRQ $6, R11

cunpack:
	MOVBQZX   F_MASKS(SP)(R10*1), R9
	TESTQ     R9, R9
	JZ        cunext
	KMOVB     R9, K1
	MOVQ      R10, R8
	SHLQ      $6, R8
	VMOVUPD   F_TLAM(SP)(R12*8), Z0
	VEXPANDPD Z0, K1, Z1
	VADDPD    (DX)(R8*1), Z1, Z1
	VMOVUPD   Z1, K1, (DX)(R8*1)
	POPCNTL   R9, R9
	ADDQ      R9, R12

cunext:
	INCQ R10
	CMPQ R10, R11
	JLT  cunpack

cdone:
	VZEROUPPER
	RET
