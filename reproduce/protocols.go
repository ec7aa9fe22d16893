package reproduce

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wcmc-project/wcmc/scheme"
)

// convergedSkipped lists the experiments whose converged protocol a
// full-size reproduction does not run, each with the measured reason
// (docs/PERFORMANCE.md). Their converged claims are reported as not
// evaluated, never judged under another protocol; --set protocols=…
// runs it anyway, and --quick runs every protocol everywhere.
var convergedSkipped = map[string]string{
	"probit-highdim": "d·m_r = 180,000 whitened coordinates: Newton does not apply and L-BFGS costs ≈ 21 s an evaluation, hours a task",
	"mnist-snr":      "L-BFGS at d·m_r = 1800 had reached a relative gradient of only 1.1e-3 after 59 iterations (27 s); ≥ 8 h CPU for the figure",
	"mnist-kl":       "as mnist-snr (the same tasks at other settings)",
}

// protocolsFor returns the "protocols" value a reproduction runs for the
// experiment id, and the report's settings line when it is not every
// protocol.
func protocolsFor(id string, quick bool) (value, setting string) {
	why, skip := convergedSkipped[id]
	if quick || !skip {
		return AllProtocols(), ""
	}
	ps := slices.DeleteFunc(slices.Clone(scheme.Protocols), func(p scheme.Protocol) bool { return p == scheme.Converged })
	return scheme.Join(ps, ","), fmt.Sprintf("%s: converged protocol not run at the paper's size (%s); its claims are not evaluated",
		id, strings.TrimSuffix(why, "."))
}
