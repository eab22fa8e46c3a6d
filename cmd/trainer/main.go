// Command trainer trains differentially private and robust models, computes
// privacy guarantees, and reproduces the papers' experiments.
//
// Usage:
//
//	trainer                      the default job (see `trainer train -h`)
//	trainer train [flags]        train a model, writing a run directory
//	trainer account rdp|epsilon|sigma [flags]
//	                             privacy accounting (JSON with --json)
//	trainer experiment NAME      regenerate a paper's figures or tables
//	trainer rgm-gd [flags]       private ridge regression over nodes (RGM)
//	trainer report RUN [RUN…]    an HTML page (and CSV) of run directories
//	trainer --version            module version and VCS revision of the build
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/privtrain/privtrain/internal/vec"
)

// command is one subcommand: it gets the arguments after its name and
// returns the process exit code.
type command struct {
	run   func(args []string, stdout, stderr io.Writer) int
	brief string
}

func commands() map[string]command {
	return map[string]command{
		"train":      {runTrain, "train a model (DP-SGD, TSGD+PTR, …) and write a run directory"},
		"experiment": {runExperiment, "regenerate figures and tables of the papers"},
		"account":    {runAccount, "privacy accounting: RDP curves, ε for δ, σ for a target ε"},
		"rgm-gd":     {runRGM, "private ridge regression over nodes with the Relative Gaussian Mechanism"},
		"audit":      {runAudit, "empirical privacy audits of a rule (mechanism) or a training run (run)"},
		"report":     {runReport, "an HTML page (and CSV) of run directories: curves, configuration, guarantee"},
		"completion": {runCompletion, "print a bash or zsh completion script: source <(trainer completion bash)"},
	}
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if err := vec.EnvErr(); err != nil { // an invalid PRIVTRAIN_ASM
		fmt.Fprintf(stderr, "trainer: %v\n", err)
		return 2
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "trainer: no command given, running the default job (trainer train with its defaults; see trainer help)")
		return runDefaultJob(stdout, stderr)
	}
	cmds := commands()
	if c, ok := cmds[args[0]]; ok {
		return c.run(args[1:], stdout, stderr)
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		if len(args) > 1 {
			fmt.Fprintf(stderr, "trainer %s: unexpected arguments: %s\n", args[0], strings.Join(args[1:], " "))
			return 2
		}
		fmt.Fprintln(stdout, version(debug.ReadBuildInfo()))
		return 0
	}
	if isHelpArg(args[0]) {
		switch {
		case len(args) == 1:
			usage(stdout, cmds)
			return 0
		case cmds[args[1]].run != nil:
			// `trainer help CMD [SUB]` is `trainer CMD [SUB] --help`.
			return cmds[args[1]].run(append(append([]string{}, args[2:]...), "--help"), stdout, stderr)
		}
		fmt.Fprintf(stderr, "trainer help: %s\n", unknownName("command", args[1], commandNames(cmds)))
		return 2
	}
	if strings.HasPrefix(args[0], "-") {
		// Flags without a command are the default job's, e.g.
		// `trainer --out DIR` or `trainer --resume --out DIR`.
		return runDefaultJobWith(args, stdout, stderr)
	}
	fmt.Fprintf(stderr, "trainer: %s; see trainer help\n", unknownName("command", args[0], commandNames(cmds)))
	return 2
}

func commandNames(cmds map[string]command) []string {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func usage(w io.Writer, cmds map[string]command) {
	names := commandNames(cmds)
	fmt.Fprintln(w, "usage: trainer [command] [flags]   (no command: the default training job)")
	fmt.Fprintln(w, "commands:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-11s %s\n", n, cmds[n].brief)
	}
	fmt.Fprintln(w, "run 'trainer help COMMAND [SUBCOMMAND]' (or 'trainer COMMAND --help') for a command's flags; 'trainer --version' for the build")
}
