package machine

import (
	"runtime"
	"strings"
	"testing"
)

func TestModelNameIsTheFirstCPUsModel(t *testing.T) {
	text := "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R)  Processor @ 2.50GHz\n" +
		"\nprocessor\t: 1\nmodel name\t: Other\n"
	if got, want := modelName(text), "Intel(R) Xeon(R) Processor @ 2.50GHz"; got != want {
		t.Errorf("modelName = %q, want %q (the \"model\" line is not the model name; spaces collapse)", got, want)
	}
	if got := modelName("processor\t: 0\nCPU part\t: 0xd0c\n"); got != "" {
		t.Errorf("modelName without a model name line = %q, want \"\"", got)
	}
}

func TestDescribeNamesCPUCoresPlatformAndBLAS(t *testing.T) {
	if got, want := describe("Z", 2, 2, "linux/amd64", "gonum"), "Z, 2 CPUs, linux/amd64, BLAS gonum"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	if got, want := describe("Z", 1, 1, "linux/arm64", "gonum"), "Z, 1 CPU, linux/arm64, BLAS gonum"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	if got, want := describe("Z", 8, 2, "linux/amd64", "gonum"), "Z, 8 CPUs (GOMAXPROCS 2), linux/amd64, BLAS gonum"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	d := Describe()
	for _, part := range []string{CPU(), runtime.GOOS + "/" + runtime.GOARCH, "BLAS " + BLAS()} {
		if !strings.Contains(d, part) {
			t.Errorf("Describe() = %q lacks %q", d, part)
		}
	}
}

func TestArithmeticFoldsDgemmKernelsOnly(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"Intel(R) Xeon(R) Processor @ 2.50GHz, 2 CPUs, linux/amd64, BLAS wcmc dgemm, AVX-512 (12×16)", "wcmc dgemm"},
		{"AMD EPYC, 2 CPUs, linux/amd64, BLAS wcmc dgemm, AVX2 (6×8)", "wcmc dgemm"},
		{"Z, 8 CPUs (GOMAXPROCS 2), linux/arm64, BLAS gonum", "gonum, linux/arm64"},
		{"Z, 2 CPUs, linux/amd64, BLAS gonum", "gonum, linux/amd64"},
		{"Z, 2 CPUs, linux/amd64, BLAS OpenBLAS 0.3.21 (cgo), Haswell kernels, 1 thread", "OpenBLAS 0.3.21 (cgo), Haswell kernels, 1 thread, linux/amd64"},
		{"", ""},
		{"a machine described by hand", ""},
	} {
		if got := Arithmetic(c.line); got != c.want {
			t.Errorf("Arithmetic(%q) = %q, want %q", c.line, got, c.want)
		}
	}
	if got := Arithmetic(Describe()); got == "" || !strings.HasPrefix(got, BLAS()) && got != "wcmc dgemm" {
		t.Errorf("Arithmetic(Describe()) = %q, not this program's BLAS %q", got, BLAS())
	}
}
