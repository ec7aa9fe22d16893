package memlimit

import (
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	for s, want := range map[string]float64{"1024": 1024, "8G": 8 << 30, "512MiB": 512 << 20, "1.5k": 1536, " 2 TB ": 2 << 40} {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "G", "-1G", "0", "1_0G", "lots", "infG"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
	for b, want := range map[float64]string{512: "512 bytes", 1536: "1.5 KiB", 24 << 30: "24 GiB", 8e11 * 8: "5.82 TiB"} {
		if got := Format(b); got != want {
			t.Errorf("Format(%v) = %q, want %q", b, got, want)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Setenv(Env, "1G")
	if err := Check("a small thing", Floats(1000, 1000)); err != nil {
		t.Errorf("8 MB under a 1 GiB limit: %v", err)
	}
	err := Check("--S 100000000000 × d = 30", Floats(100000000000, 30))
	for _, w := range []string{"--S 100000000000 × d = 30", "needs about 21.8 TiB", "more than the 1 GiB", Env + "=1G"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v should mention %q", err, w)
		}
	}
	t.Setenv(Env, "much")
	if err := Check("x", 1); err == nil || !strings.Contains(err.Error(), Env) {
		t.Errorf("bad %s: %v", Env, err)
	}
	t.Setenv(Env, "")
	if b, src, err := Limit(); err != nil || !(b > 0) || src == "" {
		t.Errorf("Limit() = %v, %q, %v", b, src, err)
	}
}
