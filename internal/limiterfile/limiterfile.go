// Package limiterfile is the limiter under test written down: a YAML file a team keeps beside
// its code (hammer -f), the type the hammer's flags bind into, and, in its script part
// (contract.Spec), what the JSON prints as a strategy's contract. One type, three views: a
// field names its flag (tag flag), its key in the file (tag yaml) and, for the script, its
// field in the JSON (tag json).
package limiterfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/limitctl/limitctl/internal/contract"
	"github.com/limitctl/limitctl/internal/exitcode"
	"github.com/limitctl/limitctl/internal/human"
)

// Limiter is the limiter under test: its kind and numbers, the calling contract of a script
// the user already has, and the assertions the run must pass. A new field is one line here
// with its flag, bound in the command like the others.
type Limiter struct {
	Kind       string        `yaml:"kind" flag:"limiter"`
	Limit      int64         `yaml:"limit" flag:"limit"`
	Window     time.Duration `yaml:"window" flag:"window"`
	Hold       time.Duration `yaml:"hold" flag:"hold"`
	StaleAfter time.Duration `yaml:"stale-after" flag:"stale-after"`
	Script     contract.Spec `yaml:"script"`
	HTTP       HTTP          `yaml:"http"`
	Assert     []string      `yaml:"assert" flag:"assert"`
}

// HTTP is the limiter as it is deployed, behind HTTP (hammer --http): each target a strategy,
// every one's requests made and read the same way (limitctl help http).
type HTTP struct {
	Targets  []string `yaml:"targets" flag:"http"` // [NAME=]URL each
	Method   string   `yaml:"method" flag:"http-method"`
	Headers  []string `yaml:"headers" flag:"http-header"` // 'Name: value' each
	Body     string   `yaml:"body" flag:"http-body"`
	Admitted string   `yaml:"admitted" flag:"http-admitted"`
	Refused  string   `yaml:"refused" flag:"http-refused"`
	// Keys are [NAME=]PATTERN each: the SCAN pattern (it may use {key}) of the keys a target's
	// limiter writes in the Redis given with --url/--addr.
	Keys []string `yaml:"keys" flag:"http-keys"`
}

// A File is a limiter file read: the limiter it states and which fields it gives.
type File struct {
	Path    string
	Limiter Limiter
	gives   map[string]bool // the leaves' paths the file gives, "script.keys"
}

// Read reads the limiter file at path. An unknown or misspelt field, or a value of the wrong
// kind, is a usage error naming the file, the line and the field. Paths in it are as on the
// command line (relative to the folder limitctl runs in), so that --print-limiter's output works
// wherever it is saved.
func Read(path string) (*File, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, exitcode.Usagef("cannot read limiter file %s: %v", path, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			return nil, exitcode.Usagef("%s:%s: %s", path, m[1], m[2]) // as the other errors name a line
		}
		return nil, exitcode.Usagef("%s: %s", path, msg)
	}
	if len(doc.Content) == 0 {
		return nil, exitcode.Usagef("%s is empty: give at least kind: and limit:", path)
	}
	f := &File{Path: path, gives: map[string]bool{}}
	if err := f.read(doc.Content[0], reflect.ValueOf(&f.Limiter).Elem(), ""); err != nil {
		return nil, err
	}
	return f, nil
}

// yamlLine is how the YAML parser names a line: "line 3: did not find expected key".
var yamlLine = regexp.MustCompile(`^line (\d+): (.*)$`)

// read decodes node into v (a struct), field by field, recording the leaves the file gives.
func (f *File) read(node *yaml.Node, v reflect.Value, prefix string) error {
	section := strings.TrimSuffix(prefix, ".")
	if node.Kind != yaml.MappingNode {
		if section == "" {
			return f.errorf(node, "the file is a mapping of fields (kind: ..., limit: ...)")
		}
		return f.errorf(node, "%s: want its fields (%s), one a line", section, strings.Join(fieldNames(v.Type()), ", "))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		key, value := node.Content[i], node.Content[i+1]
		if line, twice := seen[key.Value]; twice {
			return f.errorf(key, "%s%s given twice (first on line %d)", prefix, key.Value, line)
		}
		seen[key.Value] = key.Line
		field, ok := fieldByName(v.Type(), key.Value)
		if !ok {
			in := "the file"
			if section != "" {
				in = section
			}
			hint := ""
			if section == "" {
				hint = "; the load, the target and the outputs stay flags"
			}
			return f.errorf(key, "unknown field %s in %s%s (%s holds %s%s)", key.Value, in,
				human.DidYouMean(human.Near(key.Value, fieldNames(v.Type())), ""), in, strings.Join(fieldNames(v.Type()), ", "), hint)
		}
		path := prefix + key.Value
		if field.Tag.Get("flag") == "" {
			if err := f.read(value, v.FieldByIndex(field.Index), path+"."); err != nil {
				return err
			}
			continue
		}
		if err := f.leaf(value, v.FieldByIndex(field.Index), path); err != nil {
			return err
		}
		f.gives[path] = true
	}
	return nil
}

// leaf decodes one value, saying what was wanted when it is of the wrong kind.
func (f *File) leaf(node *yaml.Node, v reflect.Value, path string) error {
	if node.Tag == "!!null" {
		return f.errorf(node, "%s: no value (write '' for an empty one, or leave the field out)", path)
	}
	switch ptr := v.Addr().Interface().(type) {
	case *[]contract.SetupLine:
		return f.setup(node, ptr, path)
	case *time.Duration:
		if err := node.Decode(ptr); err != nil {
			return f.errorf(node, "%s: want a duration such as 250ms, 1s or 1m, got %q", path, node.Value)
		}
	case *int64:
		if err := node.Decode(ptr); err != nil {
			return f.errorf(node, "%s: want a whole number, got %q", path, node.Value)
		}
	case *[]string:
		if node.Kind != yaml.SequenceNode {
			return f.errorf(node, "%s: want a list (- item, one a line)", path)
		}
		var items []string
		for _, item := range node.Content {
			if item.Kind != yaml.ScalarNode {
				return f.errorf(item, "%s: want each item a string (quote it: '...')", path)
			}
			items = append(items, item.Value)
		}
		*ptr = items
	default:
		if v.Kind() != reflect.String { // a string, or a type of one (contract.WindowStart)
			panic(fmt.Sprintf("limiterfile: no reader for %s (%s)", path, v.Type()))
		}
		if node.Kind != yaml.ScalarNode {
			return f.errorf(node, "%s: want a string (quote it: '...')", path)
		}
		v.SetString(node.Value)
	}
	return nil
}

// setupKeys are a set-up step's keys in a file, each the flag it stands for.
var setupKeys = []struct{ key, flag string }{{"command", contract.FlagSetup}, {"file", contract.FlagSetupFile}}

// setup reads the set-up steps: a list of command: 'SET {key} {limit} NX' and file: 'init.lua
// {key} , {limit}' (redis-cli --eval's syntax), in the order they run.
func (f *File) setup(node *yaml.Node, lines *[]contract.SetupLine, path string) error {
	want := path + ": want a list of steps, each command: 'SET {key} {limit} NX' or file: 'init.lua {key} , {limit}'"
	if node.Kind != yaml.SequenceNode {
		return f.errorf(node, "%s", want)
	}
	for _, item := range node.Content {
		if item.Kind != yaml.MappingNode || len(item.Content) != 2 || item.Content[1].Kind != yaml.ScalarNode {
			return f.errorf(item, "%s", want)
		}
		key := item.Content[0]
		i := slices.IndexFunc(setupKeys, func(k struct{ key, flag string }) bool { return k.key == key.Value })
		if i < 0 {
			return f.errorf(key, "unknown field %s in a set-up step%s; %s", key.Value, human.DidYouMean(human.Near(key.Value, []string{"command", "file"}), ""), want)
		}
		*lines = append(*lines, contract.SetupLine{Flag: setupKeys[i].flag, Text: item.Content[1].Value})
	}
	return nil
}

func (f *File) errorf(node *yaml.Node, format string, args ...any) error {
	return exitcode.Usagef("%s:%d: %s", f.Path, node.Line, fmt.Sprintf(format, args...))
}

// Layer puts the file under the flags: each field the file gives goes into l unless one of its
// flags was given on the command line (changed); a list given there replaces the file's whole.
// It returns what is given now: a flag given on the command line, or a field of the file.
func (f *File) Layer(l *Limiter, changed func(flag string) bool) func(flag string) bool {
	fromFile := map[string]bool{}
	dst, src := reflect.ValueOf(l).Elem(), reflect.ValueOf(&f.Limiter).Elem()
	for _, lf := range leaves() {
		if !f.gives[lf.path] || slices.ContainsFunc(lf.flags, changed) {
			continue
		}
		dst.FieldByIndex(lf.index).Set(src.FieldByIndex(lf.index))
		for _, name := range lf.flags {
			fromFile[name] = true
		}
	}
	return func(flag string) bool { return changed(flag) || fromFile[flag] }
}

// Marshal writes l as a limiter file: the fields whose flag given says were given (a flag on
// the command line or a field of a file read), in the schema's order.
func Marshal(l Limiter, given func(flag string) bool) ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode,
		HeadComment: "The limiter under test: limitctl hammer -f FILE (limitctl help limiter-file).\nA flag given on the command line overrides its field."}
	v := reflect.ValueOf(l)
	sections := map[string]*yaml.Node{"": root}
	for _, lf := range leaves() {
		if !slices.ContainsFunc(lf.flags, given) {
			continue
		}
		parent := root
		section, name := "", lf.path
		if i := strings.LastIndexByte(lf.path, '.'); i >= 0 {
			section, name = lf.path[:i], lf.path[i+1:]
			if sections[section] == nil {
				sections[section] = &yaml.Node{Kind: yaml.MappingNode}
				root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: section}, sections[section])
			}
			parent = sections[section]
		}
		value, err := encode(v.FieldByIndex(lf.index).Interface())
		if err != nil {
			return nil, err
		}
		parent.Content = append(parent.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: name}, value)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return b.Bytes(), enc.Close()
}

// encode is one value as the file holds it: a duration as Go writes it (1s, 2ms), set-up
// steps as command: or file:.
func encode(value any) (*yaml.Node, error) {
	n := &yaml.Node{}
	switch v := value.(type) {
	case []contract.SetupLine:
		n.Kind = yaml.SequenceNode
		for _, line := range v {
			key := setupKeys[slices.IndexFunc(setupKeys, func(k struct{ key, flag string }) bool { return k.flag == line.Flag })].key
			step := &yaml.Node{}
			if err := step.Encode(map[string]string{key: line.Text}); err != nil {
				return nil, err
			}
			n.Content = append(n.Content, step)
		}
		return n, nil
	case time.Duration:
		return n, n.Encode(v.String())
	}
	if r := reflect.ValueOf(value); r.Kind() == reflect.String {
		return n, n.Encode(r.String()) // a type of string as its text
	}
	return n, n.Encode(value)
}

// leafField is a field of the file that flags set.
type leafField struct {
	path  string   // as the file names it: "script.keys"
	flags []string // the flags that set it
	index []int    // its place in Limiter
}

// leaves are Limiter's fields that flags set, in the schema's order.
func leaves() []leafField {
	var out []leafField
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for _, field := range reflect.VisibleFields(t) {
			name := yamlName(field)
			if name == "" || len(field.Index) > 1 {
				continue
			}
			at := append(slices.Clone(index), field.Index...)
			if flags := field.Tag.Get("flag"); flags != "" {
				out = append(out, leafField{prefix + name, strings.Split(flags, ","), at})
			} else if field.Type.Kind() == reflect.Struct {
				walk(field.Type, prefix+name+".", at)
			}
		}
	}
	walk(reflect.TypeOf(Limiter{}), "", nil)
	return out
}

// A Field is one field of the file: its name ("script.keys") and the flags it stands for.
type Field struct {
	Path  string
	Flags []string
}

// Fields are the file's fields in the schema's order.
func Fields() []Field {
	var out []Field
	for _, lf := range leaves() {
		out = append(out, Field{lf.path, lf.flags})
	}
	return out
}

// Flags are the flags the file's fields stand for, in the schema's order.
func Flags() []string {
	var out []string
	for _, lf := range leaves() {
		out = append(out, lf.flags...)
	}
	return out
}

// FieldOf is the file's name of the field a flag sets ("script.keys" for script-keys), or "".
func FieldOf(flag string) string {
	for _, lf := range leaves() {
		if slices.Contains(lf.flags, flag) {
			return lf.path
		}
	}
	return ""
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for _, f := range reflect.VisibleFields(t) {
		if name := yamlName(f); name != "" && len(f.Index) == 1 {
			names = append(names, name)
		}
	}
	return names
}

func fieldByName(t reflect.Type, name string) (reflect.StructField, bool) {
	for _, f := range reflect.VisibleFields(t) {
		if yamlName(f) == name && len(f.Index) == 1 {
			return f, true
		}
	}
	return reflect.StructField{}, false
}
