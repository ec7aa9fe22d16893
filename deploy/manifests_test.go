package deploy_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// The manifests are validated offline, without a cluster or a schema
// download: each YAML document is decoded by the API server's own strict
// deserializer (k8s.io/apimachinery) into the Kubernetes API types
// (k8s.io/api, the source the OpenAPI schema is generated from), which
// refuses an unknown or misspelt field (field names are case-sensitive), a
// duplicate key, a value of the wrong type, a malformed quantity, and a
// kind this test does not know. On top of that, checks the schema does not
// express: every object is named, every pod has named containers with an
// image, every volume mount and volume claim refers to something declared,
// an Indexed Job's completions equal the WCMC_SHARD_COUNT it passes to
// wcmc, and inline `sh -c` scripts pass shellcheck.

// decoder decodes the kinds of the core and batch API groups, strictly.
var decoder = func() runtime.Decoder {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
}()

// manifest is a decoded object and where it came from.
type manifest struct {
	where string // file:document
	obj   runtime.Object
}

// decodeAll decodes every document of every file, returning the objects and
// the errors (each naming its file and document).
func decodeAll(files map[string][]byte) ([]manifest, []error) {
	var out []manifest
	var errs []error
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(files[name])))
		for doc := 1; ; doc++ {
			data, err := r.Read()
			if err == io.EOF {
				break
			}
			where := fmt.Sprintf("%s, document %d", name, doc)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
				break
			}
			if onlyComments(data) {
				continue
			}
			obj, _, err := decoder.Decode(data, nil, nil)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
				continue
			}
			out = append(out, manifest{where, obj})
		}
	}
	return out, errs
}

// onlyComments reports whether a YAML document holds nothing but blank
// lines and comments.
func onlyComments(doc []byte) bool {
	for line := range strings.Lines(string(doc)) {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") && t != "---" {
			return false
		}
	}
	return true
}

// check makes the checks the types do not: see the comment at the top.
func check(ms []manifest) []error {
	var errs []error
	fail := func(m manifest, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", m.where, fmt.Sprintf(format, args...)))
	}
	claims := map[string]bool{}
	for _, m := range ms {
		if pvc, ok := m.obj.(*corev1.PersistentVolumeClaim); ok {
			claims[pvc.Name] = true
		}
	}
	checkPod := func(m manifest, path string, spec *corev1.PodSpec) {
		if len(spec.Containers) == 0 {
			fail(m, "%s.containers is empty", path)
		}
		volumes := map[string]bool{}
		for _, v := range spec.Volumes {
			volumes[v.Name] = true
			if c := v.PersistentVolumeClaim; c != nil && !claims[c.ClaimName] {
				fail(m, "%s.volumes[%s] claims %q, which no manifest in deploy/ declares", path, v.Name, c.ClaimName)
			}
		}
		if a := spec.AutomountServiceAccountToken; a == nil || *a {
			fail(m, "%s.automountServiceAccountToken must be false: wcmc does not use the API", path)
		}
		for _, v := range spec.Volumes {
			if e := v.EmptyDir; e != nil && e.SizeLimit == nil {
				fail(m, "%s.volumes[%s]: an emptyDir needs a sizeLimit", path, v.Name)
			}
		}
		for _, c := range spec.Containers {
			for what, rl := range map[string]corev1.ResourceList{"requests": c.Resources.Requests, "limits": c.Resources.Limits} {
				if _, ok := rl[corev1.ResourceEphemeralStorage]; !ok {
					fail(m, "%s.containers[%s].resources.%s lacks ephemeral-storage", path, c.Name, what)
				}
			}
			if c.Name == "" || c.Image == "" {
				fail(m, "%s.containers: a container without a name or an image (%q, %q)", path, c.Name, c.Image)
			}
			for _, vm := range c.VolumeMounts {
				if !volumes[vm.Name] {
					fail(m, "%s.containers[%s] mounts volume %q, which the pod does not declare", path, c.Name, vm.Name)
				}
			}
		}
	}
	for _, m := range ms {
		meta, ok := m.obj.(interface{ GetName() string })
		if !ok || meta.GetName() == "" {
			fail(m, "metadata.name is missing")
		}
		switch o := m.obj.(type) {
		case *corev1.Pod:
			checkPod(m, "spec", &o.Spec)
		case *batchv1.Job:
			spec := &o.Spec.Template.Spec
			checkPod(m, "spec.template.spec", spec)
			if p := spec.RestartPolicy; p != corev1.RestartPolicyNever && p != corev1.RestartPolicyOnFailure {
				fail(m, "a Job's pods need restartPolicy Never or OnFailure, not %q", p)
			}
			if o.Spec.CompletionMode == nil || *o.Spec.CompletionMode != batchv1.IndexedCompletion {
				continue
			}
			if msg := stopsIgnored(o.Spec.PodFailurePolicy); msg != "" {
				fail(m, "spec.podFailurePolicy: %s", msg)
			}
			for _, c := range spec.Containers {
				for _, e := range c.Env {
					if e.Name == "WCMC_SHARD_COUNT" && (o.Spec.Completions == nil || e.Value != fmt.Sprint(*o.Spec.Completions)) {
						fail(m, "container %s sets WCMC_SHARD_COUNT=%q but the Job has %s completions: each index must be one shard", c.Name, e.Value, fmtInt32(o.Spec.Completions))
					}
				}
			}
		}
	}
	return errs
}

// stopsIgnored says what an Indexed Job's pod failure policy lacks, if
// anything: disruptions (DisruptionTarget) and wcmc's exit after SIGTERM
// (143) must not count against backoffLimitPerIndex.
func stopsIgnored(p *batchv1.PodFailurePolicy) string {
	if p == nil {
		return "missing: evictions and SIGTERM stops would count as failures"
	}
	disruption, sigterm := false, false
	for _, r := range p.Rules {
		if r.Action != batchv1.PodFailurePolicyActionIgnore {
			continue
		}
		for _, c := range r.OnPodConditions {
			disruption = disruption || (c.Type == corev1.DisruptionTarget && (c.Status == "" || c.Status == corev1.ConditionTrue))
		}
		if e := r.OnExitCodes; e != nil && e.Operator == batchv1.PodFailurePolicyOnExitCodesOpIn && slices.Contains(e.Values, 143) {
			sigterm = true
		}
	}
	var lacks []string
	if !disruption {
		lacks = append(lacks, "an Ignore rule on the DisruptionTarget condition")
	}
	if !sigterm {
		lacks = append(lacks, "an Ignore rule on exit code 143 (SIGTERM)")
	}
	return strings.Join(lacks, " and ")
}

func fmtInt32(p *int32) string {
	if p == nil {
		return "no"
	}
	return fmt.Sprint(*p)
}

// inlineScripts returns the `sh -c` scripts of the pods' containers.
func inlineScripts(ms []manifest) map[string]string {
	out := map[string]string{}
	add := func(m manifest, spec *corev1.PodSpec) {
		for _, c := range spec.Containers {
			argv := append(slices.Clone(c.Command), c.Args...)
			for i := 0; i+2 < len(argv); i++ {
				if filepath.Base(argv[i]) == "sh" && argv[i+1] == "-c" {
					out[m.where+", container "+c.Name] = argv[i+2]
				}
			}
		}
	}
	for _, m := range ms {
		switch o := m.obj.(type) {
		case *corev1.Pod:
			add(m, &o.Spec)
		case *batchv1.Job:
			add(m, &o.Spec.Template.Spec)
		}
	}
	return out
}

func readManifests(t *testing.T) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob("*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no manifests in deploy/ (%v)", err)
	}
	files := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[p] = data
	}
	return files
}

// TestManifests validates every deploy/*.yaml.
func TestManifests(t *testing.T) {
	files := readManifests(t)
	ms, errs := decodeAll(files)
	errs = append(errs, check(ms)...)
	for _, err := range errs {
		t.Error(err)
	}
	kinds := map[string]int{}
	for _, m := range ms {
		kinds[fmt.Sprintf("%T", m.obj)]++
	}
	for _, want := range []string{"*v1.Job", "*v1.Pod", "*v1.PersistentVolumeClaim"} {
		if kinds[want] == 0 {
			t.Errorf("no %s among the manifests (decoded: %v)", want, kinds)
		}
	}

}

// TestManifestScripts runs shellcheck on the inline scripts of
// deploy/*.yaml (.ci/run runs it on deploy/*.sh).
func TestManifestScripts(t *testing.T) {
	ms, errs := decodeAll(readManifests(t))
	if len(errs) > 0 {
		t.Fatal(errors.Join(errs...))
	}
	if len(inlineScripts(ms)) == 0 {
		t.Error("no inline sh -c script found in the Job")
	}
	requireShellcheck(t)
	for _, err := range shellcheck(ms) {
		t.Error(err)
	}
}

// requireShellcheck skips the test without shellcheck, except under CI
// (.ci/run installs it), where it fails.
func requireShellcheck(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("shellcheck"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("shellcheck is not installed; .ci/run installs it")
		}
		t.Skip("shellcheck not installed: the shell scripts are not checked")
	}
}

// shellcheck runs shellcheck on the inline scripts of the manifests.
func shellcheck(ms []manifest) []error {
	var errs []error
	for where, script := range inlineScripts(ms) {
		cmd := exec.Command("shellcheck", "--shell=sh", "-")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("%s: shellcheck: %v\n%s", where, err, out))
		}
	}
	return errs
}

// TestManifestChecksCatch breaks the Job's manifest in one place at a
// time; each break must be reported, naming what is wrong.
func TestManifestChecksCatch(t *testing.T) {
	const job = "k8s-indexed-job.yaml"
	files := readManifests(t)
	for _, c := range []struct{ name, old, new, want string }{
		{"unknown field", "      restartPolicy: Never", "      restartPolice: Never", `unknown field "spec.template.spec.restartPolice"`},
		{"field in the wrong case", "      restartPolicy: Never", "      RestartPolicy: Never", `unknown field "spec.template.spec.RestartPolicy"`},
		{"field at the wrong level", "          imagePullPolicy: IfNotPresent", "          imagePullPolicy: IfNotPresent\n          activeDeadlineSeconds: 60", `unknown field "spec.template.spec.containers[0].activeDeadlineSeconds"`},
		{"duplicate key", "  parallelism: 8", "  parallelism: 8\n  parallelism: 4", `key "parallelism" already set`},
		{"string for an integer", "  completions: 8 ", `  completions: "8" `, "cannot unmarshal string into Go struct field JobSpec.spec.completions of type int32"},
		{"list for a string", "          imagePullPolicy: IfNotPresent", "          imagePullPolicy: [IfNotPresent]", "cannot unmarshal array"},
		{"malformed quantity", "              memory: 4Gi", "              memory: 4 GiB", "quantities must match"},
		{"unknown kind", "kind: Job", "kind: IndexedJob", `no kind "IndexedJob" is registered`},
		{"missing apiVersion", "apiVersion: batch/v1\n", "", "Object 'apiVersion' is missing"},
		{"no name", "  name: wcmc-probit-snr\n", "  labels: {}\n", "metadata.name is missing"},
		{"undeclared claim", "          claimName: wcmc-results", "          claimName: wcmc-result", `claims "wcmc-result", which no manifest`},
		{"undeclared volume", "            - name: tmp\n              mountPath: /tmp", "            - name: scratch\n              mountPath: /tmp", `mounts volume "scratch"`},
		{"restart policy", "      restartPolicy: Never", "      restartPolicy: Always", "restartPolicy Never or OnFailure"},
		{"shard count", `              value: "8"`, `              value: "4"`, `WCMC_SHARD_COUNT="4" but the Job has 8 completions`},
		{"script", `--out "$dir/merged"`, `--out $dir/merged`, "SC2086"},
		{"no disruption rule", "          - type: DisruptionTarget", "          - type: Ready", "an Ignore rule on the DisruptionTarget condition"},
		{"SIGTERM counted", "          values: [143]", "          values: [1]", "an Ignore rule on exit code 143"},
		{"no failure policy", "  podFailurePolicy:", "  podFailurePolicyX:", `unknown field "spec.podFailurePolicyX"`},
		{"token mounted", "      automountServiceAccountToken: false", "      automountServiceAccountToken: true", "automountServiceAccountToken must be false"},
		{"unbounded tmp", "          emptyDir:\n            sizeLimit: 256Mi", "          emptyDir: {}", "an emptyDir needs a sizeLimit"},
		{"no ephemeral-storage limit", "              ephemeral-storage: 1Gi", "              nvidia.com/gpu: 0", "resources.limits lacks ephemeral-storage"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "script" {
				requireShellcheck(t)
			}
			orig := string(files[job])
			if strings.Count(orig, c.old) != 1 {
				t.Fatalf("%s no longer holds %q exactly once: update this case", job, c.old)
			}
			broken := maps.Clone(files)
			broken[job] = []byte(strings.Replace(orig, c.old, c.new, 1))
			ms, errs := decodeAll(broken)
			errs = append(errs, check(ms)...)
			if c.name == "script" {
				errs = append(errs, shellcheck(ms)...)
			}
			err := errors.Join(errs...)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), job) {
				t.Errorf("want an error about %s naming %q, got: %v", job, c.want, err)
			}
		})
	}
}
