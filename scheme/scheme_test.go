package scheme

import "testing"

func TestUnderSplitRoundTrip(t *testing.T) {
	for _, s := range append([]string{GCMC, WGCMCOMA, WGCMCNOMA, WVCMCOMA, WVCMCNOMA, Noiseless, BestSingle, SGLD}, Digital...) {
		for _, p := range Protocols {
			name := Under(s, p)
			if !IsVariational(s) && name != s {
				t.Errorf("Under(%q, %q) = %q: a non-variational scheme keeps its name", s, p, name)
			}
			base, q, ok := Split(name)
			if !ok || base != s {
				t.Errorf("Split(%q) = %q, %q, %v; want %q", name, base, q, ok, s)
			}
			if IsVariational(s) && q != p {
				t.Errorf("Split(%q) protocol = %q, want %q", name, q, p)
			}
		}
	}
	if got := Under(WVCMCOMA, Paper); got != "wvcmc-oma.paper" {
		t.Errorf("Under(wvcmc-oma, paper) = %q", got)
	}
	if _, _, ok := Split("wvcmc-oma.fast"); ok {
		t.Error("Split accepted an unknown protocol")
	}
	if _, err := ParseProtocol("Paper"); err == nil {
		t.Error("ParseProtocol is case-sensitive: names are lower case")
	}
}

func TestDigitalNamesAreNotVariational(t *testing.T) {
	for _, s := range Digital {
		if !IsDigital(s) || IsVariational(s) {
			t.Errorf("%s: IsDigital %v, IsVariational %v", s, IsDigital(s), IsVariational(s))
		}
	}
	if IsDigital(GCMC) {
		t.Error("gcmc is not digital")
	}
}
