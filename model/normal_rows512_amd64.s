//go:build !purego

#include "textflag.h"

// Constants (consts512 in normal_rows512_amd64.go), broadcast with .BCST.
#define C_SIX ·consts512+0(SB)
#define C_M8 ·consts512+8(SB)
#define C_TAILMAX ·consts512+16(SB)
#define C_NEGINF ·consts512+24(SB)
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

// Frame of the kernels: saved arguments, the index vector, each group's
// mask of packed margins, and the packed list (x, s, and the second pass's
// continued fractions f and results), 288 entries each: a chunk's 256
// margins, padded; 11712 bytes.
#define F_LP 0(SP)
#define F_OUT 8(SP)
#define F_CNT 16(SP)
#define F_MODE 24(SP)
#define F_IDX 64
#define F_MASKS 128
#define F_TX 192
#define F_TS 2496
#define F_TLAM 4800
#define F_TLP 7104
#define F_TF 9408

// PAIR8 loads coefficients off/8 and off/8+1 of the eight lanes' pieces
// (element indices in R8, R9, R10, R11, R12, R13, R14, DI for lanes 0–7)
// of the table at BX into even and odd: lanes 0, 2, 4, 6 into Z16 and
// 1, 3, 5, 7 into Z17 by 16-byte loads, then unpacked. Clobbers Z16, Z17.
#define PAIR8(off, even, odd) \
	VBROADCASTF64X2 off(BX)(R8*8), Z16; \
	VBROADCASTF64X2 off(BX)(R10*8), K5, Z16; \
	VBROADCASTF64X2 off(BX)(R12*8), K6, Z16; \
	VBROADCASTF64X2 off(BX)(R14*8), K7, Z16; \
	VBROADCASTF64X2 off(BX)(R9*8), Z17; \
	VBROADCASTF64X2 off(BX)(R11*8), K5, Z17; \
	VBROADCASTF64X2 off(BX)(R13*8), K6, Z17; \
	VBROADCASTF64X2 off(BX)(DI*8), K7, Z17; \
	VUNPCKLPD    Z17, Z16, even; \
	VUNPCKHPD    Z17, Z16, odd

// PAIRMASKS sets K5, K6, K7 to the masks of PAIR8's second, third and
// fourth 16-byte slot.
#define PAIRMASKS \
	MOVL  $0x0c, R8; \
	KMOVB R8, K5; \
	MOVL  $0x30, R8; \
	KMOVB R8, K6; \
	MOVL  $0xc0, R8; \
	KMOVB R8, K7

// ESTRIN8 evaluates each lane's degree-10 polynomial at table offset off
// at u (Z11), with u² in Z12 and u⁴ in Z13, into Z3, by the fused
// multiply-adds of estrin in normal.go, in its order. Clobbers Z4–Z6,
// Z14, Z16, Z17.
#define ESTRIN8(off) \
	PAIR8(off+0, Z3, Z5); VFMADD231PD Z11, Z5, Z3; \
	PAIR8(off+16, Z4, Z5); VFMADD231PD Z11, Z5, Z4; \
	VFMADD231PD Z12, Z4, Z3; \
	PAIR8(off+32, Z4, Z5); VFMADD231PD Z11, Z5, Z4; \
	PAIR8(off+48, Z6, Z5); VFMADD231PD Z11, Z5, Z6; \
	VFMADD231PD Z12, Z6, Z4; \
	PAIR8(off+64, Z6, Z5); VFMADD231PD Z11, Z5, Z6; \
	PAIR8(off+80, Z5, Z14); VFMADD231PD Z12, Z5, Z6; \
	VFMADD231PD Z13, Z6, Z4; \
	VFMADD231PD Z13, Z4, Z3

// NPDF8 is NPDF of normal_rows_amd64.s on eight lanes: φ(x) for x in X
// into R, for |x| < tailMax (other lanes get meaningless values). K must
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

// GATHER loads coefficient off/8 of each lane's piece (element indices in
// IDX) of the table at BX into DST.
#define GATHER(off, IDX, DST) \
	KXNORB     K0, K0, K7; \
	VGATHERQPD off(BX)(IDX*8), K7, DST

// BAND8 evaluates the band 6 ≤ x < 8 on the lanes KB of X, as the scalar
// functions do there: q = φ(x)/M(x), M by polyLeft's piece of the left λ
// table (gathered: the band is rare), λ = φ/(1 − q) into LAM and
// log Φ = log1p(−q) = (−q) − (−q)(−q)·½ (log1p's branch for
// 2⁻⁵⁴ ≤ |·| < 2⁻²⁹) into LP. PHI holds φ(x). Clobbers the temporaries
// T1, KQ, U, U2, U4, A0, A1, A2, C1 and K7.
#define BAND8(X, KB, PHI, LAM, LP, T1, KQ, U, U2, U4, A0, A1, A2, C1) \
	VMULPD.BCST  C_FOUR, X, T1; \
	VCVTTPD2QQ.Z T1, KB, KQ; \
	VPADDQ       KQ, KQ, T1; \
	VPADDQ.BCST  C_I1, T1, T1; \
	VCVTQQ2PD    T1, T1; \
	VMULPD.BCST  C_EIGHT, X, U; \
	VSUBPD       T1, U, U; \
	VMULPD       U, U, U2; \
	VMULPD       U2, U2, U4; \
	VPMULLQ.BCST ·consts512+352(SB), KQ, KQ; \
	GATHER(0, KQ, A0); GATHER(8, KQ, C1); VFMADD231PD U, C1, A0; \
	GATHER(16, KQ, A1); GATHER(24, KQ, C1); VFMADD231PD U, C1, A1; \
	VFMADD231PD  U2, A1, A0; \
	GATHER(32, KQ, A1); GATHER(40, KQ, C1); VFMADD231PD U, C1, A1; \
	GATHER(48, KQ, A2); GATHER(56, KQ, C1); VFMADD231PD U, C1, A2; \
	VFMADD231PD  U2, A2, A1; \
	GATHER(64, KQ, A2); GATHER(72, KQ, C1); VFMADD231PD U, C1, A2; \
	GATHER(80, KQ, C1); VFMADD231PD U2, C1, A2; \
	VFMADD231PD  U4, A2, A1; \
	VFMADD231PD  U4, A1, A0; \
	VDIVPD       A0, PHI, A0; \
	VBROADCASTSD C_ONE, A1; \
	VSUBPD       A0, A1, A1; \
	VDIVPD       A1, PHI, KB, LAM; \
	VPXORQ.BCST  C_SIGN, A0, A0; \
	VMULPD       A0, A0, A1; \
	VMULPD.BCST  C_HALF, A1, A1; \
	VSUBPD       A1, A0, KB, LP

// CLASS sets, for the packed margins X of the second pass (each in the
// band, the right tail or the left tail), KLT = x < 0 (left tail),
// KB = 0 < x < 8 (band) and KT = x ≥ 8 (right tail). Z31 is zero.
#define CLASS(X, KLT, KB, KT) \
	VCMPPD      $0x11, Z31, X, KLT; \
	VCMPPD.BCST $0x11, C_EIGHT, X, KB; \
	VCMPPD      $0x1e, Z31, X, KB, KB; \
	VCMPPD.BCST $0x1d, C_EIGHT, X, KT

// func polyRowsAVX512(row, sg []float64, scale float64, lp *float64, out *uint8, mode int)
//
// Pass 1, per group of eight margins j: x = s_j·row[j]; lanes with
// 0 < x < 6 (right) or −8 < x ≤ 0 (left) are evaluated by the tables as in
// polyRowsAVX2; lanes with 6 ≤ x < tailMax or −Inf < x ≤ −8 are packed
// (x, s) into the list and the group's mask of them kept; out[j/8] gets a
// bit per other lane (x ≥ tailMax, −Inf, NaN: left for the caller).
// Pass 2, sixteen packed margins at a time: the band (BAND8), the right
// tail (λ = φ(x), log Φ = −φ(x)/f(x)) and the left tail (λ = f(t),
// log Φ = ((−0.5·x)·x − ½log 2π) − log f(t), t = −x), f from millsTail's
// continued fraction; φ, the fraction and the logarithm only where a lane
// needs them. Pass 3 unpacks the results into row and lp. Mode bit 1:
// row[j] = (scale·s_j)·λ; mode bit 2: lp[j] = log Φ(x); evaluated lanes
// only.
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
	PAIRMASKS
	SHLQ         $3, CX
	XORQ         AX, AX
	TESTQ        CX, CX
	JLE          done

loop:
	VMOVUPD (SI)(AX*1), Z0                      // m
	VMOVUPD (DX)(AX*1), Z1                      // s
	VMULPD  Z0, Z1, Z2                          // x = s·m

	// K1 = right (0 < x < 6), K2 = left (−8 < x ≤ 0), K3 = either;
	// K4 = packed (6 ≤ x < tailMax or −Inf < x ≤ −8).
	VCMPPD      $0x1e, Z31, Z2, K1
	VCMPPD.BCST $0x11, C_SIX, Z2, K1, K1
	VCMPPD      $0x12, Z31, Z2, K2
	VCMPPD.BCST $0x1e, C_M8, Z2, K2, K2
	KORB        K1, K2, K3
	VCMPPD.BCST $0x1d, C_SIX, Z2, K4
	VCMPPD.BCST $0x11, C_TAILMAX, Z2, K4, K4
	VCMPPD.BCST $0x12, C_M8, Z2, K2
	VCMPPD.BCST $0x1e, C_NEGINF, Z2, K2, K2
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
	MOVQ        F_CNT, R11
	VCOMPRESSPD Z2, K4, Z20
	VMOVUPD     Z20, F_TX(SP)(R11*8)
	VCOMPRESSPD Z1, K4, Z21
	VMOVUPD     Z21, F_TS(SP)(R11*8)
	POPCNTL     R9, R9
	ADDQ        R9, R11
	MOVQ        R11, F_CNT
	KORTESTB    K3, K3
	JZ          next

	// y = x (right) or t = −x (left); k = int(y·8) or int(t·4) (0 on the
	// lanes outside); u = 16·y − (2k+1) or 8·t − (2k+1); element index
	// (k + leftPieces on the right lanes)·2·polyStride.
	VPXORQ.BCST  C_SIGN, Z2, Z7
	VMOVAPD      Z2, K1, Z7                     // y
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
	VMOVDQU64    Z9, F_IDX(SP)
	MOVQ         F_IDX+0(SP), R8
	MOVQ         F_IDX+8(SP), R9
	MOVQ         F_IDX+16(SP), R10
	MOVQ         F_IDX+24(SP), R11
	MOVQ         F_IDX+32(SP), R12
	MOVQ         F_IDX+40(SP), R13
	MOVQ         F_IDX+48(SP), R14
	MOVQ         F_IDX+56(SP), DI

	TESTQ   $1, F_MODE
	JZ      logpart
	ESTRIN8(0)                                  // λ
	VMULPD  Z30, Z1, Z4                         // scale·s
	VMULPD  Z3, Z4, Z4
	VMOVUPD Z4, K3, (SI)(AX*1)

logpart:
	TESTQ       $2, F_MODE
	JZ          next
	ESTRIN8(96)                                 // G (left) or −log Φ (right)
	VPXORQ.BCST C_SIGN, Z3, Z4                  // right: log Φ
	VMULPD.BCST C_NEGHALF, Z2, Z5               // left: ((−0.5·x)·x − ½log 2π) + G
	VMULPD      Z2, Z5, Z5
	VSUBPD.BCST C_LOGSQRT2PI, Z5, Z5
	VADDPD      Z3, Z5, Z5
	VMOVAPD     Z4, K1, Z5
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
	CLASS(Z0, K1, K2, K3)
	CLASS(Z16, K4, K5, K6)

	// φ where a lane needs it: the band and the right tail.
	KORB     K2, K3, K7
	KORB     K5, K7, K7
	KORB     K6, K7, K7
	KORTESTB K7, K7
	JZ       nophi
	NPDF8(Z0, Z3, Z10, Z11, Y11, Z12)
	NPDF8(Z16, Z19, Z26, Z27, Y27, Z28)

nophi:
	// λ: φ (right tail), f (left tail); log Φ: −φ/f (right tail).
	VMOVAPD     Z3, Z4
	VMOVAPD     Z2, K1, Z4
	VMOVAPD     Z19, Z20
	VMOVAPD     Z18, K4, Z20
	TESTQ       $2, R13
	JZ          band
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
	JZ       band
	LOG8(Z18, Z22, Z22, Z23, Z24, Z25, Z26, Z27, Z28)
	VMULPD.BCST C_NEGHALF, Z16, Z29
	VMULPD      Z16, Z29, Z29
	VSUBPD.BCST C_LOGSQRT2PI, Z29, Z29
	VSUBPD      Z22, Z29, K4, Z21

band:
	KORTESTB K2, K2
	JZ       banda
	BAND8(Z0, K2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14)

banda:
	KORTESTB K5, K5
	JZ       tstore
	BAND8(Z16, K5, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z15)

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
// 8 ≤ |m| < tailMax are packed into the list; flags[j/8] gets a bit per
// other lane. Pass 2: the packed lanes' Φ, 1 − φ(m)/f(m) on the right and
// φ(m)/f(−m) on the left (normCDF's tails). Pass 3 adds them to out.
TEXT ·cdfRowsAVX512(SB), 0, $11712-56
	MOVQ   out_base+0(FP), DX
	MOVQ   m_base+24(FP), SI
	MOVQ   m_len+32(FP), CX
	MOVQ   flags+48(FP), AX
	MOVQ   AX, F_OUT
	MOVQ   $0, F_CNT
	LEAQ   ·cdfTab(SB), BX
	VPXORQ Z31, Z31, Z31
	PAIRMASKS
	SHLQ   $3, CX
	XORQ   AX, AX
	TESTQ  CX, CX
	JLE    cdone

cloop:
	VMOVUPD (SI)(AX*1), Z2                      // x = m

	// K1 = right (0 < x < 8), K2 = left (−8 < x ≤ 0), K3 = either;
	// K4 = packed (8 ≤ |x| < tailMax).
	VCMPPD      $0x1e, Z31, Z2, K1
	VCMPPD.BCST $0x11, C_EIGHT, Z2, K1, K1
	VCMPPD      $0x12, Z31, Z2, K2
	VCMPPD.BCST $0x1e, C_M8, Z2, K2, K2
	KORB        K1, K2, K3
	VPANDQ.BCST C_ABS, Z2, Z7
	VCMPPD.BCST $0x1d, C_EIGHT, Z7, K4
	VCMPPD.BCST $0x11, C_TAILMAX, Z7, K4, K4
	KORB        K3, K4, K2
	KNOTB       K2, K2
	KMOVB       K2, R9
	MOVQ        AX, R10
	SHRQ        $6, R10
	MOVQ        F_OUT, R8
	MOVB        R9, (R8)(R10*1)
	KMOVB       K4, R9
	MOVB        R9, F_MASKS(SP)(R10*1)
	MOVQ        F_CNT, R11
	VCOMPRESSPD Z2, K4, Z20
	VMOVUPD     Z20, F_TX(SP)(R11*8)
	POPCNTL     R9, R9
	ADDQ        R9, R11
	MOVQ        R11, F_CNT
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
	VMOVDQU64    Z9, F_IDX(SP)
	MOVQ         F_IDX+0(SP), R8
	MOVQ         F_IDX+8(SP), R9
	MOVQ         F_IDX+16(SP), R10
	MOVQ         F_IDX+24(SP), R11
	MOVQ         F_IDX+32(SP), R12
	MOVQ         F_IDX+40(SP), R13
	MOVQ         F_IDX+48(SP), R14
	MOVQ         F_IDX+56(SP), DI
	ESTRIN8(0)                                  // M(−x) (left) or P(x) (right)
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
	NPDF8(Z0, Z3, Z10, Z11, Y11, Z12)
	NPDF8(Z16, Z19, Z26, Z27, Y27, Z28)
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
