package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/wcmc-project/wcmc/internal/stageprof"
)

// profileRun runs compute under a CPU and an allocation profile recorded
// into dir as id (internal/stageprof; resumed: merged with the profiles of
// the earlier sessions there) and prints its CPU time by stage to w.
func profileRun(dir, id string, resumed bool, compute func() error, w io.Writer) error {
	rec, err := stageprof.NewRecorder(dir)
	if err != nil {
		return err
	}
	err = rec.Profile(id, resumed, compute)
	if len(rec.Runs) == 1 {
		fmt.Fprintf(w, "profiles: %s/%s.cpu.pprof, %s.allocs.pprof\n", dir, id, id)
		if perr := rec.Runs[0].Table.WriteText(w); perr != nil {
			return errors.Join(err, perr)
		}
	}
	return err
}
