package lint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ConfigFile is the project file that adapts the rules to a project, found
// by walking up from the linted file to the repository root:
//
//	# .limitctl.yaml
//	lint:
//	  disable: [missing-expire]   # a queue keeps its data on purpose
const ConfigFile = ".limitctl.yaml"

// Config says which rules report. The zero Config runs every rule.
type Config struct {
	// Disabled rules report nothing. syntax is never disabled: nothing else
	// is checked in a file that does not parse.
	Disabled map[string]bool
	// Source is the project file the config came from, or "".
	Source string
	// TimeAnswered: the caller decides the script's clock (the hammer's --clock server or
	// virtual), so a TIME read is a fact of the run, not a finding: nondeterministic does not
	// report it.
	TimeAnswered bool
}

// filter drops the diagnostics of disabled rules, and the TIME reads the caller answers.
func (cfg Config) filter(ds []Diagnostic) []Diagnostic {
	if len(cfg.Disabled) == 0 && !cfg.TimeAnswered {
		return ds
	}
	kept := ds[:0]
	for _, d := range ds {
		if !cfg.Disabled[d.Rule] && !(cfg.TimeAnswered && isTimeRead(d)) {
			kept = append(kept, d)
		}
	}
	return kept
}

// With returns cfg with rules turned off (--disable) and back on
// (--enable, which overrides the project file). Names are checked: an
// unknown rule, syntax in disable, or one rule in both is an error.
func (cfg Config) With(disable, enable []string) (Config, error) {
	out := Config{Disabled: map[string]bool{}, Source: cfg.Source}
	for r := range cfg.Disabled {
		out.Disabled[r] = true
	}
	for _, r := range disable {
		if err := checkDisable(r); err != nil {
			return Config{}, err
		}
		if slices.Contains(enable, r) {
			return Config{}, fmt.Errorf("rule %q is both disabled and enabled", r)
		}
		out.Disabled[r] = true
	}
	for _, r := range enable {
		if err := CheckRule(r); err != nil {
			return Config{}, err
		}
		delete(out.Disabled, r)
	}
	return out, nil
}

// CheckRule returns an error naming the known rules when name is not one.
func CheckRule(name string) error {
	for _, r := range rules {
		if r.Name == name {
			return nil
		}
	}
	names := make([]string, len(rules))
	for i, r := range rules {
		names[i] = r.Name
	}
	return fmt.Errorf("unknown rule %q (rules: %s)", name, strings.Join(names, ", "))
}

func checkDisable(name string) error {
	if err := CheckRule(name); err != nil {
		return err
	}
	if name == RuleSyntax {
		return errors.New("rule syntax cannot be disabled: nothing else is checked in a file that does not parse")
	}
	return nil
}

// ParseConfig reads the project file's text; unknown fields and rules are
// errors, so a typo cannot silently leave a rule on.
func ParseConfig(src []byte) (Config, error) {
	var file struct {
		Lint struct {
			Disable []string `yaml:"disable"`
		} `yaml:"lint"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, yamlError(err)
	}
	return Config{}.With(file.Lint.Disable, nil)
}

// FindConfig looks for ConfigFile in dir and its parents, stopping after the
// repository root (the first directory holding .git) or at the file system
// root. It returns the zero Config, without error, when there is none.
func FindConfig(dir string) (Config, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return Config{}, err
	}
	for {
		path := filepath.Join(dir, ConfigFile)
		src, err := os.ReadFile(path)
		switch {
		case err == nil:
			cfg, err := ParseConfig(src)
			if err != nil {
				return Config{}, fmt.Errorf("%s: %w", path, err)
			}
			cfg.Source = path
			return cfg, nil
		case !errors.Is(err, fs.ErrNotExist):
			return Config{}, err
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return Config{}, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return Config{}, nil
		}
		dir = parent
	}
}

// yamlError makes a decoding error one line: an unknown field says which,
// and what the file may hold.
func yamlError(err error) error {
	var typeErr *yaml.TypeError
	if !errors.As(err, &typeErr) {
		return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
	}
	msgs := make([]string, len(typeErr.Errors))
	for i, m := range typeErr.Errors {
		if field, _, ok := strings.Cut(m, " not found in type"); ok {
			m = strings.Replace(field, "field ", "unknown field ", 1) + " (the file holds lint: disable: [rule, ...])"
		}
		msgs[i] = m
	}
	return errors.New(strings.Join(msgs, "; "))
}
