package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/privtrain/privtrain/runner"
)

// leafPaths lists every command and subcommand a user can run.
func leafPaths() [][]string {
	var paths [][]string
	subs := subcommandTable()
	for _, c := range commandNames(commands()) {
		if s, ok := subs[c]; ok && c != "completion" {
			for _, sc := range s {
				paths = append(paths, []string{c, sc})
			}
			continue
		}
		paths = append(paths, []string{c})
	}
	return paths
}

func run(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = dispatch(args, &o, &e)
	return code, o.String(), e.String()
}

// TestEveryCommandHelp: --help, -h, `trainer help PATH` and `trainer PATH
// help` print the same --flag help on stdout and exit 0, for every command,
// subcommand and group.
func TestEveryCommandHelp(t *testing.T) {
	singleDash := regexp.MustCompile(`(?m)^\s+-[a-z]`)
	paths := append(leafPaths(), []string{"account"}, []string{"audit"}, []string{"experiment"})
	if len(paths) < 12 {
		t.Fatalf("only %d command paths: %v", len(paths), paths)
	}
	for _, p := range paths {
		var want string
		for i, args := range [][]string{
			append(append([]string{}, p...), "--help"),
			append(append([]string{}, p...), "-h"),
			append([]string{"help"}, p...),
			append(append([]string{}, p...), "help"),
		} {
			code, out, errOut := run(args...)
			hasFlags := strings.Contains(out, "--") || p[0] == "completion" // completion has no flags
			if code != 0 || errOut != "" || !hasFlags || !strings.HasPrefix(out, "usage: trainer ") {
				t.Errorf("%q: exit %d, stderr %q, stdout %.80q; want exit 0 and a usage with --flags on stdout", args, code, errOut, out)
				continue
			}
			if m := singleDash.FindString(out); m != "" {
				t.Errorf("%q: single-dash flag %q in the help", args, m)
			}
			if i == 0 {
				want = out
			} else if out != want {
				t.Errorf("%q printed another help than %q --help", args, p)
			}
		}
	}
}

// TestUsageErrorsOneLine: a misspelt flag, a bad value or an unknown
// (sub)command is one line with a suggestion and exit 2, for every command.
func TestUsageErrorsOneLine(t *testing.T) {
	type tc struct {
		args []string
		want string
	}
	cases := []tc{
		{[]string{"train", "--methd", "dpsgd"}, "unknown flag --methd: did you mean --method?"},
		{[]string{"train", "--sigma", "abc"}, `invalid value "abc" for --sigma: parse error; want a number, e.g. --sigma 1.1`},
		{[]string{"train", "--steps", "1.5"}, "want an integer"},
		{[]string{"train", "--float-noise=maybe"}, "want true or false"},
		{[]string{"account", "epsilon", "--steps"}, "--steps needs a value"},
		{[]string{"accuont"}, `unknown command "accuont": did you mean account?`},
		{[]string{"help", "trian"}, `unknown command "trian": did you mean train?`},
		{[]string{"account", "epsilom"}, `unknown subcommand "epsilom": did you mean epsilon?`},
		{[]string{"audit", "mechanisms"}, `did you mean mechanism?`},
		{[]string{"experiment", "ptr-tabel"}, `unknown experiment "ptr-tabel": did you mean ptr-table?`},
		{[]string{"experiment", "ptr-table", "--seeds", "x"}, `seed "x"`},
		{[]string{"experiment", "privacy-figures", "extra"}, "unexpected arguments"},
		{[]string{"audit", "run", "--canaris", "3"}, "did you mean --canaries?"},
		{[]string{"completion", "fish"}, `unknown shell "fish"`},
	}
	// A misspelling (one letter dropped) of each leaf's longest flag.
	for _, p := range leafPaths() {
		if p[0] == "completion" {
			continue
		}
		flags := helpFlags(p...)
		long := ""
		for _, f := range flags {
			if len(f) > len(long) {
				long = f
			}
		}
		if long == "" {
			t.Errorf("%q lists no flags", p)
			continue
		}
		typo := long[:len(long)-2] + long[len(long)-1:]
		cases = append(cases, tc{append(append([]string{}, p...), typo, "1"), "unknown flag " + typo + ": did you mean " + long + "?"})
	}
	for _, c := range cases {
		code, _, errOut := run(c.args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line with %q", c.args, code, errOut, c.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"methd", "method", 1}, {"σ", "σ1", 1}, {"flaw", "lawn", 2}} {
		if got := editDistance(c.a, c.b); got != c.d || editDistance(c.b, c.a) != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
	names := []string{"method", "seed", "seeds", "sigma", "sigma1", "out", "b"}
	for s, want := range map[string]string{"methd": "method", "sigm": "sigma", "ot": "out", "sed": "seed", "x": "", "zzzzzz": "", "sigma2": "sigma"} {
		if got := suggest(s, names); got != want {
			t.Errorf("suggest(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestCompletionHasEveryFlag: the scripts parse, and every flag the flag
// sets register (train's taken directly from trainFlagSet) is offered.
func TestCompletionHasEveryFlag(t *testing.T) {
	cfg := runner.TrainDefaults()
	fs, _ := trainFlagSet(&cfg, "", "", io.Discard)
	script, err := completionScript("bash")
	if err != nil {
		t.Fatal(err)
	}
	arms := map[string]string{}
	for _, line := range strings.Split(script, "\n") {
		if pat, words, ok := strings.Cut(strings.TrimSpace(line), ") words="); ok {
			arms[pat] = words
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		for _, arm := range []string{"train/*", "-*", "audit/run"} {
			if !strings.Contains(arms[arm]+" ", "--"+f.Name+" ") && !strings.Contains(arms[arm], "--"+f.Name+`"`) {
				t.Errorf("completion arm %s lacks --%s", arm, f.Name)
			}
		}
	})
	for _, p := range leafPaths() {
		arm := strings.Join(p, "/")
		if len(p) == 1 {
			arm += "/*"
		}
		if _, ok := arms[arm]; !ok {
			t.Errorf("no completion arm for %q", p)
		}
		for _, f := range helpFlags(p...) {
			if !strings.Contains(arms[arm], f) {
				t.Errorf("completion of %q lacks %s", p, f)
			}
		}
	}
	for _, f := range []string{"--plan", "--slurm", "--seeds"} {
		if !strings.Contains(arms["experiment/ptr-table"], f) {
			t.Errorf("ptr-table completion lacks %s", f)
		}
	}
	for _, shell := range []string{"bash", "zsh"} {
		bin, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("%s not installed: syntax not checked", shell)
			continue
		}
		s, err := completionScript(shell)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "trainer."+shell)
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "-n", file).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v: %s", shell, err, out)
		}
	}
	// bash: the function completes as the table says.
	if _, err := exec.LookPath("bash"); err == nil {
		file := filepath.Join(t.TempDir(), "trainer.bash")
		if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("bash", "-c", `source "$1"; COMP_WORDS=(trainer account epsilon --me); COMP_CWORD=3; _trainer; echo "${COMPREPLY[*]}"`, "x", file).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "--mech" {
			t.Errorf("completing 'trainer account epsilon --me': %q, %v; want --mech", out, err)
		}
	}
}

// TestSeedExplicitDefault: the default seed is 1, and `--seed 1`, `seed: 1`
// in a config and no seed at all give the same configuration; none of them
// makes the privacy noise derive from the seed (no ReproducibleNoise, no key).
func TestSeedExplicitDefault(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(conf, []byte("method: dpsgd\nseed: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	base := []string{"--method", "dpsgd", "--out", out}
	var cfgs []runner.TrainConfig
	for _, args := range [][]string{
		base,
		append([]string{"--seed", "1"}, base...),
		append([]string{"--config", conf}, base...),
		append([]string{"--config", conf, "--seed=1"}, base...),
	} {
		cfg, _, err := parseTrainFlags(args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if cfg.Seed != 1 || cfg.ReproducibleNoise || cfg.NoiseKey != nil {
			t.Errorf("%q: seed %d, reproducible noise %v, key %v; want seed 1, secret key from the OS", args, cfg.Seed, cfg.ReproducibleNoise, cfg.NoiseKey != nil)
		}
		cfgs = append(cfgs, cfg)
	}
	for i := 1; i < len(cfgs); i++ {
		a, b := cfgs[0], cfgs[i]
		if !reflect.DeepEqual(a, b) {
			t.Errorf("configuration %d differs from the default-seed one:\n%+v\n%+v", i, b, a)
		}
	}
	if code, help, _ := run("train", "--help"); code != 0 || !strings.Contains(help, "--seed uint\n    \tpublic seed") || !strings.Contains(help, "(default 1)") {
		t.Errorf("train --help does not state the seed's default 1")
	}
}
