package main

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/privtrain/privtrain/runner"
)

// version describes the build: the main module's version as the Go
// toolchain recorded it (a tag, a pseudo-version, or "(devel)" for a build
// from a checkout), the VCS revision, its time and whether the tree was
// modified, when the toolchain stamped them, and the Go version.
func version(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "trainer: no build information in this binary"
	}
	v := info.Main.Version
	if v == "" {
		v = "(unknown)"
	}
	path := info.Main.Path
	if path == "" {
		path = info.Path
	}
	s := fmt.Sprintf("trainer %s %s", path, v)
	vcs := map[string]string{}
	for _, kv := range info.Settings {
		vcs[kv.Key] = kv.Value
	}
	if rev := vcs["vcs.revision"]; rev != "" {
		s += " " + vcs["vcs"] + " " + rev
		if t := vcs["vcs.time"]; t != "" {
			s += " " + t
		}
		if vcs["vcs.modified"] == "true" {
			s += " (modified)"
		}
	}
	return s + " " + info.GoVersion
}

// alternatives formats a registry's sorted names for a flag's help.
func alternatives(names []string) string { return strings.Join(names, " | ") }

// setUsage makes fs print its flags as --flag (the form the README uses;
// the flag package accepts both) under the given synopsis.
func setUsage(fs *flag.FlagSet, synopsis string) {
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: %s\n", synopsis)
		printFlags(w, fs)
	}
}

// printFlags writes one entry per flag, like flag.PrintDefaults but with
// two dashes.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		usage = strings.ReplaceAll(usage, "\n", "\n    \t")
		fmt.Fprintf(w, "%s\n    \t%s", line, usage)
		if !isZeroValue(f) {
			if g, ok := f.Value.(flag.Getter); ok && isString(g.Get()) {
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			} else {
				fmt.Fprintf(w, " (default %v)", f.DefValue)
			}
		}
		fmt.Fprintln(w)
	})
}

func isString(v any) bool { _, ok := v.(string); return ok }

// isZeroValue reports whether the flag's default is its type's zero value
// (the flag package's rule for omitting "(default …)").
func isZeroValue(f *flag.Flag) bool {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	zv, ok := z.Interface().(flag.Value)
	if !ok {
		return false
	}
	return f.DefValue == zv.String()
}

// presetNames lists the library's presets in lexical order.
func presetNames() []string {
	names := make([]string, 0, len(runner.Presets()))
	for n := range runner.Presets() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
