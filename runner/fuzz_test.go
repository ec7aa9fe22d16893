package runner

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

// Fuzz tests: none of the parsers of user input or files may panic, and
// what they accept must be consistent. Run one with, e.g.,
//
//	go test ./runner -run '^$' -fuzz FuzzResolve -fuzztime 30s
//
// Without -fuzz, `go test` runs the seed corpora below.

func FuzzParseSet(f *testing.F) {
	for _, s := range []string{"n=3", " n = 3 ", "x=1,2,3", "=3", "n=", "n", "", "a=b=c", "trials=2", "\x00=\xff", "n=1e4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		name, value, err := ParseSet(s)
		if err != nil {
			return
		}
		if name == "" || name != strings.TrimSpace(name) || value != strings.TrimSpace(value) {
			t.Fatalf("ParseSet(%q) = %q, %q", s, name, value)
		}
		if !strings.Contains(s, "=") {
			t.Fatalf("ParseSet(%q) accepted a set without '='", s)
		}
	})
}

func FuzzResolve(f *testing.F) {
	seeds := [][3]string{
		{"n=3", "scale=2", "false"}, {"x=1,2,4", "mode=fancy", "true"}, {"x=1,,2", "n=abc", "false"},
		{"x=1e308,1e-308", "scale=1e309", "false"}, {"x=nan", "scale=-0", "true"}, {"trials=0x10", "verbose=T", "false"},
		{"x= 8, 1e1 ,0.5", "n=1e1", "true"}, {"x=0.5,0.50", "n=9007199254740993", "false"}, {"scal=1", "trials=-1", "false"},
		{"x=Inf", "n=+50", "false"}, {"x=1_000", "n=0b11", "false"}, {"x=.5,5.", "scale=1e-400", "true"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2] == "true", 0)
	}
	spec := noiseSpec()
	walk := walkSpec()
	f.Fuzz(func(t *testing.T, a, b string, quick bool, trials int) {
		for _, sp := range []Spec{spec, walk} {
			v, n, err := Resolve(sp, []string{a, b}, quick, trials)
			if err != nil {
				if err.Error() == "" {
					t.Fatal("empty error")
				}
				continue
			}
			if n < 1 {
				t.Fatalf("sets %q %q: %d trials accepted", a, b, n)
			}
			// What Resolve accepts, the getters read without panicking
			// and a plan lists.
			xs := v.XList()
			if len(xs) == 0 {
				t.Fatal("empty sweep accepted")
			}
			for _, name := range v.Names() {
				_ = v.Raw(name)
			}
			if sp.ID == "noise" {
				_ = v.Float("scale") + float64(v.Int("n"))
				_, _ = v.String("mode"), v.Bool("verbose")
			}
			if n <= 1000 {
				plan := &Plan{Spec: sp, Values: v, Trials: n, Tasks: Tasks(v, n)}
				if len(plan.Tasks) != len(xs)*n {
					t.Fatalf("%d tasks for %d points × %d trials", len(plan.Tasks), len(xs), n)
				}
				// The recorded identity of the run is the same run.
				if diff := plan.Mismatch(plan.Identity(Shard{}, len(plan.Tasks), time.Time{})); len(diff) > 0 {
					t.Fatalf("identity mismatches itself: %v", diff)
				}
				// And it rebuilds the same plan, as merge does.
				back, err := planFromIdentity(sp, plan.Identity(Shard{}, 0, time.Time{}))
				if err != nil || !slices.Equal(back.Tasks, plan.Tasks) {
					t.Fatalf("plan from identity: %v", err)
				}
			}
		}
	})
}

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
	plan, err := NewPlan(noiseSpec(), Options{Trials: 3})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadJournal(bytes.NewReader(data))
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
		again, err := ReadJournal(bytes.NewReader(data[:d.Valid]))
		if err != nil || again.Torn != "" || len(again.Records) != len(d.Records) {
			t.Fatalf("valid prefix: %d records, torn %q, err %v; want %d", len(again.Records), again.Torn, err, len(d.Records))
		}
		for _, r := range d.Records {
			_ = plan.CheckRecord(r.TaskResult)
		}
	})
}

func FuzzParseIdentity(f *testing.F) {
	plan, err := NewPlan(noiseSpec(), Options{Trials: 2, Seed: 7})
	if err != nil {
		f.Fatal(err)
	}
	data, err := encodeIdentity(plan.Identity(Shard{1, 3}, 2, time.Time{}))
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
		_ = plan.Mismatch(id)
		if p, err := planFromIdentity(noiseSpec(), id); err == nil && len(p.Tasks) == 0 {
			t.Fatal("a plan without tasks")
		}
	})
}
