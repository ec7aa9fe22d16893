package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"wcmc"
	"wcmc/channel"
)

// linkFile is the sidecar link.json of the received signals: what the
// server knows about the transmission (E_k = √P_k B, N0) and how it was
// simulated.
type linkFile struct {
	Format     string  `json:"format"`
	Access     string  `json:"access"`
	Fading     string  `json:"fading"`
	Repetition int     `json:"repetition"` // l in B = 1_l ⊗ I_d
	ExtraTx    int     `json:"extra_tx"`   // m_t − m_r (Rayleigh)
	Physical   bool    `json:"physical"`
	Power      float64 `json:"P"`      // transmit power budget
	SNRdB      float64 `json:"snr_db"` // 10 log10(P/(m_r N0))
	N0         float64 `json:"N0"`     // noise variance per received symbol
	// Pk holds P_k of each worker (E_k = √P_k B); under NOMA all equal
	// min_k P_k.
	Pk []float64 `json:"P_k"`
	D  int       `json:"d"`
	K  int       `json:"K"`
	S  int       `json:"S"`
	Mr int       `json:"m_r"`
	// Signals are the received-signal files relative to this file: K files
	// (S×m_r) under OMA, one under NOMA.
	Signals []string `json:"signals"`
	Seed    uint64   `json:"seed"`
	// Samples are the workers' sample files that were sent (provenance).
	Samples []string `json:"samples"`
	// TxPower is the measured mean ‖x_k‖² per worker (physical simulation).
	TxPower []float64 `json:"tx_power,omitempty"`
}

const (
	linkFormat   = "wcmc-link/1"
	linkFileName = "link.json"
)

func newTransmitCmd() *cobra.Command {
	var (
		access, fading, out string
		rep, extra          int
		power, snr          float64
		physical            bool
		seed                uint64
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
                                    (what wcmc aggregate needs)`,
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
			link := channel.Config{Access: acc, Fading: fad, Repetition: rep, ExtraTx: extra, Power: power, SNRdB: snr, Physical: physical}
			if err := link.Validate(); err != nil {
				return err
			}
			paths, samples, err := readSamples(args)
			if err != nil {
				return err
			}
			rx, err := wcmc.Transmit(samples, link, seed)
			if err != nil {
				return err
			}
			meta := linkFile{
				Format: linkFormat, Access: acc.String(), Fading: fad.String(),
				Repetition: rep, ExtraTx: extra, Physical: physical, Power: power, SNRdB: snr,
				N0: rx.N0, Pk: rx.Pk, D: rx.D, K: rx.K, S: rx.S, Mr: rx.Mr, Seed: seed, TxPower: rx.TxPower,
			}
			meta.Samples = paths
			var files []outFile
			for i, y := range rx.Y {
				name := "received.npy"
				if acc == channel.OMA {
					name = fmt.Sprintf("received-%d.npy", i+1)
				}
				meta.Signals = append(meta.Signals, name)
				files = append(files, npyFile(filepath.Join(out, name), y))
			}
			files = append(files, jsonFile(filepath.Join(out, linkFileName), meta))
			if err := writeAll(files); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sent K = %d workers × S = %d samples (d = %d) over %s at %s dB: wrote %d signal file(s) and %s to %s\n",
				rx.K, rx.S, rx.D, acc, fmtFloat(snr), len(rx.Y), linkFileName, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&access, "access", "noma", "oma (one block per worker and sample) or noma (all workers at once)")
	f.StringVar(&fading, "fading", "rayleigh", "channel matrices H_k: flat (H = I) or rayleigh (i.i.d. N(0,1), m_r×(m_r+extra-tx), redrawn per block)")
	f.IntVar(&rep, "repetition", 2, "analog repetition factor l: E_k = √P_k (1_l ⊗ I_d), m_r = l·d")
	f.IntVar(&extra, "extra-tx", 2, "m_t − m_r for rayleigh fading (≥ 2)")
	f.Float64Var(&power, "power", 1, "transmit power budget P; sets the scale of the signals")
	f.Float64Var(&snr, "snr", 15, "SNR = P/(m_r N0) in dB")
	f.BoolVar(&physical, "physical", true, "simulate the physical chain (draw H, zero-force, transmit) rather than the equivalent y = Eθ + n")
	f.Uint64Var(&seed, "seed", 1, "random seed of the channel draws and noise")
	f.StringVar(&out, "out", "rx", "output directory")
	return cmd
}

// loadReceived reads what `wcmc transmit` wrote: the sidecar at path (a
// link.json, or a directory holding one) and the signal files it lists,
// checking that they agree.
func loadReceived(path string) (*channel.Received, *linkFile, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, linkFileName)
	} else if err != nil {
		return nil, nil, fmt.Errorf("received signals %s do not exist", path)
	}
	if filepath.Ext(path) == ".npy" {
		return nil, nil, fmt.Errorf("%s is a signal file: give the directory wcmc transmit wrote (or its %s), which says how the signals were sent", path, linkFileName)
	}
	var m linkFile
	if err := readJSON(path, &m); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("missing sidecar %s: wcmc transmit writes it next to the received signals (give --rx the directory it wrote)", path)
		}
		return nil, nil, fmt.Errorf("sidecar %w", err)
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("sidecar %s: "+format, append([]any{path}, args...)...)
	}
	if m.Format != linkFormat {
		return nil, nil, bad("format %q, want %q (not written by wcmc transmit?)", m.Format, linkFormat)
	}
	acc, err := channel.ParseAccess(m.Access)
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	switch {
	case m.K < 1 || m.S < 1 || m.D < 1 || m.Repetition < 1:
		return nil, nil, bad("K = %d, S = %d, d = %d, repetition = %d: all must be ≥ 1", m.K, m.S, m.D, m.Repetition)
	case m.Mr != m.Repetition*m.D:
		return nil, nil, bad("m_r = %d, want repetition·d = %d", m.Mr, m.Repetition*m.D)
	case len(m.Pk) != m.K:
		return nil, nil, bad("P_k has %d entries for K = %d workers", len(m.Pk), m.K)
	case !(m.N0 >= 0) || math.IsInf(m.N0, 0):
		return nil, nil, bad("N0 = %v, want a finite number ≥ 0", m.N0)
	case !(m.Power > 0) || math.IsInf(m.Power, 0):
		return nil, nil, bad("P = %v, want a positive finite number", m.Power)
	}
	for k, p := range m.Pk {
		if !(p > 0) || math.IsInf(p, 0) {
			return nil, nil, bad("P_k of worker %d = %v, want a positive finite number", k+1, p)
		}
	}
	streams := 1
	if acc == channel.OMA {
		streams = m.K
	}
	if len(m.Signals) != streams {
		return nil, nil, bad("%d signal files listed, want %d under %s", len(m.Signals), streams, acc)
	}
	rx := &channel.Received{Access: acc, K: m.K, S: m.S, D: m.D, Mr: m.Mr, L: m.Repetition, Pk: m.Pk, N0: m.N0, Power: m.Power}
	for _, name := range m.Signals {
		file := name
		if !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(path), name)
		}
		y, err := readMatrix(file, "received-signal")
		if err != nil {
			return nil, nil, err
		}
		if r, c := y.Dims(); r != m.S || c != m.Mr {
			return nil, nil, fmt.Errorf("received-signal file %s is %d×%d, but %s says S×m_r = %d×%d", file, r, c, path, m.S, m.Mr)
		}
		rx.Y = append(rx.Y, y)
	}
	return rx, &m, nil
}
