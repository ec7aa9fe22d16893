// Package scheme names the consensus schemes as they appear in results
// files, claims and reports, and the optimisation protocols under which
// the variational schemes (WVCMC) are run.
//
// A WVCMC result row is named by its scheme and protocol: the bare name
// ("wvcmc-oma") is the Default protocol, and every other protocol appends
// ".protocol" ("wvcmc-oma.paper", "wvcmc-noma.converged"); the separator is one of the characters runner allows in names. Schemes that
// learn no map by optimisation (GCMC, WGCMC, noiseless CMC, the
// best single worker, SGLD) do not depend on the protocol and keep their
// bare names.
package scheme

import (
	"fmt"
	"slices"
	"strings"
)

// Scheme names, as they appear in results files.
const (
	GCMC       = "gcmc"          // Scott et al.'s consensus weights, channel ignored
	WGCMCOMA   = "wgcmc-oma"     // wireless Gaussian CMC over orthogonal access
	WGCMCNOMA  = "wgcmc-noma"    // wireless Gaussian CMC over the air
	WVCMCOMA   = "wvcmc-oma"     // wireless variational CMC over orthogonal access
	WVCMCNOMA  = "wvcmc-noma"    // wireless variational CMC over the air
	Noiseless  = "cmc-noiseless" // GCMC on an ideal channel: the Monte Carlo floor
	BestSingle = "best-single"   // the single worker whose samples score best
	SGLD       = "sgld"          // centralised stochastic gradient Langevin dynamics
)

// The ideal digital baselines (docs/BEYOND.md note 16): each worker sends
// its samples quantised, at the Shannon rate of the channel uses and energy
// of the analog scheme, and the server combines what it decodes. They are
// not the paper's schemes: no claim is about them, and an experiment runs
// them only when asked (its parameter digital).
const (
	DigitalGCMC      = "digital-gcmc"       // Scott's weights on the decoded samples, OMA budget
	DigitalWGCMCOMA  = "digital-wgcmc-oma"  // WGCMC on the additive-noise decoded streams, OMA budget
	DigitalWGCMCNOMA = "digital-wgcmc-noma" // WGCMC on the additive-noise decoded streams, NOMA (multiple-access) budget
	DigitalWVCMCOMA  = "digital-wvcmc-oma"  // WVCMC (default protocol) on the additive-noise decoded streams, OMA budget
	DigitalWVCMCNOMA = "digital-wvcmc-noma" // WVCMC (default protocol) on the additive-noise decoded streams, NOMA budget
)

// Digital lists the digital baselines.
var Digital = []string{DigitalGCMC, DigitalWGCMCOMA, DigitalWGCMCNOMA, DigitalWVCMCOMA, DigitalWVCMCNOMA}

// IsDigital reports whether the scheme name s is a digital baseline.
func IsDigital(s string) bool { return slices.Contains(Digital, s) }

// CSIAwareSuffix ends the name of a scheme that uses the statistics of
// the workers' channel-estimate errors, which the server knows when it
// estimated the channels from pilots (docs/MATH.md note 20):
// "wgcmc-oma-csi" is WGCMC-OMA so informed.
const CSIAwareSuffix = "-csi"

// The CSI-aware schemes, run beside their unaware counterparts on links
// with imperfect CSI.
const (
	WGCMCOMACSI  = WGCMCOMA + CSIAwareSuffix  // WGCMC-OMA with the estimate-error statistics
	WGCMCNOMACSI = WGCMCNOMA + CSIAwareSuffix // WGCMC-NOMA with the estimate-error statistics
)

// CSIAware lists the CSI-aware schemes.
var CSIAware = []string{WGCMCOMACSI, WGCMCNOMACSI}

// IsCSIAware reports whether the scheme name s is a CSI-aware scheme.
func IsCSIAware(s string) bool { return slices.Contains(CSIAware, s) }

// CentredPrefix begins the name of a scheme run on the mean-centred link
// (docs/BEYOND.md note 17) beside the paper's: "centred-wgcmc-oma",
// "centred-wvcmc-noma.paper".
const CentredPrefix = "centred-"

// Centred returns the name of bare scheme s run on the mean-centred link.
func Centred(s string) string { return CentredPrefix + s }

// Variational lists the schemes whose map is learned by an optimiser,
// hence named per protocol.
var Variational = []string{WVCMCOMA, WVCMCNOMA}

// IsVariational reports whether the bare scheme name s is learned by an
// optimiser (on the paper's link or the centred one).
func IsVariational(s string) bool {
	s = strings.TrimPrefix(s, CentredPrefix)
	for _, v := range Variational {
		if v == s {
			return true
		}
	}
	return false
}

// Separator joins a scheme and a protocol in a result name.
const Separator = "."

// Protocol names an optimiser setting under which WVCMC is run.
type Protocol string

// The protocols. Each claim of the paper is judged under the protocols it
// is about: in-sample claims under Paper and Converged, fresh-signal claims
// under Default and Converged.
const (
	// Default is the recommended setting: the experiment's configured
	// optimiser (L-BFGS with held-out early stopping unless changed).
	Default Protocol = "default"
	// Paper is the paper's procedure (Algorithms 1–2): SGD with the
	// paper's step η and t_m iterations, no holdout.
	Paper Protocol = "paper"
	// Converged runs the optimiser to a stationary point of the in-sample
	// objective (gradient norm below a tolerance relative to the start),
	// no holdout.
	Converged Protocol = "converged"
)

// Protocols lists every protocol, in the order reports show them.
var Protocols = []Protocol{Paper, Converged, Default}

// ParseProtocol returns the protocol named s.
func ParseProtocol(s string) (Protocol, error) {
	for _, p := range Protocols {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown protocol %q (known: %s)", s, Join(Protocols, ", "))
}

// Join returns the names of ps separated by sep.
func Join(ps []Protocol, sep string) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = string(p)
	}
	return strings.Join(names, sep)
}

// Under returns the result name of scheme s run under protocol p: s itself
// for the Default protocol or a scheme that is not variational, else
// "s.p".
func Under(s string, p Protocol) string {
	if p == Default || !IsVariational(s) {
		return s
	}
	return s + Separator + string(p)
}

// Split parses a result name into its scheme and protocol: "wvcmc-oma.paper"
// gives ("wvcmc-oma", Paper, true); a bare name gives (name, Default, true);
// a suffix that names no protocol gives ok = false.
func Split(name string) (s string, p Protocol, ok bool) {
	base, suffix, found := strings.Cut(name, Separator)
	if !found {
		return name, Default, true
	}
	p, err := ParseProtocol(suffix)
	if err != nil {
		return name, "", false
	}
	return base, p, true
}
