package main

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"
	"gonum.org/v1/gonum/mat"

	"github.com/wcmc-project/wcmc"
	"github.com/wcmc-project/wcmc/channel"
	"github.com/wcmc-project/wcmc/experiment"
	"github.com/wcmc-project/wcmc/internal/memlimit"
)

func newTransmitCmd() *cobra.Command {
	var (
		access, fading, out string
		rep, extra          int
		power, snr          float64
		physical, pilots    bool
		pilotBoost          float64
		seed                uint64
		beyond              channel.Config // the models beyond the paper: CSI, Gains, Complex, KFactor, Control, Centre, Coherence
	)
	cmd := &cobra.Command{
		Use:   "transmit [flags] SAMPLES.npy...",
		Short: "The channel: send the workers' samples over OMA or NOMA",
		Long: `Simulate the uncoded uplink: each worker k sends its S samples, one per
block, precoded as x_k = H_k^† E_k θ_k with E_k = √P_k (1_l ⊗ I_d) and P_k
set by the power budget P; the server receives y_k = E_k θ_k + n_k per worker
(OMA) or y = Σ_k E_k θ_k + n in one block per sample (NOMA), with noise
variance N0 = P/(m_r 10^{SNR/10}), m_r = l·d.

Give one .npy file per worker (S×d, equal S and d). Files named like
samples-<k>.npy are put in worker order k = 1…K whatever the order given,
and must number 1…K without gaps; other names are used in the order given.

Writes to --out:
  received-1.npy … received-K.npy   OMA: worker k's signals, S×m_r
  received.npy                      NOMA: the superposed signals, S×m_r
  link.json                         access, fading, l, P, SNR, N0, P_k, d, K, S
                                    (what wcmc aggregate needs), and the
                                    models below when set

Beyond the paper (docs/BEYOND.md), each off by default: imperfect CSI
(--csi-error, or --pilot-len with --pilot-snr), per-worker SNR
(--snr-offsets, or the path loss --d-min, --d-max, --path-exponent), the
complex baseband channel (--complex; --fading rician with --k-factor),
truncated channel inversion (--peak-power: the blocks a worker does not
send are listed in link.json, and wcmc aggregate leaves them out),
mean-centred transmission (--centre: each worker sends its samples minus
their mean m_k, with P_k set by those fluctuations, and m_k digitally in
blocks taken from the same budget; link.json records the decoded means
and the blocks they took, wcmc aggregate adds the combined mean back; the
workers then send fewer than S samples: S' per stream, printed), and block
fading with charged pilots (--coherence T_c: each worker's channel holds
for T_c sample blocks; --pilots: each worker estimates it once per interval
by MMSE from --pilot-len orthogonal pilot uses, default m_t, at --snr plus
--pilot-boost-db, and the pilot uses come out of the samples' channel
uses, so the workers send S' < S samples, printed; link.json records how
the pilots split the budget and each worker's estimate-error statistics,
docs/MATH.md note 20).`,
		Example: `  wcmc transmit --access noma --snr 20 --out rx samples/samples-*.npy`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			acc, err := channel.ParseAccess(access)
			if err != nil {
				return fmt.Errorf("--access: %w", err)
			}
			fad, err := channel.ParseFading(fading)
			if err != nil {
				return fmt.Errorf("--fading: %w", err)
			}
			link := beyond
			link.Access, link.Fading, link.Repetition, link.ExtraTx, link.Power, link.SNRdB, link.Physical = acc, fad, rep, extra, power, snr, physical
			if err := chargePilots(&link, pilots, pilotBoost); err != nil {
				return err
			}
			if err := checkLink(link); err != nil {
				return err
			}
			if out == "" {
				return errEmptyOut
			}
			paths, samples, err := readSamples(args)
			if err != nil {
				return err
			}
			k := len(samples)
			s, d := samples[0].Dims()
			if err := checkTransmitSize(link, k, s, d); err != nil {
				return err
			}
			if err := checkPilotBudget(link, k, s, d); err != nil {
				return err
			}
			var files []outFile
			names := channel.SignalNames(acc, k)
			for _, name := range append(names, channel.LinkFileName) {
				files = append(files, outFile{path: filepath.Join(out, name)})
			}
			if err := checkNotInputs(files, paths); err != nil {
				return err
			}
			rx, err := interruptible(cmd.Context(), func() (*channel.Received, error) { return wcmc.Transmit(samples, link, seed) })
			if err != nil {
				return err
			}
			meta := channel.NewLink(link, rx, seed)
			meta.Samples = paths
			for i, y := range rx.Y {
				files[i] = npyFile(files[i].path, y)
			}
			files[len(files)-1].write = func(w io.Writer) error {
				b, err := meta.Encode()
				if err == nil {
					_, err = w.Write(b)
				}
				return err
			}
			if err := writeAll(files); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sent K = %d workers × S = %d samples (d = %d) over %s at %s dB: wrote %d signal file(s) and %s to %s\n",
				rx.K, rx.S, rx.D, acc, fmtFloat(snr), len(rx.Y), channel.LinkFileName, out)
			if rx.Mean != nil {
				used, idle := rx.MeanUses()
				fmt.Fprintf(cmd.OutOrStdout(), "centred: the means took %d of the budget's blocks (%v bits per worker), %d left idle; S = %d samples of the %d given per worker\n",
					used, rx.MeanBits, idle, rx.S, rx.Budget)
			}
			if b := rx.Pilots; b != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "pilots: %d coherence intervals of T_c = %d blocks, %d pilot uses each (L_p = %d per worker), %d channel uses idle; S = %d samples of the %d given per worker\n",
					b.Intervals, b.Coherence, b.IntervalUses, b.Len, b.Idle, b.Samples, b.Budget)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&access, "access", "noma", "oma (one block per worker and sample) or noma (all workers at once)")
	f.StringVar(&fading, "fading", "rayleigh", "channel matrices H_k: flat (H = I), rayleigh (i.i.d. N(0,1), m_r×(m_r+extra-tx), redrawn per block, or every --coherence blocks) or rician (needs --complex)")
	f.IntVar(&rep, "repetition", 2, "analog repetition factor l: E_k = √P_k (1_l ⊗ I_d), m_r = l·d")
	f.IntVar(&extra, "extra-tx", 2, "m_t − m_r for rayleigh or rician fading (≥ 2; complex rayleigh ≥ 1, in complex dimensions)")
	f.Float64Var(&power, "power", 1, "transmit power budget P; sets the scale of the signals")
	f.Float64Var(&snr, "snr", 15, "SNR = P/(m_r N0) in dB")
	f.BoolVar(&physical, "physical", true, "simulate the physical chain (draw H, zero-force, transmit) rather than the equivalent y = Eθ + n")
	f.Uint64Var(&seed, "seed", 1, "random seed of the channel draws and noise")
	f.Float64Var(&beyond.CSI.ErrorVar, "csi-error", 0, "imperfect CSI: variance σ_e² ≤ 1e10 of the error of the workers' channel estimate Ĥ = H + E (0: perfect CSI)")
	f.IntVar(&beyond.CSI.PilotLen, "pilot-len", 0, "imperfect CSI from pilots: length L_p ≥ m_t of the pilots of the MMSE estimate (0: none; with --pilots the charged pilots' length, 0: m_t)")
	f.Float64Var(&beyond.CSI.PilotSNRdB, "pilot-snr", 0, "SNR of one pilot symbol in dB, within ±100 (with --pilot-len)")
	f.Float64SliceVar(&beyond.Gains.OffsetDB, "snr-offsets", nil, "per-worker SNR offsets in dB relative to --snr, each within ±100, one per worker (comma list)")
	f.Float64Var(&beyond.Gains.DMin, "d-min", 0, "path loss: smallest worker distance (distances uniform in [d-min, d-max])")
	f.Float64Var(&beyond.Gains.DMax, "d-max", 0, "path loss: largest worker distance")
	f.Float64Var(&beyond.Gains.Exponent, "path-exponent", 0, "path loss exponent α; the mean per-worker SNR in dB is --snr")
	f.BoolVar(&beyond.Complex, "complex", false, "complex baseband channel: the real symbols on I and Q")
	f.Float64Var(&beyond.KFactor, "k-factor", 0, "Rician K-factor ≤ 1e6 (--fading rician)")
	f.Float64Var(&beyond.Control.PeakPower, "peak-power", 0, "truncated channel inversion with this peak energy per block (> --power; 0: the paper's full inversion)")
	f.BoolVar(&beyond.Centre, "centre", false, "mean-centred transmission: send the samples minus their mean, and the mean digitally from the same budget of blocks")
	f.IntVar(&beyond.Coherence, "coherence", 1, "block fading: sample blocks T_c that share one channel realisation, drawn anew at the next interval (1: a new channel every block, the paper's; needs rayleigh or rician fading)")
	f.BoolVar(&pilots, "pilots", false, "charged pilots: each worker estimates its channel once per coherence interval by MMSE from --pilot-len orthogonal pilot uses (default m_t) at --snr plus --pilot-boost-db, taken from its samples' channel uses (needs rayleigh or rician fading; excludes --csi-error, --pilot-snr and --centre)")
	f.Float64Var(&pilotBoost, "pilot-boost-db", 0, "with --pilots: the pilot SNR over --snr in dB (0: the pilots at the data SNR; --snr plus it within ±100)")
	f.StringVar(&out, "out", "rx", "output directory")
	return cmd
}

// checkLink checks a link configuration as the experiments do
// (their linkConfig.check in package experiment): besides channel.Config.Validate, the SNR
// and the power budget within the experiments' ranges, in which the noise
// variance N0 = P/(m_r 10^{SNR/10}) is a positive finite number.
func checkLink(c channel.Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	switch {
	case c.SNRdB < experiment.MinSNRdB || c.SNRdB > experiment.MaxSNRdB:
		return fmt.Errorf("--snr %v dB: must be in [%v, %v] dB (the noise variance N0 = P/(m_r·10^(SNR/10)) leaves floating point far outside it)", c.SNRdB, experiment.MinSNRdB, experiment.MaxSNRdB)
	case c.Power < experiment.MinPower || c.Power > experiment.MaxPower:
		return fmt.Errorf("--power %v: must be in [%v, %v] (only its ratio to N0, the SNR, matters to the schemes)", c.Power, experiment.MinPower, experiment.MaxPower)
	}
	return nil
}

// chargePilots turns the charged pilots on in link when pilots is set, as
// the experiments' pilots=true does (their decodeLink in package
// experiment): --pilot-len is then the charged pilots' length and
// --pilot-boost-db their SNR over --snr, and --pilot-snr, the free pilots'
// SNR, is refused; without --pilots a pilot boost is refused. It also
// refuses a coherence below 1, the experiments' range of coherence.
func chargePilots(link *channel.Config, pilots bool, boost float64) error {
	if link.Coherence < 1 {
		return fmt.Errorf("--coherence %d: must be ≥ 1 sample blocks per channel realisation (1: a new channel every block, the paper's)", link.Coherence)
	}
	switch {
	case pilots:
		if link.CSI.PilotSNRdB != 0 {
			return fmt.Errorf("--pilot-snr %v with --pilots: the charged pilots are sent at the data SNR --snr plus --pilot-boost-db; set --pilot-boost-db instead", link.CSI.PilotSNRdB)
		}
		link.Pilots = channel.Pilots{On: true, Len: link.CSI.PilotLen, BoostDB: boost}
		link.CSI.PilotLen = 0
	case boost != 0:
		return fmt.Errorf("--pilot-boost-db %v without --pilots: it sets the charged pilots' SNR; the free pilots (--pilot-len) take --pilot-snr", boost)
	}
	return nil
}

// checkPilotBudget refuses, before anything is sent, charged pilots
// shorter than the m_t transmit dimensions or leaving no sample block of
// the s blocks each of the k workers has (channel.Config.SplitBudget), as
// the experiments do (their wirelessConfig.checkPilots in package experiment).
func checkPilotBudget(c channel.Config, k, s, d int) error {
	if !c.Pilots.On {
		return nil
	}
	full := c
	full.Pilots.Len = 0
	if l, mt := c.Pilots.Len, full.ResolvePilots(d).CSI.PilotLen; l > 0 && l < mt {
		return fmt.Errorf("--pilot-len %d with --pilots: orthogonal pilots need L_p ≥ m_t = %d transmit dimensions (0 = m_t)", l, mt)
	}
	if _, err := c.SplitBudget(k, s, d); err != nil {
		return fmt.Errorf("%v: %w; give each worker more samples or raise --coherence", c.Access, err)
	}
	return nil
}

// checkTransmitSize refuses, before anything is sent, a link whose received
// dimension m_r = l·d exceeds experiment.MaxMr (as the experiments do) or
// whose signals cannot fit in memory: K streams (OMA) or one (NOMA) of S×m_r,
// and the m_r×m_t channel draw with its Gram matrix.
func checkTransmitSize(c channel.Config, k, s, d int) error {
	if c.Repetition > experiment.MaxMr/d {
		return fmt.Errorf("--repetition %d with d = %d: m_r = l·d = %.0f received dimensions, more than %d (the channel draws are m_r×m_t matrices, their memory and time grow as m_r²)",
			c.Repetition, d, float64(c.Repetition)*float64(d), experiment.MaxMr)
	}
	mr, mt := c.Dims(d)
	streams := 1
	if c.Access == channel.OMA {
		streams = k
	}
	need := memlimit.Floats(streams, s, mr) + memlimit.Floats(mr, mt+2*mr)
	return memlimit.Check(fmt.Sprintf("transmit: %d signal stream(s) of S×m_r = %d×%d", streams, s, mr), need)
}

// loadReceived reads what `wcmc transmit` wrote: the sidecar at path (a
// link.json, or a directory holding one) and the signal files it lists,
// checking that they agree (channel.LoadReceived), and returns the blocks
// delivered: without those lost to outage under truncated inversion
// (channel.Received.Delivered), which carry no sample.
func loadReceived(path string) (*channel.Received, channel.Link, error) {
	rx, link, err := channel.LoadReceived(path, func(p string) (*mat.Dense, error) { return readMatrix(p, "received-signal") })
	if err != nil {
		return nil, link, err
	}
	if rx, err = rx.Delivered(); err != nil {
		return nil, link, fmt.Errorf("%s: %w", path, err)
	}
	return rx, link, nil
}
