package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// The one flag/usage convention of every command: --help and -h print the
// command's flags (as --flag) on stdout and exit 0; `CMD help` is --help;
// a usage error is one line on stderr with a "did you mean" suggestion and
// exit 2; runtime failures exit 1.

// helpRequest is the error of a parse that met --help, -h or a leading
// `help`: the caller prints fs's usage on stdout (see printHelp).
type helpRequest struct{ fs *flag.FlagSet }

func (h *helpRequest) Error() string        { return "help requested" }
func (h *helpRequest) Is(target error) bool { return target == flag.ErrHelp }

// parseArgs parses args into fs silently. It returns nil, a *helpRequest
// (errors.Is(err, flag.ErrHelp)), or a one-line usageError naming the bad
// flag with a suggestion.
func parseArgs(fs *flag.FlagSet, args []string) error {
	if len(args) > 0 && args[0] == "help" {
		return &helpRequest{fs}
	}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return &helpRequest{fs}
	}
	return usageError{errors.New(explainFlagError(fs, err))}
}

// printHelp prints the usage of the flag set behind a help request on w
// and reports whether err was one.
func printHelp(err error, w io.Writer) bool {
	var h *helpRequest
	if errors.As(err, &h) {
		h.fs.SetOutput(w)
		if h.fs.Usage != nil {
			h.fs.Usage()
		} else {
			printFlags(w, h.fs)
		}
		h.fs.SetOutput(io.Discard)
		return true
	}
	return errors.Is(err, flag.ErrHelp)
}

// explainFlagError rewrites the flag package's messages ("flag provided but
// not defined: -methd", "invalid value "abc" for flag -sigma: parse error")
// into one line with --flag spelling and a suggestion.
func explainFlagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	help := " (see " + fs.Name() + " --help)"
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		if s := suggest(name, flagNames(fs)); s != "" {
			return fmt.Sprintf("unknown flag --%s: did you mean --%s?%s", name, s, help)
		}
		return fmt.Sprintf("unknown flag --%s%s", name, help)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("--%s needs a value%s", name, help)
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		// invalid value "abc" for flag -sigma: parse error
		if val, after, ok := strings.Cut(rest, " for flag -"); ok {
			name, why, _ := strings.Cut(after, ": ")
			return fmt.Sprintf("invalid value %s for --%s: %s%s", val, name, why, valueHint(fs, name))
		}
	}
	if rest, ok := strings.CutPrefix(msg, "invalid boolean value "); ok {
		if val, after, ok := strings.Cut(rest, " for -"); ok {
			name, why, _ := strings.Cut(after, ": ")
			if strings.Contains(why, "parse error") || strings.Contains(why, "invalid syntax") {
				why = fmt.Sprintf("want true or false (a bare --%s is true)", name)
			}
			return fmt.Sprintf("invalid value %s for --%s: %s", val, name, why)
		}
	}
	return oneLine(strings.ReplaceAll(msg, " -", " --"))
}

// valueHint says what a flag wants, from its type and default.
func valueHint(fs *flag.FlagSet, name string) string {
	f := fs.Lookup(name)
	if f == nil {
		return ""
	}
	kind := ""
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case float64:
			kind = "a number"
		case int, int64:
			kind = "an integer"
		case uint, uint64:
			kind = "a non-negative integer"
		}
	}
	if kind == "" {
		return " (see " + fs.Name() + " --help)"
	}
	return fmt.Sprintf("; want %s, e.g. --%s %s (its default)", kind, name, f.DefValue)
}

// flagNames lists fs's flags in lexical order.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// suggest returns the candidate closest to s in edit distance when it is
// close enough to be a typo (at most 2 edits, and fewer than s has
// letters), or the only candidate s is a prefix of; else "".
func suggest(s string, candidates []string) string {
	best, bestD := "", 3
	var prefixed []string
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD || d == bestD && c < best {
			best, bestD = c, d
		}
		if strings.HasPrefix(c, s) {
			prefixed = append(prefixed, c)
		}
	}
	if best != "" && bestD < len([]rune(s)) {
		return best
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b (in runes).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// unknownName is the one-line error for an unknown command, subcommand or
// experiment, with a suggestion and the list of valid names.
func unknownName(what, name string, valid []string) string {
	sorted := append([]string(nil), valid...)
	sort.Strings(sorted)
	msg := fmt.Sprintf("unknown %s %q", what, name)
	if s := suggest(name, sorted); s != "" {
		msg += fmt.Sprintf(": did you mean %s?", s)
	}
	return msg + " (" + strings.Join(sorted, ", ") + ")"
}

// isHelpArg reports whether a is one of the spellings of help.
func isHelpArg(a string) bool { return a == "-h" || a == "--help" || a == "help" || a == "-help" }
