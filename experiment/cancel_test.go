package experiment

import (
	"context"
	"errors"
	"testing"

	"github.com/wcmc-project/wcmc/consensus"
	"github.com/wcmc-project/wcmc/runner"
)

func TestCancelledTaskReturnsNoResult(t *testing.T) {
	// The runner records every result a task returns as finished work, so
	// a task whose run was aborted must return the context's error, never
	// a result from stages it cut short.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// Without the WVCMC schemes nothing inside the task polls the context:
	// the task's own checks must catch it.
	for _, c := range []struct{ id, schemes string }{
		{"gauss-snr", "all"}, {"gauss-snr", "gcmc,wgcmc-noma"},
		{"probit-snr", "all"}, {"probit-snr", "gcmc,wgcmc-oma"},
		{"probit-gradients", "all"}, {"probit-gradients", "sgld"},
	} {
		id := c.id + " schemes=" + c.schemes
		spec, err := Lookup(c.id)
		if err != nil {
			t.Fatal(err)
		}
		plan, err := runner.NewPlan(spec, runner.Options{Seed: 3, Quick: true, Sets: []string{"trials=1", "schemes=" + c.schemes}})
		if err != nil {
			t.Fatal(err)
		}
		shared, err := plan.Setup()
		if err != nil {
			t.Fatal(err)
		}
		keys := runner.Tasks(plan.Values, 1)
		if spec.Trajectory {
			_, err = plan.RunTrajectory(ctx, shared, keys)
		} else {
			_, err = plan.RunTask(ctx, shared, keys[0])
		}
		if !errors.Is(err, context.Canceled) && !errors.Is(err, consensus.ErrCancelled) {
			t.Errorf("%s: a cancelled task returned error %v, want context.Canceled or consensus.ErrCancelled", id, err)
		}
		if !spec.Trajectory {
			if _, err := plan.RunTask(context.Background(), shared, keys[0]); err != nil {
				t.Errorf("%s: the same task without cancellation: %v", id, err)
			}
		}
	}
}
