package journal

// Fuzz tests: the readers of journals and identities must not panic, and
// what they accept must be consistent. Run one with, e.g.,
//
//	go test ./runner/journal -run '^$' -fuzz FuzzReadJournal -fuzztime 30s
//
// Without -fuzz, `go test` runs the seed corpora.

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/wcmc-project/wcmc/runner"
	"github.com/wcmc-project/wcmc/runner/internal/sweeptest"
)

func FuzzReadJournal(f *testing.F) {
	good := `{"point":0,"x":1,"trial":0,"rows":[{"scheme":"a","metric":"err","value":1.5}],"skipped":[{"scheme":"c","reason":"r"}],"info":{"a":{"p":0}},"done":"2026-01-02T03:04:05Z"}` + "\n"
	for _, s := range []string{
		"", good, good + good, good + good[:40], good + "\x00\x00", "{bad}\n" + good, good + "\n",
		`{"point":-1,"x":1e400,"trial":0,"done":"2026-01-02T03:04:05Z"}` + "\n",
		`{"point":0,"x":1,"trial":0,"rows":[{"scheme":"a","metric":"err","value":"NaN"}],"done":"2026-01-02T03:04:05Z"}` + "\n",
		`{"point":2,"x":4,"trial":1,"rows":null,"info":{"b":null},"done":"2026-01-02T03:04:05Z"}` + "\n",
		`{"point":0,"x":1,"trial":9999999999999999999,"done":"2026-01-02T03:04:05Z"}` + "\n",
		"[]\n", "null\n", `{"done":"2026-01-02T03:04:05Z"} {}` + "\n",
	} {
		f.Add([]byte(s))
	}
	plan, err := runner.NewPlan(sweeptest.Noise(), runner.Options{Trials: 3})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if d.Valid < 0 || d.Valid > int64(len(data)) {
			t.Fatalf("valid prefix %d of %d bytes", d.Valid, len(data))
		}
		if d.Valid+int64(len(d.Torn)) != int64(len(data)) {
			t.Fatalf("valid %d + torn %d ≠ %d bytes", d.Valid, len(d.Torn), len(data))
		}
		// The valid prefix reads back to the same records, untorn.
		again, err := Read(bytes.NewReader(data[:d.Valid]))
		if err != nil || again.Torn != "" || len(again.Records) != len(d.Records) {
			t.Fatalf("valid prefix: %d records, torn %q, err %v; want %d", len(again.Records), again.Torn, err, len(d.Records))
		}
		for _, r := range d.Records {
			_ = plan.CheckRecord(r.TaskResult)
		}
	})
}

func FuzzParseIdentity(f *testing.F) {
	plan, err := runner.NewPlan(sweeptest.Noise(), runner.Options{Trials: 2, Seed: 7})
	if err != nil {
		f.Fatal(err)
	}
	data, err := encodeIdentity(IdentityOf(plan, runner.Shard{Index: 1, Count: 3}, 2, time.Time{}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"format":1,"experiment":"noise","params":{"x":"1,2"},"trials":0,"shard":{"index":5,"count":2}}`))
	f.Add([]byte(`{"format":1,"experiment":"noise","params":{"x":"nan","n":"1e999"},"trials":3}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"format":1,"experiment":"noise","params":null,"trials":-1,"seed":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		id, err := parseIdentity(data, "fuzz")
		if err != nil {
			return
		}
		_ = id.Mismatch(plan)
		if p, err := id.Plan(sweeptest.Noise()); err == nil && len(p.Tasks) == 0 {
			t.Fatal("a plan without tasks")
		}
	})
}

// FuzzIdentityRoundTrip: the identity of any run Resolve accepts matches
// that run, and rebuilds the same plan, as merge does.
func FuzzIdentityRoundTrip(f *testing.F) {
	for _, s := range sweeptest.ResolveSeeds {
		f.Add(s[0], s[1], s[2] == "true", 0)
	}
	f.Fuzz(func(t *testing.T, a, b string, quick bool, trials int) {
		for _, sp := range []runner.Spec{sweeptest.Noise(), sweeptest.Walk()} {
			v, n, err := runner.Resolve(sp, []string{a, b}, quick, trials)
			if err != nil || n > 1000 {
				continue
			}
			plan := &runner.Plan{Spec: sp, Values: v, Trials: n, Tasks: runner.Tasks(v, n)}
			if diff := IdentityOf(plan, runner.Shard{}, len(plan.Tasks), time.Time{}).Mismatch(plan); len(diff) > 0 {
				t.Fatalf("identity mismatches itself: %v", diff)
			}
			back, err := IdentityOf(plan, runner.Shard{}, 0, time.Time{}).Plan(sp)
			if err != nil || !slices.Equal(back.Tasks, plan.Tasks) {
				t.Fatalf("plan from identity: %v", err)
			}
		}
	})
}
