package cmd

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/limitctl/limitctl/internal/limiterfile"
)

// yamlBlock is one ```yaml block of a Markdown file, with the line it starts on.
type yamlBlock struct {
	file string
	line int
	text string
}

// markdownYAML returns every ```yaml block of the Markdown file name.
func markdownYAML(t *testing.T, name string) []yamlBlock {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []yamlBlock
	var open *yamlBlock
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		trimmed := strings.TrimSpace(sc.Text())
		switch {
		case open == nil && trimmed == "```yaml":
			open = &yamlBlock{file: name, line: n + 1}
		case open != nil && trimmed == "```":
			blocks = append(blocks, *open)
			open = nil
		case open != nil:
			open.text += sc.Text() + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return blocks
}

// yamlDocuments splits a YAML stream at its "---" lines, leaving out documents of only comments.
func yamlDocuments(stream string) []string {
	var docs []string
	for _, doc := range regexp.MustCompile(`(?m)^---[ \t]*$`).Split(stream, -1) {
		for _, line := range strings.Split(doc, "\n") {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
				docs = append(docs, doc)
				break
			}
		}
	}
	return docs
}

// podSpecsOf decodes a document of type T strictly (an unknown or duplicated field is an error)
// and returns its pod specs.
func podSpecsOf[T any](doc []byte, specs func(*T) []corev1.PodSpec) ([]corev1.PodSpec, error) {
	var v T
	if err := yaml.UnmarshalStrict(doc, &v); err != nil {
		return nil, err
	}
	return specs(&v), nil
}

// noPods is the pod specs of a kind that runs none.
func noPods[T any](*T) []corev1.PodSpec { return nil }

// manifestKinds are the Kubernetes kinds a doc may show, by apiVersion and kind, each decoded
// into its API type.
var manifestKinds = map[string]func(doc []byte) ([]corev1.PodSpec, error){
	"batch/v1 Job": func(doc []byte) ([]corev1.PodSpec, error) {
		return podSpecsOf(doc, func(j *batchv1.Job) []corev1.PodSpec { return []corev1.PodSpec{j.Spec.Template.Spec} })
	},
	"batch/v1 CronJob": func(doc []byte) ([]corev1.PodSpec, error) {
		return podSpecsOf(doc, func(j *batchv1.CronJob) []corev1.PodSpec {
			return []corev1.PodSpec{j.Spec.JobTemplate.Spec.Template.Spec}
		})
	},
	"v1 Pod": func(doc []byte) ([]corev1.PodSpec, error) {
		return podSpecsOf(doc, func(p *corev1.Pod) []corev1.PodSpec { return []corev1.PodSpec{p.Spec} })
	},
	"apps/v1 Deployment": func(doc []byte) ([]corev1.PodSpec, error) {
		return podSpecsOf(doc, func(d *appsv1.Deployment) []corev1.PodSpec { return []corev1.PodSpec{d.Spec.Template.Spec} })
	},
	"v1 Secret":    func(doc []byte) ([]corev1.PodSpec, error) { return podSpecsOf(doc, noPods[corev1.Secret]) },
	"v1 ConfigMap": func(doc []byte) ([]corev1.PodSpec, error) { return podSpecsOf(doc, noPods[corev1.ConfigMap]) },
	"v1 Service":   func(doc []byte) ([]corev1.PodSpec, error) { return podSpecsOf(doc, noPods[corev1.Service]) },
}

// sampleUID stands for a value Kubernetes fills in (a uid from the downward API) or the reader
// does (a <placeholder>): it is a valid run id, as a Job's uid is.
const sampleUID = "0f3c6a1e-5d2b-4c8e-9a7f-1b2c3d4e5f60"

// sampleEnv is what a container's environment holds when it runs, by name; any other variable
// holds sampleUID.
var sampleEnv = map[string]string{"REDIS_URL": "redis://redis:6379/0"}

var (
	envReference = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	placeholder  = regexp.MustCompile(`^<[^<>]+>$`)
)

// containerArgv is what limitctl is run with in container c, the way Kubernetes runs it: the
// image's entrypoint (limitctl) unless command names limitctl, then args, each $(VAR) of a
// variable the container declares replaced by its value. A <placeholder> is the reader's to fill.
func containerArgv(c corev1.Container) (argv []string, env map[string]string, err error) {
	if len(c.Command) > 0 && path.Base(c.Command[0]) != "limitctl" {
		return nil, nil, fmt.Errorf("container %s: command %q does not run limitctl", c.Name, c.Command)
	}
	env = map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = cmp.Or(sampleEnv[e.Name], sampleUID)
	}
	var errs []error
	for _, a := range append(slices.Clone(c.Command[min(1, len(c.Command)):]), c.Args...) {
		a = envReference.ReplaceAllStringFunc(a, func(ref string) string {
			name := envReference.FindStringSubmatch(ref)[1]
			v, ok := env[name]
			if !ok {
				errs = append(errs, fmt.Errorf("container %s: %s names no variable of its env, so limitctl would get it verbatim", c.Name, ref))
			}
			return v
		})
		if placeholder.MatchString(a) {
			a = sampleUID
		}
		argv = append(argv, a)
	}
	return argv, env, errors.Join(errs...)
}

// releaseImage is the image the release builds (.goreleaser.yaml's kos), which every container
// of the docs runs.
func releaseImage(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Kos []struct {
			Repositories []string `json:"repositories"`
		} `json:"kos"`
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Kos) != 1 || len(cfg.Kos[0].Repositories) != 1 {
		t.Fatalf(".goreleaser.yaml builds %+v; want one image in one repository", cfg.Kos)
	}
	return cfg.Kos[0].Repositories[0]
}

// releaseTag is a tag the release pushes: a version ({{ .Version }}: v1.2.3 is 1.2.3) or latest.
var releaseTag = regexp.MustCompile(`^(latest|\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?)$`)

// parseLimitctl parses argv with limitctl's own command tree in the environment env, as the
// container would run it, to the point where the command would run (its flags parsed, checked
// and resolved, -o checked): nothing connects. A command other than hammer and hammer report
// is parsed by cobra alone.
func parseLimitctl(t *testing.T, argv []string, env map[string]string) error {
	t.Helper()
	streams, _, _, _ := TestStreams()
	root := NewRootCmd(NewFactory(streams, Build{Version: "test"}))
	c, rest, err := root.Find(argv)
	if err != nil {
		return err
	}
	if c == root {
		return fmt.Errorf("%q names no limitctl command", argv)
	}
	ran := false
	stub := func(f *Factory) error { ran = true; _, err := f.Format(); return err }
	var build func(f *Factory) *cobra.Command
	switch c.CommandPath() {
	case "limitctl hammer":
		build = func(f *Factory) *cobra.Command {
			return newHammerCmd(f, func(_ context.Context, f *Factory, _ *hammerOptions) error { return stub(f) })
		}
	case "limitctl hammer report":
		build = func(f *Factory) *cobra.Command {
			return newHammerReportCmd(f, func(_ context.Context, f *Factory, _ *hammerReportOptions) error { return stub(f) })
		}
	default:
		if err := c.ParseFlags(rest); err != nil {
			return err
		}
		return cmp.Or(c.ValidateArgs(c.Flags().Args()), c.ValidateRequiredFlags())
	}
	path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
	code, stderr := parseOnlyEnv(t, env, path, build, rest...)
	if code != ExitOK || !ran {
		return fmt.Errorf("limitctl %q: exit %d, run reached %v: %s", argv, code, ran, strings.TrimSpace(stderr))
	}
	return nil
}

// checkManifest decodes one YAML document of the docs into its Kubernetes API type, unknown
// fields refused, and parses the arguments of each of its containers as limitctl would. A
// document without apiVersion and kind (a CI workflow) is not a manifest: ok false.
func checkManifest(t *testing.T, doc, image string) (containers int, ok bool, err error) {
	t.Helper()
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
		return 0, false, err
	}
	if meta.APIVersion == "" && meta.Kind == "" {
		return 0, false, nil
	}
	decode, known := manifestKinds[meta.APIVersion+" "+meta.Kind]
	if !known {
		return 0, true, fmt.Errorf("apiVersion %q kind %q is none of the kinds this test decodes", meta.APIVersion, meta.Kind)
	}
	specs, err := decode([]byte(doc))
	if err != nil {
		return 0, true, fmt.Errorf("%s: %v", meta.Kind, err)
	}
	var errs []error
	for _, spec := range specs {
		for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
			repo, tag, _ := strings.Cut(c.Image, ":")
			if repo != image || !releaseTag.MatchString(tag) {
				errs = append(errs, fmt.Errorf("container %s runs %q, not the release's %s:<version or latest>", c.Name, c.Image, image))
				continue
			}
			argv, env, err := containerArgv(c)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if err := parseLimitctl(t, argv, env); err != nil {
				errs = append(errs, fmt.Errorf("container %s: %v", c.Name, err))
			}
			containers++
		}
	}
	return containers, true, errors.Join(errs...)
}

var (
	workflowExpression = regexp.MustCompile(`\$\{\{[^}]*\}\}`)
	shellVariable      = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?`)
)

// shellWords splits a command line as sh would, up to its first unquoted operator (| & ; < >).
func shellWords(line string) []string {
	var words []string
	var word strings.Builder
	inWord, quote := false, rune(0)
scan:
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case strings.ContainsRune("|&;<>", r):
			break scan
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				words, inWord = append(words, word.String()), false
				word.Reset()
			}
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words
}

// checkWorkflow parses each limitctl command of a GitHub Actions workflow's run: steps as
// limitctl would, with ${{ expressions }} and $VARIABLES standing for values the runner fills.
func checkWorkflow(t *testing.T, doc string) (commands int, err error) {
	t.Helper()
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Run string            `json:"run"`
				Env map[string]string `json:"env"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(doc), &wf); err != nil {
		return 0, err
	}
	var errs []error
	for name, job := range wf.Jobs {
		for _, step := range job.Steps {
			line := workflowExpression.ReplaceAllString(step.Run, "1")
			line = shellVariable.ReplaceAllStringFunc(line, func(v string) string {
				return cmp.Or(sampleEnv[shellVariable.FindStringSubmatch(v)[1]], sampleUID)
			})
			words := shellWords(line)
			if len(words) == 0 || words[0] != "limitctl" {
				continue
			}
			env := map[string]string{}
			for k := range step.Env {
				env[k] = cmp.Or(sampleEnv[k], sampleUID)
			}
			if err := parseLimitctl(t, words[1:], env); err != nil {
				errs = append(errs, fmt.Errorf("job %s: %v", name, err))
			}
			commands++
		}
	}
	return commands, errors.Join(errs...)
}

// checkLimiterFileShown checks a limiter file the docs show under its path ("# docs/examples/F"
// first, the rest of block): the file reads as a limiter file, and the docs show its every line
// but its leading comments, as it is.
func checkLimiterFileShown(t *testing.T, block yamlBlock, shown string) {
	t.Helper()
	name, body, _ := strings.Cut(shown, "\n")
	path := filepath.Join("..", "docs", "examples", name)
	if _, err := limiterfile.Read(path); err != nil {
		t.Errorf("%s:%d: %s: %v", block.file, block.line, path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for len(lines) > 0 && strings.HasPrefix(lines[0], "#") {
		lines = lines[1:]
	}
	if want := strings.Join(lines, "\n"); body != want {
		t.Errorf("%s:%d shows %s otherwise than it is:\n%s\nthe file:\n%s", block.file, block.line, path, body, want)
	}
}

// Every Kubernetes manifest the docs show is one the API server would take as written (each
// field known to its type), runs the image the release builds, and passes limitctl flags it has;
// so does every limitctl command of a workflow they show.
func TestDocsManifestsDecodeStrictlyAndParseAsLimitctl(t *testing.T) {
	image := releaseImage(t)
	files, err := filepath.Glob("../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	manifests, containers, commands := 0, 0, 0
	for _, file := range files {
		for _, block := range markdownYAML(t, file) {
			if shown, ok := strings.CutPrefix(block.text, "# docs/examples/"); ok {
				checkLimiterFileShown(t, block, shown)
				continue
			}
			for i, doc := range yamlDocuments(block.text) {
				n, ok, err := checkManifest(t, doc, image)
				if !ok && err == nil {
					n, err = checkWorkflow(t, doc)
					commands += n
				} else {
					manifests, containers = manifests+1, containers+n
				}
				if err != nil {
					t.Errorf("%s:%d, document %d: %v", block.file, block.line, i+1, err)
				}
			}
		}
	}
	if manifests < 2 || containers < 2 || commands < 2 {
		t.Fatalf("%d manifests with %d limitctl containers and %d workflow commands in docs/*.md; want many-processes.md's Jobs and matrix at least",
			manifests, containers, commands)
	}
}

// The check refuses what the API server or limitctl would: a misspelt field, a flag limitctl
// does not have, a value it refuses, a variable the container does not declare, another image;
// and a workflow's limitctl command with a flag limitctl does not have.
func TestDocsManifestCheckRefusesMistakes(t *testing.T) {
	image := releaseImage(t)
	const job = `apiVersion: batch/v1
kind: Job
metadata:
  name: hammer
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: hammer
          image: ghcr.io/limitctl/limitctl:latest
          env:
            - name: RUN_ID
              valueFrom: {fieldRef: {fieldPath: metadata.uid}}
          args: [hammer, --run-id, $(RUN_ID), --witness, redis, --duration, 60s, -o, json]
`
	if n, ok, err := checkManifest(t, job, image); err != nil || !ok || n != 1 {
		t.Fatalf("a good Job: %d containers, manifest %v, %v", n, ok, err)
	}
	for _, bad := range []struct{ old, new, why string }{
		{"completions: 2", "completion: 2", "unknown field"},
		{"restartPolicy: Never", "restartPolicy: [Never]", "cannot unmarshal"},
		{"--witness, redis", "--witnes, redis", "unknown flag"},
		{"--duration, 60s", "--duration, sixty", "invalid argument"},
		{"-o, json", "-o, jsno", "json"},
		{"$(RUN_ID)", "$(RUNID)", "names no variable"},
		{"args: [hammer,", "args: [hamer,", "names no limitctl command"},
		{"image: ghcr.io/limitctl/limitctl:latest", "image: ghcr.io/limitctl/limitctl:main", "not the release's"},
		{"kind: Job", "kind: Jbo", "none of the kinds"},
	} {
		doc := strings.Replace(job, bad.old, bad.new, 1)
		if doc == job {
			t.Fatalf("%q is not in the Job", bad.old)
		}
		if _, _, err := checkManifest(t, doc, image); err == nil || !strings.Contains(err.Error(), bad.why) {
			t.Errorf("%s -> %s: %v, want an error saying %q", bad.old, bad.new, err, bad.why)
		}
	}
	const workflow = `jobs:
  judge:
    steps:
      - run: >
          limitctl hammer report --url "$REDIS_URL" --run-id "gh-${{ github.run_id }}"
          --assert 'lua.overshoot==0' --junit report.xml > report.json
`
	if n, err := checkWorkflow(t, workflow); err != nil || n != 1 {
		t.Fatalf("a good workflow: %d commands, %v", n, err)
	}
	if _, err := checkWorkflow(t, strings.Replace(workflow, "--junit", "--junti", 1)); err == nil || !strings.Contains(err.Error(), "unknown flag") {
		t.Errorf("a workflow's misspelt flag: %v, want unknown flag", err)
	}
}
