package reproduce

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/wcmc-project/wcmc/internal/machine"
	"github.com/wcmc-project/wcmc/internal/stageprof"
	"github.com/wcmc-project/wcmc/runner"
)

// writeProfile writes PROFILE.md into cfg.Profile: where the CPU time of
// each experiment computed in this run went, by stage. It returns its path.
func writeProfile(cfg Config, prof *stageprof.Recorder) (string, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Where the time went\n\n")
	fmt.Fprintf(&b, "Written %s by `%s` (wcmc %s, %s) on %s; an experiment's sessions may have run elsewhere (its `ID.json`, `sessions`).\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), cfg.Command, runner.Version, runtime.Version(), machine.Describe())
	b.WriteString(`Each experiment computed was profiled on its own (an experiment resumed from its journal:
over all its sessions, when each was profiled into this directory, up to its last checkpoint
for a session that was killed (profiles are written every 5 minutes); an experiment whose stored
results were reused: its profile from then, marked "earlier" with the version that recorded it,
if it is here): wall time,
CPU time sampled by pprof (100 Hz, all cores), and that CPU time by stage. A sample's stage is
the outermost wcmc function on its stack (sampling: the workers' chains, and under "setup:" the
reference posterior; channel; gaussian schemes; apply maps; predictive KL; err2 and moments;
chain diagnostics; journal (I/O)), or for a WVCMC optimisation its run as
` + "`wvcmc <access>/<method>`" + ` (sgd: the paper's protocol; lbfgs+holdout: the default; newton,
lbfgs+whiten or lbfgs: the converged protocol); "setup:" marks the experiment's shared setup (data,
reference posterior). ` + "`go tool pprof ID.cpu.pprof`" + ` and ` + "`ID.allocs.pprof`" + ` give the detail.

`)
	if len(prof.Runs) == 0 {
		b.WriteString("No experiment was profiled (every result was reused, and no profile of them is in this directory).\n")
	}
	if err := prof.WriteMarkdown(&b); err != nil {
		return "", err
	}
	path := filepath.Join(cfg.Profile, "PROFILE.md")
	return path, os.WriteFile(path, []byte(strings.TrimRight(b.String(), "\n")+"\n"), 0o644)
}
